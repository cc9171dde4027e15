"""Wyvern TCG bots: a heuristic that fights what it can beat, bargains for help, backstabs the leader
and sells for levels. It reads only what the seat's observation shows (layout in
``envs/wyvern/encode.py``).

Help talks: a fighter that cannot win opens with half the treasures (rounded down) to the strongest
helper who would turn the fight, meets an ask up to all but one treasure (all of them when the win
would end the game), and otherwise improves its offer as far as that limit. A would-be helper wants
half the treasures (rounded up; an elf nothing, since helping earns it a level; one more from a
fighter level with or ahead of it), counters a lower offer with that ask, offers itself at that price
to a losing fighter it could save, and never helps anyone to the winning level or a fighter more than 4
levels ahead.

The bot reads the facts it decides on into a :class:`_Context` (levels, combat levels, the fight's
strengths, the help talks) either from the observation vector (``act``) or, for search, straight from
the rules ``State`` (``act_state``): the same decisions without encoding an observation at every rollout
step (agents/mcts.py uses it for ``rollout=heuristic`` and ``prior=heuristic``). tests/test_search.py
replays seeded games and counts the decisions where the two differ; docs/search.md says where and why.
"""

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

    # --- reading the facts --------------------------------------------------------------------------

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        if len(legal) == 1:
            return legal[0]
        return self._decide(_Context.from_observation(observation["observation"], legal, self.config))

    def act_state(self, state: R.State, seat: int, legal: list[int]) -> int:
        """The move ``act`` makes, read from the rules state at ``seat``'s decision (``legal`` ascending, as
        ``rules.legal_actions`` gives them); reads only what the seat's observation shows."""
        if len(legal) == 1:
            return legal[0]
        return self._decide(_Context.from_state(state, seat, legal))

    def _decide(self, ctx: _Context) -> int:
        phase, legal, levels = ctx.phase, ctx.legal, ctx.levels
        if phase == _WINDOW:
            return self._window(ctx)
        if phase == _ASK:
            return self._answer(ctx)
        if phase == _COUNTER:
            return self._answer_ask(ctx)
        if phase == _LOOT_ORDER:
            # The least threatening player loots first.
            return min(legal, key=lambda a: (levels[R.ACTION_ARG[a]], R.ACTION_ARG[a]))
        if phase == _LOOT_PICK:
            items = [a for a in legal if R.ACTION_KIND[a] == R.K_LOOT]
            if items:
                return max(items, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], R.GOLD[R.ACTION_CARD[a]]))
            return R.A_LOOT_HAND if R.A_LOOT_HAND in legal else R.A_DECLINE
        if phase == _DISCARD:
            return self._discard(ctx)
        return self._own_turn(ctx)

    def _discard(self, ctx: _Context) -> int:
        """The card least worth keeping (the lowest action on a tie): a monster we beat easily is worth
        6, a harder one 0.5; the other cards' values do not depend on the game (``_KEEP``)."""
        best, best_value = -1, 0.0
        for a in ctx.legal:
            cid = R.ACTION_CARD[a]
            value = _KEEP[cid]
            if value is None:  # a monster
                value = 6.0 if R.LEVEL[cid] + 3 <= ctx.combat[0] else 0.5
            if best < 0 or value < best_value or (value == best_value and a < best):
                best, best_value = a, value
        return best

    # --- out of combat ------------------------------------------------------------------------------

    def _own_turn(self, ctx: _Context) -> int:
        kinds = R.ACTION_KIND  # by action index
        equips, curses, fights, sells = [], [], [], []  # the legal actions of each kind, in one pass
        for a in ctx.legal:
            kind = kinds[a]
            if kind == R.K_EQUIP:
                equips.append(a)
            elif kind == R.K_CURSE:
                curses.append(a)
            elif kind == R.K_FIGHT:
                fights.append(a)
            elif kind == R.K_SELL:
                sells.append(a)
        if equips:
            return max(equips, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], R.RUN[R.ACTION_CARD[a]], a))
        if curses:  # no curse to play: no need to find the leader
            curse = self._curse_leader(ctx, curses)
            if curse is not None:
                return curse
        if fights:
            mine = ctx.combat[0]
            fights = [a for a in fights if R.LEVEL[R.ACTION_CARD[a]] + 3 <= mine]
            if fights:
                return max(fights, key=lambda a: (R.LEVEL[R.ACTION_CARD[a]], a))
        if sells:
            sale = self._sale(ctx, sells, equips)
            if sale is not None:
                return sale
        return R.A_PASS

    def _sale(self, ctx: _Context, sells: list[int], equips: list[int]) -> int | None:
        """Sell items that cannot be worn (``equips``: the legal equip actions) when together they buy a
        level this turn."""
        equippable = {R.ACTION_CARD[a] for a in equips}
        junk = [a for a in sells if R.IS_EQUIPMENT[R.ACTION_CARD[a]] and R.ACTION_CARD[a] not in equippable]
        one_shots = [a for a in sells if not R.IS_EQUIPMENT[R.ACTION_CARD[a]]]
        if one_shots and ctx.held > 3:  # more than we can use: one-shots become sale goods too
            junk += one_shots
        value = sum(R.GOLD[R.ACTION_CARD[a]] for a in junk)
        if junk and ctx.gold + value * (2 if ctx.is_halfling else 1) >= self.config.gold_per_level:
            return max(junk, key=lambda a: (R.GOLD[R.ACTION_CARD[a]], a))
        return None

    def _curse_leader(self, ctx: _Context, curses: list[int]) -> int | None:
        """Backstab: curse the leader when they are at least level with us (``curses``: the legal curse
        actions)."""
        levels = ctx.levels
        if max(levels[1:]) < levels[0]:  # the leader's level, whoever the tie-break names: below mine
            return None
        target = ctx.leader
        if target not in ctx.alive or levels[target] < levels[0]:
            return None
        curses = [a for a in curses if R.ACTION_ARG[a] == target]
        if not curses:
            return None
        return max(curses, key=lambda a: (R.CATALOG[R.ACTION_CARD[a]].effect == "lose_level", a))

    # --- combat -------------------------------------------------------------------------------------

    def _window(self, ctx: _Context) -> int:
        legal = ctx.legal
        winning, party, monster, fighter = ctx.winning, ctx.party, ctx.monster, ctx.fighter
        if ctx.me_fighter:
            if winning:
                return R.A_PASS
            gap = monster - party + 1
            party_uses = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_PARTY]
            uses = [a for a in party_uses if R.BONUS[R.ACTION_CARD[a]] > 0]
            if R.A_SUMMON_AID in legal:
                return R.A_SUMMON_AID
            if uses:
                return max(uses, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
            offer = self._offer(ctx, gap)
            if offer is not None:
                return offer
            runs = [a for a in party_uses if R.RUN[R.ACTION_CARD[a]] > 0]
            if runs:
                return runs[0]
            return R.A_RUN if R.A_RUN in legal else R.A_PASS
        if ctx.me_helper:
            if not winning:
                uses = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_PARTY and R.BONUS[R.ACTION_CARD[a]] > 0]
                if uses:
                    return max(uses, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
            return R.A_PASS
        # Someone else fights: backstab the leader, or anyone about to win (a threat). Whether the fighter is
        # the leader (a tie-break by combat levels) is asked only where the answer can change the move.
        levels = ctx.levels
        about_to_win = levels[fighter] + ctx.gain >= ctx.win
        if not winning:
            if (ctx.my_asks == 0 and not about_to_win and ctx.combat[0] > monster - party
                    and not (levels[fighter] >= levels[0] and fighter == ctx.leader)):
                demand = self._demand(ctx, fighter)  # a losing fighter we could save: offer ourselves
                if demand is not None and R.ASK_ACTION0 + demand in legal:
                    return R.ASK_ACTION0 + demand
            return R.A_PASS
        if about_to_win:
            drain = [a for a in legal if R.ACTION_KIND[a] == R.K_CURSE and R.ACTION_ARG[a] == fighter]
            if drain:
                return drain[0]
        hits = [a for a in legal if R.ACTION_KIND[a] == R.K_USE_MONSTER]
        if (R.A_SUMMON_JOIN in legal or hits) and (
                about_to_win or (levels[fighter] >= levels[0] and fighter == ctx.leader)):
            if R.A_SUMMON_JOIN in legal:
                return R.A_SUMMON_JOIN
            need = party - monster + 1
            enough = [a for a in hits if R.BONUS[R.ACTION_CARD[a]] >= need]
            pool = enough or hits
            return min(pool, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a)) if enough else \
                max(pool, key=lambda a: (R.BONUS[R.ACTION_CARD[a]], a))
        return R.A_PASS

    # --- help talks ---------------------------------------------------------------------------------

    def _max_pay(self, ctx: _Context) -> int:
        """The most treasures the fighter (me) gives away: all but one, all when the win ends the game."""
        treasures = ctx.treasures
        return treasures if ctx.levels[0] + ctx.gain >= ctx.win else max(1, treasures - 1)

    def _offer(self, ctx: _Context, gap: int) -> int | None:
        """Open at half the treasures to the strongest player who turns the fight and was not yet asked."""
        treasures = ctx.treasures
        most = self._max_pay(ctx)
        least = treasures // 2
        cheapest: dict[int, int] = {}  # seat offset -> its cheapest offer in that range, offsets as first met
        kinds, args = R.ACTION_KIND, R.ACTION_ARG
        for a in ctx.legal:
            if kinds[a] == R.K_OFFER:
                offset, split = divmod(args[a], 100)
                if least <= split <= most and (offset not in cheapest or a < cheapest[offset]):
                    cheapest[offset] = a
        best = None
        for offset, action in cheapest.items():
            if ctx.levels[offset] + 1 >= ctx.win or offset in ctx.offered:  # no elf friend to the win; talked
                continue  # already: it named its price
            if ctx.combat[offset] < gap:
                continue
            key = (ctx.combat[offset], -ctx.levels[offset])
            if best is None or key > best[0]:
                best = (key, action)
        return best[1] if best is not None else None

    def _answer_ask(self, ctx: _Context) -> int:
        """I fight and a would-be helper named a price: take it, meet it part way, or refuse."""
        asker = ctx.asker
        gap = ctx.monster - ctx.party + 1
        if asker is None or ctx.winning or ctx.combat[asker] < gap:
            return R.A_DECLINE
        if ctx.levels[asker] + 1 >= ctx.win and ctx.asker_is_elf:
            return R.A_DECLINE
        most = self._max_pay(ctx)
        if ctx.bid <= most:
            return R.A_ACCEPT
        better = [a for a in ctx.legal if R.ACTION_KIND[a] == R.K_OFFER and R.ACTION_ARG[a] % 100 <= most]
        return max(better) if better else R.A_DECLINE

    def _demand(self, ctx: _Context, fighter: int) -> int | None:
        """My price for helping ``fighter``; None: I will not help."""
        if ctx.levels[fighter] + ctx.gain >= ctx.win:
            return None  # never help someone to the win
        if ctx.levels[fighter] > ctx.levels[0] + 4:
            return None  # do not carry the leader
        if ctx.is_elf:
            return 0
        treasures = ctx.treasures
        demand = (treasures + 1) // 2
        if ctx.levels[fighter] >= ctx.levels[0]:  # helping someone level with or ahead of me costs more
            demand += 1
        return min(demand, treasures)

    def _answer(self, ctx: _Context) -> int:
        """I was offered treasures for help: accept what meets my price, else counter with it."""
        split = ctx.ask_split
        demand = self._demand(ctx, ctx.fighter)
        if demand is None:
            return R.A_DECLINE
        if split >= demand:
            return R.A_ACCEPT
        asks = [a for a in ctx.legal if R.ACTION_KIND[a] == R.K_ASK]
        if asks:
            return min(asks, key=lambda a: abs(R.ACTION_ARG[a] - demand))
        return R.A_ACCEPT if split >= 1 else R.A_DECLINE


class _Context:
    """The facts the heuristic decides on, seats by their offset from mine (0 = me), as the observation
    shows them (read from it, or from the rules state with the observation's clipping)."""

    __slots__ = ("phase", "legal", "levels", "combat", "alive", "_leader", "win", "is_elf", "is_halfling",
                 "winning", "party", "monster", "fighter", "me_fighter", "me_helper", "gain", "treasures",
                 "my_asks", "offered", "asker", "asker_is_elf", "bid", "ask_split", "_hand", "_held", "gold")

    @property
    def leader(self) -> int:
        """The first of the others by (level, combat level). Worked out when first read; combat levels are
        only compared between the others tied at the top level (``from_state`` computes each on demand)."""
        if self._leader < 0:
            top, tied = -1, []  # the others at the top level, in seat order
            for r, level in enumerate(self.levels):
                if r == 0:
                    continue
                if level > top:
                    top, tied = level, [r]
                elif level == top:
                    tied.append(r)
            self._leader = tied[0] if len(tied) == 1 else max(tied, key=self.combat.__getitem__)
        return self._leader

    @property
    def held(self) -> int:
        """Cards in my hand, each kind counted up to 4 (as the observation's hand slots hold them)."""
        if self._held < 0:
            hand = self._hand
            self._held = sum(min(4, hand.count(cid)) for cid in set(hand))
        return self._held

    @classmethod
    def from_observation(cls, obs: np.ndarray, legal: list[int], config: R.Config) -> _Context:
        ctx = cls()
        win = ctx.win = config.win_level
        ctx.phase = int(np.argmax(obs[E.PHASE]))
        ctx.legal = legal
        blocks = [obs[r * E.PLAYER_BLOCK:(r + 1) * E.PLAYER_BLOCK] for r in range(R.MAX_PLAYERS)]
        present = [r for r in range(R.MAX_PLAYERS) if blocks[r][E.P_PRESENT] > 0.5]
        ctx.levels = [round(float(blocks[r][E.P_LEVEL]) * win) for r in present]  # present: offsets 0..n-1
        ctx.combat = [round(float(blocks[r][E.P_COMBAT]) * 50) for r in present]
        ctx.alive = {r for r in present if blocks[r][E.P_ALIVE] > 0.5}
        ctx._leader = -1
        ctx.is_elf = bool(obs[E.P_RACE + R.ELF] > 0.5)
        ctx.is_halfling = bool(obs[E.P_RACE + R.HALFLING] > 0.5)
        c = E.COMBAT.start
        ctx.winning = bool(obs[c + E.C_WINNING] > 0.5)
        ctx.party = round(float(obs[c + E.C_PSTRENGTH]) * 100)
        ctx.monster = round(float(obs[c + E.C_MSTRENGTH]) * 100)
        ctx.fighter = next((r for r in present if blocks[r][E.P_FIGHTER] > 0.5), 0)
        ctx.me_fighter = bool(blocks[0][E.P_FIGHTER] > 0.5)
        ctx.me_helper = bool(blocks[0][E.P_HELPER] > 0.5)
        ctx.gain = round(float(obs[c + E.C_LEVELS]) * 3)
        ctx.treasures = round(float(obs[c + E.C_TREASURES]) * 5)
        ctx.my_asks = float(blocks[0][E.P_ASKS])
        ctx.offered = {r for r in present if blocks[r][E.P_OFFERS] > 0}
        ctx.asker = next((r for r in present if blocks[r][E.P_ASKED] > 0.5), None)
        ctx.asker_is_elf = ctx.asker is not None and bool(blocks[ctx.asker][E.P_RACE + R.ELF] > 0.5)
        ctx.bid = round(float(obs[c + E.C_BID]) * 5)
        ctx.ask_split = round(float(obs[c + E.C_ASK_SPLIT]) * 5)
        ctx._held = int(round(float(obs[E.HAND].sum()) * 4))
        ctx.gold = float(obs[E.GOLD_SOLD]) * config.gold_per_level
        return ctx

    @staticmethod
    def from_state(state: R.State, seat: int, legal: list[int]) -> _Context:
        """The same facts from the rules state, each clipped as the encoder clips it, so that both make the
        same decisions (the gold sold is exact here; the observation holds it as a float32 fraction).
        The facts few decisions read are worked out on their first read (:class:`_StateContext`)."""
        ctx = _StateContext()
        ctx._state, ctx._seat = state, seat
        ctx._alive = ctx._offered = None  # worked out on their first read (_StateContext's properties)
        config = state.config
        ctx.win = config.win_level
        phase = ctx.phase = state.phase
        ctx.legal = legal
        level = state.level
        ctx.levels = level[seat:] + level[:seat]  # by offset from me, as the observation's blocks
        # Each seat's combat level computed when first read. The table is made here, not on the first read
        # of ``combat``: a slot's first read through __getattr__ (an AttributeError raised and caught) costs
        # eight times the empty table, and half the decisions read it.
        ctx.combat = combat = _CombatLevels()  # no __init__ of its own: dict's, with nothing to do
        combat._state, combat._who = state, _WHO[state.n][seat]
        ctx._leader = -1
        ctx.is_elf = state.races[seat] == R.ELF
        if state.monster >= 0 and (phase == _WINDOW or phase == _COUNTER or phase == _ASK):
            # In a fight (IN_COMBAT_PHASES); out of one the fight's facts are left to a first read, which
            # finds them all zero (no decision out of a fight reads them).
            n = state.n
            fighter = state.fighter
            if phase != _ASK:
                # The fight's strengths (two combat levels): every window and counter decision reads them, an
                # answer to an offer none (there they are left to a first read).
                party, monster = R.party_strength(state), R.monster_strength(state)
                ctx.winning = R.party_beats(state, party, monster)
                ctx.party = 100 if party > 100 else party if party > 0 else 0
                ctx.monster = 100 if monster > 100 else monster if monster > 0 else 0
            ctx.fighter = (fighter - seat) % n if fighter >= 0 else 0
            ctx.me_fighter, ctx.me_helper = fighter == seat, state.helper == seat
            monster_card = state.monster
            gain = R.LEVELS[monster_card]
            ctx.gain = gain if gain < 3 else 3
            ctx.treasures = R.TREASURES[monster_card]
            ctx.my_asks = state.asks_from[seat]
            if phase != _WINDOW:  # the talks' facts: only an answer reads them (in the window, a first read)
                ctx._fill_talks(state, seat)
        elif phase == R.FREE:  # what a sale reads (elsewhere a first read: no other decision sells)
            ctx._fill_purse(state, seat)
        return ctx


class _StateContext(_Context):
    """A :class:`_Context` read from the rules state, with the facts few decisions read worked out on their
    first read: who is alive (only a curse on the leader asks) and who was offered help (only the
    fighter's next offer), as properties; in an answer to an offer the fight's strengths, in the window
    the talks' facts (the pending ask and offer), out of a free turn the purse's (gold sold, a halfling's
    price, the hand) and out of a fight all the fight's facts (zero there), none of which a decision there
    reads, as slots left empty, which send their first read to ``__getattr__`` (dear: an AttributeError
    raised and caught, so only for facts a search never reads); each seat's combat level when read
    (:class:`_CombatLevels`). Reading every fact at
    every step was a fifth of a Wyvern search. The values are those an eager read gives
    (tests/test_search.py compares every fact with the observation's)."""

    __slots__ = ("_state", "_seat", "_alive", "_offered")

    def __getattr__(self, name: str) -> Any:
        fill = _FILL.get(name)
        if fill is None:
            raise AttributeError(name)
        fill(self, self._state, self._seat)
        return object.__getattribute__(self, name)

    @property
    def alive(self) -> set[int]:
        alive = self._alive
        if alive is None:
            dead = self._state.dead
            alive = self._alive = {r for r, w in enumerate(_WHO[self._state.n][self._seat]) if not dead[w]}
        return alive

    @property
    def offered(self) -> set[int] | frozenset[int]:
        offered = self._offered
        if offered is None:
            state = self._state
            if _in_fight(state):
                offers_to = state.offers_to
                offered = {r for r, w in enumerate(_WHO[state.n][self._seat]) if offers_to[w] > 0}
            else:
                offered = _NOBODY
            self._offered = offered
        return offered

    def _fill_strengths(self, state: R.State, seat: int) -> None:
        if not _in_fight(state):
            self._fill_calm(state, seat)
            return
        party, monster = R.party_strength(state), R.monster_strength(state)
        self.winning = R.party_beats(state, party, monster)
        self.party, self.monster = min(100, max(0, party)), min(100, max(0, monster))

    def _fill_talks(self, state: R.State, seat: int) -> None:
        """The pending proposal: who asked (and whether an elf), the ask made, the offer made."""
        if not _in_fight(state):
            self._fill_calm(state, seat)
            return
        ask_seat, phase = state.ask_seat, state.phase
        if ask_seat >= 0:
            self.asker, self.asker_is_elf = (ask_seat - seat) % state.n, state.races[ask_seat] == R.ELF
        else:
            self.asker, self.asker_is_elf = None, False
        self.bid = state.bid if phase == _COUNTER else 0
        self.ask_split = state.ask_split if phase == _ASK else 0

    def _fill_purse(self, state: R.State, seat: int) -> None:
        """What a sale decides on: the gold sold this turn (up to a level's price), a halfling's double
        price, the hand (``held`` counts it when read)."""
        gold, price = state.gold, state.config.gold_per_level
        self.gold = gold if gold < price else price
        self.is_halfling = state.races[seat] == R.HALFLING
        self._hand, self._held = state.hand[seat], -1

    def _fill_calm(self, state: R.State, seat: int) -> None:
        """Out of a fight: the fight's facts as the observation shows them there (all zero)."""
        self.winning = self.me_fighter = self.me_helper = self.asker_is_elf = False
        self.party = self.monster = self.fighter = self.gain = self.treasures = self.my_asks = 0
        self.bid = self.ask_split = 0
        self.asker = None


def _in_fight(state: R.State) -> bool:
    return state.monster >= 0 and state.phase in E.IN_COMBAT_PHASES


# Which fill works out each fact that a _StateContext leaves to a first read through __getattr__. In a fight
# ``from_state`` sets the fight's facts except the strengths (in an answer to an offer) and, in the window,
# the talks' (``_fill_talks``); out of one it sets none of them, and the first read of any fills them all
# (``_fill_calm``); the gold sold, a halfling's price and the hand only in a free turn (``_fill_purse``).
_FILL = dict.fromkeys(("winning", "party", "monster"), _StateContext._fill_strengths)
_FILL.update(dict.fromkeys(("me_fighter", "me_helper", "fighter", "gain", "treasures", "my_asks"),
                           _StateContext._fill_calm))
_FILL.update(dict.fromkeys(("asker", "asker_is_elf", "bid", "ask_split"), _StateContext._fill_talks))
_FILL.update(dict.fromkeys(("gold", "is_halfling", "_hand", "_held"), _StateContext._fill_purse))
_NOBODY: frozenset[int] = frozenset()
# _WHO[n][seat]: the seats of an n-player table by their offset from ``seat``.
_WHO = tuple(tuple(tuple((seat + r) % n for r in range(n)) for seat in range(n)) for n in range(R.MAX_PLAYERS + 1))


class _CombatLevels(dict):
    """Combat levels by seat offset, each computed from the state when first read (most decisions read
    one or none), clipped to 0..50 as the observation holds them. ``_Context.from_state`` makes one and
    sets the state and the seats by offset (``_who``)."""

    __slots__ = ("_state", "_who")

    def __missing__(self, offset: int) -> int:
        value = R.combat_level(self._state, self._who[offset])
        value = self[offset] = 50 if value > 50 else value if value > 0 else 0
        return value


def _keep_value(cid: int) -> float | None:
    """How much a card is worth keeping in a hand over the limit; None for a monster, whose worth depends on
    our combat level (``HeuristicBot._discard``)."""
    kind = R.KIND[cid]
    if R.IS_MONSTER[cid]:
        return None
    if kind == "curse":
        return 3.0
    if kind == "enhancer":
        return 2.0 + R.BONUS[cid] / 5
    if R.IS_ONE_SHOT[cid]:
        return 2.0 + R.BONUS[cid] / 2 + R.RUN[cid] / 2
    return 1.0 + R.BONUS[cid] / 2 + R.GOLD[cid] / 1000


_KEEP = tuple(_keep_value(cid) for cid in range(R.NUM_CARDS))

BOTS = {"heuristic": HeuristicBot}

# The levels (agents/levels.py): the two networks, the yardstick and today's; no search beats today's (docs/search.md).
LEVELS = ("random", "careless", "heuristic", "zoo:wyvern_yardstick", "zoo:wyvern")


# --- search (agents/search_hooks.py) ------------------------------------------------------------------------
# As in MiniSteel: heuristic rollouts cut short and scored by the value estimate (docs/search.md). Cut at 100
# decisions, not 20: the lead in level 20 decisions on (a turn or two) prizes a level now over what wins
# later, and a search of 1,000 simulations that trusted it took 0.263 against three heuristics where the
# same search cut at 100 took 0.435 (docs/search.md, "On the compiled kernels, more simulations"). At 60
# simulations the two cuts play alike (0.400 and 0.407).
# The network's value head at the cut of 20 plays better than either (`mcts:depth=20,value=zoo:wyvern`: 0.527
# over 200 deals); not a default, since a value bot here would change every Wyvern spec that names none.


def _value(state: Any) -> list[float]:
    """Returns a cut-off Wyvern rollout is worth: the race to the win level, led by level."""
    return lead_values(list(map(float, state.level)), float(state.config.win_level))


SEARCH = SearchHooks(defaults={"sims": 60, "depth": 100, "rollout": "heuristic", "prior": "heuristic"},
                     value=_value, kernel="tavernzoo.agents.wyvern_kernel")
