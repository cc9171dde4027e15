"""Minefield as PettingZoo environments: simultaneous moves, so the Parallel API is the native one.

``parallel_env(**config)`` is the ParallelEnv (an illegal move loses and ends the game;
``illegal_reward=None`` raises IllegalActionError instead); ``env(**config)`` is the same game as an
AEC env through PettingZoo's ``parallel_to_aec`` (agents choose one after another, the round is played
when the last living agent has chosen), with the standard wrappers; ``raw_env(**config)`` is that AEC
env without them, raising IllegalActionError. Options: ``tavernzoo games``.
Rules, action table and observation layout: :mod:`tavernzoo.envs.minefield.rules` and ``.encode``.

Version history
---------------
* v0 — first release: the host automated (mine rolls, attack order, battles, tie re-rolls, finals);
  Simple, Stacked and Double Whammy variants; configurable roll battle, finals mines and rewards.
"""

from .minefield import GAME
from .parallel import make_parallel_factories

parallel_env, env, raw_env = make_parallel_factories(GAME)

__all__ = ["env", "parallel_env", "raw_env", "GAME"]
