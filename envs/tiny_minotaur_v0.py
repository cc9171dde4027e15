"""Tiny Minotaur PvP as a PettingZoo AEC environment.

``env(**config)`` is the wrapped environment (an illegal move loses and ends the game, as in PettingZoo
classic); ``raw_env(**config)`` raises IllegalActionError instead. Options: ``tavernzoo games``.
Rules, action table and observation layout: :mod:`tavernzoo.envs.tiny_minotaur.rules` and ``.encode``.

Version history
---------------
* v0 — first release: classes, initiative tiers, dodge and heal reactions, optional Boss/NPC cards.
"""

from .aec import make_env_factories
from .tiny_minotaur import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
