"""One game played out, for the hosts that need no more than its returns and record (the match, tests),
and the sum of the bots' counts over games. The game itself is the table engine's (eval/table.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .table import Table, bot_stats

__all__ = ["add_stats", "bot_stats", "play_game"]


def play_game(env: Any, bots: Sequence[Any], seed: int, seat_names: Sequence[str] | None = None):
    """Play one game at a :class:`~tavernzoo.eval.table.Table`: ``bots[seat]`` plays seat ``seat``, each
    keeping its own seeds. Returns ``(returns, record)``: each seat's summed rewards and the replayable
    game record. A bot's failure raises (a match has no forfeits)."""
    result = Table(env, bots, seed, seat_names).play()
    return result.returns, result.record


def add_stats(total: dict[str, Any], stats: dict[str, Any] | None) -> None:
    """Sum one game's ``game_stats`` into ``total`` (numbers add up; ``games`` counts the games)."""
    if not stats:
        return
    total["games"] = total.get("games", 0) + 1
    for key, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = round(total.get(key, 0) + value, 6)

