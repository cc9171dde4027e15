"""Minefield — what a seat sees: action names, the observation vector, the view and a rendering.

Nothing in Minefield is hidden once played: every seat sees who is alive, the mines and the whole
last round as the host announced it. The only secret is the round being chosen, which is not in the
state until all moves are in. Observations are egocentric: seat blocks are indexed by *relative* seat
``(seat - me) % N`` (``me`` is 0), so one policy plays every seat; actions name absolute seats, and the
own-seat one-hot (``SEAT``) converts between the two.

Actions
=======
Action ``k`` is ``target:k``: attack the player in seat ``k``. Legal for a living player against every
other living player (the mask); all zero for an eliminated player and once the game is over.

Observation (float32, all in [0, 1]); N = ``num_players``
=========================================================
=====================  ==========  ===============================================================
name                   size        contents
=====================  ==========  ===============================================================
``ALIVE``              N           relative seat r is alive
``MINES``              100         number k (at offset k-1) is a mine now: the mines of the last
                                   round (Simple: of the game, Stacked: all so far); all 0 before
                                   the first roll. A round's new mines are rolled after its moves
``TARGETS``            N*N         last round, relative seat a attacked relative seat t
                                   (at ``a*N + t``)
``OUTCOME``            N*6         last round, the attack by relative seat a (at ``a*6 + o``):
                                   void, attacker hit a mine, defender hit a mine, attacker won the
                                   roll, defender won the roll, standoff (no elimination)
``ORDER``              N           last round, (position in the host's order + 1) / attacks,
                                   0 for a seat that did not attack
``TARGETED``           N           last round, attacks on relative seat r / (N-1)
``ELIMINATED``         N           relative seat r was eliminated last round
``SEAT``               N           my absolute seat, one-hot (action k targets absolute seat k)
``ROUND``              1           rounds played / the game's round limit
``ALIVE_SHARE``        1           players alive / N
``MINE_SHARE``         1           mine numbers now / 100
``FINALS``             1           exactly two players are alive: this round is the finals
``MINES_KNOWN``        1           a mine set is in effect
=====================  ==========  ===============================================================

Total ``N*N + 11*N + 105`` (165 at 4 players, 257 at 8, 725 at 20). ``layout(N)`` gives the slices.

An env encodes through its own :class:`Observer` (``Game.make_observer``), which builds the round's
vector once for all seats; :func:`encode` builds it on every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from .rules import (
    ATTACKER_MINE,
    ATTACKER_WON,
    DEFENDER_MINE,
    DEFENDER_WON,
    OUTCOME_NAMES,
    SIDE_NAMES,
    STANDOFF,
    VOID,
    Config,
    State,
    action_names,  # noqa: F401 - the rules' own names, served by the encoder (Game.action_names)
    mine_numbers,
    mines_as_numbers,
    round_limit,
)

NUM_OUTCOMES = 6


@dataclass(frozen=True)
class Layout:
    """Offsets of the observation blocks for ``n`` seats (see the module docstring)."""

    n: int
    alive: slice
    mines: slice
    targets: slice
    outcome: slice
    order: slice
    targeted: slice
    eliminated: slice
    seat: slice
    round: int
    alive_share: int
    mine_share: int
    finals: int
    mines_known: int
    size: int


@cache
def layout(n: int) -> Layout:
    sizes = (("alive", n), ("mines", 100), ("targets", n * n), ("outcome", n * NUM_OUTCOMES), ("order", n),
             ("targeted", n), ("eliminated", n), ("seat", n))
    offsets: dict[str, Any] = {}
    at = 0
    for name, size in sizes:
        offsets[name] = slice(at, at + size)
        at += size
    for name in ("round", "alive_share", "mine_share", "finals", "mines_known"):
        offsets[name] = at
        at += 1
    return Layout(n=n, size=at, **offsets)


def observation_size(config: Config) -> int:
    return layout(config.num_players).size


def describe_action(action: int, state: State | None = None) -> str:
    """A sentence for a person choosing."""
    return f"attack player_{action}: a d100 battle; a mine or the lower roll puts a player out"


def action_label(state: State, action: int) -> str:
    """An action as a person reads it: ``attack player_3``."""
    return f"attack player_{action}"


def action_parts(action: int, state: State) -> tuple[str | None, int | None]:
    """What a board drawing needs to offer ``action``: no card, and the player it attacks (``target:N``)."""
    return None, action


# --- the observation ---------------------------------------------------------------------------------
#
# The observation of every seat is one gather from a per-round "absolute" vector: the same blocks
# indexed by absolute seat, plus a constant block E = (1, 0, ..., 0) from which the own-seat one-hot is
# gathered. An Observer builds the absolute vector once per round and keeps it.


@cache
def _gather_indices(n: int) -> np.ndarray:
    """``indices[me]``: for each egocentric slot, the slot of the absolute vector it copies."""
    lay = layout(n)
    e_block = lay.size  # the absolute vector is the layout plus the E block
    indices = np.empty((n, lay.size), dtype=np.intp)
    for me in range(n):
        index = np.arange(lay.size, dtype=np.intp)
        for rel in range(n):
            who = (rel + me) % n
            index[lay.alive.start + rel] = lay.alive.start + who
            index[lay.order.start + rel] = lay.order.start + who
            index[lay.targeted.start + rel] = lay.targeted.start + who
            index[lay.eliminated.start + rel] = lay.eliminated.start + who
            for outcome in range(NUM_OUTCOMES):
                index[lay.outcome.start + rel * NUM_OUTCOMES + outcome] = (
                    lay.outcome.start + who * NUM_OUTCOMES + outcome
                )
            for rel_target in range(n):
                target = (rel_target + me) % n
                index[lay.targets.start + rel * n + rel_target] = lay.targets.start + who * n + target
            # SEAT[k] = 1 when k == me: E[(k - me) % n].
            index[lay.seat.start + rel] = e_block + (rel - me) % n
        indices[me] = index
    return indices


@cache
def _mine_vector(mines: int) -> np.ndarray:
    vector = np.zeros(100, dtype=np.float32)
    for number in mines_as_numbers(mines):
        vector[number - 1] = 1.0
    return vector


def _absolute(state: State) -> np.ndarray:
    config = state.config
    n = config.num_players
    lay = layout(n)
    base = np.zeros(lay.size + n, dtype=np.float32)
    base[lay.size] = 1.0  # the E block
    base[lay.alive] = state.alive
    base[lay.mines] = _mine_vector(state.mines)
    battles = state.last_battles
    if battles:
        targets_start, outcome_start, order_start = lay.targets.start, lay.outcome.start, lay.order.start
        targeted = [0] * n
        share = 1.0 / len(battles)
        for position, (attacker, defender, outcome, _) in enumerate(battles):
            base[targets_start + attacker * n + defender] = 1.0
            base[outcome_start + attacker * NUM_OUTCOMES + outcome] = 1.0
            base[order_start + attacker] = (position + 1) * share
            targeted[defender] += 1
        base[lay.targeted] = [count / (n - 1) for count in targeted]
        for seat in state.last_eliminated:
            base[lay.eliminated.start + seat] = 1.0
    base[lay.round] = min(1.0, state.round / round_limit(config))
    base[lay.alive_share] = state.num_alive / n
    mine_count = state.mines.bit_count()
    base[lay.mine_share] = mine_count / 100.0
    base[lay.finals] = 1.0 if state.num_alive == 2 and not state.over else 0.0
    base[lay.mines_known] = 1.0 if mine_count else 0.0
    return base


def encode(state: State, seat: int, out: np.ndarray) -> None:
    """Fill ``out`` (float32[observation_size]) with the observation of ``seat`` (keeping nothing: a
    consumer that encodes every seat of a round uses an :class:`Observer`)."""
    _absolute(state).take(_gather_indices(state.config.num_players)[seat], out=out)


class Observer:
    """One consumer's encoder (an env's, a search's): :func:`encode`, with the round's absolute vector
    built once for every seat. It holds the last state it encoded: every ``apply_joint`` plays a round,
    so the same state object at the same round number has the same vector."""

    __slots__ = ("_state", "_round", "_base")

    def __init__(self) -> None:
        self._state: State | None = None
        self._round = -1
        self._base: np.ndarray | None = None

    def encode(self, state: State, seat: int, out: np.ndarray) -> None:
        if state is not self._state or state.round != self._round:
            self._base = _absolute(state)
            self._state, self._round = state, state.round
        self._base.take(_gather_indices(state.config.num_players)[seat], out=out)


# --- views and rendering -----------------------------------------------------------------------------


def battle_text(battle: tuple) -> str:
    attacker, defender, outcome, rolls = battle
    head = f"player_{attacker} attacks player_{defender}"
    if outcome == VOID:
        return f"{head}: void (one of them is already out)"
    shown = []
    for attack, defence in rolls:
        shown.append(f"{attack} vs {defence}" if defence else f"{attack}")
    rolled = ", re-roll ".join(shown)
    result = {
        ATTACKER_MINE: f"player_{attacker} hits a mine and is out",
        DEFENDER_MINE: f"player_{defender} hits a mine and is out",
        ATTACKER_WON: f"player_{defender} rolls lower and is out",
        DEFENDER_WON: f"player_{attacker} rolls lower and is out",
        STANDOFF: "no mine: both stay in",
    }[outcome]
    return f"{head}: {rolled}: {result}"


VIEW_FIELDS = {
    "alive": "seats still in the game",
    "eliminated_order": "seats in the order they went out",
    "finals_next": "two players are left: the next round is the finals",
    "mines": "the mine numbers in effect (a d100 roll on one is out)",
    "mines_text": "which mines these are, in words",
    "last_round": "the last round: its mine rolls, every attack with both rolls and the outcome, who went out",
}
"""What the view's less obvious entries mean (shown to language models beside the view)."""


def view(state: State, seat: int) -> dict[str, Any]:
    """Everything ``seat`` may see, JSON-serialisable (in Minefield: the whole table)."""
    config = state.config
    return {
        "you": seat,
        "alive": [who for who, living in enumerate(state.alive) if living],
        "eliminated_order": list(state.out_order),
        "round": state.round,
        "finals_next": state.num_alive == 2 and not state.over,
        "mines": mines_as_numbers(state.mines),
        "mines_text": mines_text(state),  # which mines these are (last round's, so far, kept), in words
        "variant": config.variant,
        "double_whammy": config.double_whammy,
        "last_round": {
            "mine_rolls": [{"d10": d, "pick": SIDE_NAMES[side], "numbers": list(mine_numbers(d, side))}
                           for d, side in state.last_mine_rolls],
            "attacks": [
                {"attacker": attacker, "defender": defender, "outcome": OUTCOME_NAMES[outcome],
                 "rolls": [list(pair) for pair in rolls]}
                for attacker, defender, outcome, rolls in state.last_battles
            ],
            "eliminated": list(state.last_eliminated),
        },
        "winner": state.winner if state.over and state.winner >= 0 else None,
        "end_reason": state.end_reason or None,
    }


def mines_text(state: State) -> str:
    """The mines in effect, labelled by where they come from: a player choosing a target sees the last
    round's (the new ones are rolled after every move is in), except under Simple."""
    numbers = _ranges(mines_as_numbers(state.mines))
    if state.config.variant == "simple":
        return f"mines (rolled at game start, kept all game): {numbers or 'none'}"
    if state.over:
        return f"mines of the last round: {numbers or 'none'}"
    if state.config.variant == "stacked":
        return (f"mines so far: {numbers or 'none yet'} (this round's roll is added after everyone has "
                f"chosen a target)")
    if state.num_alive == 2 and state.config.finals_mines == "keep" and state.mines:
        return f"last round's mines, kept for the finals: {numbers}"
    if state.round == 0:
        return "mines: none yet (this round's are rolled after everyone has chosen a target)"
    return f"last round's mines: {numbers} (this round's are rolled after everyone has chosen a target)"


def events(state: State, seat: int) -> tuple[int, list[str]]:
    """``(rounds played, what the latest round showed)``: a frontend prints each round once, when the
    count moves, and so keeps the whole history. Nothing in Minefield is hidden, so ``seat`` sees it all."""
    if state.round == 0:
        return 0, [mines_text(state)] if state.config.variant == "simple" else []
    lines = [f"round {state.round}:"]
    for d, side in state.last_mine_rolls:
        lines.append(f"  mine roll: d10 {d}, {SIDE_NAMES[side]}: {_ranges(list(mine_numbers(d, side)))}")
    numbers = mines_as_numbers(state.mines)
    if len(state.last_mine_rolls) != 1 or tuple(numbers) != mine_numbers(*state.last_mine_rolls[0]):
        lines.append(f"  mines this round: {_ranges(numbers)}")
    lines.extend(f"  {battle_text(battle)}" for battle in state.last_battles)
    return state.round, lines


def render(state: State, seat: int | None = None) -> str:
    """A text rendering of the table for terminals and logs (``seat``: the player reading it; in Minefield
    every seat sees the whole table)."""
    config = state.config
    variant = config.variant + (" + double whammy" if config.double_whammy else "")
    alive = [who for who, living in enumerate(state.alive) if living]
    you = "" if seat is None else f"; you are player_{seat}" + ("" if state.alive[seat] else " (out)")
    lines = [f"Minefield ({variant}) — round {state.round}, {len(alive)} of {config.num_players} alive: "
             + ", ".join(f"player_{who}" for who in alive) + you]
    for d, side in state.last_mine_rolls:
        lines.append(f"  {'mine roll' if state.round else 'game mine roll'}: d10 {d}, {SIDE_NAMES[side]}")
    lines.append(f"  {mines_text(state)}")
    if state.last_battles:
        lines.append(f"  round {state.round}, in the host's order:")
    for battle in state.last_battles:
        lines.append(f"    {battle_text(battle)}")
    if state.over:
        if state.winner >= 0:
            lines.append(f"  game over: player_{state.winner} is the last one standing")
        else:
            lines.append(f"  game over: cut off after {state.round} rounds ({len(alive)} survivors share the win)")
    elif state.num_alive == 2:
        lines.append("  next: the finals")
    return "\n".join(lines)


def _ranges(numbers: list[int]) -> str:
    parts = []
    start = previous = None
    for number in numbers:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(f"{start}-{previous}" if previous != start else str(start))
        start = previous = number
    if start is not None:
        parts.append(f"{start}-{previous}" if previous != start else str(start))
    return ", ".join(parts)

