"""Wyvern TCG bots: a heuristic that fights what it can beat, bargains for help, backstabs the leader
and sells for levels. It reads only the env's observation dict (layout in ``envs/wyvern/encode.py``).

Help talks: a fighter that cannot win opens with half the treasures (rounded down) to the strongest
helper who would turn the fight, meets an ask up to all but one treasure (all of them when the win
would end the game), and otherwise improves its offer as far as that limit. A would-be helper wants
half the treasures (rounded up; an elf nothing, since helping earns it a level; one more from a
fighter level with or ahead of it), counters a lower offer with that ask, offers itself at that price
to a losing fighter it could save, and never helps anyone to the winning level or a fighter more than 4
levels ahead."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.wyvern import encode as E
from ..envs.wyvern import rules as R
from .base import RuleBot, legal_actions
from .search_hooks import SearchHooks, lead_values

_WINDOW, _ASK, _COUNTER, _LOOT_ORDER, _LOOT_PICK, _DISCARD = (R.WINDOW, R.ASK, R.COUNTER, R.LOOT_ORDER,
                                                              R.LOOT_PICK, R.DISCARD)


class HeuristicBot(RuleBot):
    """Plays a sensible Munchkin game (see the module docstring); deterministic for a given observation."""

    name = "heuristic"
    config_type = R.Config

    # --- decoding -----------------------------------------------------------------------------------

    def act(self, observation: dict[str, Any]) -> int:
        obs = observation["observation"]
        legal = legal_actions(observation, self.name)
        if len(legal) == 1:
            return legal[0]
        phase = int(np.argmax(obs[E.PHASE]))
        win = self.config.win_level
        blocks = [obs[r * E.PLAYER_BLOCK:(r + 1) * E.PLAYER_BLOCK] for r in range(R.MAX_PLAYERS)]
        present = [r for r in range(R.MAX_PLAYERS) if blocks[r][E.P_PRESENT] > 0.5]
        levels = {r: round(float(blocks[r][E.P_LEVEL]) * win) for r in present}
        combat = {r: round(float(blocks[r][E.P_COMBAT]) * 50) for r in present}
        alive = {r for r in present if blocks[r][E.P_ALIVE] > 0.5}
        others = [r for r in present if r != 0]
        leader = max(others, key=lambda r: (levels[r], combat[r]))
        ctx = _Context(obs, legal, levels, combat, alive, leader, win)
        if phase == _WINDOW:
            return self._window(ctx, blocks)
        if phase == _ASK:
            return self._answer(ctx, blocks)
        if phase == _COUNTER:
            return self._answer_ask(ctx, blocks)
        if phase == _LOOT_ORDER:
            # The least threatening player loots first.
            return min(legal, key=lambda a: (levels[R.ACTION_ARG[a]], R.ACTION_ARG[a]))
        if phase == _LOOT_PICK:
            items = [a for a in legal if R.ACTION_KIND[a] == R.K_LOOT]
            if items:
                return max(items, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], R.GOLD[R.ACTION_CARD[a]]))
            return R.A_LOOT_HAND if R.A_LOOT_HAND in legal else R.A_DECLINE
        if phase == _DISCARD:
            return min(legal, key=lambda a: (self._keep_value(ctx, R.ACTION_CARD[a]), a))
        return self._own_turn(ctx)

    def _keep_value(self, ctx: _Context, cid: int) -> float:
        kind = R.KIND[cid]
        if R.IS_MONSTER[cid]:
            return 6.0 if R.LEVEL[cid] + 3 <= ctx.combat[0] else 0.5
        if kind == "curse":
            return 3.0
        if kind == "enhancer":
            return 2.0 + R.BONUS[cid] / 5
        if R.IS_ONE_SHOT[cid]:
            return 2.0 + R.BONUS[cid] / 2 + R.RUN[cid] / 2
        return 1.0 + R.BONUS[cid] / 2 + R.GOLD[cid] / 1000

    # --- out of combat ------------------------------------------------------------------------------

    def _own_turn(self, ctx: _Context) -> int:
        legal = ctx.legal
        kinds = {a: R.ACTION_KIND[a] for a in legal}
        equips = [a for a in legal if kinds[a] == R.K_EQUIP]
        if equips:
            return max(equips, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], R.RUN[R.ACTION_CARD[a]], a))
        curse = self._curse_leader(ctx)
        if curse is not None:
            return curse
        fights = [a for a in legal if kinds[a] == R.K_FIGHT and R.LEVEL[R.ACTION_CARD[a]] + 3 <= ctx.combat[0]]
        if fights:
            return max(fights, key=lambda a: (R.LEVEL[R.ACTION_CARD[a]], a))
        sale = self._sale(ctx, legal, kinds)
        if sale is not None:
            return sale
        return R.A_PASS

    def _sale(self, ctx: _Context, legal: list[int], kinds: dict[int, int]) -> int | None:
        """Sell items that cannot be worn when together they buy a level this turn."""
        hand = ctx.obs[E.HAND]
        equippable = {R.ACTION_CARD[a] for a in legal if kinds[a] == R.K_EQUIP}
        junk = [a for a in legal if kinds[a] == R.K_SELL and R.IS_EQUIPMENT[R.ACTION_CARD[a]]
                and R.ACTION_CARD[a] not in equippable]
        one_shots = [a for a in legal if kinds[a] == R.K_SELL and not R.IS_EQUIPMENT[R.ACTION_CARD[a]]]
        held = int(round(float(hand.sum()) * 4))
        if held > 3:  # more than we can use: one-shots become sale goods too
            junk += one_shots
        gold = float(ctx.obs[E.GOLD_SOLD]) * self.config.gold_per_level
        value = sum(R.GOLD[R.ACTION_CARD[a]] for a in junk)
        if junk and gold + value * (2 if ctx.is_halfling else 1) >= self.config.gold_per_level:
            return max(junk, key=lambda a: (R.GOLD[R.ACTION_CARD[a]], a))
        return None

    def _curse_leader(self, ctx: _Context) -> int | None:
        """Backstab: curse the leader when they are at least level with us."""
        target = ctx.leader
        if target not in ctx.alive or ctx.levels[target] < ctx.levels[0]:
            return None
        curses = [a for a in ctx.legal if R.ACTION_KIND[a] == R.K_CURSE and R.ACTION_ARG[a] == target]
        if not curses:
            return None
        return max(curses, key=lambda a: (R.CATALOG[R.ACTION_CARD[a]].effect == "lose_level", a))

    # --- combat -------------------------------------------------------------------------------------

    def _window(self, ctx: _Context, blocks: list[np.ndarray]) -> int:
        obs, legal = ctx.obs, ctx.legal
        c = E.COMBAT.start
        winning = obs[c + E.C_WINNING] > 0.5
        party = round(float(obs[c + E.C_PSTRENGTH]) * 100)
        monster = round(float(obs[c + E.C_MSTRENGTH]) * 100)
        me = blocks[0]
        fighter = next((r for r in ctx.levels if blocks[r][E.P_FIGHTER] > 0.5), 0)
        if me[E.P_FIGHTER] > 0.5:
            if winning:
                return R.A_PASS
            gap = monster - party + 1
            uses = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_PARTY and R.BONUS[R.ACTION_CARD[a]] > 0]
            if R.A_SUMMON_AID in legal:
                return R.A_SUMMON_AID
            if uses:
                return max(uses, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
            offer = self._offer(ctx, gap)
            if offer is not None:
                return offer
            runs = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_PARTY and R.RUN[R.ACTION_CARD[a]] > 0]
            if runs:
                return runs[0]
            return R.A_RUN if R.A_RUN in legal else R.A_PASS
        if me[E.P_HELPER] > 0.5:
            if not winning:
                uses = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_PARTY and R.BONUS[R.ACTION_CARD[a]] > 0]
                if uses:
                    return max(uses, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
            return R.A_PASS
        # Someone else fights: backstab the leader, or anyone about to win.
        levels_gain = round(float(obs[c + E.C_LEVELS]) * 3)
        threat = ctx.levels[fighter] + levels_gain >= ctx.win or (
            fighter == ctx.leader and ctx.levels[fighter] >= ctx.levels[0])
        if not winning and not threat and me[E.P_ASKS] == 0 and ctx.combat[0] > monster - party:
            demand = self._demand(ctx, fighter)  # a losing fighter we could save: offer ourselves
            if demand is not None and R.ASK_ACTION0 + demand in legal:
                return R.ASK_ACTION0 + demand
        if threat and winning:
            if ctx.levels[fighter] + levels_gain >= ctx.win:
                drain = [a for a in legal if R.ACTION_KIND[a] == R.K_CURSE and R.ACTION_ARG[a] == fighter]
                if drain:
                    return drain[0]
            if R.A_SUMMON_JOIN in legal:
                return R.A_SUMMON_JOIN
            hits = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_MONSTER]
            if hits:
                need = party - monster + 1
                enough = [a for a in hits if R.BONUS[R.ACTION_CARD[a]] >= need]
                pool = enough or hits
                return min(pool, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a)) if enough else \
                    max(pool, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
        return R.A_PASS

    # --- help talks ---------------------------------------------------------------------------------

    def _max_pay(self, ctx: _Context) -> int:
        """The most treasures the fighter (me) gives away: all but one, all when the win ends the game."""
        c = E.COMBAT.start
        treasures = round(float(ctx.obs[c + E.C_TREASURES]) * 5)
        gain = round(float(ctx.obs[c + E.C_LEVELS]) * 3)
        return treasures if ctx.levels[0] + gain >= ctx.win else max(1, treasures - 1)

    def _offer(self, ctx: _Context, gap: int) -> int | None:
        """Open at half the treasures to the strongest player who turns the fight and was not yet asked."""
        treasures = round(float(ctx.obs[E.COMBAT.start + E.C_TREASURES]) * 5)
        most = self._max_pay(ctx)
        offers: dict[int, list[int]] = {}
        for a in ctx.legal:
            if R.ACTION_KIND[a] == R.K_OFFER:
                offset, split = divmod(R.ACTION_ARG[a], 100)
                if treasures // 2 <= split <= most:
                    offers.setdefault(offset, []).append(a)
        best = None
        for offset, actions in offers.items():
            if ctx.combat[offset] < gap or ctx.levels[offset] + 1 >= ctx.win:  # no elf friend to the win
                continue
            if ctx.obs[offset * E.PLAYER_BLOCK + E.P_OFFERS] > 0:  # talked already: it named its price
                continue
            key = (ctx.combat[offset], -ctx.levels[offset])
            if best is None or key > best[0]:
                best = (key, min(actions))
        return best[1] if best is not None else None

    def _answer_ask(self, ctx: _Context, blocks: list[np.ndarray]) -> int:
        """I fight and a would-be helper named a price: take it, meet it part way, or refuse."""
        obs = ctx.obs
        c = E.COMBAT.start
        asker = next((r for r in ctx.levels if blocks[r][E.P_ASKED] > 0.5), None)
        gap = round(float(obs[c + E.C_MSTRENGTH]) * 100) - round(float(obs[c + E.C_PSTRENGTH]) * 100) + 1
        if asker is None or obs[c + E.C_WINNING] > 0.5 or ctx.combat[asker] < gap:
            return R.A_DECLINE
        if ctx.levels[asker] + 1 >= ctx.win and blocks[asker][E.P_RACE + R.ELF] > 0.5:
            return R.A_DECLINE
        ask = round(float(obs[c + E.C_BID]) * 5)
        most = self._max_pay(ctx)
        if ask <= most:
            return R.A_ACCEPT
        better = [a for a in ctx.legal if R.ACTION_KIND[a] == R.K_OFFER and R.ACTION_ARG[a] % 100 <= most]
        return max(better) if better else R.A_DECLINE

    def _demand(self, ctx: _Context, fighter: int) -> int | None:
        """My price for helping ``fighter``; None: I will not help."""
        obs = ctx.obs
        c = E.COMBAT.start
        gain = round(float(obs[c + E.C_LEVELS]) * 3)
        if ctx.levels[fighter] + gain >= ctx.win:
            return None  # never help someone to the win
        if ctx.levels[fighter] > ctx.levels[0] + 4:
            return None  # do not carry the leader
        if ctx.is_elf:
            return 0
        treasures = round(float(obs[c + E.C_TREASURES]) * 5)
        demand = (treasures + 1) // 2
        if ctx.levels[fighter] >= ctx.levels[0]:  # helping someone level with or ahead of me costs more
            demand += 1
        return min(demand, treasures)

    def _answer(self, ctx: _Context, blocks: list[np.ndarray]) -> int:
        """I was offered treasures for help: accept what meets my price, else counter with it."""
        obs = ctx.obs
        split = round(float(obs[E.COMBAT.start + E.C_ASK_SPLIT]) * 5)
        fighter = next((r for r in ctx.levels if blocks[r][E.P_FIGHTER] > 0.5), 0)
        demand = self._demand(ctx, fighter)
        if demand is None:
            return R.A_DECLINE
        if split >= demand:
            return R.A_ACCEPT
        asks = [a for a in ctx.legal if R.ACTION_KIND[a] == R.K_ASK]
        if asks:
            return min(asks, key=lambda a: abs(R.ACTION_ARG[a] - demand))
        return R.A_ACCEPT if split >= 1 else R.A_DECLINE


class _Context:
    __slots__ = ("obs", "legal", "levels", "combat", "alive", "leader", "win", "is_elf", "is_halfling")

    def __init__(self, obs, legal, levels, combat, alive, leader, win):
        self.obs, self.legal, self.levels, self.combat, self.alive = obs, legal, levels, combat, alive
        self.leader, self.win = leader, win
        self.is_elf = obs[E.P_RACE + R.ELF] > 0.5
        self.is_halfling = obs[E.P_RACE + R.HALFLING] > 0.5


BOTS = {"heuristic": HeuristicBot}


# --- search (agents/search_hooks.py) ------------------------------------------------------------------------
# As in MiniSteel: heuristic rollouts cut short and scored by the value estimate (docs/search.md).


def _value(state: Any) -> list[float]:
    """Returns a cut-off Wyvern rollout is worth: the race to the win level, led by level."""
    return lead_values([float(level) for level in state.level], float(state.config.win_level))


SEARCH = SearchHooks(defaults={"sims": 60, "depth": 20, "rollout": "heuristic", "prior": "heuristic"},
                     value=_value)
