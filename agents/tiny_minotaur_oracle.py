"""The Tiny Minotaur oracle: exact optimal play from the solver (:mod:`tavernzoo.envs.tiny_minotaur.solver`).

The observation holds the whole table (both decks are public), so the bot decodes the exact state from
the documented layout (:mod:`tavernzoo.envs.tiny_minotaur.encode`): both HPs, tiers, archetypes, card
counts, boss cards and the cards they replaced, the phase and the pending hit. With the config's
ruleset that fixes the matchup, which the solver solves once (then memory and the disk cache serve
it) and the bot plays a value-maximising action. It is optimal for the game without the
``max_turns`` cap (see docs/oracle.md).

Registered as ``oracle`` in ``agents/tiny_minotaur.py``'s ``BOTS``; :class:`ErringOracleBot`, the oracle that
plays its worst move at a set share of its decisions, is the rungs below it on the game's ladder of levels.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ..envs.tiny_minotaur import encode, rules, solver
from .base import RuleBot, legal_actions


class OracleBot(RuleBot):
    """Plays Tiny Minotaur optimally (maximises expected return: win minus loss probability)."""

    name = "oracle"
    config_type = rules.Config

    def __init__(self, config: rules.Config | None = None, seed: int | None = None):
        super().__init__(config, seed)
        self._ruleset = rules.load_ruleset(self.config.ruleset)
        self._card_scale = encode._card_scale(self.config.ruleset)

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        if len(legal) == 1:
            return legal[0]
        position = self.decode(observation["observation"])
        solution = solver.solve(position["matchup"])
        if position["phase"] == "react":
            action = solution.best_reaction(position["hp"], position["cards"], position["me"], position["pending_card"])
        else:
            action = solution.best_attack(position["hp"], position["cards"], position["me"])
        if action not in legal:
            raise RuntimeError(
                f"oracle chose {encode.ACTION_NAMES[action]!r}, not legal here "
                f"({', '.join(encode.ACTION_NAMES[a] for a in legal)}): observation decoding is out of step"
            )
        return action

    def values(self, observation: dict[str, Any]) -> dict[int, float]:
        """The optimal value (expected return for me) of each legal action, for analysis and tests."""
        position = self.decode(observation["observation"])
        solution = solver.solve(position["matchup"])
        hp, cards, me = position["hp"], position["cards"], position["me"]
        if position["phase"] == "react":
            return {a: v for a, (v, _) in solution.reaction_values(hp, cards, me, position["pending_card"]).items()}
        return solution.attack_values(hp, cards, me)

    def action_values(self, observation: dict[str, Any]) -> dict[int, float]:
        """Each legal action's exact value (expected return for me under optimal play from there on): what a
        game's review marks decisions with (eval/review.py: a cost is the best value less the chosen one's)."""
        return self.values(observation)

    # --- decoding the observation ----------------------------------------------------------------------

    def decode(self, obs: np.ndarray) -> dict[str, Any]:
        """The solver position of an observation: the canonical matchup, my seat in it, HP and cards
        (both in that matchup's seat order), the phase and the pending hit's card slot."""
        blocks = [self._player(obs, encode.ME), self._player(obs, encode.OPPONENT)]
        matchup = solver.matchup_of(
            self.config,
            (blocks[0]["archetype"], blocks[1]["archetype"]),
            (blocks[0]["tier"], blocks[1]["tier"]),
            (blocks[0]["boss"], blocks[1]["boss"]),
            (blocks[0]["boss_replaces"], blocks[1]["boss_replaces"]),
        )
        matchup, swapped = solver.canonical(matchup)
        if swapped:
            blocks.reverse()
        if obs[encode.MY_REACTION] > 0.5:
            phase = "react"
        elif obs[encode.MY_TURN] > 0.5:
            phase = "attack"
        else:
            raise ValueError("the observation is not of a seat to act")
        pending = int(np.argmax(obs[encode.PENDING_CARD])) if phase == "react" else -1
        return {
            "matchup": matchup,
            "me": 1 if swapped else 0,
            "hp": (blocks[0]["hp"], blocks[1]["hp"]),
            "cards": (blocks[0]["cards"], blocks[1]["cards"]),
            "phase": phase,
            "pending_card": pending,
        }

    def _player(self, obs: np.ndarray, block: int) -> dict[str, Any]:
        tier = int(np.argmax(obs[block + encode.TIER.start: block + encode.TIER.stop])) + 1
        archetypes = obs[block + encode.ARCHETYPE.start: block + encode.ARCHETYPE.stop]
        archetype = rules.ALL_ARCHETYPES[int(np.argmax(archetypes))]
        replaced = obs[block + encode.BOSS_REPLACED.start: block + encode.BOSS_REPLACED.stop]
        cards = tuple(
            round(float(obs[block + encode.CARDS.start + slot]) * self._card_scale[slot]) for slot in range(6)
        )
        return {
            "hp": round(float(obs[block + encode.HP]) * self.config.hp_cap),
            "tier": tier,
            "archetype": archetype,
            "cards": cards,
            "boss": self._boss(obs, block, tier),
            # with no boss card the replaced card plays no part: any value gives the same matchup
            "boss_replaces": rules.CARD_NAMES[int(np.argmax(replaced))] if replaced.max() > 0.5 else "regular",
        }

    def _boss(self, obs: np.ndarray, block: int, tier: int) -> str | None:
        """The boss card named by its damage and hit chance (the observation carries no name).

        Bosses alike in both only change names, not play, so any match is as good; the config's own
        choices are tried first.
        """
        damage = float(obs[block + encode.BOSS_DAMAGE])
        chance = float(obs[block + encode.CHANCES.start + 2])
        if damage == 0.0 and chance == 0.0:
            return None
        named = [b for b in self.config.bosses if b != rules.NO_BOSS]
        for name in [*named, *self._ruleset.bosses]:
            boss_damage, windows = self._ruleset.bosses[name]
            if (abs(min(1.0, boss_damage / 100.0) - damage) < 1e-6
                    and abs(encode.chance_of(windows[tier - 1]) - chance) < 1e-6):
                return name
        raise ValueError(f"no boss card in the ruleset deals {damage * 100:g} and hits with chance {chance:g}")


class ErringOracleBot(OracleBot):
    """The oracle, but at a share ``blunder`` of its decisions (those with a choice) it plays its worst legal
    move instead: the one of lowest optimal value, the first such action on a tie.

    One knob from exact play (0) to throwing every decision (1): Tiny Minotaur's levels are this bot at
    falling shares (agents/tiny_minotaur.py ``LEVELS``). The worst move rather than a random one because the
    dice decide most of a game: between random play and exact play there is room for under two levels that
    each clearly beat the one below (docs/zoo.md, "Levels"), and below random there is as much again.
    """

    name = "erring-oracle"

    def __init__(self, config: rules.Config | None = None, seed: int | None = None, blunder: float = 0.5):
        super().__init__(config, seed)
        if not 0.0 <= blunder <= 1.0:
            raise ValueError(f"blunder={blunder}: the share of decisions played worst lies in 0..1")
        self.blunder = blunder
        self._random = random.Random(seed)

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        if seed is not None:  # the game's seed decides which decisions go wrong
            self._random.seed(seed)

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        if len(legal) == 1:
            return legal[0]
        if self._random.random() < self.blunder:
            values = self.values(observation)
            return min(legal, key=lambda action: (values[action], action))
        return super().act(observation)


BOTS = {"oracle": OracleBot}
