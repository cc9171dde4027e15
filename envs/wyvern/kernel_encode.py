"""Wyvern's observation encoder compiled beside the kernel: what :func:`.encode.encode` writes, from a kernel row.

:mod:`.encode` stays the reference and the layout's documentation (its module docstring holds the index
table). :func:`encode_row` writes, for any seat of a kernel game (envs/wyvern/kernel.py), the very float32
vector ``encode.encode`` writes for that seat of the same State: each value computed by the same float64
expression (``level / win_level``, ``(run_bonus + 3) / 8.0``...) and rounded to float32 on assignment, as
numpy and encode.py's float32 memoryviews round the Python floats. The encoder reads every slot from the
row as it stands (encode.py's caches are a Python speed-up; the result is the same). :func:`mask_row`
writes the action mask the PettingZoo env gives (int8, the legal actions of the seat to act, all zero for
every other seat and once the game is over). tests/test_kernel_wyvern.py replays seeded games in both
engines and compares every seat's observation and mask at every step; a mismatch names the option set,
seed, step, seat and the first differing index with its field (:func:`observation_field`).

The declared specialties (player slots 34-39) follow from the decks: the compiled functions read them from
``deck_specialties`` (one row of six flags per deck of ``kernel.DECK_NAMES``, :func:`specialty_table`),
passed in as the kernel's deck tables are.

Entry points: ``observe(batch, seats)`` (one seat per game, batched in compiled code) and
``observe_seat(batch, game, seat)`` (one, for tests); the vector envs (:mod:`.vector`) call the compiled
functions themselves.
"""

from __future__ import annotations

import numpy as np

from ..compiled import Kernel
from . import decks as deckmod
from . import encode as E
from . import kernel as K
from .rules import (
    ASK,
    CLASSES,
    COUNTER,
    LOOT_PICK,
    NUM_ACTIONS,
    OVER,
    PHASE_NAMES,
    RACE_NAMES,
    WINDOW,
)


def _argument_types() -> dict:
    """The kernel's parameter types, and the encoder's outputs and deck table."""
    from numba import types

    return {**K._argument_types(), "observation": types.float32[::1], "mask": types.int8[::1],
            "observations": types.float32[:, ::1], "action_masks": types.int8[:, ::1],
            "game_seats": types.int64[::1], "deck_specialties": types.int64[:, ::1]}


ENCODER = Kernel(_argument_types, includes=(K.KERNEL,))
compile_encoder = ENCODER.compile

# encode.py's layout as plain ints (numba freezes them into the compiled code).
BLOCK = E.PLAYER_BLOCK
HAND_AT = E.HAND.start
PHASE_AT = E.PHASE.start
MY_TURN_AT = E.MY_TURN
DOOR_AT = E.DOOR.start
MONSTER_AT = E.MONSTER.start
COMBAT_AT = E.COMBAT.start
BAD_AT = E.BAD.start
DEATH_AT = E.DEATH.start
TURN_AT, STEPS_AT, GOLD_SOLD_AT, HALFLING_SOLD_AT, OVER_LIMIT_AT = (E.TURN, E.STEPS, E.GOLD_SOLD, E.HALFLING_SOLD,
                                                                    E.OVER_LIMIT)
NUM_SPECIALTIES = len(E.SPECIALTY_ORDER)
# Per catalog card: its slot among the items in play (encode's EQUIP_SLOT), among the monsters (MONSTER_SLOT); -1.
EQUIP_SLOT = np.array([E.EQUIP_SLOT.get(cid, -1) for cid in range(K.NUM_CARDS)], dtype=np.int64)
MONSTER_SLOT = np.array([E.MONSTER_SLOT.get(cid, -1) for cid in range(K.NUM_CARDS)], dtype=np.int64)


def specialty_table() -> np.ndarray:
    """Every deck of ``kernel.DECK_NAMES`` as six flags, one per declared specialty in encode's
    ``SPECIALTY_ORDER`` (a deck file met later grows the table: call this after the batch is dealt)."""
    table = np.zeros((len(K.DECK_NAMES), NUM_SPECIALTIES), dtype=np.int64)
    for index, name in enumerate(K.DECK_NAMES):
        for specialty in deckmod.load_deck(name).specialty:
            table[index, E.SPECIALTY_ORDER.index(specialty)] = 1
    return table


@ENCODER.inlined
def clip(x):
    return 0.0 if x < 0.0 else x if x < 1.0 else 1.0


@ENCODER.compiled
def player_block(s, seat, who, in_combat, deck_specialties, observation):
    """``who``'s player block in ``seat``'s observation (encode's ``_player_block``, the pile sizes, the
    role flags and the help talks), at block ``(who - seat) % n``."""
    n = s[K.N]
    at = ((who - seat) % n) * BLOCK
    phase = s[K.PHASE]
    observation[at] = 1.0
    if not s[K.DEAD + who]:
        observation[at + E.P_ALIVE] = 1.0
    observation[at + E.P_LEVEL] = s[K.LEVEL + who] / s[K.OPT_WIN_LEVEL]
    observation[at + E.P_COMBAT] = clip(K.combat_level(s, who, -1, False) / 50.0)
    observation[at + E.P_HAND] = min(1.0, s[K.HAND_LEN + who] / 10.0)
    observation[at + E.P_DECK] = min(1.0, s[K.DECK_LEN + who] / 80.0)
    observation[at + E.P_DISCARD] = min(1.0, s[K.DISCARD_LEN + who] / 80.0)
    if phase != OVER and s[K.ACTIVE] == who:
        observation[at + E.P_ACTIVE] = 1.0
    observation[at + E.P_RACE + s[K.RACES + who]] = 1.0
    observation[at + E.P_CLASS + s[K.CLASSES + who]] = 1.0
    if s[K.PARALYZED + who]:
        observation[at + E.P_PARALYZED] = 1.0
    if s[K.SLOW_TURN + who] >= 0:
        observation[at + E.P_SLOW] = 1.0
    if s[K.CONFUSED_TURN + who] >= 0:
        observation[at + E.P_CONFUSED] = 1.0
    x = s[K.STATIC_BONUS + who] / 10.0
    observation[at + E.P_STATIC] = x if x < 1.0 else 1.0
    if s[K.SUMMON + who] >= 0:
        observation[at + E.P_SUMMON] = K.CARD_LEVEL[s[K.SUMMON + who]] / 25.0
    observation[at + E.P_RUN] = clip((K.run_bonus(s, who) + 3) / 8.0)
    if in_combat:
        if s[K.FIGHTER] == who:
            observation[at + E.P_FIGHTER] = 1.0
        if s[K.HELPER] == who:
            observation[at + E.P_HELPER] = 1.0
        if s[K.ASK_SEAT] == who:
            observation[at + E.P_ASKED] = 1.0
        rounds = s[K.OPT_HELP_ROUNDS]
        observation[at + E.P_OFFERS] = min(1.0, s[K.OFFERS_TO + who] / rounds)
        observation[at + E.P_BEST_OFFER] = (s[K.BEST_OFFER + who] + 1) / 6.0
        observation[at + E.P_ASKS] = min(1.0, s[K.ASKS_FROM + who] / rounds)
        observation[at + E.P_LAST_ASK] = (s[K.LAST_ASK + who] + 1) / 6.0
    if s[K.DYING] == who:
        observation[at + E.P_DYING] = 1.0
    if phase == LOOT_PICK and s[K.LOOTER] == who:
        observation[at + E.P_LOOTER] = 1.0
    if s[K.HELPED_BY] == who:
        observation[at + E.P_HELPED] = 1.0
    if s[K.OPT_SPECIALTY_BONUSES]:
        deck = s[K.DECK_IDS + who]
        for k in range(NUM_SPECIALTIES):
            if deck_specialties[deck, k]:
                observation[at + E.P_SPECIALTY + k] = 1.0
    base = K.EQUIPPED + who * K.EQUIP_ROOM
    for i in range(s[K.EQUIPPED_LEN + who]):
        slot = at + E.P_EQUIPPED + EQUIP_SLOT[s[base + i]]
        observation[slot] = 1.0 if observation[slot] else 0.5


@ENCODER.compiled
def fight_slots(s, observation):
    """The fight's slots: the monster, ``COMBAT`` and its Bad Stuff (encode's ``_write_fight``, with the help
    talks' numbers)."""
    monster = s[K.MONSTER]
    c = COMBAT_AT
    observation[MONSTER_AT + MONSTER_SLOT[monster]] = 1.0
    observation[c + E.C_IN] = 1.0
    observation[c + E.C_MLEVEL] = min(1.0, K.CARD_LEVEL[monster] / 30.0)
    observation[c + E.C_TREASURES] = K.CARD_TREASURES[monster] / 5.0
    observation[c + E.C_LEVELS] = min(1.0, K.CARD_LEVELS[monster] / 3.0)
    observation[BAD_AT + K.BAD_STUFF[monster]] = 1.0
    party, strength = K.party_strength(s), K.monster_strength(s)
    observation[c + E.C_MBONUS] = clip(s[K.MONSTER_BONUS] / 30.0)
    observation[c + E.C_MSTRENGTH] = clip(strength / 100.0)
    observation[c + E.C_PSTRENGTH] = clip(party / 100.0)
    observation[c + E.C_PBONUS] = clip(s[K.PARTY_BONUS] / 30.0)
    if K.party_beats(s, party, strength):
        observation[c + E.C_WINNING] = 1.0
    observation[c + E.C_RUN] = clip(s[K.RUN_BONUS] / 6.0)
    bonus = K.run_bonus(s, s[K.FIGHTER]) + s[K.RUN_BONUS]
    escapes = 0
    for face in range(1, 7):
        if face + bonus >= s[K.OPT_RUN_TARGET]:
            escapes += 1
    observation[c + E.C_ESCAPE] = escapes / 6.0
    observation[c + E.C_SOURCE + s[K.SOURCE]] = 1.0
    if s[K.HELPER] >= 0:
        observation[c + E.C_SPLIT] = s[K.SPLIT] / 5.0
    if s[K.PHASE] == ASK:
        observation[c + E.C_ASK_SPLIT] = s[K.ASK_SPLIT] / 5.0
    elif s[K.PHASE] == COUNTER:
        observation[c + E.C_BID] = s[K.BID] / 5.0


@ENCODER.compiled
def encode_row(s, seat, deck_specialties, observation):
    """``encode.encode(state, seat, observation)`` from the kernel row ``s``."""
    n = s[K.N]
    for i in range(observation.shape[0]):
        observation[i] = 0.0
    phase = s[K.PHASE]
    in_combat = s[K.MONSTER] >= 0 and (phase == WINDOW or phase == ASK or phase == COUNTER)
    for who in range(n):
        player_block(s, seat, who, in_combat, deck_specialties, observation)
    hand = K.HAND + seat * K.HAND_ROOM
    held = s[K.HAND_LEN + seat]
    for i in range(held):  # a quarter per copy, at most 1 (quarters are exact in float32)
        slot = HAND_AT + s[hand + i]
        x = observation[slot]
        observation[slot] = x + 0.25 if x < 1.0 else 1.0
    observation[PHASE_AT + phase] = 1.0
    if phase != OVER and s[K.TO_ACT] == seat:
        observation[MY_TURN_AT] = 1.0
    if s[K.DOOR_CARD] >= 0:
        observation[DOOR_AT + s[K.DOOR_CARD]] = 1.0
    if in_combat:
        fight_slots(s, observation)
    if s[K.DYING] >= 0:
        observation[DEATH_AT + s[K.DEATH_KIND] - 1] = 1.0
    observation[TURN_AT] = min(1.0, s[K.TURN] / s[K.OPT_MAX_TURNS])
    observation[STEPS_AT] = min(1.0, s[K.STEPS] / s[K.OPT_MAX_STEPS])
    if s[K.GOLD]:
        observation[GOLD_SOLD_AT] = min(1.0, s[K.GOLD] / s[K.OPT_GOLD_PER_LEVEL])
    if s[K.HALFLING_SOLD]:
        observation[HALFLING_SOLD_AT] = 1.0
    over = held - K.hand_limit(s, seat)
    if over > 0:
        observation[OVER_LIMIT_AT] = over / 5.0 if over < 5 else 1.0


@ENCODER.compiled
def mask_row(s, seat, legal, mask):
    """The env's action mask of ``seat`` (1 for each legal action when it is to act, else all 0). Returns
    the number of legal actions, left ascending in ``legal`` (working space of at least NUM_ACTIONS); 0
    when ``seat`` is not to act."""
    for i in range(mask.shape[0]):
        mask[i] = 0
    if s[K.PHASE] == OVER or s[K.TO_ACT] != seat:
        return 0
    count = K.legal_actions(s, legal)
    for i in range(count):
        mask[legal[i]] = 1
    return count


@ENCODER.compiled_allocating
def _observe_all(states, game_seats, deck_specialties, observations, action_masks):
    legal = np.empty(NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        encode_row(states[g], game_seats[g], deck_specialties, observations[g])
        mask_row(states[g], game_seats[g], legal, action_masks[g])


def observe(batch: K.Batch, seats) -> tuple[np.ndarray, np.ndarray]:
    """``(observations, masks)`` of seat ``seats[g]`` in every game ``g``: float32 ``(G, 587)`` and int8
    ``(G, 295)``, as the PettingZoo env's ``observe`` gives them."""
    K._require_kernel()
    compile_encoder()
    seat_array = np.asarray(seats, dtype=np.int64)
    if seat_array.shape != (len(batch),) or ((seat_array < 0) | (seat_array >= batch.state[:, K.N])).any():
        raise ValueError(f"seats must be {len(batch)} seat numbers, one per game, each within its table")
    observations = np.zeros((len(batch), E.OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((len(batch), NUM_ACTIONS), dtype=np.int8)
    _observe_all(batch.state, np.ascontiguousarray(seat_array), specialty_table(), observations, masks)
    return observations, masks


def observe_seat(batch: K.Batch, game: int, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of one seat of one game (the differential test's call)."""
    observations, masks = observe(K.Batch(batch.state[game:game + 1], batch.chance[game:game + 1],
                                          batch.configs[game:game + 1]), [seat])
    return observations[0], masks[0]


_PLAYER_SLOTS = (["present", "alive", "level", "combat level", "hand size", "deck size", "discard size", "has the turn"]
                 + [f"race {name}" for name in RACE_NAMES] + [f"class {name}" for name in CLASSES]
                 + ["paralysed", "slowed", "confused", "deck bonus", "summon", "run bonus", "fighter", "helper",
                    "in help talks", "dying", "looting", "helped this turn"]
                 + [f"specialty {name}" for name in E.SPECIALTY_ORDER]
                 + [f"in play[{deckmod.CATALOG[cid].key}]" for cid in deckmod.EQUIPMENT]
                 + ["offers made to it", "best offer to it", "asks it made", "its last ask"])
assert len(_PLAYER_SLOTS) == BLOCK
_COMBAT_SLOTS = ("in combat", "monster level", "monster bonus", "monster strength", "party strength", "party bonus",
                 "party wins now", "treasures", "promised split", "pending offer", "levels granted", "run bonus",
                 "escape chance", "source door", "source hand", "source summon", "pending ask")


def observation_field(index: int) -> str:
    """What index ``index`` of the observation holds, as encode.py's table names it: ``seat+2 level``,
    ``hand[goblin]``, ``combat[party strength]``."""
    if index < HAND_AT:
        offset, slot = divmod(index, BLOCK)
        return f"{'me' if offset == 0 else f'seat+{offset}'} {_PLAYER_SLOTS[slot]}"
    for name, part, names in (("hand", E.HAND, None), ("door", E.DOOR, None), ("phase", E.PHASE, PHASE_NAMES),
                              ("monster", E.MONSTER, None), ("combat", E.COMBAT, _COMBAT_SLOTS),
                              ("bad stuff", E.BAD, deckmod.BAD_STUFF), ("death", E.DEATH, ("levels", "eaten"))):
        if part.start <= index < part.stop:
            at = index - part.start
            if names is None:
                cid = E.MONSTERS[at] if part is E.MONSTER else at
                return f"{name}[{deckmod.CATALOG[cid].key}]"
            return f"{name}[{names[at]}]"
    single = {E.MY_TURN: "I am to act", E.TURN: "turn", E.STEPS: "decisions", E.GOLD_SOLD: "gold sold this turn",
              E.HALFLING_SOLD: "halfling sold", E.OVER_LIMIT: "over the hand limit"}
    return single.get(index, f"index {index} (beyond the layout)")
