"""MiniSteel's vector envs (envs/ministeel/vector.py) against references on the Python rules.

The learner form is checked against gymnasium's own ``SyncVectorEnv`` over :class:`PythonLearnerEnv`, a
``gymnasium.Env`` on the Python rules and encoder that plays the same opponents from the same streams
(gymnasium's ``check_env`` passes it): observations, masks, rewards, terminations, truncations and the
infos (``final_obs``, ``final_info`` with SAME_STEP) must be equal at every step, in both autoreset modes,
against random and heuristic opponents. The self-play form is checked against a loop over the rules. A
mismatch names the slot, its game's seed and the step. Serial and parallel loops must give the same
games; ``reset(seed=...)`` must repeat them. ``TAVERNZOO_FULL=1`` plays longer.
"""

from __future__ import annotations

import os
import re

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics

from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import encode, kernel, rules, vector

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
STEPS = 3000 if FULL else 300
MASK64 = 2**64 - 1


class Splitmix:
    """The kernel's splitmix64 streams in Python: ``floats`` as ``policy_random``, ``seed`` as the deals'."""

    def __init__(self, state: int):
        self.state = state & MASK64

    def _next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def float(self) -> float:
        return (self._next() >> 11) * (1.0 / 9007199254740992.0)

    def seed(self) -> int:
        return self._next() >> 1


def observe(state: rules.State, seat: int) -> dict[str, np.ndarray]:
    """The PettingZoo env's observation of ``seat``."""
    observation = np.zeros(encode.observation_size(state.config), dtype=np.float32)
    encode.encode(state, seat, observation)
    mask = np.zeros(len(encode.action_names(state.config)), dtype=np.int8)
    if not rules.is_terminal(state) and rules.current_seat(state) == seat:
        mask[rules.legal_actions(state)] = 1
    return {"observation": observation, "action_mask": mask}


def padded_returns(state: rules.State) -> np.ndarray:
    values = np.zeros(rules.MAX_PLAYERS)
    values[:state.n] = rules.returns(state)
    return values


class PythonLearnerEnv(gymnasium.Env):
    """The learner's seat on the Python rules, its opponents random (the vector env's streams) or the
    heuristic bot: what one slot of ``vector.LearnerVectorEnv`` must be."""

    metadata = {"render_modes": []}

    def __init__(self, opponent: str = "random", seat: int = 0, **options):
        self.config = rules.Config(**options)
        self.seat = seat
        size, actions = encode.observation_size(self.config), len(encode.action_names(self.config))
        self.observation_space = spaces.Dict({"observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                                              "action_mask": spaces.Box(0, 1, (actions,), np.int8)})
        self.action_space = spaces.Discrete(actions)
        if opponent == "heuristic":
            from tavernzoo.agents.ministeel import HeuristicBot

            self.bots = [HeuristicBot(self.config, seat) for seat in range(self.config.num_players)]
        else:
            self.bots = None
        self.picks = self.deals = Splitmix(0)
        self.state = None

    def _out(self) -> bool:
        return rules.is_terminal(self.state) or not self.state.alive[self.seat]

    def _advance(self) -> None:
        state = self.state
        while not self._out() and rules.current_seat(state) != self.seat:
            legal = rules.legal_actions(state)
            if self.bots is None:
                action = legal[int(self.picks.float() * len(legal))]
            else:
                action = self.bots[state.to_act].act_state(state, state.to_act, legal)
            rules.apply(state, action)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            picks, deals = vector.slot_streams(seed)
            self.picks, self.deals = Splitmix(picks), Splitmix(deals)
            game_seed = seed
        else:
            game_seed = self.deals.seed()
        while True:
            self.state = rules.new_game(self.config, Chance(game_seed))
            self._advance()
            if not self._out():
                return observe(self.state, self.seat), {}
            game_seed = self.deals.seed()

    def step(self, action):
        state = self.state
        if action not in rules.legal_actions(state):
            return (observe(state, self.seat), -1.0, True, False,
                    {"returns": padded_returns(state), "illegal_action": int(action)})
        rules.apply(state, int(action))
        self._advance()
        if not self._out():
            return observe(state, self.seat), 0.0, False, False, {}
        truncated = rules.is_terminal(state) and rules.is_truncated(state)
        return (observe(state, self.seat), rules.returns(state)[self.seat], not truncated, truncated,
                {"returns": padded_returns(state)})


def random_actions(masks: np.ndarray, picker: np.random.Generator, illegal_share: float = 0.0) -> np.ndarray:
    """A uniform legal action per game (any action where the mask is empty); now and then an illegal one."""
    actions = np.zeros(len(masks), dtype=np.int64)
    for g, mask in enumerate(masks):
        legal = np.flatnonzero(mask)
        if len(legal) and picker.random() >= illegal_share:
            actions[g] = legal[picker.integers(len(legal))]
        else:
            actions[g] = picker.integers(mask.shape[0])
    return actions


def assert_same(ours, theirs, where: str) -> None:
    """Equal nested results (dicts, arrays, object arrays of dicts), naming the first difference."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), (
            f"{where}: keys {sorted(ours)} vs {sorted(theirs)}")
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, np.ndarray) and theirs.dtype == object:
        for g, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert (a is None) == (b is None), f"{where}[{g}]: {a!r} vs {b!r}"
            if b is not None:
                assert_same(a, b, f"{where}[{g}]")
    else:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.shape == theirs.shape, f"{where}: shape {ours.shape} vs {theirs.shape}"
        if not np.array_equal(ours, theirs):
            at = np.argwhere(ours != theirs)[0]
            raise AssertionError(f"{where} at {tuple(int(i) for i in at)}: vector env {ours[tuple(at)]!r}, "
                                 f"reference {theirs[tuple(at)]!r}")


def test_the_python_reference_passes_gymnasiums_check_env():
    check_env(PythonLearnerEnv(num_players=3), skip_render_check=True)


@pytest.mark.parametrize("opponent, mode, options", [
    ("random", AutoresetMode.SAME_STEP, {}),
    ("random", AutoresetMode.NEXT_STEP, {"num_players": 3}),
    ("random", AutoresetMode.SAME_STEP, {"token_timing": rules.OWN_TURN, "num_players": 5, "max_turns": 12}),
    ("random", AutoresetMode.NEXT_STEP, {"num_players": 2, "max_decisions": 30}),
    ("heuristic", AutoresetMode.SAME_STEP, {}),
    ("heuristic", AutoresetMode.NEXT_STEP, {"num_players": 6, "hand_size": 3}),
])
def test_learner_vector_env_is_gymnasiums_sync_vector_env_over_the_rules(opponent, mode, options):
    from tavernzoo.agents.ministeel_kernel import HEURISTIC

    envs, seat, seed = 6, 1, 40
    ours = vector.vector_env(envs, opponent=HEURISTIC if opponent == "heuristic" else "random", seat=seat,
                             autoreset_mode=mode, **options)
    reference = SyncVectorEnv([lambda: PythonLearnerEnv(opponent, seat, **options) for _ in range(envs)],
                              autoreset_mode=mode)
    assert ours.single_observation_space == reference.single_observation_space
    assert ours.observation_space == reference.observation_space
    assert ours.action_space == reference.action_space
    assert ours.metadata["autoreset_mode"] == reference.metadata["autoreset_mode"] == mode
    observations, infos = ours.reset(seed=seed)
    expected, expected_infos = reference.reset(seed=seed)
    assert_same(observations, expected, "reset")
    assert_same(infos, expected_infos, "reset infos")
    picker = np.random.default_rng(seed)
    ended = 0
    for step in range(STEPS):
        assert ours.observation_space.contains(observations), f"step {step}: outside the observation space"
        actions = random_actions(observations["action_mask"], picker, illegal_share=0.01)
        result, wanted = ours.step(actions), reference.step(actions)
        for name, a, b in zip(("observations", "rewards", "terminations", "truncations", "infos"), result, wanted,
                              strict=True):
            assert_same(a, b, f"{opponent}, {mode.value}, {options}, step {step}: {name}")
        observations = result[0]
        ended += int((result[2] | result[3]).sum())
    assert ended > 0


def test_serial_and_parallel_loops_and_repeated_seeds_give_the_same_games():
    runs = []
    for parallel, seed in ((False, 5), (True, 5), (True, 5)):
        env = vector.vector_env(16, parallel=parallel, num_players=4)
        observations, _ = env.reset(seed=seed)
        picker, trace = np.random.default_rng(0), [observations["observation"]]
        for _ in range(60):
            observations, rewards, terminations, truncations, _ = env.step(
                random_actions(observations["action_mask"], picker))
            trace += [observations["observation"], observations["action_mask"], rewards, terminations, truncations]
        runs.append(trace)
    for trace in runs[1:]:
        for a, b in zip(trace, runs[0], strict=True):
            assert np.array_equal(a, b)
    different = vector.vector_env(16, num_players=4).reset(seed=6)[0]["observation"]
    assert not np.array_equal(different, runs[0][0])


def test_self_play_vector_env_plays_the_rules_games_and_pays_each_seat():
    envs, seed, players = 5, 11, 4
    for parallel in (False, True):
        ours = vector.self_play_vector_env(envs, parallel=parallel, num_players=players)
        assert ours.single_observation_space == PythonLearnerEnv(num_players=players).observation_space
        observations, seats, _ = ours.reset(seed=seed)
        config = rules.Config(num_players=players)
        streams = [Splitmix(vector.slot_streams(seed + g)[1]) for g in range(envs)]
        states = [rules.new_game(config, Chance(seed + g)) for g in range(envs)]
        paid = np.zeros((envs, players))
        picker, games_over = np.random.default_rng(1), 0
        for step in range(STEPS):
            for g, state in enumerate(states):
                where = f"parallel={parallel}, slot {g}, step {step}"
                assert seats[g] == rules.current_seat(state), where
                assert_same({key: value[g] for key, value in observations.items()},
                            observe(state, seats[g]), where)
            actions = random_actions(observations["action_mask"], picker, illegal_share=0.01)
            observations, seats, rewards, terminations, truncations, infos = ours.step(actions)
            assert rewards.shape == terminations.shape == truncations.shape == (envs, players)
            for g, state in enumerate(states):
                where = f"parallel={parallel}, slot {g}, step {step}"
                actor, before = state.to_act, rules.returns(state)
                alive_before = list(state.alive)
                if actions[g] not in rules.legal_actions(state):
                    expected = np.zeros(players)
                    expected[actor] = -1.0
                    assert_same(rewards[g], expected, where + " (illegal)")
                    assert_same(terminations[g], np.array(alive_before), where)
                    assert infos["illegal_action"][g] == actions[g], where
                    over = True
                else:
                    rules.apply(state, int(actions[g]))
                    assert_same(rewards[g], np.array(rules.returns(state)) - np.array(before), where)
                    paid[g] += rewards[g]
                    over = rules.is_terminal(state)
                    cut = over and rules.is_truncated(state)
                    ends = [was and (not now or over) for was, now in zip(alive_before, state.alive, strict=True)]
                    assert_same(truncations[g], np.array([e and cut and alive for e, alive in
                                                          zip(ends, state.alive, strict=True)]), where)
                    assert_same(terminations[g] | truncations[g], np.array(ends), where)
                    if over:
                        assert_same(paid[g], np.array(rules.returns(state)), where + ": a game's rewards add up")
                assert bool(infos.get("game_over", np.zeros(envs, bool))[g]) == over, where
                if over:
                    games_over += 1
                    paid[g] = 0
                    states[g] = rules.new_game(config, Chance(streams[g].seed()))
        assert games_over > 0


def test_gymnasiums_vector_wrappers_take_it():
    env = RecordEpisodeStatistics(vector.vector_env(4, num_players=2))
    observations, _ = env.reset(seed=0)
    picker, episodes = np.random.default_rng(0), 0
    for _ in range(200):
        observations, _, terminations, truncations, infos = env.step(random_actions(observations["action_mask"],
                                                                                    picker))
        episodes += int((terminations | truncations).sum())
    assert episodes and len(env.episode_returns) > 0
    listed = DictInfoToList(vector.vector_env(3, autoreset_mode="NextStep"))
    _, infos = listed.reset(seed=1)
    assert infos == [{}, {}, {}]


def test_bad_options_get_one_line_each(monkeypatch):
    cases = [
        (dict(num_envs=0), "num_envs must be an integer from 1"),
        (dict(num_envs=4, num_players=9), "num_players=9 is not valid"),
        (dict(num_envs=4, colour="red"), "unknown option(s) colour"),
        (dict(num_envs=4, seat=4), "seat must be a seat of the table, 0..3"),
        (dict(num_envs=4, opponent="heuristic"), "tavernzoo.agents.ministeel_kernel.HEURISTIC"),
        (dict(num_envs=4, autoreset_mode="Disabled"), "autoreset_mode='Disabled' is not supported"),
        (dict(num_envs=4, parallel="yes"), "parallel must be True or False"),
    ]
    for arguments, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)) as error:
            vector.vector_env(**arguments)
        assert "\n" not in str(error.value)
    env = vector.vector_env(2)
    with pytest.raises(RuntimeError, match="step\\(\\) before reset"):
        env.step([0, 0])
    env.reset(seed=0)
    for actions, message in (([0], "actions must be 2 integers"), ([0.0, 1.0], "actions must be 2 integers"),
                             ([0, 141], "action 141 is outside the action space: valid actions are 0..140"),
                             ([-1, 0], "action -1 is outside")):
        with pytest.raises(ValueError, match=re.escape(message)):
            env.step(np.array(actions))
    with pytest.raises(ValueError, match="seed must be None or an integer"):
        env.reset(seed=-3)
    monkeypatch.setattr(kernel, "numba", None)
    with pytest.raises(ValueError, match="runs on the compiled kernel: numba is not installed .*runs without it"):
        vector.self_play_vector_env(2)


def test_an_opponent_that_plays_illegally_is_named():
    from tavernzoo.envs.ministeel.vector import VECTOR, Opponent

    @VECTOR.compiled
    def always_zero(s, legal, count, policy_state):  # action 0 (dagger at seat+1) is rarely legal
        return 0

    env = vector.vector_env(8, opponent=Opponent("always-zero", always_zero))
    with pytest.raises(ValueError, match="the opponent 'always-zero' chose an illegal action in game"):
        env.reset(seed=0)
        for _ in range(50):
            env.step(np.argmax(env._games.masks, axis=1))


def test_the_package_names_the_vector_envs():
    from tavernzoo.envs import ministeel

    assert ministeel.vector_env is vector.vector_env
    assert ministeel.self_play_vector_env is vector.self_play_vector_env
