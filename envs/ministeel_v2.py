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
* v2 — Card Draw tokens "at any time" (``token_timing=any_time``, the default): besides your own main
  phase, a Card Draw window opens after every completed action of another player, at every turn
  boundary and before the first turn; each seat in play holding a token is asked in seat order
  (phase ``draw``: ``token:draw``, asked again while it holds one, or ``token:pass``). One action more
  (``token:pass``, index 140: 141 in all) and two observation floats appended (291: a window is open,
  292: it is a turn boundary; 293 in all); every v1 index keeps its meaning. ``token_timing=own_turn``
  plays v1's rules with v1's 291 floats and 140 actions. v1 itself stays importable as
  ``tavernzoo.envs.ministeel_v1`` (the same engine, v1's options: no ``token_timing``), so v1 records
  replay and v1 bots (``zoo:ministeel_v1``) play it; a v1 bot is refused for v2.
"""

from .aec import make_env_factories
from .ministeel import GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
