"""Tiny Minotaur through the PettingZoo adapter: conformance, masks, views, illegal moves."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tavernzoo.envs import IllegalActionError, tiny_minotaur_v1
from tavernzoo.envs.tiny_minotaur import encode, rules

CLASS_PAIRS = list(itertools.product(rules.CLASSES, repeat=2))


@pytest.mark.parametrize("classes", CLASS_PAIRS)
@pytest.mark.parametrize("bosses", [("none", "none"), ("wyvern_breath", "minotaur_gore")])
def test_pettingzoo_api_and_seed_tests(classes, bosses):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on Dict observation spaces
        api_test(tiny_minotaur_v1.env(classes=classes, bosses=bosses), num_cycles=100)
        seed_test(lambda: tiny_minotaur_v1.env(classes=classes, bosses=bosses), num_cycles=100)


def test_only_the_agent_to_act_has_a_mask_and_observations_are_egocentric():
    env = tiny_minotaur_v1.raw_env(classes=("sword", "cloak"))
    env.reset(seed=11)
    acting = env.agent_selection
    other = next(a for a in env.agents if a != acting)
    assert env.observe(acting)["action_mask"].sum() >= 1
    assert env.observe(other)["action_mask"].sum() == 0
    mine = env.observe("player_0")["observation"]
    theirs = env.observe("player_1")["observation"]
    block = encode.PLAYER_BLOCK
    assert np.array_equal(mine[:block], theirs[block:2 * block])  # my block is their opponent block
    assert mine[encode.CLASS][0] == 1.0 and theirs[encode.CLASS][2] == 1.0


def test_view_is_json_and_names_the_legal_actions():
    env = tiny_minotaur_v1.raw_env(classes=("magic", "sword"))
    env.reset(seed=2)
    agent = env.agent_selection
    view = env.view(agent)
    assert json.loads(json.dumps(view)) == view
    assert set(view["legal_actions"]) == {"attack:regular", "attack:middling", "attack:stronk"}
    assert view["players"][0]["class"] == "magic" and view["players"][0]["cards"]["heal"] == 3
    other = next(a for a in env.agents if a != agent)
    assert env.view(other)["legal_actions"] == []


def test_render_ansi_shows_both_players():
    env = tiny_minotaur_v1.env(render_mode="ansi", classes=("sword", "magic"))
    env.reset(seed=0)
    text = env.render()
    assert "player_0" in text and "player_1" in text and "HP 100/100" in text
    with pytest.raises(ValueError, match="render_mode"):
        tiny_minotaur_v1.env(render_mode="human")


def test_raw_env_raises_on_illegal_actions_and_the_wrapped_env_ends_the_game():
    raw = tiny_minotaur_v1.raw_env(classes=("sword", "magic"))
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError, match="react:take"):
        raw.step(rules.REACT_TAKE)
    wrapped = tiny_minotaur_v1.env(classes=("sword", "magic"))
    wrapped.reset(seed=0)
    offender = wrapped.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(rules.REACT_TAKE)
    _, reward, termination, _, _ = wrapped.last()
    assert termination
    assert wrapped.unwrapped._cumulative_rewards[offender] == -1


def test_truncation_at_the_turn_limit_is_reported_as_truncation():
    env = tiny_minotaur_v1.raw_env(classes=("sword", "sword"), max_turns=2)
    env.reset(seed=9)
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        stronk = rules.ATTACK_STRONK if rules.ATTACK_STRONK in legal else legal[-1]
        env.step(int(stronk))
    if env.game_state.end_reason == rules.TURN_LIMIT:
        assert all(env.truncations.values()) and not any(env.terminations.values())
        assert env.infos["player_0"]["end_reason"] == rules.TURN_LIMIT


def test_bad_config_through_the_env_factory():
    with pytest.raises(ValueError, match="unknown option"):
        tiny_minotaur_v1.env(colour="red")
    with pytest.raises(ValueError, match="wizard"):
        tiny_minotaur_v1.env(classes=("wizard", "sword"))
