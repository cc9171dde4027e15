"""``env()`` and the AEC forms of simultaneous games are single classes with the standard wrappers' checks
built in (issue 15). They must behave exactly as the wrapper stacks they replace: here both play side by
side, seeded, through legal moves, masked (illegal) moves, actions outside the space or of the wrong type,
None for a live agent, steps after the end, observations of any agent and calls out of order, and every
answer, error, log line and attribute must agree.
"""

from __future__ import annotations

import importlib
import logging
import random

import numpy as np
import pytest
from pettingzoo.utils import conversions, wrappers

from tavernzoo.envs import get_game
from tavernzoo.envs.aec import ActionCheckWrapper, CheckedTavernAECEnv, TavernAECEnv
from tavernzoo.envs.parallel import CheckedParallelToAEC, TavernParallelEnv

CASES = [("tiny_minotaur", {}), ("ministeel", {"num_players": 3}), ("wyvern", {"num_players": 3}),
         ("minefield", {"num_players": 4})]


def reference_stack(name: str, options: dict, factory: str):
    """What ``env()`` / ``raw_env()`` returned before issue 15: PettingZoo's wrappers around the raw env."""
    game = get_game(name)
    if game.simultaneous:
        illegal = -1.0 if factory == "env" else None
        converted = conversions.parallel_to_aec_wrapper(TavernParallelEnv(game, illegal_reward=illegal, **options))
        return wrappers.OrderEnforcingWrapper(ActionCheckWrapper(converted))
    wrapped = wrappers.TerminateIllegalWrapper(TavernAECEnv(game, **options), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(ActionCheckWrapper(wrapped))


def new_env(name: str, options: dict, factory: str):
    return getattr(importlib.import_module(f"tavernzoo.envs.{get_game(name).env_name}"), factory)(**options)


# Reading an attribute that no form has names the class that lacks it: the only text allowed to differ.
CLASS_NAMES = {"'CheckedTavernAECEnv'": "'TavernAECEnv'", "'CheckedParallelToAEC'": "'parallel_to_aec_wrapper'"}


def message(error: Exception) -> str:
    text = str(error)
    for new, old in CLASS_NAMES.items():
        text = text.replace(new, old)
    return text


def outcome(call, caplog) -> tuple:
    """What a call did: its result or its error (type and message), and what PettingZoo logged."""
    caplog.clear()
    try:
        result = ("ok", call())
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        result = ("raised", type(error).__name__, message(error))
    return result, [record.getMessage() for record in caplog.records]


def same(a, b) -> bool:
    """Equal values of equal types, arrays compared by dtype and content, recursively."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def table(env) -> dict:
    """Everything a PettingZoo user can read from the env after a call."""
    seen = {}
    for attribute in ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
                      "truncations", "infos", "num_agents"):
        try:
            seen[attribute] = getattr(env, attribute)
        except AttributeError as error:
            seen[attribute] = ("AttributeError", message(error))
    if isinstance(seen["agents"], list):
        seen["observations"] = {agent: env.observe(agent) for agent in env.possible_agents
                                if agent in seen["agents"] or not get_game_is_simultaneous(env)}
    return seen


def get_game_is_simultaneous(env) -> bool:
    return isinstance(env.unwrapped, TavernParallelEnv)


def bad_action(rng: random.Random, num_actions: int):
    return rng.choice([True, False, 1.0, "0", num_actions, -1, 10**9, np.int64(num_actions), np.float32(0)])


@pytest.mark.parametrize("factory", ["env", "raw_env"])
@pytest.mark.parametrize(("name", "options"), CASES, ids=[case[0] for case in CASES])
def test_the_single_class_behaves_as_the_wrapper_stack(name, options, factory, caplog):
    if factory == "raw_env" and not get_game(name).simultaneous:
        pytest.skip("a turn-based game's raw_env() was never wrapped")
    caplog.set_level(logging.WARNING)
    reference, candidate = reference_stack(name, options, factory), new_env(name, options, factory)
    assert type(candidate) is (CheckedParallelToAEC if get_game(name).simultaneous else CheckedTavernAECEnv)
    envs = (reference, candidate)

    def both(call) -> None:
        results = [outcome(lambda env=env: call(env), caplog) for env in envs]
        assert same(results[0], results[1]), (results[0], results[1])
        assert same(table(reference), table(candidate))

    # Out of order: everything before reset.
    for call in (lambda env: env.step(0), lambda env: env.observe("player_0"), lambda env: env.render(),
                 lambda env: env.state(), lambda env: env.agent_iter(), lambda env: env.last(),
                 lambda env: env.agents, lambda env: env.rewards, lambda env: env.num_agents,
                 lambda env: env.possible_agents, lambda env: str(env)):
        both(call)
    num_actions = reference.action_space("player_0").n
    rng = random.Random(7)
    illegal_moves = 0
    for game in range(12):
        both(lambda env, game=game: env.reset(seed=game))
        for _ in range(400):
            if not reference.agents:
                both(lambda env: env.step(0))  # a step after the end: a warning, nothing moves
                both(lambda env: env.step(None))
                break
            agent = reference.agent_selection
            mask = reference.observe(agent)["action_mask"]
            done = reference.terminations[agent] or reference.truncations[agent]
            roll = rng.random()
            if done:
                action = None if roll < 0.8 else rng.choice([0, True, num_actions])
            elif roll < 0.06 and not mask.all():
                action = int(rng.choice(np.flatnonzero(mask == 0)))  # masked: loses the game
                illegal_moves += 1
            elif roll < 0.12:
                action = bad_action(rng, num_actions)
            elif roll < 0.14:
                action = None  # None for an agent that must act
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.randrange(legal.size)]) if legal.size else 0
                action = np.int64(action) if roll > 0.95 else action
            both(lambda env, action=action: env.step(action))
            if roll < 0.2:
                other = rng.choice(reference.possible_agents)
                both(lambda env, other=other: env.observe(other))
    iterated = [outcome(lambda env=env: [next(iter(env.agent_iter())) for _ in range(2)], caplog)
                for env in envs]  # agent_iter without a step in between
    assert same(iterated[0], iterated[1])
    assert illegal_moves > 0


@pytest.mark.parametrize(("name", "options"), CASES, ids=[case[0] for case in CASES])
def test_env_unwrapped_still_offers_the_table_methods(name, options):
    env = new_env(name, options, "env")
    env.reset(seed=1)
    assert env.unwrapped.record()["seed"] == 1
    assert env.unwrapped.view("player_0")["agent"] == "player_0"
    assert env.unwrapped.game_state is not None
    assert str(env) == get_game(name).env_name


@pytest.mark.parametrize("name", ["tiny_minotaur", "ministeel", "wyvern"])
def test_raw_env_observed_before_reset_says_so(name):
    env = new_env(name, {}, "raw_env")
    with pytest.raises(RuntimeError, match=r"observe\(\) before reset\(\)"):
        env.observe("player_0")
    with pytest.raises(AssertionError, match="reset"):
        new_env(name, {}, "env").observe("player_0")
