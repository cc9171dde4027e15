"""The Ray scale-out: a local Ray instance started once for this file (no cluster), tiny budgets throughout."""

from __future__ import annotations

import csv
import functools
import json
import operator

import pytest

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_map_tasks_batches_every_item_once(ray_local):
    from tavernzoo.eval.ray_backend import batch_size, map_tasks

    assert batch_size(1000, cpus=2) == 32  # about sixteen batches per CPU
    assert batch_size(3, cpus=2) == 1
    with pytest.raises(ValueError, match="at least 1"):
        batch_size(10, cpus=2, batch=0)
    results = dict(map_tasks(functools.partial(operator.mul, 3), range(20), batch=6))  # importable on workers
    assert results == {i: 3 * i for i in range(20)}


TINY = {"n_envs": 2, "n_steps": 16, "batch_size": 32, "n_epochs": 1, "snapshot_every": 32,
        "checkpoint_every": 1000, "net_arch": [16]}


def test_sweep_two_trials_gives_table_plot_and_a_best_checkpoint_that_is_a_bot(ray_local, tmp_path):
    from tavernzoo.agents import load_bot
    from tavernzoo.envs import get_game
    from tavernzoo.train.sweep import SweepSpec, run_sweep

    spec = SweepSpec(game="tiny_minotaur", out=str(tmp_path / "sweep"), fixed=TINY,
                     grid={"learning_rate": [1e-3, 1e-4]}, timesteps=64, reports=2, eval_games=4)
    summary = run_sweep(spec)
    with open(tmp_path / "sweep" / "results.csv") as file:
        rows = list(csv.DictReader(file))
    assert sorted(float(row["learning_rate"]) for row in rows) == [1e-4, 1e-3]
    assert all(int(row["timesteps"]) == 64 and 0.0 <= float(row["score"]) <= 1.0 for row in rows)
    assert (tmp_path / "sweep" / "sweep.png").stat().st_size > 0
    best = json.loads((tmp_path / "sweep" / "best.json").read_text())
    assert best["checkpoint"] == summary["checkpoint"] == rows[0]["checkpoint"]
    assert float(rows[0]["score"]) == max(float(row["score"]) for row in rows)
    for row in rows:  # every trial is an ordinary training run with its report and checkpoints
        trial = tmp_path / "sweep" / "trials" / row["trial"]
        assert json.loads((trial / "report.json").read_text())["timesteps"] == 64
        config = json.loads((trial / "config.json").read_text())
        assert config["learning_rate"] == float(row["learning_rate"]) and config["n_envs"] == 2
    game = get_game("tiny_minotaur")
    bot = load_bot(best["checkpoint"], game, game.make_config(), seed=0)
    assert hasattr(bot, "act")


def test_sweep_refuses_unknown_fields_and_bad_ranges(tmp_path):
    from tavernzoo.train.sweep import SweepSpec

    with pytest.raises(ValueError, match="cannot sweep 'learning_rat'"):
        SweepSpec(game="tiny_minotaur", out=str(tmp_path), grid={"learning_rat": [1]}).validate()
    with pytest.raises(ValueError, match="LOW < HIGH"):
        SweepSpec(game="tiny_minotaur", out=str(tmp_path), loguniform={"learning_rate": (0.0, 1e-3)}).validate()
    with pytest.raises(ValueError, match="pbt perturbs"):
        SweepSpec(game="tiny_minotaur", out=str(tmp_path), scheduler="pbt").validate()


def test_rllib_recipe_trains_masked_ppo_for_two_iterations(ray_local):
    from tavernzoo.train.rllib_recipe import train

    # The recipe's env raises on any action its mask forbids, so training at all shows the masks hold.
    summaries = train("minefield", 2, {"num_players": 3}, train_batch_size=128, minibatch_size=64, num_epochs=1,
                      hidden=(16,))
    assert [s["iteration"] for s in summaries] == [1, 2]
    assert summaries[1]["env_steps"] > summaries[0]["env_steps"] >= 128
    assert summaries[1]["episodes"] >= 1


def test_rllib_run_checkpoints_resumes_reports_and_exports_a_bot_that_plays(ray_local, tmp_path, capsys):
    """End to end: train 2 iterations with checkpoints, resume to 3, the report, export, the bot plays."""
    pytest.importorskip("onnx")
    from tavernzoo.agents import load_bot
    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.cli import main
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match
    from tavernzoo.train.evaluate import strength_report

    run = tmp_path / "run"
    assert main(["rllib", "minefield", "--set", "num_players=3", "--iterations", "2", "--batch", "64",
                 "--checkpoint-every", "1", "--eval-games", "12", "--out", str(run), "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines() if line.startswith("{")]
    assert [line["iteration"] for line in lines] == [1, 2] and lines[0]["env_steps"] >= 64
    assert "heuristic x2" in captured.err and "random x2" in captured.err  # the strength table
    assert (run / "checkpoints" / "latest").read_text().strip() == "iter_000002"
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["iter_000001", "iter_000002", "latest"]
    first = MLPPolicy.load(run / "checkpoints" / "iter_000001")
    assert first.meta["iterations"] == 1 and first.meta["env"] == "minefield_v0"

    # the report: train's strength report of the checkpoint's policy, against random and the heuristic
    game = get_game("minefield")
    config = game.make_config({"num_players": 3})
    report = json.loads((run / "report.json").read_text())
    final = run / "checkpoints" / "iter_000002"
    assert report["checkpoint"] == str(final) and report["iterations"] == 2
    again = strength_report(game, MLPPolicy.load(final), str(final), 12, seed=0 + 7, config=config)
    assert report["against"]["heuristic"] == again["against"]["heuristic"]  # deterministic opponents: equal
    assert report["against"]["random"]["games"] == 12

    # resume: iteration 3 continues the run (RLlib's state restored, not a fresh start); a checkpoint that a
    # kill left half-written (its temporary folder) is neither read nor left behind
    (run / "checkpoints" / ".iter_000003.tmp" / "rllib").mkdir(parents=True)
    (run / "checkpoints" / ".iter_000003.tmp" / "policy.json").write_text("{")
    assert main(["rllib", "--resume", str(run), "--iterations", "3", "--eval-games", "0"]) == 0
    resumed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert [line["iteration"] for line in resumed] == [3]
    assert resumed[0]["env_steps"] > lines[-1]["env_steps"]
    assert (run / "checkpoints" / "latest").read_text().strip() == "iter_000003"
    assert not (run / "checkpoints" / ".iter_000003.tmp").exists()
    assert len(json.loads((run / "checkpoints" / "iter_000003" / "metrics.json").read_text())["iterations"]) == 3
    assert MLPPolicy.load(run / "checkpoints" / "iter_000003").weights[0].tolist() != first.weights[0].tolist()

    assert main(["rllib", "--resume", str(run), "--iterations", "2"]) == 2
    assert "the run is at iteration 3; --iterations 2 is behind it" in capsys.readouterr().err

    # export: the run's latest policy as an ONNX bot with its manifest, which plays like the checkpoint
    assert main(["export", str(run), "--out", str(tmp_path / "bot.onnx")]) == 0
    manifest = json.loads((tmp_path / "bot.json").read_text())
    assert manifest["env"] == "minefield_v0" and manifest["game_config"]["num_players"] == 3
    assert manifest["provenance"]["trained_with"].startswith("tavernzoo.train.rllib_recipe")
    assert manifest["provenance"]["training_options"]["iterations"] == 3
    onnx_games = play_match(game, [str(tmp_path / "bot.onnx"), "heuristic", "heuristic"], 12, seed=4, config=config)
    run_games = play_match(game, [str(run), "heuristic", "heuristic"], 12, seed=4, config=config)
    assert [(r.wins, r.losses) for r in onnx_games.rows] == [(r.wins, r.losses) for r in run_games.rows]
    assert hasattr(load_bot(str(tmp_path / "bot.onnx"), game, config, seed=0), "act")
    # RLlib's own (pickled) checkpoint is refused by name, never loaded
    assert main(["export", str(run / "checkpoints" / "iter_000003" / "rllib"), "--out", str(tmp_path / "x.onnx")]) == 2
    assert "RLlib's own checkpoint, which tavernzoo never reads" in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()


def test_rllib_command_refuses_bad_options_with_one_line(tmp_path, capsys):
    from tavernzoo.cli import main

    (tmp_path / "taken" / "checkpoints").mkdir(parents=True)
    (tmp_path / "taken" / "checkpoints" / "latest").write_text("iter_000001\n")
    (tmp_path / "broken" / "checkpoints").mkdir(parents=True)  # killed before its first checkpoint completed
    (tmp_path / "broken" / "checkpoints" / "latest").write_text("iter_000001\n")
    (tmp_path / "broken" / "config.json").write_text('{"game": "minefield"}')
    (tmp_path / "trainrun").mkdir()  # a tavernzoo train run's config is not an rllib run's
    (tmp_path / "trainrun" / "config.json").write_text('{"game": "minefield", "timesteps": 10}')
    (tmp_path / "trainrun" / "checkpoints").mkdir()
    (tmp_path / "trainrun" / "checkpoints" / "latest").write_text("step_0000000010\n")
    for argv, message in ((["rllib", "chess"], "unknown game 'chess'"),
                          (["rllib"], "name the GAME to train"),
                          (["rllib", "minefield", "--iterations", "0"], "--iterations 0 must be a whole number of at "
                                                                        "least 1"),
                          (["rllib", "minefield", "--eval-games", "-1"], "--eval-games -1 must be"),
                          (["rllib", "minefield", "--set", "num_players=99"], "num_players"),
                          (["rllib", "minefield", "--out", str(tmp_path / "taken")], "already holds a training run"),
                          (["rllib", "--resume", str(tmp_path)], "is not an rllib run"),
                          (["rllib", "minefield", "--resume", str(tmp_path / "taken")],
                           "GAME cannot change them"),
                          (["rllib", "--resume", str(tmp_path / "taken")], "is not an rllib run"),
                          (["rllib", "--resume", str(tmp_path / "broken")], "latest checkpoint iter_000001 is "
                                                                           "incomplete"),
                          (["rllib", "--resume", str(tmp_path / "trainrun")], "config.json is not an rllib run's")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (argv, err)


def test_the_recipes_module_as_a_numpy_policy_gives_the_modules_logits_and_actions():
    """policy_from_weights reads the module's own state (numpy arrays, no file): the same logits, masked."""
    pytest.importorskip("ray.rllib")
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from tavernzoo.train.rllib_recipe import make_masked_env, masked_module_class, policy_from_weights

    env = make_masked_env({"game": "tiny_minotaur"})
    agent = env.env.possible_agents[0]
    module = RLModuleSpec(module_class=masked_module_class(), observation_space=env.observation_spaces[agent],
                          action_space=env.action_spaces[agent], model_config={"hidden": [16, 8]}).build()
    policy = policy_from_weights(module.get_state(), {"env": "tiny_minotaur_v0"})
    assert [w.shape[0] for w in policy.weights] == [16, 8, env.action_spaces[agent].n]
    observations, masks = [], []
    for seed in range(20):
        observation, _ = env.reset(seed=seed)
        (value,) = observation.values()
        observations.append(value["observations"])
        masks.append(value["action_mask"])
    observations, masks = np.stack(observations), np.stack(masks)
    with torch.no_grad():
        logits = module._forward({Columns.OBS: {"observations": torch.from_numpy(observations),
                                                "action_mask": torch.from_numpy(masks)}})[Columns.ACTION_DIST_INPUTS]
    legal = masks.astype(bool)
    assert np.allclose(logits.numpy()[legal], policy.logits(observations)[legal], atol=1e-5)
    assert policy.act(observations, legal).tolist() == logits.numpy().argmax(axis=1).tolist()
    with pytest.raises(ValueError, match="no policy network"):
        policy_from_weights({"vf.0.weight": np.zeros((1, 1))}, {})


def test_rllib_env_rejects_a_masked_action():
    pytest.importorskip("ray.rllib")
    import numpy as np

    from tavernzoo.train.rllib_recipe import make_masked_env

    env = make_masked_env({"game": "tiny_minotaur"})
    observations, _ = env.reset(seed=1)
    (agent, observation), = observations.items()
    assert set(observation) == {"observations", "action_mask"} and observation["action_mask"].dtype == np.float32
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="mask forbids"):
        env.step({agent: illegal})


# --- the tournament backend --------------------------------------------------------------------------------


def _games(path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()),
                  key=lambda line: (line["deal"], line["rotation"]))


def test_ray_backend_plays_the_local_games_and_results(ray_local, tmp_path):
    from tavernzoo.eval.tournament import GAMES_FILE, make_settings, run_tournament

    settings = make_settings("minefield", ["heuristic", "random", "random"], 36, config={"num_players": 3}, seed=5)
    local = run_tournament(settings, tmp_path / "local")
    remote = run_tournament(settings, tmp_path / "ray", backend="ray", batch=2)
    assert _games(tmp_path / "ray" / GAMES_FILE) == _games(tmp_path / "local" / GAMES_FILE)  # records too
    assert remote == local
    with pytest.raises(ValueError, match="backend 'dask'"):
        run_tournament(settings, tmp_path / "other", backend="dask")


def test_ray_driver_killed_midway_resumes_with_no_game_lost_or_counted_twice(ray_local, tmp_path):
    import subprocess
    import sys
    from collections import Counter

    from tavernzoo.eval.tournament import GAMES_FILE, make_settings, run_tournament

    settings = make_settings("tiny_minotaur", ["heuristic", "random"], 40, seed=7)
    out = tmp_path / "killed"
    # The driver joins this test's Ray instance and kills itself (SIGKILL) once the tally has taken its
    # sixth game (the third deal), with other batches still in flight.
    address = ray_local.get_runtime_context().gcs_address
    script = f"""
import os, signal
from tavernzoo.eval import tournament
taken = []
original = tournament.Tally.add
def add(self, game):
    original(self, game)
    taken.append(game)
    if len(taken) == 6:
        os.kill(os.getpid(), signal.SIGKILL)
tournament.Tally.add = add
settings = tournament.make_settings('tiny_minotaur', ['heuristic', 'random'], 40, seed=7)
tournament.run_tournament(settings, {str(out)!r}, backend='ray', address={address!r}, batch=1)
"""
    process = subprocess.run([sys.executable, "-c", script], timeout=300, capture_output=True, text=True)
    assert process.returncode == -9, process.stderr[-2000:]
    written = (out / GAMES_FILE).read_text().count("\n")
    assert 6 <= written < 40
    resumed = run_tournament(settings, out, resume=True, backend="ray")
    lines = _games(out / GAMES_FILE)
    counts = Counter((line["deal"], line["rotation"]) for line in lines)
    assert counts == {(d, r): 1 for d in range(20) for r in range(2)}
    whole = run_tournament(settings, tmp_path / "whole")
    assert lines == _games(tmp_path / "whole" / GAMES_FILE)
    assert resumed == whole


def test_a_match_on_ray_plays_the_local_games_records_and_results(ray_local, tmp_path, capsys):
    from dataclasses import asdict

    from tavernzoo.cli import main
    from tavernzoo.eval.match import BLOCK_DEALS, play_match

    games = 2 * (2 * BLOCK_DEALS + 5)  # three blocks: Ray returns them in any order, the driver in order
    local = play_match("tiny_minotaur", ["heuristic", "random"], games, seed=8, records_path=tmp_path / "l.jsonl")
    remote = play_match("tiny_minotaur", ["heuristic", "random"], games, seed=8, records_path=tmp_path / "r.jsonl",
                        backend="ray")
    assert asdict(remote) == asdict(local)
    assert (tmp_path / "r.jsonl").read_bytes() == (tmp_path / "l.jsonl").read_bytes()
    # the command: tavernzoo match ... --backend ray (this test's Ray instance is joined, not a new one)
    assert main(["match", "tiny_minotaur", "--games", str(games), "--seed", "8", "--backend", "ray", "--json",
                 "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(row["wins"], row["losses"]) for row in rows] == [(row.wins, row.losses) for row in local.rows]


def test_export_measures_on_ray_with_the_local_results(ray_local, tmp_path):
    from tavernzoo.agents.export import export
    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import measure

    np = pytest.importorskip("numpy")
    game = get_game("tiny_minotaur")
    sizes = [game.encoder.observation_size(game.make_config()), 8, len(game.action_names(game.make_config()))]
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.5, (out, inp)).astype(np.float32) for inp, out in zip(sizes, sizes[1:], strict=False)]
    biases = [np.zeros(out, dtype=np.float32) for out in sizes[1:]]
    config = game.make_config()
    meta = {"game": game.name, "env": game.env_name, "game_config": None, "seed": 0, "timesteps": 0,
            "action_names": list(game.action_names(config))}
    MLPPolicy(weights, biases, "tanh", meta).save(tmp_path / "checkpoint")
    pytest.importorskip("onnx")
    onnx_path, _ = export(tmp_path / "checkpoint", tmp_path / "bot.onnx")
    assert measure(onnx_path, 140, seed=2, backend="ray") == measure(onnx_path, 140, seed=2)


def test_a_training_report_on_ray_is_the_local_report(ray_local, tmp_path):
    """Trainer.evaluate's lockstep games as Ray tasks (``eval_backend="ray"``): the same table."""
    import numpy as np

    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.envs import get_game
    from tavernzoo.train.config import TrainConfig
    from tavernzoo.train.evaluate import play_policy_matches

    game = get_game("tiny_minotaur")
    config = game.make_config()
    rng = np.random.default_rng(2)
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    policy = MLPPolicy([rng.standard_normal((16, size)).astype(np.float32),
                        rng.standard_normal((actions, 16)).astype(np.float32)],
                       [np.zeros(16, np.float32), np.zeros(actions, np.float32)], "tanh", {"env": game.env_name})
    lineups = [["policy", "random"], ["policy", "heuristic"]]
    local = play_policy_matches(game, policy, lineups, 100, seed=3, config=config, lanes=16)
    on_ray = play_policy_matches(game, policy, lineups, 100, seed=3, config=config, lanes=16, backend="ray")
    assert [result.rows for result in on_ray] == [result.rows for result in local]
    assert sum(row.games for row in local[0].rows) == 200
    with pytest.raises(ValueError, match="eval_backend='spark'.*valid: local, ray"):
        TrainConfig(eval_backend="spark")


def test_an_address_where_no_cluster_listens_fails_at_once_with_one_line():
    """Ray retries such an address for minutes; the probe answers within its timeout."""
    import socket
    import subprocess
    import sys

    from tavernzoo.eval.ray_backend import check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ValueError, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        check_reachable(f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(ValueError, match="is not HOST:PORT"):
        check_reachable("nowhere")
    check_reachable("auto")  # left to Ray
    # In a fresh process: this one may hold the file's Ray instance already, which connect() reuses.
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "--games", "2", "--backend", "ray",
                             "--address", f"ray://127.0.0.1:{port}"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"no Ray cluster answers at ray://127.0.0.1:{port}" in result.stderr


def test_cli_sweep_and_backend_options_fail_with_one_clear_line(capsys, tmp_path):
    from tavernzoo.cli import main

    assert main(["sweep", "tiny_minotaur", "--grid", "learning_rat=1e-3", "--out", str(tmp_path / "s")]) == 2
    assert "cannot sweep 'learning_rat'" in capsys.readouterr().err
    assert main(["sweep", "tiny_minotaur", "--uniform", "ent_coef=0.1", "--out", str(tmp_path / "s")]) == 2
    assert "expected LOW:HIGH" in capsys.readouterr().err
    assert main(["tournament", "tiny_minotaur", "--bots", "heuristic", "random", "--games", "2",
                 "--address", "auto", "--out", str(tmp_path / "t")]) == 2
    assert "needs --backend ray" in capsys.readouterr().err
    assert main(["match", "tiny_minotaur", "--games", "2", "--address", "auto"]) == 2
    assert "needs --backend ray" in capsys.readouterr().err
