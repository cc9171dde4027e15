"""Tiny Minotaur PvP as a PettingZoo AEC environment.

``env(**config)`` is the wrapped environment (an illegal move loses and ends the game, as in PettingZoo
classic); ``raw_env(**config)`` raises IllegalActionError instead. Options: ``tavernzoo games``.
Rules, action table and observation layout: :mod:`tavernzoo.envs.tiny_minotaur.rules` and ``.encode``.

Version history
---------------
* v0 — first release: classes, initiative tiers, dodge and heal reactions, optional Boss/NPC cards.
* v1 — archetypes (clerics 6 regular attacks, the rest 5) and per-seat ``boss_replaces``, both in the
  observation (player blocks of 28); decks as the rulebook describes them (only Magic heals); a hit-window
  table where a higher tier is never worse (the v0 table is the ``house_narrowing`` ruleset).
"""

from .aec import make_env_factories
from .tiny_minotaur import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
