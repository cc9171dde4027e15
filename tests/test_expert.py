"""Expert iteration (train/expert.py): the targets a student learns, imitation, and a tiny run end to end."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tavernzoo.agents import load_bot  # noqa: E402
from tavernzoo.agents.export import read_policy  # noqa: E402
from tavernzoo.agents.infoset import feed  # noqa: E402
from tavernzoo.envs import get_game  # noqa: E402
from tavernzoo.eval.match import make_env, play_match  # noqa: E402
from tavernzoo.train.config import make_train_config  # noqa: E402
from tavernzoo.train.expert import (  # noqa: E402
    CollectJob,
    ExpertConfig,
    Labeller,
    Samples,
    collect,
    evaluate_student,
    load_actor,
    make_model,
    run_expert,
    teacher_spec,
    teacher_target,
    train_student,
)
from tavernzoo.train.run import Trainer, policy_from_sb3  # noqa: E402

# A small, fixed Tiny Minotaur: the oracle solves it in a moment.
SMALL_TM = {"classes": ["cloak", "sword"], "archetypes": ["rogue", "paladin"], "starting_hp": 30, "hp_cap": 30}
TINY_NET = {"net_arch": [32], "n_envs": 2, "n_steps": 32, "batch_size": 64, "eval_games": 0}


pytestmark = pytest.mark.usefixtures("private_solver_cache")  # tests/conftest.py


def decisions(game_name: str, config: dict, bot, count: int, check, seed: int = 3) -> int:
    """Play with ``bot`` and call ``check(observation, action)`` right after each of its first ``count``
    decisions with a real choice (the env reuses its observation arrays, and the bot remembers only its
    last search). Returns the number of checks."""
    game = get_game(game_name)
    env = make_env(game, config)
    found = 0
    for deal in range(seed, seed + 50):
        env.reset(seed=deal)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            feed(bot, env, agent)
            action = bot.act(observation)
            if observation["action_mask"].sum() > 1:
                check(observation, action)
                found += 1
                if found == count:
                    return found
            env.step(action)
    return found


def test_mcts_targets_are_its_root_visit_shares():
    game = get_game("ministeel")
    config = {"num_players": 3}
    bot = load_bot("mcts:40,depth=10", game, game.make_config(config), seed=5)
    def check(observation, action):
        target = teacher_target(bot, observation, action)
        visits = bot.last_search["visits"]
        total = sum(visits.values())
        expected = np.zeros_like(target)
        for a, n in visits.items():
            expected[a] = n / total
        np.testing.assert_allclose(target, expected, atol=1e-6)
        assert target[action] == target.max()  # the move played is the most visited
        assert (target[observation["action_mask"] == 0] == 0).all()

    assert decisions("ministeel", config, bot, 4, check) == 4


def test_mcts_target_move_is_the_move_played_alone_and_the_same_search():
    game = get_game("ministeel")
    config = {"num_players": 3}
    soft = load_bot("mcts:40,depth=10", game, game.make_config(config), seed=5)
    hard = load_bot("mcts:40,depth=10,target=move", game, game.make_config(config), seed=5)
    played = []

    def check(observation, action):
        target = teacher_target(hard, observation, action)
        assert target[action] == 1.0 and target.sum() == 1.0  # the move played, all of the target
        played.append(action)

    assert decisions("ministeel", config, hard, 3, check) == 3
    moves = []
    decisions("ministeel", config, soft, 3, lambda observation, action: moves.append(action))
    assert moves == played  # the target is all that changes: the same moves from the same seeds


@pytest.mark.parametrize("spec, valid", [("mcts:40,target=improved", "visits, move"),
                                         ("mcts:40,root=paired,target=visits", "move, improved"),
                                         ("mcts:40,target=best", "target=.best. is not valid.*visits")])
def test_a_target_its_root_does_not_give_is_one_error_naming_those_it_does(spec, valid):
    with pytest.raises(ValueError, match=valid):
        load_bot(spec, "ministeel", None, seed=1)


def test_oracle_targets_are_its_optimal_actions():
    game = get_game("tiny_minotaur")
    config = game.make_config(SMALL_TM)
    oracle = load_bot("oracle", game, config)
    ties = []

    def check(observation, action):
        target = teacher_target(oracle, observation, action)
        values = oracle.values(observation)
        best = max(values.values())
        assert target[action] > 0
        assert {a for a in range(len(target)) if target[a] > 0} == {a for a, v in values.items() if v >= best - 1e-9}
        assert target.sum() == pytest.approx(1.0)
        ties.append((target > 0).sum() > 1)

    assert decisions("tiny_minotaur", SMALL_TM, oracle, 12, check) == 12
    assert not all(ties)  # not every position a tie: the oracle's choice matters


def test_a_bot_without_visits_or_values_is_cloned_one_hot():
    game = get_game("tiny_minotaur")
    bot = load_bot("heuristic", game, game.make_config(SMALL_TM), seed=0)
    def check(observation, action):
        target = teacher_target(bot, observation, action)
        assert target[action] == 1.0 and target.sum() == 1.0

    assert decisions("tiny_minotaur", SMALL_TM, bot, 3, check) == 3


def test_labeller_records_the_teacher_but_lets_the_student_play():
    game = get_game("tiny_minotaur")
    config = game.make_config(SMALL_TM)

    class FirstLegal:
        name = "first"

        def reset(self):
            pass

        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    class LastLegal(FirstLegal):
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[-1])

    labeller = Labeller(FirstLegal(), LastLegal(), dagger=1.0, rng=random.Random(0))

    def check(observation, _):
        played = labeller.act(observation)
        legal = np.flatnonzero(observation["action_mask"])
        assert played == legal[-1]  # the student's move is played ...
        assert labeller.rows[-1][2][legal[0]] == 1.0  # ... the teacher's is the target

    assert decisions("tiny_minotaur", SMALL_TM, load_bot("random", game, config, 1), 5, check) == 5
    assert len(labeller.rows) == 5


def test_collect_is_the_same_whatever_the_workers():
    job = CollectJob("tiny_minotaur", SMALL_TM, "heuristic", None, None, 0.0, seed=4)
    one = collect(job, 3, workers=1)
    two = collect(job, 3, workers=2)
    assert len(one) > 10
    for name in ("observations", "masks", "targets", "values"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert set(np.unique(one.values)) <= {-1.0, 0.0, 1.0}
    assert (one.masks.sum(1) > 1).all()  # forced moves are not recorded


def test_an_mcts_teacher_labels_ministeel_on_the_compiled_search(monkeypatch):
    # `tavernzoo expert ministeel --teacher mcts`: the teacher's options are the kernel's, so kernel=auto
    # searches whole simulations in MiniSteel's compiled kernel (agents/mcts_kernel.py), and labels from it;
    # a teacher whose prior the kernel does not take (a network's) searches on the Python rules.
    pytest.importorskip("numba")
    import tavernzoo.agents

    teachers = []

    def recording(spec, *args, **kwargs):
        bot = load_bot(spec, *args, **kwargs)
        if str(spec).startswith("mcts"):
            teachers.append(bot)
        return bot

    monkeypatch.setattr(tavernzoo.agents, "load_bot", recording)
    job = CollectJob("ministeel", {"num_players": 4}, "mcts:sims=40", "heuristic", None, 0.0, seed=2)
    samples = collect(job, 1, workers=1)
    assert len(samples) > 0 and teachers
    assert all(teacher._compiled is not None for teacher in teachers)
    np.testing.assert_allclose(samples.targets.sum(axis=1), 1.0, atol=1e-5)
    assert (samples.targets > 0).sum(axis=1).max() > 1, "visit shares, not one-hot moves"


def test_student_imitates_a_deterministic_teacher(tmp_path):
    config = make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET})
    trainer = Trainer(config, tmp_path / "run")
    model, _ = make_model(trainer)
    samples = collect(CollectJob("tiny_minotaur", SMALL_TM, "heuristic", None, None, 0.0, seed=1), 8, workers=1)
    fit = train_student(model.policy, samples, epochs=30, batch_size=64, learning_rate=3e-3, seed=0)
    assert fit["loss_after"] < 0.5 * fit["loss_before"]
    assert fit["agreement_after"] > 0.9 > fit["agreement_before"]
    assert evaluate_student(model.policy, samples)["agreement"] == pytest.approx(fit["agreement_after"])


def test_the_student_is_measured_in_slices_as_at_once(tmp_path, monkeypatch):
    import tavernzoo.train.expert as expert_module

    trainer = Trainer(make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET}),
                      tmp_path / "run")
    model, _ = make_model(trainer)
    samples = collect(CollectJob("tiny_minotaur", SMALL_TM, "heuristic", None, None, 0.0, seed=1), 4, workers=1)
    whole = evaluate_student(model.policy, samples)
    monkeypatch.setattr(expert_module, "EVALUATE_ROWS", 3)
    assert len(samples) > 3 * 3 and len(samples) % 3  # several slices, the last one short
    sliced = evaluate_student(model.policy, samples)
    assert sliced["loss"] == pytest.approx(whole["loss"], rel=1e-5)
    assert sliced["agreement"] == pytest.approx(whole["agreement"])


def test_tiny_expert_iteration_end_to_end(tmp_path):
    from sb3_contrib import MaskablePPO

    from tavernzoo.agents.export import export

    out = tmp_path / "run"
    config = make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET})
    expert = ExpertConfig(teacher="oracle", rounds=2, games=3, epochs=1, dagger=0.5, workers=1)
    report = run_expert(config, expert, out, log=lambda _: None)
    rounds = report["rounds"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert rounds[1]["dagger"] == 0.5 and rounds[0]["dagger"] == 0.0
    assert rounds[1]["samples"] == rounds[0]["new_samples"] + rounds[1]["new_samples"]
    assert json.loads((out / "expert.json").read_text())["rounds"] == rounds
    checkpoint = out / "checkpoints" / (out / "checkpoints" / "latest").read_text().strip()
    assert (out / "expert" / "round_2" / "policy.npz").is_file()
    meta = json.loads((checkpoint / "policy.json").read_text())
    assert meta["trained_with"].startswith("tavernzoo.train.expert")
    assert meta["expert"]["teacher"] == "oracle" and meta["expert"]["round"] == 2
    # the checkpoint is an ordinary one: a bot spec, exportable, loadable by MaskablePPO, resumable by PPO
    MaskablePPO.load(checkpoint / "model.zip", device="cpu")
    onnx_path, _ = export(checkpoint, tmp_path / "student.onnx")
    result = play_match("tiny_minotaur", [str(onnx_path), str(checkpoint)], 2, seed=0, config=SMALL_TM)
    assert result.rows[0].games == 2
    resumed = Trainer(None, out, resume=True, timesteps=64).run(progress=False)
    assert resumed["timesteps"] >= 64
    # --init: a fresh student starts from the exported bot's actor, weight for weight
    fresh, _ = make_model(Trainer(config, tmp_path / "warm"))
    exported = read_policy(str(onnx_path))
    load_actor(fresh.policy, exported)
    copied = policy_from_sb3(fresh.policy, {})
    for mine, theirs in zip(copied.weights + copied.biases, exported.weights + exported.biases, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    warm = run_expert(config, ExpertConfig(teacher="oracle", games=1, epochs=1, workers=1, init=str(onnx_path)),
                      tmp_path / "warm_run", log=lambda _: None)
    assert warm["rounds"][0]["dagger"] == 0.5  # with --init, round 1 already lets the student play
    assert (tmp_path / "warm_run" / "expert" / "round_0" / "policy.npz").is_file()
    with pytest.raises(ValueError, match="net_arch"):
        load_actor(make_model(Trainer(make_train_config("tiny_minotaur", overrides={
            "game_config": SMALL_TM, **TINY_NET, "net_arch": [16]}), tmp_path / "other"))[0].policy, exported)


def test_prior_student_names_the_round_in_the_mcts_spec(tmp_path):
    assert teacher_spec("mcts", tmp_path, prior_student=True) == f"mcts:prior={tmp_path}"
    assert teacher_spec("mcts:50", tmp_path, prior_student=True) == f"mcts:50,prior={tmp_path}"
    assert teacher_spec("mcts:50", None, prior_student=True) == "mcts:50"
    with pytest.raises(ValueError, match="mcts teacher"):
        ExpertConfig(teacher="oracle", prior_student=True)
    with pytest.raises(ValueError, match="dagger"):
        ExpertConfig(dagger=1.5)


def test_the_command_refuses_a_bad_teacher(tmp_path, capsys):
    from tavernzoo.cli import main

    code = main(["expert", "tiny_minotaur", "--teacher", "nonsense", "--out", str(tmp_path / "x"), "--games", "1"])
    assert code != 0
    assert "nonsense" in capsys.readouterr().err


def test_an_address_without_ray_is_one_error_and_no_run_directory(tmp_path, capsys):
    from tavernzoo.cli import main

    code = main(["expert", "tiny_minotaur", "--teacher", "heuristic", "--address", "10.0.0.1:6379", "--out",
                 str(tmp_path / "x"), "--games", "1"])
    assert code != 0 and not (tmp_path / "x").exists()
    err = capsys.readouterr().err
    assert "--address names a Ray cluster: it needs --backend ray" in err and "Traceback" not in err, err


def test_the_command_runs_a_round_into_a_run_directory(tmp_path, capsys):
    from tavernzoo.cli import main

    out = tmp_path / "run"
    code = main(["expert", "tiny_minotaur", "--teacher", "heuristic", "--games", "2", "--epochs", "1", "--workers", "1",
                 "--set", f"game_config={json.dumps(SMALL_TM)}", "--set", "net_arch=[16]", "--set", "n_envs=1",
                 "--set", "n_steps=32", "--set", "batch_size=32", "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert "checkpoint:" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["net_arch"] == [16]
    assert json.loads((out / "expert.json").read_text())["recipe"]["teacher"] == "heuristic"


def test_saved_samples_start_another_run_and_bad_files_are_refused(tmp_path):
    config = make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET})
    first = run_expert(config, ExpertConfig(teacher="heuristic", games=2, epochs=1, workers=1), tmp_path / "a",
                       log=lambda _: None)
    saved = tmp_path / "a" / "expert" / "samples.npz"
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    sizes = game.encoder.observation_size(table), len(game.action_names(table))
    loaded = Samples.load(tmp_path / "a", *sizes)
    assert len(loaded) == first["rounds"][0]["samples"] > 0
    np.testing.assert_allclose(loaded.targets.sum(1), 1.0, atol=1e-6)
    assert not list((tmp_path / "a" / "expert").glob("*.partial"))
    # --games 0: retrain on the saved positions only; the loss is measured on the same samples
    again = run_expert(config, ExpertConfig(teacher="heuristic", games=0, epochs=3, workers=1,
                                            samples=str(tmp_path / "a")), tmp_path / "b", log=lambda _: None)
    assert again["rounds"][0]["new_samples"] == 0 and again["rounds"][0]["samples"] == len(loaded)
    assert again["rounds"][0]["loss_after"] < again["rounds"][0]["loss_before"]
    with pytest.raises(ValueError, match="at least 1"):
        ExpertConfig(games=0)
    with pytest.raises(ValueError, match="shape"):
        Samples.load(saved, sizes[0] + 1, sizes[1])
    with pytest.raises(ValueError, match="no such file"):
        Samples.load(tmp_path / "nowhere", *sizes)
    (tmp_path / "junk.npz").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="not a samples file"):
        Samples.load(tmp_path / "junk.npz", *sizes)
    np.savez(tmp_path / "partial.npz", observations=loaded.observations)
    with pytest.raises(ValueError, match="no masks, targets, values"):
        Samples.load(tmp_path / "partial.npz", *sizes)
    np.savez(tmp_path / "objects.npz", observations=np.array([{"x": 1}], dtype=object), masks=loaded.masks,
             targets=loaded.targets, values=loaded.values)
    with pytest.raises(ValueError, match="not a samples file"):
        Samples.load(tmp_path / "objects.npz", *sizes)  # object arrays would need pickle: refused


def test_a_samples_file_is_bounded_by_what_its_headers_declare_before_anything_is_read(tmp_path, monkeypatch):
    """np.load allocates what an array's header declares before reading its data: a few bytes declaring a
    terabyte are refused by the header alone, and so is a real file above the limit."""
    import zipfile

    huge = io.BytesIO()
    np.lib.format.write_array_header_1_0(huge, {"descr": "<f4", "fortran_order": False, "shape": (10**9, 587)})
    with zipfile.ZipFile(tmp_path / "bomb.npz", "w") as archive:
        archive.writestr("observations.npy", huge.getvalue())
        for name in ("masks", "targets", "values"):
            entry = io.BytesIO()
            np.save(entry, np.zeros(1, np.float32))
            archive.writestr(f"{name}.npy", entry.getvalue())
    with pytest.raises(ValueError, match=r"declare 2186\.\d GiB; at most 4 GiB"):
        Samples.load(tmp_path / "bomb.npz", 587, 10)
    real = Samples(np.zeros((3, 5), np.float32), np.ones((3, 2), bool), np.full((3, 2), 0.5, np.float32),
                   np.zeros(3, np.float32))
    real.save(tmp_path / "real.npz")
    assert len(Samples.load(tmp_path / "real.npz", 5, 2)) == 3
    monkeypatch.setattr(Samples, "MAX_BYTES", 3 * (5 * 4 + 2 + 2 * 4 + 4) - 1)  # one byte short of the file's arrays
    with pytest.raises(ValueError, match="at most"):
        Samples.load(tmp_path / "real.npz", 5, 2)


def test_a_kept_round_is_found_in_a_moved_run_and_not_for_another_job(tmp_path, monkeypatch):
    import shutil

    from tavernzoo.train.labelling import keep_labelled, labelled_before

    def job(run, seed=5):  # the student and an mcts teacher's prior are the run's own round 1
        student = str(run / "expert" / "round_1")
        return CollectJob("tiny_minotaur", SMALL_TM, f"mcts:sims=8,prior={student}", None, student, 0.5, seed=seed)

    game = Samples(np.zeros((2, 5), np.float32), np.ones((2, 3), bool), np.full((2, 3), 1 / 3, np.float32),
                   np.zeros(2, np.float32))
    keep_labelled(tmp_path / "a" / "expert" / "unfinished_round.npz", job(tmp_path / "a"), 2, {7: game})
    shutil.move(tmp_path / "a", tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    for run in (tmp_path / "b", Path("b")):  # moved, and named from its parent directory
        found = labelled_before(run / "expert" / "unfinished_round.npz", job(run), 2, (5, 3))
        assert list(found) == [7] and np.array_equal(found[7].targets, game.targets)
    for other in (job(Path("b"), seed=6), job(tmp_path / "a")):  # another seed; a student outside the run
        assert labelled_before(Path("b/expert/unfinished_round.npz"), other, 2, (5, 3)) == {}


def test_bad_samples_or_init_leave_no_run_directory_behind(tmp_path):
    config = make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET})
    (tmp_path / "junk.npz").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="not a samples file"):
        run_expert(config, ExpertConfig(teacher="heuristic", games=0, samples=str(tmp_path / "junk.npz")),
                   tmp_path / "a", log=lambda _: None)
    with pytest.raises(ValueError, match="no ONNX bot"):
        run_expert(config, ExpertConfig(teacher="heuristic", games=1, init=str(tmp_path / "none.onnx")),
                   tmp_path / "b", log=lambda _: None)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    with pytest.raises(ValueError, match="0 only with samples"):
        ExpertConfig(games=0)


# --- at scale: the student as value, resume, the strength line (issue 23 item 3) ------------------------------


def quick(**changes) -> ExpertConfig:
    """A tiny recipe: heuristic teacher, 2 games a round, 4 strength games, one process."""
    return ExpertConfig(**{"teacher": "heuristic", "games": 2, "epochs": 2, "workers": 1, "eval_games": 4,
                           **changes})


def tiny_config(**changes):
    return make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET, **changes})


def test_value_student_uses_trained_critics_only_from_round_two(tmp_path):
    """--value-student: round 1's teacher has no value= (round 0's critic, from --init, is a fresh network's);
    round K >= 2 searches with round K-1's student as value, and that student carries its trained critic."""
    from tavernzoo.agents.policy import MLPPolicy, find_policy_dir

    start = tmp_path / "start"
    run_expert(tiny_config(), quick(rounds=1, eval_games=0), start, log=lambda _: None)
    trained = MLPPolicy.load(find_policy_dir(str(start)))
    actor_only = tmp_path / "actor"  # a policy without a critic, as an older ONNX or zoo bot is
    MLPPolicy(trained.weights, trained.biases, trained.activation, trained.meta).save(actor_only)
    lines: list[str] = []
    out = tmp_path / "run"
    report = run_expert(tiny_config(), quick(teacher="mcts:6", rounds=3, games=1, epochs=1, init=str(actor_only),
                                             prior_student=True, value_student=True, eval_games=0),
                        out, log=lines.append)
    teachers = [entry["teacher"] for entry in report["rounds"]]
    assert teachers == [f"mcts:6,prior={out}/expert/round_0",
                        f"mcts:6,prior={out}/expert/round_1,value={out}/expert/round_1",
                        f"mcts:6,prior={out}/expert/round_2,value={out}/expert/round_2"]
    assert any("round 1" in line and "no value=" in line and "round 0's critic" in line for line in lines)
    assert json.loads((out / "expert" / "round_0" / "policy.json").read_text())["critic_trained"] is False
    # the value bot the round-3 teacher loads is round 2's student, critic and all
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    teacher = load_bot(teachers[2], game, table, seed=0)
    saved = MLPPolicy.load(out / "expert" / "round_2")
    assert saved.has_value
    observations = Samples.load(out, game.encoder.observation_size(table), len(game.action_names(table))).observations
    np.testing.assert_allclose(teacher._value_bot.value_estimates(observations[:5]), saved.values(observations[:5]),
                               atol=1e-6)
    # without --init, round 1 has no student at all, and round 2 is the first with a value
    assert teacher_spec("mcts", tmp_path / "r1", False, tmp_path / "r1") == f"mcts:value={tmp_path / 'r1'}"
    with pytest.raises(ValueError, match="value_student needs an mcts teacher"):
        ExpertConfig(teacher="oracle", value_student=True)
    with pytest.raises(ValueError, match="already names value="):
        ExpertConfig(teacher="mcts:value=zoo:tiny_minotaur", value_student=True)


def test_rollout_student_makes_each_rounds_paired_teacher_roll_out_with_the_latest_student(tmp_path):
    """--rollout-student with --prior-student and a root=paired teacher: approximate policy iteration, each
    round's search both starting from and rolling out with the previous round's student."""
    from tavernzoo.agents.policy import MLPPolicy

    start = tmp_path / "start"
    run_expert(tiny_config(), quick(rounds=1, eval_games=0), start, log=lambda _: None)
    out = tmp_path / "run"
    report = run_expert(tiny_config(), quick(teacher="mcts:6,root=paired,target=improved", rounds=2, games=1,
                                             epochs=1, init=str(start), prior_student=True, rollout_student=True,
                                             dagger=0.0, eval_games=0), out, log=lambda _: None)
    teachers = [entry["teacher"] for entry in report["rounds"]]
    assert teachers == [f"mcts:6,root=paired,target=improved,prior={out}/expert/round_{k},"
                        f"rollout={out}/expert/round_{k}" for k in (0, 1)]
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    teacher = load_bot(teachers[1], game, table, seed=0)
    samples = Samples.load(out, game.encoder.observation_size(table), len(game.action_names(table)))
    student = MLPPolicy.load(out / "expert" / "round_1")
    observations = samples.observations[:6]
    np.testing.assert_allclose(teacher._policy.policy.logits(observations), student.logits(observations), atol=1e-6)
    first = MLPPolicy.load(out / "expert" / "round_0")
    assert not np.allclose(first.logits(observations), student.logits(observations))  # round 1's, not round 0's
    assert not np.allclose(samples.targets.max(axis=1), 1.0)  # the improved targets are not the move alone
    with pytest.raises(ValueError, match="already names rollout="):
        ExpertConfig(teacher="mcts:rollout=heuristic", rollout_student=True)
    with pytest.raises(ValueError, match="rollout_student needs an mcts teacher"):
        ExpertConfig(teacher="heuristic", rollout_student=True)


def test_critic_only_fits_the_value_head_and_leaves_the_actor_weight_for_weight(tmp_path):
    """--critic-only: the student's critic learns the positions' values while its actor stays exactly the
    --init bot's, so a bot trained with a privileged critic (an actor alone) gets a value head and plays as
    before; the run's recipe records the option."""
    from tavernzoo.agents.policy import MLPPolicy, find_policy_dir

    start = tmp_path / "start"
    run_expert(tiny_config(), quick(rounds=1, eval_games=0), start, log=lambda _: None)
    out = tmp_path / "run"
    report = run_expert(tiny_config(), quick(teacher=str(start), rounds=1, games=4, epochs=3, init=str(start),
                                             dagger=1.0, critic_only=True, eval_games=0), out, log=lambda _: None)
    assert report["recipe"]["critic_only"] is True and report["rounds"][0]["agreement_after"] == 1.0
    source, fitted = MLPPolicy.load(find_policy_dir(str(start))), MLPPolicy.load(out / "expert" / "round_1")
    for mine, theirs in zip(fitted.weights + fitted.biases, source.weights + source.biases, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert fitted.has_value and not all(np.array_equal(mine, theirs) for mine, theirs in zip(
        fitted.value_weights + fitted.value_biases, source.value_weights + source.value_biases, strict=True))
    # without it the same round moves the actor too
    plain = tmp_path / "plain"
    run_expert(tiny_config(), quick(teacher="random", rounds=1, games=4, epochs=3, init=str(start), eval_games=0),
               plain, log=lambda _: None)
    moved = MLPPolicy.load(plain / "expert" / "round_1")
    assert not all(np.array_equal(mine, theirs) for mine, theirs in zip(moved.weights, source.weights, strict=True))
    with pytest.raises(ValueError, match="critic_only fits the critic of the init bot"):
        ExpertConfig(critic_only=True)


def test_an_init_bot_with_a_trained_critic_is_the_value_from_round_one(tmp_path):
    """--init of a run (its checkpoint holds the critic) copies actor and critic: round 1 already searches with
    round 0's value head, which is the starting run's critic weight for weight."""
    from tavernzoo.agents.policy import MLPPolicy, find_policy_dir

    start = tmp_path / "start"
    run_expert(tiny_config(), quick(rounds=1, eval_games=0), start, log=lambda _: None)
    out = tmp_path / "run"
    lines: list[str] = []
    report = run_expert(tiny_config(), quick(teacher="mcts:6", rounds=1, games=1, epochs=1, init=str(start),
                                             prior_student=True, value_student=True, eval_games=0),
                        out, log=lines.append)
    assert report["rounds"][0]["teacher"] == f"mcts:6,prior={out}/expert/round_0,value={out}/expert/round_0"
    assert not any("no value=" in line for line in lines)
    assert json.loads((out / "expert" / "round_0" / "policy.json").read_text())["critic_trained"] is True
    source, copied = MLPPolicy.load(find_policy_dir(str(start))), MLPPolicy.load(out / "expert" / "round_0")
    for mine, theirs in zip(copied.value_weights + copied.value_biases, source.value_weights + source.value_biases,
                            strict=True):
        np.testing.assert_array_equal(mine, theirs)
    # the same run exported: the ONNX file's `value` output is read back as the critic
    from tavernzoo.agents.export import export, read_policy

    onnx_path, _ = export(start, tmp_path / "bot.onnx")
    from_onnx = read_policy(str(onnx_path))
    assert from_onnx.has_value
    for mine, theirs in zip(from_onnx.value_weights, source.value_weights, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-7)


def _kill(monkeypatch, where: str) -> None:
    """Make a run die where a killed process would leave its files: in round 1's labelling (nothing of the
    round written), in round 2's labelling after its first game (kept in expert/unfinished_round.npz), in
    round 2 after its samples.npz (before training), or in round 2 after its checkpoint (before expert.json
    lists the round)."""
    import tavernzoo.envs.records as records
    import tavernzoo.train.expert as expert_module

    class Killed(Exception):
        pass

    if where == "round 1 labelling":
        def collect_dies(*args, **kwargs):
            raise Killed
        monkeypatch.setattr(expert_module, "collect", collect_dies)
    elif where == "round 2 mid-labelling":  # every game kept as it ends; killed in round 2's second game
        import tavernzoo.train.labelling as labelling

        monkeypatch.setattr(labelling, "KEEP_EVERY_S", 0.0)
        real_play, played = labelling._play_one, []

        def play_dies(*args):
            played.append(1)
            if len(played) == 4:  # round 1's two games, round 2's first, then this one
                raise Killed
            return real_play(*args)
        monkeypatch.setattr(labelling, "_play_one", play_dies)
    elif where == "round 2 after samples":
        real_train = expert_module.train_student
        calls = []

        def train_dies(*args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                raise Killed
            return real_train(*args, **kwargs)
        monkeypatch.setattr(expert_module, "train_student", train_dies)
    else:
        real_write = records.write_json_atomic

        def write_dies(path, data, *args, **kwargs):
            if path.name == "expert.json" and len(data.get("rounds", ())) == 2:
                raise Killed
            return real_write(path, data, *args, **kwargs)
        monkeypatch.setattr(records, "write_json_atomic", write_dies)
    return Killed


@pytest.mark.parametrize("where,init", [("round 1 labelling", False), ("round 1 labelling", True),
                                        ("round 2 mid-labelling", False), ("round 2 after samples", False),
                                        ("round 2 after checkpoint", True)])
def test_a_run_killed_mid_round_resumes_to_the_uninterrupted_run(tmp_path, monkeypatch, where, init):
    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.train.expert import resume_expert

    start = None
    if init:  # the student starts from a bot's actor (round_0), rebuilt from round_0 when round 1 is redone
        start = str(tmp_path / "start")
        run_expert(tiny_config(), quick(rounds=1, eval_games=0), start, log=lambda _: None)
    recipe = quick(rounds=2, dagger=0.5, init=start)
    whole = run_expert(tiny_config(), recipe, tmp_path / "whole", log=lambda _: None)
    with monkeypatch.context() as patch:
        killed = _kill(patch, where)
        with pytest.raises(killed):
            run_expert(tiny_config(), recipe, tmp_path / "killed", log=lambda _: None)
    left = json.loads((tmp_path / "killed" / "expert.json").read_text())
    assert len(left["rounds"]) == (0 if where.startswith("round 1") else 1)
    if where == "round 2 after checkpoint":  # the round's student and checkpoint exist, expert.json lacks it
        assert (tmp_path / "killed" / "expert" / "round_2" / "policy.npz").is_file()
    if where == "round 2 after samples":  # another run started from the killed one's samples takes round 1's
        other = run_expert(tiny_config(), quick(games=0, samples=str(tmp_path / "killed"), eval_games=0),
                           tmp_path / "other", log=lambda _: None)
        assert other["rounds"][0]["samples"] == left["rounds"][0]["samples"] == whole["rounds"][0]["samples"]
    bars = []
    import tavernzoo.eval.backends as backends

    real_bar = backends.progress_bar
    monkeypatch.setattr(backends, "progress_bar", lambda enabled, total, description, **kw: bars.append(
        (total, description, kw)) or real_bar(False, total, description, **kw))
    unfinished = tmp_path / "killed" / "expert" / "unfinished_round.npz"
    assert unfinished.is_file() == (where in ("round 2 mid-labelling", "round 2 after samples",
                                              "round 2 after checkpoint"))
    import tavernzoo.train.labelling as labelling

    real_play, played = labelling._play_one, []
    monkeypatch.setattr(labelling, "_play_one", lambda *args: played.append(1) or real_play(*args))
    lines: list[str] = []
    killed_run = tmp_path / "killed"
    if where == "round 2 mid-labelling":  # resumed from another working directory: its students spelt otherwise
        monkeypatch.chdir(tmp_path)
        killed_run = Path("killed")
    resumed = resume_expert(killed_run, progress=True, log=lines.append)
    # the games a killed round labelled are not played again: round 2's first, or all of a collected round
    assert len(played) == {"round 1 labelling": 4, "round 2 mid-labelling": 1}.get(where, 0), (where, len(played))
    assert ("round 2: 1 of its 2 games were labelled before the run stopped; labelling the rest" in lines) == (
        where == "round 2 mid-labelling"), lines
    if where == "round 2 mid-labelling":  # without a bar, a log says how far a round has got as it is kept
        import tavernzoo.train.expert as expert_module

        monkeypatch.setattr(expert_module, "LOG_KEPT_EVERY_S", 0.0)
        monkeypatch.setattr(labelling, "KEEP_EVERY_S", 0.0)
        said: list[str] = []
        run_expert(tiny_config(), quick(rounds=1, games=3, eval_games=0), tmp_path / "logged", log=said.append)
        kept = [re.fullmatch(r"round 1: (\d) of 3 games labelled \(\d+ positions\), kept in "
                             r"expert/unfinished_round\.npz", line) for line in said if "kept in" in line]
        # the first game's keep is said; later ones as the write's own time allows (not the last: the round ends)
        assert kept and all(kept) and kept[0].group(1) == "1" and "3" not in [m.group(1) for m in kept], said
    assert not unfinished.exists()
    assert (2, "expert rounds", {"unit": "round", "initial": len(left["rounds"])}) in bars
    assert [r["round"] for r in resumed["rounds"]] == [1, 2]
    keys = ("teacher", "new_samples", "samples", "dagger", "loss_before", "loss_after", "strength")
    for mine, theirs in zip(resumed["rounds"], whole["rounds"], strict=True):
        assert {k: mine[k] for k in keys} == {k: theirs[k] for k in keys}
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    sizes = game.encoder.observation_size(table), len(game.action_names(table))
    for name in ("observations", "masks", "targets", "values"):  # no round lost or counted twice
        np.testing.assert_array_equal(getattr(Samples.load(tmp_path / "killed", *sizes), name),
                                      getattr(Samples.load(tmp_path / "whole", *sizes), name))
    a, b = (MLPPolicy.load(tmp_path / run / "expert" / "round_2") for run in ("killed", "whole"))
    for mine, theirs in zip(a.weights + a.value_weights, b.weights + b.value_weights, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-6)
    if where == "round 2 after samples":
        assert any("samples of the unfinished round 2 dropped" in line for line in lines)


def test_the_strength_line_is_play_match_of_the_round_student(tmp_path):
    lines: list[str] = []
    out = tmp_path / "run"
    report = run_expert(tiny_config(), quick(rounds=1, eval_games=6), out, log=lines.append)
    strength = report["rounds"][0]["strength"]
    result = play_match("tiny_minotaur", [str(out / "expert" / "round_1"), "heuristic"], 6, seed=7, config=SMALL_TM)
    row = result.rows[0]
    assert strength["games"] == 6 and strength["deals"] == 3 and strength["fair_share"] == 0.5
    assert (strength["wins"], strength["losses"]) == (row.wins, row.losses)
    assert strength["score"] == round(row.score, 4) and strength["score_ci"] == [round(v, 4) for v in row.score_ci]
    line = next(line for line in lines if "strength" in line)
    assert f"{row.score:.3f} ({row.score_ci[0]:.3f} - {row.score_ci[1]:.3f}, 95%)" in line
    assert "against 1 x heuristic over 6 games; fair share 0.500" in line
    assert json.loads((out / "expert.json").read_text())["rounds"][0]["strength"] == strength
    off = run_expert(tiny_config(), quick(rounds=1, eval_games=0), tmp_path / "off", log=lines.append)
    assert "strength" not in off["rounds"][0]
    with pytest.raises(ValueError, match="eval_games=-1"):
        quick(eval_games=-1)


def test_progress_bars_count_rounds_from_where_a_run_resumes():
    from tavernzoo.eval.backends import progress_bar

    assert progress_bar(False, 3, "x") is None
    bar = progress_bar(True, 3, "expert rounds", unit="round", initial=1)
    try:
        assert (bar.total, bar.n) == (3, 1)  # the ETA counts only the rounds left
    finally:
        bar.close()


def _cli(capsys, *words: str) -> tuple[int, str]:
    from tavernzoo.cli import main

    code = main(list(words))
    return code, capsys.readouterr().err


def test_bad_resumes_get_one_error_line_and_change_nothing(tmp_path, capsys):
    code, err = _cli(capsys, "expert", "--resume", str(tmp_path / "nowhere"))
    assert code == 2 and err.count("\n") == 1 and "no such directory" in err
    (tmp_path / "ppo").mkdir()
    (tmp_path / "ppo" / "config.json").write_text("{}")
    code, err = _cli(capsys, "expert", "--resume", str(tmp_path / "ppo"))
    assert code == 2 and "not an expert run" in err and "tavernzoo train --resume" in err
    out = tmp_path / "run"
    run_expert(tiny_config(), quick(rounds=1, eval_games=0), out, log=lambda _: None)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, err = _cli(capsys, "expert", "--resume", str(out))
    assert code == 2 and err.count("\n") == 1 and "done all 1 rounds" in err and "--rounds N" in err
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "1")
    assert code == 2 and "more than 1" in err
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "0")
    assert code == 2 and "--rounds 0 must be a whole number of at least 1" in err
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "2", "--teacher", "mcts", "--games", "5",
                     "--set", "net_arch=[64]", "--value-student")
    assert code == 2 and err.count("\n") <= 2  # one error line (the console may wrap it)
    for named in ("--teacher mcts", "--games 5", "net_arch", "--value-student"):
        assert named in err
    code, err = _cli(capsys, "expert", "ministeel", "--resume", str(out), "--rounds", "2")
    assert code == 2 and "the game ministeel" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    (out / "expert.json").write_text('{"recipe": {}, "rounds": [{"round": 2}]}')
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "3")
    assert code == 2 and "not an expert run's report" in err
    code, err = _cli(capsys, "expert", "tiny_minotaur", "--teacher", "heuristic", "--value-student",
                     "--out", str(tmp_path / "v"))
    assert code == 2 and "needs an mcts teacher" in err and not (tmp_path / "v").exists()
    code, err = _cli(capsys, "expert", "tiny_minotaur", "--eval-games", "-2", "--out", str(tmp_path / "e"))
    assert code == 2 and "eval_games=-2" in err and not (tmp_path / "e").exists()
    code, err = _cli(capsys, "expert", "tiny_minotaur", "--eval-opponents", "nonsense", "--out", str(tmp_path / "o"))
    assert code == 2 and "nonsense" in err and not (tmp_path / "o").exists()
    code, err = _cli(capsys, "expert", "tiny_minotaur", "--teacher", "heuristic", "--workers", "100000",
                     "--out", str(tmp_path / "w"))
    assert code == 2 and "workers=100000" in err and not (tmp_path / "w").exists()


def test_the_command_resumes_a_run_with_more_rounds(tmp_path, capsys):
    out = tmp_path / "run"
    run_expert(tiny_config(), quick(rounds=1), out, log=lambda _: None)
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "2", "--teacher", "heuristic",
                     "--workers", "2", "--no-progress")
    assert code == 0, err
    report = json.loads((out / "expert.json").read_text())
    assert [r["round"] for r in report["rounds"]] == [1, 2] and report["recipe"]["rounds"] == 2
    assert report["rounds"][1]["dagger"] == 0.5 and "strength" in report["rounds"][1]


def test_a_run_from_before_the_seeding_option_resumes_measuring_with_v1(tmp_path, capsys):
    """The strength lines use the same deals every round: a run whose recipe names no eval_seeding (written
    before 2026-12-05, its lines unstamped) measured with v1 and keeps it; asking for another is refused."""
    from tavernzoo.eval.deals import results_seeding

    out = tmp_path / "run"
    run_expert(tiny_config(), quick(rounds=1), out, log=lambda _: None)
    report = json.loads((out / "expert.json").read_text())
    strength = report["rounds"][0]["strength"]
    assert report["recipe"]["eval_seeding"] == "v2" and (strength["results_version"], strength["seeding"]) == (2, "v2")
    del report["recipe"]["eval_seeding"], strength["results_version"], strength["seeding"]
    (out / "expert.json").write_text(json.dumps(report))
    assert results_seeding(strength) == "v1"
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "2", "--eval-seeding", "v2")
    assert code == 2 and err.count("\n") <= 2 and "--eval-seeding v2 (the run's: v1)" in err
    code, err = _cli(capsys, "expert", "--resume", str(out), "--rounds", "2", "--no-progress")
    assert code == 0, err
    second = json.loads((out / "expert.json").read_text())["rounds"][1]["strength"]
    assert (second["results_version"], second["seeding"]) == (2, "v1")
    row = play_match("tiny_minotaur", [str(out / "expert" / "round_2"), "heuristic"], 4, seed=7, config=SMALL_TM,
                     seeding="v1").rows[0]
    assert (second["wins"], second["losses"], second["score"]) == (row.wins, row.losses, round(row.score, 4))
    with pytest.raises(ValueError, match="eval_seeding='v0' is not a seed scheme"):
        quick(eval_seeding="v0")


@pytest.mark.parametrize("game_name", ["ministeel", "wyvern"])
def test_four_player_expert_iteration_with_the_student_as_prior_and_value(tmp_path, game_name):
    """A 4-player smoke of the whole recipe: mcts teacher against heuristics, the student as prior and value
    from round 2, a strength line each round."""
    config = make_train_config(game_name, overrides={"game_config": {"num_players": 4}, **TINY_NET})
    out = tmp_path / "run"
    report = run_expert(config, ExpertConfig(teacher="mcts:8", opponents="heuristic", rounds=2, games=1, epochs=1,
                                             prior_student=True, value_student=True, eval_games=4, workers=1),
                        out, log=lambda _: None)
    second = report["rounds"][1]
    assert second["teacher"] == f"mcts:8,prior={out}/expert/round_1,value={out}/expert/round_1"
    assert second["new_samples"] > 0 and second["strength"]["seats"] == 4 and second["strength"]["games"] == 4
    assert second["strength"]["fair_share"] == 0.25


def test_the_student_as_the_teachers_belief_from_round_two(tmp_path):
    """``belief_student``: a 4-player MiniSteel teacher weighs its deals by the latest student (``belief=``)
    from round 2; refused, before anything is written, for a game with nothing hidden."""
    config = make_train_config("ministeel", overrides={"game_config": {"num_players": 4}, **TINY_NET})
    out = tmp_path / "run"
    report = run_expert(config, ExpertConfig(teacher="mcts:8", opponents="heuristic", rounds=2, games=1, epochs=1,
                                             belief_student=True, eval_games=0, workers=1), out, log=lambda _: None)
    assert report["rounds"][0]["teacher"] == "mcts:8"
    assert report["rounds"][1]["teacher"] == f"mcts:8,belief={out}/expert/round_1"
    assert report["rounds"][1]["new_samples"] > 0
    with pytest.raises(ValueError, match="belief_student: tiny_minotaur hides no cards a belief could weigh"):
        run_expert(tiny_config(), quick(teacher="mcts:8", belief_student=True), tmp_path / "no", log=lambda _: None)
    assert not (tmp_path / "no").exists()
    with pytest.raises(ValueError, match="belief_student needs an mcts teacher"):
        quick(belief_student=True)


def test_the_critic_learns_the_teachers_search_values_where_asked(tmp_path):
    """``value_target=search``: each position's value is the mcts teacher's root value there, where by
    default it is the seat's final return in that game; the games, moves and policy targets are the same."""
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    sizes = game.encoder.observation_size(table), len(game.action_names(table))
    recipe = {"teacher": "mcts:20", "opponents": "heuristic", "games": 3, "epochs": 1, "eval_games": 0}
    runs = {}
    for target in ("return", "search"):
        run_expert(tiny_config(), quick(**recipe, value_target=target), tmp_path / target, log=lambda _: None)
        runs[target] = Samples.load(tmp_path / target, *sizes)
    for name in ("observations", "masks", "targets"):
        np.testing.assert_array_equal(getattr(runs["search"], name), getattr(runs["return"], name))
    returns, searched = runs["return"].values, runs["search"].values
    assert set(np.unique(returns)) <= {-1.0, 0.0, 1.0}  # one game's outcome, the same at each of its positions
    assert len(np.unique(searched)) > len(np.unique(returns)) and not np.array_equal(searched, returns)
    assert (np.abs(searched) <= 1.0).all()
    assert json.loads((tmp_path / "search" / "expert.json").read_text())["recipe"]["value_target"] == "search"
    for bad, words in (({"value_target": "search"}, "value_target=search needs an mcts teacher"),
                       ({"value_target": "search", "teacher": "mcts:20,root=paired"}, "root=paired has none"),
                       ({"value_target": "q"}, "value_target='q' is not valid; valid: return, search")):
        with pytest.raises(ValueError, match=re.escape(words)):
            quick(**bad)


def test_a_student_knows_the_networks_its_games_and_its_samples_seated(tmp_path, capsys):
    """An expert run's games against a network (``--opponents zoo:tiny_minotaur``) enter what the student
    trained against, with their count; so does a run that only retrains on that run's positions, and
    ``match`` says so where the student meets that network."""
    from tavernzoo.agents.export import training_opponents
    from tavernzoo.cli import main

    config = make_train_config("tiny_minotaur", overrides=TINY_NET)
    run_expert(config, quick(opponents="zoo:tiny_minotaur", games=3, eval_games=0), tmp_path / "a",
               log=lambda _: None)
    assert training_opponents(str(tmp_path / "a"), "tiny_minotaur").get("zoo:tiny_minotaur") == 3
    said: list[str] = []
    run_expert(config, quick(games=0, eval_games=0, samples=str(tmp_path / "a" / "expert" / "samples.npz")),
               tmp_path / "b", log=said.append)
    assert said[0].startswith("round 1: no new games; retraining on the") and "teacher" not in said[0]
    assert json.loads((tmp_path / "b" / "expert.json").read_text())["rounds"][0]["teacher"] is None
    assert training_opponents(str(tmp_path / "b"), "tiny_minotaur").get("zoo:tiny_minotaur") == 3
    meta = json.loads((tmp_path / "b" / "checkpoints" / "step_0000000000" / "policy.json").read_text())
    assert "retrained on the positions of" in meta["trained_with"] and meta["expert"]["against"] == {}
    capsys.readouterr()
    assert main(["match", "tiny_minotaur", "--bots", str(tmp_path / "b"), "zoo:tiny_minotaur", "--games", "2",
                 "--no-progress"]) == 0
    assert "trained against zoo:tiny_minotaur (3 games" in capsys.readouterr().err


def test_a_run_spelt_with_relative_paths_is_read_and_resumed_from_anywhere(tmp_path, monkeypatch):
    """A run records the files its recipe names (``--teacher``, ``--opponents``, ``--init``, ``--samples``) by
    absolute path: from another working directory its lineage still finds the games its samples' run played
    against a network, and ``--resume`` still finds its opponents. Its exported bot carries that record
    (``provenance.training_opponents``), so it says the same once the runs it came from are gone."""
    import shutil

    from tavernzoo.agents import onnx_bot
    from tavernzoo.agents.export import export, training_opponents
    from tavernzoo.train.expert import resume_expert

    (tmp_path / "elsewhere").mkdir()
    for suffix in (".onnx", ".json"):
        shutil.copy(onnx_bot.ZOO_DIR / f"tiny_minotaur{suffix}", tmp_path / f"met{suffix}")
    met = str(tmp_path / "met.onnx")
    config = make_train_config("tiny_minotaur", overrides=TINY_NET)
    monkeypatch.chdir(tmp_path)
    run_expert(config, quick(opponents="met.onnx", games=3, eval_games=0), "a", log=lambda _: None)
    run_expert(config, quick(teacher="mcts:sims=4,prior=a", games=0, eval_games=0, init="a",
                             samples="a/expert/samples.npz"), "b", log=lambda _: None)
    recipe = json.loads((tmp_path / "b" / "expert.json").read_text())["recipe"]
    a = str(tmp_path / "a")
    assert (recipe["init"], recipe["teacher"]) == (a, f"mcts:sims=4,prior={a}"), recipe
    assert recipe["samples"] == f"{a}/expert/samples.npz"
    assert json.loads((tmp_path / "a" / "expert.json").read_text())["recipe"]["opponents"] == met
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert training_opponents(str(tmp_path / "b"), "tiny_minotaur").get(met) == 3
    export(tmp_path / "b", tmp_path / "student.onnx")  # the record as it reads now, in the bot
    report = resume_expert(tmp_path / "a", rounds=2, log=lambda _: None)
    assert [entry["games"] for entry in report["rounds"]] == [3, 3]
    shutil.rmtree(tmp_path / "a")
    shutil.rmtree(tmp_path / "b")
    assert training_opponents(str(tmp_path / "student.onnx"), "tiny_minotaur").get(met) == 3
    provenance = json.loads((tmp_path / "student.json").read_text())["provenance"]
    assert provenance["training_opponents"][met] == 3 and met in provenance["networks"]


def test_a_network_met_is_named_by_its_file_after_another_is_exported_to_its_path(tmp_path, monkeypatch):
    """A run records the SHA-256 of each ONNX bot it met (``provenance.networks``). Where that path later
    holds another network (the next export to it; a zoo update puts a new file under ``zoo:GAME``), the games
    are said to be against the zoo bot that holds the file they were played against, or against nothing
    nameable where no file holds it. An expert student's manifest carries no PPO options or league: it
    played no PPO step, and its trainer's were unused defaults."""
    import hashlib
    import shutil

    from tavernzoo.agents import onnx_bot
    from tavernzoo.agents.export import export, training_opponents

    zoo, met = onnx_bot.ZOO_DIR, tmp_path / "met.onnx"

    def put(name: str) -> None:
        for suffix in (".onnx", ".json"):
            shutil.copy(zoo / f"{name}{suffix}", met.with_suffix(suffix))

    put("tiny_minotaur")
    digest = hashlib.sha256(met.read_bytes()).hexdigest()
    config = make_train_config("tiny_minotaur", overrides=TINY_NET)
    run_expert(config, quick(opponents=str(met), games=3, eval_games=0), tmp_path / "a", log=lambda _: None)
    assert training_opponents(str(tmp_path / "a"), "tiny_minotaur").get(str(met)) == 3
    put("tiny_minotaur_yardstick")  # another network at that path
    now = training_opponents(str(tmp_path / "a"), "tiny_minotaur")
    assert now.get("zoo:tiny_minotaur") == 3 and str(met) not in now, now
    monkeypatch.setattr(onnx_bot, "ZOO_DIR", tmp_path / "elsewhere")  # the file met is in no zoo
    gone = training_opponents(str(tmp_path / "a"), "tiny_minotaur")
    assert str(met) not in gone and "zoo:tiny_minotaur" not in gone, gone
    monkeypatch.undo()
    _, manifest = export(tmp_path / "a", tmp_path / "student.onnx")
    provenance = json.loads(manifest.read_text())["provenance"]
    assert "training_options" not in provenance and "training_league" not in provenance
    # the record it carries names the file met as the zoo bot holding it now, with that file's digest
    assert provenance["networks"] == {str(met): digest, "zoo:tiny_minotaur": digest}
    assert provenance["training_opponents"] == {"zoo:tiny_minotaur": 3}
    assert training_opponents(str(tmp_path / "student.onnx"), "tiny_minotaur").get("zoo:tiny_minotaur") == 3


def test_balanced_samples_give_each_source_the_same_share_of_the_loss(tmp_path):
    config = tiny_config()
    run_expert(config, quick(games=2, eval_games=0), tmp_path / "a", log=lambda _: None)
    run_expert(config, quick(games=6, eval_games=0), tmp_path / "b", log=lambda _: None)
    sources = [str(tmp_path / "a"), str(tmp_path / "b")]
    run_expert(config, quick(games=0, eval_games=0, samples=sources, balance_samples=True), tmp_path / "c",
               log=lambda _: None)
    game = get_game("tiny_minotaur")
    table = game.make_config(SMALL_TM)
    sizes = game.encoder.observation_size(table), len(game.action_names(table))
    first, second = (len(Samples.load(source, *sizes)) for source in sources)
    assert first < second
    weights = Samples.load(tmp_path / "c", *sizes).weights
    assert weights[:first].sum() == pytest.approx(weights[first:].sum(), rel=1e-5)
    assert weights.sum() == pytest.approx(first + second, rel=1e-5)
    with pytest.raises(ValueError, match="balance_samples weighs two or more samples sources"):
        quick(samples=sources[0], balance_samples=True)
