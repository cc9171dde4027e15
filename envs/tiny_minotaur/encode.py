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
Two 28-slot player blocks, ``me`` at 0-27 and ``opponent`` at 28-55, then the table at 56-64.

======  =======================================================================
offset  player block (add 0 for me, 28 for the opponent)
======  =======================================================================
0       HP / hp_cap
1-3     tier one-hot (1, 2, 3)
4-6     class one-hot (sword, magic, cloak)
7-12    archetype one-hot (fighter, paladin, sorcerer, cleric, rogue, ranger)
13-18   cards held / largest count in the ruleset: regular, middling, stronk, boss, dodge, heal
19-23   chance a roll succeeds: middling, stronk, boss, dodge, heal (0 for a boss-less deck)
24      boss card damage / 100 (0 without one)
25-27   the card the boss card replaced, one-hot (regular, middling, stronk; 0 without one)
======  =======================================================================

===  ========================================================================
idx  table
===  ========================================================================
56   I am to attack (or pass)
57   I am to react to a hit
58   pending hit is a regular attack
59   pending hit is a middling attack
60   pending hit is a stronk attack
61   pending hit is the boss card
62   pending hit's damage / 100
63   turns taken / max_turns
64   I moved first (won initiative)
===  ========================================================================

Version 1 added the archetype and the replaced card (v0's blocks were 19 slots: no archetype, no
replaced card).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from .rules import (  # ACTION_NAMES: the rules' own, importable here as before
    ACTION_NAMES,
    ALL_ARCHETYPES,
    ATTACK_BOSS,
    ATTACK_MIDDLING,
    ATTACK_PHASE,
    ATTACK_STRONK,
    BOSS,
    CARD_NAMES,
    CLASSES,
    DODGE,
    GAME_OVER,
    HEAL,
    MIDDLING,
    PASS,
    REACT_DODGE,
    REACT_HEAL,
    REACT_PHASE,
    REACT_TAKE,
    REGULAR,
    STRONK,
    Config,
    State,
    load_ruleset,
)

PLAYER_BLOCK = 28
ME, OPPONENT, TABLE = 0, PLAYER_BLOCK, 2 * PLAYER_BLOCK
OBSERVATION_SIZE = TABLE + 9

# Named views into the flat observation, for bots and tests (offsets inside a player block).
HP, TIER, CLASS, ARCHETYPE, CARDS, CHANCES, BOSS_DAMAGE, BOSS_REPLACED = (
    0, slice(1, 4), slice(4, 7), slice(7, 13), slice(13, 19), slice(19, 24), 24, slice(25, 28))
MY_TURN, MY_REACTION, PENDING_CARD, PENDING_DAMAGE, TURN, MOVED_FIRST = (
    TABLE, TABLE + 1, slice(TABLE + 2, TABLE + 6), TABLE + 6, TABLE + 7, TABLE + 8)


def action_names(config: Config) -> tuple[str, ...]:
    return ACTION_NAMES


def observation_size(config: Config) -> int:
    return OBSERVATION_SIZE


def describe_action(action: int, state: State | None = None) -> str:
    """A sentence for a person choosing among the legal actions; given the state, it names the window
    and chance of the card for the seat to act (as printed on that seat's cards for its tier)."""
    text = _DESCRIPTIONS[action]
    if state is None or state.phase == GAME_OVER:
        return text
    seat = state.to_act
    if action == ATTACK_BOSS and state.bosses[seat]:
        text = f"attack with your Boss/NPC card {state.bosses[seat]}: {state.damage[seat][BOSS]} damage"
    if action in _CARD_OF_ACTION:
        slot = _CARD_OF_ACTION[action]
        text += f" ({window_text(state.windows[seat][slot])})"
    if action == REACT_TAKE and state.phase == REACT_PHASE:
        text += f": {state.damage[1 - seat][state.pending_card]} damage"
    return text


def action_parts(action: int, state: State) -> tuple[str | None, int | None]:
    """What a board drawing needs to offer ``action`` as "a card, then its target": the card (by the name the
    view's ``cards`` use) and, for an attack, the opponent it hits; None where there is none (a pass, taking
    the hit)."""
    if action < PASS:
        return CARD_NAMES[(REGULAR, MIDDLING, STRONK, BOSS)[action]], 1 - state.to_act
    return CARD_NAMES[_CARD_OF_ACTION[action]] if action in _CARD_OF_ACTION else None, None


_CARD_OF_ACTION = {ATTACK_MIDDLING: MIDDLING, ATTACK_STRONK: STRONK, ATTACK_BOSS: BOSS, REACT_DODGE: DODGE,
                   REACT_HEAL: HEAL}  # action -> the card slot whose window it rolls in
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


def chance_of(window: tuple[int, int]) -> float:
    """The chance that a d20 lands in ``window``."""
    low, high = window
    return max(0, min(high, 20) - low + 1) / 20.0



def window_text(window: tuple[int, int]) -> str:
    """``"4-13 (50%)"``: a window as printed on a card, with its chance."""
    return f"{window[0]}-{window[1]} ({chance_of(window):.0%})"


@cache
def _card_scale(ruleset: str) -> tuple[int, ...]:
    decks = load_ruleset(ruleset).decks.values()
    regular, middling, stronk, dodge, heal = (max(1, max(deck[i] for deck in decks)) for i in range(5))
    return (regular, middling, stronk, 1, dodge, heal)


@cache
def _fixed_part(tier: int, class_name: str, archetype: str) -> list[float]:
    """The slots of a player block that never change during a game: tier, class and archetype one-hots."""
    values = [0.0] * 12
    values[tier - 1] = 1.0
    values[3 + CLASSES.index(class_name)] = 1.0
    values[6 + ALL_ARCHETYPES.index(archetype)] = 1.0
    return values


@cache
def _fixed_chances(windows: tuple[tuple[int, int], ...], boss_damage: int) -> list[float]:
    """Hit chances of middling, stronk, boss, dodge, heal and the boss damage: fixed once tiers are rolled."""
    return [*(chance_of(windows[slot]) for slot in (1, 2, BOSS, 4, HEAL)), min(1.0, boss_damage / 100.0)]


_NO_BOSS_REPLACED = [0.0, 0.0, 0.0]
_BOSS_REPLACED = {name: [1.0 if i == slot else 0.0 for i in range(3)] for slot, name in enumerate(CARD_NAMES[:3])}


def encode(state: State, seat: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[OBSERVATION_SIZE]) with the observation of ``seat``."""
    config = state.config
    scale = _card_scale(config.ruleset)  # card counts only fall, so they never exceed the largest deck's
    values: list[float] = []
    for who in (seat, 1 - seat):
        values.append(state.hp[who] / config.hp_cap)
        values += _fixed_part(state.tiers[who], state.classes[who], state.archetypes[who])
        values += [count / limit for count, limit in zip(state.cards[who], scale, strict=True)]
        values += _fixed_chances(state.windows[who], state.damage[who][BOSS])
        values += _BOSS_REPLACED[config.boss_replaces[who]] if state.bosses[who] else _NO_BOSS_REPLACED
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


def _card_label(state: State, who: int, slot: int) -> str:
    """A card's name as a person reads it: the boss card goes by its boss's name."""
    return f"boss card {state.bosses[who]}" if slot == BOSS else CARD_NAMES[slot]


def _player_view(state: State, who: int) -> dict[str, Any]:
    held = state.cards[who]
    boss = state.bosses[who] if held[BOSS] else None  # a spent boss card is gone from the table
    return {
        "seat": who,
        "hp": state.hp[who],
        "class": state.classes[who],
        "archetype": state.archetypes[who],
        "initiative_roll": state.initiative_rolls[-1][who],
        "tier": state.tiers[who],
        "boss": boss,
        "boss_damage": state.damage[who][BOSS] if boss else None,
        "cards": {name: held[slot] for slot, name in enumerate(CARD_NAMES) if slot != BOSS or boss},
        "windows": {
            name: window_text(state.windows[who][slot])
            for slot, name in enumerate(CARD_NAMES)
            if slot != REGULAR and (slot != BOSS or boss)
        },
    }


def event_text(state: State, event: tuple[int, int, int, bool]) -> str:
    """One line per event, always in the same words: hit, miss, dodged (attack nullified), healed to N
    HP, takes N."""
    seat, action, roll, success = event
    who = f"player_{seat}"
    if action == PASS:
        return f"{who} passes (no attack card left)"
    if action == REACT_TAKE:  # ``roll`` holds the damage taken
        return f"{who} takes {roll} (HP {state.hp[seat]})" + (": knocked out" if state.hp[seat] == 0 else "")
    if action == REGULAR:
        return f"{who} attacks with regular (always hits): hit"
    window = window_text(state.windows[seat][_CARD_OF_ACTION[action]])
    if action < PASS:
        outcome = "hit" if success else "miss (the card is kept)"
        return f"{who} attacks with {_card_label(state, seat, action)}, rolls {roll} in {window}: {outcome}"
    verb = "dodges" if action == REACT_DODGE else "heals"
    if not success:
        outcome = "fails (the card is kept)"
    elif action == REACT_DODGE:
        outcome = "dodged (attack nullified)"
    elif state.hp[seat] == 0:
        outcome = "healed, but not enough: knocked out"
    else:
        outcome = f"healed to {state.hp[seat]} HP"
    return f"{who} {verb}, rolls {roll} in {window}: {outcome}"


VIEW_FIELDS = {
    "players": "both players; > marks you",
    "initiative_roll": "the player's last d20 initiative roll (it set the tier)",
    "tier": "the initiative tier: it sets the d20 window of each of that player's cards",
    "boss": "the player's Boss/NPC card, if held",
    "cards": "cards left in the player's deck, by kind and count",
    "windows": "the d20 rolls at which each card succeeds for that player (chance in brackets)",
    "initiative_rolls": "every initiative pair rolled (player_0, player_1), re-rolls of equal rolls included",
    "first_seat": "the seat that moved first",
    "phase": "attack: the player to act attacks or passes; react: the player hit dodges, heals or takes it",
    "to_act": "the seat that decides now",
    "pending_hit": "the hit to react to: the attacker, the card and its damage",
    "last_events": "what the latest step showed",
}
"""What the view's less obvious entries mean (shown to language models beside the view)."""


def view(state: State, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see, JSON-serialisable (in Tiny Minotaur that is the whole table)."""
    phase = ("attack", "react", "over")[state.phase]
    pending = None
    if state.phase == REACT_PHASE:
        attacker = 1 - state.to_act
        pending = {
            "attacker": attacker,
            "card": _card_label(state, attacker, state.pending_card),
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


def _cards_text(state: State, who: int) -> str:
    held = state.cards[who]
    parts = []
    for slot, count in enumerate(held):
        if not count:
            continue
        if slot == REGULAR:
            parts.append(f"regular x{count} always hits")
            continue
        damage = f", {state.damage[who][BOSS]} damage" if slot == BOSS else ""
        parts.append(f"{_card_label(state, who, slot)} x{count} {window_text(state.windows[who][slot])}{damage}")
    return " | ".join(parts) or "no cards"


def render(state: State) -> str:
    """A text rendering of the table for terminals and logs: both players' cards with the window and
    chance of each for that player's tier, both initiative rolls, and what just happened."""
    config = state.config
    rolls = state.initiative_rolls[-1]
    again = len(state.initiative_rolls) - 1
    rerolls = f" (after {again} re-roll(s) of equal rolls)" if again else ""
    lines = [
        f"Tiny Minotaur PvP — turn {state.turn}/{config.max_turns}",
        f"initiative: player_0 rolled {rolls[0]} (tier {state.tiers[0]}), player_1 rolled {rolls[1]} "
        f"(tier {state.tiers[1]}){rerolls}; player_{state.first_seat} moved first",
    ]
    for who in (0, 1):
        marker = ">" if state.to_act == who else " "
        lines.append(
            f"{marker} player_{who}  {state.classes[who]} ({state.archetypes[who]})  tier {state.tiers[who]}  "
            f"HP {state.hp[who]:>3}/{config.hp_cap}"
        )
        lines.append(f"    {_cards_text(state, who)}")
    for event in state.last_events:
        lines.append(f"  {event_text(state, event)}")
    if state.phase == REACT_PHASE:
        attacker = 1 - state.to_act
        lines.append(
            f"  player_{state.to_act} is hit by {_card_label(state, attacker, state.pending_card)} "
            f"for {state.damage[attacker][state.pending_card]}: dodge, heal or take?"
        )
    elif state.phase == GAME_OVER:
        result = "draw" if state.winner < 0 else f"player_{state.winner} wins"
        lines.append(f"  game over: {result} ({state.end_reason.replace('_', ' ')})")
    return "\n".join(lines)


def card_texts(config: Config | None = None) -> dict[str, str]:
    """Each card kind's effect under ``config``'s ruleset, by the names the view counts cards by, and
    each Boss/NPC card's: what a frontend shows beside a card (the window is each seat's own, by tier)."""
    config = config if config is not None else Config()
    rules = load_ruleset(config.ruleset)
    damage = rules.damage
    texts = {
        "regular": f"attack: {damage['regular']} damage, always hits",
        "middling": f"attack: {damage['middling']} damage if the d20 lands in the holder's middling window",
        "stronk": f"attack: {damage['stronk']} damage if the d20 lands in the holder's stronk window",
        "dodge": "answer a hit: nullified if the d20 lands in the holder's dodge window (kept if it fails)",
        "heal": f"answer a hit: heal {config.heal_amount} HP, net of the hit, if the d20 lands in the holder's heal "
                "window (kept if it fails)",
    }
    for name, (boss_damage, _) in rules.bosses.items():
        texts[name] = f"Boss/NPC attack: {boss_damage} damage if the d20 lands in its window"
    return texts
