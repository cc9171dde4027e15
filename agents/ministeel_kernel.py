"""MiniSteel's heuristic bot inside the compiled kernel: whole heuristic rollouts in one call (for search).

:class:`agents.ministeel.HeuristicBot` stays the reference: :func:`heuristic_action` follows its
``act_state`` decision by decision (the same order of rules, the same ties: the first of equals in
ascending action order or seat order, the same float32 rounding of HP that the observation makes), and
tests/test_kernel_ministeel.py plays seeded heuristic games both ways and checks every decision and the
returns. It reads only what the seat's observation shows, as the bot does.

``HEURISTIC`` is the bot as an opponent of the vector env (``tavernzoo.envs.ministeel.vector_env(...,
opponent=HEURISTIC)``): the learner's opponents play the heuristic inside the env's compiled step.

``rollout_heuristic(batch, max_steps)`` plays a copy of every game of a kernel batch
(envs/ministeel/kernel.py) to its end with every seat the heuristic, inside compiled code, and returns
``(returns, steps)`` like ``kernel.rollout_random``. The heuristic draws no random numbers: the games
differ only by their chance.
"""

from __future__ import annotations

import numpy as np

from ..envs.batched import Opponent
from ..envs.ministeel import kernel as K
from ..envs.ministeel import rules as R
from .ministeel import ATTACK_ORDER, VALUE

# The heuristic's tables as arrays numba freezes into the compiled code; ``_X_AT[k]``: aimed ``k`` seats on.
CARD_WORTH = np.array(VALUE, dtype=np.int64)
FORFEIT_WORTH = np.array([VALUE[kind] + (6 if kind in R.DARK else 0) for kind in range(R.NUM_KINDS)],
                         dtype=np.int64)  # a Dark card costs 1 HP to discard, so it counts as worth more
EQUIP_ACTIONS = np.array([R.EQUIP_INDEX[card] for card in R.EQUIP_KINDS], dtype=np.int64)
COMBOS_AT = np.array([[R.COMBO_INDEX.get((card, k), -1) for card in ATTACK_ORDER] for k in range(R.MAX_PLAYERS)],
                     dtype=np.int64)
ATTACKS_AT = np.array([[R.PLAY_AT_INDEX.get((card, k), -1) for card in ATTACK_ORDER]
                       for k in range(R.MAX_PLAYERS)], dtype=np.int64)
POISON_AT, HOOK_ROPE_AT, TRIP_ROPE_AT, FATE_AT = (
    np.array([R.PLAY_AT_INDEX.get((card, k), -1) for k in range(R.MAX_PLAYERS)], dtype=np.int64)
    for card in (R.POISON, R.HOOK_ROPE, R.TRIP_ROPE, R.FATE))
REMEDY_PLAY, POTION_PLAY, SCYTHE_PLAY, PLAGUE_SKULL_PLAY, DOOM_DRAGON_PLAY, MAGNIFYING_GLASS_PLAY = (
    R.PLAY_INDEX[card] for card in (R.REMEDY, R.POTION, R.SCYTHE, R.PLAGUE_SKULL, R.DOOM_DRAGON, R.MAGNIFYING_GLASS))
# Reactions by the size of the hit, in the bot's order of preference (-1 pads the shorter rows).
REACT_ORDERS = np.array([
    [R.CONFUSION_DUST, R.STEEL_SHIELD, R.BLADED_SHIELD, R.WOODEN_SHIELD, R.REMEDY],  # 3+ damage, or a 2+ combo
    [R.STEEL_SHIELD, R.BLADED_SHIELD, R.WOODEN_SHIELD, R.REMEDY, -1],  # 2
    [R.WOODEN_SHIELD, R.STEEL_SHIELD, R.REMEDY, R.BLADED_SHIELD, -1],  # 1
    [R.REMEDY, -1, -1, -1, -1],  # poison only
], dtype=np.int64)
REACT_CARD_ACTION = np.array([R.REACT_INDEX.get(kind, -1) for kind in range(R.NUM_KINDS)], dtype=np.int64)
HOOK_ROPE_ANSWER = R.REACT_INDEX[R.HOOK_ROPE]


# ``legal`` buffers hold the legal actions, then working space: the slots of a set's table and the set's order.
TABLE_AT = R.NUM_ACTIONS
TABLE_ROOM = 1024  # 141 actions never need more than 512 slots
ORDER_AT = TABLE_AT + TABLE_ROOM
LEGAL_BUFFER = ORDER_AT + R.NUM_ACTIONS


@K.inlined
def heuristic_set_insert(legal, mask, key):
    """Put ``key`` (an action, its own hash) into the table as CPython's set does: the home slot, up to 9 slots
    on where they fit, then the perturbed jump; slots hold the action + 1 (0: empty)."""
    i, perturb = key & mask, key
    while True:
        probes = 9 if i + 9 <= mask else 0
        slot = i
        while True:
            if legal[TABLE_AT + slot] == 0:
                legal[TABLE_AT + slot] = key + 1
                return
            if probes == 0:
                break
            probes -= 1
            slot += 1
        perturb >>= 5
        i = (i * 5 + 1 + perturb) & mask


@K.compiled
def heuristic_set_order(legal, count):
    """``legal[ORDER_AT:ORDER_AT + count]``: the ``count`` legal actions in the order CPython iterates
    ``set(legal)``, which the bot iterates where it takes the first of equally valued picks or forfeits.
    CPython 3.11's setobject.c: 8 slots to start; once 3/5 full, the next power of two above four times the
    entries, the old slots reinserted in table order."""
    size = 8
    for slot in range(size):
        legal[TABLE_AT + slot] = 0
    for k in range(count):
        heuristic_set_insert(legal, size - 1, legal[k])
        if (k + 1) * 5 >= (size - 1) * 3:
            held = 0
            for slot in range(size):
                if legal[TABLE_AT + slot]:
                    legal[ORDER_AT + held] = legal[TABLE_AT + slot] - 1
                    held += 1
            size = 8
            while size <= (k + 1) * 4:
                size <<= 1
            for slot in range(size):
                legal[TABLE_AT + slot] = 0
            for q in range(held):
                heuristic_set_insert(legal, size - 1, legal[ORDER_AT + q])
    held = 0
    for slot in range(size):
        if legal[TABLE_AT + slot]:
            legal[ORDER_AT + held] = legal[TABLE_AT + slot] - 1
            held += 1


@K.inlined
def heuristic_is_legal(legal, count, action):
    if action < 0:
        return False
    for i in range(count):
        if legal[i] == action:
            return True
    return False


@K.compiled
def heuristic_effective_hp(s, who):
    """HP as the observation gives it back (float32 of HP / hp_cap, times hp_cap), plus Armor."""
    hp_cap = s[K.OPT_HP_CAP]
    scaled = np.float64(np.float32(s[K.HP + who] * (1.0 / hp_cap))) * hp_cap
    return scaled + s[K.EQUIPMENT + who * 3 + R.ARMOR_SLOT]


@K.compiled
def heuristic_main(s, legal, count):
    seat, n = s[K.TURN_SEAT], s[K.N]
    hand = K.HANDS + seat * R.NUM_KINDS
    held = 0
    for kind in range(R.NUM_KINDS):
        held += s[hand + kind]
    my_hp, my_poison = s[K.HP + seat], s[K.POISON_TOKENS + seat]
    hp_cap, poison_limit = s[K.OPT_HP_CAP], s[K.OPT_POISON_LIMIT]
    for action in EQUIP_ACTIONS:
        if heuristic_is_legal(legal, count, action):
            return action
    if held <= 4 and heuristic_is_legal(legal, count, R.TOKEN_DRAW):
        return R.TOKEN_DRAW
    if my_poison >= 2 and heuristic_is_legal(legal, count, REMEDY_PLAY):
        return REMEDY_PLAY
    if my_hp <= hp_cap - 3 and heuristic_is_legal(legal, count, POTION_PLAY):
        return POTION_PLAY
    if heuristic_is_legal(legal, count, SCYTHE_PLAY):
        return SCYTHE_PLAY
    # The opponents, by offset: the weakest (least effective HP, then most poison) is the target; the first
    # of equals wins every tie, as min() and max() over the bot's list do.
    target, poisoned, strongest = 1, 1, 1
    target_hp, target_poison, most_poison, most_hp = 0.0, 0, -1, 0.0
    found, nearly_out = False, False
    for offset in range(1, n):
        who = K._around(seat + offset, n)
        if not s[K.ALIVE + who]:
            continue
        hp, poison = heuristic_effective_hp(s, who), s[K.POISON_TOKENS + who]
        if not found or hp < target_hp or (hp == target_hp and poison > target_poison):
            target, target_hp, target_poison = offset, hp, poison
        if not found or poison > most_poison:
            poisoned, most_poison = offset, poison
        if not found or hp > most_hp:
            strongest, most_hp = offset, hp
        nearly_out = nearly_out or poison + 1 >= poison_limit
        found = True
    if (heuristic_is_legal(legal, count, PLAGUE_SKULL_PLAY) and my_poison + 1 < poison_limit
            and nearly_out):
        return PLAGUE_SKULL_PLAY
    for action in COMBOS_AT[target]:
        if heuristic_is_legal(legal, count, action):
            return action
    for action in ATTACKS_AT[target]:
        if heuristic_is_legal(legal, count, action):
            return action
    if heuristic_is_legal(legal, count, POISON_AT[poisoned]):
        return POISON_AT[poisoned]
    if heuristic_is_legal(legal, count, HOOK_ROPE_AT[target]):
        return HOOK_ROPE_AT[target]
    if heuristic_is_legal(legal, count, DOOM_DRAGON_PLAY):
        return DOOM_DRAGON_PLAY
    if heuristic_is_legal(legal, count, TRIP_ROPE_AT[strongest]):
        return TRIP_ROPE_AT[strongest]
    if heuristic_is_legal(legal, count, MAGNIFYING_GLASS_PLAY):
        return MAGNIFYING_GLASS_PLAY
    if heuristic_is_legal(legal, count, FATE_AT[target]):
        return FATE_AT[target]
    if held <= 2 and heuristic_is_legal(legal, count, R.TOKEN_DRAW):
        return R.TOKEN_DRAW
    if my_hp < hp_cap and heuristic_is_legal(legal, count, POTION_PLAY):
        return POTION_PLAY
    cheapest, cheapest_worth = -1, 0
    heuristic_set_order(legal, count)
    for i in range(count):
        action = legal[ORDER_AT + i]
        if K.TYPE_OF[action] == R.FORFEIT:
            worth = FORFEIT_WORTH[K.CARD_OF[action]]
            if cheapest < 0 or worth < cheapest_worth:
                cheapest, cheapest_worth = action, worth
    if cheapest >= 0:
        return cheapest
    return legal[0]


@K.compiled
def heuristic_action(s, legal, count):
    """``HeuristicBot.act_state`` for the seat to act, from its ``count`` legal actions (ascending)."""
    if count == 1:
        return legal[0]
    phase = s[K.PHASE]
    hand = K.HANDS + s[K.TO_ACT] * R.NUM_KINDS
    if phase == R.DRAW_PHASE:  # draw on a full hand that holds nothing to stop a hit
        held = 0
        for kind in range(R.NUM_KINDS):
            held += s[hand + kind]
        defended = (s[hand + R.WOODEN_SHIELD] + s[hand + R.STEEL_SHIELD] + s[hand + R.BLADED_SHIELD]
                    + s[hand + R.CONFUSION_DUST]) > 0
        return R.TOKEN_DRAW if held >= s[K.OPT_HAND_SIZE] and not defended else R.TOKEN_PASS
    choice = legal[0]
    if phase == R.PICK_PHASE:  # keep the most valuable card (the first of equals, in the set's order)
        best = -1
        heuristic_set_order(legal, count)
        for i in range(count):
            worth = CARD_WORTH[K.CARD_OF[legal[ORDER_AT + i]]]
            if worth > best:
                choice, best = legal[ORDER_AT + i], worth
    elif phase == R.ANSWER:
        choice = HOOK_ROPE_ANSWER
    elif phase == R.REACT_PHASE:
        damage = min(s[K.DAMAGE], 10)  # the observation caps damage at 10
        if damage >= 3 or (s[K.COMBO_FLAG] and damage >= 2):
            order = 0
        elif damage == 2:
            order = 1
        elif damage == 1:
            order = 2
        else:
            order = 3 if s[K.POISONS] else -1
        choice = R.REACT_NONE
        if order >= 0:
            for card in REACT_ORDERS[order]:
                if card >= 0 and heuristic_is_legal(legal, count, REACT_CARD_ACTION[card]):
                    choice = REACT_CARD_ACTION[card]
                    break
    else:
        choice = heuristic_main(s, legal, count)
    return choice if heuristic_is_legal(legal, count, choice) else legal[0]


@K.compiled
def heuristic_opponent(s, legal, count, policy_state):
    """:func:`heuristic_action` as a vector env's opponent decides (it draws nothing from ``policy_state``)."""
    return heuristic_action(s, legal, count)


HEURISTIC = Opponent("heuristic", heuristic_opponent, legal_room=LEGAL_BUFFER)


@K.compiled_allocating
def heuristic_rollouts(states, chances, max_steps, values, steps):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(K.MT_SIZE, dtype=np.uint32)
    legal = np.empty(LEGAL_BUFFER, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        row[K.TRACK_KNOWN] = 0  # neither the rules nor the heuristic read the hand memory
        mt[:] = chances[g]
        taken = 0
        while row[K.PHASE] != R.GAME_OVER and taken < max_steps:
            count = K.legal_actions(row, legal)
            K.apply_legal(row, mt, heuristic_action(row, legal, count))
            taken += 1
        K.game_returns(row, values[g])
        steps[g] = taken


def heuristic_move(batch: K.Batch, game: int) -> int:
    """The heuristic's move in game ``game`` of ``batch`` (for tests and single decisions)."""
    K.compile_kernel()
    legal = np.empty(LEGAL_BUFFER, dtype=np.int64)
    row = batch.state[game]
    return int(_heuristic_one(row, legal))


@K.compiled
def _heuristic_one(row, legal):
    return heuristic_action(row, legal, K.legal_actions(row, legal))


def rollout_heuristic(batch: K.Batch, max_steps: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_steps`` more decisions) with every seat the heuristic,
    in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)`` as ``kernel.rollout_random``."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 0:
        raise ValueError(f"max_steps must be a non-negative integer, got {max_steps!r}")
    reason = K.unsupported()
    if reason is not None:
        raise ValueError(f"the MiniSteel kernel is unavailable: {reason}")
    K.compile_kernel()
    values = np.zeros((len(batch), R.MAX_PLAYERS), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    heuristic_rollouts(batch.state, batch.chance, int(max_steps), values, steps)
    return values, steps


# --- search: mcts's simulations in compiled code (agents/mcts_kernel.py) ------------------------------------------

from . import mcts_kernel as T  # noqa: E402 - kept with the section it serves
from .ministeel import SEARCH, HeuristicBot  # noqa: E402

HEURISTIC_POLICY = 1  # the heuristic's code among the kernel's policies (mcts_kernel.RANDOM: random moves)
VALUE_SCALE = 10.0  # agents/ministeel.py ``_value``: the lead in HP that counts as a sure win


def _search_argument_types() -> dict:
    return {**K._argument_types(), **T._argument_types(), "info": K._argument_types()["row"]}


SEARCH_FUNCTIONS = K.Kernel(_search_argument_types, includes=(K.KERNEL, T.TREE))


@K.compiled
def ministeel_value(s, values_row):
    """``agents.ministeel._value`` (``lead_values`` of HP less twice the Poison, -100 when out) into
    ``values_row``; the same floats (tests/test_search_kernel.py checks)."""
    n = s[K.N]
    strength = K.SCRATCH_SEATS
    for seat in range(n):
        s[strength + seat] = s[K.HP + seat] - 2 * s[K.POISON_TOKENS + seat] if s[K.ALIVE + seat] else -100
    leader = 0
    for seat in range(1, n):
        if s[strength + seat] > s[strength + leader]:
            leader = seat
    runner_up = -(1 << 62)
    for seat in range(n):
        if seat != leader and s[strength + seat] > runner_up:
            runner_up = s[strength + seat]
    top = s[strength + leader]
    for seat in range(n):
        lead = (s[strength + seat] - (runner_up if seat == leader else top)) / VALUE_SCALE
        values_row[seat] = 1.0 if lead >= 1.0 else -1.0 if lead <= -1.0 else lead


@SEARCH_FUNCTIONS.inlined
def _policy_move(s, rng, legal, count, code):
    """The move of the rollout policy ``code``: the heuristic's, or ``rng.randrange`` of the legal ones."""
    if code == HEURISTIC_POLICY:
        return heuristic_action(s, legal, count)
    return legal[T.randbelow(rng, count)]


@SEARCH_FUNCTIONS.compiled_allocating
def ministeel_simulations(info, seat, mt, rng, nodes, totals, children, counts, sims, explore, depth, rollout,
                          others, prior):
    """``sims`` simulations of ``MCTSBot._simulate`` (agents/mcts_kernel.py ``GameSearchKernel``): determinize,
    walk the tree (the prior asked at a node's first visit), roll out to the end or ``depth`` decisions,
    score (``rules.returns`` at the end, else ``_value``), back up."""
    sample = np.zeros(K.ROW_SIZE, dtype=np.int64)
    cards = np.empty(K.POOL_ROOM, dtype=np.int64)
    legal = np.empty(LEGAL_BUFFER, dtype=np.int64)
    values_row = np.zeros(R.MAX_PLAYERS, dtype=np.float64)
    path = np.empty(info[K.OPT_MAX_DECISIONS] - info[K.DECISIONS] + 2, dtype=np.int64)
    n = info[K.N]
    for _ in range(sims):
        K.determinize(info, seat, mt, sample, cards)
        node, length = 0, 1
        path[0] = 0
        while sample[K.PHASE] != R.GAME_OVER:
            count = K.legal_actions(sample, legal)
            if nodes[node, T.PRIOR] == T.NOT_ASKED:
                nodes[node, T.PRIOR] = (heuristic_action(sample, legal, count) if prior == HEURISTIC_POLICY
                                        else T.NO_PRIOR)
            action, node, expanded = T.tree_step(nodes, totals, children, counts, rng, node, sample[K.TO_ACT], legal,
                                                 count, explore)
            K.apply_legal(sample, mt, action)
            path[length] = node
            length += 1
            if expanded:
                break
        steps = 0
        while sample[K.PHASE] != R.GAME_OVER and (depth == 0 or steps < depth):
            count = K.legal_actions(sample, legal)
            policy = rollout if sample[K.TO_ACT] == seat else others
            K.apply_legal(sample, mt, _policy_move(sample, rng, legal, count, policy))
            steps += 1
        if sample[K.PHASE] == R.GAME_OVER:
            K.game_returns(sample, values_row)
        else:
            ministeel_value(sample, values_row)
        T.tree_backup(nodes, totals, path, length, values_row, n)


def _unsupported(config: R.ConfigV1) -> str | None:
    return K.unsupported(config)


# --- search with a network's priors and values (agents/mcts_kernel_network.py) -----------------------------------

from ..envs.ministeel import kernel_encode as E  # noqa: E402 - kept with the section it serves
from . import mcts_kernel_network as N  # noqa: E402

MEMORY = K.KNOWN + K.P * K.P * R.NUM_KINDS  # the end of the rows of what each seat remembers


def _network_argument_types() -> dict:
    return {**_search_argument_types(), **E._argument_types(), **N._argument_types()}


NETWORK_FUNCTIONS = K.Kernel(_network_argument_types, includes=(SEARCH_FUNCTIONS, E.ENCODER, N.NETWORK_TREE))


@NETWORK_FUNCTIONS.compiled
def _network_advance(seat, mt, rng, nodes, totals, children, counts, priors, explore, puct, depth, rollout, others,
                     prior, value_net, virtual, sample, path, slot, legal, values_row, prior_observation, prior_mask,
                     value_observations, estimates_row, k):
    """The simulation in slot ``k`` goes on (``MCTSBot._simulate``) from where it was parked (a new one from its
    sample's root) to its next question to the network or to its backup; 1 when it was backed up."""
    n = sample[K.N]
    node, length = slot[N.NODE], slot[N.LENGTH]
    if slot[N.STATE] != N.FREE and virtual:
        N.tree_virtual_loss(nodes, totals, path, length, n, -1)
    if slot[N.STATE] == N.WANTS_VALUE:  # the value network's answer
        for who in range(n):
            values_row[who] = estimates_row[who]
        T.tree_backup(nodes, totals, path, length, values_row, n)
        slot[N.STATE] = N.FREE
        return 1
    steps = 0
    rolling = slot[N.STATE] == N.WANTS_MOVE or slot[N.STATE] == N.WANTS_OTHERS_MOVE
    if rolling:  # a rollout network's move: the rollout goes on
        K.apply_legal(sample, mt, slot[N.MOVE])
        steps = slot[N.STEPS] + 1
    while not rolling and sample[K.PHASE] != R.GAME_OVER:
        count = K.legal_actions(sample, legal)
        asked = nodes[node, T.PRIOR]
        if asked == T.NOT_ASKED:
            if prior == N.NETWORK:  # park: the prior network answers for the seat to act
                E.encode_row(sample, sample[K.TO_ACT], prior_observation)
                prior_mask[:] = 0
                for i in range(count):
                    prior_mask[legal[i]] = 1
                nodes[node, T.PRIOR] = N.PRIOR_PENDING
                return _network_park(nodes, totals, path, length, slot, node, N.WANTS_PRIOR, virtual, n)
            nodes[node, T.PRIOR] = heuristic_action(sample, legal, count) if prior == HEURISTIC_POLICY else T.NO_PRIOR
        elif asked == N.PRIOR_PENDING:  # another slot asked: wait for its answer
            return _network_park(nodes, totals, path, length, slot, node, N.WAITS, virtual, n)
        if nodes[node, T.PRIOR] == N.PRIOR_PROBABILITIES:
            action, node, expanded = N.tree_puct_step(nodes, totals, children, counts, priors, node, sample[K.TO_ACT],
                                                      legal, count, puct)
        else:
            action, node, expanded = T.tree_step(nodes, totals, children, counts, rng, node, sample[K.TO_ACT], legal,
                                                 count, explore)
        K.apply_legal(sample, mt, action)
        path[length] = node
        length += 1
        if expanded:
            break
    while sample[K.PHASE] != R.GAME_OVER and (depth == 0 or steps < depth) and not (value_net and depth == 0):
        count = K.legal_actions(sample, legal)
        policy = rollout if sample[K.TO_ACT] == seat else others
        if policy != N.NETWORK:
            action = _policy_move(sample, rng, legal, count, policy)
        elif count == 1:  # a forced move: the network is not asked
            action = legal[0]
        else:  # park: the rollout network moves for the seat to act
            E.encode_row(sample, sample[K.TO_ACT], prior_observation)
            asking = N.ask_move(prior_mask, legal, count, slot, steps, seat, sample[K.TO_ACT])
            return _network_park(nodes, totals, path, length, slot, node, asking, virtual, n)
        K.apply_legal(sample, mt, action)
        steps += 1
    if sample[K.PHASE] == R.GAME_OVER:
        K.game_returns(sample, values_row)
    elif value_net:  # park: the value network answers from every seat's observation
        for who in range(n):
            E.encode_row(sample, who, value_observations[k * n + who])
        return _network_park(nodes, totals, path, length, slot, node, N.WANTS_VALUE, virtual, n)
    else:
        ministeel_value(sample, values_row)
    T.tree_backup(nodes, totals, path, length, values_row, n)
    slot[N.STATE] = N.FREE
    return 1


@NETWORK_FUNCTIONS.inlined
def _network_park(nodes, totals, path, length, slot, node, state, virtual, n):
    slot[N.STATE], slot[N.NODE], slot[N.LENGTH] = state, node, length
    if virtual:
        N.tree_virtual_loss(nodes, totals, path, length, n, 1)
    return 0


@NETWORK_FUNCTIONS.compiled_allocating
def ministeel_network_simulations(info, seat, mt, rng, nodes, totals, children, counts, priors, sims, explore, puct,
                                  depth, rollout, others, prior, value_net, virtual, samples, paths, slots,
                                  prior_observations, prior_masks, value_observations, probabilities, estimates,
                                  progress, tables):
    """``ministeel_simulations`` where a network answers (agents/mcts_kernel_network.py): the last batch's priors
    into the tree, every parked simulation on, then new ones (``progress[STARTED]`` up to ``sims``) into the free
    slots, each to its end or its question. A sample keeps the seat's memory as ``rules.determinize`` leaves it
    (its own rows; the others' empty) and tracks it, so that the compiled encoder writes the observation
    ``encode.py`` writes of the Python search's sample. ``tables``: none (MiniSteel's encoder reads no table)."""
    legal = np.empty(LEGAL_BUFFER, dtype=np.int64)
    cards = np.empty(K.POOL_ROOM, dtype=np.int64)
    values_row = np.zeros(R.MAX_PLAYERS, dtype=np.float64)
    batch = slots.shape[0]
    for k in range(batch):
        if slots[k, N.STATE] == N.WANTS_PRIOR:
            count = K.legal_actions(samples[k], legal)
            N.tree_set_priors(nodes, children, counts, priors, slots[k, N.NODE], legal, count, probabilities[k])
    for k in range(batch):
        if slots[k, N.STATE] != N.FREE:
            progress[N.FINISHED] += _network_advance(
                seat, mt, rng, nodes, totals, children, counts, priors, explore, puct, depth, rollout, others, prior,
                value_net, virtual, samples[k], paths[k], slots[k], legal, values_row, prior_observations[k],
                prior_masks[k], value_observations, estimates[k], k)
    for k in range(batch):
        while slots[k, N.STATE] == N.FREE and progress[N.STARTED] < sims:
            sample = samples[k]
            K.determinize(info, seat, mt, sample, cards)
            sample[K.TRACK_KNOWN] = 1
            for i in range(K.KNOWN, MEMORY):
                sample[i] = info[i]
            paths[k, 0] = 0
            slots[k, N.NODE], slots[k, N.LENGTH] = 0, 1
            progress[N.STARTED] += 1
            progress[N.FINISHED] += _network_advance(
                seat, mt, rng, nodes, totals, children, counts, priors, explore, puct, depth, rollout, others, prior,
                value_net, virtual, sample, paths[k], slots[k], legal, values_row, prior_observations[k],
                prior_masks[k], value_observations, estimates[k], k)


SEARCH_KERNEL = T.GameSearchKernel(
    title="MiniSteel", policies={HeuristicBot: HEURISTIC_POLICY}, value=SEARCH.value, actions=R.NUM_ACTIONS,
    unsupported=_unsupported, information_row=K.information_row, simulations=ministeel_simulations,
    compile=SEARCH_FUNCTIONS.compile, network_simulations=ministeel_network_simulations,
    network_compile=NETWORK_FUNCTIONS.compile)
