"""Runs started from a trained bot's network (train/warm_start.py; ``tavernzoo train --init BOT``): the bot's
play and values kept exactly, in a wider network and under a privileged critic too; what does not fit refused in
one line with nothing written; the record of where a run started kept through a resume."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402

from tavernzoo.agents.policy import MLPPolicy  # noqa: E402
from tavernzoo.envs import get_game  # noqa: E402
from tavernzoo.train.config import TrainConfig  # noqa: E402
from tavernzoo.train.run import Trainer, policy_from_sb3  # noqa: E402

MS = get_game("ministeel")
OPTIONS = {"num_players": 3}


def saved_bot(directory, widths=(12, 10), seed=0, game=MS, options=OPTIONS) -> MLPPolicy:
    """A tanh network with a value head and random weights for ``game``, saved as a checkpoint."""
    rng = np.random.default_rng(seed)
    config = game.make_config(options)
    sizes = [game.encoder.observation_size(config), *widths]

    def layers(outputs):
        shapes = list(zip([*widths, outputs], sizes, strict=True))
        return ([rng.normal(0, 1 / np.sqrt(i), (o, i)).astype(np.float32) for o, i in shapes],
                [rng.normal(0, 0.1, o).astype(np.float32) for o, _ in shapes])

    weights, biases = layers(len(game.action_names(config)))
    value_weights, value_biases = layers(1)
    bot = MLPPolicy(weights, biases, "tanh", {"env": game.env_name, "game": game.name}, value_weights, value_biases)
    bot.save(directory)
    return bot


def started(tmp_path, bot_dir, **options):
    config = TrainConfig(game="ministeel", game_config=OPTIONS, n_envs=4, n_steps=32, batch_size=64,
                         init=str(bot_dir), **options)
    trainer = Trainer(config, tmp_path / "run")
    env = trainer.make_env()
    return trainer, trainer.fresh_model(env), env


@pytest.mark.parametrize("privileged", [False, True])
@pytest.mark.parametrize("net_arch", [(12, 10), (32, 24)])
def test_a_run_started_from_a_bot_plays_and_values_as_the_bot_did(tmp_path, net_arch, privileged):
    bot = saved_bot(tmp_path / "bot")
    trainer, model, env = started(tmp_path, tmp_path / "bot", net_arch=net_arch, privileged_critic=privileged)
    own = bot.observation_size
    observations = env.reset()
    assert observations.shape[1] == (3 if privileged else 1) * own
    actor = policy_from_sb3(model.policy, {})
    np.testing.assert_allclose(actor.logits(observations[:, :own]), bot.logits(observations[:, :own]), atol=1e-5)
    with torch.no_grad():
        values = model.policy.predict_values(torch.as_tensor(observations)).numpy()[:, 0]
    np.testing.assert_allclose(values, bot.values(observations[:, :own]), atol=1e-5)
    head = model.policy.action_net.weight.detach().clone()
    grown = net_arch != (12, 10)
    assert (head[:, 10:] == 0).all() and (head[:, 10:].numel() > 0) == grown
    model.learn(128)
    if grown:  # the new units learn from the first updates: the head starts reading them
        assert (model.policy.action_net.weight[:, 10:] != 0).any()
    assert "grown from 12x10" in trainer.init_note() if grown else "actor and critic" in trainer.init_note()


@pytest.mark.parametrize("net_arch", [(8, 10), (12,), (12, 10, 10)])
def test_a_network_the_bot_does_not_fit_is_refused_in_one_line(tmp_path, net_arch):
    saved_bot(tmp_path / "bot")
    with pytest.raises(ValueError, match=r"init=.*do not fit the run's .*as many hidden layers, each at least as "
                                         r"wide \(12, 10\)"):
        started(tmp_path, tmp_path / "bot", net_arch=net_arch)


def tavernzoo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True,
                          timeout=600)


TINY = ["--set", "n_envs=4", "--set", "n_steps=32", "--set", "batch_size=64", "--set", "checkpoint_every=128",
        "--set", "eval_games=0", "--set", f"game_config={json.dumps(OPTIONS)}", "--no-progress"]


def test_train_init_runs_records_where_it_started_and_resumes_without_the_bot(tmp_path):
    saved_bot(tmp_path / "bot", widths=(8,))
    run = tmp_path / "run"
    first = tavernzoo("train", "ministeel", "--init", str(tmp_path / "bot"), "--set", "net_arch=16",
                      "--timesteps", "128", "--out", str(run), *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"starting from {tmp_path / 'bot'}: its actor and critic, grown from 8 to 16" in first.stdout
    latest = run / "checkpoints" / (run / "checkpoints" / "latest").read_text().strip()
    assert json.loads((latest / "policy.json").read_text())["started_from"] == str(tmp_path / "bot")
    shutil.rmtree(tmp_path / "bot")  # a resume starts from its own checkpoint, not the bot
    second = tavernzoo("train", "--resume", str(run), "--timesteps", "256", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "starting from" not in second.stdout
    assert "no final report (eval_games=0)" in second.stdout
    # no empty report table: the one line naming opponents is the league's, said before training
    lines = second.stdout.splitlines()
    assert [line for line in lines if "opponent" in line and not line.startswith("opponents:")] == []
    latest = run / "checkpoints" / (run / "checkpoints" / "latest").read_text().strip()
    assert json.loads((latest / "policy.json").read_text())["started_from"] == str(tmp_path / "bot")


@pytest.mark.parametrize(("init", "extra", "words"), [
    ("missing", [], "missing is neither a policy checkpoint"),
    ("bot", ["--set", "net_arch=4"], "do not fit the run's"),
    ("bot", ["--set", "game_config={\"num_players\": 4}"], "do not fit the run's"),
])
def test_train_init_that_cannot_start_writes_nothing(tmp_path, init, extra, words):
    saved_bot(tmp_path / "bot", widths=(8,))
    run = tmp_path / "run"
    done = tavernzoo("train", "ministeel", "--init", str(tmp_path / init), "--timesteps", "128", "--out", str(run),
                     *TINY, *extra)
    assert done.returncode != 0 and words in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not run.exists() and "starting from" not in done.stdout  # refused before the run says anything


def test_a_run_started_from_the_zoo_file_plays_as_it_does(tmp_path):
    # An exported bot's arrays come from ONNX (read-only): copied, with no warning, into a grown network.
    import warnings

    from tavernzoo.agents.export import read_policy

    zoo = read_policy("zoo:ministeel", "ministeel")
    config = TrainConfig(game="ministeel", game_config={"num_players": 4}, n_envs=4, n_steps=32, batch_size=64,
                         net_arch=(300, 256), init="zoo:ministeel")
    trainer = Trainer(config, tmp_path / "run")
    env = trainer.make_env()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = trainer.fresh_model(env)
    observations = env.reset()
    np.testing.assert_allclose(policy_from_sb3(model.policy, {}).logits(observations), zoo.logits(observations),
                               atol=1e-4)
    with torch.no_grad():
        values = model.policy.predict_values(torch.as_tensor(observations)).numpy()[:, 0]
    np.testing.assert_allclose(values, zoo.values(observations), atol=1e-4)
