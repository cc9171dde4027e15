"""MiniSteel's built-in bots: a rule-based heuristic that reads the documented observation layout.

The heuristic, in order: keep the most valuable card offered; always hook away a raised shield; react
with the cheapest card that stops most of an attack (Confusion Dust against big hits, Remedy against
Poison); in a Card Draw window (v2) draw when its hand is full (the turn's refill loses nothing) but
holds no shield or Confusion Dust, else keep the token; on its own turn equip everything, use a Card
Draw token on a short hand, cure heavy poison, heal when hurt, then strike the weakest opponent with its
strongest attack (as a Poison combo when it holds a Poison), finishing with utility cards, and forfeit
its least valuable card when nothing else is worth an action. Measured strength: docs/rules/ministeel.md.

The facts it decides on come from the observation vector (``act``) or, for search, straight from the
rules ``State`` (``act_state``: the same decisions, no observation encoded at every rollout step;
agents/mcts.py uses it for ``rollout=heuristic`` and ``prior=heuristic``). tests/test_search.py replays
seeded games and checks the two agree at every decision; docs/search.md says why they can.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.ministeel import encode as E
from ..envs.ministeel import rules as R
from .base import RuleBot, legal_actions

# How much the bot wants to hold each card (keeps the best, forfeits the worst).
CARD_VALUE = {
    "dagger": 4, "hatchet": 6, "sword": 9, "flame_shot": 8, "scythe": 9, "potion": 7, "remedy": 7,
    "poison": 6, "magnifying_glass": 5, "hook_rope": 6, "swap_rope": 2, "trip_rope": 4, "wooden_shield": 5,
    "steel_shield": 8, "bladed_shield": 7, "fate": 3, "spiked_glove": 6, "armor": 6, "satchel": 5,
    "confusion_dust": 9, "resurrection_scepter": 10, "plague_skull": 3, "doom_dragon": 5,
}  # fmt: skip
VALUE = tuple(CARD_VALUE[kind] for kind in R.KINDS)
# Strongest first; the Bladed Shield rolls a die (3.5 on average) and is kept for defence when possible.
ATTACK_ORDER = (R.SWORD, R.FLAME_SHOT, R.HATCHET, R.BLADED_SHIELD, R.DAGGER)


class HeuristicBot(RuleBot):
    """A rule-based MiniSteel player (see the module docstring)."""

    name = "heuristic"
    config_type = R.Config

    def act(self, observation: dict[str, Any]) -> int:
        legal = set(legal_actions(observation, self.name))
        obs = observation["observation"]
        return self._decide(int(np.argmax(obs[E.PHASE])), legal, _ObservationFacts(obs, self.config))

    def act_state(self, state: R.State, seat: int, legal: list[int]) -> int:
        """The move ``act`` makes, read from the rules state at ``seat``'s decision (``legal`` ascending, as
        ``rules.legal_actions`` gives them, so that ties break as they do on the observation's mask); reads
        only what the seat's observation shows. agents/mcts.py uses it for ``rollout=heuristic`` and
        ``prior=heuristic``: no observation is encoded per rollout step."""
        if len(legal) == 1:
            return legal[0]
        if state.phase == R.DRAW_PHASE:  # a Card Draw window: draw or pass, both legal (a third of rollout steps)
            return self._draw_now(state.hands[seat])
        return self._decide(state.phase, set(legal), _StateFacts(state, seat))

    def _decide(self, phase: int, legal: set[int], facts: _ObservationFacts | _StateFacts) -> int:
        if R.TOKEN_PASS in legal:  # a Card Draw window (v2): its phase has its own slot, not in E.PHASE
            choice = self._window(facts)
        elif phase == R.PICK_PHASE:
            choice = self._pick(legal)
        elif phase == R.ANSWER:
            choice = R.REACT_INDEX[R.HOOK_ROPE]
        elif phase == R.REACT_PHASE:
            choice = self._react(facts, legal)
        else:
            choice = self._main(facts, legal)
        return choice if choice in legal else min(legal)

    # --- decisions -----------------------------------------------------------------------------------

    def _pick(self, legal: set[int]) -> int:
        return max((a for a in legal if R.ACTION_TYPE[a] == R.PICK), key=lambda a: VALUE[R.ACTION_CARD[a]])

    def _react(self, facts: _ObservationFacts | _StateFacts, legal: set[int]) -> int:
        damage, poisons, combo = facts.pending()
        if damage >= 3 or (combo and damage >= 2):
            order = (R.CONFUSION_DUST, R.STEEL_SHIELD, R.BLADED_SHIELD, R.WOODEN_SHIELD, R.REMEDY)
        elif damage == 2:
            order = (R.STEEL_SHIELD, R.BLADED_SHIELD, R.WOODEN_SHIELD, R.REMEDY)
        elif damage == 1:
            order = (R.WOODEN_SHIELD, R.STEEL_SHIELD, R.REMEDY, R.BLADED_SHIELD)
        else:
            order = (R.REMEDY,) if poisons else ()
        for card in order:
            action = R.REACT_INDEX[card]
            if action in legal:
                return action
        return R.REACT_NONE

    def _window(self, facts: _ObservationFacts | _StateFacts) -> int:
        """Draw between other players' actions when the hand holds nothing to stop a hit and is already
        full: an opponent always has an action coming when this seat is asked (the turn's player between
        its actions; at a turn boundary the next player, never this seat), so a shield drawn now can
        count before this seat's turn. A shorter hand keeps the token: the turn's draw up to six would
        bring fewer cards after a draw now, and the token drawn after it brings three more (measured:
        drawing on any hand without a defence did worse than never drawing in a window, docs/rules)."""
        return self._draw_now(facts.hand())

    def _draw_now(self, hand: list[int]) -> int:
        """:meth:`_window`'s choice from the hand's counts by kind; a defence is what stops (part of) a
        physical hit: a shield or Confusion Dust."""
        if sum(hand) >= self.config.hand_size and not (
                hand[R.WOODEN_SHIELD] or hand[R.STEEL_SHIELD] or hand[R.BLADED_SHIELD] or hand[R.CONFUSION_DUST]):
            return R.TOKEN_DRAW
        return R.TOKEN_PASS

    def _main(self, facts: _ObservationFacts | _StateFacts, legal: set[int]) -> int:
        # The action indices come from module constants (below), not from R's tables: this runs at every
        # main-phase step of a heuristic rollout.
        hand = facts.hand()
        config = self.config
        my_hp, my_poison = facts.me()
        for action in _EQUIPS:
            if action in legal:
                return action
        if _TOKEN_DRAW in legal and sum(hand) <= 4:
            return _TOKEN_DRAW
        if my_poison >= 2 and _REMEDY in legal:
            return _REMEDY
        if my_hp <= config.hp_cap - 3 and _POTION in legal:
            return _POTION
        if _SCYTHE in legal:
            return _SCYTHE
        opponents = facts.opponents()
        if _PLAGUE_SKULL in legal and my_poison + 1 < config.poison_limit:
            if any(poison + 1 >= config.poison_limit for _, _, poison in opponents):
                return _PLAGUE_SKULL
        target = min(opponents, key=lambda o: (o[1], -o[2]))[0] if opponents else 1
        for action in _COMBOS_AT[target]:
            if action in legal:
                return action
        for action in _ATTACKS_AT[target]:
            if action in legal:
                return action
        poisoned = max(opponents, key=lambda o: o[2])[0] if opponents else 1
        for action in (_POISON_AT[poisoned], _HOOK_ROPE_AT[target]):
            if action in legal:
                return action
        if _DOOM_DRAGON in legal:
            return _DOOM_DRAGON
        strongest = max(opponents, key=lambda o: o[1])[0] if opponents else 1
        if _TRIP_ROPE_AT[strongest] in legal:
            return _TRIP_ROPE_AT[strongest]
        if _MAGNIFYING_GLASS in legal:
            return _MAGNIFYING_GLASS
        if _FATE_AT[target] in legal:
            return _FATE_AT[target]
        if _TOKEN_DRAW in legal and sum(hand) <= 2:
            return _TOKEN_DRAW
        if _POTION in legal and my_hp < config.hp_cap:
            return _POTION
        forfeits = [a for a in legal if _ACTION_TYPE[a] == R.FORFEIT]
        if forfeits:
            # The cheapest card; a Dark card costs 1 HP to discard, so it counts as worth more.
            return min(forfeits, key=lambda a: VALUE[R.ACTION_CARD[a]] + (6 if R.ACTION_CARD[a] in R.DARK else 0))
        return min(legal)


# The main phase's actions by what they do; ``_X_AT[k]`` is the action aimed ``k`` seats on (-1: none).
_EQUIPS = tuple(R.EQUIP_INDEX[card] for card in R.EQUIP_KINDS)
_TOKEN_DRAW = R.TOKEN_DRAW
_REMEDY, _POTION, _SCYTHE, _PLAGUE_SKULL, _DOOM_DRAGON, _MAGNIFYING_GLASS = (
    R.PLAY_INDEX[card] for card in (R.REMEDY, R.POTION, R.SCYTHE, R.PLAGUE_SKULL, R.DOOM_DRAGON, R.MAGNIFYING_GLASS))
_COMBOS_AT = tuple(tuple(R.COMBO_INDEX.get((card, k), -1) for card in ATTACK_ORDER) for k in range(R.MAX_PLAYERS))
_ATTACKS_AT = tuple(tuple(R.PLAY_AT_INDEX.get((card, k), -1) for card in ATTACK_ORDER) for k in range(R.MAX_PLAYERS))
_POISON_AT, _HOOK_ROPE_AT, _TRIP_ROPE_AT, _FATE_AT = (
    tuple(R.PLAY_AT_INDEX.get((card, k), -1) for k in range(R.MAX_PLAYERS))
    for card in (R.POISON, R.HOOK_ROPE, R.TRIP_ROPE, R.FATE))
_ACTION_TYPE = R.ACTION_TYPE


# --- the facts the heuristic decides on, from either source ----------------------------------------------------


class _ObservationFacts:
    """What the heuristic reads, from the observation vector (layout: envs/ministeel/encode.py)."""

    __slots__ = ("obs", "config")

    def __init__(self, obs: np.ndarray, config: R.Config):
        self.obs, self.config = obs, config

    def hand(self) -> list[int]:
        obs = self.obs
        return [round(float(obs[E.HAND.start + k]) * R.COUNTS[k]) for k in range(R.NUM_KINDS)]

    def me(self) -> tuple[int, int]:
        """(HP, Poison tokens) of the seat deciding."""
        obs, config = self.obs, self.config
        return round(float(obs[E.HP]) * config.hp_cap), round(float(obs[E.POISON_TOKENS]) * config.poison_limit)

    def pending(self) -> tuple[int, bool, bool]:
        """(physical damage, carries a Poison, is a combo) of the attack waiting for a reaction."""
        obs = self.obs
        return round(float(obs[E.PENDING_DAMAGE]) * 10), obs[E.PENDING_POISON] > 0.5, obs[E.PENDING_COMBO] > 0.5

    def opponents(self) -> list[tuple[int, float, int]]:
        """(offset, effective HP, poison tokens) of every opponent still in the game."""
        obs, config = self.obs, self.config
        found = []
        for offset in range(1, R.MAX_PLAYERS):
            base = E.player_block(offset)
            if obs[base + E.ALIVE] > 0.5:
                hp = float(obs[base + E.HP]) * config.hp_cap + float(obs[base + E.ARMOR])
                found.append((offset, hp, round(float(obs[base + E.POISON_TOKENS]) * config.poison_limit)))
        return found


class _StateFacts:
    """The same facts read from the rules ``State`` for ``seat`` (what its observation shows, no more).

    Effective HP is the observation's value exactly: HP / hp_cap rounded to float32, times hp_cap, plus
    Armor. HP 8 without Armor and 7 with it are then not a tie (7.99999988 against 8.00000012 at hp_cap
    10), and the target follows that, as on the observation."""

    __slots__ = ("state", "seat")

    def __init__(self, state: R.State, seat: int):
        self.state, self.seat = state, seat

    def hand(self) -> list[int]:
        return self.state.hands[self.seat]

    def me(self) -> tuple[int, int]:
        state, seat = self.state, self.seat
        return state.hp[seat], state.poison[seat]

    def pending(self) -> tuple[int, bool, bool]:
        state = self.state
        return min(state.damage, 10), state.poisons, state.combo  # the observation caps damage at 10

    def opponents(self) -> list[tuple[int, float, int]]:
        state, seat = self.state, self.seat
        n, alive, hp, armor, poison = state.n, state.alive, state.hp, state.equipment, state.poison
        scale = _hp_scale(state.config.hp_cap)
        found = []
        for offset in range(1, n):
            who = (seat + offset) % n
            if alive[who]:
                found.append((offset, scale(hp[who]) + armor[who][1], poison[who]))
        return found


_HP_SCALES: dict[int, Any] = {}


def _hp_scale(hp_cap: int) -> Any:
    """HP as the observation gives it back (float32 of HP / hp_cap, times hp_cap), memoised per hp_cap."""
    scale = _HP_SCALES.get(hp_cap)
    if scale is None:
        inverse, table = 1.0 / hp_cap, {}

        def scale(hp: int) -> float:
            value = table.get(hp)
            if value is None:
                value = table[hp] = float(np.float32(hp * inverse)) * hp_cap
            return value

        _HP_SCALES[hp_cap] = scale
    return scale


BOTS = {"heuristic": HeuristicBot}

# The levels (agents/levels.py): the network, then the compiled search at 10,000 simulations a move (about 0.08 s;
# half a second at most on a slow host). It took more than the network's paired search (level 5 before it) in
# the ladder and where the two sat at one table, in less time a move, and more than the network from three
# heuristics and from three of the network; at a table of the network and both searches the network took
# more than either search (docs/zoo.md, "Levels"). A fixed count of simulations: a table repeats where time allows.
LEVELS = ("random", "careless", "heuristic", "zoo:ministeel", "mcts:sims=10000,time=0.5")



# --- search (agents/search_hooks.py) ------------------------------------------------------------------------
# The opponents' play after the tree matters most: rollouts by the heuristic bot, cut short and scored by the
# value estimate, beat three times as many random rollouts (docs/search.md; a move under a second on one core).
from .search_hooks import SearchHooks, lead_values  # noqa: E402 - kept with the section it serves


def _value(state: Any) -> list[float]:
    """Returns a cut-off MiniSteel rollout is worth: the leader by HP left (poison counting against it)."""
    n = state.n
    strength = [(state.hp[s] - 2 * state.poison[s]) if state.alive[s] else -100 for s in range(n)]
    return lead_values(strength, 10.0)


SEARCH = SearchHooks(defaults={"sims": 100, "depth": 20, "rollout": "heuristic", "prior": "heuristic"},
                     value=_value, kernel="tavernzoo.agents.ministeel_kernel")
