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
    with pytest.raises(ValueError, match="render_mode='rgb_array' is not supported; valid: None, 'ansi', 'human'"):
        tiny_minotaur_v1.env(render_mode="rgb_array")


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


def test_render_and_view_show_windows_rolls_boss_names_and_plain_events():
    """What a person reads: each card's window and chance for the seat's tier, both initiative rolls,
    the boss card by name while it is held, and event lines in the same words every time."""
    from tavernzoo.envs.core import Chance

    config = rules.Config(classes=("sword", "magic"), archetypes=("paladin", "cleric"),
                          bosses=("wyvern_breath", "none"), boss_replaces=("middling", "regular"))
    # rolls 18 (tier 3) and 2 (tier 1); boss 12 hits, dodge 20 nullifies; cleric middling 4 hits, take;
    # sword stronk 20 misses; cleric middling 5 hits, sword has no reaction left -> takes 30
    state = rules.new_game(config, Chance.dice((20, 18), (20, 2), (20, 12), (20, 20), (20, 4), (20, 20), (20, 5)))
    text = encode.render(state)
    assert "player_0 rolled 18 (tier 3), player_1 rolled 2 (tier 1); player_0 moved first" in text
    assert "sword (paladin)  tier 3" in text and "magic (cleric)  tier 1" in text
    assert "middling x4 2-13 (60%)" in text and "stronk x5 7-13 (35%)" in text
    assert "boss card wyvern_breath x1 9-13 (25%), 60 damage" in text
    assert "regular x6 always hits" in text and "heal x3 13-20 (40%)" in text and "dodge x1 16-20 (25%)" in text
    assert "window" in encode.describe_action(rules.ATTACK_BOSS) and "9-13 (25%)" in encode.describe_action(
        rules.ATTACK_BOSS, state)
    assert "wyvern_breath: 60 damage" in encode.describe_action(rules.ATTACK_BOSS, state)
    view = encode.view(state, 1)
    assert view["players"][0]["boss"] == "wyvern_breath" and view["players"][0]["windows"]["boss"] == "9-13 (25%)"
    assert [p["initiative_roll"] for p in view["players"]] == [18, 2]
    rules.apply(state, rules.ATTACK_BOSS)
    assert encode.describe_action(rules.REACT_TAKE, state) == "take the hit: 60 damage"
    rules.apply(state, rules.REACT_DODGE)
    lines = encode.view(state, 0)["last_events"]
    assert lines == ["player_0 attacks with boss card wyvern_breath, rolls 12 in 9-13 (25%): hit",
                     "player_1 dodges, rolls 20 in 16-20 (25%): dodged (attack nullified)"]
    text = encode.render(state)
    assert "wyvern_breath" not in text.split("\n  ")[0] and "boss card" not in text.splitlines()[3]
    assert encode.view(state, 0)["players"][0]["boss"] is None  # spent: no longer on the table
    rules.apply(state, rules.ATTACK_MIDDLING)
    rules.apply(state, rules.REACT_TAKE)
    assert encode.view(state, 0)["last_events"] == [
        "player_1 attacks with middling, rolls 4 in 4-13 (50%): hit", "player_0 takes 30 (HP 70)"]
    rules.apply(state, rules.ATTACK_STRONK)
    assert encode.view(state, 0)["last_events"] == [
        "player_0 attacks with stronk, rolls 20 in 7-13 (35%): miss (the card is kept)"]
    state.cards[0][rules.DODGE] = 0
    rules.apply(state, rules.ATTACK_MIDDLING)
    assert encode.view(state, 0)["last_events"] == [
        "player_1 attacks with middling, rolls 5 in 4-13 (50%): hit", "player_0 takes 30 (HP 40)"]


def test_a_heal_reads_healed_to_and_a_failed_reaction_reads_takes():
    from tavernzoo.envs.core import Chance

    config = rules.Config(classes=("magic", "sword"), archetypes=("sorcerer", "fighter"))
    state = rules.new_game(config, Chance.dice((20, 2), (20, 18), (20, 10), (20, 15), (20, 10), (20, 1)))
    state.hp[0] = 60
    state.cards[1][rules.DODGE] = 0
    rules.apply(state, rules.ATTACK_MIDDLING)  # 10 hits (tier 3: 2-13)
    rules.apply(state, rules.REACT_HEAL)  # 15 in tier 1's 13-20: 60 - 30 + 20
    assert encode.view(state, 1)["last_events"][1] == "player_0 heals, rolls 15 in 13-20 (40%): healed to 50 HP"
    rules.apply(state, rules.ATTACK_REGULAR)
    assert encode.view(state, 1)["last_events"] == ["player_0 attacks with regular (always hits): hit",
                                                    "player_1 takes 10 (HP 90)"]
    rules.apply(state, rules.ATTACK_MIDDLING)
    rules.apply(state, rules.REACT_HEAL)  # 1 fails
    assert encode.view(state, 1)["last_events"][1:] == [
        "player_0 heals, rolls 1 in 13-20 (40%): fails (the card is kept)", "player_0 takes 30 (HP 20)"]
