"""Wyvern's vector envs (envs/wyvern/vector.py) against the Python rules.

The self-play form is checked step by step against a loop over the rules and encoder (the same deals from
the same seeds and streams, the same actions): every observation, mask, deciding seat, reward, termination
and truncation. The learner form must give the same games in its serial and parallel loops and repeat them
from the same seed, and its opponents must be the slot's stream's random picks, or the heuristic bot's moves
(``agents.wyvern_kernel.HEURISTIC`` against ``HeuristicBot.act_state``), checked against the rules.
Games are cut short (``max_steps``) so that deals, ends and truncations come within a few hundred steps;
``TAVERNZOO_FULL=1`` plays longer. The shared Python side (envs/batched.py) is held to gymnasium's
``SyncVectorEnv`` by tests/test_vector_env_ministeel.py.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from tavernzoo.envs import batched
from tavernzoo.envs.core import Chance
from tavernzoo.envs.wyvern import encode, kernel, rules, vector

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
STEPS = 3000 if FULL else 250
MASK64 = 2**64 - 1


class Splitmix:
    """The slots' splitmix64 streams in Python: ``floats`` as ``policy_random``, ``seed`` as the deals'."""

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


def observe(state: rules.State, seat: int) -> tuple[np.ndarray, np.ndarray]:
    observation = np.zeros(encode.OBSERVATION_SIZE, dtype=np.float32)
    encode.encode(state, seat, observation)
    mask = np.zeros(rules.NUM_ACTIONS, dtype=np.int8)
    if not rules.is_terminal(state) and rules.current_seat(state) == seat:
        mask[rules.legal_actions(state)] = 1
    return observation, mask


def pick(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


@pytest.mark.parametrize("options", [{"num_players": 4, "max_steps": 70},
                                     {"num_players": 3, "max_steps": 90, "level_reward": 0.5, "summons": True,
                                      "decks": ("inferno", "random", "dark_pact")}])
def test_self_play_vector_env_is_the_rules_loop(options):
    games, seed = 3, 11
    env = vector.self_play_vector_env(games, parallel=False, **options)
    config = rules.Config(**options)
    states = [rules.new_game(config, Chance(seed + g)) for g in range(games)]
    deals = [Splitmix(batched.slot_streams(seed + g)[1]) for g in range(games)]
    observations, seats, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(STEPS):
        for g, state in enumerate(states):
            where = f"game {g} (seed {seed + g}), step {step}"
            assert seats[g] == rules.current_seat(state), where
            observation, mask = observe(state, seats[g])
            assert np.array_equal(observations["observation"][g], observation), where
            assert np.array_equal(observations["action_mask"][g], mask), where
        actions = pick(observations["action_mask"], rng)
        observations, seats, rewards, terminations, truncations, infos = env.step(actions)
        for g in range(games):
            rules.apply(states[g], int(actions[g]))
            state = states[g]
            over = rules.is_terminal(state)
            expected = np.array(rules.returns(state)) if over else np.zeros(state.n)
            assert np.array_equal(rewards[g], expected), f"game {g}, step {step}: rewards"
            cut = over and rules.is_truncated(state)
            assert terminations[g].tolist() == [over and not cut] * state.n, f"game {g}, step {step}"
            assert truncations[g].tolist() == [cut] * state.n, f"game {g}, step {step}"
            if over:
                ended += 1
                assert infos["game_over"][g]
                states[g] = rules.new_game(config, Chance(deals[g].seed()))
    assert ended >= 2, "the test should see games end and be dealt again"


def test_learner_random_opponents_are_the_streams_picks():
    """Slot 0's game, replayed on the rules with the opponents' picks from the slot's stream."""
    options = {"num_players": 4, "max_steps": 60}
    env = vector.vector_env(1, parallel=False, **options)
    config = rules.Config(**options)
    observations, _ = env.reset(seed=5)
    picks, deals = (Splitmix(s) for s in batched.slot_streams(5))
    state = rules.new_game(config, Chance(5))
    rng = np.random.default_rng(1)

    def advance():
        while not rules.is_terminal(state) and rules.current_seat(state) != 0:
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(picks.float() * len(legal))])

    advance()
    ends = 0
    for step in range(STEPS):
        observation, mask = observe(state, 0)
        assert np.array_equal(observations["observation"][0], observation), f"step {step}"
        assert np.array_equal(observations["action_mask"][0], mask), f"step {step}"
        action = pick(observations["action_mask"], rng)
        observations, rewards, terminations, truncations, infos = env.step(action)
        rules.apply(state, int(action[0]))
        advance()
        if rules.is_terminal(state):
            ends += 1
            assert rewards[0] == rules.returns(state)[0]
            assert bool(truncations[0]) == rules.is_truncated(state)
            assert np.array_equal(infos["final_obs"][0]["observation"], observe(state, 0)[0])
            state = rules.new_game(config, Chance(deals.seed()))
            advance()
        else:
            assert rewards[0] == 0 and not terminations[0] and not truncations[0]
    assert ends >= 1


def test_learner_heuristic_opponents_are_the_bots_moves():
    """Every slot's game replayed on the rules with ``HeuristicBot.act_state`` in the opponents' seats."""
    from tavernzoo.agents.wyvern import HeuristicBot
    from tavernzoo.agents.wyvern_kernel import HEURISTIC

    games, seat, seed = 3, 2, 8
    options = {"num_players": 4, "max_steps": 60}
    env = vector.vector_env(games, opponent=HEURISTIC, seat=seat, parallel=False, **options)
    config = rules.Config(**options)
    bots = [HeuristicBot(config) for _ in range(config.num_players)]
    deals = [Splitmix(batched.slot_streams(seed + g)[1]) for g in range(games)]

    def advance(state):
        while not rules.is_terminal(state) and rules.current_seat(state) != seat:
            mover = rules.current_seat(state)
            rules.apply(state, bots[mover].act_state(state, mover, rules.legal_actions(state)))
        return state

    states = [advance(rules.new_game(config, Chance(seed + g))) for g in range(games)]
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(3)
    ends = 0
    for step in range(STEPS):
        for g, state in enumerate(states):
            observation, mask = observe(state, seat)
            assert np.array_equal(observations["observation"][g], observation), f"game {g}, step {step}"
            assert np.array_equal(observations["action_mask"][g], mask), f"game {g}, step {step}"
        actions = pick(observations["action_mask"], rng)
        observations, rewards, terminations, truncations, _ = env.step(actions)
        for g in range(games):
            state = states[g]
            rules.apply(state, int(actions[g]))
            advance(state)
            if rules.is_terminal(state):
                ends += 1
                assert rewards[g] == rules.returns(state)[seat], f"game {g}, step {step}"
                assert bool(truncations[g]) == rules.is_truncated(state), f"game {g}, step {step}"
                states[g] = advance(rules.new_game(config, Chance(deals[g].seed())))
            else:
                assert rewards[g] == 0 and not terminations[g] and not truncations[g], f"game {g}, step {step}"
    assert ends >= 2, "the test should see games end and be dealt again"


def test_serial_and_parallel_loops_and_reseeding_give_the_same_games():
    options = {"num_players": 5, "max_steps": 50}
    runs = []
    for parallel in (False, True, True):
        env = vector.vector_env(6, parallel=parallel, **options)
        observations, _ = env.reset(seed=21)
        rng = np.random.default_rng(2)
        trace = []
        for _ in range(60):
            observations, rewards, terminations, truncations, _ = env.step(pick(observations["action_mask"], rng))
            trace.append((observations["observation"].copy(), rewards, terminations, truncations))
        runs.append(trace)
    for other in runs[1:]:
        for (a, b) in zip(runs[0], other, strict=True):
            for x, y in zip(a, b, strict=True):
                assert np.array_equal(x, y)


def test_bad_input_is_one_clear_error():
    env = vector.vector_env(2, parallel=False, num_players=3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step([0, 0])
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the action space"):
        env.step([0, rules.NUM_ACTIONS])
    with pytest.raises(ValueError, match="num_envs"):
        vector.vector_env(0)
    with pytest.raises(ValueError, match="seat"):
        vector.vector_env(2, seat=3, num_players=3)
    with pytest.raises(ValueError, match="tavernzoo.agents.wyvern_kernel.HEURISTIC"):
        vector.vector_env(2, opponent="heuristic")
    with pytest.raises(ValueError):
        vector.self_play_vector_env(2, num_players=9)
    assert repr(env).startswith("LearnerVectorEnv(wyvern_v1")
