"""A tournament's results: its game files, the running tally, the SPRT, the leaderboard.

Game files (in the tournament's ``--out``)
    ``games.jsonl`` holds one line per finished game (deal, rotation, seed, entries by seat, bots,
    returns, scores, places, forfeit, the full replayable record). A run with worker processes has each
    worker append its games to its own part, ``games/part-K.jsonl``; when the run ends the parts are
    appended to ``games.jsonl`` and removed, so a finished tournament is one file, as before. A run that
    was killed leaves its parts; ``--resume`` reads ``games.jsonl`` and every part (:func:`scan_games`),
    so it finds every game that was written, by any layout. A line that is not a game line is reported
    with its file and line number and left out (its game is played again on ``--resume``); of two copies
    of a game (a kill between appending a part and removing it), the first counts.

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

import json
import logging
import math
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from .ratings import Sprt, elo_estimate
from .schedule import Settings, make_tables
from .stats import z_value

GAMES_FILE = "games.jsonl"
PARTS_DIR = "games"
RESULTS_FILE = "results.json"

log = logging.getLogger("tavernzoo.tournament")


# --- game files -----------------------------------------------------------------------------------------


def part_path(out: str | Path, worker: int) -> Path:
    """The part that worker ``worker`` of a run appends its games to."""
    return Path(out) / PARTS_DIR / f"part-{worker}.jsonl"


def game_files(out: str | Path) -> list[Path]:
    """``games.jsonl`` (if there) and then the parts a killed run left, in the order they are read."""
    out = Path(out)
    files = [out / GAMES_FILE] if (out / GAMES_FILE).exists() else []
    parts = out / PARTS_DIR
    if parts.is_dir():
        files += sorted(parts.glob("part-*.jsonl"), key=lambda path: (len(path.name), path.name))
    return files


def scan_games(out: str | Path, settings: Settings | None = None, *, repair: bool = False,
               quiet: bool = False, records: bool = False) -> Iterator[dict]:
    """Every game line of the tournament in ``out``, once each (the first copy of each (deal, rotation)),
    from all its :func:`game_files`, streamed. Without ``records`` each line comes without its record
    (what the tally needs), so memory holds one record at a time. ``repair``, ``settings`` and ``quiet``
    as in :func:`read_games`."""
    seen: set[tuple[int, int]] = set()
    for path in game_files(out):
        for line in _scan_file(path, settings, repair=repair, quiet=quiet, records=records):
            key = game_key(line)
            if key not in seen:
                seen.add(key)
                yield line


def read_games(path: str | Path, repair: bool = False, settings: Settings | None = None,
               quiet: bool = False) -> list[dict]:
    """The game lines of one file, such as ``games.jsonl`` (first copy of each (deal, rotation)). With
    ``repair``, a last line cut short by a killed run is removed from the file. A line that is not a game
    line (of a tournament with ``settings``, when given) is left out with a warning naming its line
    number: its game counts as not played, so ``--resume`` plays it again (``quiet``: no warnings)."""
    lines, seen = [], set()
    for line in _scan_file(Path(path), settings, repair=repair, quiet=quiet, records=True):
        key = game_key(line)
        if key not in seen:
            seen.add(key)
            lines.append(line)
    return lines


def _scan_file(path: Path, settings: Settings | None, *, repair: bool, quiet: bool,
               records: bool) -> Iterator[dict]:
    if not path.exists():
        return
    if repair:
        _drop_cut_line(path)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                problem = _game_line_problem(line, settings)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                problem = f"not JSON ({error})"
            except RecursionError:
                problem = "nested too deeply"
            if problem:
                if not quiet:
                    log.warning("%s line %d skipped: %s", path, number, problem)
                continue
            if not records:
                line.pop("record", None)
            yield line


def _drop_cut_line(path: Path) -> None:
    """Cut a last line that a kill left without its newline (its game is played again)."""
    size = path.stat().st_size
    if not size:
        return
    with open(path, "r+b") as handle:
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Look back in blocks for the last complete line; a record is bounded, so this ends quickly.
        end = size
        while end > 0:
            start = max(0, end - (1 << 16))
            handle.seek(start)
            block = handle.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                handle.truncate(start + cut + 1)
                return
            end = start
        handle.truncate(0)


def merge_parts(out: str | Path) -> int:
    """Append every part of ``out`` to its ``games.jsonl`` and remove the part (then the folder); the
    number of parts merged. A kill between the append and the removal leaves a game twice, of which
    :func:`scan_games` counts the first."""
    out = Path(out)
    parts = [path for path in game_files(out) if path.parent.name == PARTS_DIR]
    if not parts:
        return 0
    target = out / GAMES_FILE
    _drop_cut_line(target) if target.exists() else None
    with open(target, "ab") as sink:
        for part in parts:
            _drop_cut_line(part)
            with open(part, "rb") as source:
                shutil.copyfileobj(source, sink, 1 << 20)
            sink.flush()
            part.unlink()
    try:
        (out / PARTS_DIR).rmdir()
    except OSError:  # something else lives there: leave it
        pass
    return len(parts)


def _game_line_problem(line: Any, settings: Settings | None) -> str | None:
    """What makes ``line`` unfit to count as a game (None if nothing)."""
    if not isinstance(line, dict):
        return f"a {type(line).__name__}, not a game object"
    for key in ("deal", "rotation"):
        value = line.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key}={value!r} is not a whole number >= 0"
    fields = {key: line.get(key) for key in ("entries", "scores", "places")}
    if not all(isinstance(value, list) for value in fields.values()):
        return "entries, scores and places must be lists"
    if len({len(value) for value in fields.values()}) != 1 or not fields["entries"]:
        return "entries, scores and places must have one item per seat"
    seats = len(fields["entries"])
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in fields["entries"] + fields["places"]):
        return "entries and places must hold whole numbers"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in fields["scores"]):
        return "scores must hold numbers"
    returns = line.get("returns")
    if returns is not None and (not isinstance(returns, list) or len(returns) != seats
                                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in returns)):
        return "returns must be null or one number per seat"
    forfeit = line.get("forfeit")
    if forfeit is not None and not (isinstance(forfeit, dict) and forfeit.get("seat") in range(seats)):
        return "forfeit must be null or name the forfeiting seat"
    if settings is not None:
        if seats != settings.seats or line["rotation"] >= seats:
            return f"it seats {seats} players in rotation {line['rotation']}; this tournament seats {settings.seats}"
        if any(entry >= len(settings.bots) for entry in fields["entries"]):
            return f"entries {fields['entries']} name bots beyond the {len(settings.bots)} of this tournament"
        if len(set(fields["entries"])) != seats:
            return f"entries {fields['entries']} seat one bot twice"
    return None


def game_key(line: dict) -> tuple[int, int]:
    """A game line's place in the run: (deal, rotation)."""
    return (line["deal"], line["rotation"])


def game_summary(line: dict) -> dict:
    """A game line without its record: what the tally needs, and what a worker sends its parent."""
    return {key: value for key, value in line.items() if key != "record"}


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
        self._entries = [_EntryTally() for _ in range(entries)]
        self._pairs = [[[0, 0, 0] for _ in range(entries)] for _ in range(entries)]
        self._ratings = PlackettLuceTally(entries)
        self.forfeits: list[dict] = []
        self._pending: dict[tuple[int, int], dict] = {}
        self._next = (0, 0)
        self._deal_shares: dict[int, list[float]] = {}
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
        if self.decided_at is not None and self._pending:
            self._pending.clear()  # beyond the deciding deal: kept in the files, not counted

    def _count(self, game: dict) -> None:
        entries, places, scores = game["entries"], game["places"], game["scores"]
        for seat, entry in enumerate(entries):
            self._entries[entry].add(game, seat)
            self._deal_shares.setdefault(entry, []).append(scores[seat])
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
            self._entries[entry].end_deal(shares, self.seats)
        self._deal_shares = {}
        self.deals_counted += 1

    def _sprt_deal(self, deal: int) -> None:
        """The SPRT after a whole deal (just counted): the candidate (entry 0) has a share in each game."""
        for share in self._entries[0].last_deal_shares:
            self.wdl[0 if share == 1.0 else 2 if share == 0.0 else 1] += 1
        self.llr = self.sprt.llr(*self.wdl)
        self.decision = self.sprt.decision(self.llr)
        if self.decision is not None:
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

    def __init__(self):
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
        self.wins += share == 1.0
        self.draws += 0.0 < share < 1.0
        self.losses += share == 0.0
        self.forfeits += bool(line["forfeit"]) and line["forfeit"]["seat"] == seat
        self.shares[share] += 1
        self.place_sum += line["places"][seat]
        if line["returns"] is not None:
            self.return_sum += line["returns"][seat]
            self.returns += 1
        stats = line.get("bot_stats")
        if isinstance(stats, list) and len(stats) > seat and isinstance(stats[seat], dict):
            from .match import add_stats

            add_stats(self.bot_stats, stats[seat])

    def end_deal(self, shares: list[float], seats: int) -> None:
        """The entry's shares in one deal's counted games, in rotation order."""
        self.last_deal_shares = shares
        mean = sum(shares) / len(shares)
        self.deal_means[mean] += 1
        fair = 1.0 / seats
        self.deal_wins += mean > fair + 1e-9
        self.deal_draws += abs(mean - fair) <= 1e-9
        self.deal_losses += mean < fair - 1e-9

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
        }


def counted_mean_interval(counts: Counter, confidence: float = 0.95) -> tuple[float, float, float]:
    """:func:`~tavernzoo.eval.stats.mean_interval` of the samples that ``counts`` holds (value: how
    often), to the last bit: its ``fsum``s are correctly rounded sums, and so are these exact ones."""
    n = sum(counts.values())
    if n == 0:
        return (math.nan, -math.inf, math.inf)
    mean = float(sum(Fraction(value) * times for value, times in counts.items())) / n
    if n < 2:
        return (mean, -math.inf, math.inf)
    variance = float(sum(Fraction((value - mean) ** 2) * times for value, times in counts.items())) / (n - 1)
    half = z_value(confidence) * math.sqrt(variance / n)
    return (mean, mean - half, mean + half)


class PlackettLuceTally:
    """OpenSkill's Plackett-Luce ratings (``openskill.models.PlackettLuce()`` with its defaults, one player
    a team, ranks given), updated one game at a time without the library's per-game copies and checks.

    The arithmetic is the library's (openskill 6.2, ``PlackettLuce.rate`` and ``_compute``), step for
    step in the same order, so the ratings are the same to the last bit
    (:func:`tavernzoo.eval.ratings.openskill_ratings` computes them with the library itself, and the
    tests compare the two); it costs a few microseconds a game instead of about a hundred.
    """

    MU, SIGMA = 25.0, 25.0 / 3.0
    BETA, KAPPA, TAU = 25.0 / 6.0, 0.0001, 25.0 / 300.0

    def __init__(self, players: int):
        self.mu = [self.MU] * players
        self.sigma = [self.SIGMA] * players

    def rate(self, entries: Sequence[int], places: Sequence[float]) -> None:
        tau_squared = self.TAU * self.TAU
        # rate(): sigma corrected with tau; teams sorted by rank (stable), the sorted ranks as ints.
        order = sorted(range(len(entries)), key=lambda seat: places[seat])
        ranks = sorted(float(place) for place in places)
        mus = [self.mu[entries[seat]] for seat in order]
        sigmas = [math.sqrt(self.sigma[entries[seat]] * self.sigma[entries[seat]] + tau_squared) for seat in order]
        rank = [int(value) for value in ranks]
        # _calculate_team_ratings: one player, balance off: mu and sigma**2 summed from 0.0
        team_mu = [0.0 + mu * 1.0 for mu in mus]
        team_sigma_squared = [0.0 + (sigma * 1.0) ** 2 for sigma in sigmas]
        beta_squared = self.BETA**2
        collective = 0.0
        for value in team_sigma_squared:
            collective += value + beta_squared
        c = math.sqrt(collective)
        sum_q: dict[int, float] = {}
        for i in range(len(order)):
            summed = math.exp(team_mu[i] / c)
            for q in range(len(order)):
                if rank[i] >= rank[q]:
                    sum_q[q] = sum_q[q] + summed if q in sum_q else summed
        sums = list(sum_q.values())
        a = [sum(1 for q in rank if q == r) for r in rank]
        for i in range(len(order)):
            omega = 0.0
            delta = 0.0
            i_mu_over_c = math.exp(team_mu[i] / c)
            for q in range(len(order)):
                ratio = i_mu_over_c / sums[q]
                if rank[q] <= rank[i]:
                    delta += ratio * (1 - ratio) / a[q]
                    if q == i:
                        omega += (1 - ratio) / a[q]
                    else:
                        omega -= ratio / a[q]
            sigma_squared = team_sigma_squared[i]
            omega *= sigma_squared / c
            delta *= sigma_squared / c**2
            delta *= math.sqrt(sigma_squared) / c
            mu, sigma = mus[i], sigmas[i]
            if omega >= 0:
                mu += (sigma**2 / sigma_squared) * omega * 1.0
                sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared) * delta * 1.0, self.KAPPA))
            else:
                mu += (sigma**2 / sigma_squared) * omega / 1.0
                sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared) * delta / 1.0, self.KAPPA))
            entry = entries[order[i]]
            self.mu[entry], self.sigma[entry] = mu, sigma

    def ratings(self) -> list[dict[str, float]]:
        return [{"mu": mu, "sigma": sigma, "ordinal": 1 * ((mu - 3.0 * sigma) + (0 / 1))}
                for mu, sigma in zip(self.mu, self.sigma, strict=True)]


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value)) if math.isfinite(value) else (0.0 if value < 0 else 1.0)


# --- the table ------------------------------------------------------------------------------------------


def print_results(results: dict[str, Any], file=None) -> None:
    """The leaderboard (and SPRT, forfeits) as a rich table."""
    from rich.console import Console
    from rich.table import Table

    from tavernzoo.cli import console as make_console

    console = Console(file=file) if file is not None else make_console()
    duel = results["seats"] == 2
    title = (f"{results['game']} {results['format']}: {results['games']} games, {results['deals']} deals x "
             f"{results['seats']} seatings, seed {results['seed']}")
    table = Table(title=title, title_justify="left")
    columns = ["#", "bot", "games", "W-D-L", "forfeits", "score [95%]", "deal score [95%]"]
    columns += ["Elo", "LOS"] if duel else ["avg place", "mu", "sigma", "ordinal"]
    llm = any(row.get("bot_stats") for row in results["leaderboard"])
    columns += list(LLM_COLUMNS) if llm else []
    for column in columns:
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in results["leaderboard"]:
        cells = [str(row["rank"]), row["bot"], str(row["games"]), f"{row['wins']}-{row['draws']}-{row['losses']}",
                 str(row["forfeits"]), _with_ci(row["score"], row["score_ci"]),
                 _with_ci(row["deal_score"], row["deal_score_ci"])]
        if duel:
            elo, error = row.get("elo"), row.get("elo_error")
            cells += [("-" if elo is None else f"{elo:+.0f}") + ("" if error is None else f" ± {error:.0f}"),
                      f"{100 * row['los']:.1f}%"]
        else:
            cells += [_fmt(row["avg_place"], ".2f"), f"{row['mu']:.2f}", f"{row['sigma']:.2f}", f"{row['ordinal']:.2f}"]
        if llm:
            cells += llm_cells(row.get("bot_stats"))
        table.add_row(*cells)
    console.print(table)
    if not results["cycle"]["complete"]:
        console.print(f"[yellow]note:[/] the schedule covers every pair in every seat after "
                      f"{results['cycle']['deals']} deals; this run has {results['deals']}", highlight=False)
    sprt = results.get("sprt")
    if sprt:
        verdict = {"H1": "H1 accepted (the first bot is better)", "H0": "H0 accepted (not better)"}.get(
            sprt["decision"], "no decision yet")
        console.print(f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] alpha {sprt['alpha']:g} beta {sprt['beta']:g}: "
                      f"LLR {sprt['llr']:.2f} ({sprt['lower']:.2f}, {sprt['upper']:.2f}) after {sprt['games']} "
                      f"games: {verdict}", highlight=False)
    if results["forfeits"]:
        console.print(f"{len(results['forfeits'])} forfeit(s); the first:", highlight=False)
        for item in results["forfeits"][:5]:
            console.print(f"  deal {item['deal']} rotation {item['rotation']}: {item['bot']} ({item['kind']}) "
                          f"{item['reason']}", highlight=False, markup=False)


LLM_COLUMNS = ("requests", "illegal", "LLM forfeits", "tokens in/out", "s/move")
"""Columns for bots that count their requests (``llm:`` bots' ``bot_stats``); '-' for the others."""


def llm_cells(stats: dict[str, Any] | None) -> list[str]:
    """The :data:`LLM_COLUMNS` cells of one row's summed ``bot_stats``."""
    if not stats:
        return ["-"] * len(LLM_COLUMNS)
    moves = stats.get("moves", 0)
    per_move = f"{stats.get('latency_s', 0) / moves:.2f}" if moves else "-"
    return [str(stats.get("requests", 0)), str(stats.get("illegal", 0)), str(stats.get("forfeits", 0)),
            f"{stats.get('tokens_in', 0)}/{stats.get('tokens_out', 0)}", per_move]


def _with_ci(value: float | None, interval: Sequence[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)
