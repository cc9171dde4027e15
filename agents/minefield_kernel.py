"""Minefield's heuristic bot inside the compiled kernel: whole heuristic rollouts in one call (for search).

:class:`agents.minefield.HeuristicBot` stays the reference: :func:`heuristic_target` follows its ``act``
decision by decision, with what the bot keeps between rounds (its counts of repeated targets, the last
round it saw) and its own ``random.Random``: the sampled attack orders are ``random.Random.shuffle`` and the
tie-break ``randrange``, both drawn word for word as CPython draws them (``getrandbits`` with rejection),
from a Mersenne Twister per seat (envs/compiled.py's). Its floats are summed in the bot's order (relative
seats ascending, as its dicts iterate). tests/test_kernel_minefield.py plays seeded heuristic games both ways
and checks every seat's every target and the returns.

:class:`Heuristics` holds one game's bots (their generators and what they learned) for deciding round by
round from Python; ``rollout_heuristic(batch, bot_seeds)`` plays a copy of every game of a kernel batch to
its end with every seat a fresh heuristic bot seeded ``bot_seeds[g, seat]`` (``HeuristicBot(config, seed)``),
inside compiled code, and returns ``(returns, steps)`` like ``kernel.rollout_random``. Bots start fresh, as a
bot seated at that point of a game would: from a position mid-game they have learned nothing yet.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..envs.compiled import MT_SIZE, next_word, seed_generator
from ..envs.kernel_batch import checked_max_steps
from ..envs.minefield import kernel as K
from ..envs.minefield import rules as R
from .minefield import ATTACKER_LOSES, HeuristicBot

_DEFAULTS = inspect.signature(HeuristicBot).parameters
PRIOR_PERSISTENCE = float(_DEFAULTS["prior_persistence"].default)
PRIOR_WEIGHT = float(_DEFAULTS["prior_weight"].default)
SAMPLES = int(_DEFAULTS["samples"].default)
SEAT_ORDER = R.ATTACK_ORDERS.index("seat")
P = K.P

# ``learned[seat]``: what each bot counted (opportunities, repeats, repeats by chance alone). ``memory``: the
# round the bots last saw, the same for every living bot (each acted in it): targets, alive, whether seen.
OPPORTUNITIES, REPEATS, BY_CHANCE = range(3)
SEEN_TARGETS, SEEN_ALIVE, SEEN = 0, P, 2 * P
MEMORY_SIZE = 2 * P + 1
# ``work``: a decision's working space (floats): predicted[j, t] by relative seats, then per seat.
PREDICTED, STANDING, SCORES, ORDER, LIVING = 0, P * P, P * P + P, P * P + 2 * P, P * P + 3 * P
WORK_SIZE = P * P + 4 * P


@K.inlined
def heuristic_below(mt, n):
    """``random.Random._randbelow(n)``: ``getrandbits(n.bit_length())`` until below ``n`` (n < 2**32)."""
    k = 0
    while (n >> k) > 0:
        k += 1
    r = next_word(mt) >> (32 - k)
    while r >= n:
        r = next_word(mt) >> (32 - k)
    return r


@K.compiled
def heuristic_learn(s, seat, learned, memory):
    """``HeuristicBot._learn``: for every opponent that attacked in the last two rounds, whether it repeated
    its target (opponents in relative order, as the bot counts them)."""
    n = s[K.N]
    if memory[SEEN]:
        options = -1
        for other in range(n):
            options += memory[SEEN_ALIVE + other]
        for j in range(1, n):
            opponent = K._around(seat + j, n)
            before = memory[SEEN_TARGETS + opponent]
            now = s[K.LAST_TARGETS + opponent]
            if before < 0 or now < 0:
                continue
            if not memory[SEEN_ALIVE + before] or options < 1:
                continue
            learned[seat, OPPORTUNITIES] += 1.0
            learned[seat, BY_CHANCE] += 1.0 / options
            learned[seat, REPEATS] += 1.0 if now == before else 0.0


@K.inlined
def heuristic_persistence(learned, seat):
    repeats = learned[seat, REPEATS] + PRIOR_WEIGHT * PRIOR_PERSISTENCE
    excess = (repeats - learned[seat, BY_CHANCE]) / (learned[seat, OPPORTUNITIES] + PRIOR_WEIGHT
                                                      - learned[seat, BY_CHANCE])
    return min(1.0, max(0.0, excess))


@K.compiled
def heuristic_gone_before_me(work, living_count):
    """``_gone_before_me`` over the order in ``work[ORDER:]``: into ``work[STANDING + r]`` the chance that
    relative seat r is gone before my attack."""
    for i in range(living_count):
        work[STANDING + np.int64(work[LIVING + i])] = 1.0
    for i in range(living_count):
        attacker = np.int64(work[ORDER + i])
        if attacker == 0:
            break
        for k in range(living_count):
            target = np.int64(work[LIVING + k])
            if target == 0 or target == attacker:
                continue
            battle = work[PREDICTED + attacker * P + target] * work[STANDING + attacker] * work[STANDING + target]
            work[STANDING + attacker] -= battle * ATTACKER_LOSES
            work[STANDING + target] -= battle * (1.0 - ATTACKER_LOSES)
    for i in range(living_count):
        r = np.int64(work[LIVING + i])
        work[STANDING + r] = 1.0 - work[STANDING + r]


@K.compiled
def heuristic_target(s, seat, mt, learned, memory, work):
    """``HeuristicBot.act`` of ``seat`` (alive, the game running), after ``heuristic_learn``: its target."""
    n = s[K.N]
    living_count = 0
    for r in range(n):
        if s[K.ALIVE + K._around(seat + r, n)]:
            work[LIVING + living_count] = r
            living_count += 1
    if living_count == 2:  # one legal target: the bot returns it before scoring
        return K._around(seat + np.int64(work[LIVING + 1]), n)
    persistence = heuristic_persistence(learned, seat)
    for i in range(1, living_count):
        j = np.int64(work[LIVING + i])
        uniform = 1.0 / (living_count - 1)
        last = s[K.LAST_TARGETS + K._around(seat + j, n)]
        last_relative = -1
        if last >= 0:
            last_relative = last - seat if last >= seat else last - seat + n
            if not s[K.ALIVE + last] or last_relative == j:
                last_relative = -1
        for k in range(living_count):
            t = np.int64(work[LIVING + k])
            if t == j:
                continue
            work[PREDICTED + j * P + t] = uniform if last_relative < 0 else (1.0 - persistence) * uniform
        if last_relative >= 0:
            work[PREDICTED + j * P + last_relative] += persistence
    for i in range(living_count):
        work[SCORES + np.int64(work[LIVING + i])] = 0.0
    orders = 1 if s[K.OPT_ATTACK_ORDER] == SEAT_ORDER else SAMPLES
    for _ in range(orders):
        if s[K.OPT_ATTACK_ORDER] == SEAT_ORDER:  # the living by absolute seat
            at = 0
            for absolute in range(n):
                if s[K.ALIVE + absolute]:
                    work[ORDER + at] = absolute - seat if absolute >= seat else absolute - seat + n
                    at += 1
        else:  # random.Random.shuffle of the living, relative seats ascending
            for i in range(living_count):
                work[ORDER + i] = work[LIVING + i]
            for i in range(living_count - 1, 0, -1):
                j = heuristic_below(mt, i + 1)
                work[ORDER + i], work[ORDER + j] = work[ORDER + j], work[ORDER + i]
        heuristic_gone_before_me(work, living_count)
        for i in range(1, living_count):
            target = np.int64(work[LIVING + i])
            gone = work[STANDING + target]
            work[SCORES + target] += gone + (1.0 - gone) * work[PREDICTED + target * P + 0]
    # The best score over the legal targets (absolute seats ascending), the ties within 1e-9, one at random.
    best = -np.inf
    for absolute in range(n):
        if absolute != seat and s[K.ALIVE + absolute]:
            relative = absolute - seat if absolute >= seat else absolute - seat + n
            best = max(best, work[SCORES + relative] / orders)
    tied = 0
    for absolute in range(n):
        if absolute != seat and s[K.ALIVE + absolute]:
            relative = absolute - seat if absolute >= seat else absolute - seat + n
            if work[SCORES + relative] / orders >= best - 1e-9:
                tied += 1
    pick = heuristic_below(mt, tied)
    for absolute in range(n):
        if absolute != seat and s[K.ALIVE + absolute]:
            relative = absolute - seat if absolute >= seat else absolute - seat + n
            if work[SCORES + relative] / orders >= best - 1e-9:
                if pick == 0:
                    return absolute
                pick -= 1
    return -1  # unreachable: some target is tied with the best


@K.compiled
def heuristic_joint(s, bots, learned, memory, work, joint):
    """Every living seat's target this round into ``joint`` (-1 for the others), each bot learning first;
    then the round is remembered for the next."""
    n = s[K.N]
    for seat in range(P):
        joint[seat] = -1
    for seat in range(n):
        if s[K.ALIVE + seat]:
            heuristic_learn(s, seat, learned, memory)
            joint[seat] = heuristic_target(s, seat, bots[seat], learned, memory, work)
    for seat in range(n):
        memory[SEEN_TARGETS + seat] = s[K.LAST_TARGETS + seat]
        memory[SEEN_ALIVE + seat] = s[K.ALIVE + seat]
    memory[SEEN] = 1


@K.compiled_allocating
def heuristic_rollouts(states, chances, bot_seeds, max_rounds, values, steps):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(MT_SIZE, dtype=np.uint32)
    bots = np.empty((P, MT_SIZE), dtype=np.uint32)
    learned = np.empty((P, 3), dtype=np.float64)
    memory = np.empty(MEMORY_SIZE, dtype=np.int64)
    work = np.zeros(WORK_SIZE, dtype=np.float64)
    joint = np.empty(P, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        mt[:] = chances[g]
        for seat in range(row[K.N]):
            seed_generator(bots[seat], bot_seeds[g, seat])
        learned[:, :] = 0.0
        memory[:] = 0
        taken, played = 0, 0
        while row[K.OVER] == 0 and played < max_rounds:
            heuristic_joint(row, bots, learned, memory, work, joint)
            taken += row[K.NUM_ALIVE]
            K.apply_joint(row, mt, joint)
            played += 1
        K.game_returns(row, values[g])
        steps[g] = taken


def _require_kernel() -> None:
    reason = K.unsupported()
    if reason is not None:
        raise ValueError(f"the Minefield kernel is unavailable: {reason}")
    K.compile_kernel()


class Heuristics:
    """One game's heuristic bots in compiled form, seat ``s`` being ``HeuristicBot(config, seeds[s])`` fresh
    at the game's start: :meth:`joint` is every living seat's target this round (call it once a round)."""

    def __init__(self, seeds: list[int]):
        _require_kernel()
        self.bots = np.zeros((P, MT_SIZE), dtype=np.uint32)
        for seat, seed in enumerate(seeds):
            seed_generator(self.bots[seat], int(seed))
        self.learned = np.zeros((P, 3), dtype=np.float64)
        self.memory = np.zeros(MEMORY_SIZE, dtype=np.int64)
        self.work = np.zeros(WORK_SIZE, dtype=np.float64)

    def joint(self, batch: K.Batch, game: int) -> np.ndarray:
        joint = np.empty(P, dtype=np.int64)
        heuristic_joint(batch.state[game], self.bots, self.learned, self.memory, self.work, joint)
        return joint[:batch.configs[game].num_players]


def rollout_heuristic(batch: K.Batch, bot_seeds: np.ndarray | list,
                      max_rounds: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_rounds`` more rounds) with every seat a fresh heuristic
    bot, seat ``s`` of game ``g`` seeded ``bot_seeds[g][s]``, in compiled code; ``batch`` is left as it was.
    Returns ``(returns, steps)`` as ``kernel.rollout_random``."""
    limit = checked_max_steps(max_rounds)
    _require_kernel()
    seeds = np.zeros((len(batch), P), dtype=np.int64)
    given = np.asarray(bot_seeds)
    if given.shape != (len(batch), batch.width) or given.dtype.kind not in "iu" or (given < 0).any():
        raise ValueError(f"bot_seeds must be {len(batch)} rows of {batch.width} non-negative integers, a seed "
                         f"per seat, got shape {given.shape} of {given.dtype}")
    seeds[:, :batch.width] = given
    values = np.zeros((len(batch), P), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    heuristic_rollouts(batch.state, batch.chance, seeds, limit, values, steps)
    return values[:, :batch.width], steps
