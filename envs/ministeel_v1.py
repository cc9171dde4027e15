"""MiniSteel as a PettingZoo AEC environment.

``env(**config)`` is the wrapped environment (an illegal move loses and ends the game, as in PettingZoo
classic); ``raw_env(**config)`` raises IllegalActionError instead. Options: ``tavernzoo games``.
Rules, action table and observation layout: :mod:`tavernzoo.envs.ministeel.rules` and ``.encode``;
the rules as implemented, every interpretation marked: docs/rules/ministeel.md.

Eliminated players leave ``env.agents`` at once, paid -1/(N-1); the winner gets +1 at the end.

Version history
---------------
* v0 — first release: 2-6 players, the full card sheet, reactions, Hook Rope answers, Poison combos.
* v1 — the observation grows from 176 to 291 floats: ``KNOWN``, the cards a seat knows each other seat
  holds (memory of a Swap Rope, a Hook Rope, a hooked shield). Fate targets opponents only unless
  ``fate_on_self=True``; the Scythe attacks first and takes its cards afterwards (the rulebook's order).
"""

from .aec import make_env_factories
from .ministeel import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
