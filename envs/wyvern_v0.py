"""Wyvern TCG as a PettingZoo AEC environment.

``env(**config)`` is the wrapped environment (an illegal move loses and ends the game, as in PettingZoo
classic); ``raw_env(**config)`` raises IllegalActionError instead. Options: ``tavernzoo games``.
Rules and the state machine: :mod:`tavernzoo.envs.wyvern.rules`; action table and observation layout:
:mod:`tavernzoo.envs.wyvern.encode`; catalog, decks and the deck validator: :mod:`tavernzoo.envs.wyvern.decks`.

Version history
---------------
* v0 — first release: 2-6 players, 8 races, 5 classes, 64-card catalog, combat window with help deals,
  running away, death and looting, curses, selling, specialty decks and optional summons.
"""

from .aec import make_env_factories
from .wyvern import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
