"""MiniSteel's observation encoder compiled beside the kernel: what :func:`.encode.encode` writes, from a kernel row.

:mod:`.encode` stays the reference and the layout's documentation (its module docstring holds the index
table). :func:`encode_row` writes, for any seat of a kernel game (envs/ministeel/kernel.py, dealt with
``track_known=True``), the very float32 vector ``encode.encode`` writes for that seat of the same State:
each value computed by the same float64 expression (``hp * (1 / hp_cap)``, ``actions_left /
actions_per_turn``...) and rounded to float32 on assignment, as numpy rounds the Python floats.
:func:`mask_row` writes the action mask the PettingZoo env gives (int8, the legal actions of the seat to
act, all zero for every other seat and once the game is over). tests/test_kernel_ministeel.py replays
seeded games in both engines and compares every seat's observation and mask at every step; a mismatch
names the option set, seed, step, seat and the first differing index with its field
(:func:`observation_field`).

Entry points: ``observe(batch, seats)`` (one seat per game, batched in compiled code) and
``observe_seat(batch, game, seat)`` (one, for tests); the vector envs (:mod:`.vector`) call the compiled
functions themselves.
"""

from __future__ import annotations

import numpy as np

from ..compiled import Kernel
from . import encode as E
from . import kernel as K
from .rules import (
    ANSWER,
    BLADED_SHIELD,
    DRAW_PHASE,
    GAME_OVER,
    KINDS,
    MAGNIFYING_GLASS,
    NUM_ACTIONS,
    NUM_KINDS,
    PICK_PHASE,
    REACT_PHASE,
    STEEL_SHIELD,
    WOODEN_SHIELD,
)


def _argument_types() -> dict:
    """The kernel's parameter types, and the encoder's outputs."""
    from numba import types

    return {**K._argument_types(), "observation": types.float32[::1], "mask": types.int8[::1],
            "observations": types.float32[:, ::1], "action_masks": types.int8[:, ::1], "game_seats": types.int64[::1]}


ENCODER = Kernel(_argument_types, includes=(K.KERNEL,))
compile_encoder = ENCODER.compile

# encode.py's layout as plain ints (numba freezes them into the compiled code).
BLOCK = E.PLAYER_BLOCK
HAND_AT = E.HAND.start
PHASE_AT = E.PHASE.start
ACTIONS_LEFT_AT = E.ACTIONS_LEFT
TURN_OF_AT = E.TURN_OF.start
PENDING_CARD_AT = E.PENDING_CARD.start
PENDING_DAMAGE_AT = E.PENDING_DAMAGE
ATTACKER_AT = E.ATTACKER.start
TARGET_AT = E.TARGET.start
SHIELD_RAISED_AT = E.SHIELD_RAISED.start
OFFERED_AT = E.OFFERED.start
PICK_SOURCE_AT = E.PICK_SOURCE.start
DECK_AT = E.DECK
DISCARD_AT = E.DISCARD.start
TURN_AT = E.TURN
KNOWN_AT = E.KNOWN.start
DRAW_WINDOW_AT = E.DRAW_WINDOW
DRAW_BOUNDARY_AT = E.DRAW_BOUNDARY
INVERSE_COUNTS = np.array([1.0 / count for count in K.DECK_COUNTS], dtype=np.float64)  # encode's _INVERSE_COUNTS
# The pending attack card's slot (encode's PENDING_CARDS.index), the raised shield's slot; -1 where none.
PENDING_SLOT = np.array([E.PENDING_CARDS.index(kind) if kind in E.PENDING_CARDS else -1
                         for kind in range(NUM_KINDS)], dtype=np.int64)
SHIELD_SLOT = np.array([{WOODEN_SHIELD: 0, STEEL_SHIELD: 1, BLADED_SHIELD: 2}.get(kind, -1)
                        for kind in range(NUM_KINDS)], dtype=np.int64)


@ENCODER.compiled
def encode_row(s, seat, observation):
    """``encode.encode(state, seat, observation)`` from the kernel row ``s`` (which keeps ``known``)."""
    n = s[K.N]
    for i in range(observation.shape[0]):
        observation[i] = 0.0
    inverse_hp = 1.0 / s[K.OPT_HP_CAP]
    inverse_limit = 1.0 / s[K.OPT_POISON_LIMIT]
    to_act = s[K.TO_ACT]
    for offset in range(n):
        who = K._around(seat + offset, n)
        at = offset * BLOCK
        held = K._hand_size(s, who)
        token, skip = s[K.TOKENS + who], s[K.SKIPS + who]
        observation[at] = 1.0
        observation[at + 1] = 1.0 if s[K.ALIVE + who] else 0.0
        observation[at + 2] = s[K.HP + who] * inverse_hp
        observation[at + 3] = s[K.POISON_TOKENS + who] * inverse_limit
        observation[at + 4] = token * 0.25 if token < 4 else 1.0
        observation[at + 5] = held * 0.05 if held < 20 else 1.0
        observation[at + 6] = s[K.EQUIPMENT + who * 3] * 0.5
        observation[at + 7] = s[K.EQUIPMENT + who * 3 + 1]
        observation[at + 8] = s[K.EQUIPMENT + who * 3 + 2]
        observation[at + 9] = skip * 0.5 if skip < 2 else 1.0
        observation[at + 10] = 1.0 if to_act == who else 0.0
    for kind in range(NUM_KINDS):
        observation[HAND_AT + kind] = s[K.HANDS + seat * NUM_KINDS + kind] * INVERSE_COUNTS[kind]
    phase = s[K.PHASE]
    if phase != DRAW_PHASE:  # v2's window has its own slot after v1's layout
        observation[PHASE_AT + phase] = 1.0
    actions_left = s[K.ACTIONS_LEFT] / s[K.OPT_ACTIONS_PER_TURN]
    observation[ACTIONS_LEFT_AT] = actions_left if actions_left < 1.0 else 1.0
    if phase != GAME_OVER:
        observation[TURN_OF_AT + (s[K.TURN_SEAT] - seat) % n] = 1.0
    if phase == REACT_PHASE or phase == ANSWER:
        observation[PENDING_CARD_AT + PENDING_SLOT[s[K.ATTACK_CARD]]] = 1.0
        observation[PENDING_DAMAGE_AT] = min(1.0, s[K.DAMAGE] / 10)
        observation[PENDING_DAMAGE_AT + 1] = 1.0 if s[K.POISONS] else 0.0
        observation[PENDING_DAMAGE_AT + 2] = 1.0 if s[K.COMBO_FLAG] else 0.0
        observation[ATTACKER_AT + (s[K.ATTACKER] - seat) % n] = 1.0
        observation[TARGET_AT + (s[K.TARGET] - seat) % n] = 1.0
        if s[K.SHIELD] >= 0:
            observation[SHIELD_RAISED_AT + SHIELD_SLOT[s[K.SHIELD]]] = 1.0
    elif phase == DRAW_PHASE:
        observation[DRAW_WINDOW_AT] = 1.0
        if s[K.WINDOW_NEXT] >= 0:
            observation[DRAW_BOUNDARY_AT] = 1.0
    elif phase == PICK_PHASE:
        if to_act == seat:
            for kind in range(NUM_KINDS):
                observation[OFFERED_AT + kind] = s[K.PICK + kind] * INVERSE_COUNTS[kind]
        observation[PICK_SOURCE_AT + (0 if s[K.PICK_SOURCE] == MAGNIFYING_GLASS else 1)] = 1.0
    observation[DECK_AT] = s[K.DECK_LEN] / K.DECK_ROOM
    for kind in range(NUM_KINDS):
        observation[DISCARD_AT + kind] = s[K.DISCARD + kind] * INVERSE_COUNTS[kind]
    turn = s[K.TURN] / s[K.OPT_MAX_TURNS]
    observation[TURN_AT] = turn if turn < 1.0 else 1.0
    for offset in range(1, n):
        row = K.KNOWN + (seat * K.P + K._around(seat + offset, n)) * NUM_KINDS
        at = KNOWN_AT + (offset - 1) * NUM_KINDS
        for kind in range(NUM_KINDS):
            if s[row + kind]:
                observation[at + kind] = s[row + kind] * INVERSE_COUNTS[kind]


@ENCODER.compiled
def mask_row(s, seat, legal, mask):
    """The env's action mask of ``seat`` (1 for each legal action when it is to act, else all 0). Returns
    the number of legal actions, left ascending in ``legal`` (working space of at least NUM_ACTIONS); 0
    when ``seat`` is not to act."""
    for i in range(mask.shape[0]):
        mask[i] = 0
    if s[K.PHASE] == GAME_OVER or s[K.TO_ACT] != seat:
        return 0
    count = K.legal_actions(s, legal)
    for i in range(count):
        mask[legal[i]] = 1
    return count


@ENCODER.compiled_allocating
def _observe_all(states, game_seats, observations, action_masks):
    legal = np.empty(NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        encode_row(states[g], game_seats[g], observations[g])
        mask_row(states[g], game_seats[g], legal, action_masks[g])


def _sizes(batch: K.Batch) -> tuple[int, int]:
    """The observation and action sizes of a batch's games (one Config for the whole batch)."""
    config = batch.configs[0]
    if any(other != config for other in batch.configs):
        raise ValueError("observe needs one Config for the whole batch (its observation size)")
    return E.observation_size(config), len(E.action_names(config))


def observe(batch: K.Batch, seats) -> tuple[np.ndarray, np.ndarray]:
    """``(observations, masks)`` of seat ``seats[g]`` in every game ``g``: float32 ``(G, observation_size)``
    and int8 ``(G, actions)``, as the PettingZoo env's ``observe`` gives them. The batch must keep ``known``
    (``new_games(..., track_known=True)``, ``from_states``)."""
    K._require_kernel()
    compile_encoder()
    if not batch.state[:, K.TRACK_KNOWN].all():
        raise ValueError("observations need the seats' memory: deal the batch with track_known=True")
    seat_array = np.asarray(seats, dtype=np.int64)
    if seat_array.shape != (len(batch),) or ((seat_array < 0) | (seat_array >= batch.state[:, K.N])).any():
        raise ValueError(f"seats must be {len(batch)} seat numbers, one per game, each within its table")
    size, actions = _sizes(batch)
    observations = np.zeros((len(batch), size), dtype=np.float32)
    masks = np.zeros((len(batch), actions), dtype=np.int8)
    _observe_all(batch.state, np.ascontiguousarray(seat_array), observations, masks)
    return observations, masks


def observe_seat(batch: K.Batch, game: int, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of one seat of one game (the differential test's call)."""
    observations, masks = observe(K.Batch(batch.state[game:game + 1], batch.chance[game:game + 1],
                                          batch.configs[game:game + 1]), [seat])
    return observations[0], masks[0]


def observation_field(index: int) -> str:
    """What index ``index`` of the observation holds, as encode.py's table names it: ``seat+2 HP``,
    ``hand[dagger]``, ``known seat+1[sword]``."""
    players = E.MAX_PLAYERS * BLOCK
    if index < players:
        names = ("present", "alive", "HP", "poison tokens", "draw tokens", "hand size", "spiked gloves",
                 "armor", "satchel", "skips", "decides now")
        offset, slot = divmod(index, BLOCK)
        return f"{'me' if offset == 0 else f'seat+{offset}'} {names[slot]}"
    for name, part in (("hand", E.HAND), ("offered", E.OFFERED), ("discard", E.DISCARD)):
        if part.start <= index < part.stop:
            return f"{name}[{KINDS[index - part.start]}]"
    if E.KNOWN.start <= index < E.KNOWN.stop:
        offset, kind = divmod(index - E.KNOWN.start, NUM_KINDS)
        return f"known seat+{offset + 1}[{KINDS[kind]}]"
    single = {E.ACTIONS_LEFT: "actions left", E.PENDING_DAMAGE: "pending damage", E.PENDING_POISON: "pending poison",
              E.PENDING_COMBO: "pending combo", E.DECK: "deck size", E.TURN: "turns begun",
              E.DRAW_WINDOW: "draw window", E.DRAW_BOUNDARY: "draw window at a turn boundary"}
    if index in single:
        return single[index]
    for name, part in (("phase", E.PHASE), ("turn of", E.TURN_OF), ("pending card", E.PENDING_CARD),
                       ("attacker", E.ATTACKER), ("target", E.TARGET), ("shield raised", E.SHIELD_RAISED),
                       ("pick source", E.PICK_SOURCE)):
        if part.start <= index < part.stop:
            return f"{name}[{index - part.start}]"
    return f"index {index} (beyond the layout)"
