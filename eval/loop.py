"""One game played out, for the hosts that need no more than its returns and record (the match, tests).
The game itself is the table engine's (eval/table.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .table import Table, bot_stats

__all__ = ["bot_stats", "play_game"]


def play_game(env: Any, bots: Sequence[Any], seed: int, seat_names: Sequence[str] | None = None):
    """Play one game at a :class:`~tavernzoo.eval.table.Table`: ``bots[seat]`` plays seat ``seat``, each
    keeping its own seeds. Returns ``(returns, record)``: each seat's summed rewards and the replayable
    game record. A bot's failure raises (a match has no forfeits)."""
    result = Table(env, bots, seed, seat_names).play()
    return result.returns, result.record
