"""The one game loop: bots play one game through a game's PettingZoo AEC env.

The match (eval/match.py), the tournament's deals (eval/runner.py, each bot behind a
:class:`~tavernzoo.eval.guard.Guard`) and the tests play every game here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agents.base import as_bot
from ..agents.infoset import feed


def play_game(env: Any, bots: Sequence[Any], seed: int, seat_names: Sequence[str] | None = None):
    """Play one game: ``bots[seat]`` plays seat ``seat``. Returns ``(returns, record)``.

    ``returns`` are each seat's summed rewards; ``record`` is the replayable game record.
    """
    env.reset(seed=seed)
    bots = [as_bot(bot) for bot in bots]
    for seat, bot in enumerate(bots):
        bot.begin_game(seat, None)  # the seat it holds (external programs are told); None: its own seeds
    seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
    totals = [0.0] * len(bots)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        seat = seat_of[agent]
        totals[seat] += reward
        if termination or truncation:
            env.step(None)
            continue
        feed(bots[seat], env, agent)  # search bots get their seat's information state (agents/infoset.py)
        env.step(bots[seat].act(observation))
    record = env.unwrapped.record(seats=list(seat_names) if seat_names else None)
    stats = bot_stats(bots)
    if stats is not None:
        record["bot_stats"] = stats
    return totals, record


def bot_stats(bots: Sequence[Any | None]) -> list[dict[str, Any] | None] | None:
    """A game record's ``bot_stats``: each seat's ``game_stats()`` of the game just played (the ``llm:``
    bots' counts; None for a bot that counts nothing or a seat no bot holds, e.g. a person's), or None
    when no seat counted anything."""
    stats = [as_bot(bot).game_stats() if bot is not None else None for bot in bots]
    return stats if any(item is not None for item in stats) else None


def add_stats(total: dict[str, Any], stats: dict[str, Any] | None) -> None:
    """Sum one game's ``game_stats`` into ``total`` (numbers add up; ``games`` counts the games)."""
    if not stats:
        return
    total["games"] = total.get("games", 0) + 1
    for key, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = round(total.get(key, 0) + value, 6)

