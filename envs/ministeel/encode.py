"""MiniSteel — what a seat sees: action names, the observation vector, the view and a rendering.

Hidden information: a seat sees its own hand (counts by card kind) and the cards offered to it by a
Magnifying Glass or a Scythe; of every other seat it sees HP, Poison tokens, Card Draw tokens, hand size,
equipment and skipped turns. The discard pile is public. Everything is egocentric: seats are named by
their offset from the observer (``seat+1`` is the next seat in turn order), and targets in action names
are offsets from the actor, so one policy plays every seat.

Actions (141, the same for 2-6 players; ``k`` is 1..5, a target offset that must name a seat in play;
140, without ``token:pass``, with ``token_timing=own_turn`` and in v1)
=================================================================================================
=======  ====================================  ===============================================================
idx      name                                  when legal (your turn, main phase, unless said otherwise)
=======  ====================================  ===============================================================
0-44     ``play:<card>>seat+k``                dagger, hatchet, sword, flame_shot, poison, hook_rope (the
                                               target has a card to steal), swap_rope, trip_rope,
                                               bladed_shield (attack): 5 targets each, in that order
45-50    ``play:fate>self``, ``play:fate>seat+k``  you hold Fate (on yourself only with ``fate_on_self``)
51-56    ``play:<card>``                       scythe, potion, remedy (you hold a Poison token),
                                               magnifying_glass, plague_skull, doom_dragon
57-59    ``equip:<card>``                      spiked_glove (< 2 worn), armor, satchel (< 1 worn); no action
60-84    ``combo:<attack>+poison>seat+k``      you hold the attack and a Poison: dagger, hatchet, sword,
                                               flame_shot, bladed_shield
85       ``token:draw``                        you hold a Card Draw token; no action. Also in a Card Draw
                                               window (phase draw, v2): you are asked, so you hold one
86-108   ``forfeit:discard_<card>``            you hold that card (one per kind, in ``KINDS`` order)
109      ``forfeit:empty_hand``                your hand is empty
110-116  ``react:<card>``, ``react:none``      wooden_shield, steel_shield, bladed_shield, confusion_dust,
                                               remedy: you are attacked and hold the card; hook_rope: your
                                               target raised a shield; none: either
117-139  ``pick:<card>``                       you keep that card of a Magnifying Glass draw or a Scythe haul
140      ``token:pass``                        a Card Draw window asks you (v2): keep your tokens for now
=======  ====================================  ===============================================================

Card Draw windows (v2, ``token_timing=any_time``): after each completed action of the turn's player
(its card fully resolved), at each turn boundary and before the first turn, every other seat in play
holding a token is asked in seat order (the next player is not asked at a boundary): ``token:draw``
(asked again while it holds a token) or ``token:pass``. docs/rules/ministeel.md, interpretation 20.

Observation (float32, all in [0, 1]; ``OBSERVATION_SIZE`` = 293; 291, v1's layout, with
``token_timing=own_turn`` and in v1)
=========================================================================================
Six 11-slot player blocks: ``me`` at 0-10, then ``seat+1`` .. ``seat+5`` at 11, 22, 33, 44, 55 (all zero
for offsets beyond the table). Then my hand at 66-88, the table at 89-175, my memory at 176-290 and the
Card Draw window at 291-292 (v2: appended, so every v1 index keeps its meaning).

Memory: what this seat has seen since the last shuffle. Its public part is the discard pile (152-174):
every card played, forfeited, destroyed or thrown away after a pick goes there, and a reshuffle empties
it into the deck. Its private part is ``KNOWN``: the cards this seat knows another seat holds in hand --
the hand it gave away with a Swap Rope (or received the other way round), the card a Hook Rope took
from it, a shield hooked away in public. Counts are lower bounds, kept from what this seat saw: a card
seen played lowers its kind by one; a card taken unseen lowers every kind by one (it might have been
any of them).

======  ==========================================================================
offset  player block (``PLAYER_BLOCK`` = 11)
======  ==========================================================================
0       present (the seat exists at this table)
1       alive (in the game)
2       HP / hp_cap
3       Poison tokens / poison_limit
4       Card Draw tokens / 4 (capped at 1)
5       cards in hand / 20 (capped at 1)
6       Spiked Gloves worn / 2
7       Armor worn
8       Satchel worn
9       turns to skip / 2 (capped at 1)
10      this seat decides now
======  ==========================================================================

=======  =========================================================================================
idx      hand and table
=======  =========================================================================================
66-88    my hand: count of each card kind / its copies in the deck (``KINDS`` order)
89-93    phase one-hot: main, react, answer, pick, over (all zero in a Card Draw window: 291)
94       actions left this turn / actions_per_turn
95-100   whose turn it is, by offset (0: me .. 5); in a turn-boundary window the turn just ended
         (before the first turn: the first player's)
101-107  pending attack card one-hot: dagger, hatchet, sword, flame_shot, bladed_shield, fate, poison
108      pending physical damage / 10 (capped at 1)
109      pending attack carries a Poison
110      pending attack is a combo
111-116  pending attacker, by offset
117-122  pending target, by offset
123-125  shield raised against the pending attack: wooden, steel, bladed
126-148  cards offered to me to keep one (count / copies in the deck); zero for every other seat
149-150  a pick is pending from: magnifying_glass, scythe
151      cards in the deck / 100
152-174  discard pile: count of each kind / its copies in the deck
175      turns begun / max_turns
176-290  ``KNOWN``: cards I know ``seat+k`` holds in hand, k = 1..5 (23 kinds each, ``KINDS`` order, at
         176 + 23 (k-1)): count / its copies in the deck; zero for offsets beyond the table
291      a Card Draw window is open (phase draw; the seat deciding has its block's slot 10 set)
292      ... at a turn boundary or before the first turn (0: between two actions of the turn's player)
=======  =========================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rules import (
    ACTION_CARD,
    ACTION_NAMES,
    ACTION_OFFSET,
    ACTION_TYPE,
    ANSWER,
    BLADED_SHIELD,
    CARD_TEXT,
    COMBO,
    COUNTS,
    DAGGER,
    DARK,
    DECK_SIZE,
    DRAW_PHASE,
    EQUIP,
    FATE,
    FLAME_SHOT,
    FORFEIT,
    FORFEIT_EMPTY,
    GAME_OVER,
    HATCHET,
    KINDS,
    MAGNIFYING_GLASS,
    MAX_PLAYERS,
    NO_DRAW,
    NUM_KINDS,
    PHASE_NAMES,
    PICK_PHASE,
    PLAY,
    PLAY_AT,
    POISON,
    REACT,
    REACT_PHASE,
    STEEL_SHIELD,
    SWORD,
    TOKEN,
    TOKEN_PASS,
    V1_NUM_ACTIONS,
    WOODEN_SHIELD,
    Config,
    State,
)
from .rules import (
    MAIN as MAIN_PHASE,
)

PLAYER_BLOCK = 11
PRESENT, ALIVE, HP, POISON_TOKENS, DRAW_TOKENS, HAND_SIZE, GLOVES, ARMOR, SATCHEL, SKIPS, DECIDES = range(11)
HAND = slice(MAX_PLAYERS * PLAYER_BLOCK, MAX_PLAYERS * PLAYER_BLOCK + NUM_KINDS)  # 66-88
PHASE = slice(HAND.stop, HAND.stop + 5)  # 89-93
ACTIONS_LEFT = PHASE.stop  # 94
TURN_OF = slice(ACTIONS_LEFT + 1, ACTIONS_LEFT + 7)  # 95-100
PENDING_CARDS = (DAGGER, HATCHET, SWORD, FLAME_SHOT, BLADED_SHIELD, FATE, POISON)
PENDING_CARD = slice(TURN_OF.stop, TURN_OF.stop + len(PENDING_CARDS))  # 101-107
PENDING_DAMAGE = PENDING_CARD.stop  # 108
PENDING_POISON = PENDING_DAMAGE + 1  # 109
PENDING_COMBO = PENDING_POISON + 1  # 110
ATTACKER = slice(PENDING_COMBO + 1, PENDING_COMBO + 7)  # 111-116
TARGET = slice(ATTACKER.stop, ATTACKER.stop + 6)  # 117-122
SHIELD_RAISED = slice(TARGET.stop, TARGET.stop + 3)  # 123-125
OFFERED = slice(SHIELD_RAISED.stop, SHIELD_RAISED.stop + NUM_KINDS)  # 126-148
PICK_SOURCE = slice(OFFERED.stop, OFFERED.stop + 2)  # 149-150
DECK = PICK_SOURCE.stop  # 151
DISCARD = slice(DECK + 1, DECK + 1 + NUM_KINDS)  # 152-174
TURN = DISCARD.stop  # 175
KNOWN = slice(TURN + 1, TURN + 1 + (MAX_PLAYERS - 1) * NUM_KINDS)  # 176-290
V1_OBSERVATION_SIZE = KNOWN.stop  # v1's layout, and v2's with token_timing=own_turn
DRAW_WINDOW = V1_OBSERVATION_SIZE  # 291: a Card Draw window is open (phase draw)
DRAW_BOUNDARY = DRAW_WINDOW + 1  # 292: ... at a turn boundary (0: between two actions of a turn)
OBSERVATION_SIZE = DRAW_BOUNDARY + 1
assert V1_OBSERVATION_SIZE == 291 and OBSERVATION_SIZE == 293

__all__ = ["ACTION_NAMES"]  # re-exported: the rules own the names


def player_block(offset: int) -> int:
    """Start of the block of the seat ``offset`` places after the observer (0: the observer)."""
    return offset * PLAYER_BLOCK


def action_names(config: Config) -> tuple[str, ...]:
    """All 141 names; without Card Draw windows (``own_turn``, v1) the first 140, v1's table."""
    return ACTION_NAMES if config.draw_windows else ACTION_NAMES[:V1_NUM_ACTIONS]


def observation_size(config: Config) -> int:
    """293 floats; without Card Draw windows (``own_turn``, v1) the first 291, v1's layout."""
    return OBSERVATION_SIZE if config.draw_windows else V1_OBSERVATION_SIZE


def _target_name(state: State | None, offset: int) -> str:
    """The player an action's target offset names, as a person reads it."""
    if offset == 0:
        return "yourself"
    if state is None:
        return f"the player {offset} seat(s) after you"
    return f"player_{(state.to_act + offset) % state.n}"


def describe_action(action: int, state: State | None = None) -> str:
    """A sentence for a person choosing among the legal actions; with the ``state`` a target is named
    (``player_2``), without it it is an offset from the actor."""
    kind, card, offset = ACTION_TYPE[action], ACTION_CARD[action], ACTION_OFFSET[action]
    who = _target_name(state, offset)
    if kind == PLAY_AT:
        return f"play {KINDS[card]} on {who}: {CARD_TEXT[card]}"
    if kind == PLAY:
        return f"play {KINDS[card]}: {CARD_TEXT[card]}"
    if kind == EQUIP:
        return f"equip {KINDS[card]} (no action): {CARD_TEXT[card]}"
    if kind == COMBO:
        return f"combo: {KINDS[card]} with a Poison on {who} (one action; the poison lands if damage does)"
    if kind == TOKEN:
        return "use a Card Draw token: draw three cards (no action)"
    if kind == NO_DRAW:
        return "keep your Card Draw tokens for now (you are asked again at the next Card Draw window)"
    if kind == FORFEIT:
        cost = " (a Dark card: costs 1 HP)" if card in DARK else ""
        return f"forfeit an action, discarding {KINDS[card]}{cost}"
    if kind == FORFEIT_EMPTY:
        return "forfeit an action (your hand is empty)"
    if kind == REACT:
        return "take the attack" if card < 0 else f"react with {KINDS[card]}"
    return f"keep {KINDS[card]}, discard the rest"


def _card(kind: int) -> str:
    return KINDS[kind].replace("_", " ")


def action_label(state: State, action: int) -> str:
    """An action as a person reads it, naming its target: ``hatchet at player_2``, ``react: steel shield``."""
    kind, card, offset = ACTION_TYPE[action], ACTION_CARD[action], ACTION_OFFSET[action]
    if kind == PLAY_AT:
        return f"{_card(card)} {'on' if card == FATE else 'at'} {_target_name(state, offset)}"
    if kind == COMBO:
        return f"{_card(card)} + poison at {_target_name(state, offset)}"
    if kind == PLAY:
        return _card(card)
    if kind == EQUIP:
        return f"equip {_card(card)}"
    if kind == TOKEN:
        return "Card Draw token (draw 3)"
    if kind == NO_DRAW:
        return "no draw now (keep the tokens)"
    if kind == FORFEIT:
        return f"forfeit: discard {_card(card)}" + (" (-1 HP)" if card in DARK else "")
    if kind == FORFEIT_EMPTY:
        return "forfeit (empty hand)"
    if kind == REACT:
        return "take it (no reaction)" if card < 0 else f"react: {_card(card)}"
    return f"keep {_card(card)}"


def action_parts(action: int, state: State) -> tuple[str | None, int | None]:
    """What a board drawing needs to offer ``action`` as "a card, then its target": the card it plays (as the
    view names it; a combo's weapon, a forfeit's discard, a reaction, a pick) and the seat it aims at, each
    None where the action has none (a token, taking the attack)."""
    kind, card, offset = ACTION_TYPE[action], ACTION_CARD[action], ACTION_OFFSET[action]
    target = (state.to_act + offset) % state.n if kind in (PLAY_AT, COMBO) else None
    return (KINDS[card] if card >= 0 and kind not in (TOKEN, NO_DRAW, FORFEIT_EMPTY) else None), target


OFFERS = "Card Draw windows"
"""What :func:`declinable` turns down, in a person's words (the frontends' "answer these for me")."""


def declinable(state: State) -> int | None:
    """The action that turns down the offer the seat to act is facing, where a person may leave such
    offers to the frontend, else None: in a Card Draw window (v2), ``token:pass`` (keep the tokens). A
    person who keeps their tokens is asked at every window of the game, more often than they make real
    decisions (about 35 windows against 26 other choices a game at 4 players), so terminal play and the
    web page answer them for a person who asks them to (``eval.play.declinable``). Tokens can still
    be used in the person's own main phase."""
    return TOKEN_PASS if state.phase == DRAW_PHASE else None


_INVERSE_COUNTS = tuple(1.0 / count for count in COUNTS)
_SHIELD_SLOT = {WOODEN_SHIELD: 0, STEEL_SHIELD: 1, BLADED_SHIELD: 2}
_EMPTY_KINDS = [0.0] * NUM_KINDS


def encode(state: State, seat: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[OBSERVATION_SIZE]) with the observation of ``seat``.

    Written in pieces into ``out`` (zeroed first): the players' blocks, the hand and the discard pile as
    slices, the table's few non-zero slots one by one, the known cards only where something is known.
    Each value is the same Python float as before, rounded to float32 on assignment."""
    config, n = state.config, state.n
    inverse_hp, inverse_limit = 1.0 / config.hp_cap, 1.0 / config.poison_limit
    to_act, alive, hp, poison, tokens = state.to_act, state.alive, state.hp, state.poison, state.tokens
    hands, equipment, skips = state.hands, state.equipment, state.skips
    values: list[float] = []
    for offset in range(n):
        who = (seat + offset) % n
        worn = equipment[who]
        held, token, skip = sum(hands[who]), tokens[who], skips[who]
        values += (
            1.0,
            1.0 if alive[who] else 0.0,
            hp[who] * inverse_hp,
            poison[who] * inverse_limit,  # never above the limit: the limit puts a player out
            token * 0.25 if token < 4 else 1.0,
            held * 0.05 if held < 20 else 1.0,
            worn[0] * 0.5,
            float(worn[1]),
            float(worn[2]),
            skip * 0.5 if skip < 2 else 1.0,
            1.0 if to_act == who else 0.0,
        )
    out.fill(0.0)
    out[:n * PLAYER_BLOCK] = values
    # A card kind never has more cards anywhere than its copies in the deck, so these stay within [0, 1].
    out[HAND] = [count * inverse for count, inverse in zip(hands[seat], _INVERSE_COUNTS, strict=True)]
    phase = state.phase
    if phase != DRAW_PHASE:  # v2's window has its own slot after v1's layout (DRAW_WINDOW)
        out[PHASE.start + phase] = 1.0
    actions_left = state.actions_left / config.actions_per_turn
    out[ACTIONS_LEFT] = actions_left if actions_left < 1.0 else 1.0
    if phase != GAME_OVER:
        out[TURN_OF.start + (state.turn_seat - seat) % n] = 1.0
    if phase == REACT_PHASE or phase == ANSWER:
        out[PENDING_CARD.start + PENDING_CARDS.index(state.attack_card)] = 1.0
        out[PENDING_DAMAGE:PENDING_COMBO + 1] = (min(1.0, state.damage / 10), float(state.poisons),
                                                 float(state.combo))
        out[ATTACKER.start + (state.attacker - seat) % n] = 1.0
        out[TARGET.start + (state.target - seat) % n] = 1.0
        if state.shield >= 0:
            out[SHIELD_RAISED.start + _SHIELD_SLOT[state.shield]] = 1.0
    elif phase == DRAW_PHASE:
        out[DRAW_WINDOW] = 1.0
        if state.window_next >= 0:
            out[DRAW_BOUNDARY] = 1.0
    elif phase == PICK_PHASE:
        if to_act == seat:
            out[OFFERED] = [count * inverse for count, inverse in zip(state.pick, _INVERSE_COUNTS, strict=True)]
        out[PICK_SOURCE.start + (0 if state.pick_source == MAGNIFYING_GLASS else 1)] = 1.0
    out[DECK] = len(state.deck) / DECK_SIZE
    out[DISCARD] = [count * inverse for count, inverse in zip(state.discard, _INVERSE_COUNTS, strict=True)]
    turn = state.turn / config.max_turns
    out[TURN] = turn if turn < 1.0 else 1.0
    known = state.known[seat]
    for offset in range(1, n):
        counts = known[(seat + offset) % n]
        if any(counts):
            start = KNOWN.start + (offset - 1) * NUM_KINDS
            out[start:start + NUM_KINDS] = [count * inverse for count, inverse in
                                            zip(counts, _INVERSE_COUNTS, strict=True)]


def _counts(counts: list[int]) -> dict[str, int]:
    return {KINDS[kind]: counts[kind] for kind in range(NUM_KINDS) if counts[kind]}


def _player_view(state: State, who: int, seat: int) -> dict[str, Any]:
    worn = state.equipment[who]
    view = {
        "seat": who,
        "offset": (who - seat) % state.n,
        "alive": state.alive[who],
        "hp": state.hp[who],
        "poison": state.poison[who],
        "draw_tokens": state.tokens[who],
        "hand_size": sum(state.hands[who]),
        "equipment": {"spiked_glove": worn[0], "armor": worn[1], "satchel": worn[2]},
        "skips": state.skips[who],
    }
    if who == seat:
        view["hand"] = _counts(state.hands[who])
    elif any(state.known[seat][who]):
        view["known_cards"] = _counts(state.known[seat][who])  # the lower bound of the observation's KNOWN
    return view


VIEW_FIELDS = {
    "players": "one entry per seat, in seat order; > marks you",
    "offset": "the seat counted from you, as action names write targets (seat+1 is offset 1)",
    "alive": "still in the game",
    "poison": "Poison tokens: 1 HP lost per token at the start of the player's turn (never below 1)",
    "draw_tokens": "Card Draw tokens left (each draws cards, costs no action)",
    "equipment": "equipped gear: spiked_glove +1 attack each, armor +1 defence, satchel draws up to one more",
    "skips": "turns a Trip Rope will still skip",
    "known_cards": "cards you know that player holds (at least these)",
    "hand": "your cards, by kind and count",
    "initiative_rolls": "the opening d6 rolls, one list per round of rolling, by seat (0: did not roll again)",
    "first_seat": "the seat that took the first turn",
    "phase": "main: the turn's player acts; react: a defender answers an attack; answer: the attacker answers "
             "a shield; pick: someone picks cards; draw: a Card Draw window; over",
    "turn_seat": "whose turn it is",
    "to_act": "the seat that decides now",
    "actions_left": "actions left in this turn",
    "pending_attack": "the attack being resolved: who attacks whom with what, its damage, poison and combo, the "
                      "shield raised",
    "pick": "an open pick: who picks, from which card's effect, the cards (shown only to the picker)",
    "draw_window": "a Card Draw window (use a token now or keep them): seat decides now, asked lists the seats "
                   "this window still asks in order (the first decides now), turn_boundary: it opened between "
                   "two turns",
    "deck_size": "cards left in the shared deck",
    "discard": "the discard pile, by kind and count",
    "last_events": "what the latest step showed you",
    "eliminated": "seats out of the game",
    "finishing_order": "seats in the order they went out",
}
"""What the view's less obvious entries mean (shown to language models beside the view)."""

EVENT_COUNTED_FIELDS = ("deck_size",)
"""Counts of the view that event lines move (a draw): a language model's view of what changed
(agents/text_views.py ``view_changes``) leaves them out, its whole view shows them."""


def view(state: State, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see, JSON-serialisable: no other seat's hand, no cards offered to another."""
    pending = None
    if state.phase in (REACT_PHASE, ANSWER):
        pending = {
            "attacker": state.attacker,
            "target": state.target,
            "card": KINDS[state.attack_card],
            "damage": state.damage,
            "poison": state.poisons,
            "combo": state.combo,
            "shield": KINDS[state.shield] if state.shield >= 0 else None,
        }
    pick = None
    if state.phase == PICK_PHASE:
        pick = {"seat": state.to_act, "source": KINDS[state.pick_source]}
        if state.to_act == seat:
            pick["cards"] = _counts(state.pick)
    window = None
    if state.phase == DRAW_PHASE:
        window = {"seat": state.to_act, "asked": list(state.window), "turn_boundary": state.window_next >= 0}
    return {
        "you": seat,
        "players": [_player_view(state, who, seat) for who in range(state.n)],
        "initiative_rolls": [list(faces) for faces in state.initiative_rolls],
        "first_seat": state.first_seat,
        "phase": PHASE_NAMES[state.phase],
        "turn_seat": state.turn_seat if state.phase != GAME_OVER else None,
        "to_act": state.to_act,
        "actions_left": state.actions_left,
        "pending_attack": pending,
        "pick": pick,
        "draw_window": window,
        "deck_size": len(state.deck),
        "discard": _counts(state.discard),
        "turn": state.turn,
        "max_turns": state.config.max_turns,
        "last_events": [text for audience, text in state.log if audience is None or seat in audience],
        "eliminated": list(state.eliminated),
        "finishing_order": list(state.finishing_order) or None,
        "winner": state.winner if state.phase == GAME_OVER and state.winner >= 0 else None,
        "end_reason": state.end_reason or None,
    }


def events(state: State, seat: int) -> tuple[int, list[str]]:
    """``(decisions played, what the latest one showed seat)``: a frontend prints each step's events once,
    when the count moves, and so keeps the whole history. Before the first decision: the opening rolls."""
    seen = [text for audience, text in state.log if audience is None or seat in audience]
    if state.decisions == 0:
        rolls = "; ".join(" ".join(str(face) if face else "-" for face in faces) for faces in state.initiative_rolls)
        seen = [f"initiative rolls (by seat): {rolls}; player_{state.first_seat} starts", *seen]
    return state.decisions, seen


LEGEND = ("legend: > decides now; gear: G Spiked Glove (+1 attack each), A Armor (+1 defence), S Satchel "
          "(draw up to 7);\n          skip N: turns Trip Rope will skip; known: cards you know they hold")


def _seat_render(state: State, seat: int) -> str:
    """The table as ``seat`` may see it: its own hand, every other seat's hand size only."""
    n = state.n
    phase = state.phase
    if phase == GAME_OVER:
        result = f"player_{state.winner} wins" if state.winner >= 0 else "no winner"
        head = f"game over: {result} ({state.end_reason.replace('_', ' ')})"
    elif phase == DRAW_PHASE:
        head = f"Card Draw window {_window_when(state)}: player_{state.to_act} decides"
    else:
        head = (f"player_{state.turn_seat}'s turn, {state.actions_left} action(s) left"
                + ("" if phase == MAIN_PHASE else f", {PHASE_NAMES[phase]}: player_{state.to_act} decides"))
    lines = [f"MiniSteel — turn {state.turn}/{state.config.max_turns}, {head}; deck {len(state.deck)}, "
             f"discard pile {sum(state.discard)}; you are player_{seat}"]
    for who in range(n):
        marker = ">" if state.to_act == who else " "
        worn = state.equipment[who]
        gear = " ".join(("G" * worn[0], "A" * worn[1], "S" * worn[2])).split() or ["-"]
        tags = [] if state.alive[who] else ["out"]
        if state.skips[who]:
            tags.append(f"skip {state.skips[who]}")
        name = f"player_{who}" + (" (you)" if who == seat else "")
        line = (f"{marker} {name:<15} HP {state.hp[who]:>2}  poison {state.poison[who]}  tokens {state.tokens[who]}  "
                f"hand {sum(state.hands[who]):>2}  gear {''.join(gear):<4}{'  ' + ', '.join(tags) if tags else ''}")
        if who != seat and any(state.known[seat][who]):
            line += f"  known: {_listing(state.known[seat][who])}"
        lines.append(line.rstrip())
    lines.append(f"  your hand: {_listing(state.hands[seat]) or 'no cards'}")
    if phase in (REACT_PHASE, ANSWER):
        extra = ", poison" if state.poisons else ""
        shield = f"; {_card(state.shield)} raised" if state.shield >= 0 else ""
        lines.append(f"  pending: player_{state.attacker} -> player_{state.target} with {_card(state.attack_card)} "
                     f"({state.damage} damage{extra}{', combo' if state.combo else ''}){shield}")
    if phase == DRAW_PHASE:
        lines.append(f"  {_window_line(state)}")
    if phase == PICK_PHASE:
        source = _card(state.pick_source)
        if state.to_act == seat:
            lines.append(f"  {source}: keep one of {_listing(state.pick)}; the rest are discarded")
        else:
            lines.append(f"  player_{state.to_act} keeps one card of the {source}")
    lines.append(f"  discard pile: {_listing(state.discard) or 'empty'}")
    lines.append(f"  {LEGEND}")
    return "\n".join(lines)


def _window_when(state: State) -> str:
    if state.window_next < 0:
        return f"between player_{state.turn_seat}'s actions"
    return "before the first turn" if state.turn == 0 else "at the turn boundary"


def _window_line(state: State) -> str:
    """The open Card Draw window in words: when it is, who decides, who is asked after."""
    later = ", ".join(f"player_{s}" for s in state.window[1:])
    return (f"Card Draw window {_window_when(state)}: player_{state.to_act} may use a token "
            f"(draw {state.config.token_cards}) or pass" + (f"; then {later}" if later else ""))


def _listing(counts: list[int]) -> str:
    return ", ".join(f"{_card(kind)} x{count}" for kind, count in enumerate(counts) if count)


def render(state: State, seat: int | None = None) -> str:
    """The table as text. With ``seat``: only what that seat may see (its own hand, the others' hand
    sizes, what it knows of their hands), with a legend. Without: the whole table, every hand shown,
    for logs and replays."""
    if seat is not None:
        return _seat_render(state, seat)
    lines = [f"MiniSteel: turn {state.turn}/{state.config.max_turns}, phase {PHASE_NAMES[state.phase]}, "
             f"deck {len(state.deck)}, discard {sum(state.discard)}"]
    for who in range(state.n):
        marker = ">" if state.to_act == who else " "
        worn = state.equipment[who]
        gear = "".join(("G" * worn[0], "A" * worn[1], "S" * worn[2])) or "-"  # legend in LEGEND
        status = "" if state.alive[who] else "  (out)"
        held = ", ".join(f"{name} x{count}" for name, count in _counts(state.hands[who]).items())
        lines.append(f"{marker} player_{who}  HP {state.hp[who]:>2}  poison {state.poison[who]}  "
                     f"tokens {state.tokens[who]}  gear {gear}{status}  |  {held or 'no cards'}")
    if state.phase in (REACT_PHASE, ANSWER):
        lines.append(f"  pending: player_{state.attacker} -> player_{state.target} with "
                     f"{KINDS[state.attack_card]} ({state.damage}{', poison' if state.poisons else ''})")
    if state.phase == DRAW_PHASE:
        lines.append(f"  {_window_line(state)}")
    for audience, text in state.log:
        lines.append(f"  {text}" + ("" if audience is None else " [private]"))
    if state.phase == GAME_OVER:
        result = f"player_{state.winner} wins" if state.winner >= 0 else "no winner"
        lines.append(f"  game over: {result} ({state.end_reason.replace('_', ' ')}); "
                     f"finishing order {state.finishing_order}")
    lines.append(f"  {LEGEND}")
    return "\n".join(lines)


def card_texts(config: Config | None = None) -> dict[str, str]:
    """Each card's printed effect (the reference sheet, ``cards.toml``), by card name: what a frontend
    shows beside a card so that a player can read it."""
    return dict(zip(KINDS, CARD_TEXT, strict=True))
