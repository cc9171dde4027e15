"""A tournament's results: reading ``games.jsonl``, the SPRT, the leaderboard and pairwise results.

``games.jsonl`` holds one line per finished game (deal, rotation, seed, entries by seat, returns,
scores, places, forfeit, the full replayable record). A line that is not a game line is reported with
its line number and left out (its game is played again on ``--resume``); :func:`compute_results` turns
the counted lines into ``results.json``'s leaderboard and pairwise results, :func:`print_results` into
a table.

SPRT (``--sprt``, two entries in a two-player game: candidate first)
    After every deal (in deal order) the LLR of the candidate's W/D/L against the champion is checked;
    the run stops at the first deal where H0 or H1 is accepted, and the results count the deals up to
    that one (deals that other workers were finishing are kept in the file, not counted).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .ratings import Sprt, elo_estimate, openskill_ratings
from .schedule import Settings, make_tables
from .stats import mean_interval

GAMES_FILE = "games.jsonl"
RESULTS_FILE = "results.json"

log = logging.getLogger("tavernzoo.tournament")


# --- the SPRT -------------------------------------------------------------------------------------------


class SprtTracker:
    """Feeds finished deals to the SPRT in deal order; ``decided_at`` is the deciding deal."""

    def __init__(self, sprt: Sprt | None, seats: int):
        self.sprt, self.seats = sprt, seats
        self.wdl = [0, 0, 0]
        self.next_deal = 0
        self.decided_at: int | None = None
        self.decision: str | None = None
        self.llr = 0.0
        self._games: dict[int, list[dict]] = {}

    def add(self, line: dict) -> None:
        if self.sprt is None:
            return
        self._games.setdefault(line["deal"], []).append(line)
        if len(self._games[line["deal"]]) == self.seats:
            self.deal_done(line["deal"])

    def deal_done(self, deal: int) -> None:
        while (self.sprt is not None and self.decided_at is None
               and len(self._games.get(self.next_deal, ())) == self.seats):
            for line in self._games[self.next_deal]:
                share = line["scores"][line["entries"].index(0)]
                self.wdl[0 if share == 1.0 else 2 if share == 0.0 else 1] += 1
            self.llr = self.sprt.llr(*self.wdl)
            self.decision = self.sprt.decision(self.llr)
            if self.decision is not None:
                self.decided_at = self.next_deal
            self.next_deal += 1


# --- games.jsonl ----------------------------------------------------------------------------------------


def read_games(path: str | Path, repair: bool = False, settings: Settings | None = None,
               quiet: bool = False) -> list[dict]:
    """The game lines of ``games.jsonl`` (first copy of each (deal, rotation)). With ``repair``, a last
    line cut short by a killed run is removed from the file. A line that is not a game line (of a
    tournament with ``settings``, when given) is left out with a warning naming its line number: its game
    counts as not played, so ``--resume`` plays it again (``quiet``: no warnings)."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    if repair and data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with open(path, "r+b") as handle:
            handle.truncate(len(data))
    lines, seen = [], set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
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
        key = game_key(line)
        if key not in seen:
            seen.add(key)
            lines.append(line)
    return lines


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
    return None


def game_key(line: dict) -> tuple[int, int]:
    """A game line's place in the run: (deal, rotation)."""
    return (line["deal"], line["rotation"])


# --- results --------------------------------------------------------------------------------------------


def compute_results(settings: Settings, lines: list[dict], tables: Sequence[Sequence[int]] | None = None,
                    tracker: SprtTracker | None = None) -> dict[str, Any]:
    """The leaderboard, pairwise results and SPRT of the counted games (see the module docstring)."""
    n_entries, seats = len(settings.bots), settings.seats
    tables = tables or make_tables(n_entries, seats, settings.format, settings.seed)
    limit = settings.deals
    if tracker is not None and tracker.decided_at is not None:
        limit = min(limit, tracker.decided_at + 1)
    counted = sorted((line for line in lines if line["deal"] < limit), key=game_key)
    entries = [_Tally() for _ in range(n_entries)]
    pairs = [[[0, 0, 0] for _ in range(n_entries)] for _ in range(n_entries)]
    forfeits = []
    for line in counted:
        for seat, entry in enumerate(line["entries"]):
            entries[entry].add(line, seat)
            for other_seat, other in enumerate(line["entries"]):
                if other != entry:
                    mine, theirs = line["places"][seat], line["places"][other_seat]
                    pairs[entry][other][0 if mine < theirs else 2 if mine > theirs else 1] += 1
        if line["forfeit"]:
            forfeits.append({"deal": line["deal"], "rotation": line["rotation"], **line["forfeit"]})
    ratings = openskill_ratings(((line["entries"], line["places"]) for line in counted), n_entries)
    rows = []
    for entry, tally in enumerate(entries):
        row = tally.summary(seats)
        row.update(bot=settings.labels[entry], spec=settings.bots[entry], **ratings[entry])
        if seats == 2:
            field_wdl = [sum(pairs[entry][other][i] for other in range(n_entries)) for i in range(3)]
            estimate = elo_estimate(*field_wdl)
            row.update(elo=estimate.as_dict()["elo"], elo_error=estimate.as_dict()["elo_error"], los=estimate.los)
        rows.append(row)
    order = sorted(range(n_entries), key=lambda e: (-(rows[e]["score"] if seats == 2 else rows[e]["ordinal"]), e))
    leaderboard = []
    for rank, entry in enumerate(order, start=1):
        leaderboard.append({"rank": rank, **rows[entry]})
    pair_rows, matrix = [], [[None] * n_entries for _ in range(n_entries)]
    for a in range(n_entries):
        for b in range(n_entries):
            if a != b and sum(pairs[a][b]):
                estimate = elo_estimate(*pairs[a][b])
                matrix[a][b] = estimate.score
                if a < b:
                    pair_rows.append({"bot": settings.labels[a], "opponent": settings.labels[b], **estimate.as_dict()})
    deals_counted = len({line["deal"] for line in counted})
    results: dict[str, Any] = {
        "game": settings.game,
        "config": settings.config,
        "format": settings.format,
        "seed": settings.seed,
        "seats": seats,
        "bots": settings.labels,
        "specs": settings.bots,
        "games_requested": settings.deals * seats,
        "games": len(counted),
        "deals": deals_counted,
        "games_not_counted": len(lines) - len(counted),
        "cycle": {"tables": [list(t) for t in tables], "deals": len(tables),
                  "complete": deals_counted >= len(tables)},
        "leaderboard": leaderboard,
        "pairs": pair_rows,
        "pair_matrix": matrix,
        "forfeits": forfeits,
        "sprt": None,
    }
    if settings.sprt and tracker is not None:
        sprt = Sprt(*settings.sprt)
        results["sprt"] = {**sprt.as_dict(), "llr": tracker.llr, "decision": tracker.decision,
                           "wins": tracker.wdl[0], "draws": tracker.wdl[1], "losses": tracker.wdl[2],
                           "games": sum(tracker.wdl)}
    return results


class _Tally:
    """One entry's counts over the counted games."""

    def __init__(self):
        self.games = self.wins = self.draws = self.losses = self.forfeits = 0
        self.shares: list[float] = []
        self.places: list[int] = []
        self.returns: list[float] = []
        self.deal_shares: dict[int, list[float]] = {}

    def add(self, line: dict, seat: int) -> None:
        share = line["scores"][seat]
        self.games += 1
        self.wins += share == 1.0
        self.draws += 0.0 < share < 1.0
        self.losses += share == 0.0
        self.forfeits += bool(line["forfeit"]) and line["forfeit"]["seat"] == seat
        self.shares.append(share)
        self.places.append(line["places"][seat])
        if line["returns"] is not None:
            self.returns.append(line["returns"][seat])
        self.deal_shares.setdefault(line["deal"], []).append(share)

    def summary(self, seats: int) -> dict[str, Any]:
        score, low, high = mean_interval(self.shares)
        deal_means = [sum(values) / len(values) for values in self.deal_shares.values()]
        deal_score, deal_low, deal_high = mean_interval(deal_means)
        fair = 1.0 / seats
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "forfeits": self.forfeits,
            "score": _number(score), "score_ci": [_clip(low), _clip(high)],
            "deals": len(deal_means),
            "deal_score": _number(deal_score), "deal_score_ci": [_clip(deal_low), _clip(deal_high)],
            "deal_wins": sum(1 for m in deal_means if m > fair + 1e-9),
            "deal_draws": sum(1 for m in deal_means if abs(m - fair) <= 1e-9),
            "deal_losses": sum(1 for m in deal_means if m < fair - 1e-9),
            "mean_return": _number(sum(self.returns) / len(self.returns)) if self.returns else None,
            "avg_place": _number(sum(self.places) / len(self.places)) if self.places else None,
        }


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


def _with_ci(value: float | None, interval: Sequence[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)
