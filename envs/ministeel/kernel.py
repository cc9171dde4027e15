"""MiniSteel compiled with numba: many games as rows of numpy arrays, stepped and played out in compiled code.

An accelerator beside :mod:`.rules`, never a second reading of the rules: ``rules.py`` stays the reference,
and tests/test_kernel_ministeel.py replays seeded games move by move in both engines (same actions, same
chance stream) and checks the legal sets, every State field, the generator's state and the returns at
every step. Every function below follows the function of ``rules.py`` with the same name (without the
leading underscore where the rules have one), in the same order of effects and chance draws.

What it holds
-------------
A :class:`Batch` is ``G`` games: ``state`` (int64, one row of :data:`ROW_SIZE` per game: the options, then
every field of ``rules.State`` at a fixed offset, see the layout below) and ``chance`` (uint32, one row of
625 per game: the Mersenne Twister words and position of the game's ``Chance``, the very generator
``random.Random`` runs, so the kernel draws the same values as the Python engine from the same seed).
``from_states`` and ``to_state`` convert from and to ``rules.State``; ``new_games`` deals in the kernel.

Not held: the event log (the kernel writes no lines; a converted State's log is empty) and the Chance's
log of outcomes (a converted State's Chance continues the same generator with an empty log;
``state[g, DRAWS]`` counts the draws made). What each seat remembers of the others' hands (``known``,
the observation's memory; the rules never read it) is kept only with ``track_known=True``.

Entry points (every loop over games and steps runs in compiled code)
--------------------------------------------------------------------
``new_games(config, seeds)``, ``legal_mask(batch)`` (``legal_list(batch, g)`` for one game),
``step_batch(batch, actions)``, ``rollout_random(batch, rng_seeds, max_steps)``, ``returns(batch)``,
``is_terminal(batch)``, ``current_seat(batch)``; ``first_difference(batch, g, state)`` names where a game
departs from a rules State (the differential test's check). The heuristic bot's compiled rollouts build on
these functions in agents/ministeel_kernel.py. Numba compiles everything on first use
(:func:`compile_kernel`, about 20 s of CPU) and caches it beside this file. Observations are
written by kernel_encode.py from a row that keeps ``known``; the batched envs are in vector.py.

Options: every option of ``ministeel_v2`` and ``ministeel_v1`` (all are numbers or switches the kernel
reads from the row). :func:`unsupported` names what the kernel cannot take (numba missing, a scripted
Chance or one of another class such as a search's dealer); :func:`random_rollouts` then plays on the
Python rules and says so in one line. A deal with more than 24 rounds of initiative re-rolls (about one in
10**16) plays on in the kernel but has no State to give back (``to_state`` says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import kernel_batch
from ..compiled import GENERATOR, MT_SIZE, Kernel, numba, policy_random, random_float, seed_generator
from ..core import Chance
from . import rules
from .rules import (
    ACTION_CARD,
    ACTION_OFFSET,
    ACTION_TYPE,
    ARMOR_SLOT,
    BLADED_SHIELD,
    COMBO,
    COMBO_ATTACKS,
    CONFUSION_DUST,
    COUNTS,
    DAGGER,
    DOOM_DRAGON,
    DRAW_PHASE,
    EQUIP,
    EQUIP_CAPS,
    EQUIP_KINDS,
    FATE,
    FATE_HEAL,
    FLAME_SHOT,
    FORFEIT,
    FORFEIT_EMPTY,
    FORFEIT_NOTHING,
    GAME_OVER,
    GLOVES,
    HATCHET,
    HOOK_ROPE,
    MAGNIFYING_GLASS,
    MAIN,
    MAX_PLAYERS,
    NUM_ACTIONS,
    NUM_KINDS,
    PICK_PHASE,
    PLAGUE_SKULL,
    PLAY,
    POISON,
    POTION,
    REACT_NONE,
    REACT_PHASE,
    REMEDY,
    RESURRECTION_SCEPTER,
    SATCHEL_SLOT,
    SCYTHE,
    STEEL_SHIELD,
    SWAP_ROPE,
    SWORD,
    TARGETED,
    TOKEN,
    TOKEN_DRAW,
    TOKEN_PASS,
    TRIP_ROPE,
    UNTARGETED,
    VALUES,
    WOODEN_SHIELD,
)
from .rules import ANSWER as ANSWER_PHASE


def _argument_types() -> dict:
    """The numba types of this kernel's parameters, by name (every other parameter is an int64; ``mt`` and
    ``policy`` are envs/compiled.py's)."""
    from numba import types

    return {"s": types.int64[::1], "row": types.int64[::1], "out": types.int64[::1],
            "legal": types.int64[::1], "cards": types.int64[::1], "seeds": types.int64[::1],
            "actions": types.int64[::1], "steps": types.int64[::1], "rng_seeds": types.uint64[::1],
            "values_row": types.float64[::1], "states": types.int64[:, ::1],
            "chances": types.uint32[:, ::1], "masks": types.boolean[:, ::1], "values": types.float64[:, ::1],
            "completed": types.boolean, "draws": types.boolean}


# Every compiled function of MiniSteel: this file's, then its users' (a bot's rollout policy names its
# parameters the same way and decorates with these).
KERNEL = Kernel(_argument_types, includes=(GENERATOR,))
inlined, compiled, compiled_allocating = KERNEL.inlined, KERNEL.compiled, KERNEL.compiled_allocating
compile_kernel = KERNEL.compile


# --- the layout of a game's row -------------------------------------------------------------------------------

LAYOUT = kernel_batch.RowLayout()
FIELDS = LAYOUT.fields  # (name, offset, shape) of every part of a row, in order
_field = LAYOUT.field


P, K = MAX_PLAYERS, NUM_KINDS  # every row has room for six seats, whatever the table size
MAX_ROLL_ROUNDS = 24  # rounds of initiative re-rolls kept; more than 24 ties in a row never happen in practice
DECK_ROOM = rules.DECK_SIZE
# The options, read by the kernel as numbers (booleans 0/1).
N = _field(1, "n")
OPT_STARTING_HP = _field(1, "opt_starting_hp")
OPT_HP_CAP = _field(1, "opt_hp_cap")
OPT_HAND_SIZE = _field(1, "opt_hand_size")
OPT_DRAW_TOKENS = _field(1, "opt_draw_tokens")
OPT_TOKEN_CARDS = _field(1, "opt_token_cards")
OPT_ACTIONS_PER_TURN = _field(1, "opt_actions_per_turn")
OPT_POISON_LIMIT = _field(1, "opt_poison_limit")
OPT_STEAL_EQUIPMENT = _field(1, "opt_steal_equipment")
OPT_ARMOR_VS_UNBLOCKABLE = _field(1, "opt_armor_vs_unblockable")
OPT_FLAME_NEEDS_DAMAGE = _field(1, "opt_flame_needs_damage")
OPT_FATE_ON_SELF = _field(1, "opt_fate_on_self")
OPT_SKIPPED_TURN_POISON = _field(1, "opt_skipped_turn_poison")
OPT_MAX_TURNS = _field(1, "opt_max_turns")
OPT_MAX_DECISIONS = _field(1, "opt_max_decisions")
OPT_DRAW_WINDOWS = _field(1, "opt_draw_windows")
# Not an option: whether this row keeps ``known`` (observations need it, rollouts do not).
TRACK_KNOWN = _field(1, "track_known")
# rules.State, field by field.
HP = _field(P, "hp")
POISON_TOKENS = _field(P, "poison_tokens")
TOKENS = _field(P, "tokens")
HANDS = _field((P, K), "hands")  # HANDS + seat * K + kind
EQUIPMENT = _field((P, 3), "equipment")  # EQUIPMENT + seat * 3 + slot
SKIPS = _field(P, "skips")
ALIVE = _field(P, "alive")
DECK_LEN = _field(1, "deck_len")
DECK = _field(DECK_ROOM, "deck")  # bottom first: the top card is DECK + DECK_LEN - 1, as rules' list.pop()
UNSEEN_ORDER_ROWS = {"deck": (DECK, DECK_LEN)}  # rules.UNSEEN_ORDER_FIELDS in a row: (first field, length field)
DISCARD = _field(K, "discard")
ROLL_ROUNDS = _field(1, "roll_rounds")
ROLLS = _field((MAX_ROLL_ROUNDS, P), "initiative_rolls")  # ROLLS + round * P + seat
FIRST_SEAT = _field(1, "first_seat")
TURN_SEAT = _field(1, "turn_seat")
TO_ACT = _field(1, "to_act")
PHASE = _field(1, "phase")
ACTIONS_LEFT = _field(1, "actions_left")
TURN = _field(1, "turn")
DECISIONS = _field(1, "decisions")
ATTACKER = _field(1, "attacker")
TARGET = _field(1, "target")
ATTACK_CARD = _field(1, "attack_card")
DAMAGE = _field(1, "damage")
POISONS = _field(1, "poisons")
COMBO_FLAG = _field(1, "combo_flag")
SHIELD = _field(1, "shield")
PICK = _field(K, "pick")
PICK_SOURCE = _field(1, "pick_source")
WINDOW_LEN = _field(1, "window_len")
WINDOW = _field(P, "window")
WINDOW_NEXT = _field(1, "window_next")
ELIMINATED_LEN = _field(1, "eliminated_len")
ELIMINATED = _field(P, "eliminated")
OUT_AT = _field(P, "out_at")
FINISHING_LEN = _field(1, "finishing_len")
FINISHING_ORDER = _field(P, "finishing_order")
WINNER = _field(1, "winner")
END_REASON = _field(1, "end_reason")  # an index into END_REASONS
DRAWS = _field(1, "draws")  # chance draws made so far (the length the Python Chance's log would have)
KNOWN = _field((P, P, K), "known")  # KNOWN + (observer * P + holder) * K + kind
STATE_SIZE = LAYOUT.size  # what a State holds ends here; the rest is working space, not compared
SCRATCH_SEATS = _field(P, "scratch_seats")  # one value per seat while a function works (no allocations)
ROW_SIZE = LAYOUT.size

END_REASONS = ("", rules.LAST_STANDING, rules.ALL_OUT, rules.TURN_LIMIT, rules.DECISION_LIMIT)
NO_END, LAST_STANDING, ALL_OUT, TURN_LIMIT, DECISION_LIMIT = range(5)

# --- the rules' tables as arrays (numba freezes module-level arrays into the compiled code) ----------------------

VALUE = np.array(VALUES, dtype=np.int64)
DECK_COUNTS = np.array(COUNTS, dtype=np.int64)
TARGETED_CARDS = np.array(TARGETED, dtype=np.int64)
UNTARGETED_CARDS = np.array(UNTARGETED, dtype=np.int64)
COMBO_CARDS = np.array(COMBO_ATTACKS, dtype=np.int64)
EQUIP_KIND = np.array(EQUIP_KINDS, dtype=np.int64)
EQUIP_CAP = np.array(EQUIP_CAPS, dtype=np.int64)
SLOT_OF_KIND = np.array([rules.SLOT_OF.get(kind, -1) for kind in range(K)], dtype=np.int64)
IS_DARK = np.array([kind in rules.DARK for kind in range(K)], dtype=np.int64)
PLAY_AT_ROW = np.array(rules._PLAY_AT_ROWS, dtype=np.int64)  # [card, offset] -> action, -1 where none
COMBO_ROW = np.array(rules._COMBO_ROWS, dtype=np.int64)
PLAY_ACTION = np.array([rules.PLAY_INDEX.get(kind, -1) for kind in range(K)], dtype=np.int64)
EQUIP_ACTION = np.array([rules.EQUIP_INDEX[kind] for kind in EQUIP_KINDS], dtype=np.int64)
FORFEIT_ACTION = np.array(rules.FORFEIT_INDEX, dtype=np.int64)
REACT_ACTION = np.array([rules.REACT_INDEX.get(kind, -1) for kind in range(K)], dtype=np.int64)
PICK_ACTION = np.array(rules.PICK_INDEX, dtype=np.int64)
TYPE_OF = np.array(ACTION_TYPE, dtype=np.int64)
CARD_OF = np.array(ACTION_CARD, dtype=np.int64)
OFFSET_OF = np.array(ACTION_OFFSET, dtype=np.int64)
# Fate's die: 0 attack, 1 poison, 2 heal, by face (index 0 unused).
FATE_FACE = np.array([0] + [0 if f in rules.FATE_ATTACK else 1 if f in rules.FATE_POISON else 2
                            for f in range(1, 7)], dtype=np.int64)
ATTACK_CARDS = (DAGGER, HATCHET, SWORD, FLAME_SHOT, BLADED_SHIELD)  # a plain attack: damage, no poison
assert ATTACK_CARDS == COMBO_ATTACKS
# Who sees a card move (rules' ``audience``): everyone (None), nobody (()), or a pair of seats.
EVERYONE, NOBODY, PAIR = 0, 1, 2

# --- chance: the Python engine's draws (envs/compiled.py's generator) ------------------------------------------


@inlined
def below(s, mt, n):
    """``Chance.below(n)``: ``int(random() * n)``, counted."""
    s[DRAWS] += 1
    return np.int64(random_float(mt) * n)


@inlined
def roll(s, mt, sides):
    return below(s, mt, sides) + 1


# --- cards moving -------------------------------------------------------------------------------------------------


@inlined
def _around(seat, n):
    """``seat % n`` for ``0 <= seat < 2 * n``: a comparison instead of a division, in the hottest loops."""
    return seat - n if seat >= n else seat


@inlined
def _hand_size(s, seat):
    total = 0
    for kind in range(K):
        total += s[HANDS + seat * K + kind]
    return total


@inlined
def _worn(s, seat):
    return s[EQUIPMENT + seat * 3] + s[EQUIPMENT + seat * 3 + 1] + s[EQUIPMENT + seat * 3 + 2]


@compiled
def _shuffle_deck(s, mt):
    """``Chance.shuffle`` of the deck: Fisher-Yates, one draw per position from the top down."""
    for i in range(s[DECK_LEN] - 1, 0, -1):
        j = below(s, mt, i + 1)
        s[DECK + i], s[DECK + j] = s[DECK + j], s[DECK + i]


@compiled
def reshuffle(s, mt):
    size = 0
    for kind in range(K):
        for _ in range(s[DISCARD + kind]):
            s[DECK + size] = kind
            size += 1
        s[DISCARD + kind] = 0
    s[DECK_LEN] = size
    _shuffle_deck(s, mt)


@compiled
def draw_one(s, mt):
    if s[DECK_LEN] == 0:
        reshuffle(s, mt)
        if s[DECK_LEN] == 0:
            return -1
    s[DECK_LEN] -= 1
    card = s[DECK + s[DECK_LEN]]
    s[DECK + s[DECK_LEN]] = 0  # every slot past a list's length stays 0: equal games have equal rows
    return card


@compiled
def draw(s, mt, seat, count):
    drawn = 0
    for _ in range(count):
        card = draw_one(s, mt)
        if card < 0:
            break
        s[HANDS + seat * K + card] += 1
        drawn += 1
    return drawn


@compiled
def take_random(s, mt, seat, equipment, equipment_first, audience, first, second):
    """``(kind, came from the hand)`` of a random card removed from ``seat``; kind -1 if it has none."""
    held = _hand_size(s, seat)
    wearing = _worn(s, seat) if equipment or equipment_first else 0
    if equipment_first and wearing:
        held = 0
    if held + wearing == 0:
        return -1, False
    index = below(s, mt, held + wearing)
    if index < held:
        for kind in range(K):
            index -= s[HANDS + seat * K + kind]
            if index < 0:
                s[HANDS + seat * K + kind] -= 1
                forget(s, seat, kind, audience, first, second)
                return kind, True
    index -= held
    for slot in range(3):
        index -= s[EQUIPMENT + seat * 3 + slot]
        if index < 0:
            s[EQUIPMENT + seat * 3 + slot] -= 1
            return EQUIP_KIND[slot], False
    return -1, False  # unreachable: the index is below the cards counted


@compiled
def gain_stolen(s, seat, kind, audience, first, second):
    slot = SLOT_OF_KIND[kind]
    if slot >= 0 and s[EQUIPMENT + seat * 3 + slot] < EQUIP_CAP[slot]:
        s[EQUIPMENT + seat * 3 + slot] += 1
    else:
        s[HANDS + seat * K + kind] += 1
        learn(s, seat, kind, audience, first, second)


# --- what each seat knows of the others' hands (only with TRACK_KNOWN) --------------------------------------------


@inlined
def forget(s, holder, kind, audience, first, second):
    if not s[TRACK_KNOWN]:
        return
    for observer in range(s[N]):
        row = KNOWN + (observer * P + holder) * K
        if audience == EVERYONE or observer == first or observer == second:
            if s[row + kind]:
                s[row + kind] -= 1
        else:
            for other in range(K):
                if s[row + other]:
                    s[row + other] -= 1


@inlined
def learn(s, holder, kind, audience, first, second):
    if not s[TRACK_KNOWN] or audience == NOBODY:
        return
    for observer in range(s[N]):
        if observer != holder and (audience == EVERYONE or observer == first or observer == second):
            s[KNOWN + (observer * P + holder) * K + kind] += 1


@compiled
def forget_hand(s, holder):
    if not s[TRACK_KNOWN]:
        return
    for observer in range(s[N]):
        row = KNOWN + (observer * P + holder) * K
        for kind in range(K):
            s[row + kind] = 0


@compiled
def destroy(s, mt, seat, count):
    for _ in range(count):
        kind, _from_hand = take_random(s, mt, seat, 1, 1, EVERYONE, -1, -1)
        if kind < 0:
            break
        s[DISCARD + kind] += 1


# --- harm, death and the end ----------------------------------------------------------------------------------


@compiled
def hurt(s, mt, seat, amount):
    if amount <= 0 or not s[ALIVE + seat]:
        return
    s[HP + seat] -= amount
    if s[HP + seat] <= 0:
        die(s, mt, seat)


@compiled
def die(s, mt, seat):
    if s[HANDS + seat * K + RESURRECTION_SCEPTER]:
        face = roll(s, mt, 6)
        s[HP + seat] = min(face, s[OPT_HP_CAP])
        for kind in range(K):
            s[DISCARD + kind] += s[HANDS + seat * K + kind]
            s[HANDS + seat * K + kind] = 0
        forget_hand(s, seat)
        draw(s, mt, seat, s[OPT_HAND_SIZE])
        s[TOKENS + seat] += 1
        return
    s[HP + seat] = 0
    eliminate(s, seat)


@inlined
def add_poison(s, seat):
    if not s[ALIVE + seat]:
        return
    s[POISON_TOKENS + seat] += 1
    if s[POISON_TOKENS + seat] >= s[OPT_POISON_LIMIT]:
        eliminate(s, seat)


@compiled
def eliminate(s, seat):
    s[ALIVE + seat] = 0
    for kind in range(K):
        s[DISCARD + kind] += s[HANDS + seat * K + kind]
        s[HANDS + seat * K + kind] = 0
    for slot in range(3):
        s[DISCARD + EQUIP_KIND[slot]] += s[EQUIPMENT + seat * 3 + slot]
        s[EQUIPMENT + seat * 3 + slot] = 0
    forget_hand(s, seat)
    s[SKIPS + seat] = 0
    s[ELIMINATED + s[ELIMINATED_LEN]] = seat
    s[ELIMINATED_LEN] += 1
    s[OUT_AT + seat] = s[DECISIONS]


@inlined
def next_alive(s, seat):
    n = s[N]
    seat = _around(seat + 1, n)
    while not s[ALIVE + seat]:
        seat = _around(seat + 1, n)
    return seat


@compiled
def end(s, reason):
    s[PHASE] = GAME_OVER
    s[TO_ACT] = -1
    s[END_REASON] = reason
    for kind in range(K):  # cards still waiting for a pick go to the discard pile
        s[DISCARD + kind] += s[PICK + kind]
        s[PICK + kind] = 0
    count = 0
    for seat in range(s[N]):
        if s[ALIVE + seat]:
            s[FINISHING_ORDER + count] = seat
            count += 1
    if reason == LAST_STANDING:
        s[WINNER] = s[FINISHING_ORDER]
    for i in range(s[ELIMINATED_LEN] - 1, -1, -1):
        s[FINISHING_ORDER + count] = s[ELIMINATED + i]
        count += 1
    s[FINISHING_LEN] = count


@compiled
def settle(s, mt, completed):
    alive = 0
    for seat in range(s[N]):
        alive += s[ALIVE + seat]
    if alive <= 1:
        end(s, LAST_STANDING if alive == 1 else ALL_OUT)
        return
    if s[DECISIONS] >= s[OPT_MAX_DECISIONS]:
        end(s, DECISION_LIMIT)
        return
    if s[PHASE] == DRAW_PHASE:
        return
    seat = s[TURN_SEAT]
    if not s[ALIVE + seat] or (s[PHASE] == MAIN and s[ACTIONS_LEFT] <= 0):
        s[PHASE] = MAIN
        following = next_alive(s, seat)
        if s[OPT_DRAW_WINDOWS] and open_window(s, seat + 1, upcoming_seat(s, seat), following):
            return
        start_turn(s, mt, following)
    elif completed and s[PHASE] == MAIN and s[OPT_DRAW_WINDOWS]:
        open_window(s, seat + 1, seat, -1)


# --- v2's Card Draw windows -----------------------------------------------------------------------------------


@compiled
def open_window(s, start, excluded, following):
    n = s[N]
    asked = 0
    for k in range(n):
        seat = _around(start + k, n)
        if seat != excluded and s[ALIVE + seat] and s[TOKENS + seat]:
            s[WINDOW + asked] = seat
            asked += 1
    if asked == 0:
        return False
    s[WINDOW_LEN] = asked
    s[WINDOW_NEXT] = following
    s[PHASE] = DRAW_PHASE
    s[TO_ACT] = s[WINDOW]
    return True


@compiled
def upcoming_seat(s, seat):
    skips = SCRATCH_SEATS  # a copy of the skips to count down, changing nothing
    for other in range(s[N]):
        s[skips + other] = s[SKIPS + other]
    following = next_alive(s, seat)
    while s[skips + following]:
        s[skips + following] -= 1
        following = next_alive(s, following)
    return following


@compiled
def window_decision(s, mt, draws):
    seat = s[TO_ACT]
    if draws:
        s[TOKENS + seat] -= 1
        draw(s, mt, seat, s[OPT_TOKEN_CARDS])
        if s[TOKENS + seat]:
            return
    s[WINDOW_LEN] -= 1
    for i in range(s[WINDOW_LEN]):
        s[WINDOW + i] = s[WINDOW + i + 1]
    s[WINDOW + s[WINDOW_LEN]] = 0
    if s[WINDOW_LEN]:
        s[TO_ACT] = s[WINDOW]
        return
    s[PHASE] = MAIN
    following = s[WINDOW_NEXT]
    s[WINDOW_NEXT] = -1
    if following >= 0:
        start_turn(s, mt, following)
    else:
        s[TO_ACT] = s[TURN_SEAT]


@compiled
def start_turn(s, mt, seat):
    while True:
        if s[TURN] >= s[OPT_MAX_TURNS]:
            end(s, TURN_LIMIT)
            return
        s[TURN] += 1
        if s[SKIPS + seat]:
            s[SKIPS + seat] -= 1
            if s[OPT_SKIPPED_TURN_POISON] and s[POISON_TOKENS + seat]:
                s[HP + seat] = max(1, s[HP + seat] - s[POISON_TOKENS + seat])
            seat = next_alive(s, seat)
            continue
        break
    if s[POISON_TOKENS + seat]:
        s[HP + seat] = max(1, s[HP + seat] - s[POISON_TOKENS + seat])
    missing = s[OPT_HAND_SIZE] + s[EQUIPMENT + seat * 3 + SATCHEL_SLOT] - _hand_size(s, seat)
    if missing > 0:
        draw(s, mt, seat, missing)
    s[TURN_SEAT] = seat
    s[TO_ACT] = seat
    s[PHASE] = MAIN
    s[ACTIONS_LEFT] = s[OPT_ACTIONS_PER_TURN]


@compiled
def new_game(s, mt):
    """``rules.new_game`` on a row whose options are set and whose generator is seeded."""
    n = s[N]
    for seat in range(P):
        s[ALIVE + seat] = 1 if seat < n else 0
        s[HP + seat] = s[OPT_STARTING_HP] if seat < n else 0
        s[TOKENS + seat] = s[OPT_DRAW_TOKENS] if seat < n else 0
        s[OUT_AT + seat] = -1 if seat < n else 0
    rolling = (1 << n) - 1  # a bit per seat still rolling
    faces = SCRATCH_SEATS
    rounds, first = 0, -1
    while True:
        best = 0
        for seat in range(n):
            s[faces + seat] = roll(s, mt, 6) if rolling >> seat & 1 else 0
            best = max(best, s[faces + seat])
            if rounds < MAX_ROLL_ROUNDS:
                s[ROLLS + rounds * P + seat] = s[faces + seat]
        rounds += 1
        rolling, left = 0, 0
        for seat in range(n):
            if s[faces + seat] == best:
                rolling |= 1 << seat
                left += 1
                first = seat
        if left == 1:
            break
    s[ROLL_ROUNDS] = rounds
    size = 0
    for kind in range(K):
        for _ in range(DECK_COUNTS[kind]):
            s[DECK + size] = kind
            size += 1
    s[DECK_LEN] = size
    _shuffle_deck(s, mt)
    s[FIRST_SEAT] = first
    for offset in (ATTACKER, TARGET, ATTACK_CARD, SHIELD, PICK_SOURCE, WINDOW_NEXT, WINNER):
        s[offset] = -1  # rules.State's defaults; every other field starts at 0
    for i in range(n):
        draw(s, mt, _around(first + i, n), s[OPT_HAND_SIZE])
    s[TURN_SEAT] = first
    if not (s[OPT_DRAW_WINDOWS] and open_window(s, first, first, first)):
        start_turn(s, mt, first)


# --- whose decision, and which --------------------------------------------------------------------------------


@inlined
def can_be_robbed(s, seat):
    return _hand_size(s, seat) > 0 or (s[OPT_STEAL_EQUIPMENT] and _worn(s, seat) > 0)


@compiled
def legal_actions(s, out):
    """The legal actions, ascending, into ``out``; their number (0 once the game is over)."""
    phase = s[PHASE]
    count = 0
    if phase == MAIN:
        seat, n = s[TURN_SEAT], s[N]
        hand = HANDS + seat * K
        for card in TARGETED_CARDS:
            if s[hand + card]:
                for k in range(1, n):
                    target = _around(seat + k, n)
                    if s[ALIVE + target] and (card != HOOK_ROPE or can_be_robbed(s, target)):
                        out[count] = PLAY_AT_ROW[card, k]
                        count += 1
        if s[hand + FATE]:
            if s[OPT_FATE_ON_SELF]:
                out[count] = PLAY_AT_ROW[FATE, 0]
                count += 1
            for k in range(1, n):
                if s[ALIVE + _around(seat + k, n)]:
                    out[count] = PLAY_AT_ROW[FATE, k]
                    count += 1
        for card in UNTARGETED_CARDS:
            if s[hand + card] and (card != REMEDY or s[POISON_TOKENS + seat]):
                out[count] = PLAY_ACTION[card]
                count += 1
        for slot in range(3):
            if s[hand + EQUIP_KIND[slot]] and s[EQUIPMENT + seat * 3 + slot] < EQUIP_CAP[slot]:
                out[count] = EQUIP_ACTION[slot]
                count += 1
        if s[hand + POISON]:
            for card in COMBO_CARDS:
                if s[hand + card]:
                    for k in range(1, n):
                        if s[ALIVE + _around(seat + k, n)]:
                            out[count] = COMBO_ROW[card, k]
                            count += 1
        if s[TOKENS + seat]:
            out[count] = TOKEN_DRAW
            count += 1
        before = count
        for kind in range(K):
            if s[hand + kind]:
                out[count] = FORFEIT_ACTION[kind]
                count += 1
        if count == before:
            out[count] = FORFEIT_NOTHING
            count += 1
    elif phase == REACT_PHASE:
        hand = HANDS + s[TARGET] * K
        if s[DAMAGE] > 0:
            for card in (WOODEN_SHIELD, STEEL_SHIELD, BLADED_SHIELD, CONFUSION_DUST):
                if s[hand + card]:
                    out[count] = REACT_ACTION[card]
                    count += 1
        if s[POISONS] and s[hand + REMEDY]:
            out[count] = REACT_ACTION[REMEDY]
            count += 1
        out[count] = REACT_NONE
        count += 1
    elif phase == ANSWER_PHASE:
        out[0] = REACT_ACTION[HOOK_ROPE]
        out[1] = REACT_NONE
        count = 2
    elif phase == PICK_PHASE:
        for kind in range(K):
            if s[PICK + kind]:
                out[count] = PICK_ACTION[kind]
                count += 1
    elif phase == DRAW_PHASE:
        out[0] = TOKEN_DRAW
        out[1] = TOKEN_PASS
        count = 2
    return count


@inlined
def has_reaction(s):
    hand = HANDS + s[TARGET] * K
    if s[DAMAGE] > 0 and (s[hand + WOODEN_SHIELD] > 0 or s[hand + STEEL_SHIELD] > 0 or s[hand + BLADED_SHIELD] > 0
                          or s[hand + CONFUSION_DUST] > 0):
        return True
    return s[POISONS] != 0 and s[hand + REMEDY] > 0


# --- playing --------------------------------------------------------------------------------------------------


@compiled
def apply_legal(s, mt, action):
    """``rules.apply_legal``: ``action`` must be legal (``legal_actions``)."""
    s[DECISIONS] += 1
    phase = s[PHASE]
    completed = True
    if phase == MAIN:
        completed = TYPE_OF[action] != TOKEN and TYPE_OF[action] != EQUIP
        main(s, mt, action)
    elif phase == REACT_PHASE:
        react(s, mt, CARD_OF[action])
    elif phase == ANSWER_PHASE:
        answer(s, mt, CARD_OF[action])
    elif phase == DRAW_PHASE:
        completed = False
        window_decision(s, mt, action == TOKEN_DRAW)
    else:
        keep(s, CARD_OF[action])
    settle(s, mt, completed)


@inlined
def _discard_from_hand(s, seat, card):
    s[HANDS + seat * K + card] -= 1
    forget(s, seat, card, EVERYONE, -1, -1)
    s[DISCARD + card] += 1


@compiled
def main(s, mt, action):
    seat = s[TURN_SEAT]
    kind, card, offset = TYPE_OF[action], CARD_OF[action], OFFSET_OF[action]
    if kind == TOKEN:
        s[TOKENS + seat] -= 1
        draw(s, mt, seat, s[OPT_TOKEN_CARDS])
        return
    if kind == EQUIP:
        s[HANDS + seat * K + card] -= 1
        forget(s, seat, card, EVERYONE, -1, -1)
        s[EQUIPMENT + seat * 3 + SLOT_OF_KIND[card]] += 1
        return
    s[ACTIONS_LEFT] -= 1
    if kind == FORFEIT_EMPTY:
        return
    _discard_from_hand(s, seat, card)
    if kind == FORFEIT:
        if IS_DARK[card]:
            hurt(s, mt, seat, 1)
        return
    if kind == PLAY:
        play_untargeted(s, mt, seat, card)
        return
    target = _around(seat + offset, s[N])
    gloves = s[EQUIPMENT + seat * 3 + GLOVES]
    if kind == COMBO:
        _discard_from_hand(s, seat, POISON)
        damage = attack_value(s, mt, card) + gloves
        begin_attack(s, mt, seat, target, card, damage, 1, 1)
        return
    if card == DAGGER or card == HATCHET or card == SWORD or card == FLAME_SHOT or card == BLADED_SHIELD:
        damage = attack_value(s, mt, card) + gloves
        begin_attack(s, mt, seat, target, card, damage, 0, 0)
    elif card == POISON:
        begin_attack(s, mt, seat, target, POISON, 0, 1, 0)
    elif card == FATE:
        face = FATE_FACE[roll(s, mt, 6)]
        if face == 0:
            damage = VALUE[FATE] + gloves
            if target == seat:
                resolve(s, mt, seat, FATE, damage, 0, seat, -1, 0)
            else:
                begin_attack(s, mt, seat, target, FATE, damage, 0, 0)
        elif face == 1:
            if target == seat:
                add_poison(s, seat)
            else:
                begin_attack(s, mt, seat, target, FATE, 0, 1, 0)
        else:
            s[HP + target] = min(s[OPT_HP_CAP], s[HP + target] + FATE_HEAL)
    elif card == HOOK_ROPE:
        stolen, from_hand = take_random(s, mt, target, s[OPT_STEAL_EQUIPMENT], 0, PAIR, seat, target)
        gain_stolen(s, seat, stolen, PAIR if from_hand else EVERYONE, seat, target)
    elif card == SWAP_ROPE:
        swap_hands(s, seat, target)
    elif card == TRIP_ROPE:
        s[SKIPS + target] += 1


@compiled
def swap_hands(s, seat, target):
    if s[TRACK_KNOWN]:
        for observer in range(s[N]):
            mine, theirs = KNOWN + (observer * P + seat) * K, KNOWN + (observer * P + target) * K
            if observer == seat or observer == target:  # each now knows the hand it gave away
                row = theirs if observer == seat else mine
                for kind in range(K):
                    s[row + kind] = s[HANDS + observer * K + kind]
            else:
                for kind in range(K):
                    s[mine + kind], s[theirs + kind] = s[theirs + kind], s[mine + kind]
    for kind in range(K):
        a, b = HANDS + seat * K + kind, HANDS + target * K + kind
        s[a], s[b] = s[b], s[a]


@inlined
def attack_value(s, mt, card):
    if card == BLADED_SHIELD:
        return roll(s, mt, 6)
    return VALUE[card]


@compiled
def play_untargeted(s, mt, seat, card):
    n = s[N]
    if card == POTION:
        s[HP + seat] = min(s[OPT_HP_CAP], s[HP + seat] + VALUE[POTION])
        draw(s, mt, seat, 1)
    elif card == REMEDY:
        s[POISON_TOKENS + seat] -= 1
    elif card == MAGNIFYING_GLASS:
        face = roll(s, mt, 6)
        for _ in range(face):  # into PICK, empty outside the pick phase: what offer() hands over
            kind = draw_one(s, mt)
            if kind < 0:
                break
            s[PICK + kind] += 1
        offer(s, seat, MAGNIFYING_GLASS)
    elif card == SCYTHE:
        victims = 0  # a bit per opponent alive before the swing
        for k in range(1, n):
            if s[ALIVE + _around(seat + k, n)]:
                victims |= 1 << (_around(seat + k, n))
        damage = VALUE[SCYTHE] + s[EQUIPMENT + seat * 3 + GLOVES]
        for k in range(1, n):
            victim = _around(seat + k, n)
            if victims >> victim & 1:
                armor = s[EQUIPMENT + victim * 3 + ARMOR_SLOT] if s[OPT_ARMOR_VS_UNBLOCKABLE] else 0
                hurt(s, mt, victim, damage - armor)
        for k in range(1, n):
            victim = _around(seat + k, n)
            if not (victims >> victim & 1) or not s[ALIVE + victim]:
                continue
            kind, _from_hand = take_random(s, mt, victim, s[OPT_STEAL_EQUIPMENT], 0, PAIR, seat, victim)
            if kind >= 0:
                s[PICK + kind] += 1
        offer(s, seat, SCYTHE)
    elif card == PLAGUE_SKULL:
        for k in range(n):
            add_poison(s, _around(seat + k, n))
    elif card == DOOM_DRAGON:
        for k in range(1, n):
            victim = _around(seat + k, n)
            if s[ALIVE + victim]:
                destroy(s, mt, victim, 2)
        destroy(s, mt, seat, 2)


@compiled
def offer(s, seat, source):
    """``rules._offer`` of the cards gathered in PICK."""
    kinds, only = 0, -1
    for kind in range(K):
        if s[PICK + kind]:
            kinds += 1
            if only < 0:
                only = kind
    if kinds > 1 and s[ALIVE + seat]:
        s[PICK_SOURCE] = source
        s[PHASE] = PICK_PHASE
        s[TO_ACT] = seat
        return
    if kinds:
        s[PICK_SOURCE] = source
        keep(s, only)


@compiled
def keep(s, kind):
    seat = s[TURN_SEAT]
    s[PICK + kind] -= 1
    if s[PICK_SOURCE] == SCYTHE:
        gain_stolen(s, seat, kind, NOBODY, -1, -1)
    else:
        s[HANDS + seat * K + kind] += 1
    for other in range(K):
        s[DISCARD + other] += s[PICK + other]
        s[PICK + other] = 0
    s[PICK_SOURCE] = -1
    s[PHASE] = MAIN
    s[TO_ACT] = seat


@compiled
def begin_attack(s, mt, attacker, target, card, damage, poisons, combo):
    s[ATTACKER], s[TARGET], s[ATTACK_CARD] = attacker, target, card
    s[DAMAGE], s[POISONS], s[COMBO_FLAG], s[SHIELD] = damage, poisons, combo, -1
    if has_reaction(s):
        s[PHASE] = REACT_PHASE
        s[TO_ACT] = target
    else:
        finish_attack(s, mt, target, -1, 0)


@compiled
def react(s, mt, card):
    defender, attacker = s[TARGET], s[ATTACKER]
    if card < 0:
        finish_attack(s, mt, defender, -1, 0)
        return
    _discard_from_hand(s, defender, card)
    if card == CONFUSION_DUST:
        finish_attack(s, mt, attacker, -1, 1)
    elif card == REMEDY:
        s[POISONS] = 0
        finish_attack(s, mt, defender, -1, 0)
    elif s[HANDS + attacker * K + HOOK_ROPE]:
        s[SHIELD] = card
        s[PHASE] = ANSWER_PHASE
        s[TO_ACT] = attacker
    else:
        finish_attack(s, mt, defender, card, 0)


@compiled
def answer(s, mt, card):
    attacker, shield = s[ATTACKER], s[SHIELD]
    if card == HOOK_ROPE:
        _discard_from_hand(s, attacker, HOOK_ROPE)
        s[DISCARD + shield] -= 1
        s[HANDS + attacker * K + shield] += 1
        learn(s, attacker, shield, EVERYONE, -1, -1)
        shield = -1
    finish_attack(s, mt, s[TARGET], shield, 0)


@compiled
def finish_attack(s, mt, victim, shield, unblockable):
    resolve(s, mt, s[ATTACKER], s[ATTACK_CARD], s[DAMAGE], s[POISONS], victim, shield, unblockable)
    s[ATTACKER] = s[TARGET] = s[ATTACK_CARD] = s[SHIELD] = -1
    s[DAMAGE] = s[POISONS] = s[COMBO_FLAG] = 0
    s[PHASE] = MAIN
    s[TO_ACT] = s[TURN_SEAT]


@compiled
def resolve(s, mt, attacker, card, damage, poisons, victim, shield, unblockable):
    if damage > 0:
        block = 0
        if shield == BLADED_SHIELD:
            block = roll(s, mt, 6)
        elif shield >= 0:
            block = VALUE[shield]
        if not unblockable or s[OPT_ARMOR_VS_UNBLOCKABLE]:
            block += s[EQUIPMENT + victim * 3 + ARMOR_SLOT]
        dealt = max(0, damage - block)
        hurt(s, mt, victim, dealt)
        if card == FLAME_SHOT and s[ALIVE + victim] and (dealt > 0 or not s[OPT_FLAME_NEEDS_DAMAGE]):
            destroy(s, mt, victim, 2)
        if poisons and dealt > 0:
            add_poison(s, victim)
    elif poisons:
        add_poison(s, victim)


@compiled
def game_returns(s, values_row):
    """``rules.returns`` into ``values_row`` (one value per seat of the table)."""
    n = s[N]
    loss = -1.0 / (n - 1)
    for seat in range(n):
        values_row[seat] = 0.0
    over = s[PHASE] == GAME_OVER
    count = s[ELIMINATED_LEN]
    last = s[OUT_AT + s[ELIMINATED + count - 1]] if count else -1
    for i in range(count):
        seat = s[ELIMINATED + i]
        if not (over and s[END_REASON] == ALL_OUT and s[OUT_AT + seat] == last):
            values_row[seat] = loss
    if s[WINNER] >= 0:
        values_row[s[WINNER]] = 1.0


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
        row[TRACK_KNOWN] = 0  # the rules never read the hand memory: a rollout skips keeping it
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
    """Many MiniSteel games as arrays: ``state`` (int64, ``(G, ROW_SIZE)``), ``chance`` (uint32,
    ``(G, 625)``) and the ``configs`` they were made with (what :func:`to_state` rebuilds States with)."""


def unsupported(config: rules.ConfigV1 | None = None, chance: Chance | None = None) -> str | None:
    """Why the kernel cannot play this game (a short sentence), or None when it can."""
    return kernel_batch.unsupported_reason("MiniSteel", numba, config, rules.ConfigV1, chance)


def _empty(games: int) -> tuple[np.ndarray, np.ndarray]:
    return kernel_batch.empty_rows(games, ROW_SIZE)


def _write_options(row: np.ndarray, config: rules.ConfigV1, track_known: bool) -> None:
    row[N] = config.num_players
    row[OPT_STARTING_HP] = config.starting_hp
    row[OPT_HP_CAP] = config.hp_cap
    row[OPT_HAND_SIZE] = config.hand_size
    row[OPT_DRAW_TOKENS] = config.draw_tokens
    row[OPT_TOKEN_CARDS] = config.token_cards
    row[OPT_ACTIONS_PER_TURN] = config.actions_per_turn
    row[OPT_POISON_LIMIT] = config.poison_limit
    row[OPT_STEAL_EQUIPMENT] = config.steal_equipment
    row[OPT_ARMOR_VS_UNBLOCKABLE] = config.armor_vs_unblockable
    row[OPT_FLAME_NEEDS_DAMAGE] = config.flame_needs_damage
    row[OPT_FATE_ON_SELF] = config.fate_on_self
    row[OPT_SKIPPED_TURN_POISON] = config.skipped_turn_poison
    row[OPT_MAX_TURNS] = config.max_turns
    row[OPT_MAX_DECISIONS] = config.max_decisions
    row[OPT_DRAW_WINDOWS] = config.draw_windows
    row[TRACK_KNOWN] = track_known


def _require_kernel(config: rules.ConfigV1 | None = None, chance: Chance | None = None) -> None:
    kernel_batch.require_kernel("MiniSteel", unsupported(config, chance), compile_kernel)


def new_games(config: rules.ConfigV1, seeds: Sequence[int], track_known: bool = False) -> Batch:
    """Deal one game per seed in the kernel: game ``g`` is ``rules.new_game(config, Chance(seeds[g]))``
    (seeds from 0 to 2**63 - 1)."""
    _require_kernel(config)
    seed_array = kernel_batch.checked_seeds(seeds)
    states, chances = _empty(len(seed_array))
    for row in states:
        _write_options(row, config, track_known)
    _new_games(states, chances, seed_array)
    return Batch(states, chances, [config] * len(seed_array))


def from_states(states: Sequence[rules.State], track_known: bool = True) -> Batch:
    """The kernel's arrays of Python States (each keeps its Chance's generator state; the log is left out)."""
    rows, chances = kernel_batch.rows_of_states(
        states, ROW_SIZE, _require_kernel, lambda row, state: _write_state(row, state, track_known))
    return Batch(rows, chances, [state.config for state in states])


def _write_state(row: np.ndarray, state: rules.State, track_known: bool) -> None:
    n = state.n
    _write_options(row, state.config, track_known)
    if len(state.initiative_rolls) > MAX_ROLL_ROUNDS:
        raise ValueError(f"the kernel keeps {MAX_ROLL_ROUNDS} rounds of initiative rolls; this game had "
                         f"{len(state.initiative_rolls)}")
    row[HP:HP + n] = state.hp
    row[POISON_TOKENS:POISON_TOKENS + n] = state.poison
    row[TOKENS:TOKENS + n] = state.tokens
    row[HANDS:HANDS + n * K] = np.ravel(state.hands)
    row[EQUIPMENT:EQUIPMENT + n * 3] = np.ravel(state.equipment)
    row[SKIPS:SKIPS + n] = state.skips
    row[ALIVE:ALIVE + n] = state.alive
    row[DECK_LEN] = len(state.deck)
    row[DECK:DECK + len(state.deck)] = state.deck
    row[DISCARD:DISCARD + K] = state.discard
    row[ROLL_ROUNDS] = len(state.initiative_rolls)
    for round_, faces in enumerate(state.initiative_rolls):
        row[ROLLS + round_ * P:ROLLS + round_ * P + n] = faces
    for offset, value in ((FIRST_SEAT, state.first_seat), (TURN_SEAT, state.turn_seat), (TO_ACT, state.to_act),
                          (PHASE, state.phase), (ACTIONS_LEFT, state.actions_left), (TURN, state.turn),
                          (DECISIONS, state.decisions), (ATTACKER, state.attacker), (TARGET, state.target),
                          (ATTACK_CARD, state.attack_card), (DAMAGE, state.damage), (POISONS, state.poisons),
                          (COMBO_FLAG, state.combo), (SHIELD, state.shield), (PICK_SOURCE, state.pick_source),
                          (WINDOW_LEN, len(state.window)), (WINDOW_NEXT, state.window_next),
                          (ELIMINATED_LEN, len(state.eliminated)), (FINISHING_LEN, len(state.finishing_order)),
                          (WINNER, state.winner), (END_REASON, END_REASONS.index(state.end_reason)),
                          (DRAWS, len(state.chance.outcomes))):
        row[offset] = value
    row[PICK:PICK + K] = state.pick
    row[WINDOW:WINDOW + len(state.window)] = state.window
    row[ELIMINATED:ELIMINATED + len(state.eliminated)] = state.eliminated
    row[OUT_AT:OUT_AT + n] = state.out_at
    row[FINISHING_ORDER:FINISHING_ORDER + len(state.finishing_order)] = state.finishing_order
    if track_known:
        for observer in range(n):
            for holder in range(n):
                start = KNOWN + (observer * P + holder) * K
                row[start:start + K] = state.known[observer][holder]


def first_difference(batch: Batch, game: int, state: rules.State) -> str | None:
    """Where game ``game`` of ``batch`` differs from ``state`` (the reference), as ``field[index]: kernel K,
    rules R``, the first in row order; None when the two are the same game (every State field but the
    log, the generator's state, the number of draws; ``known`` where the batch tracks it)."""
    row = batch.state[game]
    expected = np.zeros(ROW_SIZE, dtype=np.int64)
    _write_state(expected, state, bool(row[TRACK_KNOWN]))
    difference = LAYOUT.first_difference(row, expected, STATE_SIZE)
    if difference is not None:
        return difference
    if kernel_batch.chance_differs(batch.chance[game], state.chance):
        return "the chance generator's state"
    return None


def to_state(batch: Batch, game: int) -> rules.State:
    """Game ``game`` of ``batch`` as a ``rules.State``: its Chance continues the kernel's generator (with an
    empty log of outcomes), its event log is empty, and ``known`` is all zeros unless the batch tracks it."""
    row = [int(value) for value in batch.state[game]]
    n = row[N]
    if row[ROLL_ROUNDS] > MAX_ROLL_ROUNDS:  # about once in 10**16 deals; never a silently shortened State
        raise ValueError(f"game {game} rolled {row[ROLL_ROUNDS]} rounds for the first seat; the kernel keeps "
                         f"{MAX_ROLL_ROUNDS}, so it has no State to give back")
    chance = Chance(0)
    kernel_batch.set_generator_state(chance._random, batch.chance[game])

    def seats(start: int, count: int = n) -> list[int]:
        return row[start:start + count]

    return rules.State(
        config=batch.configs[game], chance=chance, n=n, hp=seats(HP), poison=seats(POISON_TOKENS),
        tokens=seats(TOKENS), hands=[row[HANDS + seat * K:HANDS + (seat + 1) * K] for seat in range(n)],
        equipment=[row[EQUIPMENT + seat * 3:EQUIPMENT + seat * 3 + 3] for seat in range(n)],
        skips=seats(SKIPS), alive=[bool(value) for value in seats(ALIVE)], deck=seats(DECK, row[DECK_LEN]),
        discard=row[DISCARD:DISCARD + K],
        initiative_rolls=[seats(ROLLS + round_ * P) for round_ in range(min(row[ROLL_ROUNDS], MAX_ROLL_ROUNDS))],
        first_seat=row[FIRST_SEAT], turn_seat=row[TURN_SEAT], to_act=row[TO_ACT], phase=row[PHASE],
        actions_left=row[ACTIONS_LEFT], turn=row[TURN], decisions=row[DECISIONS], attacker=row[ATTACKER],
        target=row[TARGET], attack_card=row[ATTACK_CARD], damage=row[DAMAGE], poisons=bool(row[POISONS]),
        combo=bool(row[COMBO_FLAG]), shield=row[SHIELD], pick=row[PICK:PICK + K], pick_source=row[PICK_SOURCE],
        window=seats(WINDOW, row[WINDOW_LEN]), window_next=row[WINDOW_NEXT],
        eliminated=seats(ELIMINATED, row[ELIMINATED_LEN]), out_at=seats(OUT_AT),
        finishing_order=seats(FINISHING_ORDER, row[FINISHING_LEN]), winner=row[WINNER],
        end_reason=END_REASONS[row[END_REASON]], log=[],
        known=[[row[KNOWN + (observer * P + holder) * K:KNOWN + (observer * P + holder + 1) * K]
                for holder in range(n)] for observer in range(n)],
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
    """``(G, 6)`` floats: ``rules.returns`` of each game (seats beyond its table size 0)."""
    compile_kernel()
    values = np.zeros((len(batch), P), dtype=np.float64)
    _returns_all(batch.state, values)
    return values


def is_terminal(batch: Batch) -> np.ndarray:
    return batch.state[:, PHASE] == GAME_OVER


def current_seat(batch: Batch) -> np.ndarray:
    return batch.state[:, TO_ACT].copy()


def rollout_random(batch: Batch, rng_seeds: Sequence[int] | np.ndarray,
                   max_steps: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_steps`` more decisions) with uniformly random legal
    moves, all in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)``: ``(G, 6)``
    floats (``rules.returns`` where each game stopped) and the decisions each took. The moves come from
    ``rng_seeds[g]`` (a generator apart from the game's chance, which continues from its state)."""
    compile_kernel()
    seeds = kernel_batch.checked_rng_seeds(rng_seeds, len(batch))
    limit = kernel_batch.checked_max_steps(max_steps)
    values = np.zeros((len(batch), P), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    _rollouts(batch.state, batch.chance, seeds, limit, values, steps)
    return values, steps


def random_rollouts(states: Sequence[rules.State], rng_seeds: Sequence[int], max_steps: int = 1_000_000,
                    use_kernel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rollout_random` from Python States, on the kernel where it can take them, else on the Python
    rules (saying why in one line on stderr): the same returns either way for the same moves and chance,
    though the Python path picks its moves with ``random.Random(rng_seeds[g])``, another stream."""
    if kernel_batch.rules_fallback_reason("MiniSteel", states, use_kernel, unsupported) is None:
        return rollout_random(from_states(states, track_known=False), rng_seeds, max_steps)
    return kernel_batch.random_rollouts_on_rules(states, rng_seeds, max_steps, rules, rules.apply_legal, P)


# --- search: a determinization (agents/mcts_kernel.py) ------------------------------------------------------------
# What a search samples, kept apart from the rules' functions above: ``rules.determinize`` with a search's
# dealer, in the order of its draws, so that a compiled search deals exactly what the Python search deals.

POOL_ROOM = rules.DECK_SIZE  # the unseen cards of a determinization: at most the whole deck


@inlined
def _shown_to_need(s, seat, kind):
    """Whether ``kind`` is one of ``rules._shown_to_hold(state, seat)``: the table sees the seat asked to
    react hold a reaction, the attacker asked to answer a Hook Rope."""
    if s[TO_ACT] == seat:
        return False
    if s[PHASE] == REACT_PHASE:
        if s[DAMAGE] > 0 and (kind == WOODEN_SHIELD or kind == STEEL_SHIELD or kind == BLADED_SHIELD
                              or kind == CONFUSION_DUST):
            return True
        return s[POISONS] != 0 and kind == REMEDY
    if s[PHASE] == ANSWER_PHASE:
        return kind == HOOK_ROPE
    return False


@inlined
def _holds_needed(s, seat, cards, start, size):
    """Whether ``cards[start:start + size]`` holds a kind the table saw the seat to act hold."""
    for i in range(start, start + size):
        if _shown_to_need(s, seat, cards[i]):
            return True
    return False


@inlined
def _shuffle_pool(mt, cards, size):
    """``Chance.shuffle`` (a search dealer's): Fisher-Yates from the top, one draw per position."""
    for i in range(size - 1, 0, -1):
        j = np.int64(random_float(mt) * (i + 1))
        cards[i], cards[j] = cards[j], cards[i]


@compiled
def determinize(row, seat, mt, out, cards):
    """``rules.determinize(info, seat, dealer)`` for a search's dealer (agents/mcts.py ``SearchChance``, whose
    samples roll their dice from it too): ``row`` is the information state with ``seat``'s memory (its
    KNOWN rows; TRACK_KNOWN set), ``mt`` the dealer's generator, ``out`` becomes the sample and ``cards``
    (POOL_ROOM) is working space. The pool of unseen cards is built, shuffled, re-shuffled for a seat the
    table saw holding a reaction and dealt as ``rules._redeal`` does, draw for draw. The sample keeps no
    memory (TRACK_KNOWN 0: neither the rules nor the heuristic read it); its KNOWN part is left as the
    caller gave it (zeros)."""
    n = row[N]
    for i in range(KNOWN):
        out[i] = row[i]
    out[TRACK_KNOWN] = 0
    memory = KNOWN + seat * P * K  # what ``seat`` remembers of each holder's hand: memory + holder * K + kind
    size = 0
    for i in range(row[DECK_LEN]):
        cards[size] = row[DECK + i]
        size += 1
    for who in range(n):
        if who == seat:
            continue
        for kind in range(K):
            for _ in range(row[HANDS + who * K + kind] - row[memory + who * K + kind]):
                cards[size] = kind
                size += 1
    pick_hidden = False
    if row[TURN_SEAT] != seat:
        for kind in range(K):
            if row[PICK + kind]:
                pick_hidden = True
    if pick_hidden:
        for kind in range(K):
            for _ in range(row[PICK + kind]):
                cards[size] = kind
                size += 1
    _shuffle_pool(mt, cards, size)
    actor = row[TO_ACT]
    needed, remembered = False, False
    for kind in range(K):
        if _shown_to_need(row, seat, kind):
            needed = True
            if row[memory + actor * K + kind]:
                remembered = True
    if needed and not remembered:
        start, length = 0, 0
        for who in range(n):
            if who == seat:
                continue
            unseen = _hand_size(row, who)
            for kind in range(K):
                unseen -= row[memory + who * K + kind]
            if who < actor:
                start += unseen
            elif who == actor:
                length = unseen
        for _ in range(64):  # rejection keeps the deal uniform among those the table allows
            if _holds_needed(row, seat, cards, start, length):
                break
            _shuffle_pool(mt, cards, size)
        if length and not _holds_needed(row, seat, cards, start, length):
            for i in range(size):
                if (i < start or i >= start + length) and _shown_to_need(row, seat, cards[i]):
                    cards[start], cards[i] = cards[i], cards[start]
                    break
    cursor = 0
    for who in range(n):
        if who == seat:
            continue
        unseen = _hand_size(row, who)
        for kind in range(K):
            out[HANDS + who * K + kind] = row[memory + who * K + kind]
            unseen -= row[memory + who * K + kind]
        for i in range(cursor, cursor + unseen):
            out[HANDS + who * K + cards[i]] += 1
        cursor += unseen
    if pick_hidden:
        for kind in range(K):
            out[PICK + kind] = 0
        for i in range(cursor, cursor + _pick_size(row)):
            out[PICK + cards[i]] += 1
        cursor += _pick_size(row)
    for i in range(size - cursor):
        out[DECK + i] = cards[cursor + i]


@inlined
def _pick_size(s):
    total = 0
    for kind in range(K):
        total += s[PICK + kind]
    return total


@compiled_allocating
def _determinize_many(row, seat, mt, states):
    cards = np.empty(POOL_ROOM, dtype=np.int64)
    for g in range(states.shape[0]):
        determinize(row, seat, mt, states[g], cards)


def information_row(state: rules.State, out: np.ndarray | None = None) -> np.ndarray:
    """An information state (``rules.information_state``) as the kernel's row, with the seat's memory (the
    KNOWN rows, which a determinization keeps); its Chance is not read (a search deals from its own). Written
    over ``out`` (a row, whatever it held) where given, else into a new row."""
    if out is None:
        row = np.zeros(ROW_SIZE, dtype=np.int64)
    else:
        row = out
        row[:] = 0
    _write_state(row, state, track_known=True)
    return row


def determinize_batch(info: rules.State, seat: int, dealer: np.ndarray, samples: int) -> Batch:
    """``samples`` determinizations of ``info`` for ``seat``, one after another, as ``rules.determinize``
    deals them from a search's dealer whose generator is ``dealer`` (625 uint32 words: advanced in place).
    Sample ``g``'s chance is the dealer's state after it (where its dice would continue)."""
    _require_kernel(info.config)
    row = information_row(info)
    states = np.zeros((samples, ROW_SIZE), dtype=np.int64)
    chances = np.zeros((samples, MT_SIZE), dtype=np.uint32)
    for g in range(samples):  # one at a time: each sample's chance is the dealer as it left it
        _determinize_many(row, seat, dealer, states[g:g + 1])
        chances[g] = dealer
    return Batch(states, chances, [info.config] * samples)
