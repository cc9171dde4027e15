"""Wyvern TCG through the PettingZoo adapter and in seeded random play: API conformance, invariants,
records, hidden information and the heuristic bot."""

from __future__ import annotations

import copy
import json
import os
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tavernzoo.agents import load_bot
from tavernzoo.envs import IllegalActionError, wyvern_v1
from tavernzoo.envs.core import Chance
from tavernzoo.envs.records import replay
from tavernzoo.envs.wyvern import encode, rules
from tavernzoo.envs.wyvern.decks import BY_KEY, NUM_CARDS

CONFIGS = [
    {"num_players": 2},
    {"num_players": 4},
    {"num_players": 6, "decks": ("random",) * 6, "summons": True},
    {"num_players": 3, "decks": ("paladins_oath", "dark_pact", "frost_blade"), "summons": True, "win_level": 10},
]


@pytest.mark.parametrize("players", [2, 4, 6])
def test_pettingzoo_api_and_seed_tests(players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on Dict observation spaces
        api_test(wyvern_v1.env(num_players=players), num_cycles=300)
        seed_test(lambda: wyvern_v1.env(num_players=players, summons=True), num_cycles=300)


def _cards_in_play(state: rules.State) -> int:
    total = sum(len(z[s]) for z in (state.deck, state.hand, state.equipped, state.discard) for s in range(state.n))
    total += sum(1 for c in state.summon if c >= 0) + (state.monster >= 0) + len(state.table)
    return total


def _random_game(config: dict, seed: int, check=None) -> rules.State:
    state = rules.new_game(rules.Config(**config), Chance(seed))
    pick = random.Random(seed)
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        assert legal, f"empty mask in phase {rules.PHASE_NAMES[state.phase]}"
        if check:
            check(state)
        rules.apply(state, pick.choice(legal))
    if check:
        check(state)
    return state


@pytest.mark.parametrize("config", CONFIGS)
def test_random_play_invariants(config):
    games = 40 if os.environ.get("TAVERNZOO_FULL") else 6
    obs = np.empty(encode.OBSERVATION_SIZE, np.float32)
    win = rules.Config(**config).win_level

    def check(state):
        assert _cards_in_play(state) == 80 * state.n
        assert all(1 <= level <= win for level in state.level)
        assert all(0 <= c < NUM_CARDS for zone in (state.deck, state.hand, state.equipped, state.discard)
                   for cards in zone for c in cards)
        if state.phase not in (rules.DISCARD, rules.OVER):  # the hand limit holds whenever anyone decides
            assert all(len(state.hand[s]) <= rules.hand_limit(state, s) for s in range(state.n) if s != state.dying)
        if state.steps % 7 == 0:
            for seat in range(state.n):
                encode.encode(state, seat, obs)
                assert obs.min() >= 0.0 and obs.max() <= 1.0

    for seed in range(games):
        state = _random_game(config, seed, check)
        assert state.steps <= rules.max_game_length(state.config) and state.turn <= state.config.max_turns + 1
        if state.winner >= 0:
            assert state.level[state.winner] == win and not rules.is_truncated(state)
            assert sum(rules.returns(state)) == pytest.approx(0.0)


def test_truncation_by_the_step_limit_is_reported_as_truncation():
    env = wyvern_v1.env(num_players=4, max_steps=50)
    env.reset(seed=1)
    pick = random.Random(0)
    for _agent in env.agent_iter():
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            assert truncation and not termination and info["end_reason"] == rules.STEP_LIMIT
            env.step(None)
            continue
        env.step(pick.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    assert env.unwrapped.game_state.steps == 50


@pytest.mark.parametrize("config", CONFIGS[:3])
def test_records_replay_to_the_identical_final_state(config):
    env = wyvern_v1.raw_env(**config)
    env.reset(seed=17)
    pick = random.Random(3)
    while not all(env.terminations.values()) and not all(env.truncations.values()):
        env.step(pick.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()))
    record = json.loads(json.dumps(env.record()))
    _, state = replay(record)
    final = env.game_state
    for name in ("level", "deck", "hand", "equipped", "discard", "races", "classes", "winner", "end_reason",
                 "turn", "steps", "events"):
        assert getattr(state, name) == getattr(final, name), name


def _hidden_variants(state: rules.State, observer: int):
    """Copies of ``state`` that differ only in the cards of one other player's hand."""
    for other in range(state.n):
        if other == observer or not state.hand[other]:
            continue
        twin = copy.deepcopy(state)
        twin.hand[other] = [(c + 1 + i) % NUM_CARDS for i, c in enumerate(twin.hand[other])]
        yield twin


def test_leak_another_players_hand_changes_nothing_the_observer_sees():
    compared = 0
    for seed in range(2):
        state = rules.new_game(rules.Config(num_players=4, summons=True), Chance(seed))
        pick = random.Random(seed)
        a, b = np.empty(encode.OBSERVATION_SIZE, np.float32), np.empty(encode.OBSERVATION_SIZE, np.float32)
        while not rules.is_terminal(state) and state.steps < 500:
            if state.steps % 23 == 0:
                for observer in range(state.n):
                    encode.encode(state, observer, a)
                    view = encode.view(state, observer)
                    for twin in _hidden_variants(state, observer):
                        encode.encode(twin, observer, b)
                        assert np.array_equal(a, b)
                        assert encode.view(twin, observer) == view
                        if rules.current_seat(state) == observer:
                            assert rules.legal_actions(twin) == rules.legal_actions(state)
                        compared += 1
            rules.apply(state, pick.choice(rules.legal_actions(state)))
    assert compared > 50
    # ... and one's own hand is visible to oneself.
    state = rules.new_game(rules.Config(num_players=2), Chance(0))
    twin = _hidden_variants(state, 1).__next__()
    encode.encode(state, 0, a)
    encode.encode(twin, 0, b)
    assert not np.array_equal(a, b)


def test_observations_are_egocentric_and_only_the_seat_to_act_has_a_mask():
    env = wyvern_v1.raw_env(num_players=3)
    env.reset(seed=4)
    acting = env.agent_selection
    for agent in env.agents:
        assert (env.observe(agent)["action_mask"].sum() > 0) == (agent == acting)
    block = encode.PLAYER_BLOCK
    mine = env.observe("player_0")["observation"]
    next_seat = env.observe("player_1")["observation"]
    # player_1 is block 1 for player_0, and block 0 for itself (hand size and level are public).
    assert np.array_equal(mine[block:2 * block], next_seat[:block])
    assert np.array_equal(mine[3 * block:4 * block], np.zeros(block))  # no fourth seat at this table


def test_view_is_json_names_legal_actions_and_render_works():
    env = wyvern_v1.env(render_mode="ansi", num_players=4)
    env.reset(seed=2)
    agent = env.agent_selection
    view = env.unwrapped.view(agent)
    assert json.loads(json.dumps(view)) == view
    assert view["phase"] == "setup" and "pass" in view["legal_actions"] and len(view["hand"]) == 4
    assert all("hand" not in p for p in view["players"])
    assert "player_3" in env.render()
    for action in range(rules.NUM_ACTIONS):
        assert encode.describe_action(action)
    assert len(set(rules.ACTION_NAMES)) == rules.NUM_ACTIONS


def test_raw_env_raises_on_illegal_actions_and_the_wrapped_env_ends_the_game():
    raw = wyvern_v1.raw_env(num_players=2)
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError, match="run"):
        raw.step(rules.A_RUN)
    wrapped = wyvern_v1.env(num_players=2)
    wrapped.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(rules.A_RUN)
    assert all(wrapped.terminations.values())


@pytest.mark.parametrize("players", [2, 4, 6])
def test_heuristic_bot_plays_only_legal_actions(players):
    env = wyvern_v1.raw_env(num_players=players, summons=True, decks=("random",) * players)
    bots = [load_bot("heuristic", "wyvern", env.config, seed=s) for s in range(players)]
    for seed in range(2):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(bots[env.possible_agents.index(agent)].act(observation))  # raw env raises if illegal


def test_heuristic_bots_negotiate_help_to_a_deal():
    state = _talks_state()
    state.races = [rules.DWARF] * 4
    state.level[2], state.level[3] = 5, 10  # seat 2 fights a level-12 wraith; seat 3 could turn it
    bots = [load_bot("heuristic", "wyvern", state.config, seed=s) for s in range(4)]
    rules.apply(state, rules.ACTION_INDEX["fight:wraith"])
    said = []
    obs = np.empty(encode.OBSERVATION_SIZE, np.float32)
    while state.phase != rules.FREE and len(said) < 40:
        seat = rules.current_seat(state)
        encode.encode(state, seat, obs)
        mask = np.zeros(rules.NUM_ACTIONS, np.int8)
        mask[rules.legal_actions(state)] = 1
        action = bots[seat].act({"observation": obs.copy(), "action_mask": mask})
        said.append(f"{seat}:{rules.ACTION_NAMES[action]}")
        rules.apply(state, action)
    # It opens at half the 3 treasures; seat 3 wants 2 (half, rounded up), and 2 is within what it pays.
    assert said[:3] == ["2:offer:+1:1", "3:ask:2", "2:accept"]
    assert state.level[2] == 7 and len(state.hand[3]) == 2 and len(state.hand[2]) == 2  # rust + 1 treasure


@pytest.mark.slow
def test_heuristic_beats_random_at_four_player_tables():
    from tavernzoo.eval.match import play_match

    games = 400 if os.environ.get("TAVERNZOO_FULL") else 16
    result = play_match("wyvern", ["heuristic", "random", "random", "random"], games=games, seed=0)
    heuristic = result.rows[0]
    assert heuristic.score > 0.25  # better than a fair share at a four-player table


def test_observation_layout_matches_the_documented_index_table():
    assert encode.PLAYER_BLOCK == 66 and encode.HAND.start == 396 and encode.PHASE.start == 460
    assert encode.MY_TURN == 470 and encode.DOOR.start == 471 and encode.MONSTER.start == 535
    assert encode.COMBAT.start == 555 and encode.BAD.start == 572 and encode.DEATH.start == 580
    assert encode.TURN == 582 and encode.OVER_LIMIT == 586 and encode.OBSERVATION_SIZE == 587
    assert rules.NUM_ACTIONS == 295


def _talks_state() -> rules.State:
    config = rules.Config(num_players=4, races=("elf",) * 4, classes=("cleric",) * 4)
    state = rules.new_game(config, Chance(0))
    for seat in range(4):
        state.deck[seat].extend(state.hand[seat])
        state.hand[seat] = []
    state.phase, state.active, state.to_act, state.turn = rules.FREE, 2, 2, 1
    state.hand[2] = [BY_KEY["wraith"].cid, BY_KEY["rust"].cid]
    return state


def test_action_descriptions_name_the_players_and_what_is_offered():
    state = _talks_state()
    said = {rules.ACTION_NAMES[a]: encode.describe_action(a, state) for a in rules.legal_actions(state)}
    assert said["curse:rust:+1"] == "play Curse: Rust at player_3"
    assert said["curse:rust:+3"] == "play Curse: Rust at player_1"
    rules.apply(state, rules.ACTION_INDEX["fight:wraith"])
    said = {rules.ACTION_NAMES[a]: encode.describe_action(a, state) for a in rules.legal_actions(state)}
    assert said["offer:+3:3"] == "offer 3 treasures to player_1 for help"
    assert said["offer:+2:1"] == "offer 1 treasure to player_0 for help"
    rules.apply(state, rules.ACTION_INDEX["offer:+3:1"])
    said = {rules.ACTION_NAMES[a]: encode.describe_action(a, state) for a in rules.legal_actions(state)}
    assert said["accept"] == "accept player_2's offer of 1 treasure and help fight"
    assert said["ask:2"] == "counter: ask player_2 for 2 treasures instead"
    assert "player_2 offers player_1 1 treasure for help" in encode.render(state)


def test_render_for_a_seat_hides_the_other_hands_and_has_a_legend():
    state = _talks_state()
    state.hand[0] = [BY_KEY["lich"].cid]
    everything = encode.render(state)
    assert "lich" in everything and "wraith" in everything and "legend:" in everything
    mine = encode.render(state, seat=2)
    assert "wraith" in mine and "lich" not in mine and "hand 1/5" in mine
    assert "player_2 (you)" in mine and "+1 = player_3" in mine and "legend:" in mine
    twin = copy.deepcopy(state)
    twin.hand[0] = [BY_KEY["wyvern"].cid]
    assert encode.render(twin, seat=2) == mine


def test_the_events_hook_hands_out_every_event_once_over_a_whole_game():
    # The state keeps only the latest events; a frontend that prints each decision's events keeps them all.
    import random

    from tavernzoo.envs.core import Chance
    from tavernzoo.envs.wyvern import encode, rules

    state = rules.new_game(rules.Config(num_players=4), Chance(5))
    rng = random.Random(5)
    steps, lines = encode.events(state, 0)
    collected = list(lines)
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        rules.apply(state, legal[rng.randrange(len(legal))])
        new_steps, lines = encode.events(state, 0)
        assert new_steps == steps + 1
        steps = new_steps
        collected += lines
    assert len(collected) == state.events_logged > 60 > len(state.events)
    assert collected[-len(state.events):] == [encode.event_text(event) for event in state.events]
