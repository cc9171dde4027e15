"""Wyvern TCG compiled with numba: many games as rows of numpy arrays, stepped and played out in compiled code.

An accelerator beside :mod:`.rules`, never a second reading of the rules: ``rules.py`` stays the reference,
and tests/test_kernel_wyvern.py replays seeded games move by move in both engines (same actions, same chance
stream) and checks the legal sets, every State field, the generator's state and the returns at every step.
Every function below follows the function of ``rules.py`` with the same name (without the leading
underscore), in the same order of effects and chance draws; the few that differ in shape say so (the
rules' chain from the end of a turn through the next door, a death and its looting back to the end of a
turn is a loop here, since numba compiles no recursion).

What it holds
-------------
A :class:`Batch` is ``G`` games: ``state`` (int64, one row of :data:`ROW_SIZE` per game: the options, then
every field of ``rules.State`` at a fixed offset, see the layout below) and ``chance`` (uint32, one row of
625 per game: the Mersenne Twister words and position of the game's ``Chance``, the very generator
``random.Random`` runs, so the kernel draws the same values as the Python engine from the same seed).
``from_states`` and ``to_state`` convert from and to ``rules.State``; ``new_games`` deals in the kernel.

Every zone is a list in the rules, and its order matters (a reshuffle shuffles the discard pile in the
order it was laid, a looter draws from a hand by position, the best item lost is the first of equals),
so every zone is a list here too, with room enough for every card of a six-player game: a seat's deck and
discard pile share one stretch (the deck from its start, the pile from its end; together they never hold
more than every card), its hand another, the combat's table another. Rows are therefore about 59 kB.

Not held: the event list (the kernel writes no events; a converted State's list is empty, though
``events_logged`` and ``step_first_event`` count as the rules count) and the Chance's log of outcomes (a
converted State's Chance continues the same generator with an empty log; ``state[g, DRAWS]`` counts the
draws made). Deck names are indices into :data:`DECK_NAMES` (the bundled decks, then every deck file a
game named, in the order first met); ``specialties`` follows from the decks and the options.

Entry points (every loop over games and steps runs in compiled code)
--------------------------------------------------------------------
``new_games(config, seeds)``, ``legal_mask(batch)`` (``legal_list(batch, g)`` for one game),
``step_batch(batch, actions)``, ``rollout_random(batch, rng_seeds, max_steps)``, ``returns(batch)``,
``is_terminal(batch)``, ``current_seat(batch)``; ``first_difference(batch, g, state)`` names where a game
departs from a rules State (the differential test's check). The heuristic bot's compiled rollouts build on
these functions in agents/wyvern_kernel.py. Numba compiles everything on first use (:func:`compile_kernel`,
about 30 s of CPU) and caches it beside this file; no observations yet (a converted State observes
exactly as the original, the test checks).

Options: every option of ``wyvern_v1`` (races, classes and decks per seat, named, random or deck files;
every number and switch; ``level_reward``). :func:`unsupported` names what the kernel cannot take (numba
missing, a scripted Chance or one of another class such as a search's dealer); :func:`random_rollouts`
then plays on the Python rules and says so in one line. A deal with more than 24 rounds of turn-order
re-rolls (far below one in a billion) plays on in the kernel but has no State to give back (``to_state`` says so).
"""

from __future__ import annotations

import array
import sys
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .. import kernel_batch
from ..compiled import GENERATOR, MT_SIZE, Kernel, numba, policy_random, random_float, seed_generator
from ..core import Chance
from . import decks as deckmod
from . import rules
from .rules import (
    A_ACCEPT,
    A_DECLINE,
    A_LOOT_HAND,
    A_PASS,
    A_RUN,
    A_SUMMON_AID,
    A_SUMMON_FIGHT,
    A_SUMMON_JOIN,
    ASK,
    ASK_ACTION0,
    CLERIC,
    COUNTER,
    DEATH_EATEN,
    DEATH_LEVELS,
    DISCARD,
    DWARF,
    ELF,
    FREE,
    FROM_DOOR,
    FROM_HAND,
    FROM_SUMMON,
    GIANT,
    HALFLING,
    HUMAN,
    K_ASK,
    K_CURSE,
    K_EQUIP,
    K_FIGHT,
    K_OFFER,
    K_SELL,
    K_SELL_EQUIPPED,
    K_USE_MONSTER,
    K_USE_PARTY,
    LOOT_ORDER,
    LOOT_ORDER_ACTION0,
    LOOT_PICK,
    MAX_PLAYERS,
    NAGA,
    NO_RACE,
    NUM_ACTIONS,
    OFFER_ACTION0,
    OVER,
    PALADIN,
    PIXIE,
    RAKSHASA,
    REENTER,
    RESUME_END_TURN,
    SETUP,
    THIEF,
    W_ENHANCER,
    W_ONE_SHOT,
    WARRIOR,
    WINDOW,
    WIZARD,
)


def _argument_types() -> dict:
    """The numba types of this kernel's parameters, by name (every other parameter is an int64; ``mt`` and
    ``policy`` are envs/compiled.py's)."""
    from numba import types

    return {"s": types.int64[::1], "row": types.int64[::1], "out": types.int64[::1],
            "legal": types.int64[::1], "seeds": types.int64[::1], "actions": types.int64[::1],
            "steps": types.int64[::1], "rng_seeds": types.uint64[::1], "values_row": types.float64[::1],
            "states": types.int64[:, ::1], "chances": types.uint32[:, ::1], "masks": types.boolean[:, ::1],
            "values": types.float64[:, ::1], "deck_cards": types.int64[:, ::1], "deck_facts": types.int64[:, ::1],
            "with_draw": types.boolean, "alone": types.boolean,
            # _place_state's: whether to zero the row, a read-only options row, the places of the fields, and
            # two Python buffers (array.array, bytearray) read as they are
            "clear": types.boolean, "options": types.Array(types.int64, 1, "C", readonly=True),
            "places": types.int64[::1], "fields": types.PyArray(types.int64, 1, "C"),
            "cards": types.ByteArray(types.uint8, 1, "C")}


# Every compiled function of Wyvern: this file's, then its users' (a bot's rollout policy names its parameters
# the same way and decorates with these).
KERNEL = Kernel(_argument_types, includes=(GENERATOR,))
inlined, compiled, compiled_allocating = KERNEL.inlined, KERNEL.compiled, KERNEL.compiled_allocating
compile_kernel = KERNEL.compile


# --- the card sheet as arrays (numba freezes module-level arrays into the compiled code) -------------------------

NUM_CARDS = deckmod.NUM_CARDS
KIND_NAMES = ("weapon", "helm", "armor", "boots", "big", "potion", "scroll", "wand", "enhancer", "curse", "monster")
WEAPON, HELM, ARMOR, BOOTS = range(4)
CARD_KIND = np.array([KIND_NAMES.index(kind) for kind in rules.KIND], dtype=np.int64)
CARD_BONUS = np.array(rules.BONUS, dtype=np.int64)
CARD_GOLD = np.array(rules.GOLD, dtype=np.int64)
CARD_RUN = np.array(rules.RUN, dtype=np.int64)
CARD_BIG = np.array(rules.BIG, dtype=np.int64)
CARD_HANDS = np.array(rules.HANDS, dtype=np.int64)
CARD_LEVEL = np.array(rules.LEVEL, dtype=np.int64)
CARD_LEVELS = np.array(rules.LEVELS, dtype=np.int64)
CARD_TREASURES = np.array(rules.TREASURES, dtype=np.int64)
CARD_AMOUNT = np.array([card.amount for card in deckmod.CATALOG], dtype=np.int64)
IS_MONSTER = np.array(rules.IS_MONSTER, dtype=np.int64)
IS_UNDEAD = np.array(rules.UNDEAD, dtype=np.int64)
IS_EQUIPMENT = np.array(rules.IS_EQUIPMENT, dtype=np.int64)
IS_ONE_SHOT = np.array(rules.IS_ONE_SHOT, dtype=np.int64)
IS_CURSE = np.array(rules.IS_CURSE, dtype=np.int64)
WINDOW_USE = np.array(rules.WINDOW_USE, dtype=np.int64)
# A curse's effect and a monster's Bad Stuff by their index in decks.CURSE_EFFECTS / decks.BAD_STUFF (-1: none).
CURSE_EFFECT = np.array([deckmod.CURSE_EFFECTS.index(card.effect) if card.kind == "curse" else -1
                         for card in deckmod.CATALOG], dtype=np.int64)
BAD_STUFF = np.array([deckmod.BAD_STUFF.index(card.bad) if card.is_monster else -1 for card in deckmod.CATALOG],
                     dtype=np.int64)
(LOSE_LEVEL, LOSE_HELM, LOSE_ARMOR, LOSE_BOOTS, LOSE_WEAPONS, LOSE_RACE, PARALYSIS, SLOW,
 CONFUSION) = (deckmod.CURSE_EFFECTS.index(name) for name in ("lose_level", "lose_helm", "lose_armor", "lose_boots",
                                                              "lose_weapons", "lose_race", "paralysis", "slow",
                                                              "confusion"))
(BAD_LOSE_LEVELS, BAD_LOSE_HELM, BAD_LOSE_ARMOR, BAD_LOSE_BOOTS, BAD_LOSE_WEAPONS, BAD_LOSE_BEST,
 BAD_LOSE_ALL_ITEMS, BAD_DEATH) = (deckmod.BAD_STUFF.index(name) for name in (
    "lose_levels", "lose_helm", "lose_armor", "lose_boots", "lose_weapons", "lose_best", "lose_all_items", "death"))
# The slot a curse or Bad Stuff empties (rules._SLOT_OF), by effect index.
CURSE_SLOT = np.array([KIND_NAMES.index(rules._SLOT_OF[f"lose_{name[5:]}"]) if name in (
    "lose_helm", "lose_armor", "lose_boots", "lose_weapons") else -1 for name in deckmod.CURSE_EFFECTS], dtype=np.int64)
BAD_SLOT = np.array([KIND_NAMES.index(rules._SLOT_OF[name]) if name in rules._SLOT_OF else -1
                     for name in deckmod.BAD_STUFF], dtype=np.int64)

# The action table's lookups.
ACTION_KIND = np.array(rules.ACTION_KIND, dtype=np.int64)
ACTION_CARD = np.array(rules.ACTION_CARD, dtype=np.int64)
ACTION_ARG = np.array(rules.ACTION_ARG, dtype=np.int64)
EQUIP_ACTION = np.array(rules.EQUIP_ACTION, dtype=np.int64)
USE_PARTY_ACTION = np.array(rules.USE_PARTY_ACTION, dtype=np.int64)
USE_MONSTER_ACTION = np.array(rules.USE_MONSTER_ACTION, dtype=np.int64)
FIGHT_ACTION = np.array(rules.FIGHT_ACTION, dtype=np.int64)
SELL_ACTION = np.array(rules.SELL_ACTION, dtype=np.int64)
SELL_EQUIPPED_ACTION = np.array(rules.SELL_EQUIPPED_ACTION, dtype=np.int64)
DISCARD_ACTION = np.array(rules.DISCARD_ACTION, dtype=np.int64)
LOOT_ACTION = np.array(rules.LOOT_ACTION, dtype=np.int64)
CURSE_ACTION = np.array(rules.CURSE_ACTION, dtype=np.int64)
TREASURE_SPAN = deckmod.MAX_TREASURES + 1  # offer:+r:k = OFFER_ACTION0 + (r - 1) * TREASURE_SPAN + k

# --- the decks a game can name ----------------------------------------------------------------------------------

DECK_NAMES: list[str] = list(deckmod.bundled_decks())  # bundled first: a random deck is bundled[below(len)]
BUNDLED = len(DECK_NAMES)
_DECK_INDEX = {name: index for index, name in enumerate(DECK_NAMES)}
_deck_arrays: list[tuple[np.ndarray, np.ndarray]] = []  # (cards, facts) per deck, built as first needed
DECK_SUMMON, DECK_THEMES, DECK_ALIGNMENT = range(3)  # the columns of a deck's facts
NO_ALIGNMENT, GOOD, EVIL = range(3)

# --- the layout of a game's row -------------------------------------------------------------------------------

LAYOUT = kernel_batch.RowLayout()
FIELDS = LAYOUT.fields  # (name, offset, shape) of every part of a row, in order
_field = LAYOUT.field


P = MAX_PLAYERS  # every row has room for six seats, whatever the table size
MAX_ROLL_ROUNDS = 24  # rounds of turn-order re-rolls kept; more than 24 ties in a row never happen in practice
ALL_CARDS = MAX_PLAYERS * deckmod.DECK_SIZE  # every card of a six-player game: no zone ever holds more
PILE_ROOM = HAND_ROOM = TABLE_ROOM = ALL_CARDS
# In play at most two weapons (two hands), a helm, an armor, boots, and the items of other kinds: one big one,
# or every copy in the game for a dwarf.
EQUIP_ROOM = 5 + deckmod.MAX_COPIES * MAX_PLAYERS * sum(
    1 for cid in deckmod.EQUIPMENT if rules.KIND[cid] not in ("weapon", "helm", "armor", "boots"))
# The options, read by the kernel as numbers (booleans 0/1; per seat: the index named, -1 for random).
N = _field(1, "n")
OPT_RACES = _field(P, "opt_races")
OPT_CLASSES = _field(P, "opt_classes")
OPT_DECKS = _field(P, "opt_decks")  # an index into DECK_NAMES
OPT_WIN_LEVEL = _field(1, "opt_win_level")
OPT_START_HAND = _field(1, "opt_start_hand")
OPT_HAND_LIMIT = _field(1, "opt_hand_limit")
OPT_HAND_LIMIT_ALWAYS = _field(1, "opt_hand_limit_always")
OPT_RUN_TARGET = _field(1, "opt_run_target")
OPT_GOLD_PER_LEVEL = _field(1, "opt_gold_per_level")
OPT_SPECIALTY_BONUSES = _field(1, "opt_specialty_bonuses")
OPT_SUMMONS = _field(1, "opt_summons")
OPT_ONE_HELPER_PER_TURN = _field(1, "opt_one_helper_per_turn")
OPT_HELP_ROUNDS = _field(1, "opt_help_rounds")
OPT_PALADIN_HELPER_WINS_TIES = _field(1, "opt_paladin_helper_wins_ties")
OPT_DRAW_AFTER_MONSTER_DOOR = _field(1, "opt_draw_after_monster_door")
OPT_MAX_TURNS = _field(1, "opt_max_turns")
OPT_MAX_STEPS = _field(1, "opt_max_steps")
OPT_LEVEL_REWARD = _field(1, "opt_level_reward")  # the float's 64 bits
# rules.State, field by field.
RACES = _field(P, "races")
CLASSES = _field(P, "classes")
DECK_IDS = _field(P, "deck_names")  # indices into DECK_NAMES
STATIC_BONUS = _field(P, "static_bonus")
DECK_LEN = _field(P, "deck_len")
DISCARD_LEN = _field(P, "discard_len")
# PILES + seat * PILE_ROOM + i: deck[i] (bottom first: the top card is the last, as rules' list.pop());
# PILES + (seat + 1) * PILE_ROOM - 1 - i: discard[i]
PILES = _field((P, PILE_ROOM), "piles")
HAND_LEN = _field(P, "hand_len")
HAND = _field((P, HAND_ROOM), "hand")  # HAND + seat * HAND_ROOM + i
EQUIPPED_LEN = _field(P, "equipped_len")
EQUIPPED = _field((P, EQUIP_ROOM), "equipped")  # EQUIPPED + seat * EQUIP_ROOM + i
SUMMON = _field(P, "summon")
LEVEL = _field(P, "level")
DEAD = _field(P, "dead")
PARALYZED = _field(P, "paralyzed")
SLOW_TURN = _field(P, "slow_turn")
CONFUSED_TURN = _field(P, "confused_turn")
PHASE = _field(1, "phase")
TO_ACT = _field(1, "to_act")
ACTIVE = _field(1, "active")
TURN = _field(1, "turn")
STEPS = _field(1, "steps")
ROLL_ROUNDS = _field(1, "roll_rounds")
ROLL_LENS = _field(MAX_ROLL_ROUNDS, "order_roll_lengths")
ROLLS = _field((MAX_ROLL_ROUNDS, P), "order_rolls")  # ROLLS + round * P + i: the i-th contender's roll
FIRST_SEAT = _field(1, "first_seat")
DOOR_CARD = _field(1, "door_card")
GOLD = _field(1, "gold")
HALFLING_SOLD = _field(1, "halfling_sold")
HELPED_BY = _field(1, "helped_by")
MONSTER = _field(1, "monster")
SOURCE = _field(1, "source")
FIGHTER = _field(1, "fighter")
HELPER = _field(1, "helper")
SPLIT = _field(1, "split")
OFFERS_TO = _field(P, "offers_to")
BEST_OFFER = _field(P, "best_offer")
ASKS_FROM = _field(P, "asks_from")
LAST_ASK = _field(P, "last_ask")
ASK_SEAT = _field(1, "ask_seat")
ASK_SPLIT = _field(1, "ask_split")
BID = _field(1, "bid")
MONSTER_BONUS = _field(1, "monster_bonus")
PARTY_BONUS = _field(1, "party_bonus")
RUN_BONUS = _field(1, "run_bonus")
TABLE_LEN = _field(1, "table_len")
TABLE = _field((TABLE_ROOM, 2), "table")  # TABLE + 2 * i: the owner, then the card
PASSES = _field(1, "passes")
DYING = _field(1, "dying")
DEATH_KIND = _field(1, "death_kind")
LOOTERS_LEN = _field(1, "looters_len")
LOOTERS = _field(P, "looters")
LOOTER = _field(1, "looter")
RESUME_PHASE = _field(1, "resume_phase")
RESUME_SEAT = _field(1, "resume_seat")
SHED_PHASE = _field(1, "shed_phase")
SHED_SEAT = _field(1, "shed_seat")
WINNER = _field(1, "winner")
END_REASON = _field(1, "end_reason")  # an index into END_REASONS
EVENTS_LOGGED = _field(1, "events_logged")
STEP_FIRST_EVENT = _field(1, "step_first_event")
DRAWS = _field(1, "draws")  # chance draws made so far (the length the Python Chance's log would have)
STATE_SIZE = LAYOUT.size  # what a State holds ends here; the rest is working space, not compared
SEEN = _field(NUM_CARDS, "scratch_seen")  # one flag per card while a function works (no allocations)
DISTINCT = _field(NUM_CARDS, "scratch_distinct")  # the distinct cards of a zone, ascending
SORTED = _field(EQUIP_ROOM, "scratch_sorted")  # items in play sorted weakest first
ROW_SIZE = LAYOUT.size

END_REASONS = ("", rules.WIN, rules.TURN_LIMIT, rules.STEP_LIMIT)
NO_END, WIN, TURN_LIMIT, STEP_LIMIT = range(4)

# --- chance: the Python engine's draws (envs/compiled.py's generator) ------------------------------------------


@inlined
def below(s, mt, n):
    """``Chance.below(n)``: ``int(random() * n)``, counted."""
    s[DRAWS] += 1
    return np.int64(random_float(mt) * n)


@inlined
def roll(s, mt, sides):
    return below(s, mt, sides) + 1


@compiled
def shuffle(s, mt, start, length):
    """``Chance.shuffle`` of ``s[start:start + length]``: Fisher-Yates, one draw per position from the top down."""
    for i in range(length - 1, 0, -1):
        j = below(s, mt, i + 1)
        s[start + i], s[start + j] = s[start + j], s[start + i]


@inlined
def log(s):
    """``rules._log``: the kernel keeps no events, only their count."""
    s[EVENTS_LOGGED] += 1


# --- zones: lists at fixed offsets (every slot past a list's length stays 0: equal games have equal rows) ------


@inlined
def _around(seat, n):
    """``seat % n`` for ``0 <= seat < 2 * n``: a comparison instead of a division."""
    return seat - n if seat >= n else seat


@inlined
def hand_push(s, seat, cid):
    s[HAND + seat * HAND_ROOM + s[HAND_LEN + seat]] = cid
    s[HAND_LEN + seat] += 1


@inlined
def hand_take(s, seat, index):
    """``hand.pop(index)``."""
    base, length = HAND + seat * HAND_ROOM, s[HAND_LEN + seat]
    cid = s[base + index]
    for i in range(index, length - 1):
        s[base + i] = s[base + i + 1]
    s[base + length - 1] = 0
    s[HAND_LEN + seat] = length - 1
    return cid


@inlined
def hand_remove(s, seat, cid):
    """``hand.remove(cid)``: the first copy."""
    base = HAND + seat * HAND_ROOM
    index = 0
    while s[base + index] != cid:
        index += 1
    hand_take(s, seat, index)


@inlined
def equipped_push(s, seat, cid):
    s[EQUIPPED + seat * EQUIP_ROOM + s[EQUIPPED_LEN + seat]] = cid
    s[EQUIPPED_LEN + seat] += 1


@inlined
def equipped_remove(s, seat, cid):
    """``equipped.remove(cid)``: the first copy."""
    base, length = EQUIPPED + seat * EQUIP_ROOM, s[EQUIPPED_LEN + seat]
    index = 0
    while s[base + index] != cid:
        index += 1
    for i in range(index, length - 1):
        s[base + i] = s[base + i + 1]
    s[base + length - 1] = 0
    s[EQUIPPED_LEN + seat] = length - 1


@inlined
def discard_push(s, seat, cid):
    s[PILES + (seat + 1) * PILE_ROOM - 1 - s[DISCARD_LEN + seat]] = cid
    s[DISCARD_LEN + seat] += 1


@compiled
def draw(s, mt, seat):
    """``rules._draw``: the top card of ``seat``'s deck (its discard pile shuffled back in when empty), -1 if
    both are empty."""
    base = PILES + seat * PILE_ROOM
    length = s[DECK_LEN + seat]
    if length == 0:
        count = s[DISCARD_LEN + seat]
        if count == 0:
            return -1
        # deck.extend(discard): the pile, laid downwards from the end, turned over into the deck's place
        low, high = base + PILE_ROOM - count, base + PILE_ROOM - 1
        while low < high:
            s[low], s[high] = s[high], s[low]
            low += 1
            high -= 1
        for i in range(count):  # upwards: each card moves down, never onto one not yet moved
            s[base + i] = s[base + PILE_ROOM - count + i]
        for i in range(max(count, PILE_ROOM - count), PILE_ROOM):
            s[base + i] = 0
        s[DECK_LEN + seat] = count
        s[DISCARD_LEN + seat] = 0
        shuffle(s, mt, base, count)
        log(s)
        length = count
    length -= 1
    s[DECK_LEN + seat] = length
    cid = s[base + length]
    s[base + length] = 0
    return cid


@compiled
def draw_to_hand(s, mt, seat, from_deck_of):
    cid = draw(s, mt, seat if from_deck_of < 0 else from_deck_of)
    if cid >= 0:
        hand_push(s, seat, cid)
    return cid


@compiled
def discard_equipped(s, seat, cid):
    """``rules._discard_equipped`` of one item."""
    equipped_remove(s, seat, cid)
    discard_push(s, seat, cid)
    log(s)


@compiled
def distinct_cards(s, base, length):
    """The distinct cards of ``s[base:base + length]``, ascending, into DISTINCT; their number. The caller zeroes
    DISTINCT when done with it (working space stays 0 between steps: equal games have equal rows)."""
    count = 0
    for i in range(length):
        cid = s[base + i]
        if not s[SEEN + cid]:
            s[SEEN + cid] = 1
            at = count
            while at > 0 and s[DISTINCT + at - 1] > cid:
                s[DISTINCT + at] = s[DISTINCT + at - 1]
                at -= 1
            s[DISTINCT + at] = cid
            count += 1
    for i in range(count):
        s[SEEN + s[DISTINCT + i]] = 0
    return count


# --- derived numbers ---------------------------------------------------------------------------------------


@compiled
def combat_level(s, seat, monster, alone):
    level = s[LEVEL + seat]
    value = level + s[STATIC_BONUS + seat]
    base = EQUIPPED + seat * EQUIP_ROOM
    for i in range(s[EQUIPPED_LEN + seat]):
        value += CARD_BONUS[s[base + i]]
    race = s[RACES + seat]
    if race == HUMAN or race == NAGA or race == GIANT:
        value += 1
    elif race == RAKSHASA:
        value += 1 + (level - 1) // 5
    if s[CONFUSED_TURN + seat] >= 0:
        value -= 3
    if monster >= 0:
        cls = s[CLASSES + seat]
        if cls == CLERIC and IS_UNDEAD[monster]:
            value += 3
        if cls == WARRIOR and alone:
            value += 2
    return value


@compiled
def party_strength(s):
    monster, helper = s[MONSTER], s[HELPER]
    strength = combat_level(s, s[FIGHTER], monster, helper < 0) + s[PARTY_BONUS]
    if helper >= 0:
        strength += combat_level(s, helper, monster, False)
    return strength


@inlined
def monster_strength(s):
    return CARD_LEVEL[s[MONSTER]] + s[MONSTER_BONUS]


@inlined
def party_beats(s, party, monster):
    if party != monster:
        return party > monster
    if s[CLASSES + s[FIGHTER]] == PALADIN:
        return True
    return s[OPT_PALADIN_HELPER_WINS_TIES] != 0 and s[HELPER] >= 0 and s[CLASSES + s[HELPER]] == PALADIN


@compiled
def party_wins(s):
    return party_beats(s, party_strength(s), monster_strength(s))


@inlined
def magic_bonus(s, seat):
    race = s[RACES + seat]
    return (1 if race == HUMAN or race == NAGA or race == PIXIE else 0) + (1 if s[CLASSES + seat] == WIZARD else 0)


@compiled
def run_bonus(s, seat):
    bonus = 0
    base = EQUIPPED + seat * EQUIP_ROOM
    for i in range(s[EQUIPPED_LEN + seat]):
        bonus += CARD_RUN[s[base + i]]
    race = s[RACES + seat]
    if race == ELF:
        bonus += 1
    elif race == HALFLING or race == NAGA:
        bonus -= 1
    if s[CLASSES + seat] == WIZARD:
        bonus += 1
    if s[SLOW_TURN + seat] >= 0:
        bonus -= 2
    return bonus


@inlined
def hand_limit(s, seat):
    return s[OPT_HAND_LIMIT] + (1 if s[RACES + seat] == DWARF else 0)


@inlined
def hands_of(cid, race):
    return 1 if race == GIANT else CARD_HANDS[cid]


@inlined
def next_living(s, seat):
    n = s[N]
    for step in range(1, n + 1):
        other = (seat + step) % n
        if not s[DEAD + other]:
            return other
    return seat


@inlined
def living_count(s):
    count = 0
    for seat in range(s[N]):
        count += 1 - s[DEAD + seat]
    return count


# --- the deal ----------------------------------------------------------------------------------------------


@compiled
def new_game(s, mt, deck_cards, deck_facts):
    """``rules.new_game`` on a row whose options are set and whose generator is seeded; ``deck_cards`` and
    ``deck_facts`` are every deck of DECK_NAMES as arrays (:func:`_deck_tables`)."""
    n = s[N]
    for seat in range(n):
        s[RACES + seat] = s[OPT_RACES + seat] if s[OPT_RACES + seat] >= 0 else below(s, mt, len(rules.RACES))
    for seat in range(n):
        s[CLASSES + seat] = s[OPT_CLASSES + seat] if s[OPT_CLASSES + seat] >= 0 else below(s, mt, len(rules.CLASSES))
    for seat in range(n):
        s[DECK_IDS + seat] = s[OPT_DECKS + seat] if s[OPT_DECKS + seat] >= 0 else below(s, mt, BUNDLED)
    for seat in range(n):
        s[LEVEL + seat] = 1
        s[SUMMON + seat] = -1
        s[SLOW_TURN + seat] = -1
        s[CONFUSED_TURN + seat] = -1
        s[BEST_OFFER + seat] = -1
        s[LAST_ASK + seat] = -1
        if s[OPT_SPECIALTY_BONUSES]:  # rules.specialty_bonus
            deck = s[DECK_IDS + seat]
            themes = deck_facts[deck, DECK_THEMES]
            bonus = 2 if themes == 1 else 1 if themes == 2 else 0
            alignment = deck_facts[deck, DECK_ALIGNMENT]
            if alignment != NO_ALIGNMENT:
                for other in range(n):
                    if other != seat and deck_facts[s[DECK_IDS + other], DECK_ALIGNMENT] == 3 - alignment:
                        bonus += 2
            s[STATIC_BONUS + seat] = bonus
    for offset in (FIRST_SEAT, DOOR_CARD, HELPED_BY, MONSTER, FIGHTER, HELPER, ASK_SEAT, DYING, LOOTER, RESUME_PHASE,
                   RESUME_SEAT, SHED_PHASE, SHED_SEAT, WINNER):
        s[offset] = -1  # rules.State's defaults; every other field starts at 0
    for seat in range(n):
        deck = s[DECK_IDS + seat]
        base = PILES + seat * PILE_ROOM
        summon = deck_facts[deck, DECK_SUMMON] if s[OPT_SUMMONS] else -1
        length = 0
        for cid in deck_cards[deck]:
            if cid == summon:  # cards.remove(summon): the first copy set aside
                s[SUMMON + seat] = summon
                summon = -1
                continue
            s[base + length] = cid
            length += 1
        s[DECK_LEN + seat] = length
        shuffle(s, mt, base, length)
    for seat in range(n):
        for _ in range(s[OPT_START_HAND]):
            draw_to_hand(s, mt, seat, -1)
    s[PHASE] = SETUP
    s[TO_ACT] = 0
    check_hands(s)


# --- the game's flow -------------------------------------------------------------------------------------


@compiled
def legal_actions(s, out):
    """The legal actions, ascending, into ``out``; their number (0 once the game is over)."""
    phase = s[PHASE]
    seat = s[TO_ACT]
    if phase == OVER:
        return 0
    hand, held = HAND + seat * HAND_ROOM, s[HAND_LEN + seat]
    n = s[N]
    count = 0
    distinct = used = 0  # the distinct cards listed in DISTINCT (working space: zeroed before returning)
    if phase == WINDOW:
        out[0] = A_PASS
        count = 1
        fighter = s[FIGHTER]
        in_party = seat == fighter or seat == s[HELPER]
        if seat == fighter and not party_wins(s):
            out[count] = A_RUN
            count += 1
        if s[SUMMON + seat] >= 0:
            out[count] = A_SUMMON_AID if in_party else A_SUMMON_JOIN
            count += 1
        distinct = used = distinct_cards(s, hand, held)
        for i in range(distinct):
            cid = s[DISTINCT + i]
            if WINDOW_USE[cid] == W_ONE_SHOT:
                out[count] = USE_PARTY_ACTION[cid]
                count += 1
        if not in_party:
            for i in range(distinct):
                cid = s[DISTINCT + i]
                if WINDOW_USE[cid] == W_ONE_SHOT or WINDOW_USE[cid] == W_ENHANCER:
                    out[count] = USE_MONSTER_ACTION[cid]
                    count += 1
        count = curse_actions(s, seat, distinct, out, count)
        if seat == fighter:
            if s[HELPER] < 0:
                helped = s[HELPED_BY]
                anyone = not s[OPT_ONE_HELPER_PER_TURN] or helped == -1
                top = CARD_TREASURES[s[MONSTER]] + 1
                for offset in range(1, n):
                    other = _around(seat + offset, n)
                    if (not s[DEAD + other] and (anyone or helped == other)
                            and s[OFFERS_TO + other] < s[OPT_HELP_ROUNDS]):
                        base = OFFER_ACTION0 + (offset - 1) * TREASURE_SPAN
                        for action in range(base + s[BEST_OFFER + other] + 1, base + top):
                            out[count] = action
                            count += 1
        elif s[HELPER] < 0 and (not s[OPT_ONE_HELPER_PER_TURN] or s[HELPED_BY] == -1 or s[HELPED_BY] == seat):
            count = ask_actions(s, seat, 0, out, count)
    elif phase == SETUP or phase == REENTER or phase == FREE:
        out[0] = A_PASS
        count = 1
        free = phase == FREE
        if free and s[SUMMON + seat] >= 0:
            out[count] = A_SUMMON_FIGHT
            count += 1
        sells = free and s[LEVEL + seat] < s[OPT_WIN_LEVEL] - 1
        distinct = used = distinct_cards(s, hand, held)
        # what is in play (legal_actions' ``worn``): the kinds worn, a big item, the hands used
        race = s[RACES + seat]
        worn = 0  # a bit per kind
        big_taken = False
        hands_free = 2
        equipped, wearing = EQUIPPED + seat * EQUIP_ROOM, s[EQUIPPED_LEN + seat]
        for i in range(wearing):
            other = s[equipped + i]
            worn |= 1 << CARD_KIND[other]
            if CARD_BIG[other]:
                big_taken = race != DWARF
            if CARD_KIND[other] == WEAPON:
                hands_free -= hands_of(other, race)
        for i in range(distinct):
            cid = s[DISTINCT + i]
            if IS_EQUIPMENT[cid] and not (CARD_BIG[cid] and big_taken):
                kind = CARD_KIND[cid]
                if kind == WEAPON:
                    if hands_of(cid, race) <= hands_free:
                        out[count] = EQUIP_ACTION[cid]
                        count += 1
                elif not (worn >> kind & 1) or kind > BOOTS:
                    out[count] = EQUIP_ACTION[cid]
                    count += 1
        count = curse_actions(s, seat, distinct, out, count)
        if free:
            for i in range(distinct):
                cid = s[DISTINCT + i]
                if IS_MONSTER[cid]:
                    out[count] = FIGHT_ACTION[cid]
                    count += 1
            if sells:
                for i in range(distinct):
                    cid = s[DISTINCT + i]
                    if CARD_GOLD[cid] > 0:
                        out[count] = SELL_ACTION[cid]
                        count += 1
                distinct = distinct_cards(s, equipped, wearing)
                used = max(used, distinct)
                for i in range(distinct):
                    out[count] = SELL_EQUIPPED_ACTION[s[DISTINCT + i]]
                    count += 1
    elif phase == ASK:
        out[0] = A_ACCEPT
        out[1] = A_DECLINE
        count = ask_actions(s, seat, s[ASK_SPLIT] + 1, out, 2)
    elif phase == COUNTER:
        out[0] = A_ACCEPT
        out[1] = A_DECLINE
        count = 2
        other = s[ASK_SEAT]
        if s[OFFERS_TO + other] < s[OPT_HELP_ROUNDS]:
            base = OFFER_ACTION0 + ((other - seat) % n - 1) * TREASURE_SPAN
            for action in range(base + s[BEST_OFFER + other] + 1, base + s[BID]):
                out[count] = action
                count += 1
    elif phase == LOOT_ORDER:
        for i in range(s[LOOTERS_LEN]):
            out[count] = LOOT_ORDER_ACTION0 + (s[LOOTERS + i] - seat) % n
            count += 1
    elif phase == LOOT_PICK:
        out[0] = A_DECLINE
        count = 1
        dying = s[DYING]
        wearing = s[EQUIPPED_LEN + dying]
        if wearing:
            distinct = used = distinct_cards(s, EQUIPPED + dying * EQUIP_ROOM, wearing)
            for i in range(distinct):
                out[count] = LOOT_ACTION[s[DISTINCT + i]]
                count += 1
        else:
            out[count] = A_LOOT_HAND
            count += 1
    elif phase == DISCARD:
        distinct = used = distinct_cards(s, hand, held)
        for i in range(distinct):
            out[count] = DISCARD_ACTION[s[DISTINCT + i]]
            count += 1
    # ascending, as rules' legal.sort(): each kind of action above is written in order already (then this
    # is one comparison an action); a catalog whose action groups were not in card order would still sort
    for i in range(1, count):
        action = out[i]
        at = i
        while at > 0 and out[at - 1] > action:
            out[at] = out[at - 1]
            at -= 1
        out[at] = action
    for i in range(used):
        s[DISTINCT + i] = 0
    return count


@compiled
def ask_actions(s, seat, lowest, out, count):
    """``rules._ask_actions``: a would-be helper's asks, ``lowest`` up to the treasures, never above its last."""
    if s[ASKS_FROM + seat] < s[OPT_HELP_ROUNDS]:
        highest = CARD_TREASURES[s[MONSTER]]
        if s[LAST_ASK + seat] >= 0:
            highest = min(highest, s[LAST_ASK + seat])
        for action in range(ASK_ACTION0 + lowest, ASK_ACTION0 + highest + 1):
            out[count] = action
            count += 1
    return count


@compiled
def curse_actions(s, seat, distinct, out, count):
    """``rules._curse_actions`` over the DISTINCT cards of the hand."""
    n = s[N]
    for i in range(distinct):
        cid = s[DISTINCT + i]
        if IS_CURSE[cid]:
            base = CURSE_ACTION[cid]
            for offset in range(1, n):
                if not s[DEAD + _around(seat + offset, n)]:
                    out[count] = base + offset
                    count += 1
    return count


@compiled
def apply_legal(s, mt, action):
    """``rules.apply_legal``: ``action`` must be legal (``legal_actions``)."""
    s[STEPS] += 1
    s[STEP_FIRST_EVENT] = s[EVENTS_LOGGED]
    seat = s[TO_ACT]
    phase = s[PHASE]
    kind = ACTION_KIND[action]
    cid = ACTION_CARD[action]
    n = s[N]
    if phase == WINDOW:
        apply_window(s, mt, seat, action, kind, cid)
    elif phase == SETUP or phase == REENTER or phase == FREE:
        apply_own_play(s, mt, seat, phase, action, kind, cid)
    elif phase == ASK or phase == COUNTER:
        negotiate(s, seat, action, kind)
    elif phase == LOOT_ORDER:
        looter = (seat + action - LOOT_ORDER_ACTION0) % n
        at = 0
        while s[LOOTERS + at] != looter:
            at += 1
        for i in range(at, s[LOOTERS_LEN] - 1):
            s[LOOTERS + i] = s[LOOTERS + i + 1]
        s[LOOTERS_LEN] -= 1
        s[LOOTERS + s[LOOTERS_LEN]] = 0
        loot_turn(s, looter)
    elif phase == LOOT_PICK:
        if action == A_DECLINE:
            log(s)
        elif action == A_LOOT_HAND:
            loot_hand(s, mt, seat)
        else:
            take_loot(s, seat, cid)
        if loot_continue(s):
            end_turn(s, mt, False)
    elif phase == DISCARD:
        hand_remove(s, seat, cid)
        discard_push(s, seat, cid)
        log(s)
        if s[HAND_LEN + seat] <= hand_limit(s, seat):
            if s[SHED_PHASE] == RESUME_END_TURN:
                next_turn(s, mt)
            else:
                s[PHASE] = s[SHED_PHASE]
                s[TO_ACT] = s[SHED_SEAT]
    most = 0
    for other in range(n):
        most = max(most, s[HAND_LEN + other])
    if most > s[OPT_HAND_LIMIT]:
        check_hands(s)
    if s[PHASE] != OVER and s[STEPS] >= s[OPT_MAX_STEPS]:
        end(s, -1, STEP_LIMIT)


@compiled
def check_hands(s):
    """``rules._check_hands``: the first holder over the limit (in play order from the active seat) discards
    down before anyone decides anything else."""
    if not s[OPT_HAND_LIMIT_ALWAYS] or s[PHASE] == OVER or s[PHASE] == DISCARD:
        return
    n = s[N]
    most = 0
    for seat in range(n):
        most = max(most, s[HAND_LEN + seat])
    if most <= s[OPT_HAND_LIMIT]:
        return
    for step in range(n):
        seat = (s[ACTIVE] + step) % n
        if seat != s[DYING] and s[HAND_LEN + seat] > hand_limit(s, seat):
            s[SHED_PHASE] = s[PHASE]
            s[SHED_SEAT] = s[TO_ACT]
            s[PHASE] = DISCARD
            s[TO_ACT] = seat
            return


@compiled
def apply_own_play(s, mt, seat, phase, action, kind, cid):
    """SETUP, REENTER and FREE: equip, curse, sell, fight from hand, or pass."""
    if action == A_PASS:
        if phase == SETUP:
            later = -1
            for other in range(seat + 1, s[N]):
                if not s[DEAD + other]:
                    later = other
                    break
            if later >= 0:
                s[TO_ACT] = later
            else:
                roll_turn_order(s, mt)
        elif phase == REENTER:
            if kick_door(s, mt):
                end_turn(s, mt, False)
        else:
            end_turn(s, mt, True)
        return
    if kind == K_EQUIP:
        hand_remove(s, seat, cid)
        equipped_push(s, seat, cid)
        log(s)
    elif kind == K_CURSE:
        play_curse(s, seat, action, cid)
        if s[DYING] >= 0 and start_looting(s, phase, seat):
            end_turn(s, mt, False)
    elif kind == K_FIGHT:
        hand_remove(s, seat, cid)
        start_combat(s, cid, FROM_HAND)
    elif action == A_SUMMON_FIGHT:
        cid = s[SUMMON + seat]
        s[SUMMON + seat] = -1
        start_combat(s, cid, FROM_SUMMON)
    elif kind == K_SELL:
        hand_remove(s, seat, cid)
        sell(s, seat, cid)
    elif kind == K_SELL_EQUIPPED:
        equipped_remove(s, seat, cid)
        sell(s, seat, cid)


@compiled
def sell(s, seat, cid):
    value = CARD_GOLD[cid]
    if s[RACES + seat] == HALFLING and not s[HALFLING_SOLD]:
        s[HALFLING_SOLD] = 1
        value *= 2
    discard_push(s, seat, cid)
    s[GOLD] += value
    while s[GOLD] >= s[OPT_GOLD_PER_LEVEL] and s[LEVEL + seat] < s[OPT_WIN_LEVEL] - 1:
        s[GOLD] -= s[OPT_GOLD_PER_LEVEL]
        s[LEVEL + seat] += 1
    log(s)


@compiled
def roll_turn_order(s, mt):
    """Everyone rolls a d6; the highest goes first, ties for the highest roll again."""
    n = s[N]
    contenders = (1 << n) - 1  # a bit per seat still rolling
    rounds, first = 0, -1
    faces = SEEN  # one face per seat, in the scratch space (all 0 outside this function)
    while True:
        best, rolled = 0, 0
        for seat in range(n):
            if contenders >> seat & 1:
                face = roll(s, mt, 6)
                s[faces + seat] = face
                if rounds < MAX_ROLL_ROUNDS:
                    s[ROLLS + rounds * P + rolled] = face
                rolled += 1
                best = max(best, face)
        if rounds < MAX_ROLL_ROUNDS:
            s[ROLL_LENS + rounds] = rolled
        rounds += 1
        left = 0
        for seat in range(n):
            if contenders >> seat & 1:
                if s[faces + seat] == best:
                    left += 1
                    first = seat
                else:
                    contenders &= ~(1 << seat)
            s[faces + seat] = 0
        if left == 1:
            break
    s[ROLL_ROUNDS] = rounds
    s[FIRST_SEAT] = first
    log(s)
    if start_turn(s, mt, first):
        end_turn(s, mt, False)


@compiled
def start_turn(s, mt, seat):
    """``rules._start_turn``; True when the turn must end at once (a curse kicked open: the caller runs
    :func:`end_turn`, which the rules call from within)."""
    n = s[N]
    while True:
        s[TURN] += 1
        if s[TURN] > s[OPT_MAX_TURNS]:
            end(s, -1, TURN_LIMIT)
            return False
        s[ACTIVE] = seat
        s[TO_ACT] = seat
        s[GOLD] = 0
        s[HALFLING_SOLD] = 0
        s[HELPED_BY] = -1
        s[DOOR_CARD] = -1
        if s[DEAD + seat]:
            s[DEAD + seat] = 0
            for _ in range(s[OPT_START_HAND]):
                draw_to_hand(s, mt, seat, -1)
            log(s)
            s[PHASE] = REENTER
            return False
        if s[PARALYZED + seat]:
            s[PARALYZED + seat] = 0
            log(s)
            expire_statuses(s, seat)
            seat = _around(seat + 1, n)
            continue
        return kick_door(s, mt)


@compiled
def kick_door(s, mt):
    """``rules._kick_door``; True when the turn must end (a curse that killed nobody, or a death whose looting
    is over at once)."""
    seat = s[ACTIVE]
    cid = draw(s, mt, seat)
    s[DOOR_CARD] = cid
    log(s)
    s[TO_ACT] = seat
    if cid < 0:
        s[PHASE] = FREE
    elif IS_MONSTER[cid]:
        start_combat(s, cid, FROM_DOOR)
    elif IS_CURSE[cid]:
        discard_push(s, seat, cid)
        curse(s, seat, cid)
        if s[DYING] >= 0:
            return start_looting(s, RESUME_END_TURN, seat)
        return True
    else:
        hand_push(s, seat, cid)
        s[PHASE] = FREE
    return False


@compiled
def end_turn(s, mt, with_draw):
    """``rules._end_turn``, and the turns that end at once after it (a curse behind the next door) as a loop."""
    n = s[N]
    while True:
        seat = s[ACTIVE]
        if not s[DEAD + seat]:
            if with_draw:
                draw_to_hand(s, mt, seat, -1)
            if s[HAND_LEN + seat] > hand_limit(s, seat):
                s[PHASE] = DISCARD
                s[TO_ACT] = seat
                s[SHED_PHASE] = RESUME_END_TURN
                s[SHED_SEAT] = seat
                return
        expire_statuses(s, seat)  # rules._next_turn
        if not start_turn(s, mt, _around(seat + 1, n)):
            return
        with_draw = False


@compiled
def next_turn(s, mt):
    seat = s[ACTIVE]
    expire_statuses(s, seat)
    if start_turn(s, mt, _around(seat + 1, s[N])):
        end_turn(s, mt, False)


@inlined
def expire_statuses(s, seat):
    """Slow and confusion last until the end of the victim's next whole turn."""
    if 0 <= s[SLOW_TURN + seat] < s[TURN]:
        s[SLOW_TURN + seat] = -1
    if 0 <= s[CONFUSED_TURN + seat] < s[TURN]:
        s[CONFUSED_TURN + seat] = -1


# --- combat ------------------------------------------------------------------------------------------------


@compiled
def reset_negotiation(s):
    for seat in range(s[N]):
        s[OFFERS_TO + seat] = 0
        s[BEST_OFFER + seat] = -1
        s[ASKS_FROM + seat] = 0
        s[LAST_ASK + seat] = -1


@compiled
def start_combat(s, cid, source):
    fighter = s[ACTIVE]
    s[MONSTER] = cid
    s[SOURCE] = source
    s[FIGHTER] = fighter
    s[HELPER] = -1
    s[SPLIT] = 0
    s[ASK_SEAT] = -1
    reset_negotiation(s)
    s[MONSTER_BONUS] = 5 if source == FROM_SUMMON else 0  # fighting your own summon angers it
    s[PARTY_BONUS] = 0
    s[RUN_BONUS] = 0
    clear_table(s)
    s[PASSES] = 0
    s[PHASE] = WINDOW
    s[TO_ACT] = fighter
    log(s)


@inlined
def table_push(s, owner, cid):
    at = TABLE + 2 * s[TABLE_LEN]
    s[at] = owner
    s[at + 1] = cid
    s[TABLE_LEN] += 1


@inlined
def clear_table(s):
    for i in range(2 * s[TABLE_LEN]):
        s[TABLE + i] = 0
    s[TABLE_LEN] = 0


@compiled
def apply_window(s, mt, seat, action, kind, cid):
    if action == A_PASS:
        s[PASSES] += 1
        advance_window(s, mt, seat)
        return
    if action == A_RUN:
        run_away(s, mt)
        return
    s[PASSES] = 0
    if kind == K_USE_PARTY:
        hand_remove(s, seat, cid)
        table_push(s, seat, cid)
        bonus = CARD_BONUS[cid] + (magic_bonus(s, seat) if CARD_BONUS[cid] > 0 else 0)
        s[PARTY_BONUS] += bonus
        s[RUN_BONUS] += CARD_RUN[cid]
        log(s)
    elif kind == K_USE_MONSTER:
        hand_remove(s, seat, cid)
        table_push(s, seat, cid)
        bonus = CARD_BONUS[cid] + (magic_bonus(s, seat) if IS_ONE_SHOT[cid] and CARD_BONUS[cid] > 0 else 0)
        if s[CLASSES + seat] == THIEF:
            bonus += 2  # backstab
        s[MONSTER_BONUS] += bonus
        log(s)
    elif action == A_SUMMON_AID or action == A_SUMMON_JOIN:
        summon = s[SUMMON + seat]
        s[SUMMON + seat] = -1
        table_push(s, seat, summon)
        if action == A_SUMMON_AID:
            s[PARTY_BONUS] += CARD_LEVEL[summon]
        else:
            s[MONSTER_BONUS] += CARD_LEVEL[summon]
        log(s)
    elif kind == K_OFFER or kind == K_ASK:
        propose(s, seat, action, kind)
        return
    elif kind == K_CURSE:
        target = play_curse(s, seat, action, cid)
        if s[DYING] >= 0:
            if target == s[FIGHTER]:  # the fight is abandoned; the dead fighter's turn ends
                clear_combat(s)
                if start_looting(s, RESUME_END_TURN, seat):
                    end_turn(s, mt, False)
            elif start_looting(s, WINDOW, seat):
                end_turn(s, mt, False)
            return
    advance_window(s, mt, seat)


@compiled
def advance_window(s, mt, seat):
    if s[PASSES] >= living_count(s):  # every living player passed
        close_window(s, mt)
    else:
        s[TO_ACT] = next_living(s, seat)


@inlined
def propose(s, seat, action, kind):
    if kind == K_OFFER:
        make_offer(s, action)
    else:
        make_ask(s, seat, ACTION_ARG[action])


@compiled
def make_offer(s, action):
    arg = ACTION_ARG[action]
    offset, split = arg // 100, arg % 100
    other = (s[FIGHTER] + offset) % s[N]
    s[OFFERS_TO + other] += 1
    s[BEST_OFFER + other] = split
    s[ASK_SEAT] = other
    s[ASK_SPLIT] = split
    s[PHASE] = ASK
    s[TO_ACT] = other
    log(s)


@compiled
def make_ask(s, seat, split):
    s[ASKS_FROM + seat] += 1
    s[LAST_ASK + seat] = split
    s[ASK_SEAT] = seat
    s[BID] = split
    s[PHASE] = COUNTER
    s[TO_ACT] = s[FIGHTER]
    log(s)


@compiled
def negotiate(s, seat, action, kind):
    """ASK (the would-be helper answers an offer) and COUNTER (the fighter answers an ask)."""
    if kind == K_OFFER or kind == K_ASK:
        propose(s, seat, action, kind)
        return
    other = s[ASK_SEAT]
    split = s[ASK_SPLIT] if s[PHASE] == ASK else s[BID]
    if action == A_ACCEPT:
        s[HELPER] = other
        s[SPLIT] = split
        s[HELPED_BY] = other
    log(s)
    s[ASK_SEAT] = -1
    s[PASSES] = 0  # a negotiation is a play: the window starts its round of passes again
    s[PHASE] = WINDOW
    s[TO_ACT] = next_living(s, s[FIGHTER])


@compiled
def close_window(s, mt):
    if party_wins(s):
        win_combat(s, mt)
    else:
        run_away(s, mt)


@compiled
def win_combat(s, mt):
    fighter, helper, monster = s[FIGHTER], s[HELPER], s[MONSTER]
    win_level = s[OPT_WIN_LEVEL]
    s[LEVEL + fighter] = min(win_level, s[LEVEL + fighter] + CARD_LEVELS[monster])
    log(s)
    if helper >= 0 and s[RACES + helper] == ELF:  # an elf gains a level for helping
        s[LEVEL + helper] = min(win_level - 1, s[LEVEL + helper] + 1)
    for number in range(CARD_TREASURES[monster]):
        receiver = helper if helper >= 0 and number < s[SPLIT] else fighter
        draw_to_hand(s, mt, receiver, fighter)
    log(s)
    clear_combat(s)
    if s[LEVEL + fighter] >= win_level:
        end(s, fighter, WIN)
        return
    after_combat(s, mt)


@compiled
def run_away(s, mt):
    fighter = s[FIGHTER]
    face = roll(s, mt, 6)
    total = face + run_bonus(s, fighter) + s[RUN_BONUS]
    monster = s[MONSTER]
    log(s)
    if total < s[OPT_RUN_TARGET]:
        bad_stuff(s, fighter, monster)
    clear_combat(s)
    if s[DYING] >= 0:
        if start_looting(s, RESUME_END_TURN, fighter):
            end_turn(s, mt, False)
    else:
        after_combat(s, mt)


@compiled
def clear_combat(s):
    """The monster, one-shots and summons on the table go to their owners' discard piles."""
    if s[MONSTER] >= 0:
        discard_push(s, s[FIGHTER], s[MONSTER])
    for i in range(s[TABLE_LEN]):
        discard_push(s, s[TABLE + 2 * i], s[TABLE + 2 * i + 1])
    clear_table(s)
    s[MONSTER] = -1
    s[HELPER] = -1
    s[ASK_SEAT] = -1
    s[MONSTER_BONUS] = 0
    s[PARTY_BONUS] = 0
    s[RUN_BONUS] = 0
    s[PASSES] = 0
    s[SPLIT] = 0
    reset_negotiation(s)


@compiled
def after_combat(s, mt):
    if s[SOURCE] == FROM_DOOR:
        end_turn(s, mt, s[OPT_DRAW_AFTER_MONSTER_DOOR] != 0)
    else:
        s[PHASE] = FREE
        s[TO_ACT] = s[ACTIVE]


@compiled
def bad_stuff(s, seat, monster):
    bad = BAD_STUFF[monster]
    log(s)
    if bad == BAD_LOSE_LEVELS:
        lose_levels(s, seat, CARD_AMOUNT[monster])
    elif bad == BAD_DEATH:
        kill(s, seat, DEATH_EATEN)
    elif bad == BAD_LOSE_BEST:
        base, length = EQUIPPED + seat * EQUIP_ROOM, s[EQUIPPED_LEN + seat]
        if length:
            best = s[base]  # max() by (bonus, gold): the first of equals
            for i in range(1, length):
                cid = s[base + i]
                if (CARD_BONUS[cid] > CARD_BONUS[best]
                        or (CARD_BONUS[cid] == CARD_BONUS[best] and CARD_GOLD[cid] > CARD_GOLD[best])):
                    best = cid
            discard_equipped(s, seat, best)
    elif bad == BAD_LOSE_ALL_ITEMS:
        while s[EQUIPPED_LEN + seat]:
            discard_equipped(s, seat, s[EQUIPPED + seat * EQUIP_ROOM])
    else:
        lose_slot(s, seat, BAD_SLOT[bad])


@compiled
def lose_slot(s, seat, kind):
    """Every item of ``kind`` in play to the discard pile, in the order they lie."""
    base = EQUIPPED + seat * EQUIP_ROOM
    i = 0
    while i < s[EQUIPPED_LEN + seat]:
        cid = s[base + i]
        if CARD_KIND[cid] == kind:
            discard_equipped(s, seat, cid)  # the first copy, which is this one: nothing before it matched
        else:
            i += 1


@compiled
def lose_levels(s, seat, amount):
    s[LEVEL + seat] -= amount
    if s[LEVEL + seat] < 1:  # below level 1: death, restarting at level 1
        s[LEVEL + seat] = 1
        kill(s, seat, DEATH_LEVELS)


@compiled
def play_curse(s, seat, action, cid):
    """``seat`` plays curse ``cid`` from its hand on the seat the action names; returns that seat."""
    target = (seat + ACTION_ARG[action]) % s[N]
    hand_remove(s, seat, cid)
    discard_push(s, seat, cid)
    curse(s, target, cid)
    return target


@compiled
def curse(s, target, cid):
    """A curse takes effect at once on ``target``."""
    effect = CURSE_EFFECT[cid]
    race = s[RACES + target]
    log(s)
    if effect == LOSE_LEVEL:
        lose_levels(s, target, CARD_AMOUNT[cid])
    elif effect == LOSE_RACE:
        if race != HUMAN:  # humans are immune to "lose your race"
            s[RACES + target] = NO_RACE
            fix_slots(s, target)
    elif effect == PARALYSIS or effect == SLOW or effect == CONFUSION:
        if race == PIXIE:  # pixies are immune to paralysis, slow and confusion
            return
        if effect == PARALYSIS:
            s[PARALYZED + target] = 1
        elif effect == SLOW:
            s[SLOW_TURN + target] = s[TURN]
        else:
            s[CONFUSED_TURN + target] = s[TURN]
    else:
        lose_slot(s, target, CURSE_SLOT[effect])


@compiled
def sort_weakest_first(s, seat):
    """``sorted(equipped, key=(bonus, gold))`` into SORTED (stable); the number of items."""
    base, length = EQUIPPED + seat * EQUIP_ROOM, s[EQUIPPED_LEN + seat]
    for i in range(length):
        cid = s[base + i]
        at = i
        while at > 0 and (CARD_BONUS[s[SORTED + at - 1]] > CARD_BONUS[cid] or (
                CARD_BONUS[s[SORTED + at - 1]] == CARD_BONUS[cid] and CARD_GOLD[s[SORTED + at - 1]] > CARD_GOLD[cid])):
            s[SORTED + at] = s[SORTED + at - 1]
            at -= 1
        s[SORTED + at] = cid
    return length


@compiled
def hands_used(s, seat, race):
    used = 0
    base = EQUIPPED + seat * EQUIP_ROOM
    for i in range(s[EQUIPPED_LEN + seat]):
        cid = s[base + i]
        if CARD_KIND[cid] == WEAPON:
            used += hands_of(cid, race)
    return used


@compiled
def fix_slots(s, seat):
    """After losing giant or dwarf powers: drop the weakest items that no longer fit."""
    race = s[RACES + seat]
    for i in range(sort_weakest_first(s, seat)):
        cid = s[SORTED + i]
        if CARD_KIND[cid] == WEAPON and hands_used(s, seat, race) > 2:
            discard_equipped(s, seat, cid)
    length = sort_weakest_first(s, seat)
    bigs = 0
    for i in range(length):
        if CARD_BIG[s[SORTED + i]]:
            bigs += 1
    if race != DWARF and bigs > 1:
        for i in range(length):  # every big item but the strongest
            cid = s[SORTED + i]
            if CARD_BIG[cid]:
                if bigs == 1:
                    break
                discard_equipped(s, seat, cid)
                bigs -= 1
    for i in range(EQUIP_ROOM):
        s[SORTED + i] = 0


# --- death and looting -------------------------------------------------------------------------------------


@inlined
def kill(s, seat, kind):
    if s[DYING] < 0:
        s[DYING] = seat
        s[DEATH_KIND] = kind
        log(s)


@compiled
def start_looting(s, resume_phase, resume_seat):
    """``rules._start_looting``; True when the caller must end the turn (:func:`loot_continue`)."""
    dying = s[DYING]
    s[RESUME_PHASE] = resume_phase
    s[RESUME_SEAT] = resume_seat
    n = s[N]
    count = 0
    for k in range(1, n):
        seat = (dying + k) % n
        if not s[DEAD + seat]:
            s[LOOTERS + count] = seat
            count += 1
    s[LOOTERS_LEN] = count
    return loot_continue(s)


@compiled
def loot_continue(s):
    """``rules._loot_continue``; True when the death is over and play resumes by ending the turn (the rules'
    ``_finish_death`` calls ``_end_turn`` itself)."""
    dying = s[DYING]
    if s[LOOTERS_LEN] and (s[EQUIPPED_LEN + dying] or s[HAND_LEN + dying]):
        if s[LOOTERS_LEN] == 1:
            s[LOOTERS_LEN] = 0
            looter = s[LOOTERS]
            s[LOOTERS] = 0
            loot_turn(s, looter)
        else:
            s[PHASE] = LOOT_ORDER
            s[TO_ACT] = dying
        return False
    return finish_death(s)


@inlined
def loot_turn(s, looter):
    s[LOOTER] = looter
    s[PHASE] = LOOT_PICK
    s[TO_ACT] = looter


@compiled
def loot_hand(s, mt, looter):
    dying = s[DYING]
    for _ in range(2):  # no items in play: draw two cards from the hand
        if s[HAND_LEN + dying]:
            hand_push(s, looter, hand_take(s, dying, below(s, mt, s[HAND_LEN + dying])))
    log(s)


@compiled
def take_loot(s, looter, cid):
    equipped_remove(s, s[DYING], cid)
    hand_push(s, looter, cid)
    log(s)


@compiled
def finish_death(s):
    """``rules._finish_death``; True when play resumes by ending the turn (left to the caller)."""
    seat = s[DYING]
    base = HAND + seat * HAND_ROOM
    for i in range(s[HAND_LEN + seat]):
        discard_push(s, seat, s[base + i])
        s[base + i] = 0
    s[HAND_LEN + seat] = 0
    base = EQUIPPED + seat * EQUIP_ROOM
    for i in range(s[EQUIPPED_LEN + seat]):
        discard_push(s, seat, s[base + i])
        s[base + i] = 0
    s[EQUIPPED_LEN + seat] = 0
    if s[SUMMON + seat] >= 0:
        discard_push(s, seat, s[SUMMON + seat])
        s[SUMMON + seat] = -1
    s[DEAD + seat] = 1
    s[PARALYZED + seat] = 0
    s[SLOW_TURN + seat] = -1
    s[CONFUSED_TURN + seat] = -1
    if s[HELPER] == seat:
        s[HELPER] = -1
    s[DYING] = -1
    s[LOOTER] = -1
    for i in range(s[LOOTERS_LEN]):
        s[LOOTERS + i] = 0
    s[LOOTERS_LEN] = 0
    resume, actor = s[RESUME_PHASE], s[RESUME_SEAT]
    if resume == RESUME_END_TURN:
        return True
    if resume == WINDOW:
        s[PHASE] = WINDOW
        s[TO_ACT] = next_living(s, actor)
    elif resume == SETUP:
        s[PHASE] = SETUP
        s[TO_ACT] = actor
    else:
        s[PHASE] = resume
        s[TO_ACT] = s[ACTIVE]
    return False


# --- the end -----------------------------------------------------------------------------------------------


@compiled
def end(s, winner, reason):
    s[PHASE] = OVER
    s[WINNER] = winner
    s[END_REASON] = reason
    s[TO_ACT] = -1
    log(s)


@compiled
def game_returns(s, values_row):
    """``rules.returns`` into ``values_row`` (one value per seat of the table)."""
    n = s[N]
    for seat in range(n):
        values_row[seat] = 0.0
    if s[PHASE] != OVER:
        return
    if s[WINNER] >= 0:
        for seat in range(n):
            values_row[seat] = -1.0 / (n - 1)
        values_row[s[WINNER]] = 1.0
    weight = s[OPT_LEVEL_REWARD:OPT_LEVEL_REWARD + 1].view(np.float64)[0]
    if weight:
        span = s[OPT_WIN_LEVEL] - 1
        for seat in range(n):
            values_row[seat] = values_row[seat] + weight * (s[LEVEL + seat] - 1) / span


# --- batched entry points: every loop over games and steps in compiled code --------------------------------------


@compiled
def _new_games(states, chances, seeds, deck_cards, deck_facts):
    for g in range(states.shape[0]):
        seed_generator(chances[g], seeds[g])
        new_game(states[g], chances[g], deck_cards, deck_facts)


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
        while row[PHASE] != OVER and taken < max_steps:
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


@compiled
def _legal_one(row, out):
    return legal_actions(row, out)


# --- the Python side: batches, conversion, errors ----------------------------------------------------------------


class Batch(kernel_batch.Batch):
    """Many Wyvern games as arrays: ``state`` (int64, ``(G, ROW_SIZE)``), ``chance`` (uint32, ``(G, 625)``)
    and the ``configs`` they were made with (what :func:`to_state` rebuilds States with)."""


def unsupported(config: rules.Config | None = None, chance: Chance | None = None) -> str | None:
    """Why the kernel cannot play this game (a short sentence), or None when it can."""
    return kernel_batch.unsupported_reason("Wyvern", numba, config, rules.Config, chance)


def deck_index(name: str) -> int:
    """The index of deck ``name`` (bundled, or a deck file's path) in :data:`DECK_NAMES`, added when first met."""
    index = _DECK_INDEX.get(name)
    if index is None:
        deckmod.load_deck(name)  # ValueError naming every broken rule, before the table grows
        index = _DECK_INDEX[name] = len(DECK_NAMES)
        DECK_NAMES.append(name)
    return index


def _deck_tables() -> tuple[np.ndarray, np.ndarray]:
    """Every deck of DECK_NAMES as arrays: its 80 cards (sorted, as ``Deck.cards``) and its facts (summon, the
    number of element or weapon specialties, the alignment)."""
    while len(_deck_arrays) < len(DECK_NAMES):
        deck = deckmod.load_deck(DECK_NAMES[len(_deck_arrays)])
        themes = sum(1 for s in deck.specialty if s not in deckmod.ALIGNMENTS)
        alignment = GOOD if "good" in deck.specialty else EVIL if "evil" in deck.specialty else NO_ALIGNMENT
        _deck_arrays.append((np.array(deck.cards, dtype=np.int64),
                             np.array([deck.summon, themes, alignment], dtype=np.int64)))
    return (np.stack([cards for cards, _ in _deck_arrays]), np.stack([facts for _, facts in _deck_arrays]))


def _empty(games: int) -> tuple[np.ndarray, np.ndarray]:
    return kernel_batch.empty_rows(games, ROW_SIZE)


@lru_cache(maxsize=256)
def _options(config: rules.Config) -> np.ndarray:
    """The options' part of a row (what every row of this config starts with)."""
    n = config.num_players
    row = np.zeros(RACES, dtype=np.int64)
    row[N] = n
    for start, chosen, names in ((OPT_RACES, config.races, rules.RACES), (OPT_CLASSES, config.classes, rules.CLASSES)):
        row[start:start + n] = [names.index(c) if c != "random" else -1 for c in (chosen or ("random",) * n)]
    row[OPT_DECKS:OPT_DECKS + n] = [deck_index(d) if d != "random" else -1
                                    for d in (config.decks or ("adventurer",) * n)]
    for offset, value in ((OPT_WIN_LEVEL, config.win_level), (OPT_START_HAND, config.start_hand),
                          (OPT_HAND_LIMIT, config.hand_limit), (OPT_HAND_LIMIT_ALWAYS, config.hand_limit_always),
                          (OPT_RUN_TARGET, config.run_target), (OPT_GOLD_PER_LEVEL, config.gold_per_level),
                          (OPT_SPECIALTY_BONUSES, config.specialty_bonuses), (OPT_SUMMONS, config.summons),
                          (OPT_ONE_HELPER_PER_TURN, config.one_helper_per_turn),
                          (OPT_HELP_ROUNDS, config.help_rounds),
                          (OPT_PALADIN_HELPER_WINS_TIES, config.paladin_helper_wins_ties),
                          (OPT_DRAW_AFTER_MONSTER_DOOR, config.draw_after_monster_door),
                          (OPT_MAX_TURNS, config.max_turns), (OPT_MAX_STEPS, config.max_steps)):
        row[offset] = value
    row[OPT_LEVEL_REWARD] = np.float64(config.level_reward).view(np.int64)
    row.setflags(write=False)
    return row


def _require_kernel(config: rules.Config | None = None, chance: Chance | None = None) -> None:
    kernel_batch.require_kernel("Wyvern", unsupported(config, chance), compile_kernel)


def new_games(config: rules.Config, seeds: Sequence[int]) -> Batch:
    """Deal one game per seed in the kernel: game ``g`` is ``rules.new_game(config, Chance(seeds[g]))``
    (seeds from 0 to 2**63 - 1)."""
    _require_kernel(config)
    seed_array = kernel_batch.checked_seeds(seeds)
    states, chances = _empty(len(seed_array))
    states[:, :RACES] = _options(config)
    _new_games(states, chances, seed_array, *_deck_tables())
    return Batch(states, chances, [config] * len(seed_array))


def from_states(states: Sequence[rules.State]) -> Batch:
    """The kernel's arrays of Python States (each keeps its Chance's generator state; the logs are left out)."""
    rows, chances = kernel_batch.rows_of_states(states, ROW_SIZE, _require_kernel, _write_state)
    return Batch(rows, chances, [state.config for state in states])


def _write_state(row: np.ndarray, state: rules.State, clear: bool = False) -> None:
    """``state`` into ``row``, a zero row (each zone is written up to its length; ``clear``: zeroed first,
    whatever it held). A search writes its
    information state's row every move, so this is written for speed: the numbers handed to compiled code
    in two buffers it reads as they are (no numpy assignment from lists, about 15 µs of a move's fixed cost),
    :func:`_place_state` putting them in their places."""
    if len(state.order_rolls) > MAX_ROLL_ROUNDS:
        raise ValueError(f"the kernel keeps {MAX_ROLL_ROUNDS} rounds of turn-order rolls; this game had "
                         f"{len(state.order_rolls)}")
    fields = array.array("q", [
        *state.races, *state.classes, *[deck_index(name) for name in state.deck_names], *state.static_bonus,
        *map(len, state.deck), *map(len, state.discard), *map(len, state.hand), *map(len, state.equipped),
        *state.summon, *state.level, *state.dead, *state.paralyzed, *state.slow_turn, *state.confused_turn,
        *state.offers_to, *state.best_offer, *state.asks_from, *state.last_ask,
        state.phase, state.to_act, state.active, state.turn, state.steps, state.first_seat, state.door_card,
        state.gold, state.halfling_sold, state.helped_by, state.monster, state.source, state.fighter, state.helper,
        state.split, state.ask_seat, state.ask_split, state.bid, state.monster_bonus, state.party_bonus,
        state.run_bonus, state.passes, state.dying, state.death_kind, len(state.looters), state.looter,
        state.resume_phase, state.resume_seat, state.shed_phase, state.shed_seat, state.winner,
        END_REASONS.index(state.end_reason), state.events_logged, state.step_first_event, len(state.chance.outcomes),
        len(state.order_rolls), len(state.table)])
    # The lists, in _place_state's order; each of their numbers (a card id below NUM_CARDS = 64, a seat, a
    # die's face, a length up to six) fits a byte (bytearray raises a ValueError for one that does not).
    cards: list[int] = []
    for seat in range(state.n):
        cards += state.deck[seat]
        cards += state.discard[seat]
        cards += state.hand[seat]
        cards += state.equipped[seat]
    cards += state.looters
    for owner_card in state.table:
        cards += owner_card
    for faces in state.order_rolls:
        cards.append(len(faces))
        cards += faces
    _place_state(row, clear, _options_of(state.config), _FIELD_INDEX[state.n], fields, bytearray(cards))


_LAST_OPTIONS: tuple = (None, None)  # the config whose options were written last, and them (one tuple: atomic)


def _options_of(config: rules.Config) -> np.ndarray:
    """:func:`_options`, the last config's without hashing it again (a search writes rows of one config)."""
    global _LAST_OPTIONS
    last = _LAST_OPTIONS
    if last[0] is not config:
        last = _LAST_OPTIONS = (config, _options(config))
    return last[1]


@KERNEL.compiled
def _place_state(row, clear, options, places, fields, cards):
    """:func:`_write_state`'s numbers into ``row`` (zeroed first where ``clear``): the ``options`` part, each
    of ``fields`` at its place in ``places``, then the lists from ``cards`` (their lengths among the
    fields): every seat's deck, discard pile, hand and equipment (each in the State's order, the seats in
    turn), the looters, the table's (owner, card) pairs, each round of turn-order rolls (its length, then
    its faces)."""
    if clear:
        row[:] = 0
    for i in range(RACES):
        row[i] = options[i]
    for i in range(len(places)):
        row[places[i]] = fields[i]
    at = 0
    for seat in range(row[N]):
        piles = PILES + seat * PILE_ROOM
        for i in range(row[DECK_LEN + seat]):
            row[piles + i] = cards[at]
            at += 1
        top = piles + PILE_ROOM - 1  # the discard pile's first card; its i-th at top - i
        for i in range(row[DISCARD_LEN + seat]):
            row[top - i] = cards[at]
            at += 1
        hand = HAND + seat * HAND_ROOM
        for i in range(row[HAND_LEN + seat]):
            row[hand + i] = cards[at]
            at += 1
        equipped = EQUIPPED + seat * EQUIP_ROOM
        for i in range(row[EQUIPPED_LEN + seat]):
            row[equipped + i] = cards[at]
            at += 1
    for i in range(row[LOOTERS_LEN]):
        row[LOOTERS + i] = cards[at]
        at += 1
    for i in range(2 * row[TABLE_LEN]):
        row[TABLE + i] = cards[at]
        at += 1
    for round_ in range(row[ROLL_ROUNDS]):
        row[ROLL_LENS + round_] = cards[at]
        for i in range(cards[at]):
            row[ROLLS + round_ * P + i] = cards[at + 1 + i]
        at += 1 + cards[at]


# Where _write_state puts the State's fields, for each table size: the per-seat lists, then the single values.
_FIELD_INDEX = [np.array([start + seat for start in (
    RACES, CLASSES, DECK_IDS, STATIC_BONUS, DECK_LEN, DISCARD_LEN, HAND_LEN, EQUIPPED_LEN, SUMMON, LEVEL, DEAD,
    PARALYZED, SLOW_TURN, CONFUSED_TURN, OFFERS_TO, BEST_OFFER, ASKS_FROM, LAST_ASK) for seat in range(n)] + [
    PHASE, TO_ACT, ACTIVE, TURN, STEPS, FIRST_SEAT, DOOR_CARD, GOLD, HALFLING_SOLD, HELPED_BY, MONSTER, SOURCE,
    FIGHTER, HELPER, SPLIT, ASK_SEAT, ASK_SPLIT, BID, MONSTER_BONUS, PARTY_BONUS, RUN_BONUS, PASSES, DYING,
    DEATH_KIND, LOOTERS_LEN, LOOTER, RESUME_PHASE, RESUME_SEAT, SHED_PHASE, SHED_SEAT, WINNER, END_REASON,
    EVENTS_LOGGED, STEP_FIRST_EVENT, DRAWS, ROLL_ROUNDS, TABLE_LEN], dtype=np.int64) for n in range(P + 1)]


def _specialties(config: rules.Config, deck_names: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """``State.specialties``, which follows from the decks and the options."""
    if not config.specialty_bonuses:
        return ((),) * len(deck_names)
    return tuple(deckmod.load_deck(name).specialty for name in deck_names)


def first_difference(batch: Batch, game: int, state: rules.State) -> str | None:
    """Where game ``game`` of ``batch`` differs from ``state`` (the reference), as ``field[index]: kernel K,
    rules R``, the first in row order; None when the two are the same game (every State field but the
    event list, the generator's state, the number of draws)."""
    row = batch.state[game]
    expected = np.zeros(ROW_SIZE, dtype=np.int64)
    _write_state(expected, state)
    difference = LAYOUT.first_difference(row, expected, STATE_SIZE)
    if difference is not None:
        return difference
    if _specialties(state.config, state.deck_names) != state.specialties:
        return f"specialties: from the decks {_specialties(state.config, state.deck_names)}, rules {state.specialties}"
    if kernel_batch.chance_differs(batch.chance[game], state.chance):
        return "the chance generator's state"
    return None


def to_state(batch: Batch, game: int) -> rules.State:
    """Game ``game`` of ``batch`` as a ``rules.State``: its Chance continues the kernel's generator (with an
    empty log of outcomes) and its event list is empty (``events_logged`` counts on)."""
    row = [int(value) for value in batch.state[game]]
    n = row[N]
    if row[ROLL_ROUNDS] > MAX_ROLL_ROUNDS:  # never a silently shortened State
        raise ValueError(f"game {game} rolled {row[ROLL_ROUNDS]} rounds for the first seat; the kernel keeps "
                         f"{MAX_ROLL_ROUNDS}, so it has no State to give back")
    chance = Chance(0)
    kernel_batch.set_generator_state(chance._random, batch.chance[game])
    config = batch.configs[game]

    def seats(start: int, count: int = n) -> list[int]:
        return row[start:start + count]

    def pile(seat: int) -> tuple[list[int], list[int]]:
        base = PILES + seat * PILE_ROOM
        discard = row[base + PILE_ROOM - row[DISCARD_LEN + seat]:base + PILE_ROOM]
        return row[base:base + row[DECK_LEN + seat]], discard[::-1]

    deck_names = tuple(DECK_NAMES[index] for index in seats(DECK_IDS))
    return rules.State(
        config=config, chance=chance, n=n, races=seats(RACES), classes=seats(CLASSES), deck_names=deck_names,
        specialties=_specialties(config, deck_names), static_bonus=seats(STATIC_BONUS),
        deck=[pile(seat)[0] for seat in range(n)], discard=[pile(seat)[1] for seat in range(n)],
        hand=[seats(HAND + seat * HAND_ROOM, row[HAND_LEN + seat]) for seat in range(n)],
        equipped=[seats(EQUIPPED + seat * EQUIP_ROOM, row[EQUIPPED_LEN + seat]) for seat in range(n)],
        summon=seats(SUMMON), level=seats(LEVEL), dead=[bool(v) for v in seats(DEAD)],
        paralyzed=[bool(v) for v in seats(PARALYZED)], slow_turn=seats(SLOW_TURN),
        confused_turn=seats(CONFUSED_TURN), phase=row[PHASE], to_act=row[TO_ACT], active=row[ACTIVE],
        turn=row[TURN], steps=row[STEPS],
        order_rolls=[tuple(seats(ROLLS + round_ * P, row[ROLL_LENS + round_])) for round_ in range(row[ROLL_ROUNDS])],
        first_seat=row[FIRST_SEAT], door_card=row[DOOR_CARD], gold=row[GOLD], halfling_sold=bool(row[HALFLING_SOLD]),
        helped_by=row[HELPED_BY], monster=row[MONSTER], source=row[SOURCE], fighter=row[FIGHTER],
        helper=row[HELPER], split=row[SPLIT], offers_to=seats(OFFERS_TO), best_offer=seats(BEST_OFFER),
        asks_from=seats(ASKS_FROM), last_ask=seats(LAST_ASK), ask_seat=row[ASK_SEAT], ask_split=row[ASK_SPLIT],
        bid=row[BID], monster_bonus=row[MONSTER_BONUS], party_bonus=row[PARTY_BONUS], run_bonus=row[RUN_BONUS],
        table=[(row[TABLE + 2 * i], row[TABLE + 2 * i + 1]) for i in range(row[TABLE_LEN])], passes=row[PASSES],
        dying=row[DYING], death_kind=row[DEATH_KIND], looters=seats(LOOTERS, row[LOOTERS_LEN]),
        looter=row[LOOTER], resume_phase=row[RESUME_PHASE], resume_seat=row[RESUME_SEAT],
        shed_phase=row[SHED_PHASE], shed_seat=row[SHED_SEAT], winner=row[WINNER],
        end_reason=END_REASONS[row[END_REASON]], events=[], events_logged=row[EVENTS_LOGGED],
        step_first_event=row[STEP_FIRST_EVENT],
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
    return batch.state[:, PHASE] == OVER


def current_seat(batch: Batch) -> np.ndarray:
    """The seat to act in each game, -1 once it is over (``rules.current_seat``)."""
    return np.where(is_terminal(batch), -1, batch.state[:, TO_ACT])


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
    reason = "not asked for" if not use_kernel else next(
        (why for why in (unsupported(s.config, s.chance) for s in states) if why), None)
    if reason is None:
        return rollout_random(from_states(states), rng_seeds, max_steps)
    if use_kernel:
        print(f"Wyvern kernel unavailable, rolling out on the Python rules: {reason}", file=sys.stderr)
    return kernel_batch.random_rollouts_on_rules(states, rng_seeds, max_steps, rules, rules.apply_legal, P)


# --- search: a determinization (agents/mcts_kernel.py) ------------------------------------------------------------
# What a search samples, kept apart from the rules' functions above: ``rules.determinize`` with a search's dealer
# (agents/mcts.py ``SearchChance``), in the order of its draws, so that a compiled search deals exactly what the
# Python search deals. The dealer shuffles a pool of fewer than NUMPY_SHUFFLE_FROM cards with its own
# ``random()``, a longer one with ``numpy.random.Generator.permutation`` on a PCG64 it seeds from
# ``getrandbits(64)`` at the first long pool; both are written out here: numpy's SeedSequence, PCG64 (its
# 128-bit state as two 64-bit halves) and ``Generator.shuffle``'s bounded integers (``random_interval``:
# the mask of the bound, drawn again while above it), word for word.

from ..compiled import next_word  # noqa: E402 - kept with the section it serves

NUMPY_SHUFFLE_FROM = 24  # agents/mcts.py SearchChance.NUMPY_SHUFFLE_FROM (the test checks they agree)
POOL_ROOM = ALL_CARDS  # one player's pool: its hand, deck and discard pile never hold more than every card
# The dealer's words (``mt``, uint32): the Mersenne Twister's 625, then whether the numpy generator is seeded,
# then its six 64-bit words (PCG_AT is even: they read as uint64): the state's high and low halves, the
# increment's, and the half of a 64-bit output kept for the next 32-bit draw (whether one is kept, its value).
NUMPY_SEEDED = MT_SIZE
PCG_AT = MT_SIZE + 1
PCG_HI, PCG_LO, PCG_INC_HI, PCG_INC_LO, PCG_HAS_HALF, PCG_HALF = range(6)
DEALER_ROOM = PCG_AT + 2 * 6
MIXER_ROOM = 13  # seeding's working space: SeedSequence's pool of 4, its hash constant, the 8 words it draws
# numpy's constants: SeedSequence's hash (bit_generator.pyx) and PCG64's 128-bit multiplier (pcg64.h).
SEED_INIT_A, SEED_MULT_A, SEED_INIT_B, SEED_MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
SEED_MIX_L, SEED_MIX_R = 0xCA01F9DD, 0x4973F715
PCG_MULT_HI, PCG_MULT_LO = 0x2360ED051FC65DA4, 0x4385DF649FCCF645


def _deal_argument_types() -> dict:
    from numba import types

    return {**_argument_types(), "pool": types.int64[::1], "pcg": types.uint64[::1], "mixer": types.int64[::1]}


# The determinization's functions compile with the kernel's (a search's loop includes both).
DEAL = Kernel(_deal_argument_types, includes=(KERNEL,))


@DEAL.inlined
def _seed_hashmix(value, mixer):
    """SeedSequence's ``hashmix``: 32-bit arithmetic in int64 (each product masked), its constant in mixer[4]."""
    value = (value ^ mixer[4]) & 0xFFFFFFFF
    mixer[4] = (mixer[4] * SEED_MULT_A) & 0xFFFFFFFF
    value = (value * mixer[4]) & 0xFFFFFFFF
    return value ^ (value >> 16)


@DEAL.inlined
def _seed_mix(x, y):
    result = (SEED_MIX_L * x - SEED_MIX_R * y) & 0xFFFFFFFF
    return result ^ (result >> 16)


if numba is not None:
    from numba.core.extending import intrinsic

    @intrinsic
    def _mul_hi(typing_context, a, b):
        """The high 64 bits of the 128-bit product of two uint64: one multiplication in LLVM's i128 (a fifth
        of the determinization's time went to four 32-bit products)."""
        from llvmlite import ir
        from numba import types

        def generate(context, builder, signature, arguments):
            wide = ir.IntType(128)
            product = builder.mul(builder.zext(arguments[0], wide), builder.zext(arguments[1], wide))
            return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

        return types.uint64(types.uint64, types.uint64), generate
else:
    def _mul_hi(a, b):
        return np.uint64((int(a) * int(b)) >> 64)


@DEAL.inlined
def _pcg_step(pcg):
    """state = state * multiplier + increment, modulo 2**128."""
    hi, lo = pcg[PCG_HI], pcg[PCG_LO]
    mult_hi, mult_lo = np.uint64(PCG_MULT_HI), np.uint64(PCG_MULT_LO)
    product_lo = lo * mult_lo
    new_lo = product_lo + pcg[PCG_INC_LO]
    carry = np.uint64(1) if new_lo < product_lo else np.uint64(0)
    pcg[PCG_HI] = _mul_hi(lo, mult_lo) + lo * mult_hi + hi * mult_lo + pcg[PCG_INC_HI] + carry
    pcg[PCG_LO] = new_lo


@DEAL.compiled
def _pcg_seed(pcg, mixer, entropy_low, entropy_high):
    """``numpy.random.PCG64(entropy)`` for a 64-bit ``entropy`` given as its two 32-bit words: SeedSequence's
    pool of four words, the state's 256 bits drawn from it, then ``pcg_setseq_128_srandom_r``."""
    mixer[4] = SEED_INIT_A
    for i in range(4):
        mixer[i] = _seed_hashmix(entropy_low if i == 0 else entropy_high if i == 1 else 0, mixer)
    for source in range(4):
        for target in range(4):
            if source != target:
                mixer[target] = _seed_mix(mixer[target], _seed_hashmix(mixer[source], mixer))
    constant = SEED_INIT_B
    for i in range(8):  # generate_state(4, uint64): eight 32-bit words, mixer[5:13]
        value = (mixer[i % 4] ^ constant) & 0xFFFFFFFF
        constant = (constant * SEED_MULT_B) & 0xFFFFFFFF
        value = (value * constant) & 0xFFFFFFFF
        mixer[5 + i] = value ^ (value >> 16)
    # The state's and the increment's sequence's 64-bit halves, high first, each two words low first.
    state_hi = np.uint64(mixer[5]) | (np.uint64(mixer[6]) << np.uint64(32))
    state_lo = np.uint64(mixer[7]) | (np.uint64(mixer[8]) << np.uint64(32))
    sequence_hi = np.uint64(mixer[9]) | (np.uint64(mixer[10]) << np.uint64(32))
    sequence_lo = np.uint64(mixer[11]) | (np.uint64(mixer[12]) << np.uint64(32))
    pcg[PCG_INC_HI] = (sequence_hi << np.uint64(1)) | (sequence_lo >> np.uint64(63))
    pcg[PCG_INC_LO] = (sequence_lo << np.uint64(1)) | np.uint64(1)
    pcg[PCG_HI], pcg[PCG_LO] = np.uint64(0), np.uint64(0)
    _pcg_step(pcg)
    low = pcg[PCG_LO] + state_lo
    pcg[PCG_HI] = pcg[PCG_HI] + state_hi + (np.uint64(1) if low < state_lo else np.uint64(0))
    pcg[PCG_LO] = low
    _pcg_step(pcg)
    pcg[PCG_HAS_HALF], pcg[PCG_HALF] = np.uint64(0), np.uint64(0)


@DEAL.compiled
def _pcg_shuffle(pcg, pool, size):
    """``Generator.shuffle`` of ``pool[:size]`` (what ``permutation`` does to the positions, done to the pool):
    Fisher-Yates from the top, each index ``random_interval(i)``: 32-bit draws (the low half of a 64-bit
    XSL-RR output, its high half kept for the next) masked to the bound's bits, drawn again while above it.
    The generator's words are read into locals and written back once (the loop is a fifth of a simulation)."""
    hi, lo, inc_hi, inc_lo = pcg[PCG_HI], pcg[PCG_LO], pcg[PCG_INC_HI], pcg[PCG_INC_LO]
    has_half, half = pcg[PCG_HAS_HALF] != 0, pcg[PCG_HALF]
    mult_hi, mult_lo, low_word = np.uint64(PCG_MULT_HI), np.uint64(PCG_MULT_LO), np.uint64(0xFFFFFFFF)
    for i in range(size - 1, 0, -1):
        most = np.uint64(i)
        mask = most | (most >> np.uint64(1))
        mask |= mask >> np.uint64(2)
        mask |= mask >> np.uint64(4)
        mask |= mask >> np.uint64(8)
        mask |= mask >> np.uint64(16)
        while True:
            if has_half:
                has_half, word = False, half
            else:  # state = state * multiplier + increment (mod 2**128), then the output of the new state
                product_lo = lo * mult_lo
                new_lo = product_lo + inc_lo
                carry = np.uint64(1) if new_lo < product_lo else np.uint64(0)
                hi = _mul_hi(lo, mult_lo) + lo * mult_hi + hi * mult_lo + inc_hi + carry
                lo = new_lo
                x = hi ^ lo
                turn = hi >> np.uint64(58)
                output = (x >> turn) | (x << ((np.uint64(64) - turn) & np.uint64(63)))
                has_half, half, word = True, output >> np.uint64(32), output & low_word
            value = word & mask
            if value <= most:
                break
        j = np.int64(value)
        pool[i], pool[j] = pool[j], pool[i]
    pcg[PCG_HI], pcg[PCG_LO] = hi, lo
    pcg[PCG_HAS_HALF], pcg[PCG_HALF] = np.uint64(1) if has_half else np.uint64(0), half


@DEAL.compiled
def shuffle_deal(mt, pool, size, mixer):
    """``SearchChance.shuffle_deal`` of ``pool[:size]``: a short list by the dealer's Fisher-Yates, a long one
    as ``Generator.permutation`` orders it (:func:`_pcg_shuffle`), the generator seeded from the dealer at the
    first long list."""
    if size < NUMPY_SHUFFLE_FROM:
        for i in range(size - 1, 0, -1):
            j = np.int64(random_float(mt) * (i + 1))
            pool[i], pool[j] = pool[j], pool[i]
        return
    pcg = mt[PCG_AT:DEALER_ROOM].view(np.uint64)
    if mt[NUMPY_SEEDED] == 0:
        low = next_word(mt)  # getrandbits(64): the low word first
        _pcg_seed(pcg, mixer, low, next_word(mt))
        mt[NUMPY_SEEDED] = 1
    _pcg_shuffle(pcg, pool, size)


@DEAL.compiled
def _copy_public(row, out):
    """What a determinization keeps of ``row`` into ``out``: every field but the hidden zones, which it deals,
    and only the used part of the equipment and the table (a row is 59 kB, its used part a few hundred
    words; nothing reads a zone past its length)."""
    for i in range(PILES):
        out[i] = row[i]
    for i in range(HAND_LEN, HAND):
        out[i] = row[i]
    for i in range(EQUIPPED_LEN, EQUIPPED):
        out[i] = row[i]
    for seat in range(row[N]):
        at = EQUIPPED + seat * EQUIP_ROOM
        for i in range(at, at + row[EQUIPPED_LEN + seat]):
            out[i] = row[i]
    for i in range(EQUIPPED + P * EQUIP_ROOM, TABLE):
        out[i] = row[i]
    for i in range(TABLE, TABLE + 2 * row[TABLE_LEN]):
        out[i] = row[i]
    for i in range(TABLE + 2 * TABLE_ROOM, STATE_SIZE):
        out[i] = row[i]


@DEAL.compiled
def determinize(row, seat, mt, out, pool, mixer):
    """``rules.determinize(info, seat, dealer)`` for a search's dealer (agents/mcts.py ``SearchChance``, whose
    samples roll their dice from it too): ``row`` is the information state, ``mt`` the dealer's words
    (DEALER_ROOM: its generator and its numpy generator's), ``out`` becomes the sample (its working space
    zero, as every function leaves it; its hidden zones and the used part of the others written here), and
    ``pool`` (POOL_ROOM) and ``mixer`` (5) are working space. Seat by seat: ``seat``'s own deck shuffled,
    every other player's hand, deck and discard pile pooled in that order, shuffled and dealt back in the
    same numbers."""
    _copy_public(row, out)
    for who in range(row[N]):
        piles, hand = PILES + who * PILE_ROOM, HAND + who * HAND_ROOM
        deck_len, discard_len, hand_len = row[DECK_LEN + who], row[DISCARD_LEN + who], row[HAND_LEN + who]
        top = piles + PILE_ROOM - 1  # the discard pile's first card; its i-th at top - i
        if who == seat:
            for i in range(deck_len):
                pool[i] = row[piles + i]
            shuffle_deal(mt, pool, deck_len, mixer)
            for i in range(deck_len):
                out[piles + i] = pool[i]
            for i in range(hand_len):
                out[hand + i] = row[hand + i]
            for i in range(discard_len):
                out[top - i] = row[top - i]
            continue
        for i in range(hand_len):
            pool[i] = row[hand + i]
        for i in range(deck_len):
            pool[hand_len + i] = row[piles + i]
        for i in range(discard_len):
            pool[hand_len + deck_len + i] = row[top - i]
        shuffle_deal(mt, pool, hand_len + deck_len + discard_len, mixer)
        for i in range(hand_len):
            out[hand + i] = pool[i]
        for i in range(deck_len):
            out[piles + i] = pool[hand_len + i]
        for i in range(discard_len):
            out[top - i] = pool[hand_len + deck_len + i]


@DEAL.compiled_allocating
def _determinize_many(row, seat, mt, states):
    pool = np.empty(POOL_ROOM, dtype=np.int64)
    mixer = np.empty(MIXER_ROOM, dtype=np.int64)
    for g in range(states.shape[0]):
        determinize(row, seat, mt, states[g], pool, mixer)


def information_row(state: rules.State, out: np.ndarray | None = None) -> np.ndarray:
    """An information state (``rules.information_state``) as the kernel's row; its Chance is not read (a search
    deals from its own). Written over ``out`` (a row, whatever it held; cleared in the compiled call that
    writes it) where given, else into a new row."""
    if out is None:
        row = np.zeros(ROW_SIZE, dtype=np.int64)
        _write_state(row, state)
        return row
    _write_state(out, state, clear=True)
    return out


def new_dealer(seed: int) -> np.ndarray:
    """The words of ``SearchChance(seed)`` (DEALER_ROOM uint32): ``random.Random(seed)``, no numpy generator yet."""
    dealer = np.zeros(DEALER_ROOM, dtype=np.uint32)
    seed_generator(dealer, seed)
    return dealer


def determinize_batch(info: rules.State, seat: int, dealer: np.ndarray, samples: int) -> Batch:
    """``samples`` determinizations of ``info`` for ``seat``, one after another, as ``rules.determinize`` deals
    them from a search's dealer whose words are ``dealer`` (:func:`new_dealer`; advanced in place). Sample
    ``g``'s chance is the dealer's Mersenne Twister after it (where its dice would continue)."""
    _require_kernel(info.config)
    DEAL.compile()
    row = information_row(info)
    states = np.zeros((samples, ROW_SIZE), dtype=np.int64)
    chances = np.zeros((samples, MT_SIZE), dtype=np.uint32)
    for g in range(samples):  # one at a time: each sample's chance is the dealer as it left it
        _determinize_many(row, seat, dealer, states[g:g + 1])
        chances[g] = dealer[:MT_SIZE]
    return Batch(states, chances, [info.config] * samples)
