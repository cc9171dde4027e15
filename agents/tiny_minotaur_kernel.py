"""Tiny Minotaur's heuristic bot inside the compiled kernel: whole heuristic rollouts in one call (for search).

:class:`agents.tiny_minotaur.HeuristicBot` stays the reference: :func:`heuristic_action` follows its ``act``
decision by decision, reading what the seat's observation shows exactly as the bot reads it back (HP, hit
chances, boss damage and the pending hit rounded through the observation's float32, the pending hit's damage
capped at 100 as the observation caps it), breaking ties as its ``max`` does (the first of equals in
ascending action order; among reactions the tuple ``(chance, action)``). tests/test_kernel_tiny_minotaur.py
plays seeded heuristic games both ways and checks every decision and the returns.

``rollout_heuristic(batch, max_steps)`` plays a copy of every game of a kernel batch
(envs/tiny_minotaur/kernel.py) to its end with both seats the heuristic, inside compiled code, and returns
``(returns, steps)`` like ``kernel.rollout_random``. The heuristic draws no random numbers: the games differ
only by their chance.
"""

from __future__ import annotations

import numpy as np

from ..envs.kernel_batch import checked_max_steps
from ..envs.tiny_minotaur import kernel as K
from ..envs.tiny_minotaur import rules as R


@K.inlined
def heuristic_seen_hp(s, who):
    """HP as the bot reads it back from the observation: round(float32(hp / hp_cap) * hp_cap)."""
    hp_cap = s[K.OPT_HP_CAP]
    return np.int64(np.rint(np.float64(np.float32(s[K.HP + who] / hp_cap)) * hp_cap))


@K.inlined
def heuristic_chance(s, seat, card):
    """The observation's chance that a d20 lands in the card's window, as float32."""
    at = K.WINDOWS + (seat * K.NUM_CARDS + card) * 2
    return np.float64(np.float32(max(0, min(s[at + 1], 20) - s[at] + 1) / 20.0))


@K.inlined
def heuristic_seen_damage(damage):
    """A damage as the observation shows it (damage / 100 as float32, at most 1) read back as a whole number."""
    return np.int64(np.rint(np.float64(np.float32(min(1.0, damage / 100.0))) * 100))


@K.compiled
def heuristic_attack(s, legal, count):
    seat = s[K.TO_ACT]
    opponent_hp = heuristic_seen_hp(s, 1 - seat)
    best, best_first, best_second = -1, 0.0, 0.0
    lethal_found = False
    # Two passes as the bot's: the lethal attacks if any (most likely to hit, then the cheaper), else every
    # attack by expected damage (then the cheaper); the first of equals in ascending order wins.
    for lethal_pass in range(2):
        for i in range(count):
            action = legal[i]
            if action > R.ATTACK_BOSS:
                continue
            if action == R.ATTACK_BOSS:
                damage = heuristic_seen_damage(s[K.DAMAGE + seat * K.ATTACK_SLOTS + R.BOSS])
                chance = heuristic_chance(s, seat, R.BOSS)
            else:
                damage = s[K.RS_DAMAGE + action]
                chance = 1.0 if action == R.ATTACK_REGULAR else heuristic_chance(s, seat, action)
            if lethal_pass == 0:
                if damage < opponent_hp:
                    continue
                first = chance
            else:
                first = chance * damage
            second = -np.float64(damage)
            if best < 0 or first > best_first or (first == best_first and second > best_second):
                best, best_first, best_second = action, first, second
                lethal_found = lethal_pass == 0
        if lethal_found:
            return best
    return best if best >= 0 else legal[0]


@K.compiled
def heuristic_react(s, legal, count):
    seat = s[K.TO_ACT]
    my_hp = heuristic_seen_hp(s, seat)
    incoming = heuristic_seen_damage(s[K.DAMAGE + (1 - seat) * K.ATTACK_SLOTS + s[K.PENDING_CARD]])
    heal = s[K.OPT_HEAL_AMOUNT]
    can_dodge, can_heal = False, False
    for i in range(count):
        can_dodge = can_dodge or legal[i] == R.REACT_DODGE
        can_heal = can_heal or legal[i] == R.REACT_HEAL
    if incoming >= my_hp:  # this hit knocks me out unless a reaction saves me
        best, best_chance = R.REACT_TAKE, -1.0
        if can_dodge:
            best, best_chance = R.REACT_DODGE, heuristic_chance(s, seat, R.DODGE)
        if can_heal and my_hp - incoming + heal > 0:
            chance = heuristic_chance(s, seat, R.HEAL)
            if best_chance < 0 or chance >= best_chance:  # max((chance, action)): heal (6) wins a tie with dodge (5)
                best = R.REACT_HEAL
        return best
    if can_dodge and incoming > s[K.RS_DAMAGE + R.REGULAR]:
        return R.REACT_DODGE
    if can_heal and my_hp - incoming + heal <= s[K.OPT_HP_CAP]:
        return R.REACT_HEAL
    return R.REACT_TAKE


@K.compiled
def heuristic_action(s, legal, count):
    """``HeuristicBot.act`` for the seat to act, given its ``count`` legal actions in ``legal``."""
    if count == 1:
        return legal[0]
    if s[K.PHASE] == R.REACT_PHASE:
        return heuristic_react(s, legal, count)
    return heuristic_attack(s, legal, count)


@K.compiled_allocating
def heuristic_rollouts(states, chances, max_steps, values, steps):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(K.MT_SIZE, dtype=np.uint32)
    legal = np.empty(R.NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        mt[:] = chances[g]
        taken = 0
        while row[K.PHASE] != R.GAME_OVER and taken < max_steps:
            count = K.legal_actions(row, legal)
            K.apply_legal(row, mt, heuristic_action(row, legal, count))
            taken += 1
        K.game_returns(row, values[g])
        steps[g] = taken


@K.compiled
def _heuristic_one(row, legal):
    return heuristic_action(row, legal, K.legal_actions(row, legal))


def heuristic_move(batch: K.Batch, game: int) -> int:
    """The heuristic's action in game ``game`` of ``batch`` (a game still running)."""
    _require_kernel()
    return int(_heuristic_one(batch.state[game], np.empty(R.NUM_ACTIONS, dtype=np.int64)))


def _require_kernel() -> None:
    reason = K.unsupported()
    if reason is not None:
        raise ValueError(f"the Tiny Minotaur kernel is unavailable: {reason}")
    K.compile_kernel()


def rollout_heuristic(batch: K.Batch, max_steps: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_steps`` more decisions) with both seats the heuristic,
    in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)`` as ``kernel.rollout_random``."""
    limit = checked_max_steps(max_steps)
    _require_kernel()
    values = np.zeros((len(batch), 2), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    heuristic_rollouts(batch.state, batch.chance, limit, values, steps)
    return values, steps
