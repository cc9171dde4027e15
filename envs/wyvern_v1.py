"""Wyvern TCG as a PettingZoo AEC environment.

``env(**config)`` is the wrapped environment (an illegal move loses and ends the game, as in PettingZoo
classic); ``raw_env(**config)`` raises IllegalActionError instead. Options: ``tavernzoo games``.
Rules and the state machine: :mod:`tavernzoo.envs.wyvern.rules`; action table and observation layout:
:mod:`tavernzoo.envs.wyvern.encode`; catalog, decks and the deck validator: :mod:`tavernzoo.envs.wyvern.decks`.

Version history
---------------
* v0 — first release: 2-6 players, 8 races, 5 classes, 64-card catalog, combat window with help deals,
  running away, death and looting, curses, selling, specialty decks and optional summons.
* v1 — help is negotiated: ``help:+r:k`` became ``offer:+r:k`` (a first, new or improved offer) and
  ``ask:k`` (offer to help, or counter an offer) joined ``accept`` / ``decline``, bounded by
  ``help_rounds``; phase ``counter``; a looter may ``decline`` and draws from a hand with ``loot:hand``;
  the hand limit holds at all times (``hand_limit_always``); only a paladin fighter wins ties
  (``paladin_helper_wins_ties``). 295 actions; the observation grew to 587 (help talks per player,
  the pending ask, the cards over the hand limit).
"""

from .aec import make_env_factories
from .wyvern import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
