"""Tiny Minotaur compiled with numba: many duels as rows of numpy arrays, stepped and played out in compiled code.

An accelerator beside :mod:`.rules`, never a second reading of the rules: ``rules.py`` stays the reference,
and tests/test_kernel_tiny_minotaur.py replays seeded games move by move in both engines (same actions, same
chance stream) and checks the legal sets, every State field, the generator's state and the returns at every
step. Every function below follows the function of ``rules.py`` with the same name (without the leading
underscore where the rules have one), in the same order of effects and chance draws. The shared pieces
(numba's decorators, ``random.Random``'s generator, the row's layout) are envs/compiled.py's.

What it holds
-------------
A :class:`Batch` is ``G`` games: ``state`` (int64, one row of :data:`ROW_SIZE` per game: the options and the
ruleset's tables, then every field of ``rules.State`` at a fixed offset, see the layout below) and
``chance`` (uint32, one row of 625 per game: the Mersenne Twister of the game's ``Chance``, so the kernel
draws what the Python engine draws from the same seed). ``from_states`` and ``to_state`` convert from and
to ``rules.State``; ``new_games`` deals in the kernel. The ruleset's tables travel in the row (damage, tiers,
windows, decks and the seats' bosses), so a house ruleset given by path plays in the kernel as the bundled
ones do. ``last_events`` (at most three a decision) is held, so a converted State renders and observes as
the original; the Chance's log of outcomes is not (``state[g, DRAWS]`` counts the draws made).

Entry points (every loop over games and steps runs in compiled code)
--------------------------------------------------------------------
``new_games(config, seeds)``, ``legal_mask(batch)`` (``legal_list(batch, g)`` for one game),
``step_batch(batch, actions)``, ``rollout_random(batch, rng_seeds, max_steps)``, ``returns(batch)``,
``is_terminal(batch)``, ``current_seat(batch)``; ``first_difference(batch, g, state)`` names where a game
departs from a rules State (the differential test's check). The heuristic bot's compiled rollouts build on
these in agents/tiny_minotaur_kernel.py. Numba compiles everything on first use (:func:`compile_kernel`, a
few seconds) and caches it beside this file.

Options: every option of ``tiny_minotaur_v1`` (bundled and house rulesets, random or fixed classes and
archetypes, bosses). :func:`unsupported` names what the kernel cannot take (numba missing, a scripted
Chance or one of another class such as a search's dealer); :func:`random_rollouts` then plays on the Python
rules and says so in one line. A deal with more than 16 initiative re-rolls (about one in 10**20) plays on
in the kernel but has no State to give back (``to_state`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import kernel_batch
from ..compiled import GENERATOR, MT_SIZE, Kernel, numba, policy_random, random_float, seed_generator
from ..core import Chance
from . import rules
from .rules import (
    ALL_ARCHETYPES,
    ARCHETYPES,
    ATTACK_PHASE,
    BOSS,
    CARD_NAMES,
    CLASSES,
    DODGE,
    GAME_OVER,
    HEAL,
    MIDDLING,
    NUM_ACTIONS,
    PASS,
    REACT_DODGE,
    REACT_HEAL,
    REACT_PHASE,
    REACT_TAKE,
    REGULAR,
    STRONK,
)


def _argument_types() -> dict:
    """The numba types of this kernel's parameters, by name (every other parameter is an int64; ``mt``,
    ``seed`` and ``policy`` are envs/compiled.py's)."""
    from numba import types

    return {"s": types.int64[::1], "row": types.int64[::1], "out": types.int64[::1],
            "legal": types.int64[::1], "seeds": types.int64[::1], "actions": types.int64[::1],
            "steps": types.int64[::1], "rng_seeds": types.uint64[::1], "values_row": types.float64[::1],
            "states": types.int64[:, ::1], "chances": types.uint32[:, ::1], "masks": types.boolean[:, ::1],
            "values": types.float64[:, ::1], "succeeded": types.boolean}


# Every compiled function of Tiny Minotaur: this file's, then its users' (a bot's rollout policy names its
# parameters the same way and decorates with these).
KERNEL = Kernel(_argument_types, includes=(GENERATOR,))
inlined, compiled, compiled_allocating = KERNEL.inlined, KERNEL.compiled, KERNEL.compiled_allocating
compile_kernel = KERNEL.compile

# --- the layout of a game's row -------------------------------------------------------------------------------

LAYOUT = kernel_batch.RowLayout()
FIELDS = LAYOUT.fields
_field = LAYOUT.field

MAX_ROLL_ROUNDS = 16  # initiative pairs kept; 16 equal pairs in a row (1 in 20**16) never happen in practice
MAX_EVENTS = 3  # the attack, the reaction's roll, the hit taken
NUM_CARDS = len(CARD_NAMES)
ATTACK_SLOTS = 4  # regular, middling, stronk, boss
NUM_ARCHETYPES = len(ALL_ARCHETYPES)
assert ALL_ARCHETYPES == tuple(a for name in CLASSES for a in ARCHETYPES[name])  # archetype = class * 2 + k
# The options, read by the kernel as numbers (-1: random or none).
OPT_CLASSES = _field(2, "opt_classes")  # index in CLASSES, -1 random
OPT_ARCHETYPES = _field(2, "opt_archetypes")  # index in ALL_ARCHETYPES, -1 random
OPT_BOSSES = _field(2, "opt_bosses")  # index in the ruleset's boss catalog, -1 none
OPT_BOSS_REPLACES = _field(2, "opt_boss_replaces")  # card slot
OPT_STARTING_HP = _field(1, "opt_starting_hp")
OPT_HP_CAP = _field(1, "opt_hp_cap")
OPT_HEAL_AMOUNT = _field(1, "opt_heal_amount")
OPT_MAX_TURNS = _field(1, "opt_max_turns")
# The ruleset's tables (what new_game reads).
RS_DAMAGE = _field(3, "ruleset_damage")  # regular, middling, stronk
RS_TIERS = _field((3, 2), "ruleset_tiers")  # per tier: low, high initiative face
RS_WINDOWS = _field((3, 4, 2), "ruleset_windows")  # per tier: middling, stronk, dodge, heal
RS_DECKS = _field((NUM_ARCHETYPES, 5), "ruleset_decks")  # per archetype: regular, middling, stronk, dodge, heal
RS_BOSS_DAMAGE = _field(2, "ruleset_boss_damage")  # per seat: its boss's damage (0 without one)
RS_BOSS_WINDOWS = _field((2, 3, 2), "ruleset_boss_windows")  # per seat, per tier
OPTIONS_SIZE = LAYOUT.size
# rules.State, field by field.
CLASS = _field(2, "classes")
ARCHETYPE = _field(2, "archetypes")
BOSSES = _field(2, "bosses")  # index in the ruleset's catalog, -1 none
ROLL_ROUNDS = _field(1, "roll_rounds")
ROLLS = _field((MAX_ROLL_ROUNDS, 2), "initiative_rolls")  # ROLLS + round * 2 + seat
TIERS = _field(2, "tiers")
FIRST_SEAT = _field(1, "first_seat")
HP = _field(2, "hp")
CARDS = _field((2, NUM_CARDS), "cards")  # CARDS + seat * 6 + card
WINDOWS = _field((2, NUM_CARDS, 2), "windows")  # WINDOWS + (seat * 6 + card) * 2 + (0 low, 1 high)
DAMAGE = _field((2, ATTACK_SLOTS), "damage")  # DAMAGE + seat * 4 + card
TO_ACT = _field(1, "to_act")
PHASE = _field(1, "phase")
TURN = _field(1, "turn")
PENDING_CARD = _field(1, "pending_card")
WINNER = _field(1, "winner")
END_REASON = _field(1, "end_reason")  # an index into END_REASONS
EVENTS_LEN = _field(1, "last_events_len")
EVENTS = _field((MAX_EVENTS, 4), "last_events")  # seat, action, roll, succeeded
DRAWS = _field(1, "draws")  # chance draws made so far (the length the Python Chance's log would have)
STATE_SIZE = LAYOUT.size  # what a State holds ends here; the rest is not compared
DEAL_ERROR = _field(1, "deal_error")  # seat + 1 whose deck had no card for its boss to replace (rules raise)
ROW_SIZE = LAYOUT.size

END_REASONS = ("", rules.KNOCKOUT, rules.NO_ATTACKS_LEFT, rules.TURN_LIMIT)
NO_END, KNOCKOUT, NO_ATTACKS_LEFT, TURN_LIMIT = range(4)

# --- chance: the Python engine's draws (envs/compiled.py's generator) ------------------------------------------


@inlined
def below(s, mt, n):
    """``Chance.below(n)``: ``int(random() * n)``, counted."""
    s[DRAWS] += 1
    return np.int64(random_float(mt) * n)


@inlined
def roll(s, mt, sides):
    return below(s, mt, sides) + 1


# --- the deal -------------------------------------------------------------------------------------------------


@inlined
def tier_of(s, face):
    for tier in range(3):
        if s[RS_TIERS + tier * 2] <= face <= s[RS_TIERS + tier * 2 + 1]:
            return tier + 1
    return 0  # unreachable: a ruleset's tiers cover 1-20


@inlined
def _set_window(s, seat, card, low, high):
    at = WINDOWS + (seat * NUM_CARDS + card) * 2
    s[at] = low
    s[at + 1] = high


@compiled
def lay_out(s, seat):
    """The deck, windows and damage of ``seat`` (``lay_out_deck`` and the rest of ``new_game``'s seat
    loop); False where its boss has no card to replace (the rules raise ValueError there)."""
    deck = RS_DECKS + s[ARCHETYPE + seat] * 5
    cards = CARDS + seat * NUM_CARDS
    s[cards + REGULAR] = s[deck]
    s[cards + MIDDLING] = s[deck + 1]
    s[cards + STRONK] = s[deck + 2]
    s[cards + BOSS] = 0
    s[cards + DODGE] = s[deck + 3]
    s[cards + HEAL] = s[deck + 4]
    boss = s[BOSSES + seat]
    if boss >= 0:
        replaced = s[OPT_BOSS_REPLACES + seat]
        if s[cards + replaced] == 0:
            return False
        s[cards + replaced] -= 1
        s[cards + BOSS] = 1
    tier = s[TIERS + seat] - 1
    windows = RS_WINDOWS + tier * 8
    _set_window(s, seat, REGULAR, 1, 20)
    _set_window(s, seat, MIDDLING, s[windows], s[windows + 1])
    _set_window(s, seat, STRONK, s[windows + 2], s[windows + 3])
    if boss >= 0:
        at = RS_BOSS_WINDOWS + (seat * 3 + tier) * 2
        _set_window(s, seat, BOSS, s[at], s[at + 1])
    else:
        _set_window(s, seat, BOSS, 21, 21)  # an empty window: no boss card
    _set_window(s, seat, DODGE, s[windows + 4], s[windows + 5])
    _set_window(s, seat, HEAL, s[windows + 6], s[windows + 7])
    for card in range(3):
        s[DAMAGE + seat * ATTACK_SLOTS + card] = s[RS_DAMAGE + card]
    s[DAMAGE + seat * ATTACK_SLOTS + BOSS] = s[RS_BOSS_DAMAGE + seat] if boss >= 0 else 0
    return True


@compiled
def new_game(s, mt):
    """``rules.new_game`` on a row whose options are set and whose generator is seeded."""
    for seat in range(2):
        class_index = s[OPT_CLASSES + seat]
        archetype = s[OPT_ARCHETYPES + seat]
        if class_index < 0:
            class_index = below(s, mt, 3)
        if archetype < 0:
            archetype = class_index * 2 + below(s, mt, 2)
        s[CLASS + seat] = class_index
        s[ARCHETYPE + seat] = archetype
        s[BOSSES + seat] = s[OPT_BOSSES + seat]
    rounds = 0
    first_face, second_face = 0, 0
    while True:
        first_face = roll(s, mt, 20)
        second_face = roll(s, mt, 20)
        if rounds < MAX_ROLL_ROUNDS:
            s[ROLLS + rounds * 2] = first_face
            s[ROLLS + rounds * 2 + 1] = second_face
        rounds += 1
        if first_face != second_face:
            break
    s[ROLL_ROUNDS] = rounds
    s[TIERS] = tier_of(s, first_face)
    s[TIERS + 1] = tier_of(s, second_face)
    first = 0 if first_face > second_face else 1
    s[FIRST_SEAT] = first
    for seat in range(2):
        if not lay_out(s, seat):
            s[DEAL_ERROR] = seat + 1
            s[PHASE] = GAME_OVER  # no game: new_games raises the rules' error
            s[TO_ACT] = -1
            return
    s[HP] = s[OPT_STARTING_HP]
    s[HP + 1] = s[OPT_STARTING_HP]
    s[TO_ACT] = first
    s[PHASE] = ATTACK_PHASE
    s[PENDING_CARD] = -1
    s[WINNER] = -1
    begin_turn(s, first)


# --- whose decision, and which --------------------------------------------------------------------------------


@inlined
def has_attack(s, seat):
    cards = CARDS + seat * NUM_CARDS
    return s[cards + REGULAR] > 0 or s[cards + MIDDLING] > 0 or s[cards + STRONK] > 0 or s[cards + BOSS] > 0


@compiled
def legal_actions(s, out):
    """The legal actions, ascending, into ``out``; their number (0 once the game is over)."""
    phase = s[PHASE]
    count = 0
    if phase == ATTACK_PHASE:
        cards = CARDS + s[TO_ACT] * NUM_CARDS
        for card in range(ATTACK_SLOTS):
            if s[cards + card]:
                out[count] = card
                count += 1
        if count == 0:
            out[0] = PASS
            count = 1
    elif phase == REACT_PHASE:
        cards = CARDS + s[TO_ACT] * NUM_CARDS
        if s[cards + DODGE]:
            out[count] = REACT_DODGE
            count += 1
        if s[cards + HEAL]:
            out[count] = REACT_HEAL
            count += 1
        out[count] = REACT_TAKE
        count += 1
    return count


# --- playing --------------------------------------------------------------------------------------------------


@inlined
def add_event(s, seat, action, face, succeeded):
    at = EVENTS + s[EVENTS_LEN] * 4
    s[at] = seat
    s[at + 1] = action
    s[at + 2] = face
    s[at + 3] = 1 if succeeded else 0
    s[EVENTS_LEN] += 1


@inlined
def clear_events(s):
    for i in range(MAX_EVENTS * 4):
        s[EVENTS + i] = 0
    s[EVENTS_LEN] = 0


@inlined
def in_window(s, seat, card, face):
    at = WINDOWS + (seat * NUM_CARDS + card) * 2
    return s[at] <= face <= s[at + 1]


@compiled
def apply_legal(s, mt, action):
    """``rules.apply`` of an action known to be legal (``legal_actions``)."""
    seat = s[TO_ACT]
    if s[PHASE] == REACT_PHASE:
        resolve_hit(s, mt, seat, action)
        return
    s[TURN] += 1
    clear_events(s)
    if action == PASS:
        add_event(s, seat, PASS, 0, True)
        begin_turn(s, 1 - seat)
        return
    card = action  # attack actions share their index with the card slot
    face = 0
    hit = True
    if card != REGULAR:
        face = roll(s, mt, 20)
        hit = in_window(s, seat, card, face)
    add_event(s, seat, action, face, hit)
    if not hit:  # the attacker keeps the card and the turn passes
        begin_turn(s, 1 - seat)
        return
    s[CARDS + seat * NUM_CARDS + card] -= 1
    s[PENDING_CARD] = card
    defender = 1 - seat
    if s[CARDS + defender * NUM_CARDS + DODGE] or s[CARDS + defender * NUM_CARDS + HEAL]:
        s[PHASE] = REACT_PHASE
        s[TO_ACT] = defender
    else:
        resolve_hit(s, mt, defender, REACT_TAKE)


@compiled
def resolve_hit(s, mt, defender, reaction):
    attacker = 1 - defender
    damage = s[DAMAGE + attacker * ATTACK_SLOTS + s[PENDING_CARD]]
    s[PENDING_CARD] = -1
    hp = s[HP + defender]
    if reaction == REACT_TAKE:
        hp -= damage
        add_event(s, defender, REACT_TAKE, damage, True)
    else:
        card = DODGE if reaction == REACT_DODGE else HEAL
        face = roll(s, mt, 20)
        success = in_window(s, defender, card, face)
        add_event(s, defender, reaction, face, success)
        if not success:  # a failed reaction card is kept; the hit lands
            hp -= damage
            add_event(s, defender, REACT_TAKE, damage, True)
        elif card == DODGE:
            s[CARDS + defender * NUM_CARDS + DODGE] -= 1
        else:
            s[CARDS + defender * NUM_CARDS + HEAL] -= 1
            hp = min(s[OPT_HP_CAP], hp - damage + s[OPT_HEAL_AMOUNT])
    if hp <= 0:
        s[HP + defender] = 0
        end(s, attacker, KNOCKOUT)
        return
    s[HP + defender] = hp
    begin_turn(s, defender)


@compiled
def begin_turn(s, seat):
    if s[TURN] >= s[OPT_MAX_TURNS]:
        end(s, -1, TURN_LIMIT)
    elif not has_attack(s, 0) and not has_attack(s, 1):
        end(s, -1, NO_ATTACKS_LEFT)
    else:
        s[PHASE] = ATTACK_PHASE
        s[TO_ACT] = seat


@inlined
def end(s, winner, reason):
    s[PHASE] = GAME_OVER
    s[WINNER] = winner
    s[END_REASON] = reason
    s[TO_ACT] = -1


@compiled
def game_returns(s, values_row):
    """``rules.returns`` into ``values_row``."""
    values_row[0] = 0.0
    values_row[1] = 0.0
    if s[WINNER] >= 0:
        values_row[s[WINNER]] = 1.0
        values_row[1 - s[WINNER]] = -1.0


# --- batched entry points: every loop over games and steps in compiled code --------------------------------------


@compiled
def _new_games(states, chances, seeds):
    for g in range(states.shape[0]):
        seed_generator(chances[g], seeds[g])
        new_game(states[g], chances[g])


@compiled_allocating
def _legal_masks(states, masks):
    legal = np.empty(NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        masks[g, :] = False
        for i in range(legal_actions(states[g], legal)):
            masks[g, legal[i]] = True


@compiled_allocating
def _first_illegal(states, actions):
    """The first game whose action is not legal (-1: none); an action of -1 leaves its game alone."""
    legal = np.empty(NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        action = actions[g]
        if action < 0:
            continue
        count = legal_actions(states[g], legal)
        found = False
        for i in range(count):
            if legal[i] == action:
                found = True
                break
        if not found:
            return g
    return -1


@compiled
def _step_all(states, chances, actions):
    for g in range(states.shape[0]):
        if actions[g] >= 0:
            apply_legal(states[g], chances[g], actions[g])


@compiled_allocating
def _rollouts(states, chances, rng_seeds, max_steps, values, steps):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(MT_SIZE, dtype=np.uint32)
    legal = np.empty(NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        mt[:] = chances[g]
        policy = np.uint64(rng_seeds[g])
        taken = 0
        while row[PHASE] != GAME_OVER and taken < max_steps:
            count = legal_actions(row, legal)
            u, policy = policy_random(policy)
            apply_legal(row, mt, legal[np.int64(u * count)])
            taken += 1
        game_returns(row, values[g])
        steps[g] = taken


@compiled
def _returns_all(states, values):
    for g in range(states.shape[0]):
        game_returns(states[g], values[g])


# --- the Python side: batches, conversion, errors ----------------------------------------------------------------


class Batch(kernel_batch.Batch):
    """Many Tiny Minotaur games as arrays: ``state`` (int64, ``(G, ROW_SIZE)``), ``chance`` (uint32,
    ``(G, 625)``) and the ``configs`` they were made with (what :func:`to_state` rebuilds States with)."""


def unsupported(config: rules.Config | None = None, chance: Chance | None = None) -> str | None:
    """Why the kernel cannot play this game (a short sentence), or None when it can."""
    return kernel_batch.unsupported_reason("Tiny Minotaur", numba, config, rules.Config, chance)


def _require_kernel(config: rules.Config | None = None, chance: Chance | None = None) -> None:
    kernel_batch.require_kernel("Tiny Minotaur", unsupported(config, chance), compile_kernel)


def _empty(games: int) -> tuple[np.ndarray, np.ndarray]:
    return kernel_batch.empty_rows(games, ROW_SIZE)


def _boss_names(config: rules.Config) -> tuple[str, ...]:
    return tuple(rules.load_ruleset(config.ruleset).bosses)


def _write_options(row: np.ndarray, config: rules.Config) -> None:
    ruleset = rules.load_ruleset(config.ruleset)
    catalog = tuple(ruleset.bosses)
    for seat in range(2):
        class_name, archetype, boss = config.classes[seat], config.archetypes[seat], config.bosses[seat]
        row[OPT_CLASSES + seat] = -1 if class_name == rules.RANDOM else CLASSES.index(class_name)
        row[OPT_ARCHETYPES + seat] = -1 if archetype == rules.RANDOM else ALL_ARCHETYPES.index(archetype)
        row[OPT_BOSSES + seat] = -1 if boss == rules.NO_BOSS else catalog.index(boss)
        row[OPT_BOSS_REPLACES + seat] = CARD_NAMES.index(config.boss_replaces[seat])
        if boss != rules.NO_BOSS:
            boss_damage, per_tier = ruleset.bosses[boss]
            row[RS_BOSS_DAMAGE + seat] = boss_damage
            for tier, (low, high) in enumerate(per_tier):
                row[RS_BOSS_WINDOWS + (seat * 3 + tier) * 2:RS_BOSS_WINDOWS + (seat * 3 + tier) * 2 + 2] = low, high
    row[OPT_STARTING_HP] = config.starting_hp
    row[OPT_HP_CAP] = config.hp_cap
    row[OPT_HEAL_AMOUNT] = config.heal_amount
    row[OPT_MAX_TURNS] = config.max_turns
    row[RS_DAMAGE:RS_DAMAGE + 3] = [ruleset.damage[card] for card in ("regular", "middling", "stronk")]
    row[RS_TIERS:RS_TIERS + 6] = np.ravel(ruleset.tiers)
    row[RS_WINDOWS:RS_WINDOWS + 24] = [face for tier in ruleset.windows
                                       for card in ("middling", "stronk", "dodge", "heal") for face in tier[card]]
    row[RS_DECKS:RS_DECKS + NUM_ARCHETYPES * 5] = [count for archetype in ALL_ARCHETYPES
                                                   for count in ruleset.decks[archetype]]


def new_games(config: rules.Config, seeds: Sequence[int]) -> Batch:
    """Deal one game per seed in the kernel: game ``g`` is ``rules.new_game(config, Chance(seeds[g]))``
    (seeds from 0 to 2**63 - 1). A deal the rules refuse (a boss with no card to replace in the deck dealt)
    raises the rules' ValueError, naming the game and its seed."""
    _require_kernel(config)
    seed_array = kernel_batch.checked_seeds(seeds)
    states, chances = _empty(len(seed_array))
    states[:] = _options_row(config)
    _new_games(states, chances, seed_array)
    refused = np.flatnonzero(states[:, DEAL_ERROR])
    if len(refused):
        g = int(refused[0])
        seat = int(states[g, DEAL_ERROR]) - 1
        archetype = ALL_ARCHETYPES[int(states[g, ARCHETYPE + seat])]
        raise ValueError(f"game {g} (seed {int(seed_array[g])}): seat {seat}: the {archetype} deck has no "
                         f"{config.boss_replaces[seat]} card for its boss card to replace; choose another "
                         "boss_replaces")
    return Batch(states, chances, [config] * len(seed_array))


def _options_row(config: rules.Config) -> np.ndarray:
    row = np.zeros(ROW_SIZE, dtype=np.int64)
    _write_options(row, config)
    return row


def from_states(states: Sequence[rules.State]) -> Batch:
    """The kernel's arrays of Python States (each keeps its Chance's generator state; the log is left out)."""
    rows, chances = kernel_batch.rows_of_states(states, ROW_SIZE, _require_kernel, _write_state)
    return Batch(rows, chances, [state.config for state in states])


def _write_state(row: np.ndarray, state: rules.State) -> None:
    _write_options(row, state.config)
    if len(state.initiative_rolls) > MAX_ROLL_ROUNDS:
        raise ValueError(f"the kernel keeps {MAX_ROLL_ROUNDS} initiative rolls; this game had "
                         f"{len(state.initiative_rolls)}")
    catalog = _boss_names(state.config)
    row[CLASS:CLASS + 2] = [CLASSES.index(name) for name in state.classes]
    row[ARCHETYPE:ARCHETYPE + 2] = [ALL_ARCHETYPES.index(name) for name in state.archetypes]
    row[BOSSES:BOSSES + 2] = [-1 if boss is None else catalog.index(boss) for boss in state.bosses]
    row[ROLL_ROUNDS] = len(state.initiative_rolls)
    row[ROLLS:ROLLS + 2 * len(state.initiative_rolls)] = np.ravel(state.initiative_rolls)
    row[TIERS:TIERS + 2] = state.tiers
    row[HP:HP + 2] = state.hp
    row[CARDS:CARDS + 2 * NUM_CARDS] = np.ravel(state.cards)
    row[WINDOWS:WINDOWS + 2 * NUM_CARDS * 2] = np.ravel(state.windows)
    row[DAMAGE:DAMAGE + 2 * ATTACK_SLOTS] = np.ravel(state.damage)
    for offset, value in ((FIRST_SEAT, state.first_seat), (TO_ACT, state.to_act), (PHASE, state.phase),
                          (TURN, state.turn), (PENDING_CARD, state.pending_card), (WINNER, state.winner),
                          (END_REASON, END_REASONS.index(state.end_reason)), (EVENTS_LEN, len(state.last_events)),
                          (DRAWS, len(state.chance.outcomes))):
        row[offset] = value
    if len(state.last_events) > MAX_EVENTS:
        raise ValueError(f"the kernel keeps {MAX_EVENTS} last events; this State has {len(state.last_events)}")
    for i, (seat, action, face, succeeded) in enumerate(state.last_events):
        row[EVENTS + i * 4:EVENTS + i * 4 + 4] = seat, action, face, int(succeeded)


def first_difference(batch: Batch, game: int, state: rules.State) -> str | None:
    """Where game ``game`` of ``batch`` differs from ``state`` (the reference), as ``field[index]: kernel K,
    rules R``, the first in row order; None when the two are the same game (every State field but the
    Chance's log, the generator's state, the number of draws)."""
    expected = np.zeros(ROW_SIZE, dtype=np.int64)
    _write_state(expected, state)
    difference = LAYOUT.first_difference(batch.state[game], expected, STATE_SIZE)
    if difference is None and kernel_batch.chance_differs(batch.chance[game], state.chance):
        return "the chance generator's state"
    return difference


def to_state(batch: Batch, game: int) -> rules.State:
    """Game ``game`` of ``batch`` as a ``rules.State``: its Chance continues the kernel's generator (with an
    empty log of outcomes)."""
    row = [int(value) for value in batch.state[game]]
    if row[ROLL_ROUNDS] > MAX_ROLL_ROUNDS:  # about once in 10**20 deals; never a silently shortened State
        raise ValueError(f"game {game} rolled initiative {row[ROLL_ROUNDS]} times; the kernel keeps "
                         f"{MAX_ROLL_ROUNDS}, so it has no State to give back")
    config = batch.configs[game]
    catalog = _boss_names(config)
    chance = Chance(0)
    kernel_batch.set_generator_state(chance._random, batch.chance[game])

    def pairs(start: int, count: int) -> tuple:
        return tuple((row[start + 2 * i], row[start + 2 * i + 1]) for i in range(count))

    return rules.State(
        config=config, chance=chance, classes=tuple(CLASSES[c] for c in row[CLASS:CLASS + 2]),
        archetypes=tuple(ALL_ARCHETYPES[a] for a in row[ARCHETYPE:ARCHETYPE + 2]),
        bosses=tuple(None if b < 0 else catalog[b] for b in row[BOSSES:BOSSES + 2]),
        initiative_rolls=pairs(ROLLS, row[ROLL_ROUNDS]), tiers=tuple(row[TIERS:TIERS + 2]),
        first_seat=row[FIRST_SEAT], hp=row[HP:HP + 2],
        cards=[row[CARDS + seat * NUM_CARDS:CARDS + (seat + 1) * NUM_CARDS] for seat in range(2)],
        windows=tuple(pairs(WINDOWS + seat * NUM_CARDS * 2, NUM_CARDS) for seat in range(2)),
        damage=tuple(tuple(row[DAMAGE + seat * ATTACK_SLOTS:DAMAGE + (seat + 1) * ATTACK_SLOTS]) for seat in range(2)),
        to_act=row[TO_ACT], phase=row[PHASE], turn=row[TURN], pending_card=row[PENDING_CARD], winner=row[WINNER],
        end_reason=END_REASONS[row[END_REASON]],
        last_events=[(row[EVENTS + 4 * i], row[EVENTS + 4 * i + 1], row[EVENTS + 4 * i + 2],
                      bool(row[EVENTS + 4 * i + 3])) for i in range(row[EVENTS_LEN])],
    )


def legal_mask(batch: Batch) -> np.ndarray:
    """``(G, NUM_ACTIONS)`` booleans: the legal actions of each game's seat to act (none once it is over)."""
    compile_kernel()
    masks = np.zeros((len(batch), NUM_ACTIONS), dtype=np.bool_)
    _legal_masks(batch.state, masks)
    return masks


def legal_list(batch: Batch, game: int) -> list[int]:
    """The legal actions of one game, ascending (``rules.legal_actions``)."""
    compile_kernel()
    out = np.empty(NUM_ACTIONS, dtype=np.int64)
    return [int(a) for a in out[:_legal_one(batch.state[game], out)]]


@compiled
def _legal_one(row, out):
    return legal_actions(row, out)


def step_batch(batch: Batch, actions: Sequence[int] | np.ndarray) -> None:
    """Play ``actions[g]`` in game ``g`` for every game (-1: leave that game alone). Nothing is played
    when any action is illegal: IllegalActionError names the game, the action and the legal ones."""
    compile_kernel()
    moves = kernel_batch.checked_actions(actions, len(batch))
    bad = int(_first_illegal(batch.state, moves))
    if bad >= 0:
        raise kernel_batch.illegal_action(int(moves[bad]), legal_list(batch, bad), rules.ACTION_NAMES, bad)
    _step_all(batch.state, batch.chance, moves)


def returns(batch: Batch) -> np.ndarray:
    """``(G, 2)`` floats: ``rules.returns`` of each game."""
    compile_kernel()
    values = np.zeros((len(batch), 2), dtype=np.float64)
    _returns_all(batch.state, values)
    return values


def is_terminal(batch: Batch) -> np.ndarray:
    return batch.state[:, PHASE] == GAME_OVER


def current_seat(batch: Batch) -> np.ndarray:
    return batch.state[:, TO_ACT].copy()


def rollout_random(batch: Batch, rng_seeds: Sequence[int] | np.ndarray,
                   max_steps: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_steps`` more decisions) with uniformly random legal
    moves, all in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)``: ``(G, 2)``
    floats (``rules.returns`` where each game stopped) and the decisions each took. The moves come from
    ``rng_seeds[g]`` (a generator apart from the game's chance, which continues from its state)."""
    compile_kernel()
    seeds = kernel_batch.checked_rng_seeds(rng_seeds, len(batch))
    limit = kernel_batch.checked_max_steps(max_steps)
    values = np.zeros((len(batch), 2), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    _rollouts(batch.state, batch.chance, seeds, limit, values, steps)
    return values, steps


def random_rollouts(states: Sequence[rules.State], rng_seeds: Sequence[int], max_steps: int = 1_000_000,
                    use_kernel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rollout_random` from Python States, on the kernel where it can take them, else on the Python
    rules (saying why in one line on stderr): the same returns either way for the same moves and chance,
    though the Python path picks its moves with ``random.Random(rng_seeds[g])``, another stream."""
    if kernel_batch.rules_fallback_reason("Tiny Minotaur", states, use_kernel, unsupported) is None:
        return rollout_random(from_states(states), rng_seeds, max_steps)
    return kernel_batch.random_rollouts_on_rules(states, rng_seeds, max_steps, rules, rules.apply, 2)
