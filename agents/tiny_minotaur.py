"""Tiny Minotaur PvP's built-in bots: ``heuristic`` below, and ``oracle`` (exact optimal play from the
solver, :mod:`.tiny_minotaur_oracle`; docs/oracle.md).

``heuristic`` reads the observation (both decks are public) and plays by expected damage:

* attack: a card that can knock the opponent out now, most likely to hit first; otherwise the card with
  the highest expected damage (hit chance x damage), keeping the cheaper card on ties;
* react: when the hit would knock it out, the reaction most likely to survive; otherwise a dodge only
  against big hits (middling and up) and a heal only when none of it is lost to the HP cap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..envs.tiny_minotaur import encode, rules
from .base import RuleBot, legal_actions


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


BOTS = {"heuristic": HeuristicBot, "oracle": _oracle}
