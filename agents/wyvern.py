"""Wyvern TCG bots: a heuristic that fights what it can beat, bargains for help, backstabs the leader
and sells for levels. It reads only the env's observation dict (layout in ``envs/wyvern/encode.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.wyvern import encode as E
from ..envs.wyvern import rules as R
from .base import RuleBot, legal_actions

_WINDOW, _ASK, _LOOT_ORDER, _LOOT_PICK, _DISCARD = R.WINDOW, R.ASK, R.LOOT_ORDER, R.LOOT_PICK, R.DISCARD


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
        if phase == _LOOT_ORDER:
            # The least threatening player loots first.
            return min(legal, key=lambda a: (levels[R.ACTION_ARG[a]], R.ACTION_ARG[a]))
        if phase == _LOOT_PICK:
            return max(legal, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], R.GOLD[R.ACTION_CARD[a]]))
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
            helps = [a for a in legal if R.ACTION_KIND[a] == R.K_HELP]
            if helps:
                treasures = round(float(obs[c + E.C_TREASURES]) * 5)
                best = None
                for a in helps:
                    offset, split = divmod(R.ACTION_ARG[a], 100)
                    if split != max(1, treasures // 2) and not (treasures == 0 and split == 0):
                        continue
                    if offset not in ctx.alive or ctx.combat[offset] < gap:
                        continue
                    if ctx.levels[offset] + 1 >= ctx.win:  # never make the near-winner's elf friend win
                        continue
                    key = (ctx.combat[offset], -ctx.levels[offset])
                    if best is None or key > best[0]:
                        best = (key, a)
                if best is not None:
                    return best[1]
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

    def _answer(self, ctx: _Context, blocks: list[np.ndarray]) -> int:
        obs = ctx.obs
        c = E.COMBAT.start
        split = round(float(obs[c + E.C_ASK_SPLIT]) * 5)
        fighter = next((r for r in ctx.levels if blocks[r][E.P_FIGHTER] > 0.5), 0)
        gain = round(float(obs[c + E.C_LEVELS]) * 3)
        if ctx.levels[fighter] + gain >= ctx.win:
            return R.A_DECLINE  # never help someone to the win
        if ctx.levels[fighter] > ctx.levels[0] + 4:
            return R.A_DECLINE  # do not carry the leader
        if split >= 1 or ctx.is_elf:
            return R.A_ACCEPT
        return R.A_DECLINE


class _Context:
    __slots__ = ("obs", "legal", "levels", "combat", "alive", "leader", "win", "is_elf", "is_halfling")

    def __init__(self, obs, legal, levels, combat, alive, leader, win):
        self.obs, self.legal, self.levels, self.combat, self.alive = obs, legal, levels, combat, alive
        self.leader, self.win = leader, win
        self.is_elf = obs[E.P_RACE + R.ELF] > 0.5
        self.is_halfling = obs[E.P_RACE + R.HALFLING] > 0.5


BOTS = {"heuristic": HeuristicBot}
