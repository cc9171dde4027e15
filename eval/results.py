"""A tournament's results: the running tally, the SPRT, the leaderboard (printed by :mod:`.leaderboard`).

Game files: :mod:`.game_files` (their names are importable from here).

The running tally (:class:`Tally`)
    Results are computed as games end, from each game's line without its record (a worker sends its
    games' summaries, not their records): the tally takes games in any order and counts them in
    (deal, rotation) order, holding only those that arrive ahead of a missing one. Counting in that order
    makes every figure, the OpenSkill ratings included, independent of the number of workers and of the
    backend. Memory stays bounded by the number of bots and of distinct scores, not of games: shares
    and deal means are kept as counts of each value, and the intervals are computed from those counts
    with exact sums (the same numbers as :func:`~tavernzoo.eval.stats.mean_interval` over the list).

SPRT (``--sprt``, two entries in a two-player game: candidate first)
    After every deal (in deal order) the LLR of the candidate's W/D/L against the champion is checked;
    the run stops at the first deal where H0 or H1 is accepted, and the results count the deals up to
    that one (deals that other workers were finishing are kept in the file, not counted).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .deals import results_stamp
from .game_files import (  # noqa: F401 - importable from here, as before
    GAMES_FILE,
    PARTS_DIR,
    game_files,
    game_key,
    game_summary,
    merge_parts,
    part_path,
    read_games,
    scan_games,
)
from .leaderboard import print_results  # noqa: F401 - importable from here, as before
from .ratings import PlackettLuceTally, Sprt, elo_estimate
from .schedule import Settings, make_tables
from .stats import control_variate_values, counted_mean_interval, mean_interval, sequential_separation
from .tally import DRAW, LOSS, WIN, add_stats, outcome

RESULTS_FILE = "results.json"


# --- the running tally ----------------------------------------------------------------------------------


class Tally:
    """A tournament's results, updated as games end (see the module docstring).

    ``add`` takes each finished game's summary once, in any order; ``results`` gives ``results.json``.
    With an SPRT, ``decided_at`` is the deal at which it decided (None until then): later deals are not
    counted, and runners hand out no more deals once it is set.
    """

    def __init__(self, settings: Settings, tables: Sequence[Sequence[int]] | None = None):
        self.settings = settings
        self.seats = settings.seats
        self.tables = tables or make_tables(len(settings.bots), settings.seats, settings.format, settings.seed)
        entries = len(settings.bots)
        self.sprt = Sprt(*settings.sprt) if settings.sprt else None
        self.wdl = [0, 0, 0]
        self.llr = 0.0
        self.decision: str | None = None
        self.decided_at: int | None = None
        # Each deal's figures in order, for the luck correction and the sequential stop (only with them: else
        # every figure comes from counts).
        self.luck, self.sequential = settings.luck is not None, settings.sequential
        self._entries = [_EntryTally(keep_deals=self.luck or self.sequential is not None) for _ in range(entries)]
        self._pairs = [[[0, 0, 0] for _ in range(entries)] for _ in range(entries)]
        self._ratings = PlackettLuceTally(entries)
        self.forfeits: list[dict] = []
        self._pending: dict[tuple[int, int], dict] = {}
        self._next = (0, 0)
        self._deal_shares: dict[int, list[float]] = {}
        self._deal_luck: dict[int, list[float]] = {}
        self.separated: list[tuple[int, int]] = []
        self.counted = 0
        self.deals_counted = 0
        self.added = 0

    def add(self, game: dict) -> None:
        """Take one finished game (its line or summary); a game already taken is ignored."""
        key = game_key(game)
        if key < self._next or key in self._pending:
            return
        self.added += 1
        if key[0] < self.settings.deals and self.decided_at is None:
            self._pending[key] = game
            self._advance()

    def add_all(self, games: Iterable[dict]) -> None:
        for game in games:
            self.add(game)

    def _advance(self) -> None:
        while self.decided_at is None and self._next in self._pending:
            deal, rotation = self._next
            self._count(self._pending.pop(self._next))
            if rotation + 1 < self.seats:
                self._next = (deal, rotation + 1)
                continue
            self._next = (deal + 1, 0)
            self._end_deal()
            if self.sprt is not None and self.decided_at is None:
                self._sprt_deal(deal)
            if self.sequential is not None:
                self._sequential_deal(deal)
        if self.decided_at is not None and self._pending:
            self._pending.clear()  # beyond the deciding deal: kept in the files, not counted

    def _count(self, game: dict) -> None:
        entries, places, scores = game["entries"], game["places"], game["scores"]
        for seat, entry in enumerate(entries):
            self._entries[entry].add(game, seat)
            self._deal_shares.setdefault(entry, []).append(scores[seat])
            if self.luck:
                self._deal_luck.setdefault(entry, []).append(game["luck"][seat])
            mine = places[seat]
            for other_seat, other in enumerate(entries):
                if other != entry:
                    theirs = places[other_seat]
                    self._pairs[entry][other][0 if mine < theirs else 2 if mine > theirs else 1] += 1
        if game["forfeit"]:
            self.forfeits.append({"deal": game["deal"], "rotation": game["rotation"], **game["forfeit"]})
        self._ratings.rate(entries, places)
        self.counted += 1

    def _end_deal(self) -> None:
        """Close the deal whose games were counted last: its mean share per entry (rotation order)."""
        if not self._deal_shares:
            return
        for entry, shares in self._deal_shares.items():
            self._entries[entry].end_deal(shares, self.seats, self._deal_luck.get(entry))
        self._deal_shares, self._deal_luck = {}, {}
        self.deals_counted += 1

    def _sprt_deal(self, deal: int) -> None:
        """The SPRT after a whole deal (just counted): the candidate (entry 0) has a share in each game."""
        for share in self._entries[0].last_deal_shares:
            self.wdl[outcome(share)] += 1
        self.llr = self.sprt.llr(*self.wdl)
        self.decision = self.sprt.decision(self.llr)
        if self.decision is not None:
            self.decided_at = deal

    def _sequential_deal(self, deal: int) -> None:
        """The sequential stop after a whole deal (just counted): every entry's deal scores so far, luck-corrected
        with ``luck``, against the fair share (eval/stats.py ``sequential_separation``)."""
        self.separated = sequential_separation([tally.deal_values() for tally in self._entries], 1.0 / self.seats,
                                               self.sequential, planned=self.settings.deals)
        if self.separated:
            self.decided_at = deal

    def _finish(self) -> None:
        """Count what is still held (games after a missing one) in (deal, rotation) order: only a run
        that ended without some of its games leaves any (a finished run leaves none)."""
        if self.decided_at is None:
            current = self._next[0]
            for key in sorted(self._pending):
                if key[0] != current:
                    self._end_deal()
                    current = key[0]
                self._count(self._pending.pop(key))
                self._next = (key[0], key[1] + 1)
        self._end_deal()

    def results(self) -> dict[str, Any]:
        """The leaderboard, pairwise results and SPRT of the counted games (``results.json``). It closes
        the tally: games added afterwards are not counted."""
        self._finish()
        settings, seats = self.settings, self.seats
        n_entries = len(settings.bots)
        ratings = self._ratings.ratings()
        rows = []
        for entry, tally in enumerate(self._entries):
            row = tally.summary(seats)
            row.update(bot=settings.labels[entry], spec=settings.bots[entry], **ratings[entry])
            if seats == 2:
                field_wdl = [sum(self._pairs[entry][other][i] for other in range(n_entries)) for i in range(3)]
                estimate = elo_estimate(*field_wdl)
                row.update(elo=estimate.as_dict()["elo"], elo_error=estimate.as_dict()["elo_error"], los=estimate.los)
            rows.append(row)
        order = sorted(range(n_entries), key=lambda e: (-(rows[e]["score"] if seats == 2 else rows[e]["ordinal"]), e))
        leaderboard = [{"rank": rank, **rows[entry]} for rank, entry in enumerate(order, start=1)]
        pair_rows, matrix = [], [[None] * n_entries for _ in range(n_entries)]
        for a in range(n_entries):
            for b in range(n_entries):
                if a != b and sum(self._pairs[a][b]):
                    estimate = elo_estimate(*self._pairs[a][b])
                    matrix[a][b] = estimate.score
                    if a < b:
                        pair_rows.append({"bot": settings.labels[a], "opponent": settings.labels[b],
                                          **estimate.as_dict()})
        results: dict[str, Any] = {
            "game": settings.game,
            "config": settings.config,
            "format": settings.format,
            "seed": settings.seed,
            **results_stamp("v2"),  # the tournament's one scheme, since its first version (eval/deals.py)
            "seats": seats,
            "bots": settings.labels,
            "specs": settings.bots,
            "games_requested": settings.deals * seats,
            "games": self.counted,
            "deals": self.deals_counted,
            "games_not_counted": self.added - self.counted,
            "cycle": {"tables": [list(t) for t in self.tables], "deals": len(self.tables),
                      "complete": self.deals_counted >= len(self.tables)},
            "leaderboard": leaderboard,
            "pairs": pair_rows,
            "pair_matrix": matrix,
            "forfeits": list(self.forfeits),
            "sprt": None,
        }
        if self.luck:
            results["variance_reduction"] = {"bot": settings.luck, "chance_samples": settings.chance_samples}
        if self.sequential is not None:
            results["sequential"] = {
                "alpha": self.sequential, "planned": settings.deals,
                "decided_at": None if self.decided_at is None else self.decided_at + 1,
                "separated": [[settings.labels[entry], side] for entry, side in self.separated]}
        if self.sprt is not None:
            results["sprt"] = {**self.sprt.as_dict(), "llr": self.llr, "decision": self.decision,
                               "wins": self.wdl[0], "draws": self.wdl[1], "losses": self.wdl[2],
                               "games": sum(self.wdl)}
        return results


def compute_results(settings: Settings, lines: Iterable[dict],
                    tables: Sequence[Sequence[int]] | None = None) -> dict[str, Any]:
    """The results of the game ``lines`` (any order): what :class:`Tally` gives after taking them all."""
    tally = Tally(settings, tables)
    tally.add_all(lines)
    return tally.results()


class _EntryTally:
    """One entry's counts over the counted games: counts of each value, not lists of games."""

    def __init__(self, keep_deals: bool = False):
        self.deal_scores: list[float] | None = [] if keep_deals else None
        """Each deal's mean share in order (with luck or the sequential stop), and its mean luck (with luck)."""
        self.deal_luck: list[float] = []
        self.games = self.wins = self.draws = self.losses = self.forfeits = 0
        self.shares: Counter[float] = Counter()
        self.place_sum = 0
        self.return_sum = 0  # summed in (deal, rotation) order, as sum() over the games would
        self.returns = 0
        self.deal_means: Counter[float] = Counter()
        self.deal_wins = self.deal_draws = self.deal_losses = 0
        self.last_deal_shares: list[float] = []
        self.bot_stats: dict[str, Any] = {}

    def add(self, line: dict, seat: int) -> None:
        share = line["scores"][seat]
        self.games += 1
        result = outcome(share)
        self.wins += result == WIN
        self.draws += result == DRAW
        self.losses += result == LOSS
        self.forfeits += bool(line["forfeit"]) and line["forfeit"]["seat"] == seat
        self.shares[share] += 1
        self.place_sum += line["places"][seat]
        if line["returns"] is not None:
            self.return_sum += line["returns"][seat]
            self.returns += 1
        stats = line.get("bot_stats")
        if isinstance(stats, list) and len(stats) > seat and isinstance(stats[seat], dict):
            add_stats(self.bot_stats, stats[seat])

    def end_deal(self, shares: list[float], seats: int, luck: list[float] | None = None) -> None:
        """The entry's shares in one deal's counted games, in rotation order (and its luck in each, measured)."""
        self.last_deal_shares = shares
        mean = sum(shares) / len(shares)
        if self.deal_scores is not None:
            self.deal_scores.append(mean)
            if luck is not None:
                self.deal_luck.append(math.fsum(luck) / len(luck))
        self.deal_means[mean] += 1
        fair = 1.0 / seats
        self.deal_wins += mean > fair + 1e-9
        self.deal_draws += abs(mean - fair) <= 1e-9
        self.deal_losses += mean < fair - 1e-9

    def deal_values(self) -> list[float]:
        """The per-deal samples of the entry's score in order: luck-corrected where luck was measured (eval/stats.py
        ``control_variate_values``, as a match's :class:`~.tally.BotRow`), else plain."""
        if self.deal_luck:
            return control_variate_values(self.deal_scores, self.deal_luck)
        return list(self.deal_scores or [])

    def summary(self, seats: int) -> dict[str, Any]:
        score, low, high = counted_mean_interval(self.shares)
        deal_score, deal_low, deal_high = counted_mean_interval(self.deal_means)
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "forfeits": self.forfeits,
            "score": _number(score), "score_ci": [_clip(low), _clip(high)],
            "deals": sum(self.deal_means.values()),
            "deal_score": _number(deal_score), "deal_score_ci": [_clip(deal_low), _clip(deal_high)],
            "deal_wins": self.deal_wins, "deal_draws": self.deal_draws, "deal_losses": self.deal_losses,
            "mean_return": _number(self.return_sum / self.returns) if self.returns else None,
            "avg_place": _number(self.place_sum / self.games) if self.games else None,
            **({"bot_stats": dict(self.bot_stats)} if self.bot_stats else {}),
            **self._corrected(),
        }

    def _corrected(self) -> dict[str, Any]:
        """The luck-corrected deal score and its 95% interval (unclipped: a corrected sample may leave 0 - 1)."""
        if not self.deal_luck:
            return {}
        mean, low, high = mean_interval(self.deal_values())
        finite = [value if math.isfinite(value) else None for value in (low, high)]
        return {"corrected_score": _number(mean), "corrected_ci": finite}


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value)) if math.isfinite(value) else (0.0 if value < 0 else 1.0)
