"""Training on MiniSteel's and Wyvern's compiled kernels (train/kernel_env.py): the same games as SelfPlayVecEnv
where the deals can be the same, the league's episodes and records, the refusals, and a run of the command."""

from __future__ import annotations

import os
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


def league_of(game=MS, **options) -> League:
    config = TrainConfig(game=game.name, game_config=OPTIONS, **options)
    return League.create(game, game.make_config(OPTIONS), config)


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


@pytest.mark.parametrize(("name", "pool", "privileged", "draw"), [
    ("ministeel", "heuristic", False, "seat"), ("ministeel", "zoo:ministeel", False, "seat"),
    ("wyvern", "heuristic", False, "seat"), ("wyvern", "zoo:wyvern", False, "seat"),
    ("ministeel", "heuristic", True, "seat"), ("wyvern", "zoo:wyvern", True, "seat"),
    ("ministeel", "heuristic,zoo:ministeel", False, "table"), ("wyvern", "heuristic,zoo:wyvern", False, "table")])
def test_with_deterministic_opponents_the_kernel_plays_the_games_selfplayvecenv_plays(name, pool, privileged, draw):
    # The heuristic draws nothing and its compiled form decides as the bot does; the zoo's network (exploit's
    # league) is its own bot answering batches between kernel calls: from the same seed the two envs deal the
    # same games, seat the learner alike, and so must give the same steps for the same actions. With a
    # privileged critic the learner's observation carries every other seat's view after its own, final views too.
    # Drawn a table at a time, the two seat the same member in every opponent seat of the same games.
    game = get_game(name)
    config = game.make_config(OPTIONS)
    options = {"pool_bots": tuple(pool.split(",")), "privileged_critic": privileged, "opponent_draw": draw,
               "latest_share": 0.0}
    python_env = SelfPlayVecEnv(game, config, league_of(game, **options), n_envs=6, seed=4)
    kernel_env = KernelSelfPlayVecEnv(game, config, league_of(game, **options), n_envs=6, seed=4, options=OPTIONS)
    size = game.encoder.observation_size(config)
    seats_seen = 4 if privileged else 1
    assert kernel_env.observation_space.shape == python_env.observation_space.shape == (seats_seen * size,)
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


@pytest.mark.parametrize("draw", ["seat", "table"])
def test_drawn_a_table_at_a_time_every_opponent_seat_of_a_game_holds_one_member(draw):
    # The tables bots are measured at are alike (three heuristics, three of a file): opponent_draw="table" trains
    # at those; "seat" (the default) mixes members at one table.
    league = league_of(pool_bots=("heuristic", "random"), latest_share=0.5, opponent_draw=draw)
    league.set_latest(random_policy(1))
    kernel_env = KernelSelfPlayVecEnv(MS, MS.make_config(OPTIONS), league, n_envs=64, seed=0, options=OPTIONS)
    kernel_env.reset()
    python_env = SelfPlayVecEnv(MS, MS.make_config(OPTIONS), league_of(pool_bots=("heuristic", "random"),
                                latest_share=0.5, opponent_draw=draw), n_envs=64, seed=0)
    python_env.reset()
    tables = [[member.name for member in seated if member is not None] for seated in kernel_env._opponents]
    tables += [[member.name for member in seat.opponents.values()] for seat in python_env.seats]
    assert all(len(table) == 3 for table in tables)
    alike = [len(set(table)) == 1 for table in tables]
    assert all(alike) if draw == "table" else not all(alike)
    seen = {table[0] for table in tables}
    assert seen == {"latest", "heuristic", "random"}


def test_a_pool_bot_listed_twice_weights_the_draw_as_on_the_envs():
    # pool_bots=heuristic,heuristic,random: two of the pool's three members are heuristics (the league draws
    # members, not kinds), each playing as the one compiled heuristic.
    league = league_of(pool_bots=("heuristic", "heuristic", "random"), latest_share=0.0)
    env = KernelSelfPlayVecEnv(MS, MS.make_config(OPTIONS), league, n_envs=16, seed=0, options=OPTIONS)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(300):
        env.step([rng.choice(np.flatnonzero(mask)) for mask in env.action_masks()])
    booked = {name: sum(o.games for o in league.builtins if o.name == name) for name in ("heuristic", "random")}
    assert booked["heuristic"] > booked["random"] > 0, booked


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
    ("wyvern", {"pool_bots": ("cmd:python3 bot.py",)}, "not 'cmd:python3 bot.py'"),
    ("tiny_minotaur", {}, "trains only ministeel, wyvern"),
])
def test_what_the_kernel_cannot_train_is_refused_in_one_line(game, options, words):
    config = TrainConfig(game=game, env_backend="kernel", **options)
    rules = get_game(game)
    reason = kernel_refusal(rules, rules.make_config(config.game_config), config)
    assert words in reason and "env_backend=python" in reason and "\n" not in reason


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="env_backend='gpu' is not a backend; valid: python, kernel"):
        TrainConfig(env_backend="gpu")


@pytest.mark.parametrize("name", ["ministeel", "wyvern"])
def test_tavernzoo_train_runs_on_the_kernel(tmp_path, name):
    run = tmp_path / "run"
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", name, "--timesteps", "512",
                             "--out", str(run), "--no-progress", "--set", "env_backend=kernel", "--set", "n_envs=8",
                             "--set", "n_steps=32", "--set", "batch_size=128", "--set", "eval_games=0",
                             "--set", "net_arch=32"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (run / "checkpoints" / "latest").is_file()
    refused = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", name, "--out", str(tmp_path / "x"),
                              "--set", "env_backend=kernel", "--set", "pool_bots=random,mcts"],
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode != 0 and "not 'mcts'" in refused.stderr and "Traceback" not in refused.stderr


# --- the shared-forward rollouts (train/shared_forward.py) -------------------------------------------------

BUFFER_FIELDS = ("observations", "actions", "action_masks", "rewards", "episode_starts", "values", "log_probs",
                 "advantages", "returns")


def collected(shared: bool, rollouts: int = 2, snapshot: bool = False, game_options: dict = OPTIONS,
              update: bool = True, **options):
    """A seeded run's rollout buffers (as the update reads them) collected by SB3's loop or by the shared-
    forward rounds, with the episodes its callbacks saw and the policy's own values and log-probabilities of
    each buffer's decisions (evaluated before the update); and the league (with two snapshots in its pool if
    ``snapshot``: networks answered in a stacked forward of their own). ``game_options``: MiniSteel's. Without
    ``update`` the policy stays as it started (no PPO update between the rollouts)."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    from tavernzoo.train.run import make_model, policy_from_sb3

    class Capture(BaseCallback):
        def __init__(self, league):
            super().__init__()
            self.league, self.buffers, self.evaluated, self.episodes = league, [], [], []
            self.per_rollout: list[list[dict]] = []  # the episodes that ended in each rollout

        def _on_rollout_start(self):  # the latest self is the learner's network, as LeagueCallback keeps it
            self.per_rollout.append([])
            if self.league.latest is not None:
                self.league.set_latest(policy_from_sb3(self.model.policy, {}))

        def _on_step(self):
            ended = [info for info in self.locals["infos"] if "episode_result" in info]
            self.episodes += ended
            self.per_rollout[-1] += ended
            return True

        def _on_rollout_end(self):
            buffer = self.model.rollout_buffer
            self.buffers.append({name: getattr(buffer, name).copy() for name in BUFFER_FIELDS})
            flat = {name: value.reshape(-1, *value.shape[2:]) for name, value in self.buffers[-1].items()}
            with torch.no_grad():
                values, log_prob, _ = self.model.policy.evaluate_actions(
                    torch.as_tensor(flat["observations"]), torch.as_tensor(flat["actions"][:, 0]),
                    action_masks=flat["action_masks"])
            self.evaluated.append((values.numpy().reshape(buffer.values.shape),
                                   log_prob.numpy().reshape(buffer.log_probs.shape)))

    config = TrainConfig(game="ministeel", game_config=game_options, n_envs=8, n_steps=32, batch_size=64,
                         net_arch=(32, 32), seed=3, snapshot_every=10**9, **options)
    league = League.create(MS, MS.make_config(game_options), config)
    env = KernelSelfPlayVecEnv(MS, MS.make_config(game_options), league, config.n_envs, config.seed, game_options)
    model = make_model(config, env, shared_forward=shared)
    if config.latest_share:
        league.set_latest(policy_from_sb3(model.policy, {}))
    if snapshot:  # two: the snapshots answer in one stacked forward
        league.add_snapshot(random_policy(2), 100)
        league.add_snapshot(random_policy(3), 200)
    if not update:
        model.train = lambda: None
    capture = Capture(league)
    threads = torch.get_num_threads()
    torch.set_num_threads(config.torch_threads)  # as the trainer runs: more threads wait on a busy machine
    try:
        model.learn(config.n_envs * config.n_steps * rollouts, callback=capture)
    finally:
        torch.set_num_threads(threads)
    return capture, league


def results(episodes: list[dict]) -> list[str]:
    """What the callbacks saw of each ended episode (its result, whether it was cut off), in a sorted list:
    games at their own pace end in another order."""
    return sorted(repr((info["episode_result"], info["TimeLimit.truncated"])) for info in episodes)


def test_with_compiled_bots_only_the_shared_rollouts_are_sb3s_draw_for_draw():
    # No network opponent: every game waits on the learner at every round, so the rounds are SB3's steps, the
    # forward sees the same rows and draws the same numbers: the same games, decisions and rewards bit for
    # bit, the second rollout (after an update) too; the values to float rounding (the critic runs once over
    # the rollout, in other batches than SB3's per step), and what the update computes from them.
    options = {"pool_bots": ("random", "heuristic"), "latest_share": 0.0}
    (sb3, sb3_league), (shared, shared_league) = collected(False, **options), collected(True, **options)
    for k, (expected, got) in enumerate(zip(sb3.buffers, shared.buffers, strict=True)):
        assert_same_buffers(got, expected, f"rollout {k}")
    assert len(shared.episodes) >= 10 and results(shared.episodes) == results(sb3.episodes)
    assert shared_league.stats() == sb3_league.stats()


def test_with_a_privileged_critic_the_shared_rollouts_are_sb3s_and_keep_every_seats_view():
    # The actor answers from the table's own views, the buffer keeps the learner's network's input (its own
    # view, then the three others'): the same buffers as SB3's loop over the env's privileged observations.
    options = {"pool_bots": ("random", "heuristic"), "latest_share": 0.0, "privileged_critic": True}
    (sb3, _), (shared, _) = collected(False, **options), collected(True, **options)
    for k, (expected, got) in enumerate(zip(sb3.buffers, shared.buffers, strict=True)):
        assert_same_buffers(got, expected, f"rollout {k}")
    size = MS.encoder.observation_size(MS.make_config(OPTIONS))
    observations = shared.buffers[0]["observations"]
    assert observations.shape[-1] == 4 * size
    assert (observations[..., size:] != 0).any(axis=-1).all(), "every row carries the other seats' views"
    assert not np.array_equal(observations[..., size:2 * size], observations[..., :size])


def assert_same_buffers(got: dict, expected: dict, where: str) -> None:
    for name in ("observations", "actions", "action_masks", "rewards", "episode_starts"):
        np.testing.assert_array_equal(got[name], expected[name], err_msg=f"{where}: {name}")
    for name in ("values", "log_probs", "advantages", "returns"):
        np.testing.assert_allclose(got[name], expected[name], atol=1e-5, err_msg=f"{where}: {name}")


def test_with_the_latest_self_playing_deterministically_the_shared_rollouts_are_sb3s(monkeypatch):
    # The latest self answered in the learner's forward instead of in batches of its own: with every choice
    # an argmax the games are the same, so the buffers are, but for float rounding in the values (the critic
    # sees other batches). Each game's column fills at its own pace; episodes end mid-rollout, some of them
    # cut off at 30 turns (the reward bootstrapped from the final view's value, as SB3 does). No update between
    # the rollouts: a game whose episode ended at its column's last row waits mid-deal for the next rollout,
    # where SB3's loop has already played its opponents to the learner's first decision; with the policy
    # unchanged, those moves are the same.
    from tavernzoo.train import lean_policy

    choose = lean_policy.choose
    monkeypatch.setattr(lean_policy, "choose", lambda logits, masks, deterministic: choose(logits, masks, True))
    act = lean_policy.TorchActor.act
    monkeypatch.setattr(lean_policy.TorchActor, "act", lambda self, observations, masks, rng=None,
                        deterministic=True: act(self, observations, masks, rng, deterministic=True))
    options = {"rollouts": 3, "pool_bots": ("heuristic",), "latest_share": 1.0, "update": False,
               "game_options": {**OPTIONS, "max_turns": 30}}
    (sb3, sb3_league), (shared, shared_league) = collected(False, **options), collected(True, **options)
    for k, (expected, got) in enumerate(zip(sb3.buffers, shared.buffers, strict=True)):
        assert_same_buffers(got, expected, f"rollout {k}")
    assert results(shared.episodes) == results(sb3.episodes)
    cut = sum(info["TimeLimit.truncated"] for info in shared.episodes)
    assert cut >= 5 and len(shared.episodes) - cut >= 5, "episodes cut off and episodes over by the rules"
    assert shared_league.stats() == sb3_league.stats() and shared_league.latest.games == len(shared.episodes)


@pytest.mark.parametrize("privileged", [False, True])
def test_shared_rollouts_against_a_mixed_league_keep_the_buffers_invariants(privileged):
    # Sampled play against the latest self, two snapshots and both compiled bots draws other numbers than
    # SB3's loop: the buffer is checked for what it must hold. With a privileged critic, rounds in which no
    # learner decides (only opponents' networks) ask the kernel for no views.
    shared, league = collected(True, rollouts=2, snapshot=True, pool_bots=("random", "heuristic"), latest_share=0.5,
                               privileged_critic=privileged)
    buffer, (values, log_probs) = shared.buffers[0], shared.evaluated[0]
    assert (buffer["observations"] != 0).any(axis=2).all(), "every row of every column was written"
    rows, columns = np.indices(buffer["rewards"].shape)
    assert buffer["action_masks"][rows, columns, buffer["actions"][..., 0].astype(int)].all(), "legal actions"
    # the values and log-probabilities the rollout stored are the policy's for those decisions
    np.testing.assert_allclose(buffer["values"], values, atol=1e-5)
    np.testing.assert_allclose(buffer["log_probs"], log_probs, atol=1e-5)
    np.testing.assert_allclose(buffer["returns"], buffer["advantages"] + buffer["values"], atol=1e-6)
    # a reward only where the learner's episode ends (the column's next row starts one), its result there
    ends = buffer["episode_starts"][1:] == 1
    assert (buffer["rewards"][:-1][~ends] == 0).all()
    assert ends.sum() >= 5 and (buffer["rewards"][:-1][ends] != 0).any()
    # each ended episode booked once and handed to the callbacks, whose steps are SB3's: n_steps a rollout
    assert ends.sum() <= len(shared.per_rollout[0]) <= ends.sum() + buffer["rewards"].shape[1]
    assert shared.n_calls == 2 * 32 and shared.num_timesteps == 2 * 32 * 8
    seen = {name for info in shared.episodes for name in info["episode_result"]["opponents"]}
    assert seen == {"latest", "snapshot@100", "snapshot@200", "random", "heuristic"}
    assert league.latest.games == sum("latest" in info["episode_result"]["opponents"] for info in shared.episodes)


def test_the_snapshots_stacked_choose_as_each_alone_would(monkeypatch):
    # One batched product per layer over every snapshot's rows (padded; a snapshot may have none): with the
    # choice an argmax, each snapshot's picks are its own policy's, row for row. Other shapes are not stacked.
    from tavernzoo.train import lean_policy

    choose = lean_policy.choose
    monkeypatch.setattr(lean_policy, "choose", lambda logits, masks, deterministic: choose(logits, masks, True))
    config = MS.make_config(OPTIONS)
    size, actions = MS.encoder.observation_size(config), len(MS.action_names(config))
    policies = [random_policy(seed) for seed in (1, 2, 3)]
    rng = np.random.default_rng(0)
    observations = [rng.random((rows, size), dtype=np.float32) for rows in (3, 0, 5)]
    masks = [rng.random((rows, actions)) < 0.2 for rows in (3, 0, 5)]
    for mask in masks:
        mask[:, 7] = True
    picks = lean_policy.StackedActors(policies).act(observations, masks)
    for policy, rows, mask, picked in zip(policies, observations, masks, picks, strict=True):
        assert picked.tolist() == policy.act(rows, mask, deterministic=True).tolist()
    assert [len(picked) for picked in picks] == [3, 0, 5]
    wider = MLPPolicy([np.zeros((16, size), np.float32), np.zeros((actions, 16), np.float32)],
                      [np.zeros(16, np.float32), np.zeros(actions, np.float32)], "tanh", {})
    assert lean_policy.StackedActors.fit(policies) and not lean_policy.StackedActors.fit([*policies, wider])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="numba starts one thread per core: one core cannot show it")
def test_a_run_on_the_kernel_keeps_its_torch_threads(tmp_path):
    # numba's OpenMP threads share torch's libgomp and set its thread count to the cores' when they start (in an
    # exploiter's run against zoo:wyvern, after the run had set its own): the run sets its count again once its
    # env is built, or its updates spin on every core. A fresh process: numba starts its threads once per process.
    script = (
        "import torch\n"
        "from sb3_contrib import MaskablePPO\n"
        "from tavernzoo.train.exploit import plan_exploit, run_exploit\n"
        "counts, update = [], MaskablePPO.train\n"
        "def train(self, *args, **kwargs):\n"
        "    counts.append(torch.get_num_threads())\n"
        "    return update(self, *args, **kwargs)\n"
        "MaskablePPO.train = train\n"
        f"plan = plan_exploit('zoo:wyvern', 'wyvern', timesteps=512, games=4, out={str(tmp_path / 'run')!r},\n"
        "                    train_options={'n_envs': 8, 'n_steps': 32, 'batch_size': 128, 'torch_threads': 1})\n"
        "assert plan.train_config.env_backend == 'kernel'\n"
        "run_exploit(plan, log=lambda line: None)\n"
        "print('threads at the updates', sorted(set(counts)))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "threads at the updates [1]" in result.stdout, result.stdout
