"""The one tally: what a finished game scores, and its sum over games and deals.

Every host counts games here (the match, ``replay --table``, the training report, the tournament's game lines,
the terminal; web tables read the same scores and places):

    score_of(returns, seat)          a seat's win share: 1 for the sole best return, 1/k for a top shared by k
    places_from_scores(scores, out)  finishing places, competition ranking (Minefield's order of going out)
    score_game(returns, forfeit)     every seat's share and place, a forfeit's included (:class:`GameScore`)
    outcome(share)                   the game as a win, a draw or a loss for that seat (0, 1, 2)
    BotRow, add_deal, finish_rows    an entry's games, wins, draws, losses and its score over deals, with
                                     the interval of eval/stats.py (a deal, whose games share their dice, is
                                     the independent unit); pooled_rows for a spec entered more than once;
                                     with each game's luck (eval/luck.py), the luck-corrected score beside it
    add_stats                        a bot's ``game_stats`` summed over games

The tournament's running tally (eval/results.py ``Tally``) keeps counts of these values rather than lists, as
its runs are long; its game lines carry the scores and places of :func:`score_game`.

A leaf of eval/ but for eval/stats.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .stats import control_variate_values, mean_interval

WIN, DRAW, LOSS = 0, 1, 2


def score_of(returns: Sequence[float], seat: int) -> float:
    """Win share of ``seat``: 1 for the sole best return, 1/k for a top shared by k seats, else 0."""
    top = max(returns)
    if returns[seat] != top:
        return 0.0
    return 1.0 / sum(1 for value in returns if value == top)


def places_from_scores(scores: Sequence[float], seats_out: Sequence[int] = ()) -> list[int]:
    """Finishing places (1 = best) with shared places for equal scores: ``[1, 0.5, 0.5] -> ...``.

    Competition ranking: a seat's place is 1 + the number of seats that did strictly better. Seats in
    ``seats_out`` (in the order they went out of the game) are placed behind every other seat, in the reverse
    of that order, the last one out next best: Minefield's finishing order, where every loser scores alike.
    """
    out = list(seats_out)
    still_in = [mine for seat, mine in enumerate(scores) if seat not in out]
    places = [1 + sum(1 for other in still_in if other > mine) for mine in scores]
    for order, seat in enumerate(out):
        places[seat] = len(scores) - order
    return places


@dataclass(frozen=True)
class GameScore:
    """A finished game's scores (each seat's win share) and places (1 = best)."""

    scores: list[float]
    places: list[int]


def score_game(returns: Sequence[float] | None, seats: int, forfeit_seat: int | None = None,
               seats_out: Sequence[int] = ()) -> GameScore:
    """Every seat's share and place: from the returns, or, when the seat ``forfeit_seat`` forfeited the game
    (returns None), 0 and the last place for it and a shared first place for every other seat (1/(n-1) each:
    a win in a duel)."""
    if forfeit_seat is not None:
        return GameScore([0.0 if seat == forfeit_seat else 1.0 / (seats - 1) for seat in range(seats)],
                         [seats if seat == forfeit_seat else 1 for seat in range(seats)])
    if returns is None:
        raise ValueError("a game without returns scores only as a forfeit")
    return GameScore([score_of(returns, seat) for seat in range(seats)], places_from_scores(returns, seats_out))


def outcome(share: float) -> int:
    """:data:`WIN` for the whole win (share 1), :data:`LOSS` for none, else :data:`DRAW` (a shared top)."""
    return WIN if share == 1.0 else LOSS if share == 0.0 else DRAW


def add_stats(total: dict[str, Any], stats: dict[str, Any] | None) -> None:
    """Sum one game's ``game_stats`` into ``total`` (numbers add up; ``games`` counts the games)."""
    if not stats:
        return
    total["games"] = total.get("games", 0) + 1
    for key, value in stats.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            total[key] = round(total.get(key, 0) + value, 6)


@dataclass
class BotRow:
    """One entry of a match (an entry is a bot spec at a position in its ``bot_specs``)."""

    bot: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    total_return: float = 0.0
    score: float = 0.0
    score_ci: tuple[float, float] = (0.0, 1.0)
    per_deal_scores: list[float] = field(default_factory=list, repr=False)
    bot_stats: dict[str, Any] = field(default_factory=dict)
    """The bot's ``game_stats`` summed over its games (the ``llm:`` bot's; empty for other bots)."""
    per_deal_luck: list[float] = field(default_factory=list, repr=False)
    """The entry's luck in each deal (eval/luck.py), where the games were measured; else empty."""
    corrected: float | None = None
    """The luck-corrected score (eval/stats.py ``control_variate_values``): None without luck measured."""
    corrected_ci: tuple[float, float] | None = None

    def deal_values(self) -> list[float]:
        """The per-deal samples of the entry's score: luck-corrected where luck was measured, else plain."""
        if self.per_deal_luck:
            return control_variate_values(self.per_deal_scores, self.per_deal_luck)
        return self.per_deal_scores

    @property
    def mean_return(self) -> float:
        return self.total_return / self.games if self.games else math.nan

    def add_game(self, game_return: float, share: float) -> None:
        """Count one game: this entry's return and its share of the win (1 won, 0 lost, between: drawn)."""
        self.games += 1
        self.total_return += game_return
        result = outcome(share)
        self.wins += result == WIN
        self.draws += result == DRAW
        self.losses += result == LOSS


def add_deal(rows: Sequence[BotRow], games: Sequence[tuple]) -> None:
    """Count one deal's games (one per seating) into ``rows`` (one per entry): each game as its returns, its
    seating (the entry at each seat), its bot stats (per seat, or None) and, optionally, each seat's luck
    (eval/luck.py; None or left out where not measured); each entry's share of the deal (its mean win share over
    the deal's games) is the unit of the interval, and so is its mean luck."""
    seats = len(rows)
    deal_scores = [0.0] * seats
    deal_luck: list[float] | None = [0.0] * seats
    for returns, seating, stats, *measured in games:
        luck = measured[0] if measured else None
        if luck is None:
            deal_luck = None
        for seat, entry in enumerate(seating):
            share = score_of(returns, seat)
            rows[entry].add_game(returns[seat], share)
            if stats is not None:
                add_stats(rows[entry].bot_stats, stats[seat])
            deal_scores[entry] += share / seats
            if deal_luck is not None:
                deal_luck[entry] += luck[seat] / seats
    for entry, row in enumerate(rows):
        row.per_deal_scores.append(deal_scores[entry])
        if deal_luck is not None:
            row.per_deal_luck.append(deal_luck[entry])


def finish_rows(rows: Sequence[BotRow]) -> None:
    """Each row's score and 95% interval from its per-deal scores (clipped to 0 - 1); where every deal's luck
    was measured, the luck-corrected score and its interval too (unclipped: a corrected sample may leave 0 - 1)."""
    for row in rows:
        mean, low, high = mean_interval(row.per_deal_scores)
        row.score = mean
        row.score_ci = (max(0.0, low), min(1.0, high))
        if row.per_deal_luck and len(row.per_deal_luck) == len(row.per_deal_scores):
            mean, low, high = mean_interval(row.deal_values())
            row.corrected, row.corrected_ci = mean, (low, high)


def pooled_rows(bot_specs: Sequence[str], rows: Sequence[BotRow]) -> list[BotRow]:
    """One row per bot spec entered more than once (a team of alike bots, e.g. the A pair of A B A B), of
    ``rows`` (one per entry, in ``bot_specs`` order): its entries' games together, its score the team's share
    of the wins (fair share: entries / seats), the interval over deals as for a single entry."""
    pooled = []
    for spec in dict.fromkeys(bot_specs):
        entries = [row for entry, row in zip(bot_specs, rows, strict=True) if entry == spec]
        if len(entries) < 2:
            continue
        team = BotRow(f"{spec} x{len(entries)}")
        for row in entries:
            team.games += row.games
            team.wins += row.wins
            team.draws += row.draws
            team.losses += row.losses
            team.total_return += row.total_return
        team.per_deal_scores = [math.fsum(scores) for scores in zip(*(row.per_deal_scores for row in entries),
                                                                      strict=True)]
        if all(row.per_deal_luck for row in entries):
            team.per_deal_luck = [math.fsum(luck) for luck in zip(*(row.per_deal_luck for row in entries),
                                                                   strict=True)]
        pooled.append(team)
    finish_rows(pooled)
    return pooled
