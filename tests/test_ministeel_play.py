"""MiniSteel: seeded random play with invariants, the leak test, PettingZoo's tests, records and the bot.

``TAVERNZOO_FULL=1`` runs the long forms (thousands of games; 400-game bot match).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from tavernzoo.agents import load_bot
from tavernzoo.envs import ministeel_v1, ministeel_v2
from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import GAME, GAME_V1, encode
from tavernzoo.envs.ministeel import rules as R
from tavernzoo.envs.records import replay

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
RANDOM_GAMES = 3000 if FULL else 250

HOUSE_RULES = [
    {},
    {"steal_equipment": False, "armor_vs_unblockable": True, "flame_needs_damage": True, "fate_on_self": False,
     "skipped_turn_poison": True, "token_timing": R.OWN_TURN},
    {"starting_hp": 5, "hp_cap": 12, "hand_size": 3, "draw_tokens": 0, "actions_per_turn": 3, "poison_limit": 2},
]


def check_invariants(state: R.State) -> None:
    config = state.config
    assert R.card_total(state) == R.DECK_SIZE
    assert min(state.discard) >= 0 and all(min(h) >= 0 for h in state.hands)
    for seat in range(state.n):
        assert 0 <= state.hp[seat] <= config.hp_cap
        assert 0 <= state.poison[seat] <= config.poison_limit
        assert all(0 <= worn <= cap for worn, cap in zip(state.equipment[seat], R.EQUIP_CAPS, strict=True))
        if state.alive[seat]:
            assert state.hp[seat] >= 1
        else:
            # Out by damage (0 HP) or by Poison tokens: poison damage alone never takes HP below 1.
            assert state.hp[seat] == 0 or state.poison[seat] >= config.poison_limit
            assert sum(state.hands[seat]) == 0 and sum(state.equipment[seat]) == 0
    assert sorted(R.seats_out(state)) == [s for s in range(state.n) if not state.alive[s]]
    for observer in range(state.n):  # what a seat remembers of a hand is never more than the hand holds
        assert state.known[observer][observer] == [0] * R.NUM_KINDS
        for holder in range(state.n):
            assert all(0 <= k <= h for k, h in zip(state.known[observer][holder], state.hands[holder], strict=True))
    if state.phase != R.PICK_PHASE:
        assert sum(state.pick) == 0
    if state.phase == R.DRAW_PHASE:  # a Card Draw window: asked only when the rulebook allows a draw
        check_window(state)
    else:
        assert state.window == [] and state.window_next == -1
    assert state.decisions <= R.max_game_length(config)
    values = R.returns(state)
    assert all(-1.0 <= v <= 1.0 for v in values)
    for seat in R.seats_out(state):
        if state.end_reason != R.ALL_OUT:
            assert values[seat] == pytest.approx(-1 / (state.n - 1))


def check_window(state: R.State) -> None:
    """The seat asked in a Card Draw window holds a token, is in the game, is not the seat to act next
    (the turn's player between its actions, the next player at a turn boundary), and no attack, shield
    answer or pick is pending: the window is never a reaction."""
    config, seat = state.config, state.to_act
    assert config.draw_windows and state.window and state.window[0] == seat
    assert state.alive[seat] and state.tokens[seat] > 0
    assert state.attacker == state.target == state.shield == -1 and sum(state.pick) == 0
    assert len(set(state.window)) == len(state.window)
    if state.window_next < 0:
        assert seat != state.turn_seat and state.actions_left > 0
    else:
        assert seat != next_turn_seat(state)
    assert R.legal_actions(state) == [R.TOKEN_DRAW, R.TOKEN_PASS]


def next_turn_seat(state: R.State) -> int:
    """At a turn boundary (or before the first turn): the seat whose turn comes next, Trip Ropes counted."""
    if state.turn == 0:
        return state.first_seat
    skips, seat = state.skips[:], state.turn_seat
    while True:
        seat = (seat + 1) % state.n
        if not state.alive[seat]:
            continue
        if not skips[seat]:
            return seat
        skips[seat] -= 1


def random_game(config: R.Config, seed: int, check=check_invariants) -> R.State:
    state = R.new_game(config, Chance(seed))
    rng = random.Random(seed)
    check(state)
    while not R.is_terminal(state):
        legal = R.legal_actions(state)
        assert legal and legal == sorted(legal) and R.current_seat(state) == state.to_act
        assert state.alive[state.to_act]
        R.apply(state, rng.choice(legal))
        check(state)
    return state


@pytest.mark.slow
def test_seeded_random_play_keeps_every_invariant():
    ends = {}
    for game in range(RANDOM_GAMES):
        options = HOUSE_RULES[game % len(HOUSE_RULES)]
        config = R.Config(num_players=2 + game % 5, **options)
        state = random_game(config, seed=game)
        assert state.decisions <= R.max_game_length(config) and state.turn <= config.max_turns
        values = R.returns(state)
        if state.end_reason == R.LAST_STANDING:
            assert values[state.winner] == 1.0 and sum(values) == pytest.approx(0.0)
        assert sorted(state.finishing_order) == list(range(config.num_players))
        ends[state.end_reason] = ends.get(state.end_reason, 0) + 1
    # No game comes near the declared limits; a few Plague Skulls put everyone out at once.
    assert set(ends) <= {R.LAST_STANDING, R.ALL_OUT} and ends[R.LAST_STANDING] > 0.9 * RANDOM_GAMES


def test_card_draw_windows_open_only_with_any_time_and_only_for_token_holders():
    """Seeded random play (the short form of the test above, every table size): windows open with
    ``any_time`` (every window decision checked by ``check_window``), never with ``own_turn`` or v1."""
    asked = {R.ANY_TIME: 0, R.OWN_TURN: 0, "v1": 0}

    def count(state):
        check_invariants(state)
        if state.phase == R.DRAW_PHASE:
            key = "v1" if type(state.config) is R.ConfigV1 else state.config.token_timing
            asked[key] += 1

    for game in range(60):
        players = 2 + game % 5
        for config in (R.Config(num_players=players), R.Config(num_players=players, token_timing=R.OWN_TURN),
                       R.ConfigV1(num_players=players)):
            random_game(config, seed=1000 + game, check=count)
    assert asked[R.ANY_TIME] > 500 and asked[R.OWN_TURN] == asked["v1"] == 0


def test_own_turn_plays_v1_exactly():
    """``token_timing=own_turn`` and v1 give the same game from the same seed and moves."""
    for players in (2, 4, 6):
        v2 = random_game(R.Config(num_players=players, token_timing=R.OWN_TURN), seed=players)
        v1 = random_game(R.ConfigV1(num_players=players), seed=players)
        assert v2.chance.outcomes == v1.chance.outcomes and v2.decisions == v1.decisions
        assert (v2.hp, v2.hands, v2.finishing_order) == (v1.hp, v1.hands, v1.finishing_order)


def test_same_seed_same_game():
    config = R.Config(num_players=5)
    a, b = random_game(config, 11), random_game(config, 11)
    assert a.chance.outcomes == b.chance.outcomes and a.hp == b.hp and a.finishing_order == b.finishing_order


# --- hidden information --------------------------------------------------------------------------------


def _swap_hidden_card(state: R.State, seat: int, rng: random.Random) -> bool:
    """Replace one card of ``seat``'s hand by a deck card of another kind; False if impossible."""
    held = [k for k in range(R.NUM_KINDS) if state.hands[seat][k]]
    if not held:
        return False
    kind = rng.choice(held)
    others = [i for i, k in enumerate(state.deck) if k != kind]
    if not others:
        return False
    i = rng.choice(others)
    state.hands[seat][kind] -= 1
    state.hands[seat][state.deck[i]] += 1
    state.deck[i] = kind
    return True


def _clone(state: R.State) -> R.State:
    """A copy whose hidden parts (hands, deck, offered cards) can change without touching ``state``."""
    return dataclasses.replace(state, hands=[h[:] for h in state.hands], deck=state.deck[:], pick=state.pick[:])


def _observed(state: R.State, seat: int):
    out = np.empty(encode.OBSERVATION_SIZE, np.float32)
    encode.encode(state, seat, out)
    mask = R.legal_actions(state) if R.current_seat(state) == seat else []
    shown = (encode.render(state, seat), encode.events(state, seat), [encode.action_label(state, a) for a in mask])
    return out.tobytes(), json.dumps(encode.view(state, seat), sort_keys=True), mask, shown


def test_leak_another_players_hand_never_changes_what_a_seat_sees():
    rng = random.Random(5)
    checked = 0
    for game in range(40 if not FULL else 400):
        config = R.Config(num_players=2 + game % 5)
        state = R.new_game(config, Chance(game))
        while not R.is_terminal(state):
            if rng.random() < 0.1:
                for observer in range(state.n):
                    for other in range(state.n):
                        if other == observer:
                            continue
                        changed = _clone(state)
                        if _swap_hidden_card(changed, other, rng):
                            assert _observed(changed, observer) == _observed(state, observer)
                            checked += 1
                        if state.phase == R.PICK_PHASE and state.to_act == other:
                            changed = _clone(state)
                            kind = next(k for k in range(R.NUM_KINDS) if changed.pick[k])
                            changed.pick[kind] -= 1
                            changed.pick[(kind + 1) % R.NUM_KINDS] += 1
                            assert _observed(changed, observer) == _observed(state, observer)
            R.apply(state, rng.choice(R.legal_actions(state)))
    assert checked > 500


def test_a_seat_sees_its_own_hand():
    state = R.new_game(R.Config(num_players=3), Chance(2))
    for seat in range(3):
        before = _observed(state, seat)
        changed = _clone(state)
        assert _swap_hidden_card(changed, seat, random.Random(seat))
        assert _observed(changed, seat)[:2] != before[:2]


# --- the PettingZoo env --------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 6])
@pytest.mark.parametrize("module", [ministeel_v2, ministeel_v1], ids=["v2", "v1"])
def test_pettingzoo_api_and_seed_tests(module, players):
    api_test(module.env(num_players=players), num_cycles=300)
    api_test(module.raw_env(num_players=players), num_cycles=300)
    seed_test(lambda: module.env(num_players=players), num_cycles=100)


def test_the_envs_spaces_follow_the_version_and_token_timing():
    for env, size, actions, name in ((ministeel_v2.env(), 293, 141, "ministeel_v2"),
                                     (ministeel_v2.env(token_timing="own_turn"), 291, 140, "ministeel_v2"),
                                     (ministeel_v1.env(), 291, 140, "ministeel_v1")):
        assert env.observation_space("player_0")["observation"].shape == (size,)
        assert env.action_space("player_0").n == actions and env.metadata["name"] == name
    with pytest.raises(ValueError, match="token_timing"):
        ministeel_v1.env(token_timing="any_time")  # v1 has no such option
    with pytest.raises(ValueError, match="token_timing='sometimes' is not valid; choose one of: any_time, own_turn"):
        ministeel_v2.env(token_timing="sometimes")


def _play_env(env, seed: int, rng: random.Random):
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    left_early = []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            if env.unwrapped.game_state.phase != R.GAME_OVER:
                left_early.append((agent, info))
            env.step(None)
            if env.unwrapped.game_state.phase != R.GAME_OVER:
                assert agent not in env.agents
            continue
        assert observation["observation"].min() >= 0 and observation["observation"].max() <= 1
        env.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    return totals, left_early


def test_eliminated_agents_leave_with_their_final_return():
    env = ministeel_v2.env(num_players=4)
    rng = random.Random(0)
    saw_elimination = False
    for seed in range(20):
        totals, left_early = _play_env(env, seed, rng)
        state = env.unwrapped.game_state
        final = R.returns(state)
        assert [totals[a] for a in env.possible_agents] == pytest.approx(list(final))
        for agent, info in left_early:
            saw_elimination = True
            assert info["end_reason"] == "eliminated" and totals[agent] == pytest.approx(-1 / 3)
        assert env.agents == []
        assert state.finishing_order[0] == state.winner or R.is_truncated(state)
    assert saw_elimination


def test_a_cut_off_game_truncates_the_env():
    env = ministeel_v2.raw_env(num_players=3, max_turns=2)
    env.reset(seed=1)
    rng = random.Random(1)
    while env.agents:
        agent = env.agent_selection
        observation, _, termination, truncation, info = env.last()
        if termination or truncation:
            assert truncation and info["end_reason"] in (R.TURN_LIMIT, "eliminated")
            env.step(None)
            continue
        env.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    assert R.is_truncated(env.game_state) and agent


@pytest.mark.parametrize(("module", "expected"), [(ministeel_v2, GAME), (ministeel_v1, GAME_V1)], ids=["v2", "v1"])
def test_records_replay_to_the_same_final_state(module, expected):
    rng = random.Random(3)
    for players in (2, 4, 6):
        env = module.raw_env(num_players=players)
        _play_env(env, 100 + players, rng)
        record = json.loads(json.dumps(env.record()))
        assert record["env"] == expected.env_name and ("token_timing" in record["config"]) == (expected is GAME)
        game, state = replay(record)
        original = env.game_state
        assert game is expected and record["returns"] == list(R.returns(original))
        assert (state.hp, state.hands, state.deck, state.discard, state.finishing_order, state.end_reason) == (
            original.hp, original.hands, original.deck, original.discard, original.finishing_order,
            original.end_reason)


def test_view_names_legal_actions():
    env = ministeel_v2.raw_env(num_players=3)
    env.reset(seed=4)
    view = env.view(env.agent_selection)
    assert view["game"] == "ministeel" and view["legal_actions"] and "hand" in view["players"][view["you"]]
    json.dumps(view)


# --- the heuristic bot --------------------------------------------------------------------------------


@pytest.mark.slow
def test_heuristic_beats_random_at_four_players():
    from tavernzoo.eval.match import play_match

    result = play_match("ministeel", ["heuristic", "random", "random", "random"], games=400 if FULL else 40,
                        seed=0)
    heuristic = result.rows[0]
    assert heuristic.score_ci[0] > 0.25, heuristic


@pytest.mark.parametrize("module", [ministeel_v2, ministeel_v1], ids=["v2", "v1"])
def test_heuristic_plays_legal_moves_at_every_table_size(module):
    for players in range(2, 7):
        bots = [load_bot("heuristic", module.GAME, {"num_players": players}, seed=s) for s in range(players)]
        env = module.raw_env(num_players=players)  # raises on any illegal action
        env.reset(seed=players)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else bots[int(agent[-1])].act(observation))


def test_the_fast_legality_check_agrees_with_legal_actions():
    rng = random.Random(8)
    for game in range(30):
        options = HOUSE_RULES[game % len(HOUSE_RULES)]
        state = R.new_game(R.Config(num_players=2 + game % 5, **options), Chance(game))
        while not R.is_terminal(state):
            legal = set(R.legal_actions(state))
            assert {a for a in range(R.NUM_ACTIONS) if R.is_legal(state, a)} == legal
            assert not R.is_legal(state, True) and not R.is_legal(state, 1.0) and not R.is_legal(state, -1)
            action = rng.choice(sorted(legal))
            R.apply(state, np.int64(action))
        assert not any(R.is_legal(state, a) for a in range(R.NUM_ACTIONS))


def _window_observation(hand: dict[str, int]) -> dict:
    state = R.new_game(R.Config(num_players=3), Chance(1))
    assert state.phase == R.DRAW_PHASE
    seat = state.to_act
    state.hands[seat] = [hand.get(kind, 0) for kind in R.KINDS]
    out = np.zeros(encode.OBSERVATION_SIZE, np.float32)
    encode.encode(state, seat, out)
    mask = np.zeros(R.NUM_ACTIONS, np.int8)
    mask[R.legal_actions(state)] = 1
    return {"observation": out, "action_mask": mask}


def test_heuristic_draws_in_a_window_only_on_a_full_hand_without_defences():
    bot = load_bot("heuristic", "ministeel", {"num_players": 3}, seed=0)
    assert bot.act(_window_observation({"dagger": 3, "sword": 2, "potion": 1})) == R.TOKEN_DRAW
    assert bot.act(_window_observation({"dagger": 3, "sword": 2, "potion": 2})) == R.TOKEN_DRAW
    assert bot.act(_window_observation({"dagger": 3, "sword": 2})) == R.TOKEN_PASS  # its turn refills it
    assert bot.act(_window_observation({"dagger": 3, "steel_shield": 1, "potion": 2})) == R.TOKEN_PASS
    assert bot.act(_window_observation({"hatchet": 5, "confusion_dust": 1})) == R.TOKEN_PASS


def test_a_v1_record_replays_as_v1_everywhere_records_are_read():
    from tavernzoo.envs.core import ReplayError
    from tavernzoo.web.tables import Timeline

    env = ministeel_v1.raw_env(num_players=3)
    _play_env(env, 7, random.Random(7))
    record = json.loads(json.dumps(env.record()))
    timeline = Timeline(record)
    assert timeline.game is GAME_V1 and timeline.state(timeline.steps - 1).hp == env.game_state.hp
    assert replay(record)[0] is GAME_V1
    with pytest.raises(ReplayError, match="record is for 'ministeel_v0'; this tavernzoo has 'ministeel_v2'"):
        replay({**record, "env": "ministeel_v0"})


def test_the_v1_zoo_bot_plays_v1_and_is_refused_for_v2_naming_the_option():
    from tavernzoo.agents.onnx_bot import zoo_bots

    if "ministeel_v1" not in zoo_bots():
        pytest.skip("zoo:ministeel_v1 is not bundled")
    assert load_bot("zoo:ministeel_v1", GAME_V1, seed=0).name == "zoo:ministeel_v1"
    for options in ({}, {"token_timing": "own_turn"}):
        with pytest.raises(ValueError, match=r"is a bot for ministeel_v1 \(MiniSteel v1: ministeel_v2 with "
                                             r"token_timing=own_turn\), not for ministeel_v2; play it in ministeel_v1"):
            load_bot("zoo:ministeel_v1", GAME, options, seed=0)
    with pytest.raises(ValueError, match="is a bot for ministeel_v2 .*not for ministeel_v1"):
        load_bot("zoo:ministeel", GAME_V1, seed=0)


def test_a_tournament_of_v1_plays_v1():
    from tavernzoo.eval.runner import DealPlayer
    from tavernzoo.eval.schedule import make_settings

    settings = make_settings("ministeel_v1", ["heuristic", "random"], 4, config={"num_players": 2})
    assert settings.game == "ministeel_v1" and "token_timing" not in settings.config
    assert DealPlayer.for_tournament(settings).game is GAME_V1
    assert make_settings("ministeel", ["heuristic", "random"], 4, config={"num_players": 2}).game == "ministeel"
