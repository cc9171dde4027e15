"""Minefield compiled with numba: many games as rows of numpy arrays, whole rounds played in compiled code.

An accelerator beside :mod:`.rules`, never a second reading of the rules: ``rules.py`` stays the reference,
and tests/test_kernel_minefield.py replays seeded games round by round in both engines (same joint moves,
same chance stream) and checks the legal sets of every seat, every State field, the generator's state and
the returns after every round. Every function below follows the function of ``rules.py`` with the same name
(without the leading underscore where the rules have one), in the same order of effects and chance draws.
The shared pieces (numba's decorators, ``random.Random``'s generator, the row's layout) are envs/compiled.py's.

Simultaneous moves, as the rules and the Parallel env take them
----------------------------------------------------------------
A round is one joint move: every living seat names a target at once (``rules.apply_joint(state, {seat:
target})``; the Parallel env's ``step({agent: action})``). The kernel's joint move is a row of targets per
game: ``step_batch(batch, actions)`` takes ``actions`` of shape ``(G, W)`` (``W = batch.width``, the most
seats of any game in the batch), ``actions[g, seat]`` the target of ``seat`` in game ``g`` and -1 for a seat
that does not act (eliminated, or beyond the table); a row of -1 leaves its game alone. ``legal_mask(batch)``
is ``(G, W, W)``: ``[g, seat, target]``, all False for a seat that does not act (the env's all-zero mask),
and ``acting_seats(batch)`` ``(G, W)``: the seats that choose this round (``rules.acting_seats``).

What it holds
-------------
A :class:`Batch` is ``G`` games: ``state`` (int64, one row of :data:`ROW_SIZE` per game: the options, then
every field of ``rules.State`` at a fixed offset) and ``chance`` (uint32, one row of 625: the Mersenne
Twister of the game's ``Chance``). The mine bit mask (numbers 1-100) is two words, numbers 0-49 and 50-100.
The last round as the host announced it (targets, order, every battle with its rolls, the mine rolls, who
went out) is held, so a converted State observes and renders as the original. Not held: the Chance's log
of outcomes (``state[g, DRAWS]`` counts the draws) and ``values``, which the rules set from the order of
going out, the winner and a cut-off's survivors (the kernel computes them from the same fields, exactly:
``returns(batch)``; the test compares them with the State's every round). A round whose battles roll more
than 160 pairs of d100s in all (mines_only finals run about one in 10**14) plays on in the kernel but has
no State to give back (``to_state`` says so).

Entry points (every loop over games and rounds runs in compiled code)
---------------------------------------------------------------------
``new_games(config, seeds)``, ``legal_mask(batch)`` (``legal_list(batch, g, seat)`` for one seat),
``acting_seats(batch)``, ``step_batch(batch, actions)``, ``rollout_random(batch, rng_seeds, max_rounds)``,
``returns(batch)``, ``is_terminal(batch)``; ``first_difference(batch, g, state)`` names where a game
departs from a rules State. Options: every option of ``minefield_v0`` (variants, Double Whammy, attack
order, battle rule, finals mines, rewards, round limit, 2-20 players). :func:`unsupported` names what the
kernel cannot take (numba missing, a scripted Chance or one of another class); :func:`random_rollouts` then
plays on the Python rules and says so in one line.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from .. import kernel_batch
from ..compiled import GENERATOR, MT_SIZE, Kernel, numba, policy_random, random_float, seed_generator
from ..core import Chance, IllegalActionError
from . import rules
from .rules import (
    ATTACK_ORDERS,
    ATTACKER_MINE,
    ATTACKER_WON,
    DEFENDER_MINE,
    DEFENDER_WON,
    FINALS_MINES,
    MAX_PLAYERS,
    REWARD_SCHEMES,
    ROLL_BATTLES,
    STANDOFF,
    VARIANTS,
    VOID,
)


def _argument_types() -> dict:
    """The numba types of this kernel's parameters, by name (every other parameter is an int64; ``mt``,
    ``seed`` and ``policy`` are envs/compiled.py's)."""
    from numba import types

    return {"s": types.int64[::1], "row": types.int64[::1], "out": types.int64[::1], "joint": types.int64[::1],
            "seeds": types.int64[::1], "steps": types.int64[::1], "rounds": types.int64[::1],
            "rng_seeds": types.uint64[::1], "values_row": types.float64[::1], "states": types.int64[:, ::1],
            "chances": types.uint32[:, ::1], "actions": types.int64[:, ::1], "masks": types.boolean[:, :, ::1],
            "acting": types.boolean[:, ::1], "values": types.float64[:, ::1], "stacked": types.boolean,
            "loser_out": types.boolean, "until_elimination": types.boolean,
            # the compiled heuristic's (agents/minefield_kernel.py)
            "bots": types.uint32[:, ::1], "learned": types.float64[:, ::1], "memory": types.int64[::1],
            "work": types.float64[::1], "bot_seeds": types.int64[:, ::1]}


# Every compiled function of Minefield: this file's, then its users' (a bot's rollout policy names its
# parameters the same way and decorates with these).
KERNEL = Kernel(_argument_types, includes=(GENERATOR,))
inlined, compiled, compiled_allocating = KERNEL.inlined, KERNEL.compiled, KERNEL.compiled_allocating
compile_kernel = KERNEL.compile

# --- the layout of a game's row -------------------------------------------------------------------------------

LAYOUT = kernel_batch.RowLayout()
FIELDS = LAYOUT.fields
_field = LAYOUT.field

P = MAX_PLAYERS  # every row has room for 20 seats, whatever the table size
MAX_BATTLE_ROLLS = 160  # pairs of d100s kept per round (every battle's attempts together)
SPLIT = 50  # the mine mask's words: numbers 0-49 in the first, 50-100 in the second
# The options, read by the kernel as numbers (indices into the rules' tuples of choices).
N = _field(1, "n")
OPT_VARIANT = _field(1, "opt_variant")
OPT_DOUBLE_WHAMMY = _field(1, "opt_double_whammy")
OPT_ATTACK_ORDER = _field(1, "opt_attack_order")
OPT_ROLL_BATTLE = _field(1, "opt_roll_battle")
OPT_FINALS_MINES = _field(1, "opt_finals_mines")
OPT_REWARDS = _field(1, "opt_rewards")
OPT_MAX_ROUNDS = _field(1, "opt_max_rounds")
# rules.State, field by field (``values`` computed, see the module docstring).
ALIVE = _field(P, "alive")
NUM_ALIVE = _field(1, "num_alive")
MINES = _field(2, "mines")  # MINES: bit k is number k (0-49); MINES + 1: bit k is number 50 + k
ROUND = _field(1, "round")
OUT_LEN = _field(1, "out_len")
OUT_ORDER = _field(P, "out_order")
OVER = _field(1, "over")
TRUNCATED = _field(1, "truncated")
WINNER = _field(1, "winner")
END_REASON = _field(1, "end_reason")  # an index into END_REASONS
LAST_TARGETS = _field(P, "last_targets")  # -1: did not attack (0 beyond the table)
ORDER_LEN = _field(1, "last_order_len")  # also the number of battles: one per attacker, in order
LAST_ORDER = _field(P, "last_order")
OUTCOMES = _field(P, "battle_outcomes")  # of the battle at each position of the order
BATTLE_ROLLS_LEN = _field(P, "battle_rolls_len")  # pairs each battle rolled
ROLLS_LEN = _field(1, "rolls_len")  # pairs rolled this round, all battles
BATTLE_ROLLS = _field((MAX_BATTLE_ROLLS, 2), "battle_rolls")  # attacker's d100, defender's (0: did not roll)
MINE_ROLLS_LEN = _field(1, "last_mine_rolls_len")
MINE_ROLLS = _field((2, 2), "last_mine_rolls")  # d10, side
ELIMINATED_LEN = _field(1, "last_eliminated_len")
LAST_ELIMINATED = _field(P, "last_eliminated")
DRAWS = _field(1, "draws")  # chance draws made so far (the length the Python Chance's log would have)
STATE_SIZE = LAYOUT.size  # what a State holds ends here
ROW_SIZE = LAYOUT.size

END_REASONS = ("", rules.LAST_STANDING, rules.ROUND_LIMIT)
NO_END, LAST_STANDING, ROUND_LIMIT = range(3)
STANDARD, SIMPLE, STACKED = (VARIANTS.index(name) for name in ("standard", "simple", "stacked"))
RANDOM_ORDER = ATTACK_ORDERS.index("random")
LOSER_OUT = ROLL_BATTLES.index("loser_out")
FINALS_ROUND, FINALS_NEW = FINALS_MINES.index("round"), FINALS_MINES.index("new")
WINNER_TAKES_ALL = REWARD_SCHEMES.index("winner")

# The mine sets as the mask's two words, by d10 * 2 + side (numba freezes module-level arrays).
MINE_WORDS = np.zeros((22, 2), dtype=np.int64)
for (_d, _side), _bits in rules.MINE_BITS.items():
    MINE_WORDS[_d * 2 + _side] = _bits & ((1 << SPLIT) - 1), _bits >> SPLIT

# --- chance: the Python engine's draws (envs/compiled.py's generator) ------------------------------------------


@inlined
def below(s, mt, n):
    """``Chance.below(n)``: ``int(random() * n)``, counted."""
    s[DRAWS] += 1
    return np.int64(random_float(mt) * n)


@inlined
def _around(seat, n):
    """``seat % n`` for ``0 <= seat < 2 * n``: a comparison instead of a division."""
    return seat - n if seat >= n else seat


@inlined
def is_mine(s, number):
    if number < SPLIT:
        return (s[MINES] >> number) & 1
    return (s[MINES + 1] >> (number - SPLIT)) & 1


@compiled
def roll_mines(s, mt, stacked):
    """The host's ``.roll 10`` and ``.pick beginning, end`` (twice with Double Whammy), into the mines (added
    to the ones there when ``stacked``, else in their place) and the round's mine rolls."""
    if not stacked:
        s[MINES] = 0
        s[MINES + 1] = 0
    times = 2 if s[OPT_DOUBLE_WHAMMY] else 1
    for i in range(4):
        s[MINE_ROLLS + i] = 0
    for i in range(times):
        d = below(s, mt, 10) + 1
        side = below(s, mt, 2)
        s[MINE_ROLLS + i * 2] = d
        s[MINE_ROLLS + i * 2 + 1] = side
        s[MINES] |= MINE_WORDS[d * 2 + side, 0]
        s[MINES + 1] |= MINE_WORDS[d * 2 + side, 1]
    s[MINE_ROLLS_LEN] = times


# --- the game -------------------------------------------------------------------------------------------------


@compiled
def new_game(s, mt):
    """``rules.new_game`` on a row whose options are set and whose generator is seeded."""
    n = s[N]
    for seat in range(n):
        s[ALIVE + seat] = 1
        s[LAST_TARGETS + seat] = -1
    s[NUM_ALIVE] = n
    s[WINNER] = -1
    if s[OPT_VARIANT] == SIMPLE:
        roll_mines(s, mt, False)


@compiled
def legal_actions(s, seat, out):
    """The targets ``seat`` may attack, ascending, into ``out``; their number (0 if it does not act)."""
    if s[OVER] or not s[ALIVE + seat]:
        return 0
    count = 0
    for other in range(s[N]):
        if s[ALIVE + other] and other != seat:
            out[count] = other
            count += 1
    return count


@inlined
def record_roll(s, position, attack, defence):
    at = s[ROLLS_LEN]
    if at < MAX_BATTLE_ROLLS:
        s[BATTLE_ROLLS + at * 2] = attack
        s[BATTLE_ROLLS + at * 2 + 1] = defence
    s[ROLLS_LEN] = at + 1
    s[BATTLE_ROLLS_LEN + position] += 1


@compiled
def resolve_battle(s, mt, position, loser_out, until_elimination):
    """``rules.resolve_battle``: the outcome; the rolls go to the round's record at ``position``."""
    while True:
        attack = below(s, mt, 100) + 1
        if is_mine(s, attack):
            record_roll(s, position, attack, 0)
            return ATTACKER_MINE
        defence = below(s, mt, 100) + 1
        record_roll(s, position, attack, defence)
        if is_mine(s, defence):
            return DEFENDER_MINE
        if loser_out:
            if attack > defence:
                return ATTACKER_WON
            if defence > attack:
                return DEFENDER_WON
        elif not until_elimination:
            return STANDOFF


@inlined
def eliminate(s, seat):
    s[ALIVE + seat] = 0
    s[NUM_ALIVE] -= 1
    s[OUT_ORDER + s[OUT_LEN]] = seat
    s[OUT_LEN] += 1
    s[LAST_ELIMINATED + s[ELIMINATED_LEN]] = seat
    s[ELIMINATED_LEN] += 1


@compiled
def forget_last_round(s):
    """Empty the last round's record (every slot past a list's length stays 0: equal games, equal rows)."""
    for i in range(s[ORDER_LEN]):
        s[LAST_ORDER + i] = 0
        s[OUTCOMES + i] = 0
        s[BATTLE_ROLLS_LEN + i] = 0
    for i in range(min(s[ROLLS_LEN], MAX_BATTLE_ROLLS) * 2):
        s[BATTLE_ROLLS + i] = 0
    for i in range(s[ELIMINATED_LEN]):
        s[LAST_ELIMINATED + i] = 0
    s[ORDER_LEN] = 0
    s[ROLLS_LEN] = 0
    s[ELIMINATED_LEN] = 0


@compiled
def apply_joint(s, mt, joint):
    """``rules.apply_joint`` of a joint move known to be legal: ``joint[seat]`` is the target of every living
    seat (what the others hold is not read)."""
    n = s[N]
    finals = s[NUM_ALIVE] == 2
    forget_last_round(s)
    attackers = 0
    for seat in range(n):
        if s[ALIVE + seat]:
            s[LAST_TARGETS + seat] = joint[seat]
            s[LAST_ORDER + attackers] = seat
            attackers += 1
        else:
            s[LAST_TARGETS + seat] = -1
    s[ORDER_LEN] = attackers

    # Phase 1: the mine numbers.
    rolled = False
    if finals and s[OPT_FINALS_MINES] != FINALS_ROUND:
        if s[OPT_FINALS_MINES] == FINALS_NEW or (s[MINES] == 0 and s[MINES + 1] == 0):
            roll_mines(s, mt, False)
            rolled = True
    elif s[OPT_VARIANT] == STANDARD:
        roll_mines(s, mt, False)
        rolled = True
    elif s[OPT_VARIANT] == STACKED:
        roll_mines(s, mt, True)
        rolled = True
    if not rolled and s[OPT_VARIANT] != SIMPLE:  # the round shows no mine rolls (simple: the game's stay)
        for i in range(4):
            s[MINE_ROLLS + i] = 0
        s[MINE_ROLLS_LEN] = 0

    # Phase 2: the attacks, one by one.
    if s[OPT_ATTACK_ORDER] == RANDOM_ORDER:  # Chance.shuffle: Fisher-Yates from the top down
        for i in range(attackers - 1, 0, -1):
            j = below(s, mt, i + 1)
            s[LAST_ORDER + i], s[LAST_ORDER + j] = s[LAST_ORDER + j], s[LAST_ORDER + i]
    loser_out = s[OPT_ROLL_BATTLE] == LOSER_OUT
    for position in range(attackers):
        attacker = s[LAST_ORDER + position]
        defender = s[LAST_TARGETS + attacker]
        if not (s[ALIVE + attacker] and s[ALIVE + defender]):
            s[OUTCOMES + position] = VOID
            continue
        outcome = resolve_battle(s, mt, position, loser_out, finals)
        s[OUTCOMES + position] = outcome
        if outcome == ATTACKER_MINE or outcome == DEFENDER_WON:
            eliminate(s, attacker)
        elif outcome == DEFENDER_MINE or outcome == ATTACKER_WON:
            eliminate(s, defender)

    s[ROUND] += 1
    if s[NUM_ALIVE] == 1:
        for seat in range(n):
            if s[ALIVE + seat]:
                s[WINNER] = seat
        s[OVER] = 1
        s[END_REASON] = LAST_STANDING
    elif s[ROUND] >= s[OPT_MAX_ROUNDS]:
        s[OVER] = 1
        s[TRUNCATED] = 1
        s[END_REASON] = ROUND_LIMIT


@inlined
def place_value(s, place):
    """``rules.place_value``: the return for finishing in ``place`` (1 = the winner), in the rules' order of
    float operations."""
    n = s[N]
    if s[OPT_REWARDS] == WINNER_TAKES_ALL:
        return 1.0 if place == 1 else -1.0 / (n - 1)
    return 1.0 - 2.0 * (place - 1) / (n - 1)


@compiled
def game_returns(s, values_row):
    """``rules.returns`` into ``values_row``: what the rules set in ``values`` as places became known."""
    n = s[N]
    for seat in range(n):
        values_row[seat] = 0.0
    for i in range(s[OUT_LEN]):  # the i-th out finished behind the n - i - 1 still alive then
        values_row[s[OUT_ORDER + i]] = place_value(s, n - i)
    if s[WINNER] >= 0:
        values_row[s[WINNER]] = place_value(s, 1)
    elif s[TRUNCATED]:  # the survivors share the values of the places still open
        survivors = s[NUM_ALIVE]
        shared = 0.0
        for place in range(1, survivors + 1):
            shared += place_value(s, place)
        shared = shared / survivors
        for seat in range(n):
            if s[ALIVE + seat]:
                values_row[seat] = shared


# --- batched entry points: every loop over games and rounds in compiled code -------------------------------------


@compiled
def _new_games(states, chances, seeds):
    for g in range(states.shape[0]):
        seed_generator(chances[g], seeds[g])
        new_game(states[g], chances[g])


@compiled_allocating
def _legal_masks(states, masks):
    legal = np.empty(P, dtype=np.int64)
    for g in range(states.shape[0]):
        masks[g, :, :] = False
        for seat in range(states[g, N]):
            for i in range(legal_actions(states[g], seat, legal)):
                masks[g, seat, legal[i]] = True


@compiled
def _acting(states, acting):
    for g in range(states.shape[0]):
        for seat in range(states[g, N]):
            acting[g, seat] = states[g, OVER] == 0 and states[g, ALIVE + seat] != 0


@compiled
def _first_illegal(states, actions):
    """The first bad entry, as ``g * P + seat`` (-1: none). A row of -1 leaves its game alone; otherwise
    every seat that acts needs a legal target and every other seat -1."""
    width = actions.shape[1]
    for g in range(states.shape[0]):
        s = states[g]
        if not _any_move(actions, g):
            continue
        for seat in range(width):
            target = actions[g, seat]
            acting = seat < s[N] and not s[OVER] and s[ALIVE + seat]
            if not acting:
                if target >= 0:
                    return g * P + seat
                continue
            if not (0 <= target < s[N] and target != seat and s[ALIVE + target]):
                return g * P + seat
    return -1


@inlined
def _any_move(actions, g):
    for seat in range(actions.shape[1]):
        if actions[g, seat] >= 0:
            return True
    return False


@compiled
def _step_all(states, chances, actions):
    for g in range(states.shape[0]):
        if _any_move(actions, g):
            apply_joint(states[g], chances[g], actions[g])


@compiled
def random_joint(s, joint, policy):
    """Every living seat's uniformly random target (seat by seat, one draw each) into ``joint``; the next
    policy state."""
    n = s[N]
    for seat in range(n):
        if not s[ALIVE + seat]:
            continue
        u, policy = policy_random(policy)
        k = np.int64(u * (s[NUM_ALIVE] - 1))  # the k-th other living seat, ascending
        for other in range(n):
            if s[ALIVE + other] and other != seat:
                if k == 0:
                    joint[seat] = other
                    break
                k -= 1
    return policy


@compiled_allocating
def _rollouts(states, chances, rng_seeds, max_rounds, values, steps, rounds):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(MT_SIZE, dtype=np.uint32)
    joint = np.empty(P, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        mt[:] = chances[g]
        policy = np.uint64(rng_seeds[g])
        taken, played = 0, 0
        while row[OVER] == 0 and played < max_rounds:
            policy = random_joint(row, joint, policy)
            taken += row[NUM_ALIVE]
            apply_joint(row, mt, joint)
            played += 1
        game_returns(row, values[g])
        steps[g] = taken
        rounds[g] = played


@compiled
def _returns_all(states, values):
    for g in range(states.shape[0]):
        game_returns(states[g], values[g])


# --- the Python side: batches, conversion, errors ----------------------------------------------------------------


class Batch(kernel_batch.Batch):
    """Many Minefield games as arrays: ``state`` (int64, ``(G, ROW_SIZE)``), ``chance`` (uint32,
    ``(G, 625)``) and the ``configs`` they were made with (what :func:`to_state` rebuilds States with)."""

    @property
    def width(self) -> int:
        """The most seats of any game here: the width of joint moves, masks and returns."""
        return max((config.num_players for config in self.configs), default=rules.MIN_PLAYERS)


def unsupported(config: rules.Config | None = None, chance: Chance | None = None) -> str | None:
    """Why the kernel cannot play this game (a short sentence), or None when it can."""
    return kernel_batch.unsupported_reason("Minefield", numba, config, rules.Config, chance)


def _require_kernel(config: rules.Config | None = None, chance: Chance | None = None) -> None:
    kernel_batch.require_kernel("Minefield", unsupported(config, chance), compile_kernel)


def _empty(games: int) -> tuple[np.ndarray, np.ndarray]:
    return kernel_batch.empty_rows(games, ROW_SIZE)


def _write_options(row: np.ndarray, config: rules.Config) -> None:
    row[N] = config.num_players
    row[OPT_VARIANT] = VARIANTS.index(config.variant)
    row[OPT_DOUBLE_WHAMMY] = config.double_whammy
    row[OPT_ATTACK_ORDER] = ATTACK_ORDERS.index(config.attack_order)
    row[OPT_ROLL_BATTLE] = ROLL_BATTLES.index(config.roll_battle)
    row[OPT_FINALS_MINES] = FINALS_MINES.index(config.finals_mines)
    row[OPT_REWARDS] = REWARD_SCHEMES.index(config.rewards)
    row[OPT_MAX_ROUNDS] = config.max_rounds


def new_games(config: rules.Config, seeds: Sequence[int]) -> Batch:
    """Deal one game per seed in the kernel: game ``g`` is ``rules.new_game(config, Chance(seeds[g]))``
    (seeds from 0 to 2**63 - 1)."""
    _require_kernel(config)
    seed_array = kernel_batch.checked_seeds(seeds)
    states, chances = _empty(len(seed_array))
    if len(states):  # every game's options are the same: written once, copied
        _write_options(states[0], config)
        states[1:] = states[0]
    _new_games(states, chances, seed_array)
    return Batch(states, chances, [config] * len(seed_array))


def from_states(states: Sequence[rules.State]) -> Batch:
    """The kernel's arrays of Python States (each keeps its Chance's generator state; the log is left out)."""
    rows, chances = kernel_batch.rows_of_states(states, ROW_SIZE, _require_kernel, _write_state)
    return Batch(rows, chances, [state.config for state in states])


def _write_state(row: np.ndarray, state: rules.State) -> None:
    n = state.config.num_players
    _write_options(row, state.config)
    rolled = [pair for battle in state.last_battles for pair in battle[3]]
    if len(rolled) > MAX_BATTLE_ROLLS:
        raise ValueError(f"the kernel keeps {MAX_BATTLE_ROLLS} battle rolls a round; this State's last round "
                         f"has {len(rolled)}")
    row[ALIVE:ALIVE + n] = state.alive
    row[MINES] = state.mines & ((1 << SPLIT) - 1)
    row[MINES + 1] = state.mines >> SPLIT
    row[OUT_LEN] = len(state.out_order)
    row[OUT_ORDER:OUT_ORDER + len(state.out_order)] = state.out_order
    row[LAST_TARGETS:LAST_TARGETS + n] = state.last_targets
    row[ORDER_LEN] = len(state.last_order)
    row[LAST_ORDER:LAST_ORDER + len(state.last_order)] = state.last_order
    for position, (_attacker, _defender, outcome, rolls) in enumerate(state.last_battles):
        row[OUTCOMES + position] = outcome
        row[BATTLE_ROLLS_LEN + position] = len(rolls)
    row[ROLLS_LEN] = len(rolled)
    row[BATTLE_ROLLS:BATTLE_ROLLS + 2 * len(rolled)] = np.ravel(rolled) if rolled else []
    row[MINE_ROLLS_LEN] = len(state.last_mine_rolls)
    row[MINE_ROLLS:MINE_ROLLS + 2 * len(state.last_mine_rolls)] = np.ravel(state.last_mine_rolls) if (
        state.last_mine_rolls) else []
    row[ELIMINATED_LEN] = len(state.last_eliminated)
    row[LAST_ELIMINATED:LAST_ELIMINATED + len(state.last_eliminated)] = state.last_eliminated
    for offset, value in ((NUM_ALIVE, state.num_alive), (ROUND, state.round), (OVER, state.over),
                          (TRUNCATED, state.truncated), (WINNER, state.winner),
                          (END_REASON, END_REASONS.index(state.end_reason)), (DRAWS, len(state.chance.outcomes))):
        row[offset] = value


def first_difference(batch: Batch, game: int, state: rules.State) -> str | None:
    """Where game ``game`` of ``batch`` differs from ``state`` (the reference), as ``field[index]: kernel K,
    rules R``, the first in row order, then the values, then the generator; None when the two are the same
    game (every State field but the Chance's log, the generator's state, the number of draws)."""
    expected = np.zeros(ROW_SIZE, dtype=np.int64)
    _write_state(expected, state)
    difference = LAYOUT.first_difference(batch.state[game], expected, STATE_SIZE)
    if difference is not None:
        return difference
    values = _values(batch, game)
    for seat, (got, want) in enumerate(zip(values, state.values, strict=True)):
        if got != want:
            return f"values[{seat}]: kernel {got!r}, rules {want!r}"
    if kernel_batch.chance_differs(batch.chance[game], state.chance):
        return "the chance generator's state"
    return None


def _values(batch: Batch, game: int) -> list[float]:
    compile_kernel()
    values = np.zeros((1, P), dtype=np.float64)
    _returns_all(batch.state[game:game + 1], values)
    return [float(value) for value in values[0, :batch.configs[game].num_players]]


def to_state(batch: Batch, game: int) -> rules.State:
    """Game ``game`` of ``batch`` as a ``rules.State``: its Chance continues the kernel's generator (with an
    empty log of outcomes)."""
    row = [int(value) for value in batch.state[game]]
    if row[ROLLS_LEN] > MAX_BATTLE_ROLLS:  # never a silently shortened State
        raise ValueError(f"game {game}'s last round rolled {row[ROLLS_LEN]} pairs of d100s; the kernel keeps "
                         f"{MAX_BATTLE_ROLLS}, so it has no State to give back")
    config = batch.configs[game]
    n = config.num_players
    chance = Chance(0)
    kernel_batch.set_generator_state(chance._random, batch.chance[game])
    battles, at = [], 0
    for position in range(row[ORDER_LEN]):
        attacker = row[LAST_ORDER + position]
        count = row[BATTLE_ROLLS_LEN + position]
        rolls = tuple((row[BATTLE_ROLLS + 2 * i], row[BATTLE_ROLLS + 2 * i + 1]) for i in range(at, at + count))
        at += count
        battles.append((attacker, row[LAST_TARGETS + attacker], row[OUTCOMES + position], rolls))
    return rules.State(
        config=config, chance=chance, alive=[bool(v) for v in row[ALIVE:ALIVE + n]], num_alive=row[NUM_ALIVE],
        mines=row[MINES] | row[MINES + 1] << SPLIT, round=row[ROUND], out_order=row[OUT_ORDER:OUT_ORDER + row[OUT_LEN]],
        values=_values(batch, game), over=bool(row[OVER]), truncated=bool(row[TRUNCATED]), winner=row[WINNER],
        end_reason=END_REASONS[row[END_REASON]], last_targets=tuple(row[LAST_TARGETS:LAST_TARGETS + n]),
        last_order=tuple(row[LAST_ORDER:LAST_ORDER + row[ORDER_LEN]]), last_battles=tuple(battles),
        last_mine_rolls=tuple((row[MINE_ROLLS + 2 * i], row[MINE_ROLLS + 2 * i + 1])
                              for i in range(row[MINE_ROLLS_LEN])),
        last_eliminated=tuple(row[LAST_ELIMINATED:LAST_ELIMINATED + row[ELIMINATED_LEN]]),
    )


def legal_mask(batch: Batch) -> np.ndarray:
    """``(G, W, W)`` booleans: ``[g, seat, target]``, the targets each seat may attack this round (all False
    for a seat that does not act, and once the game is over)."""
    compile_kernel()
    width = batch.width
    masks = np.zeros((len(batch), P, P), dtype=np.bool_)
    _legal_masks(batch.state, masks)
    return masks[:, :width, :width]


def legal_list(batch: Batch, game: int, seat: int) -> list[int]:
    """The targets ``seat`` may attack in game ``game``, ascending (``rules.legal_actions(state, seat)``)."""
    compile_kernel()
    out = np.empty(P, dtype=np.int64)
    return [int(a) for a in out[:_legal_one(batch.state[game], seat, out)]]


@compiled
def _legal_one(row, seat, out):
    return legal_actions(row, seat, out)


def acting_seats(batch: Batch) -> np.ndarray:
    """``(G, W)`` booleans: the seats that choose a target this round (``rules.acting_seats``)."""
    compile_kernel()
    acting = np.zeros((len(batch), P), dtype=np.bool_)
    _acting(batch.state, acting)
    return acting[:, :batch.width]


def step_batch(batch: Batch, actions: Sequence[Sequence[int]] | np.ndarray) -> None:
    """Play one round in every game: ``actions[g, seat]`` is the target of each seat that acts in game ``g``
    and -1 for every other seat; a row of -1 leaves its game alone. Nothing is played when any entry is
    wrong: IllegalActionError names the game, the seat and what was wrong, as ``rules.apply_joint`` does."""
    compile_kernel()
    width = batch.width
    moves = np.asarray(actions)
    if moves.shape != (len(batch), width) or moves.dtype.kind not in "iu":
        raise ValueError(f"actions must be {len(batch)} rows of {width} integers, a target per seat (-1: the "
                         f"seat does not act), got shape {moves.shape} of {moves.dtype}")
    moves = np.ascontiguousarray(moves, dtype=np.int64)
    bad = int(_first_illegal(batch.state, moves))
    if bad >= 0:
        game, seat = divmod(bad, P)
        raise _illegal(batch, game, seat, moves[game])
    _step_all(batch.state, batch.chance, moves)


def _illegal(batch: Batch, game: int, seat: int, joint: np.ndarray) -> IllegalActionError:
    """The rules' error for game ``game``'s joint move, its first wrong entry being ``seat``'s."""
    acting = [int(s) for s in np.flatnonzero(acting_seats(batch)[game])]
    given = {s: int(target) for s, target in enumerate(joint) if target >= 0}
    if seat not in acting or seat not in given:
        missing = [s for s in acting if s not in given]
        extra = sorted(s for s in given if s not in acting)
        return IllegalActionError(
            given, [f"seat {s}" for s in acting],
            f"game {game} of the batch: a round needs one target from each living seat; missing seats "
            f"{missing}, extra seats {extra}")
    names = rules.action_names(batch.configs[game])
    target = given[seat]
    name = names[target] if target < len(names) else target
    return IllegalActionError(name, [names[t] for t in legal_list(batch, game, seat)],
                              f"game {game} of the batch, seat {seat}")


def returns(batch: Batch) -> np.ndarray:
    """``(G, W)`` floats: ``rules.returns`` of each game (seats beyond its table size 0)."""
    compile_kernel()
    values = np.zeros((len(batch), P), dtype=np.float64)
    _returns_all(batch.state, values)
    return values[:, :batch.width]


def is_terminal(batch: Batch) -> np.ndarray:
    return batch.state[:, OVER] != 0


def rollout_random(batch: Batch, rng_seeds: Sequence[int] | np.ndarray,
                   max_rounds: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_rounds`` more rounds) with every living seat picking a
    uniformly random target, all in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)``:
    ``(G, W)`` floats (``rules.returns`` where each game stopped) and the agent-steps each took (one seat's
    choice in one round). The picks come from ``rng_seeds[g]``, seat by seat in ascending order (a generator
    apart from the game's chance, which continues from its state)."""
    compile_kernel()
    seeds = kernel_batch.checked_rng_seeds(rng_seeds, len(batch))
    limit = kernel_batch.checked_max_steps(max_rounds)
    values = np.zeros((len(batch), P), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    rounds = np.zeros(len(batch), dtype=np.int64)
    _rollouts(batch.state, batch.chance, seeds, limit, values, steps, rounds)
    return values[:, :batch.width], steps


def random_rollouts(states: Sequence[rules.State], rng_seeds: Sequence[int], max_rounds: int = 1_000_000,
                    use_kernel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rollout_random` from Python States, on the kernel where it can take them, else on the Python
    rules (saying why in one line on stderr): the same returns either way for the same moves and chance,
    though the Python path picks its moves with ``random.Random(rng_seeds[g])``, another stream."""
    if kernel_batch.rules_fallback_reason("Minefield", states, use_kernel, unsupported) is None:
        return rollout_random(from_states(states), rng_seeds, max_rounds)
    width = max((state.config.num_players for state in states), default=rules.MIN_PLAYERS)
    values = np.zeros((len(states), width), dtype=np.float64)
    steps = np.zeros(len(states), dtype=np.int64)
    for g, (state, seed) in enumerate(zip(states, rng_seeds, strict=True)):
        game, picker, played = rules.clone(state), random.Random(int(seed)), 0
        while not rules.is_terminal(game) and played < max_rounds:
            joint = {}
            for seat in rules.acting_seats(game):
                legal = rules.legal_actions(game, seat)
                joint[seat] = legal[int(picker.random() * len(legal))]
            rules.apply_joint(game, joint)
            steps[g] += len(joint)
            played += 1
        values[g, :game.config.num_players] = rules.returns(game)
    return values, steps
