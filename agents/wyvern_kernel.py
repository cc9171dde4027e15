"""Wyvern's heuristic bot inside the compiled kernel: whole heuristic rollouts in one call (for search).

:class:`agents.wyvern.HeuristicBot` stays the reference: :func:`heuristic_action` follows its ``act_state``
decision by decision (the facts of ``_Context.from_state``, clipped as the observation clips them; the same
order of rules; the same ties: ``max`` and ``min`` keep the first of equals in ascending action order or
seat order, as over the bot's lists), and tests/test_kernel_wyvern.py plays seeded heuristic games both ways
and checks every decision and the returns. It reads only what the seat's observation shows, as the bot
does.

``HEURISTIC`` is the bot as an opponent of the vector env (``tavernzoo.envs.wyvern.vector_env(...,
opponent=HEURISTIC)``): the learner's opponents play the heuristic inside the env's compiled step.

``rollout_heuristic(batch, max_steps)`` plays a copy of every game of a kernel batch (envs/wyvern/kernel.py)
to its end with every seat the heuristic, inside compiled code, and returns ``(returns, steps)`` like
``kernel.rollout_random``. The heuristic draws no random numbers: the games differ only by their chance.
"""

from __future__ import annotations

import numpy as np

from ..envs.batched import Opponent
from ..envs.wyvern import kernel as K
from ..envs.wyvern import rules as R
from .wyvern import _KEEP

# The heuristic's tables as arrays numba freezes into the compiled code.
KEEP_VALUE = np.array([-1.0 if value is None else value for value in _KEEP], dtype=np.float64)  # -1: a monster
DRAINS = np.array([R.CATALOG[cid].effect == "lose_level" for cid in range(R.NUM_CARDS)], dtype=np.int64)
NO_SEAT = -1  # ``None`` of the bot's facts (no asker, no demand)


@K.inlined
def heuristic_is_legal(legal, count, action):
    for i in range(count):
        if legal[i] == action:
            return True
    return False


# --- the facts (agents/wyvern.py, _Context.from_state): seats by their offset from the seat deciding ----------


@K.inlined
def heuristic_who(s, seat, offset):
    return K._around(seat + offset, s[K.N])


@K.inlined
def heuristic_level(s, seat, offset):
    return s[K.LEVEL + heuristic_who(s, seat, offset)]


@K.compiled
def heuristic_combat(s, seat, offset):
    """A seat's combat level, without a fight's situational bonuses, clipped to 0..50 as the observation."""
    value = K.combat_level(s, heuristic_who(s, seat, offset), -1, False)
    return 50 if value > 50 else value if value > 0 else 0


@K.compiled
def heuristic_leader(s, seat):
    """The first of the others at the top level; between several, the first of the highest combat levels."""
    n = s[K.N]
    top, leader, tied = -1, 0, 0
    for offset in range(1, n):
        level = heuristic_level(s, seat, offset)
        if level > top:
            top, leader, tied = level, offset, 1
        elif level == top:
            tied += 1
    if tied == 1:
        return leader
    best = -1
    for offset in range(1, n):
        if heuristic_level(s, seat, offset) == top:
            combat = heuristic_combat(s, seat, offset)
            if combat > best:
                leader, best = offset, combat
    return leader


@K.inlined
def in_fight(s):
    phase = s[K.PHASE]
    return s[K.MONSTER] >= 0 and (phase == R.WINDOW or phase == R.ASK or phase == R.COUNTER)


@K.compiled
def heuristic_max_pay(s, seat):
    """The most treasures the fighter (the seat deciding) gives away: all but one, all when the win ends the game."""
    treasures = K.CARD_TREASURES[s[K.MONSTER]]
    if s[K.LEVEL + seat] + min(K.CARD_LEVELS[s[K.MONSTER]], 3) >= s[K.OPT_WIN_LEVEL]:
        return treasures
    return max(1, treasures - 1)


@K.compiled
def heuristic_demand(s, seat, fighter):
    """The seat's price for helping the fighter (at offset ``fighter``); NO_SEAT: it will not help."""
    mine, theirs = s[K.LEVEL + seat], heuristic_level(s, seat, fighter)
    if theirs + min(K.CARD_LEVELS[s[K.MONSTER]], 3) >= s[K.OPT_WIN_LEVEL]:
        return NO_SEAT  # never help someone to the win
    if theirs > mine + 4:
        return NO_SEAT  # do not carry the leader
    if s[K.RACES + seat] == R.ELF:
        return 0
    treasures = K.CARD_TREASURES[s[K.MONSTER]]
    demand = (treasures + 1) // 2
    if theirs >= mine:
        demand += 1
    return min(demand, treasures)


# --- the decisions (HeuristicBot's methods of the same names) --------------------------------------------------


@K.compiled
def heuristic_discard(s, seat, legal, count):
    """The card least worth keeping (the lowest action on a tie)."""
    mine = heuristic_combat(s, seat, 0)
    best, best_value = -1, 0.0
    for i in range(count):
        action = legal[i]
        cid = K.ACTION_CARD[action]
        value = KEEP_VALUE[cid]
        if K.IS_MONSTER[cid]:
            value = 6.0 if K.CARD_LEVEL[cid] + 3 <= mine else 0.5
        if best < 0 or value < best_value:
            best, best_value = action, value
    return best


@K.compiled
def heuristic_curse_leader(s, seat, legal, count):
    """Backstab: curse the leader when they are at least level with us; -1: no curse."""
    n, mine = s[K.N], s[K.LEVEL + seat]
    top = -1
    for offset in range(1, n):
        top = max(top, heuristic_level(s, seat, offset))
    if top < mine:
        return -1
    target = heuristic_leader(s, seat)
    if s[K.DEAD + heuristic_who(s, seat, target)] or heuristic_level(s, seat, target) < mine:
        return -1
    best, best_drain = -1, -1
    for i in range(count):
        action = legal[i]
        if K.ACTION_KIND[action] == R.K_CURSE and K.ACTION_ARG[action] == target:
            drain = DRAINS[K.ACTION_CARD[action]]
            if drain >= best_drain:  # max by (drains a level, action): the later of equals
                best, best_drain = action, drain
    return best


@K.compiled
def heuristic_sale(s, seat, legal, count):
    """Sell items that cannot be worn when together they buy a level this turn; -1: no sale."""
    one_shots = False
    for i in range(count):
        action = legal[i]
        if K.ACTION_KIND[action] == R.K_SELL and not K.IS_EQUIPMENT[K.ACTION_CARD[action]]:
            one_shots = True
    held = 0
    if one_shots:  # the cards in hand, each kind counted up to 4, as the observation's hand slots hold them
        hand, held_cards = K.HAND + seat * K.HAND_ROOM, s[K.HAND_LEN + seat]
        distinct = K.distinct_cards(s, hand, held_cards)
        for i in range(distinct):
            cid = s[K.DISTINCT + i]
            s[K.DISTINCT + i] = 0
            copies = 0
            for j in range(held_cards):
                if s[hand + j] == cid:
                    copies += 1
            held += min(4, copies)
    with_one_shots = one_shots and held > 3  # more than we can use: one-shots become sale goods too
    value, best = 0, -1
    for i in range(count):
        action = legal[i]
        if K.ACTION_KIND[action] != R.K_SELL:
            continue
        cid = K.ACTION_CARD[action]
        if K.IS_EQUIPMENT[cid]:
            if heuristic_is_legal(legal, count, K.EQUIP_ACTION[cid]):
                continue  # it can be worn
        elif not with_one_shots:
            continue
        value += K.CARD_GOLD[cid]
        if best < 0 or K.CARD_GOLD[cid] >= K.CARD_GOLD[K.ACTION_CARD[best]]:
            best = action  # max by (gold, action)
    price = s[K.OPT_GOLD_PER_LEVEL]
    gold = min(s[K.GOLD], price)
    if best >= 0 and gold + value * (2 if s[K.RACES + seat] == R.HALFLING else 1) >= price:
        return best
    return -1


@K.compiled
def heuristic_own_turn(s, seat, legal, count):
    best_equip, curses, best_fight = -1, False, -1
    mine = -1
    for i in range(count):
        action = legal[i]
        kind = K.ACTION_KIND[action]
        cid = K.ACTION_CARD[action]
        if kind == R.K_EQUIP:  # max by (bonus, run, action): the later of equals
            if best_equip < 0 or K.CARD_BONUS[cid] > K.CARD_BONUS[K.ACTION_CARD[best_equip]] or (
                    K.CARD_BONUS[cid] == K.CARD_BONUS[K.ACTION_CARD[best_equip]]
                    and K.CARD_RUN[cid] >= K.CARD_RUN[K.ACTION_CARD[best_equip]]):
                best_equip = action
        elif kind == R.K_CURSE:
            curses = True
        elif kind == R.K_FIGHT:  # a monster beaten with 3 to spare; max by (level, action)
            if mine < 0:
                mine = heuristic_combat(s, seat, 0)
            if K.CARD_LEVEL[cid] + 3 <= mine and (
                    best_fight < 0 or K.CARD_LEVEL[cid] >= K.CARD_LEVEL[K.ACTION_CARD[best_fight]]):
                best_fight = action
    if best_equip >= 0:
        return best_equip
    if curses:
        curse = heuristic_curse_leader(s, seat, legal, count)
        if curse >= 0:
            return curse
    if best_fight >= 0:
        return best_fight
    sale = heuristic_sale(s, seat, legal, count)
    if sale >= 0:
        return sale
    return R.A_PASS


@K.compiled
def heuristic_offer(s, seat, legal, count, gap):
    """Open at half the treasures to the strongest player who turns the fight and was not yet asked; -1: none."""
    n = s[K.N]
    treasures = K.CARD_TREASURES[s[K.MONSTER]]
    most, least = heuristic_max_pay(s, seat), treasures // 2
    win = s[K.OPT_WIN_LEVEL]
    best, best_combat, best_level = -1, 0, 0
    for offset in range(1, n):
        cheapest = -1  # the cheapest offer to this seat in the range: the first, actions ascending
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] == R.K_OFFER and K.ACTION_ARG[action] // 100 == offset:
                split = K.ACTION_ARG[action] % 100
                if least <= split <= most:
                    cheapest = action
                    break
        if cheapest < 0:
            continue
        who = heuristic_who(s, seat, offset)
        level = s[K.LEVEL + who]
        if level + 1 >= win or s[K.OFFERS_TO + who] > 0:  # no elf friend to the win; talked already
            continue
        combat = heuristic_combat(s, seat, offset)
        if combat < gap:
            continue
        if best < 0 or combat > best_combat or (combat == best_combat and -level > -best_level):
            best, best_combat, best_level = cheapest, combat, level
    return best


@K.compiled
def heuristic_window(s, seat, legal, count):
    party_strength, monster_strength = K.party_strength(s), K.monster_strength(s)
    winning = K.party_beats(s, party_strength, monster_strength)
    party = min(100, max(0, party_strength))
    monster = min(100, max(0, monster_strength))
    fighter_seat = s[K.FIGHTER]
    if fighter_seat == seat:
        if winning:
            return R.A_PASS
        if heuristic_is_legal(legal, count, R.A_SUMMON_AID):
            return R.A_SUMMON_AID
        best = -1  # max party one-shot by (bonus, action)
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] == R.K_USE_PARTY and K.CARD_BONUS[K.ACTION_CARD[action]] > 0:
                if best < 0 or K.CARD_BONUS[K.ACTION_CARD[action]] >= K.CARD_BONUS[K.ACTION_CARD[best]]:
                    best = action
        if best >= 0:
            return best
        offer = heuristic_offer(s, seat, legal, count, monster - party + 1)
        if offer >= 0:
            return offer
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] == R.K_USE_PARTY and K.CARD_RUN[K.ACTION_CARD[action]] > 0:
                return action
        return R.A_RUN if heuristic_is_legal(legal, count, R.A_RUN) else R.A_PASS
    if s[K.HELPER] == seat:
        if not winning:
            best = -1
            for i in range(count):
                action = legal[i]
                if K.ACTION_KIND[action] == R.K_USE_PARTY and K.CARD_BONUS[K.ACTION_CARD[action]] > 0:
                    if best < 0 or K.CARD_BONUS[K.ACTION_CARD[action]] >= K.CARD_BONUS[K.ACTION_CARD[best]]:
                        best = action
            if best >= 0:
                return best
        return R.A_PASS
    # Someone else fights: backstab the leader, or anyone about to win (a threat).
    fighter = (fighter_seat - seat) % s[K.N] if fighter_seat >= 0 else 0
    mine, theirs = s[K.LEVEL + seat], heuristic_level(s, seat, fighter)
    about_to_win = theirs + min(K.CARD_LEVELS[s[K.MONSTER]], 3) >= s[K.OPT_WIN_LEVEL]
    if not winning:
        if (s[K.ASKS_FROM + seat] == 0 and not about_to_win and heuristic_combat(s, seat, 0) > monster - party
                and not (theirs >= mine and fighter == heuristic_leader(s, seat))):
            demand = heuristic_demand(s, seat, fighter)  # a losing fighter we could save: offer ourselves
            if demand != NO_SEAT and heuristic_is_legal(legal, count, R.ASK_ACTION0 + demand):
                return R.ASK_ACTION0 + demand
        return R.A_PASS
    if about_to_win:
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] == R.K_CURSE and K.ACTION_ARG[action] == fighter:
                return action
    hits = False
    for i in range(count):
        if K.ACTION_KIND[legal[i]] == R.K_USE_MONSTER:
            hits = True
            break
    join = heuristic_is_legal(legal, count, R.A_SUMMON_JOIN)
    if (join or hits) and (about_to_win or (theirs >= mine and fighter == heuristic_leader(s, seat))):
        if join:
            return R.A_SUMMON_JOIN
        need = party - monster + 1
        enough, strongest = -1, -1  # min of those enough by (bonus, action); else max of all by (bonus, action)
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] != R.K_USE_MONSTER:
                continue
            bonus = K.CARD_BONUS[K.ACTION_CARD[action]]
            if bonus >= need and (enough < 0 or bonus < K.CARD_BONUS[K.ACTION_CARD[enough]]):
                enough = action
            if strongest < 0 or bonus >= K.CARD_BONUS[K.ACTION_CARD[strongest]]:
                strongest = action
        return enough if enough >= 0 else strongest
    return R.A_PASS


@K.compiled
def heuristic_answer_ask(s, seat, legal, count):
    """I fight and a would-be helper named a price: take it, meet it part way, or refuse."""
    asker_seat = s[K.ASK_SEAT]
    party_strength, monster_strength = K.party_strength(s), K.monster_strength(s)
    winning = K.party_beats(s, party_strength, monster_strength)
    party, monster = min(100, max(0, party_strength)), min(100, max(0, monster_strength))
    if asker_seat < 0 or winning:
        return R.A_DECLINE
    asker = (asker_seat - seat) % s[K.N]
    if heuristic_combat(s, seat, asker) < monster - party + 1:
        return R.A_DECLINE
    if s[K.LEVEL + asker_seat] + 1 >= s[K.OPT_WIN_LEVEL] and s[K.RACES + asker_seat] == R.ELF:
        return R.A_DECLINE
    most = heuristic_max_pay(s, seat)
    if s[K.BID] <= most:
        return R.A_ACCEPT
    better = -1
    for i in range(count):
        action = legal[i]
        if K.ACTION_KIND[action] == R.K_OFFER and K.ACTION_ARG[action] % 100 <= most:
            better = action  # the highest, actions ascending
    return better if better >= 0 else R.A_DECLINE


@K.compiled
def heuristic_answer(s, seat, legal, count):
    """I was offered treasures for help: accept what meets my price, else counter with it."""
    split = s[K.ASK_SPLIT]
    fighter = (s[K.FIGHTER] - seat) % s[K.N] if s[K.FIGHTER] >= 0 else 0
    demand = heuristic_demand(s, seat, fighter)
    if demand == NO_SEAT:
        return R.A_DECLINE
    if split >= demand:
        return R.A_ACCEPT
    best, distance = -1, 0
    for i in range(count):
        action = legal[i]
        if K.ACTION_KIND[action] == R.K_ASK:
            gap = abs(K.ACTION_ARG[action] - demand)
            if best < 0 or gap < distance:
                best, distance = action, gap
    if best >= 0:
        return best
    return R.A_ACCEPT if split >= 1 else R.A_DECLINE


@K.compiled
def heuristic_action(s, legal, count):
    """``HeuristicBot.act_state`` for the seat to act, from its ``count`` legal actions (ascending)."""
    if count == 1:
        return legal[0]
    phase, seat = s[K.PHASE], s[K.TO_ACT]
    if phase == R.WINDOW:
        choice = heuristic_window(s, seat, legal, count)
    elif phase == R.ASK:
        choice = heuristic_answer(s, seat, legal, count) if in_fight(s) else R.A_DECLINE
    elif phase == R.COUNTER:
        choice = heuristic_answer_ask(s, seat, legal, count)
    elif phase == R.LOOT_ORDER:  # the least threatening player loots first: min by (level, offset)
        choice, lowest = legal[0], heuristic_level(s, seat, K.ACTION_ARG[legal[0]])
        for i in range(1, count):
            level = heuristic_level(s, seat, K.ACTION_ARG[legal[i]])
            if level < lowest:
                choice, lowest = legal[i], level
    elif phase == R.LOOT_PICK:
        choice = -1  # max item by (bonus, gold): the first of equals
        for i in range(count):
            action = legal[i]
            if K.ACTION_KIND[action] == R.K_LOOT:
                cid = K.ACTION_CARD[action]
                if choice < 0:
                    choice = action
                else:
                    best = K.ACTION_CARD[choice]
                    if K.CARD_BONUS[cid] > K.CARD_BONUS[best] or (
                            K.CARD_BONUS[cid] == K.CARD_BONUS[best] and K.CARD_GOLD[cid] > K.CARD_GOLD[best]):
                        choice = action
        if choice < 0:
            choice = R.A_LOOT_HAND if heuristic_is_legal(legal, count, R.A_LOOT_HAND) else R.A_DECLINE
    elif phase == R.DISCARD:
        choice = heuristic_discard(s, seat, legal, count)
    else:
        choice = heuristic_own_turn(s, seat, legal, count)
    return choice if heuristic_is_legal(legal, count, choice) else legal[0]


@K.compiled
def heuristic_opponent(s, legal, count, policy_state):
    """:func:`heuristic_action` as a vector env's opponent decides (it draws nothing from ``policy_state``)."""
    return heuristic_action(s, legal, count)


HEURISTIC = Opponent("heuristic", heuristic_opponent, legal_room=R.NUM_ACTIONS)


@K.compiled_allocating
def heuristic_rollouts(states, chances, max_steps, values, steps):
    row = np.empty(states.shape[1], dtype=np.int64)
    mt = np.empty(K.MT_SIZE, dtype=np.uint32)
    legal = np.empty(R.NUM_ACTIONS, dtype=np.int64)
    for g in range(states.shape[0]):
        row[:] = states[g]
        mt[:] = chances[g]
        taken = 0
        while row[K.PHASE] != R.OVER and taken < max_steps:
            count = K.legal_actions(row, legal)
            K.apply_legal(row, mt, heuristic_action(row, legal, count))
            taken += 1
        K.game_returns(row, values[g])
        steps[g] = taken


@K.compiled
def _heuristic_one(row, legal):
    return heuristic_action(row, legal, K.legal_actions(row, legal))


def heuristic_move(batch: K.Batch, game: int) -> int:
    """The heuristic's move in game ``game`` of ``batch`` (for tests and single decisions)."""
    K.compile_kernel()
    legal = np.empty(R.NUM_ACTIONS, dtype=np.int64)
    return int(_heuristic_one(batch.state[game], legal))


def rollout_heuristic(batch: K.Batch, max_steps: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Play a copy of every game to its end (or ``max_steps`` more decisions) with every seat the heuristic,
    in compiled code; ``batch`` is left as it was. Returns ``(returns, steps)`` as ``kernel.rollout_random``."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 0:
        raise ValueError(f"max_steps must be a non-negative integer, got {max_steps!r}")
    reason = K.unsupported()
    if reason is not None:
        raise ValueError(f"the Wyvern kernel is unavailable: {reason}")
    K.compile_kernel()
    values = np.zeros((len(batch), R.MAX_PLAYERS), dtype=np.float64)
    steps = np.zeros(len(batch), dtype=np.int64)
    heuristic_rollouts(batch.state, batch.chance, int(max_steps), values, steps)
    return values, steps


# --- search: mcts's simulations in compiled code (agents/mcts_kernel.py) ------------------------------------------

from . import mcts_kernel as T  # noqa: E402 - kept with the section it serves
from .wyvern import SEARCH, HeuristicBot  # noqa: E402

HEURISTIC_POLICY = 1  # the heuristic's code among the kernel's policies (mcts_kernel.RANDOM: random moves)


def _search_argument_types() -> dict:
    return {**K._deal_argument_types(), **T._argument_types(), "info": K._argument_types()["row"]}


SEARCH_FUNCTIONS = K.Kernel(_search_argument_types, includes=(K.DEAL, T.TREE))


@K.compiled
def wyvern_value(s, values_row):
    """``agents.wyvern._value`` (``lead_values`` of the levels, the win level the scale) into ``values_row``;
    the same floats (tests/test_search_kernel_wyvern.py checks)."""
    n = s[K.N]
    leader = 0
    for seat in range(1, n):
        if s[K.LEVEL + seat] > s[K.LEVEL + leader]:
            leader = seat
    runner_up = -(1 << 62)
    for seat in range(n):
        if seat != leader and s[K.LEVEL + seat] > runner_up:
            runner_up = s[K.LEVEL + seat]
    top, scale = s[K.LEVEL + leader], np.float64(s[K.OPT_WIN_LEVEL])
    for seat in range(n):
        lead = np.float64(s[K.LEVEL + seat] - (runner_up if seat == leader else top)) / scale
        values_row[seat] = 1.0 if lead >= 1.0 else -1.0 if lead <= -1.0 else lead


@SEARCH_FUNCTIONS.inlined
def _policy_move(s, rng, legal, count, code):
    """The move of the rollout policy ``code``: the heuristic's, or ``rng.randrange`` of the legal ones."""
    if code == HEURISTIC_POLICY:
        return heuristic_action(s, legal, count)
    return legal[T.randbelow(rng, count)]


@SEARCH_FUNCTIONS.compiled_allocating
def wyvern_simulations(info, seat, mt, rng, nodes, totals, children, counts, sims, explore, depth, rollout, others,
                       prior):
    """``sims`` simulations of ``MCTSBot._simulate`` (agents/mcts_kernel.py ``GameSearchKernel``): determinize,
    walk the tree (the prior asked at a node's first visit), roll out to the end or ``depth`` decisions,
    score (``rules.returns`` at the end, else ``_value``), back up. One sample row serves every simulation
    of the call: a determinization writes only the used part of a row (a few hundred of its 7,400 words)."""
    sample = np.zeros(K.ROW_SIZE, dtype=np.int64)
    pool = np.empty(K.POOL_ROOM, dtype=np.int64)
    mixer = np.empty(K.MIXER_ROOM, dtype=np.int64)
    legal = np.empty(R.NUM_ACTIONS, dtype=np.int64)
    values_row = np.zeros(R.MAX_PLAYERS, dtype=np.float64)
    path = np.empty(nodes.shape[0] + 1, dtype=np.int64)  # a walk visits each node at most once
    n = info[K.N]
    for _ in range(sims):
        K.determinize(info, seat, mt, sample, pool, mixer)
        node, length = 0, 1
        path[0] = 0
        while sample[K.PHASE] != R.OVER:
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
        while sample[K.PHASE] != R.OVER and (depth == 0 or steps < depth):
            count = K.legal_actions(sample, legal)
            policy = rollout if sample[K.TO_ACT] == seat else others
            K.apply_legal(sample, mt, _policy_move(sample, rng, legal, count, policy))
            steps += 1
        if sample[K.PHASE] == R.OVER:
            K.game_returns(sample, values_row)
        else:
            wyvern_value(sample, values_row)
        T.tree_backup(nodes, totals, path, length, values_row, n)


def _unsupported(config: R.Config) -> str | None:
    return K.unsupported(config)


SEARCH_KERNEL = T.GameSearchKernel(
    title="Wyvern", policies={HeuristicBot: HEURISTIC_POLICY}, value=SEARCH.value, actions=R.NUM_ACTIONS,
    unsupported=_unsupported, information_row=K.information_row, simulations=wyvern_simulations,
    compile=SEARCH_FUNCTIONS.compile, dealer_room=K.DEALER_ROOM)


# --- search with a network's priors and values (agents/mcts_kernel_network.py) -----------------------------------

import dataclasses  # noqa: E402 - kept with the section it serves

from ..envs.wyvern import kernel_encode as E  # noqa: E402
from . import mcts_kernel_network as N  # noqa: E402


def _network_argument_types() -> dict:
    return {**_search_argument_types(), **E._argument_types(), **N._argument_types()}


NETWORK_FUNCTIONS = K.Kernel(_network_argument_types, includes=(SEARCH_FUNCTIONS, E.ENCODER, N.NETWORK_TREE))


@NETWORK_FUNCTIONS.compiled
def _network_advance(seat, mt, rng, nodes, totals, children, counts, priors, explore, puct, depth, rollout, others,
                     prior, value_net, virtual, sample, path, slot, legal, values_row, prior_observation, prior_mask,
                     value_observations, estimates_row, k, deck_specialties):
    """The simulation in slot ``k`` goes on (``MCTSBot._simulate``) from where it was parked (a new one from its
    sample's root) to its next question to the network or to its backup; 1 when it was backed up
    (agents/ministeel_kernel.py ``_network_advance``, over Wyvern's functions)."""
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
    while not rolling and sample[K.PHASE] != R.OVER:
        count = K.legal_actions(sample, legal)
        asked = nodes[node, T.PRIOR]
        if asked == T.NOT_ASKED:
            if prior == N.NETWORK:  # park: the prior network answers for the seat to act
                E.encode_row(sample, sample[K.TO_ACT], deck_specialties, prior_observation)
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
    while sample[K.PHASE] != R.OVER and (depth == 0 or steps < depth) and not (value_net and depth == 0):
        count = K.legal_actions(sample, legal)
        policy = rollout if sample[K.TO_ACT] == seat else others
        if policy != N.NETWORK:
            action = _policy_move(sample, rng, legal, count, policy)
        elif count == 1:  # a forced move: the network is not asked
            action = legal[0]
        else:  # park: the rollout network moves for the seat to act
            E.encode_row(sample, sample[K.TO_ACT], deck_specialties, prior_observation)
            asking = N.ask_move(prior_mask, legal, count, slot, steps, seat, sample[K.TO_ACT])
            return _network_park(nodes, totals, path, length, slot, node, asking, virtual, n)
        K.apply_legal(sample, mt, action)
        steps += 1
    if sample[K.PHASE] == R.OVER:
        K.game_returns(sample, values_row)
    elif value_net:  # park: the value network answers from every seat's observation
        for who in range(n):
            E.encode_row(sample, who, deck_specialties, value_observations[k * n + who])
        return _network_park(nodes, totals, path, length, slot, node, N.WANTS_VALUE, virtual, n)
    else:
        wyvern_value(sample, values_row)
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
def wyvern_network_simulations(info, seat, mt, rng, nodes, totals, children, counts, priors, sims, explore, puct,
                               depth, rollout, others, prior, value_net, virtual, samples, paths, slots,
                               prior_observations, prior_masks, value_observations, probabilities, estimates,
                               progress, deck_specialties):
    """``wyvern_simulations`` where a network answers (agents/mcts_kernel_network.py; agents/ministeel_kernel.py
    ``ministeel_network_simulations``): the last batch's priors into the tree, every parked simulation on, then
    new ones (``progress[STARTED]`` up to ``sims``) into the free slots. Each slot keeps its sample row (a
    determinization writes only the row's used part); ``deck_specialties`` is the encoder's table
    (kernel_encode.py ``specialty_table``)."""
    legal = np.empty(R.NUM_ACTIONS, dtype=np.int64)
    pool = np.empty(K.POOL_ROOM, dtype=np.int64)
    mixer = np.empty(K.MIXER_ROOM, dtype=np.int64)
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
                prior_masks[k], value_observations, estimates[k], k, deck_specialties)
    for k in range(batch):
        while slots[k, N.STATE] == N.FREE and progress[N.STARTED] < sims:
            K.determinize(info, seat, mt, samples[k], pool, mixer)
            paths[k, 0] = 0
            slots[k, N.NODE], slots[k, N.LENGTH] = 0, 1
            progress[N.STARTED] += 1
            progress[N.FINISHED] += _network_advance(
                seat, mt, rng, nodes, totals, children, counts, priors, explore, puct, depth, rollout, others, prior,
                value_net, virtual, samples[k], paths[k], slots[k], legal, values_row, prior_observations[k],
                prior_masks[k], value_observations, estimates[k], k, deck_specialties)


SEARCH_KERNEL = dataclasses.replace(SEARCH_KERNEL, network_simulations=wyvern_network_simulations,
                                    network_compile=NETWORK_FUNCTIONS.compile, network_tables=E.specialty_table)
