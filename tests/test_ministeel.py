"""MiniSteel: one scripted scenario per rule, card effect, reaction and combo, plus config and errors.

Scenarios lay out a table by hand (``table``) and script every chance outcome (``dice``): a die face is
``(6, face - 1)``, a random card out of ``m`` is ``(m, index)`` over the hand in card-kind order.
Random play, the PettingZoo tests, records and the bot live in test_ministeel_play.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from tavernzoo.envs.core import Chance, IllegalActionError
from tavernzoo.envs.ministeel import GAME, encode
from tavernzoo.envs.ministeel import rules as R


def table(n=4, hands=None, seat=0, hp=None, poison=None, equipment=None, tokens=None, **options):
    """A game in seat ``seat``'s main phase with the given hands (dicts of card name -> count).

    The scenarios of single cards and rules play with ``token_timing=own_turn`` (no Card Draw windows
    between actions, whose asking would interleave every scenario); the windows' own tests pass
    ``token_timing="any_time"``."""
    options.setdefault("token_timing", R.OWN_TURN)
    config = R.Config(num_players=n, **options)
    state = R.new_game(config, Chance(0))
    for s in range(n):
        for kind in range(R.NUM_KINDS):
            state.deck += [kind] * state.hands[s][kind]
            state.hands[s][kind] = 0
    state.deck.sort()
    for s, spec in (hands or {}).items():
        for name, count in spec.items():
            kind = R.KINDS.index(name)
            for _ in range(count):
                state.deck.remove(kind)
            state.hands[s][kind] += count
    for s, spec in (equipment or {}).items():
        for name, count in spec.items():
            kind = R.KINDS.index(name)
            for _ in range(count):
                state.deck.remove(kind)
            state.equipment[s][R.SLOT_OF[kind]] += count
    for s, value in (hp or {}).items():
        state.hp[s] = value
    for s, value in (poison or {}).items():
        state.poison[s] = value
    for s, value in (tokens or {}).items():
        state.tokens[s] = value
    state.turn_seat = state.to_act = seat
    state.phase = R.MAIN
    state.window, state.window_next, state.turn = [], -1, 1  # past the window before the first turn
    state.actions_left = config.actions_per_turn
    state.chance = Chance.scripted([])  # any unscripted chance use fails loudly
    assert R.card_total(state) == 100
    return state


def dice(state, *outcomes):
    state.chance = Chance.scripted(outcomes)


def face(value):
    return (6, value - 1)


def act(state, name):
    R.apply(state, GAME.action_index(state.config, name))
    assert R.card_total(state) == 100


def legal(state):
    return [encode.ACTION_NAMES[a] for a in R.legal_actions(state)]


def hand(state, seat):
    return {R.KINDS[k]: c for k, c in enumerate(state.hands[seat]) if c}


# --- the sheet, the config, the action table ---------------------------------------------------------------


def test_reference_sheet_counts_sum_to_100():
    assert sum(R.COUNTS) == R.DECK_SIZE == 100
    sheet = dict(zip(R.KINDS, R.COUNTS, strict=True))
    assert sheet["poison"] == 12 and sheet["confusion_dust"] == 1 and sheet["steel_shield"] == 8
    assert R.VALUES[R.SWORD] == 3 and R.VALUES[R.FLAME_SHOT] == 2


@pytest.mark.parametrize(
    "options, message",
    [
        ({"num_players": 7}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"starting_hp": 0}, "starting_hp"),
        ({"starting_hp": 12}, "hp_cap"),
        ({"steal_equipment": "yes"}, "steal_equipment"),
        ({"fate_on_self": 1}, "fate_on_self"),
        ({"max_turns": 0}, "max_turns"),
        ({"poison_limit": 2.5}, "poison_limit"),
        ({"hand_size": 0}, r"hand_size=0 .*1"),  # a game nobody can play: no card is ever dealt
    ],
)
def test_bad_config_names_the_option(options, message):
    with pytest.raises(ValueError, match=message):
        GAME.make_config(options)


def test_action_names_are_stable_and_egocentric():
    names = encode.ACTION_NAMES
    assert len(names) == len(set(names)) == R.NUM_ACTIONS == 141
    assert names is R.ACTION_NAMES  # the rules own the names; the encoder re-exports them
    assert GAME.action_names(R.Config(token_timing=R.OWN_TURN)) == names[:140] == GAME.action_names(R.ConfigV1())
    for name in ("play:sword>seat+1", "react:steel_shield", "combo:hatchet+poison>seat+2", "token:draw",
                 "token:pass",
                 "forfeit:discard_dagger", "pick:potion", "play:fate>self", "react:none", "react:hook_rope",
                 "equip:armor", "play:scythe", "forfeit:empty_hand", "play:bladed_shield>seat+5"):
        assert name in names
    assert GAME.action_names(R.Config(num_players=2)) == GAME.action_names(R.Config(num_players=6))
    assert all(encode.describe_action(a) for a in range(R.NUM_ACTIONS))


def test_action_and_observation_tables_match_the_encoder_docstring():
    names = encode.ACTION_NAMES
    table = {0: "play:dagger>seat+1", 44: "play:bladed_shield>seat+5", 45: "play:fate>self", 50: "play:fate>seat+5",
             51: "play:scythe", 56: "play:doom_dragon", 57: "equip:spiked_glove", 59: "equip:satchel",
             60: "combo:dagger+poison>seat+1", 84: "combo:bladed_shield+poison>seat+5", 85: "token:draw",
             86: "forfeit:discard_dagger", 108: "forfeit:discard_doom_dragon", 109: "forfeit:empty_hand",
             110: "react:wooden_shield", 115: "react:hook_rope", 116: "react:none", 117: "pick:dagger",
             139: "pick:doom_dragon", 140: "token:pass"}
    assert {i: names[i] for i in table} == table
    assert (encode.HAND.start, encode.PHASE.start, encode.ACTIONS_LEFT, encode.TURN_OF.start) == (66, 89, 94, 95)
    assert (encode.PENDING_CARD.start, encode.PENDING_DAMAGE, encode.ATTACKER.start, encode.TARGET.start) == (
        101, 108, 111, 117)
    assert (encode.SHIELD_RAISED.start, encode.OFFERED.start, encode.PICK_SOURCE.start, encode.DECK) == (
        123, 126, 149, 151)
    assert (encode.DISCARD.start, encode.TURN, encode.KNOWN.start, encode.V1_OBSERVATION_SIZE) == (152, 175, 176, 291)
    assert (encode.DRAW_WINDOW, encode.DRAW_BOUNDARY, encode.OBSERVATION_SIZE) == (291, 292, 293)
    assert encode.observation_size(R.Config()) == 293 and encode.observation_size(R.ConfigV1()) == 291
    assert encode.observation_size(R.Config(token_timing=R.OWN_TURN)) == 291


def test_illegal_action_raises_and_changes_nothing():
    state = table(hands={0: {"dagger": 1}})
    before = (encode.view(state, 0), list(state.deck), list(state.hp), state.decisions)
    with pytest.raises(IllegalActionError, match=r"play:sword>seat\+1.*legal now: play:dagger>seat\+1"):
        R.apply(state, GAME.action_index(state.config, "play:sword>seat+1"))
    with pytest.raises(IllegalActionError):
        R.apply(state, 9999)
    assert (encode.view(state, 0), list(state.deck), list(state.hp), state.decisions) == before


# --- setup and the turn --------------------------------------------------------------------------------


def test_setup_rolls_for_first_player_and_high_ties_reroll():
    shuffle = [(i + 1, 0) for i in range(99, 0, -1)]
    chance = Chance.scripted([face(6), face(6), face(2), face(3), face(5), *shuffle])
    state = R.new_game(R.Config(num_players=3, token_timing=R.OWN_TURN), chance)
    assert chance.exhausted
    assert state.initiative_rolls == [[6, 6, 2], [3, 5, 0]]
    assert state.first_seat == state.turn_seat == state.to_act == 1
    assert [sum(h) for h in state.hands] == [6, 6, 6]
    assert state.tokens == [2, 2, 2] and state.hp == [10, 10, 10] and state.actions_left == 2
    assert R.card_total(state) == 100


def test_turn_start_poison_damage_then_draw_up_to_six():
    state = table(n=2, hands={0: {"dagger": 2}, 1: {"potion": 2}}, hp={1: 5}, poison={1: 3})
    act(state, "forfeit:discard_dagger")
    assert state.turn_seat == 0 and state.actions_left == 1
    act(state, "forfeit:discard_dagger")
    assert state.turn_seat == 1 and state.hp[1] == 2 and sum(state.hands[1]) == 6


def test_poison_never_takes_a_player_below_one_hp():
    state = table(n=2, hands={0: {"dagger": 2}}, hp={1: 2}, poison={1: 4})
    act(state, "forfeit:discard_dagger")
    act(state, "forfeit:discard_dagger")
    assert state.turn_seat == 1 and state.hp[1] == 1 and state.alive[1]


def test_satchel_draws_up_to_seven():
    state = table(n=2, hands={0: {"dagger": 2}}, equipment={1: {"satchel": 1}})
    act(state, "forfeit:discard_dagger")
    act(state, "forfeit:discard_dagger")
    assert sum(state.hands[1]) == 7


def test_forfeit_discards_and_a_dark_card_costs_one_hp():
    state = table(n=3, hands={0: {"doom_dragon": 1, "dagger": 1}})
    act(state, "forfeit:discard_doom_dragon")
    assert state.hp[0] == 9 and state.discard[R.DOOM_DRAGON] == 1


def test_discarding_a_dark_card_at_one_hp_is_fatal():
    state = table(n=3, hands={0: {"plague_skull": 1, "dagger": 1}}, hp={0: 1})
    act(state, "forfeit:discard_plague_skull")
    assert not state.alive[0] and R.seats_out(state) == [0]
    assert R.returns(state) == (-0.5, 0.0, 0.0)
    assert state.turn_seat == 1 and not R.is_terminal(state)


def test_empty_hand_forfeits_without_discarding():
    state = table(n=2, tokens={0: 0})
    assert legal(state) == ["forfeit:empty_hand"]
    act(state, "forfeit:empty_hand")
    assert state.actions_left == 1


def test_equipping_uses_no_action_and_respects_the_limits():
    state = table(n=2, hands={0: {"spiked_glove": 2, "armor": 2, "satchel": 1}})
    act(state, "equip:spiked_glove")
    act(state, "equip:spiked_glove")
    act(state, "equip:armor")
    assert "equip:armor" not in legal(state) and "equip:spiked_glove" not in legal(state)
    act(state, "equip:satchel")
    assert state.equipment[0] == [2, 1, 1] and state.actions_left == 2 and state.turn_seat == 0


def test_card_draw_token_draws_three_and_uses_no_action():
    state = table(n=2, hands={0: {"dagger": 1}})
    act(state, "token:draw")
    assert state.tokens[0] == 1 and sum(state.hands[0]) == 4 and state.actions_left == 2


def test_empty_deck_is_reshuffled_from_the_discard_pile():
    state = table(n=2, hands={0: {"dagger": 1}})
    state.discard = [0] * R.NUM_KINDS
    for kind in state.deck:
        state.discard[kind] += 1
    state.deck = []
    state.chance = Chance(3)
    act(state, "token:draw")
    assert sum(state.hands[0]) == 4 and len(state.deck) == 96 and sum(state.discard) == 0


# --- Card Draw tokens at any time (v2, interpretation 20) -----------------------------------------------
# "Card Draw tokens can be played at any time to draw three free cards per token from the deck. Note:
# Players cannot use Card Draw tokens as a reaction to an opponent's attack."


def on_top(state, *names):
    """Put these cards on top of the deck, the first named drawn first."""
    for name in reversed(names):
        state.deck.remove(R.KINDS.index(name))
        state.deck.append(R.KINDS.index(name))


def test_a_token_drawn_between_an_opponents_two_attacks_can_stop_the_second():
    state = table(n=3, hands={0: {"sword": 2}, 1: {"dagger": 1}}, token_timing=R.ANY_TIME)
    on_top(state, "steel_shield", "potion", "potion")
    act(state, "play:sword>seat+1")  # no shield yet: no reaction, 3 damage; the action is complete
    assert state.hp[1] == 7 and state.phase == R.DRAW_PHASE and state.window == [1, 2] and state.to_act == 1
    assert legal(state) == ["token:draw", "token:pass"]
    act(state, "token:draw")
    assert hand(state, 1) == {"dagger": 1, "steel_shield": 1, "potion": 2} and state.tokens[1] == 1
    assert state.to_act == 1 and legal(state) == ["token:draw", "token:pass"]  # a token left: asked again
    act(state, "token:pass")
    assert state.to_act == 2
    act(state, "token:pass")
    assert state.phase == R.MAIN and state.to_act == 0 and state.actions_left == 1 and state.tokens == [2, 1, 2]
    act(state, "play:sword>seat+1")
    assert state.phase == R.REACT_PHASE and legal(state) == ["react:steel_shield", "react:none"]
    act(state, "react:steel_shield")
    assert state.hp[1] == 6


def test_no_draw_is_offered_while_an_attack_on_you_is_pending():
    state = table(n=2, hands={0: {"sword": 1, "hook_rope": 1, "dagger": 1}, 1: {"wooden_shield": 1}},
                  token_timing=R.ANY_TIME)
    act(state, "play:sword>seat+1")
    assert state.phase == R.REACT_PHASE and state.to_act == 1 and state.tokens[1] == 2
    assert "token:draw" not in legal(state)  # not as a reaction
    act(state, "react:wooden_shield")
    assert state.phase == R.ANSWER and "token:draw" not in legal(state)  # the attack is still pending
    act(state, "react:none")
    assert state.hp[1] == 8 and state.phase == R.DRAW_PHASE and state.to_act == 1  # now it is over


def test_a_seat_with_no_tokens_is_never_asked():
    state = table(n=4, hands={0: {"dagger": 2}}, tokens={1: 0, 2: 1, 3: 0}, token_timing=R.ANY_TIME)
    act(state, "play:dagger>seat+1")
    assert state.window == [2] and state.to_act == 2
    act(state, "token:draw")  # its last token: not asked again
    assert state.phase == R.MAIN and state.to_act == 0
    state.tokens = [0, 0, 0, 0]
    act(state, "play:dagger>seat+2")  # the last action: the turn passes at once, nobody holds a token
    assert state.phase == R.MAIN and state.turn_seat == state.to_act == 1


def test_equipping_and_the_players_own_token_open_no_window():
    state = table(n=2, hands={0: {"armor": 1, "dagger": 1}}, token_timing=R.ANY_TIME)
    act(state, "equip:armor")
    act(state, "token:draw")
    assert state.phase == R.MAIN and state.to_act == 0 and state.actions_left == 2


def test_a_window_opens_after_an_action_that_needed_a_pick():
    state = table(n=2, hands={0: {"magnifying_glass": 1, "dagger": 1}}, token_timing=R.ANY_TIME)
    on_top(state, "potion", "remedy")
    dice(state, face(2))
    act(state, "play:magnifying_glass")
    assert state.phase == R.PICK_PHASE and "token:draw" not in legal(state)
    act(state, "pick:potion")
    assert state.phase == R.DRAW_PHASE and state.to_act == 1 and state.window_next == -1


def test_the_turn_boundary_asks_everyone_but_the_next_player_and_the_last_player_last():
    state = table(n=3, hands={0: {"dagger": 2}}, token_timing=R.ANY_TIME)
    act(state, "forfeit:discard_dagger")
    act(state, "token:pass")
    act(state, "token:pass")
    act(state, "forfeit:discard_dagger")  # the turn ends: player_1 plays next and draws in its own turn
    assert state.phase == R.DRAW_PHASE and state.window == [2, 0] and state.window_next == 1
    assert state.turn_seat == 0 and state.turn == 1
    act(state, "token:pass")
    act(state, "token:draw")  # player_0, after its own last action
    assert state.to_act == 0 and sum(state.hands[0]) == 3
    act(state, "token:pass")
    assert state.phase == R.MAIN and state.turn_seat == state.to_act == 1 and state.turn == 2
    assert sum(state.hands[1]) == 6  # its turn began: drawn up to six


def test_the_turn_boundary_skips_past_a_tripped_player():
    state = table(n=3, hands={0: {"trip_rope": 1, "dagger": 1}}, token_timing=R.ANY_TIME, tokens={1: 1, 2: 1})
    act(state, "play:trip_rope>seat+1")
    act(state, "token:pass")
    act(state, "token:pass")
    act(state, "forfeit:discard_dagger")
    assert state.window == [1, 0]  # player_1's turn is skipped: player_2 plays next and is not asked
    act(state, "token:pass")
    act(state, "token:pass")
    assert state.turn_seat == 2 and state.skips[1] == 0


def test_before_the_first_turn_everyone_but_the_first_player_is_asked():
    state = R.new_game(R.Config(num_players=4), Chance(5))
    first = state.first_seat
    assert state.phase == R.DRAW_PHASE and state.turn == 0
    assert state.window == [(first + k) % 4 for k in (1, 2, 3)] and state.window_next == first
    for _ in range(3):
        act(state, "token:pass")
    assert state.phase == R.MAIN and state.turn_seat == state.to_act == first and state.turn == 1
    assert R.new_game(R.Config(num_players=4, token_timing=R.OWN_TURN), Chance(5)).phase == R.MAIN


def test_a_window_in_the_observation_view_and_rendering():
    state = table(n=3, hands={0: {"dagger": 2}}, token_timing=R.ANY_TIME)
    act(state, "play:dagger>seat+1")
    out = np.zeros(encode.OBSERVATION_SIZE, np.float32)
    encode.encode(state, 1, out)
    assert out[encode.DRAW_WINDOW] == 1 and out[encode.DRAW_BOUNDARY] == 0 and not out[encode.PHASE].any()
    assert out[encode.player_block(0) + encode.DECIDES] == 1
    view = encode.view(state, 2)
    assert view["phase"] == "draw" and view["draw_window"] == {"seat": 1, "asked": [1, 2], "turn_boundary": False}
    assert "Card Draw window between player_0's actions: player_1 may use a token (draw 3) or pass; then " \
           "player_2" in encode.render(state, 2)
    assert [encode.action_label(state, a) for a in R.legal_actions(state)] == [
        "Card Draw token (draw 3)", "no draw now (keep the tokens)"]
    act(state, "token:pass")
    act(state, "token:pass")
    act(state, "forfeit:discard_dagger")
    encode.encode(state, 2, out)
    assert out[encode.DRAW_WINDOW] == out[encode.DRAW_BOUNDARY] == 1
    assert "Card Draw window at the turn boundary" in encode.render(state)


# --- attacks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("card, damage", [("dagger", 1), ("hatchet", 2), ("sword", 3)])
def test_attack_cards_deal_their_damage(card, damage):
    state = table(hands={0: {card: 1}})
    act(state, f"play:{card}>seat+2")
    assert state.hp == [10, 10, 10 - damage, 10] and state.actions_left == 1


def test_spiked_gloves_add_and_armor_subtracts():
    state = table(n=2, hands={0: {"dagger": 2}}, equipment={0: {"spiked_glove": 2}, 1: {"armor": 1}})
    act(state, "play:dagger>seat+1")
    assert state.hp[1] == 10 - (1 + 2 - 1)


def test_flame_shot_damages_and_destroys_equipment_first():
    state = table(n=2, hands={0: {"flame_shot": 1}, 1: {"dagger": 1, "poison": 2}}, equipment={1: {"armor": 1}})
    dice(state, (1, 0), (3, 1))  # the armor, then the second card of dagger, poison, poison
    act(state, "play:flame_shot>seat+1")
    assert state.hp[1] == 9  # 2 damage, 1 blocked by the armor it still wore
    assert state.equipment[1] == [0, 0, 0] and hand(state, 1) == {"dagger": 1, "poison": 1}
    assert state.discard[R.ARMOR] == 1 and state.discard[R.POISON] == 1


def test_scythe_hits_everyone_unblockably_and_keeps_one_taken_card():
    state = table(n=3, hands={0: {"scythe": 1}, 1: {"sword": 1, "wooden_shield": 1}, 2: {"potion": 1}})
    dice(state, (2, 0), (1, 0))  # seat 1 loses its sword, seat 2 its potion
    act(state, "play:scythe")
    assert state.hp == [10, 9, 9] and state.phase == R.PICK_PHASE and state.to_act == 0
    assert state.known[1][0] == [0] * R.NUM_KINDS  # nobody learns which card the scythe's player keeps
    assert legal(state) == ["pick:sword", "pick:potion"]
    act(state, "pick:sword")
    assert hand(state, 0) == {"sword": 1} and state.discard[R.POTION] == 1
    assert hand(state, 1) == {"wooden_shield": 1} and state.phase == R.MAIN and state.actions_left == 1


def test_scythe_attacks_first_then_takes_from_the_hand_left_after_the_hit():
    # "Attack each opponent for 1 HP and take one card from each": a player saved by the Resurrection
    # Scepter keeps it until the hit (it revives them), and the card comes from the new hand; a player the
    # hit puts out has no card left to take.
    state = table(n=3, hands={0: {"scythe": 1}, 1: {"resurrection_scepter": 1, "sword": 1}, 2: {"dagger": 1}},
                  hp={1: 1, 2: 1})
    for _ in range(6):  # the revived player's six new cards: potions on top of the deck (its last cards)
        state.deck.remove(R.POTION)
    state.deck += [R.POTION] * 6
    dice(state, face(4), (6, 0))  # the scepter's roll, then the first of the six potions
    act(state, "play:scythe")
    assert state.hp[1] == 4 and state.alive[1] and not state.alive[2]
    assert hand(state, 1) == {"potion": 5} and state.discard[R.RESURRECTION_SCEPTER] == 1
    assert hand(state, 0) == {"potion": 1} and state.phase == R.MAIN  # one card taken: nothing to choose


def test_scythe_equips_a_taken_equippable():
    state = table(n=2, hands={0: {"scythe": 1}}, equipment={1: {"spiked_glove": 1}})
    dice(state, (1, 0))
    act(state, "play:scythe")
    assert state.equipment[0][R.GLOVES] == 1 and state.equipment[1][R.GLOVES] == 0


def test_bladed_shield_attacks_with_a_die_roll():
    state = table(n=2, hands={0: {"bladed_shield": 1}})
    dice(state, face(5))
    act(state, "play:bladed_shield>seat+1")
    assert state.hp[1] == 5


# --- potions ---------------------------------------------------------------------------------------


def test_potion_heals_two_up_to_the_cap_and_draws_one():
    state = table(n=2, hands={0: {"potion": 2}}, hp={0: 7})
    act(state, "play:potion")
    assert state.hp[0] == 9 and sum(state.hands[0]) == 2
    act(state, "play:potion")
    assert state.hp[0] == 10


def test_remedy_cures_one_token_and_needs_one():
    state = table(n=2, hands={0: {"remedy": 2}})
    assert "play:remedy" not in legal(state)
    state.poison[0] = 2
    act(state, "play:remedy")
    assert state.poison[0] == 1


def test_poison_places_a_token_and_shields_cannot_stop_it():
    state = table(n=2, hands={0: {"poison": 1}, 1: {"steel_shield": 1, "confusion_dust": 1}})
    act(state, "play:poison>seat+1")
    assert state.poison[1] == 1 and state.phase == R.MAIN and state.to_act == 0


def test_remedy_reaction_blocks_a_poison_card():
    state = table(n=2, hands={0: {"poison": 1}, 1: {"remedy": 1}})
    act(state, "play:poison>seat+1")
    assert state.to_act == 1 and legal(state) == ["react:remedy", "react:none"]
    act(state, "react:remedy")
    assert state.poison[1] == 0 and state.to_act == 0 and state.actions_left == 1


def test_five_poison_tokens_remove_a_player():
    state = table(n=3, hands={0: {"poison": 1}}, poison={1: 4})
    act(state, "play:poison>seat+1")
    assert not state.alive[1] and state.hp[1] == 10 and R.seats_out(state) == [1]
    assert R.returns(state)[1] == -0.5 and sum(state.hands[1]) == 0


# --- utilities -------------------------------------------------------------------------------------


def test_magnifying_glass_draws_the_roll_and_keeps_one():
    state = table(n=2, hands={0: {"magnifying_glass": 1}})
    state.deck[-3:] = [R.DAGGER, R.SWORD, R.SWORD]
    dice(state, face(3))
    act(state, "play:magnifying_glass")
    assert legal(state) == ["pick:dagger", "pick:sword"]
    act(state, "pick:dagger")
    assert hand(state, 0) == {"dagger": 1} and state.discard[R.SWORD] == 2


def test_magnifying_glass_of_one_kind_needs_no_pick():
    state = table(n=2, hands={0: {"magnifying_glass": 1}})
    state.deck[-2:] = [R.SWORD, R.SWORD]
    dice(state, face(2))
    act(state, "play:magnifying_glass")
    assert hand(state, 0) == {"sword": 1} and state.phase == R.MAIN and state.discard[R.SWORD] == 1


def test_hook_rope_steals_a_random_card():
    state = table(n=2, hands={0: {"hook_rope": 1}, 1: {"dagger": 1, "sword": 1}})
    dice(state, (2, 1))
    act(state, "play:hook_rope>seat+1")
    assert hand(state, 0) == {"sword": 1} and hand(state, 1) == {"dagger": 1}


def test_hook_rope_needs_something_to_steal_and_equips_stolen_equipment():
    state = table(n=3, hands={0: {"hook_rope": 1}}, equipment={1: {"armor": 1}})
    assert legal(state).count("play:hook_rope>seat+1") == 1 and "play:hook_rope>seat+2" not in legal(state)
    dice(state, (1, 0))
    act(state, "play:hook_rope>seat+1")
    assert state.equipment[0][R.ARMOR_SLOT] == 1 and state.equipment[1][R.ARMOR_SLOT] == 0


def test_hook_rope_steals_only_from_the_hand_under_the_house_rule():
    state = table(n=2, hands={0: {"hook_rope": 1}}, equipment={1: {"armor": 1}}, steal_equipment=False)
    assert "play:hook_rope>seat+1" not in legal(state)


def test_swap_rope_swaps_hands():
    state = table(n=2, hands={0: {"swap_rope": 1, "dagger": 1}, 1: {"sword": 2}})
    act(state, "play:swap_rope>seat+1")
    assert hand(state, 0) == {"sword": 2} and hand(state, 1) == {"dagger": 1}


# --- memory: what a seat knows of the others' hands ------------------------------------------------


def known(state, observer, holder):
    return {R.KINDS[k]: c for k, c in enumerate(state.known[observer][holder]) if c}


def test_a_swap_rope_tells_each_player_the_hand_it_gave_away():
    state = table(n=3, hands={0: {"swap_rope": 1, "dagger": 2}, 1: {"sword": 1}})
    act(state, "play:swap_rope>seat+1")
    assert known(state, 0, 1) == {"dagger": 2} and known(state, 1, 0) == {"sword": 1}
    assert known(state, 2, 0) == known(state, 2, 1) == {}
    act(state, "play:sword>seat+1")  # played in public: seat 1 knows seat 0 no longer holds it
    assert known(state, 1, 0) == {}
    obs = GAME.encoder  # the memory is in the observation and the view of seat 0, not of seat 2
    out = np.zeros(encode.OBSERVATION_SIZE, dtype=np.float32)
    encode.encode(state, 0, out)
    assert out[encode.KNOWN.start + R.DAGGER] == pytest.approx(2 / R.COUNTS[R.DAGGER])
    assert out[encode.KNOWN].sum() == pytest.approx(2 / R.COUNTS[R.DAGGER])
    encode.encode(state, 2, out)
    assert not out[encode.KNOWN].any()
    assert obs.view(state, 0)["players"][1]["known_cards"] == {"dagger": 2}
    assert "known_cards" not in obs.view(state, 2)["players"][1]


def test_a_hooked_card_is_known_to_thief_and_victim_only_and_unseen_losses_spoil_what_others_knew():
    state = table(n=3, hands={0: {"swap_rope": 1, "dagger": 1, "sword": 1}, 1: {"hook_rope": 1}})
    act(state, "play:swap_rope>seat+1")  # seat 1 now holds dagger + sword, and seat 0 knows it
    assert known(state, 0, 1) == {"dagger": 1, "sword": 1}
    state.turn_seat = state.to_act = 2
    state.hands[2][R.HOOK_ROPE] += 1
    state.deck.remove(R.HOOK_ROPE)
    state.actions_left = 2
    dice(state, (2, 1))  # the sword
    act(state, "play:hook_rope>seat+2")  # seat 2 hooks from seat 1
    assert known(state, 1, 2) == {"sword": 1} and known(state, 0, 2) == {}
    assert known(state, 0, 1) == {}  # seat 0 saw a card go, not which: it can count on neither


def test_a_shield_hooked_in_public_is_known_to_everyone():
    state = table(n=3, hands={0: {"sword": 1, "hook_rope": 1}, 1: {"steel_shield": 1}})
    act(state, "play:sword>seat+1")
    act(state, "react:steel_shield")
    act(state, "react:hook_rope")
    assert known(state, 1, 0) == known(state, 2, 0) == {"steel_shield": 1}


def test_trip_rope_skips_the_next_turn():
    state = table(n=3, hands={0: {"trip_rope": 1, "dagger": 1}})
    act(state, "play:trip_rope>seat+1")
    act(state, "forfeit:discard_dagger")
    assert state.turn_seat == 2 and state.skips[1] == 0 and sum(state.hands[1]) == 0


# --- reactions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shield, damage", [("wooden_shield", 2), ("steel_shield", 1)])
def test_shields_reduce_physical_damage(shield, damage):
    state = table(n=2, hands={0: {"sword": 1}, 1: {shield: 1}})
    act(state, "play:sword>seat+1")
    assert state.to_act == 1 and legal(state) == [f"react:{shield}", "react:none"]
    act(state, f"react:{shield}")
    assert state.hp[1] == 10 - damage and state.to_act == 0


def test_no_reaction_offers_no_decision_and_tokens_are_not_reactions():
    state = table(n=2, hands={0: {"sword": 1}, 1: {"wooden_shield": 1}})
    act(state, "play:sword>seat+1")
    assert "token:draw" not in legal(state)
    act(state, "react:none")
    assert state.hp[1] == 7


def test_bladed_shield_defends_with_a_die_roll():
    state = table(n=2, hands={0: {"sword": 1}, 1: {"bladed_shield": 1}})
    act(state, "play:sword>seat+1")
    dice(state, face(2))
    act(state, "react:bladed_shield")
    assert state.hp[1] == 9


def test_hook_rope_answers_a_shield_and_keeps_it():
    state = table(n=2, hands={0: {"sword": 1, "hook_rope": 1}, 1: {"steel_shield": 1}})
    act(state, "play:sword>seat+1")
    act(state, "react:steel_shield")
    assert state.phase == R.ANSWER and state.to_act == 0 and legal(state) == ["react:hook_rope", "react:none"]
    act(state, "react:hook_rope")
    assert state.hp[1] == 7 and hand(state, 0) == {"steel_shield": 1} and state.discard[R.HOOK_ROPE] == 1
    assert state.actions_left == 1 and state.phase == R.MAIN


def test_declining_to_hook_lets_the_shield_block():
    state = table(n=2, hands={0: {"sword": 1, "hook_rope": 1}, 1: {"steel_shield": 1}})
    act(state, "play:sword>seat+1")
    act(state, "react:steel_shield")
    act(state, "react:none")
    assert state.hp[1] == 9 and hand(state, 0) == {"hook_rope": 1}


def test_confusion_dust_deflects_a_combo_onto_its_attacker():
    state = table(n=2, hands={0: {"sword": 1, "poison": 1}, 1: {"confusion_dust": 1, "steel_shield": 1}},
                  equipment={0: {"armor": 1}})
    act(state, "combo:sword+poison>seat+1")
    assert legal(state) == ["react:steel_shield", "react:confusion_dust", "react:none"]
    act(state, "react:confusion_dust")
    # Unblockable: the attacker's armor does not help (armor_vs_unblockable is off by default).
    assert state.hp == [7, 10] and state.poison == [1, 0]


def test_resurrection_scepter_revives_with_a_die_roll():
    state = table(n=2, hands={0: {"sword": 1}, 1: {"resurrection_scepter": 1, "dagger": 1}}, hp={1: 2})
    dice(state, face(4))
    act(state, "play:sword>seat+1")
    assert state.alive[1] and state.hp[1] == 4 and sum(state.hands[1]) == 6 and state.tokens[1] == 3
    assert state.discard[R.RESURRECTION_SCEPTER] == 1 and state.discard[R.DAGGER] == 1


# --- combos --------------------------------------------------------------------------------------


def test_poison_combo_is_one_action_and_poisons_when_damage_lands():
    state = table(n=2, hands={0: {"hatchet": 1, "poison": 1}})
    act(state, "combo:hatchet+poison>seat+1")
    assert state.hp[1] == 8 and state.poison[1] == 1 and state.actions_left == 1


def test_poison_combo_fully_blocked_delivers_no_poison():
    state = table(n=2, hands={0: {"dagger": 1, "poison": 1}, 1: {"steel_shield": 1}})
    act(state, "combo:dagger+poison>seat+1")
    assert legal(state) == ["react:steel_shield", "react:none"]  # no Remedy held
    act(state, "react:steel_shield")
    assert state.hp[1] == 10 and state.poison[1] == 0


def test_shield_does_not_stop_a_combos_poison_once_damage_gets_through():
    state = table(n=2, hands={0: {"sword": 1, "poison": 1}, 1: {"wooden_shield": 1}})
    act(state, "combo:sword+poison>seat+1")
    act(state, "react:wooden_shield")
    assert state.hp[1] == 8 and state.poison[1] == 1


def test_remedy_blocks_a_combos_poison_but_not_its_damage():
    state = table(n=2, hands={0: {"sword": 1, "poison": 1}, 1: {"remedy": 1}})
    act(state, "combo:sword+poison>seat+1")
    act(state, "react:remedy")
    assert state.hp[1] == 7 and state.poison[1] == 0


@pytest.mark.parametrize("card", ["dagger", "hatchet", "sword", "flame_shot", "bladed_shield"])
def test_every_attack_combines_with_poison(card):
    state = table(n=2, hands={0: {card: 1, "poison": 1}, 1: {"dagger": 3}})
    dice(state, *([face(4)] if card == "bladed_shield" else []), *([(3, 0), (2, 0)] if card == "flame_shot" else []))
    act(state, f"combo:{card}+poison>seat+1")
    assert state.poison[1] == 1 and state.hp[1] < 10 and state.discard[R.POISON] == 1


# --- multi cards ----------------------------------------------------------------------------------


@pytest.mark.parametrize("roll, hp, poison", [(1, 8, 0), (2, 8, 0), (3, 6, 1), (4, 6, 1), (5, 8, 0), (6, 8, 0)])
def test_fate_table(roll, hp, poison):
    state = table(n=2, hands={0: {"fate": 1}}, hp={1: 6 if roll >= 3 else 10})
    dice(state, face(roll))
    act(state, "play:fate>seat+1")
    assert (state.hp[1], state.poison[1]) == (hp, poison)


def test_fate_attack_can_be_shielded_and_fate_on_self_heals():
    state = table(n=2, hands={0: {"fate": 2}, 1: {"wooden_shield": 1}}, hp={0: 5}, fate_on_self=True)
    dice(state, face(1))
    act(state, "play:fate>seat+1")
    act(state, "react:wooden_shield")
    assert state.hp[1] == 9
    dice(state, face(6))
    act(state, "play:fate>self")
    assert state.hp[0] == 7


def test_fate_targets_opponents_only_unless_the_house_allows_yourself():
    # "Select who to use the Fate card on, then roll the die to determine if your opponent is attacked ..."
    state = table(n=3, hands={0: {"fate": 1}})
    assert not R.Config().fate_on_self
    assert [name for name in legal(state) if "fate" in name] == ["play:fate>seat+1", "play:fate>seat+2",
                                                                  "forfeit:discard_fate"]
    with pytest.raises(IllegalActionError, match="play:fate>self"):
        act(state, "play:fate>self")
    assert "play:fate>self" in legal(table(n=3, hands={0: {"fate": 1}}, fate_on_self=True))


# --- dark cards -----------------------------------------------------------------------------------


def test_plague_skull_poisons_everyone_including_its_player():
    state = table(n=3, hands={0: {"plague_skull": 1}}, poison={2: 4})
    act(state, "play:plague_skull")
    assert state.poison == [1, 1, 5] and R.seats_out(state) == [2]


def test_plague_skull_can_put_everyone_out_in_a_draw():
    state = table(n=3, hands={0: {"plague_skull": 1}}, poison={0: 4, 1: 4, 2: 4})
    act(state, "play:plague_skull")
    assert R.is_terminal(state) and state.end_reason == R.ALL_OUT and not R.is_truncated(state)
    assert R.returns(state) == (0.0, 0.0, 0.0) and state.winner == -1


def test_doom_dragon_destroys_two_cards_of_everyone():
    state = table(n=3, hands={0: {"doom_dragon": 1, "dagger": 2, "sword": 1}, 1: {"potion": 3},
                              2: {"remedy": 1}}, equipment={1: {"armor": 1}})
    dice(state, (1, 0), (3, 0), (1, 0), (3, 0), (2, 1))
    act(state, "play:doom_dragon")
    assert state.equipment[1] == [0, 0, 0] and hand(state, 1) == {"potion": 2}
    assert hand(state, 2) == {} and hand(state, 0) == {"dagger": 1}
    assert state.discard[R.DOOM_DRAGON] == 1


# --- the end -------------------------------------------------------------------------------------


def test_last_player_alive_wins_and_the_finishing_order_is_recorded():
    state = table(n=3, hands={0: {"sword": 2}}, hp={1: 3, 2: 2})
    act(state, "play:sword>seat+2")
    assert R.seats_out(state) == [2] and R.returns(state) == (0.0, 0.0, -0.5)
    act(state, "play:sword>seat+1")
    assert R.is_terminal(state) and state.end_reason == R.LAST_STANDING and not R.is_truncated(state)
    assert R.returns(state) == (1.0, -0.5, -0.5) and state.finishing_order == [0, 1, 2]
    assert R.current_seat(state) == -1 and R.legal_actions(state) == []


def test_the_turn_limit_truncates_with_no_winner():
    state = table(n=3, hands={0: {"sword": 1, "dagger": 1}}, hp={1: 3}, max_turns=1)
    act(state, "play:sword>seat+1")
    act(state, "forfeit:discard_dagger")
    assert R.is_terminal(state) and R.is_truncated(state) and state.end_reason == R.TURN_LIMIT
    assert R.returns(state) == (0.0, -0.5, 0.0) and state.finishing_order == [0, 2, 1]


def test_the_decision_limit_truncates():
    state = table(n=2, hands={0: {"dagger": 2}}, max_decisions=1)
    act(state, "forfeit:discard_dagger")
    assert R.is_truncated(state) and state.end_reason == R.DECISION_LIMIT
    assert R.max_game_length(state.config) == 1


# --- observations --------------------------------------------------------------------------------


def test_observation_is_egocentric_and_shows_the_pending_attack():
    import numpy as np

    state = table(n=3, hands={0: {"sword": 1}, 1: {"steel_shield": 1}}, hp={2: 4}, poison={1: 2})
    act(state, "play:sword>seat+1")
    out = np.empty(encode.OBSERVATION_SIZE, np.float32)
    encode.encode(state, 1, out)
    assert out[encode.PRESENT] == 1 and out[encode.DECIDES] == 1 and out[encode.POISON_TOKENS] == 2 / 5
    assert out[encode.player_block(1) + encode.HP] == 4 / 10  # seat 2 is seat+1 of seat 1
    assert out[encode.player_block(2) + encode.PRESENT] == 1  # seat 0 is seat+2 of seat 1
    assert out[encode.player_block(3)] == 0  # no seat+3 at a 3-player table
    assert out[encode.HAND.start + R.STEEL_SHIELD] == 1 / 8
    assert out[encode.PHASE.start + R.REACT_PHASE] == 1
    assert out[encode.PENDING_CARD.start + encode.PENDING_CARDS.index(R.SWORD)] == 1
    assert out[encode.PENDING_DAMAGE] == 0.3 and out[encode.ATTACKER.start + 2] == 1
    assert out[encode.TARGET.start + 0] == 1 and out[encode.TURN_OF.start + 2] == 1
    assert out.min() >= 0 and out.max() <= 1


def test_offered_cards_are_seen_only_by_the_picker():
    state = table(n=3, hands={0: {"magnifying_glass": 1}})
    state.deck[-2:] = [R.DAGGER, R.SWORD]
    dice(state, face(2))
    act(state, "play:magnifying_glass")
    assert encode.view(state, 0)["pick"]["cards"] == {"dagger": 1, "sword": 1}
    assert "cards" not in encode.view(state, 1)["pick"]
    assert all("dagger" not in text for text in encode.view(state, 1)["last_events"])
    assert "hand" not in encode.view(state, 1)["players"][0]
    text = encode.render(state)
    assert "player_0" in text and "magnifying glass" in text


def test_a_seats_rendering_shows_its_own_hand_names_the_players_and_explains_its_codes():
    state = table(n=3, hands={0: {"hatchet": 1, "remedy": 1}, 1: {"sword": 2}}, equipment={1: {"armor": 1}})
    text = encode.render(state, seat=2)
    assert "player_2 (you)" in text and "your hand: no cards" in text
    assert "sword" not in text and "hatchet" not in text  # the other seats' hands are not shown
    assert "gear A" in text and "A Armor (+1 defence)" in text  # the code and its legend
    mine = encode.render(state, seat=0)
    assert "your hand: hatchet x1, remedy x1" in mine and "sword" not in mine
    assert "sword x2" in encode.render(state)  # the full table, for logs and replays, shows every hand
    labels = {encode.ACTION_NAMES[a]: encode.action_label(state, a) for a in R.legal_actions(state)}
    assert labels["play:hatchet>seat+2"] == "hatchet at player_2"
    assert labels["forfeit:discard_remedy"] == "forfeit: discard remedy"
    action = GAME.action_index(state.config, "play:hatchet>seat+2")
    assert encode.describe_action(action, state).startswith("play hatchet on player_2: ")
    assert "2 seat(s) after you" in encode.describe_action(action)
    act(state, "play:hatchet>seat+1")
    assert encode.events(state, 2) == (1, ["player_0 attacks player_1 with hatchet (2)", "player_1 takes 1 damage"])
