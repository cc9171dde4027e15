"""Training on MiniSteel's compiled kernel (train/kernel_env.py): the same games as SelfPlayVecEnv where the
deals can be the same, the league's episodes and records, the refusals, and a run of the command."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("numba")

from tavernzoo.agents.policy import MLPPolicy  # noqa: E402
from tavernzoo.envs import get_game  # noqa: E402
from tavernzoo.train.config import TrainConfig  # noqa: E402
from tavernzoo.train.kernel_env import KernelSelfPlayVecEnv, kernel_refusal  # noqa: E402
from tavernzoo.train.selfplay import League, SelfPlayVecEnv  # noqa: E402

MS = get_game("ministeel")
OPTIONS = {"num_players": 4}


def league_of(**options) -> League:
    config = TrainConfig(game="ministeel", game_config=OPTIONS, **options)
    return League.create(MS, MS.make_config(OPTIONS), config)


def pick(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A learner that is a function of what it sees: the same observations give the same actions."""
    actions = []
    for observation, mask in zip(observations, masks, strict=True):
        legal = np.flatnonzero(mask)
        actions.append(legal[int(observation.sum() * 997) % len(legal)])
    return np.array(actions)


def random_policy(seed: int) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    config = MS.make_config(OPTIONS)
    shapes = [(32, MS.encoder.observation_size(config)), (len(MS.action_names(config)), 32)]
    return MLPPolicy([rng.standard_normal(s).astype(np.float32) for s in shapes],
                     [np.zeros(s[0], np.float32) for s in shapes], "tanh", {"env": MS.env_name})


@pytest.mark.parametrize("pool", ["heuristic", "zoo:ministeel"])
def test_with_deterministic_opponents_the_kernel_plays_the_games_selfplayvecenv_plays(pool):
    # The heuristic draws nothing and its compiled form decides as the bot does; the zoo's network (exploit's
    # league) is its own bot answering batches between kernel calls: from the same seed the two envs deal the
    # same games, seat the learner alike, and so must give the same steps for the same actions.
    config = MS.make_config(OPTIONS)
    python_env = SelfPlayVecEnv(MS, config, league_of(pool_bots=(pool,)), n_envs=6, seed=4)
    kernel_env = KernelSelfPlayVecEnv(MS, config, league_of(pool_bots=(pool,)), n_envs=6, seed=4,
                                      options=OPTIONS)
    python_obs, kernel_obs = python_env.reset(), kernel_env.reset()
    episodes = 0
    for step in range(300):
        np.testing.assert_array_equal(kernel_obs, python_obs, err_msg=f"step {step}")
        np.testing.assert_array_equal(kernel_env.action_masks(), python_env.action_masks(), err_msg=f"step {step}")
        actions = pick(python_obs, python_env.action_masks())
        python_obs, python_rewards, python_dones, python_infos = python_env.step(actions)
        kernel_obs, kernel_rewards, kernel_dones, kernel_infos = kernel_env.step(actions)
        np.testing.assert_array_equal(kernel_rewards, python_rewards, err_msg=f"step {step}")
        np.testing.assert_array_equal(kernel_dones, python_dones, err_msg=f"step {step}")
        for python_info, kernel_info in zip(python_infos, kernel_infos, strict=True):
            assert kernel_info.keys() == python_info.keys()
            if "terminal_observation" in python_info:
                np.testing.assert_array_equal(kernel_info["terminal_observation"], python_info["terminal_observation"])
                assert kernel_info["TimeLimit.truncated"] == python_info["TimeLimit.truncated"]
                assert kernel_info["episode_result"] == python_info["episode_result"]
                episodes += 1
    assert episodes >= 10
    assert kernel_env.league.stats() == python_env.league.stats()


def test_against_the_league_episodes_end_and_are_booked():
    league = league_of(pool_bots=("random", "heuristic"), latest_share=0.6)
    league.set_latest(random_policy(1))
    league.add_snapshot(random_policy(2), 100)
    env = KernelSelfPlayVecEnv(MS, MS.make_config(OPTIONS), league, n_envs=8, seed=0, options=OPTIONS)
    observations = env.reset()
    rng = np.random.default_rng(0)
    results, lengths = [], np.zeros(8, dtype=int)
    for _ in range(400):
        masks = env.action_masks()
        assert masks.any(axis=1).all(), "the learner always has a legal action"
        actions = [rng.choice(np.flatnonzero(mask)) for mask in masks]
        observations, rewards, dones, infos = env.step(actions)
        lengths += 1
        assert observations.shape == (8, MS.encoder.observation_size(MS.make_config(OPTIONS)))
        assert (rewards[~dones] == 0).all(), "only the end of its episode pays the learner"
        for g in np.flatnonzero(dones):
            result = infos[g]["episode_result"]
            assert result["l"] == lengths[g] and result["r"] == rewards[g]
            assert rewards[g] in (-1 / 3, 0.0, 1.0)
            assert set(result["opponents"]) <= {"latest", "snapshot@100", "random", "heuristic"}
            results.append(result)
            lengths[g] = 0
    assert len(results) >= 20
    seen = {name for result in results for name in result["opponents"]}
    assert seen == {"latest", "snapshot@100", "random", "heuristic"}
    assert league.latest.games == sum("latest" in result["opponents"] for result in results)
    assert any(result["r"] == 1.0 for result in results) and any(result["r"] < 0 for result in results)


def test_an_illegal_action_loses_the_episode_as_in_selfplayvecenv():
    env = KernelSelfPlayVecEnv(MS, MS.make_config(OPTIONS), league_of(pool_bots=("random",)), n_envs=2, seed=0,
                               options=OPTIONS)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks()[0])[0])
    legal = int(np.flatnonzero(env.action_masks()[1])[0])
    _, rewards, dones, infos = env.step([illegal, legal])
    assert rewards[0] == -1.0 and dones[0] and infos[0]["illegal_action"] == illegal
    assert "episode_result" not in infos[0]


@pytest.mark.parametrize(("game", "options", "words"), [
    ("ministeel", {"pool_bots": ("heuristic", "mcts")}, "not 'mcts'"),
    ("ministeel", {"shaping": 0.1}, "no reward shaping"),
    ("ministeel", {"privileged_critic": True}, "no privileged critic"),
    ("tiny_minotaur", {}, "trains only ministeel"),
])
def test_what_the_kernel_cannot_train_is_refused_in_one_line(game, options, words):
    config = TrainConfig(game=game, env_backend="kernel", **options)
    rules = get_game(game)
    reason = kernel_refusal(rules, rules.make_config(config.game_config), config)
    assert words in reason and "env_backend=python" in reason and "\n" not in reason


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="env_backend='gpu' is not a backend; valid: python, kernel"):
        TrainConfig(env_backend="gpu")


def test_tavernzoo_train_runs_on_the_kernel(tmp_path):
    run = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", "ministeel", "--timesteps", "512",
                             "--out", str(run), "--no-progress", "--set", "env_backend=kernel", "--set", "n_envs=8",
                             "--set", "n_steps=32", "--set", "batch_size=128", "--set", "eval_games=0",
                             "--set", "net_arch=32"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (run / "checkpoints" / "latest").is_file()
    refused = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", "ministeel", "--out", str(tmp_path / "x"),
                              "--set", "env_backend=kernel", "--set", "pool_bots=random,mcts"],
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "not 'mcts'" in refused.stderr and "Traceback" not in refused.stderr
