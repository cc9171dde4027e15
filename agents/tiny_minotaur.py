"""Tiny Minotaur PvP's built-in bots: ``heuristic`` below, and ``oracle`` (exact optimal play from the
solver, :mod:`.tiny_minotaur_oracle`; docs/oracle.md).

``heuristic`` reads the observation (both decks are public) and plays by expected damage:

* attack: a card that can knock the opponent out now, most likely to hit first; otherwise the card with
  the highest expected damage (hit chance x damage), keeping the cheaper card on ties;
* react: when the hit would knock it out, the reaction most likely to survive; otherwise a dodge only
  against big hits (middling and up) and a heal only when none of it is lost to the HP cap.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..envs.tiny_minotaur import encode, rules
from .base import RuleBot, legal_actions
from .search_hooks import ClosedLoopGame, SearchHooks


class HeuristicBot(RuleBot):
    """Rule-based Tiny Minotaur play: expected damage to attack, dodges saved for big hits."""

    name = "heuristic"
    config_type = rules.Config

    def __init__(self, config: rules.Config | None = None, seed: int | None = None):
        super().__init__(config, seed)
        ruleset = rules.load_ruleset(self.config.ruleset)
        self._damage = (ruleset.damage["regular"], ruleset.damage["middling"], ruleset.damage["stronk"])

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        if len(legal) == 1:
            return legal[0]
        obs = observation["observation"]
        if obs[encode.MY_REACTION] > 0.5:
            return self._react(obs, legal)
        return self._attack(obs, legal)

    def _hp(self, obs: np.ndarray, block: int) -> int:
        return round(float(obs[block + encode.HP]) * self.config.hp_cap)

    def _attack(self, obs: np.ndarray, legal: list[int]) -> int:
        opponent_hp = self._hp(obs, encode.OPPONENT)
        chances = obs[encode.ME + encode.CHANCES.start: encode.ME + encode.CHANCES.stop]
        boss_damage = round(float(obs[encode.ME + encode.BOSS_DAMAGE]) * 100)
        hit_chance = {rules.ATTACK_REGULAR: 1.0, rules.ATTACK_MIDDLING: float(chances[0]),
                      rules.ATTACK_STRONK: float(chances[1]), rules.ATTACK_BOSS: float(chances[2])}
        damage = {rules.ATTACK_REGULAR: self._damage[0], rules.ATTACK_MIDDLING: self._damage[1],
                  rules.ATTACK_STRONK: self._damage[2], rules.ATTACK_BOSS: boss_damage}
        attacks = [a for a in legal if a in hit_chance]
        if not attacks:
            return legal[0]
        lethal = [a for a in attacks if damage[a] >= opponent_hp]
        if lethal:
            return max(lethal, key=lambda a: (hit_chance[a], -damage[a]))
        return max(attacks, key=lambda a: (hit_chance[a] * damage[a], -damage[a]))

    def _react(self, obs: np.ndarray, legal: list[int]) -> int:
        my_hp = self._hp(obs, encode.ME)
        incoming = round(float(obs[encode.PENDING_DAMAGE]) * 100)
        chances = obs[encode.ME + encode.CHANCES.start: encode.ME + encode.CHANCES.stop]
        dodge_chance, heal_chance = float(chances[3]), float(chances[4])
        heal = self.config.heal_amount
        can_dodge = rules.REACT_DODGE in legal
        can_heal = rules.REACT_HEAL in legal
        if incoming >= my_hp:  # this hit knocks me out unless a reaction saves me
            options = []
            if can_dodge:
                options.append((dodge_chance, rules.REACT_DODGE))
            if can_heal and my_hp - incoming + heal > 0:
                options.append((heal_chance, rules.REACT_HEAL))
            return max(options)[1] if options else rules.REACT_TAKE
        if can_dodge and incoming > self._damage[0]:
            return rules.REACT_DODGE
        if can_heal and my_hp - incoming + heal <= self.config.hp_cap:
            return rules.REACT_HEAL
        return rules.REACT_TAKE


def _oracle(config: rules.Config, seed: int | None = None):
    from .tiny_minotaur_oracle import OracleBot  # the solver loads only when the oracle is asked for

    return OracleBot(config, seed)


def _erring_oracle(blunder: float):
    """The factory of the oracle that plays its worst move at a share ``blunder`` of its decisions."""

    def make(config: rules.Config, seed: int | None = None):
        from .tiny_minotaur_oracle import ErringOracleBot

        return ErringOracleBot(config, seed, blunder)

    return make


ERRING_PERCENTS = (100, 72, 50, 30)
"""The shares (in percent) of decisions that the ``oracle_errs_N`` bots, Tiny Minotaur's lower levels, play worst."""

BOTS = {"heuristic": HeuristicBot, "oracle": _oracle,
        **{f"oracle_errs_{percent}": _erring_oracle(percent / 100) for percent in ERRING_PERCENTS}}

# The levels (agents/levels.py): the dice decide most games, so the game's own bots span too little for five
# levels each clearly above the last (random takes 0.275 of the games from exact play, the heuristic 0.46, the
# network 0.50). The ladder is exact play erring less and less: the oracle playing its worst move at every
# decision, at 72%, 50% and 30% of them (each measured to beat the one above by 0.6 or more), then exact play.
LEVELS = tuple(f"oracle_errs_{percent}" for percent in ERRING_PERCENTS) + ("oracle",)


# --- search (agents/search_hooks.py) ------------------------------------------------------------------------


def _state_key(state: Any) -> tuple:
    """Everything that decides the rest of a Tiny Minotaur game once the matchup is dealt: HP, both decks,
    phase, pending hit and seat to act. The turn counter is left out, as the solver leaves it out: it only
    matters at the engine's safety cap of ``max_turns`` (200), which docs/oracle.md finds is almost never
    reached; leaving it out lets the miss-miss loop close on itself. Fields fixed for the whole game
    (archetypes, tiers, windows, damage, config) are checked once per table (:func:`_fixed_for_the_game`)."""
    cards0, cards1 = state.cards
    return (state.to_act, state.phase, state.pending_card, state.hp[0], state.hp[1], *cards0, *cards1)


def _fixed_for_the_game(state: Any) -> tuple:
    """The parts of a Tiny Minotaur state that stay fixed for a whole game: a table is only reused while
    they are equal."""
    return (state.config, state.archetypes, state.bosses, state.tiers, state.windows, state.damage)


# The fields of a Tiny Minotaur State that the rules mutate in place (tests/test_search.py checks that every
# other field holds nothing mutable, so a field added later cannot be shared by mistake).
MUTABLE_FIELDS = ("hp", "cards", "last_events", "chance")


def _copy_state(state: Any, chance: Any) -> Any:
    """``clone_state(state, chance)`` for a Tiny Minotaur State, several times faster: the search copies a
    state for every simulation and every die face it enumerates, and the generic copy inspects every value."""
    kind = state.__class__
    new = kind.__new__(kind)
    for name in _shared_fields(kind):
        setattr(new, name, getattr(state, name))
    new.hp = state.hp[:]
    new.cards = [deck[:] for deck in state.cards]
    new.last_events = state.last_events[:]
    new.chance = chance
    return new


def _shared_fields(kind: type) -> tuple[str, ...]:
    names = _SHARED_FIELDS.get(kind)
    if names is None:
        names = _SHARED_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind)
                                             if f.name not in MUTABLE_FIELDS)
    return names


_SHARED_FIELDS: dict[type, tuple[str, ...]] = {}


# A move takes under a second on one core of the 2-core reference machine (docs/search.md). Both decks are
# public and the dice are the only chance, so the tree is closed-loop: nodes are states (agents/mcts_closed.py).
SEARCH = SearchHooks(
    defaults={"sims": 3000, "depth": 0, "tree": "closed", "c": 3.0},
    closed_loop=ClosedLoopGame(_state_key, _fixed_for_the_game, _copy_state),
)
