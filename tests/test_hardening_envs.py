"""Hardening of the environments (issue 14): every env pickles and deepcopies mid-game and plays on
identically; PettingZoo's render test with render_mode="human"; actions and seeds are integers, nothing
else; every game's options checked against their types in one place; the learner envs' out-of-space
actions refused."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import io
import pickle
import random
import re
import typing
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import render_test

from tavernzoo.envs import Chance, Game, games, get_game
from tavernzoo.envs.core import OPTION_INT_LIMIT, config_to_dict

GAMES = sorted(games())
FACTORIES = [(name, factory) for name in GAMES for factory in ("env", "raw_env", "parallel_env")
             if hasattr(importlib.import_module(f"tavernzoo.envs.{get_game(name).env_name}"), factory)]
IDS = [f"{name}.{factory}" for name, factory in FACTORIES]
AEC_FACTORIES = [f for f in FACTORIES if f[1] != "parallel_env"]
AEC_IDS = [i for i in IDS if not i.endswith("parallel_env")]


def make(name: str, factory: str, **kwargs):
    return getattr(importlib.import_module(f"tavernzoo.envs.{get_game(name).env_name}"), factory)(**kwargs)


def play(env, rng: random.Random, steps: int) -> list:
    """Up to ``steps`` moves chosen by ``rng`` among the legal ones; everything the env said, step by step."""
    trace = []
    if hasattr(env, "agent_iter"):
        for _ in range(steps):
            if not env.agents:
                break
            agent = env.agent_selection
            observation, reward, terminated, truncated, info = env.last()
            trace.append((agent, observation, reward, terminated, truncated, info))
            legal = np.flatnonzero(observation["action_mask"])
            env.step(None if terminated or truncated else int(rng.choice(legal)))
    else:
        for _ in range(steps):
            if not env.agents:
                break
            legal = {agent: env.legal_action_names(agent) for agent in env.agents}
            actions = {agent: env.action_names.index(rng.choice(names)) for agent, names in legal.items()}
            trace.append(env.step(actions))
    return trace


def reset(env, seed: int):
    result = env.reset(seed=seed)
    return [] if result is None else [result]


# --- pickle and deepcopy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=IDS)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_an_env_copied_mid_game_plays_on_exactly_as_the_original(name, factory, how):
    env = make(name, factory)
    reset(env, seed=11)
    play(env, random.Random(1), 2 if factory == "parallel_env" else 9)  # a Parallel step is a whole round
    clone = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    original_trace = play(env, random.Random(2), 300)
    clone_trace = play(clone, random.Random(2), 300)
    assert original_trace and data_equivalence(original_trace, clone_trace)
    # Same chance draws since the copy (the generator travelled with its state), same record.
    assert env.unwrapped.record() == clone.unwrapped.record()


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=IDS)
def test_a_copy_is_independent_of_its_original(name, factory):
    env = make(name, factory)
    reset(env, seed=5)
    play(env, random.Random(1), 1)
    before = env.unwrapped.record()
    clone = copy.deepcopy(env)
    play(clone, random.Random(3), 20)
    assert env.unwrapped.record() == before and clone.unwrapped.record() != before


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=IDS)
def test_pettingzoos_pickle_test(name, factory):
    """PettingZoo's own pickle test (test/pickle_test.py in its repository; 1.27 does not ship it):
    a fresh env pickled, both reset with one seed, the same seeded samples played in both."""
    env1 = make(name, factory)
    env2 = pickle.loads(pickle.dumps(env1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert data_equivalence(reset(env1, 42), reset(env2, 42))
        assert data_equivalence(play(env1, random.Random(7), 30), play(env2, random.Random(7), 30))


def test_a_game_pickles_by_module_name_and_copies_as_itself():
    for game in games().values():
        again = pickle.loads(pickle.dumps(game))
        assert again is game and again.rules is game.rules and again.encoder is game.encoder
        assert copy.deepcopy(game) is game and copy.copy(game) is game
    tiny = get_game("tiny_minotaur")
    house = Game("house_duel", 0, "A house duel", tiny.rules, tiny.encoder)  # not in the registry
    assert pickle.loads(pickle.dumps(house)) == house


def test_a_chance_pickled_mid_stream_draws_what_the_original_draws():
    chance = Chance(3)
    [chance.below(20) for _ in range(5)]
    again = pickle.loads(pickle.dumps(chance))
    assert again.outcomes == chance.outcomes
    assert [again.below(6) for _ in range(50)] == [chance.below(6) for _ in range(50)]


# --- rendering --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "factory"), AEC_FACTORIES, ids=AEC_IDS)
def test_pettingzoos_render_test(name, factory):
    """The standard suite's render test (AEC only: it drives agent_iter); the Parallel env's human mode
    is checked below."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        render_test(lambda render_mode: make(name, factory, render_mode=render_mode))


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=IDS)
def test_human_mode_prints_the_table_after_reset_and_steps(name, factory, capsys):
    env = make(name, factory, render_mode="human")
    reset(env, seed=3)
    table = env.unwrapped.game.encoder.render
    assert capsys.readouterr().out == table(env.unwrapped.game_state) + "\n"
    play(env, random.Random(0), 20)  # a converted Parallel env plays (and prints) once per round
    printed = capsys.readouterr().out
    assert printed.count("\n") > 1 and printed.endswith(table(env.unwrapped.game_state) + "\n")
    assert env.render() is None and capsys.readouterr().out == table(env.unwrapped.game_state) + "\n"


# --- integers only ----------------------------------------------------------------------------------------

NOT_INTEGERS = [1.7, 2.0, np.float64(1.0), True, np.bool_(True), "1", None, [1]]


@pytest.mark.parametrize(("name", "factory"), AEC_FACTORIES, ids=AEC_IDS)
def test_a_non_integer_action_is_a_type_error_and_changes_nothing(name, factory):
    env = make(name, factory)
    env.reset(seed=2)
    before, agent = env.unwrapped.record(), env.agent_selection
    for action in NOT_INTEGERS:
        with pytest.raises(TypeError, match="an action must be an integer"):
            env.step(action)
    assert env.unwrapped.record() == before and env.agent_selection == agent
    legal = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
    env.step(np.int64(legal))  # numpy integers are integers
    assert env.unwrapped.record() != before or env.agent_selection != agent


@pytest.mark.parametrize("name", GAMES)
def test_an_action_outside_the_space_is_refused_under_the_wrappers(name):
    env = make(name, "env")
    env.reset(seed=2)
    size = env.action_space(env.agent_selection).n
    for action in (-1, size, 10**9):
        with pytest.raises(ValueError, match=rf"outside the action space: valid actions are 0\.\.{size - 1}"):
            env.step(action)
    assert env.agents and not any(env.terminations.values())


@pytest.mark.parametrize(("name", "factory"), FACTORIES, ids=IDS)
def test_a_seed_is_an_integer(name, factory):
    env = make(name, factory)
    for seed in (1.5, 2.0, True, "3"):
        with pytest.raises(TypeError, match="seed must be an integer or None"):
            env.reset(seed=seed)
    env.reset(seed=np.int64(9))
    assert env.unwrapped.seed_used == 9 and type(env.unwrapped.seed_used) is int


def test_a_parallel_step_takes_integers_in_the_action_space_only():
    for illegal_reward in (-1.0, None):
        env = make("minefield", "parallel_env", illegal_reward=illegal_reward, num_players=3)
        env.reset(seed=4)
        before = env.record()
        for bad, error in ((True, TypeError), (1.5, TypeError), ("target:1", TypeError), (-1, ValueError),
                           (len(env.action_names), ValueError)):
            with pytest.raises(error, match="player_0"):
                env.step({agent: bad if agent == "player_0" else 0 for agent in env.agents})
        assert env.record() == before and len(env.agents) == 3


# --- options: one check for every game ----------------------------------------------------------------------


def option_fields(kind):
    for name in GAMES:
        config_type = get_game(name).rules.Config
        hints = typing.get_type_hints(config_type)
        for field in dataclasses.fields(config_type):
            if hints[field.name] is kind:
                yield name, field.name, field.default


@pytest.mark.parametrize(("game", "option", "default"), list(option_fields(int)))
def test_an_integer_option_takes_integers_only(game, option, default):
    make_config = get_game(game).make_config
    for bad in (default + 0.5, float(default), 1e18, True, str(default)):
        with pytest.raises(ValueError, match=f"{option} must be an integer, got"):
            make_config(**{option: bad})
    with pytest.raises(ValueError, match=f"{option}={OPTION_INT_LIMIT + 1} is out of range"):
        make_config(**{option: OPTION_INT_LIMIT + 1})
    config = make_config(**{option: np.int64(default)})
    assert type(getattr(config, option)) is int and config == make_config()


@pytest.mark.parametrize(("game", "option", "default"), list(option_fields(bool)))
def test_a_flag_option_takes_true_or_false_only(game, option, default):
    for bad in (1, 0, "true", None):
        with pytest.raises(ValueError, match=f"{option} must be true or false"):
            get_game(game).make_config(**{option: bad})


@pytest.mark.parametrize(("game", "option", "default"), list(option_fields(float)) + list(option_fields(str)))
def test_number_and_text_options_check_their_type(game, option, default):
    make_config = get_game(game).make_config
    bad_values = (float("nan"), float("inf"), "0.5", True) if isinstance(default, float) else (3, None, ["a"])
    for bad in bad_values:
        with pytest.raises(ValueError, match=option):
            make_config(**{option: bad})


def test_per_seat_options_hold_strings_and_the_float_option_takes_an_int():
    with pytest.raises(ValueError, match=r"classes\[1\] must be a string, got 3"):
        get_game("tiny_minotaur").make_config(classes=["sword", 3])
    with pytest.raises(ValueError, match="races must be a list"):
        get_game("wyvern").make_config(races="elf")
    config = get_game("wyvern").make_config(level_reward=0)
    assert type(config.level_reward) is float and config_to_dict(config)["level_reward"] == 0.0


@pytest.mark.parametrize(("game", "option", "value"), [("tiny_minotaur", "starting_hp", 10.5),
                                                       ("wyvern", "win_level", 3.5), ("wyvern", "max_turns", 1e18)])
def test_the_envs_refuse_the_float_options_they_used_to_take(game, option, value):
    with pytest.raises(ValueError, match=re.escape(f"{option} must be an integer, got {value!r}")):
        make(game, "env", **{option: value})


# --- the learner's envs -------------------------------------------------------------------------------------


def learner_setup():
    from tavernzoo.train.config import TrainConfig
    from tavernzoo.train.selfplay import League

    game = get_game("tiny_minotaur")
    config = game.make_config()
    return game, config, League.create(game, config, TrainConfig(game=game.name, pool_bots=("random",),
                                                                  latest_share=0.0))


def test_the_learner_env_refuses_actions_outside_its_space_and_loses_on_masked_ones():
    from tavernzoo.train.selfplay import LearnerEnv

    game, config, league = learner_setup()
    env = LearnerEnv(game, config, league, seed=0)
    env.reset(seed=0)
    n = env.action_space.n
    before = env.seat.env.record()
    for action, error in ((-1, ValueError), (n, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="outside the action space|must be an integer"):
            env.step(action)
    assert env.seat.env.record() == before
    masked = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(np.int64(masked))
    assert (reward, terminated, truncated, info) == (-1.0, True, False, {"illegal_action": masked})


def test_the_vector_env_refuses_a_bad_batch_whole_and_ends_the_episode_of_a_masked_action():
    from tavernzoo.train.selfplay import SelfPlayVecEnv

    game, config, league = learner_setup()
    env = SelfPlayVecEnv(game, config, league, n_envs=3, seed=0)
    first = env.reset()
    masks = env.action_masks()
    legal = [int(np.flatnonzero(mask)[0]) for mask in masks]
    records = [seat.env.record() for seat in env.seats]
    for bad in (-1, env.action_space.n):
        with pytest.raises(ValueError, match="outside the action space"):
            env.step(np.array([legal[0], bad, legal[2]]))
    assert [seat.env.record() for seat in env.seats] == records
    masked = int(np.flatnonzero(~masks[1])[0])
    observations, rewards, dones, infos = env.step(np.array([legal[0], masked, legal[2]]))
    assert dones[1] and rewards[1] == -1.0 and infos[1]["illegal_action"] == masked
    assert np.array_equal(infos[1]["terminal_observation"], first[1])
    assert env.seats[1].env.record()["seed"] != records[1]["seed"]  # a new episode began
    assert len(env.seats[0].env.record()["actions"]) > len(records[0]["actions"])
