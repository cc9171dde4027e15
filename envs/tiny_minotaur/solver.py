"""Tiny Minotaur PvP solved exactly: game values and optimal play by backward induction.

Pure Python (no gymnasium, pettingzoo or torch); numpy only to store solutions on disk.

What is solved
==============
Both decks are public and every die roll is a chance node, so Tiny Minotaur is a two-player zero-sum
perfect-information game with chance. Its state, apart from the turn counter, is::

    (HP of both seats, both seats' card counts, phase, pending hit, seat to act)

and the archetypes, tiers, boss cards and ruleset only fix the parameters (decks at the start, d20 windows,
damages). This module solves one *matchup* (both seats' parameters, see :class:`Side`) for every state
reachable from the start, whichever seat moves first.

**Value.** ``value`` is the expected return of the seat it speaks for under optimal play by both sides:
P(win) - P(loss), in [-1, 1] (the engine pays +1/-1, a draw 0/0). ``win`` is that seat's probability of
winning when both play the computed optimal policies (with the fixed tie-breaking below); the loss
probability is ``win - value`` and the draw probability the rest. Optimal play maximises ``value``;
several optimal policies can have different win/draw splits, ``win`` reports the one played here.

**The turn cap is ignored.** ``max_turns`` (default 200) is a safety net of the engine, not a rule of
the rulebook: the solver values the game without it, so the oracle is optimal for the uncapped game
(docs/oracle.md measures how rarely the cap is reached: it is a draw when it is).

Backward induction with the miss/miss loop
==========================================
Every hit discards an attack card and a dodge or heal is only ever discarded after a hit, so every
transition either removes an attack card or is a miss (or a pass), which hands the turn to the other
seat with *nothing else changed*. Call the two attack states of one (HP, cards) configuration
``A0`` (seat 0 to attack) and ``A1`` (seat 1 to attack). With ``x``/``y`` the values of ``A0``/``A1``
to the seat attacking there, ``H_i`` seat 0's value once its card ``i`` hits (after seat 1's optimal
reaction; these live in configurations with fewer attack cards, solved first) and ``p_i`` its hit
chance, and likewise ``q_j``/``G_j`` for seat 1::

    x = max_i  p_i H_i - (1 - p_i) y        y = max_j  q_j G_j - (1 - q_j) x

A seat without attack cards has the single option pass (``p = 0``). For a fixed pair ``(i, j)`` this is
two linear equations, solved exactly::

    x = (p H - (1 - p) q G) / (1 - (1 - p)(1 - q)),    y = q G - (1 - q) x

(``p`` and ``q`` are never both 0: when neither seat can attack the game is already a draw). The
right-hand sides are monotone with slope ``(1 - p)(1 - q) < 1`` in each other, so the fixed point is
unique; it is found by strategy iteration over the pairs ``(i, j)``: solve the pair, let each seat
switch to a strictly better reply, repeat; if that ever fails to settle, every pair is solved and the
one that satisfies both equations (smallest residual) is taken. The final values always come from the
exact 2x2 solve, never from a truncated iteration.

Reactions: after a hit the defender holding a dodge or a heal chooses among ``take``, ``dodge`` and
``heal`` (the one best for it; ties go to ``take``, then ``dodge``, then ``heal``: keep cards); one
holding neither takes the hit at once. Attacks tie-break to the lower action index (inside one
2-cycle the strategy iteration keeps its current choice on a tie, so a stored win chance can belong to
another optimal tie-break than the bot's; values are the same for every optimal policy).

Caching
=======
:func:`solve` keeps solutions in memory and on disk under ``$TAVERNZOO_CACHE/tiny_minotaur_solver``
(default ``~/.cache/tavernzoo``): one ``.npz`` per matchup (sorted state keys and values, no pickles)
named by a SHA-256 of the matchup's parameters, which already contain everything a ruleset or config
can change (damages, windows as face counts, decks, HP, cap, heal amount) and the solver version.
Files are written atomically; the same matchup always gives the same file contents.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core import Chance
from ..core import clone_state as _clone_state
from ..records import atomic_file
from .rules import (
    ALL_ARCHETYPES,
    ARCHETYPES,
    ATTACK_PHASE,
    CARD_NAMES,
    CLASSES,
    DODGE,
    HEAL,
    NO_BOSS,
    NUM_ACTIONS,
    PASS,
    RANDOM,
    REACT_DODGE,
    REACT_HEAL,
    REACT_PHASE,
    REACT_TAKE,
    Config,
    State,
    lay_out_deck,
    legal_actions,
    load_ruleset,
    new_game,
)

SOLVER_VERSION = 1  # part of every cache key: bump it whenever the solver's results could change
FACES = 20  # the d20
TIE = 1e-12  # values closer than this are ties (broken in the documented order)
PASS_OPTION = -1  # the "card" of a seat with no attack card


# --- what a matchup is -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One seat's fixed parameters: its deck at the start and its odds and damages.

    ``deck`` is the card count per slot (regular, middling, stronk, boss, dodge, heal) as laid out by
    ``rules.new_game`` (boss replacement done); ``attack_faces`` and ``reaction_faces`` count the d20
    faces inside each window (a regular attack hits on all 20).
    """

    deck: tuple[int, int, int, int, int, int]
    attack_faces: tuple[int, int, int, int]  # regular, middling, stronk, boss
    damage: tuple[int, int, int, int]
    reaction_faces: tuple[int, int]  # dodge, heal


@dataclass(frozen=True)
class Matchup:
    """Everything the game's outcome depends on, apart from the state: both sides and the HP rules."""

    sides: tuple[Side, Side]
    starting_hp: int
    hp_cap: int
    heal_amount: int

    def digest(self) -> str:
        """A SHA-256 of the parameters and the solver version: the cache key."""
        return _digest(self)

    def swapped(self) -> Matchup:
        return Matchup((self.sides[1], self.sides[0]), self.starting_hp, self.hp_cap, self.heal_amount)


@lru_cache(maxsize=1024)
def _digest(matchup: Matchup) -> str:
    text = json.dumps({"solver_version": SOLVER_VERSION, **asdict(matchup)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _faces(window: tuple[int, int]) -> int:
    low, high = window
    return max(0, min(high, FACES) - max(low, 1) + 1)


def side_of(config: Config, archetype: str, tier: int, boss: str | None = None,
            boss_replaces: str = "regular") -> Side:
    """The :class:`Side` of a seat with this archetype, tier and boss card (``None``/"none": no boss card)
    replacing a ``boss_replaces`` card, built exactly as ``rules.new_game`` lays out a deck."""
    rules = load_ruleset(config.ruleset)
    boss = None if boss == NO_BOSS else boss
    deck = lay_out_deck(rules, archetype, boss, boss_replaces)
    windows = rules.windows[tier - 1]
    boss_faces, boss_damage = 0, 0
    if boss is not None:
        boss_damage, per_tier = rules.bosses[boss]
        boss_faces = _faces(per_tier[tier - 1])
    return Side(
        deck=tuple(deck),  # type: ignore[arg-type]
        attack_faces=(FACES, _faces(windows["middling"]), _faces(windows["stronk"]), boss_faces),
        damage=(rules.damage["regular"], rules.damage["middling"], rules.damage["stronk"], boss_damage),
        reaction_faces=(_faces(windows["dodge"]), _faces(windows["heal"])),
    )


def side_of_state(state: State, seat: int) -> Side:
    """The :class:`Side` of ``seat`` in a game as the engine set it up (its deck as dealt at the start)."""
    return side_of(state.config, state.archetypes[seat], state.tiers[seat], state.bosses[seat],
                   state.config.boss_replaces[seat])


def matchup_of(config: Config, archetypes: tuple[str, str], tiers: tuple[int, int],
               bosses: tuple[str | None, str | None] = (None, None),
               boss_replaces: tuple[str, str] | None = None) -> Matchup:
    """The matchup of seat 0 (``archetypes[0]``, ``tiers[0]``, ``bosses[0]``) against seat 1; each boss card
    replaces the card ``boss_replaces`` names for its seat (default: the config's)."""
    replaces = config.boss_replaces if boss_replaces is None else boss_replaces
    sides = tuple(side_of(config, archetypes[s], tiers[s], bosses[s], replaces[s]) for s in (0, 1))
    return Matchup(sides, config.starting_hp, config.hp_cap, config.heal_amount)  # type: ignore[arg-type]


def matchup_of_state(state: State) -> Matchup:
    return matchup_of(state.config, state.archetypes, state.tiers, state.bosses)


# --- the solution ----------------------------------------------------------------------------------------


class Solution:
    """The solved values of one matchup, for every state reachable from its start.

    A *position* is ``(hp, cards)``: ``hp`` a pair, ``cards`` a pair of 6-tuples (regular, middling,
    stronk, boss, dodge, heal). Values are always seen from the seat named in the call.
    """

    def __init__(self, matchup: Matchup, table: dict[int, tuple[float, float, float, float]] | None = None):
        self.matchup = matchup
        radices = [matchup.hp_cap + 1, matchup.hp_cap + 1]
        for side in matchup.sides:
            radices += [count + 1 for count in side.deck]
        self._radices = radices
        strides, stride = [], 1
        for radix in radices:
            strides.append(stride)
            stride *= radix
        self._strides = strides
        self.key_space = stride  # keys lie in 0..key_space-1
        if stride >= 2**63:
            raise ValueError("this matchup's positions do not fit 63-bit keys (decks or HP cap too large)")
        # pair key -> (value of seat 0 to attack, its win chance, value of seat 1 to attack, its win chance);
        # a dict while solving, then frozen into sorted arrays (``freeze``), which take a tenth of the memory.
        self.table: dict[int, tuple[float, float, float, float]] = {} if table is None else table
        self._keys = np.zeros(0, dtype=np.int64)
        self._values = np.zeros((0, 4), dtype=np.float64)

    def __len__(self) -> int:
        return len(self._keys) + len(self.table)

    def freeze(self) -> Solution:
        """Move the solved dict into sorted arrays (keys int64, values float64[n, 4])."""
        if self.table:
            keys = np.fromiter(self.table.keys(), dtype=np.int64, count=len(self.table))
            values = np.array(list(self.table.values()), dtype=np.float64).reshape(-1, 4)
            keys = np.concatenate([self._keys, keys])
            values = np.concatenate([self._values, values])
            order = np.argsort(keys, kind="stable")
            self._keys, self._values = keys[order], values[order]
            self.table = {}
        return self

    # --- positions and keys ---

    def start(self) -> tuple[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]]:
        m = self.matchup
        return (m.starting_hp, m.starting_hp), (m.sides[0].deck, m.sides[1].deck)

    def key(self, hp: tuple[int, int] | list[int], cards) -> int:
        s = self._strides
        key = hp[0] * s[0] + hp[1] * s[1]
        for seat in (0, 1):
            deck = self.matchup.sides[seat].deck
            for slot in range(6):
                count = cards[seat][slot]
                if not 0 <= count <= deck[slot]:
                    raise ValueError(f"seat {seat} holds {count} {CARD_NAMES[slot]} cards; its deck has {deck[slot]}")
                key += count * s[2 + 6 * seat + slot]
        return key

    def decode(self, key: int) -> tuple[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]]:
        digits = []
        for radix in self._radices:
            key, digit = divmod(key, radix)
            digits.append(digit)
        return (digits[0], digits[1]), (tuple(digits[2:8]), tuple(digits[8:14]))

    # --- values ---

    def attack_value(self, hp, cards, seat: int) -> tuple[float, float]:
        """``(value, win chance)`` for ``seat`` when ``seat`` is to attack (or pass) in this position."""
        if hp[0] <= 0 or hp[1] <= 0:
            raise ValueError(f"HP {tuple(hp)}: the game is over")
        if not _has_attack(cards[0]) and not _has_attack(cards[1]):
            return 0.0, 0.0
        entry = self._entry(self.key(hp, cards))
        return (entry[0], entry[1]) if seat == 0 else (entry[2], entry[3])

    def _entry(self, key: int) -> tuple[float, float, float, float]:
        keys = self._keys
        index = int(np.searchsorted(keys, key))
        if index < len(keys) and int(keys[index]) == key:
            return tuple(self._values[index].tolist())  # type: ignore[return-value]
        entry = self.table.get(key)
        if entry is None:  # off the solved set (a position not reachable from the start): solve it too
            _solve_from(self, key)
            entry = self.table[key]
        return entry

    def start_value(self, first_seat: int) -> tuple[float, float]:
        """``(value, win chance)`` of the seat that moves first, at the start."""
        hp, cards = self.start()
        return self.attack_value(hp, cards, first_seat)

    def _after_hit_outcome(self, hp, cards, defender: int) -> tuple[float, float]:
        """(value, win chance) for the attacker once a hit is resolved into (hp, cards)."""
        if hp[defender] <= 0:
            return 1.0, 1.0
        if not _has_attack(cards[0]) and not _has_attack(cards[1]):
            return 0.0, 0.0
        value, win = self.attack_value(hp, cards, defender)
        return -value, win - value

    def reaction_values(self, hp, cards, defender: int, pending_card: int) -> dict[int, tuple[float, float]]:
        """Per legal reaction of ``defender``, ``(value, win chance)`` for the defender.

        ``cards`` are the counts *after* the attacker discarded its hitting card (as the engine holds
        them while the defender decides); ``pending_card`` is that card's slot.
        """
        attacker = 1 - defender
        damage = self.matchup.sides[attacker].damage[pending_card]
        options = _reaction_options(self.matchup, hp, cards, defender, damage)
        out = {}
        for action, outcomes in options:
            value = win = 0.0
            for probability, new_hp, new_cards in outcomes:
                v, w = self._after_hit_outcome(new_hp, new_cards, defender)
                value += probability * v
                win += probability * w
            out[action] = (-value, win - value)  # attacker's view -> defender's
        return out

    def best_reaction(self, hp, cards, defender: int, pending_card: int) -> int:
        values = self.reaction_values(hp, cards, defender, pending_card)
        best = None
        for action in (REACT_TAKE, REACT_DODGE, REACT_HEAL):  # tie order: keep cards
            if action in values and (best is None or values[action][0] > values[best][0] + TIE):
                best = action
        assert best is not None
        return best

    def attack_values(self, hp, cards, seat: int) -> dict[int, float]:
        """Per legal attack-phase action of ``seat`` (card slot = action index, 4 = pass), its value."""
        other = 1 - seat
        y = self.attack_value(hp, cards, other)[0]
        out = {}
        held = [slot for slot in range(4) if cards[seat][slot]]
        if not held:
            return {PASS: -y}
        side = self.matchup.sides[seat]
        for slot in held:
            p = side.attack_faces[slot] / FACES
            after = [list(cards[0]), list(cards[1])]
            after[seat][slot] -= 1
            after_cards = (tuple(after[0]), tuple(after[1]))
            hit = self._hit_value(hp, after_cards, seat, slot)
            out[slot] = p * hit - (1 - p) * y
        return out

    def _hit_value(self, hp, cards_after, attacker: int, slot: int) -> float:
        """The attacker's value once its card in ``slot`` hit (cards already decremented)."""
        defender = 1 - attacker
        values = self.reaction_values(hp, cards_after, defender, slot)
        return -max(v for v, _ in values.values())

    def best_attack(self, hp, cards, seat: int) -> int:
        values = self.attack_values(hp, cards, seat)
        best = None
        for action in sorted(values):  # tie order: lower action index
            if best is None or values[action] > values[best] + TIE:
                best = action
        assert best is not None
        return best

    # --- storage ---

    def to_arrays(self) -> dict[str, np.ndarray]:
        self.freeze()
        return {"keys": self._keys, "values": self._values, "meta": np.array(_meta(self.matchup))}

    @classmethod
    def from_arrays(cls, matchup: Matchup, arrays) -> Solution:
        if str(arrays["meta"]) != _meta(matchup):
            raise ValueError("cached solution is for another matchup or solver version")
        solution = cls(matchup)
        keys, values = np.asarray(arrays["keys"], dtype=np.int64), np.asarray(arrays["values"], dtype=np.float64)
        if keys.ndim != 1 or values.shape != (len(keys), 4) or np.any(keys[1:] <= keys[:-1]):
            raise ValueError("cached solution has malformed arrays")
        solution._keys, solution._values = keys, values
        return solution


def _meta(matchup: Matchup) -> str:
    return json.dumps({"solver_version": SOLVER_VERSION, "matchup": asdict(matchup)}, sort_keys=True)


def _has_attack(cards) -> bool:
    return bool(cards[0] or cards[1] or cards[2] or cards[3])


def _reaction_options(matchup: Matchup, hp, cards, defender: int, damage: int):
    """The defender's legal reactions, each with its outcomes ``(probability, hp, cards)``."""
    side = matchup.sides[defender]
    mine = cards[defender]

    def with_(new_hp: int, new_mine: tuple[int, ...] | None = None):
        h = list(hp)
        h[defender] = new_hp
        c = list(cards)
        if new_mine is not None:
            c[defender] = new_mine
        return tuple(h), tuple(c)

    take_hp, take_cards = with_(hp[defender] - damage)
    options = [(REACT_TAKE, [(1.0, take_hp, take_cards)])]
    if mine[DODGE]:
        p = side.reaction_faces[0] / FACES
        fewer = list(mine)
        fewer[DODGE] -= 1
        h, c = with_(hp[defender], tuple(fewer))
        options.append((REACT_DODGE, [(p, h, c), (1 - p, take_hp, take_cards)]))
    if mine[HEAL]:
        p = side.reaction_faces[1] / FACES
        fewer = list(mine)
        fewer[HEAL] -= 1
        h, c = with_(min(matchup.hp_cap, hp[defender] - damage + matchup.heal_amount), tuple(fewer))
        options.append((REACT_HEAL, [(p, h, c), (1 - p, take_hp, take_cards)]))
    return options  # only take when the defender holds neither: the hit lands at once


# --- the solver ------------------------------------------------------------------------------------------


def _solve_from(solution: Solution, root: int) -> None:
    """Fill ``solution.table`` for ``root`` and everything reachable from it (depth-first, memoised).

    The recursion depth is at most the number of attack cards in play (each level discards one).
    """
    m = solution.matchup
    table = solution.table
    strides = solution._strides
    radices = solution._radices
    cap, heal_amount = m.hp_cap, m.heal_amount
    hp_stride = (strides[0], strides[1])
    card_stride = (tuple(strides[2:8]), tuple(strides[8:14]))
    # Per seat: its attack slots as (slot, hit chance, damage, key delta of discarding it).
    attacks = tuple(
        tuple((slot, m.sides[s].attack_faces[slot] / FACES, m.sides[s].damage[slot], card_stride[s][slot])
              for slot in range(4))
        for s in (0, 1)
    )
    dodge_p = (m.sides[0].reaction_faces[0] / FACES, m.sides[1].reaction_faces[0] / FACES)
    heal_p = (m.sides[0].reaction_faces[1] / FACES, m.sides[1].reaction_faces[1] / FACES)
    dodge_delta = (card_stride[0][DODGE], card_stride[1][DODGE])
    heal_delta = (card_stride[0][HEAL], card_stride[1][HEAL])

    get = table.get

    def node(key: int) -> tuple[float, float, float, float]:
        # Called only for keys not in the table yet (callers look up first: a call costs more).
        rest, hp0 = divmod(key, radices[0])
        rest, hp1 = divmod(rest, radices[1])
        held = ([], [])
        for seat in (0, 1):
            for slot in range(6):
                rest, count = divmod(rest, radices[2 + 6 * seat + slot])
                held[seat].append(count)
        hps = (hp0, hp1)
        n_attack = (held[0][0] + held[0][1] + held[0][2] + held[0][3],
                    held[1][0] + held[1][1] + held[1][2] + held[1][3])
        options = ([], [])  # per seat: (hit chance, value after hit, win chance after hit)
        for a in (0, 1):
            d = 1 - a
            if not n_attack[a]:
                options[a].append((0.0, 0.0, 0.0))
                continue
            hp_d = hps[d]
            d_step = hp_stride[d]
            d_dodge, d_heal = held[d][DODGE], held[d][HEAL]
            # after the hit someone can still attack (else the game is a draw unless it knocked out)
            play_goes_on = n_attack[a] > 1 or n_attack[d] > 0
            # the child's entry holds seat d's (value, win) at 2d, 2d+1; the attacker's view negates
            iv, iw = 2 * d, 2 * d + 1
            for slot, p, damage, delta in attacks[a]:
                if not held[a][slot]:
                    continue
                base = key - delta  # the hitting card is discarded
                if hp_d - damage <= 0:
                    take_v = take_w = 1.0
                elif not play_goes_on:
                    take_v = take_w = 0.0
                else:
                    k = base - damage * d_step
                    child = get(k) or node(k)
                    take_v, take_w = -child[iv], child[iw] - child[iv]
                best_v, best_w = take_v, take_w
                if d_dodge:
                    if not play_goes_on:
                        ok_v = ok_w = 0.0
                    else:
                        k = base - dodge_delta[d]
                        child = get(k) or node(k)
                        ok_v, ok_w = -child[iv], child[iw] - child[iv]
                    q = dodge_p[d]
                    v = q * ok_v + (1 - q) * take_v
                    if v < best_v - TIE:
                        best_v, best_w = v, q * ok_w + (1 - q) * take_w
                if d_heal:
                    healed = min(cap, hp_d - damage + heal_amount)
                    if healed <= 0:
                        ok_v = ok_w = 1.0
                    elif not play_goes_on:
                        ok_v = ok_w = 0.0
                    else:
                        k = base - heal_delta[d] + (healed - hp_d) * d_step
                        child = get(k) or node(k)
                        ok_v, ok_w = -child[iv], child[iw] - child[iv]
                    q = heal_p[d]
                    v = q * ok_v + (1 - q) * take_v
                    if v < best_v - TIE:
                        best_v, best_w = v, q * ok_w + (1 - q) * take_w
                options[a].append((p, best_v, best_w))
        entry = _solve_cycle(options[0], options[1])
        table[key] = entry
        return entry

    if root not in table:
        node(root)


def _best(options, other_value: float) -> tuple[int, float]:
    """The option with the highest ``p h - (1 - p) other_value`` (first on ties) and that value."""
    best, best_value = 0, -2.0
    for index, (p, h, _) in enumerate(options):
        value = p * h - (1 - p) * other_value
        if value > best_value + TIE:
            best, best_value = index, value
    return best, best_value


def _pair(a, b) -> tuple[float, float]:
    p, h, _ = a
    q, g, _ = b
    x = (p * h - (1 - p) * q * g) / (1 - (1 - p) * (1 - q))
    return x, q * g - (1 - q) * x


def _solve_cycle(options0, options1) -> tuple[float, float, float, float]:
    """The fixed point of the two attack states of one position (see the module docstring)."""
    # Strategy iteration from the greedy pair (each seat's best as if a miss were worth 0).
    i = _best(options0, 0.0)[0] if len(options0) > 1 else 0
    j = _best(options1, 0.0)[0] if len(options1) > 1 else 0
    x, y = _pair(options0[i], options1[j])
    for _ in range(16):
        settled = True
        if len(options0) > 1:
            i2, value = _best(options0, y)
            p, h, _ = options0[i]
            if value > p * h - (1 - p) * y + TIE:
                i, settled = i2, False
        if len(options1) > 1:
            j2, value = _best(options1, x)
            q, g, _ = options1[j]
            if value > q * g - (1 - q) * x + TIE:
                j, settled = j2, False
        if settled:
            break
        x, y = _pair(options0[i], options1[j])
    else:  # did not settle: take the pair whose exact solution satisfies both equations
        best = None
        for i2 in range(len(options0)):
            for j2 in range(len(options1)):
                x2, y2 = _pair(options0[i2], options1[j2])
                residual = abs(_best(options0, y2)[1] - x2) + abs(_best(options1, x2)[1] - y2)
                if best is None or residual < best[0]:
                    best = (residual, i2, j2)
        _, i, j = best  # type: ignore[misc]
        x, y = _pair(options0[i], options1[j])
    # Win chances of the chosen pair: the same linear system with the win chances after a hit, where
    # a miss hands over a state in which my win is the other seat's loss (its win minus its value).
    p, _, hw = options0[i]
    q, _, gw = options1[j]
    w0 = (p * hw + (1 - p) * (q * gw - (1 - q) * x - y)) / (1 - (1 - p) * (1 - q))
    w1 = q * gw + (1 - q) * (w0 - x)
    return x, w0, y, w1


# --- solving with a cache --------------------------------------------------------------------------------

MEMORY_SLOTS = 8  # solutions kept in memory (the largest standard one takes ~50 MB frozen)
_MEMORY: OrderedDict[str, Solution] = OrderedDict()


def cache_dir() -> Path:
    """``$TAVERNZOO_CACHE/tiny_minotaur_solver``, by default under ``~/.cache/tavernzoo``."""
    root = os.environ.get("TAVERNZOO_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tavernzoo")
    return Path(root) / "tiny_minotaur_solver"


def cache_path(matchup: Matchup) -> Path:
    return cache_dir() / f"{matchup.digest()}.npz"


@lru_cache(maxsize=1024)
def canonical(matchup: Matchup) -> tuple[Matchup, bool]:
    """The matchup with its sides in a fixed order, and whether that swapped them.

    A matchup and its mirror image are the same game with the seats renamed, so only the canonical
    one is solved and cached.
    """
    swapped = matchup.swapped()
    if json.dumps(asdict(swapped.sides[0]), sort_keys=True) < json.dumps(asdict(matchup.sides[0]), sort_keys=True):
        return swapped, True
    return matchup, False


def solve(matchup: Matchup, use_cache: bool = True) -> Solution:
    """The solution of ``matchup`` (both first movers), from memory, the disk cache or a fresh solve.

    ``use_cache=False`` solves afresh and touches neither cache (for tests and benchmarks).
    """
    if not use_cache:
        return solve_uncached(matchup)
    digest = matchup.digest()
    solution = _MEMORY.get(digest)
    if solution is not None:
        _MEMORY.move_to_end(digest)
        return solution
    path = cache_path(matchup)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as arrays:
                solution = Solution.from_arrays(matchup, arrays)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            solution = None  # unreadable or foreign: solve again and overwrite
    if solution is None:
        solution = solve_uncached(matchup)
        try:
            save(path, solution)
        except OSError:
            pass  # a read-only cache directory only costs the next process a solve
    _MEMORY[digest] = solution
    while len(_MEMORY) > MEMORY_SLOTS:
        _MEMORY.popitem(last=False)
    return solution


def solve_uncached(matchup: Matchup) -> Solution:
    """Solve every position reachable from the start of ``matchup`` (either seat first) afresh."""
    solution = Solution(matchup)
    hp, cards = solution.start()
    if _has_attack(cards[0]) or _has_attack(cards[1]):
        _solve_from(solution, solution.key(hp, cards))
    return solution.freeze()


def save(path: str | os.PathLike, solution: Solution) -> None:
    """Write ``solution`` as an ``.npz`` atomically (readers see the old file or the whole new one).

    The zip entries carry a fixed timestamp, so the same solution always gives the same bytes.
    """
    arrays = solution.to_arrays()
    with atomic_file(path, "wb") as file:
        with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(arrays):
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w", force_zip64=True) as entry:
                    np.lib.format.write_array(entry, np.asanyarray(arrays[name]), allow_pickle=False)


def clear_memory() -> None:
    """Forget the solutions held in memory (the disk cache stays)."""
    _MEMORY.clear()


# --- the initiative roll: a higher roll is never worse ---------------------------------------------------


def distinct_archetypes(config: Config) -> tuple[str, ...]:
    """One archetype per distinct deck of the config's ruleset (archetypes with equal decks play alike)."""
    decks = load_ruleset(config.ruleset).decks
    seen: dict = {}
    for archetype in ALL_ARCHETYPES:
        seen.setdefault(decks[archetype], archetype)
    return tuple(seen.values())


def first_mover(config: Config, first: tuple[str, int], second: tuple[str, int]) -> tuple[float, float]:
    """``(value, win chance)`` of the seat that moves first with ``(archetype, tier)`` ``first`` against
    ``second``, no boss cards, under optimal play (solved through the cache)."""
    matchup, swapped = canonical(matchup_of(config, (first[0], second[0]), (first[1], second[1])))
    return solve(matchup).start_value(1 if swapped else 0)


def by_roll(config: Config, me: str, opponent: str, opponent_roll: int,
            first_values: dict | None = None) -> list[tuple[int, float, float]]:
    """``(my roll, my value, my win chance)`` for every initiative roll of mine (ascending, the opponent's
    roll excluded: equal rolls are rolled again), archetype ``me`` against ``opponent``, who rolled
    ``opponent_roll``. The higher roll moves first; each roll sets its roller's tier."""
    tier_of = load_ruleset(config.ruleset).tier_of
    memo = {} if first_values is None else first_values
    opponent_side = (opponent, tier_of(opponent_roll))
    rows = []
    for roll in range(1, 21):
        if roll == opponent_roll:
            continue
        mine = (me, tier_of(roll))
        first, second = (mine, opponent_side) if roll > opponent_roll else (opponent_side, mine)
        if (first, second) not in memo:
            memo[first, second] = first_mover(config, first, second)
        value, win = memo[first, second]
        if roll < opponent_roll:  # the opponent moved first: my value is minus its, my win its loss
            value, win = -value, win - value
        rows.append((roll, value, win))
    return rows


def initiative_violations(config: Config, archetypes: tuple[str, ...] | None = None,
                          tolerance: float = 1e-9) -> list[str]:
    """Where a higher initiative roll is worse, for the same archetypes (no boss cards).

    The property checked: for every ordered pair of archetypes (me, opponent) and every roll of the
    opponent, my exact value (P(win) - P(loss)) and my exact win chance under optimal play are both
    non-decreasing in my own roll. This covers the tier a roll gives (within the first mover's tiers
    and within the second mover's) and the step from moving second to moving first. An empty list
    means the property holds. Archetypes default to one per distinct deck of the ruleset.
    """
    if archetypes is None:
        archetypes = distinct_archetypes(config)
    memo: dict = {}
    found = []
    for me in archetypes:
        for opponent in archetypes:
            for opponent_roll in range(1, 21):
                rows = by_roll(config, me, opponent, opponent_roll, memo)
                for (low_roll, v0, w0), (high_roll, v1, w1) in zip(rows, rows[1:], strict=False):
                    if v1 < v0 - tolerance or w1 < w0 - tolerance:
                        found.append(
                            f"{me} against {opponent} (who rolled {opponent_roll}): rolling {high_roll} instead of "
                            f"{low_roll} changes my value {v0:+.4f} -> {v1:+.4f}, win chance {w0:.4f} -> {w1:.4f}")
    return found


# --- the best response to a fixed policy: a bot's exploitability -----------------------------------------
#
# A bot's exploitability is the expected score of the best response to the bot's own policy. Tiny Minotaur
# has perfect information, so the best response is a backward induction like the solver's above, where
# the bot's decision nodes average over its policy instead of taking a maximum. ``policy(state, seat)``
# is asked at every decision of the bot that the best response and chance can reach.

Policy = Callable[[State, int], Sequence[float]]


@dataclass(frozen=True)
class BestResponse:
    """The best response to one policy, averaged over the deals of a config.

    ``score`` is the best response's expected return (P(win) - P(loss)) over both seats; ``per_seat[b]``
    the same with the bot in seat ``b``. Averaged over both seats a zero-sum game's value is 0, so
    ``score`` is the exploitability itself: 0 for an optimal policy, up to 1 for one that always loses.
    ``decisions`` counts the bot's decisions queried (states with more than one legal action).
    """

    score: float
    per_seat: tuple[float, float]
    deals: int
    decisions: int

    @property
    def milli_points(self) -> float:
        """``score`` in milli-points per game (1000 = the best response wins every game)."""
        return 1000.0 * self.score


def deals(config: Config) -> list[tuple[float, State]]:
    """Every distinct start of a game under ``config`` with its probability: classes and archetypes as
    dealt (per the config), the initiative pair grouped by what it decides (both tiers, the first seat).

    The states come from ``rules.new_game`` itself with the dice scripted, so they are set up exactly as
    the engine sets up a game (only ``initiative_rolls`` names one representative pair of each group).
    """
    rules_table = load_ruleset(config.ruleset)
    per_seat = []
    for class_name, archetype in zip(config.classes, config.archetypes, strict=True):
        options = []  # (probability, archetype, scripted outcomes)
        classes = list(CLASSES) if class_name == RANDOM else [class_name]
        for name in classes:
            draws = [(3, CLASSES.index(name))] if class_name == RANDOM else []
            pair = ARCHETYPES[name]
            if archetype == RANDOM:
                for ai in range(len(pair)):
                    options.append((1 / len(classes) / len(pair), [*draws, (len(pair), ai)]))
            else:
                options.append((1 / len(classes), draws))
        per_seat.append(options)
    groups: dict[tuple[int, int, int], list] = {}
    for r0 in range(1, 21):
        for r1 in range(1, 21):
            if r0 != r1:
                key = (rules_table.tier_of(r0), rules_table.tier_of(r1), 0 if r0 > r1 else 1)
                groups.setdefault(key, [0, (r0, r1)])[0] += 1
    pairs = sum(count for count, _ in groups.values())
    out = []
    for p0, draws0 in per_seat[0]:
        for p1, draws1 in per_seat[1]:
            for count, (r0, r1) in groups.values():
                chance = Chance.scripted([*draws0, *draws1, (20, r0 - 1), (20, r1 - 1)])
                out.append((p0 * p1 * count / pairs, new_game(config, chance)))
    return out


@dataclass(frozen=True)
class Decision:
    """One decision with a choice on the best response's lines (:func:`best_response_decisions`).

    ``seat`` decides (the bot's seat, or the best response's); ``state`` is the engine's state there (as
    the bot is asked about it: its ``turn`` the fewest that reach it, plus the offset); ``visits`` the
    expected number of times play reaches it, the bot playing its policy and the best response its best
    move (a position of the miss/miss loop can be visited more than once, so it may exceed 1);
    ``probabilities`` the decider's policy there (the best response's: its move, probability 1). A bot
    decision the best response only considered, off its lines, has ``visits`` 0; the best response's
    decisions are only those it reaches.
    """

    seat: int
    state: State
    visits: float
    probabilities: tuple[float, ...]


def best_response(config: Config, policy: Policy, seats: Sequence[int] = (0, 1),
                  on_deal: Callable[[], None] | None = None, turn_offset: int = 0,
                  starts: Sequence[tuple[float, State]] | None = None,
                  on_decisions: Callable[[list[Decision], int, float], None] | None = None) -> BestResponse:
    """The best response to ``policy`` playing each of ``seats`` in turn, over every deal of ``config``.

    The bot's side is asked ``policy(state, seat)`` for its probabilities over the actions (index =
    action; only legal ones may be positive, and they must sum to 1) at each of its decisions with more
    than one legal action. ``state`` is the engine's state as it would stand, valid only during the call
    (copy what you keep); its ``turn`` is the fewest attack turns that reach it (one per discarded attack
    card): like the solver, this computation leaves the turn counter and its cap out (see
    docs/strength.md for what that means for a policy that reads the turn from its observation).
    ``on_deal()`` is called after each deal and seat (for a progress bar). ``turn_offset`` adds that many
    turns to the ones the bot is shown (as after that many misses; capped at ``max_turns``): how much a
    policy that reads the turn would change (docs/strength.md). ``starts``: ``(probability, start)`` pairs
    to average over instead of every deal (:func:`deals`), e.g. a sample of them. ``on_decisions(decisions,
    bot, probability)``, where given, receives each start's decisions (:func:`best_response_decisions`)
    with the bot's seat and the start's probability.
    """
    totals = [0.0, 0.0]
    count = [0]
    starts = deals(config) if starts is None else list(starts)
    for bot in seats:
        for probability, start in starts:
            found: list[Decision] | None = [] if on_decisions is not None else None
            totals[bot] += probability * _best_response_value(start, bot, policy, count, turn_offset, found)
            if found is not None:
                on_decisions(found, bot, probability)
            if on_deal is not None:
                on_deal()
    per_seat = (totals[0], totals[1])
    score = sum(totals[s] for s in seats) / len(seats)
    return BestResponse(score, per_seat, len(starts), count[0])


def best_response_decisions(start: State, bot: int, policy: Policy,
                            turn_offset: int = 0) -> tuple[float, list[Decision]]:
    """The best response to ``policy`` (the bot in seat ``bot``) from ``start``: its expected return, and
    every decision with a choice that it involves, each with its expected visits.

    The bot's decisions are exactly those :func:`best_response` asks ``policy`` about (each once), the
    ones off the best response's lines with ``visits`` 0; the best response's own are those it reaches
    (``visits`` > 0). Visits come from a forward pass over the positions in order of attack cards held
    (every hit discards one, so play only ever moves to fewer): a position entered with ``m_b`` (the bot to
    attack) and ``m_r`` (the best response to attack), hit chances ``q`` (the bot's turn, averaged over its
    policy) and ``p`` (the best response's move), is visited ``V_r = (m_r + (1 - q) m_b) / (1 - (1 - p)(1 -
    q))`` times with the best response to attack and ``V_b = m_b + (1 - p) V_r`` with the bot to.
    With the solver's optimal values ``Q``, the best response's return minus the game's value from
    ``start`` is the sum over these decisions of ``visits`` times the decider's regret, the bot's counted
    plus and the best response's minus (the performance difference), which tests/test_br_positions.py
    checks.
    """
    decisions: list[Decision] = []
    value = _best_response_value(start, bot, policy, [0], turn_offset, decisions)
    return value, decisions


def _best_response_value(start: State, bot: int, policy: Policy, count: list[int], turn_offset: int = 0,
                         decisions: list[Decision] | None = None) -> float:
    """The best response's expected return from ``start`` (seat ``1 - bot``), the bot playing ``policy``;
    with ``decisions`` (a list), the decisions and their visits appended to it
    (:func:`best_response_decisions`)."""
    br = 1 - bot
    matchup = Matchup((side_of_state(start, 0), side_of_state(start, 1)), start.config.starting_hp,
                      start.config.hp_cap, start.config.heal_amount)
    full = [sum(start.cards[s][:4]) for s in (0, 1)]  # attack cards at the start
    # The state the bot is asked about: a copy of the start, rewritten before each question.
    state = _clone_state(start)
    memo: dict[tuple, tuple[float, float]] = {}
    # The bot's answers, kept only for the forward pass (each decision is asked once either way).
    asked: dict[tuple, Sequence[float]] | None = {} if decisions is not None else None

    def place(hp, cards, phase: int, seat: int, pending: int) -> None:
        state.hp = list(hp)
        state.cards = [list(cards[0]), list(cards[1])]
        state.phase, state.to_act, state.pending_card = phase, seat, pending
        state.turn = min(start.config.max_turns,
                         full[0] + full[1] - sum(cards[0][:4]) - sum(cards[1][:4]) + turn_offset)

    def ask(hp, cards, phase: int, pending: int) -> Sequence[float]:
        if asked is not None:
            known = asked.get((hp, cards, phase, pending))
            if known is not None:
                return known
        place(hp, cards, phase, bot, pending)
        count[0] += 1
        probabilities = policy(state, bot)
        legal = legal_actions(state)
        total = 0.0
        for action, p in enumerate(probabilities):
            if p < 0 or (p > 0 and action not in legal):
                raise ValueError(f"the policy gave probability {p} to {action}; legal here: {legal}")
            total += p
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"the policy's probabilities sum to {total}, not 1")
        if asked is not None:
            asked[(hp, cards, phase, pending)] = probabilities = tuple(probabilities)
        return probabilities

    def outcome(hp, cards, defender: int) -> float:
        """The best response's value once a hit is resolved into (hp, cards); the defender attacks next."""
        if hp[defender] <= 0:
            return 1.0 if defender == bot else -1.0
        if not _has_attack(cards[0]) and not _has_attack(cards[1]):
            return 0.0
        key = (hp, cards)
        entry = memo.get(key) or node(hp, cards)
        return entry[defender]

    def reactions(hp, cards, attacker: int, slot: int):
        """The defender's reactions once ``attacker``'s card ``slot`` hit: their outcomes and values."""
        damage = matchup.sides[attacker].damage[slot]
        options = _reaction_options(matchup, hp, cards, 1 - attacker, damage)
        return options, {action: sum(p * outcome(h, c, 1 - attacker) for p, h, c in outcomes)
                         for action, outcomes in options}

    def after_hit(hp, cards, attacker: int, slot: int) -> float:
        """The best response's value once ``attacker``'s card ``slot`` hit (cards already decremented)."""
        _, values = reactions(hp, cards, attacker, slot)
        if 1 - attacker == br:
            return max(values.values())
        if len(values) == 1:
            return values[REACT_TAKE]
        probabilities = ask(hp, cards, REACT_PHASE, slot)
        return sum(probabilities[action] * value for action, value in values.items())

    def attack_options(hp, cards):
        """Per seat its attack options ``(hit chance, value after the hit, weight, slot)`` (pass: slot -1)."""
        options = {}
        for seat in (0, 1):
            held = [slot for slot in range(4) if cards[seat][slot]]
            if not held:
                options[seat] = [(0.0, 0.0, 1.0, PASS_OPTION)]  # pass
                continue
            weights = dict.fromkeys(held, 1.0)
            if seat == bot and len(held) > 1:
                probabilities = ask(hp, cards, ATTACK_PHASE, -1)
                weights = {slot: probabilities[slot] for slot in held if probabilities[slot] > 0}
            side = matchup.sides[seat]
            rows = []
            for slot, weight in weights.items():
                after = [list(cards[0]), list(cards[1])]
                after[seat][slot] -= 1
                after_cards = (tuple(after[0]), tuple(after[1]))
                rows.append((side.attack_faces[slot] / FACES, after_hit(hp, after_cards, seat, slot), weight, slot))
            options[seat] = rows
        return options

    def choose(options):
        """The bot's averaged turn ``(c, q)`` and the best response's best attack ``(index, value)``."""
        # The bot's turn as one averaged option: its value is c + (1 - q) * (value with me to attack).
        c = sum(w * p * h for p, h, w, _ in options[bot])
        q = sum(w * p for p, _, w, _ in options[bot])
        best, index = None, 0
        for i, (p, h, _, _) in enumerate(options[br]):
            denominator = 1 - (1 - p) * (1 - q)
            # Nobody can ever hit (a seat passing against windows of no faces): a draw at the cap.
            value = (p * h + (1 - p) * c) / denominator if denominator > TIE else 0.0
            if best is None or value > best:
                best, index = value, i
        return c, q, index, best

    def node(hp, cards) -> tuple[float, float]:
        """(value with seat 0 to attack, value with seat 1 to attack), both for the best response."""
        c, q, _, best = choose(attack_options(hp, cards))
        entry = [0.0, 0.0]
        entry[br] = best
        entry[bot] = c + (1 - q) * best
        memo[(hp, cards)] = result = (entry[0], entry[1])
        return result

    hp0 = (start.hp[0], start.hp[1])
    cards0 = (tuple(start.cards[0]), tuple(start.cards[1]))
    if not _has_attack(cards0[0]) and not _has_attack(cards0[1]):
        return 0.0
    value = node(hp0, cards0)[start.first_seat]
    if decisions is not None:
        _forward(start, bot, (hp0, cards0), asked, attack_options, choose, reactions, place, state, decisions)
    return value


def _forward(start: State, bot: int, root, asked, attack_options, choose, reactions, place, state,
             decisions: list[Decision]) -> None:
    """The visits of every decision on the best response's lines (:func:`best_response_decisions`)."""
    br = 1 - bot
    visited: dict[tuple, float] = {}  # the bot's decisions reached: (hp, cards, phase, pending) -> visits
    mass: dict[tuple, list[float]] = {root: [0.0, 0.0]}  # position -> mass entering with seat 0 / 1 to attack
    mass[root][start.first_seat] = 1.0
    by_cards: dict[int, list[tuple]] = {}  # attack cards held -> positions, processed from the most down

    def held(position) -> int:
        cards = position[1]
        return sum(cards[0][:4]) + sum(cards[1][:4])

    def record(seat: int, hp, cards, phase: int, pending: int, visits: float, probabilities) -> None:
        place(hp, cards, phase, seat, pending)
        decisions.append(Decision(seat, _clone_state(state), visits, tuple(probabilities)))

    def flow(hp, cards, attacker: int, slot: int, amount: float) -> None:
        """``amount`` of play in which ``attacker``'s card ``slot`` hit: the reaction, then the positions."""
        defender = 1 - attacker
        options, values = reactions(hp, cards, attacker, slot)
        if defender == br:
            chosen = max(values, key=lambda a: values[a])
            if len(values) > 1 and amount > 0:
                one_hot = [0.0] * NUM_ACTIONS
                one_hot[chosen] = 1.0
                record(br, hp, cards, REACT_PHASE, slot, amount, one_hot)
            shares = {chosen: 1.0}
        elif len(values) == 1:
            shares = {REACT_TAKE: 1.0}
        else:
            probabilities = asked[(hp, cards, REACT_PHASE, slot)]
            key = (hp, cards, REACT_PHASE, slot)
            visited[key] = visited.get(key, 0.0) + amount
            shares = {action: probabilities[action] for action in values if probabilities[action] > 0}
        for action, outcomes in options:
            share = shares.get(action, 0.0)
            for probability, h, c in outcomes:
                if share == 0.0 or h[defender] <= 0 or not (_has_attack(c[0]) or _has_attack(c[1])):
                    continue  # the game is over
                position = (h, c)
                if position not in mass:
                    mass[position] = [0.0, 0.0]
                    by_cards.setdefault(held(position), []).append(position)
                mass[position][defender] += amount * share * probability

    by_cards[held(root)] = [root]
    for cards_held in range(held(root), 0, -1):
        for position in by_cards.pop(cards_held, []):
            hp, cards = position
            options = attack_options(hp, cards)
            c, q, index, _ = choose(options)
            p, _, _, slot = options[br][index]
            denominator = 1 - (1 - p) * (1 - q)
            if denominator <= TIE:
                continue  # nobody can hit: a draw at the cap
            m = mass[position]
            v_br = (m[br] + (1 - q) * m[bot]) / denominator
            v_bot = m[bot] + (1 - p) * v_br
            if len(options[br]) > 1 and v_br > 0:  # (0: the bot always hits first)
                one_hot = [0.0] * NUM_ACTIONS
                one_hot[slot] = 1.0
                record(br, hp, cards, ATTACK_PHASE, -1, v_br, one_hot)
            if sum(1 for s in range(4) if cards[bot][s]) > 1:
                key = (hp, cards, ATTACK_PHASE, -1)
                visited[key] = visited.get(key, 0.0) + v_bot
            if slot != PASS_OPTION and p > 0:
                after = [list(cards[0]), list(cards[1])]
                after[br][slot] -= 1
                flow(hp, (tuple(after[0]), tuple(after[1])), br, slot, v_br * p)
            for p_bot, _, weight, bot_slot in options[bot]:
                if bot_slot != PASS_OPTION and p_bot > 0:
                    after = [list(cards[0]), list(cards[1])]
                    after[bot][bot_slot] -= 1
                    flow(hp, (tuple(after[0]), tuple(after[1])), bot, bot_slot, v_bot * weight * p_bot)
    for (hp, cards, phase, pending), probabilities in asked.items():
        record(bot, hp, cards, phase, pending, visited.get((hp, cards, phase, pending), 0.0), probabilities)
