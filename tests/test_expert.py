"""Expert iteration (train/expert.py): the targets a student learns, imitation, and a tiny run end to end."""

from __future__ import annotations

import io
import json
import random

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from tavernzoo.agents import load_bot  # noqa: E402
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
    read_actor,
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


def test_student_imitates_a_deterministic_teacher(tmp_path):
    config = make_train_config("tiny_minotaur", overrides={"game_config": SMALL_TM, **TINY_NET})
    trainer = Trainer(config, tmp_path / "run")
    model, _ = make_model(trainer)
    samples = collect(CollectJob("tiny_minotaur", SMALL_TM, "heuristic", None, None, 0.0, seed=1), 8, workers=1)
    fit = train_student(model.policy, samples, epochs=30, batch_size=64, learning_rate=3e-3, seed=0)
    assert fit["loss_after"] < 0.5 * fit["loss_before"]
    assert fit["agreement_after"] > 0.9 > fit["agreement_before"]
    assert evaluate_student(model.policy, samples)["agreement"] == pytest.approx(fit["agreement_after"])


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
    exported = read_actor(str(onnx_path))
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
