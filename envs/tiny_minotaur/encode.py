"""Tiny Minotaur PvP — what a seat sees: action names, the observation vector, the view and a rendering.

Both decks are public in Tiny Minotaur (the rulebook's deck check), so both seats see everything; the
observation is egocentric all the same (``me`` first), so one policy plays either seat.

Actions
=======
===  ===================  ==============================================================
idx  name                 when legal
===  ===================  ==============================================================
0    ``attack:regular``   your turn, you hold a regular attack (10 damage, always hits)
1    ``attack:middling``  your turn, you hold a middling attack (30, d20 in your window)
2    ``attack:stronk``    your turn, you hold a stronk attack (50, d20 in your window)
3    ``attack:boss``      your turn, you hold your Boss/NPC card (its damage and window)
4    ``pass``             your turn and you hold no attack card
5    ``react:dodge``      you were hit and hold a dodge
6    ``react:heal``       you were hit and hold a heal
7    ``react:take``       you were hit (and hold a dodge or a heal: otherwise the hit lands at once)
===  ===================  ==============================================================

Observation (float32, all in [0, 1])
====================================
Two 19-slot player blocks, ``me`` at 0-18 and ``opponent`` at 19-37, then the table at 38-46.

======  =======================================================================
offset  player block (add 0 for me, 19 for the opponent)
======  =======================================================================
0       HP / hp_cap
1-3     tier one-hot (1, 2, 3)
4-6     class one-hot (sword, magic, cloak)
7-12    cards held / largest count in the ruleset: regular, middling, stronk, boss, dodge, heal
13-17   chance a roll succeeds: middling, stronk, boss, dodge, heal (0 for a boss-less deck)
18      boss card damage / 100 (0 without one)
======  =======================================================================

===  ========================================================================
idx  table
===  ========================================================================
38   I am to attack (or pass)
39   I am to react to a hit
40   pending hit is a regular attack
41   pending hit is a middling attack
42   pending hit is a stronk attack
43   pending hit is the boss card
44   pending hit's damage / 100
45   turns taken / max_turns
46   I moved first (won initiative)
===  ========================================================================
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .rules import (
    ATTACK_PHASE,
    BOSS,
    CARD_NAMES,
    CLASSES,
    GAME_OVER,
    HEAL,
    NUM_ACTIONS,
    REACT_PHASE,
    REGULAR,
    Config,
    State,
    load_ruleset,
)

ACTION_NAMES = (
    "attack:regular",
    "attack:middling",
    "attack:stronk",
    "attack:boss",
    "pass",
    "react:dodge",
    "react:heal",
    "react:take",
)
assert len(ACTION_NAMES) == NUM_ACTIONS

PLAYER_BLOCK = 19
ME, OPPONENT, TABLE = 0, PLAYER_BLOCK, 2 * PLAYER_BLOCK
OBSERVATION_SIZE = TABLE + 9

# Named views into the flat observation, for bots and tests (offsets inside a player block).
HP, TIER, CLASS, CARDS, CHANCES, BOSS_DAMAGE = 0, slice(1, 4), slice(4, 7), slice(7, 13), slice(13, 18), 18
MY_TURN, MY_REACTION, PENDING_CARD, PENDING_DAMAGE, TURN, MOVED_FIRST = 38, 39, slice(40, 44), 44, 45, 46


def action_names(config: Config) -> tuple[str, ...]:
    return ACTION_NAMES


def observation_size(config: Config) -> int:
    return OBSERVATION_SIZE


def describe_action(action: int) -> str:
    """A sentence for a person choosing among the legal actions."""
    return _DESCRIPTIONS[action]


_DESCRIPTIONS = (
    "attack with a regular card: 10 damage, always hits",
    "attack with a middling card: 30 damage if the d20 lands in your middling window",
    "attack with a stronk card: 50 damage if the d20 lands in your stronk window",
    "attack with your Boss/NPC card: its damage if the d20 lands in its window",
    "pass: you hold no attack card",
    "dodge: if the d20 lands in your dodge window the hit is nullified",
    "heal: if the d20 lands in your heal window you heal, net with the hit",
    "take the hit",
)


@cache
def _card_scale(ruleset: str) -> tuple[int, ...]:
    decks = load_ruleset(ruleset).decks.values()
    regular, middling, stronk, dodge, heal = (max(1, max(deck[i] for deck in decks)) for i in range(5))
    return (regular, middling, stronk, 1, dodge, heal)


def _chance_of(window: tuple[int, int]) -> float:
    low, high = window
    return max(0, min(high, 20) - low + 1) / 20.0


@cache
def _fixed_part(tier: int, class_name: str) -> list[float]:
    """The slots of a player block that never change during a game: tier and class one-hots."""
    values = [0.0] * 6
    values[tier - 1] = 1.0
    values[3 + CLASSES.index(class_name)] = 1.0
    return values


@cache
def _fixed_chances(windows: tuple[tuple[int, int], ...], boss_damage: int) -> list[float]:
    """Hit chances of middling, stronk, boss, dodge, heal and the boss damage: fixed once tiers are rolled."""
    return [*(_chance_of(windows[slot]) for slot in (1, 2, BOSS, 4, HEAL)), min(1.0, boss_damage / 100.0)]


def encode(state: State, seat: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[OBSERVATION_SIZE]) with the observation of ``seat``."""
    config = state.config
    scale = _card_scale(config.ruleset)  # card counts only fall, so they never exceed the largest deck's
    values: list[float] = []
    for who in (seat, 1 - seat):
        values.append(state.hp[who] / config.hp_cap)
        values += _fixed_part(state.tiers[who], state.classes[who])
        values += [count / limit for count, limit in zip(state.cards[who], scale, strict=True)]
        values += _fixed_chances(state.windows[who], state.damage[who][BOSS])
    table = [0.0] * 9  # MY_TURN .. MOVED_FIRST
    if state.phase == ATTACK_PHASE:
        table[0] = 1.0 if state.to_act == seat else 0.0
    elif state.phase == REACT_PHASE:
        table[1] = 1.0 if state.to_act == seat else 0.0
        table[2 + state.pending_card] = 1.0
        table[6] = min(1.0, state.damage[1 - state.to_act][state.pending_card] / 100.0)
    table[7] = min(1.0, state.turn / config.max_turns)
    table[8] = 1.0 if state.first_seat == seat else 0.0
    values += table
    out[:] = values


def _player_view(state: State, who: int) -> dict[str, Any]:
    return {
        "seat": who,
        "hp": state.hp[who],
        "class": state.classes[who],
        "tier": state.tiers[who],
        "boss": state.bosses[who],
        "cards": {name: state.cards[who][slot] for slot, name in enumerate(CARD_NAMES)},
        "windows": {
            name: list(state.windows[who][slot])
            for slot, name in enumerate(CARD_NAMES)
            if slot != REGULAR and (slot != BOSS or state.bosses[who])
        },
    }


def event_text(state: State, event: tuple[int, int, int, bool]) -> str:
    seat, action, roll, success = event
    name = ACTION_NAMES[action]
    if action == 4:
        return f"player_{seat} passes (no attack card left)"
    if action == 0:
        return f"player_{seat} attacks with a regular card: hit"
    rolled = f"rolls {roll}: " + ("success" if success else "fails")
    return f"player_{seat} plays {name.split(':')[1]}, {rolled}"


def view(state: State, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see, JSON-serialisable (in Tiny Minotaur that is the whole table)."""
    phase = ("attack", "react", "over")[state.phase]
    pending = None
    if state.phase == REACT_PHASE:
        attacker = 1 - state.to_act
        pending = {
            "attacker": attacker,
            "card": CARD_NAMES[state.pending_card],
            "damage": state.damage[attacker][state.pending_card],
        }
    return {
        "you": seat,
        "players": [_player_view(state, who) for who in (0, 1)],
        "initiative_rolls": [list(pair) for pair in state.initiative_rolls],
        "first_seat": state.first_seat,
        "phase": phase,
        "to_act": state.to_act,
        "pending_hit": pending,
        "turn": state.turn,
        "max_turns": state.config.max_turns,
        "last_events": [event_text(state, event) for event in state.last_events],
        "winner": state.winner if state.phase == GAME_OVER else None,
        "end_reason": state.end_reason or None,
    }


def render(state: State) -> str:
    """A text rendering of the table for terminals and logs."""
    lines = [f"Tiny Minotaur PvP — turn {state.turn}/{state.config.max_turns}"]
    for who in (0, 1):
        cards = state.cards[who]
        held = ", ".join(f"{CARD_NAMES[slot]} x{count}" for slot, count in enumerate(cards) if count)
        marker = ">" if state.to_act == who else " "
        boss = f" [{state.bosses[who]}]" if state.bosses[who] else ""
        lines.append(
            f"{marker} player_{who}  {state.classes[who]:<5} tier {state.tiers[who]}  "
            f"HP {state.hp[who]:>3}/{state.config.hp_cap}{boss}  |  {held or 'no cards'}"
        )
    for event in state.last_events:
        lines.append(f"  {event_text(state, event)}")
    if state.phase == REACT_PHASE:
        attacker = 1 - state.to_act
        lines.append(
            f"  player_{state.to_act} is hit by {CARD_NAMES[state.pending_card]} "
            f"for {state.damage[attacker][state.pending_card]}: dodge, heal or take?"
        )
    elif state.phase == GAME_OVER:
        result = "draw" if state.winner < 0 else f"player_{state.winner} wins"
        lines.append(f"  game over: {result} ({state.end_reason.replace('_', ' ')})")
    return "\n".join(lines)
