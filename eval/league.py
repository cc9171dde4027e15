"""One rating table across runs: the tournaments and matches that share bots (``tavernzoo leaderboard RUN...``).

A run is

* a tournament's ``--out`` directory (or its ``results.json`` or ``games.jsonl``): its settings
  (``tournament.json``) name the game and options, its game lines (the parts a killed run left included,
  :func:`~.game_files.scan_games`) each game's seats, places, win shares, forfeit and the ``llm:`` seats'
  stats;
* a file of game records, as ``tavernzoo match --records FILE`` writes them (JSON lines, or one record as
  JSON): each record's seats, returns (places and win shares from them) and bot stats.

Every game of every run is one ranking of its seats. A bot is the same bot in every run that names it the
same (its spec, numbered where a run entered it twice: ``random #2``), so an ``llm:`` seat rated in a
tournament against search bots and in a match against a trained policy gets one row. The table rates
every game at once with OpenSkill's Plackett-Luce model, the tournaments' model (:class:`~.ratings.
PlackettLuceTally`: the library's arithmetic, checked against it): ``mu`` with its 95% interval
``mu ± 1.96 sigma``, and the conservative ``ordinal = mu - 3 sigma`` the rows are ranked by. OpenSkill
is updated game by game, so the order of the games moves the figures a little: runs are taken in the order
of their paths (the order they are named in changes nothing), a run's games in the order they were played
(a tournament's by deal and rotation, a records file's as written). Beside the rating each row has the
bot's runs, games, wins, draws and losses (a win share of 1, between 0 and 1, 0), forfeits, its mean win
share with a 95% interval over games, its average place, and the summed stats of an ``llm:`` seat.

The runs must be of one game with one set of options. A path that is missing, a file or directory that
holds no results, a run given twice (a tournament and one of its files too) and runs of other games or
options are refused with one sentence naming the run (a ValueError).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .deals import entry_labels
from .game_files import GAMES_FILE, game_key, scan_games
from .ratings import PlackettLuceTally
from .results import RESULTS_FILE
from .schedule import SETTINGS_FILE
from .stats import mean_interval, z_value
from .tally import add_stats, places_from_scores, score_of

RUN_KINDS = ("a tournament's --out directory (or its results.json or games.jsonl)",
             "a file of game records (tavernzoo match --records FILE)")
GIVE = f"give {RUN_KINDS[0]} or {RUN_KINDS[1]}"


@dataclass
class RunGame:
    """One finished game of a run, as the table needs it."""

    bots: list[str]
    """The bot at each seat (its name in the run: the spec, numbered when entered twice)."""
    places: list[int]
    scores: list[float]
    forfeit: int | None = None
    """The seat that forfeited, if one did."""
    stats: list[dict[str, Any] | None] | None = None


@dataclass
class Run:
    path: str
    kind: str
    """``tournament`` or ``records``."""
    game: str
    """The env name (``ministeel_v2``): a game and its version."""
    config: dict[str, Any]
    games: list[RunGame] = field(default_factory=list)


def read_run(name: str | Path) -> Run:
    """The run at ``name`` (see the module docstring); ValueError naming it when it is none."""
    path = Path(name)
    if not path.exists():
        raise ValueError(f"{path}: no such file or directory; {GIVE}")
    out = path if path.is_dir() else path.parent
    if (out / SETTINGS_FILE).is_file() and (path.is_dir() or path.name in (RESULTS_FILE, GAMES_FILE)):
        return _read_tournament(out)
    if path.is_dir():
        raise ValueError(f"{path}: a directory without a tournament's {SETTINGS_FILE}: not a tournament's --out; "
                         f"{GIVE}")
    return _read_records(path)


def _read_tournament(out: Path) -> Run:
    try:
        settings = json.loads((out / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{out / SETTINGS_FILE}: not JSON ({error}): the tournament's settings are damaged") from None
    bots, config = settings.get("bots") if isinstance(settings, dict) else None, None
    if isinstance(settings, dict):
        config = settings.get("config")
    if not (isinstance(bots, list) and bots and all(isinstance(bot, str) for bot in bots)
            and isinstance(config, dict) and isinstance(settings.get("game"), str)):
        raise ValueError(f"{out / SETTINGS_FILE}: not a tournament's settings (game, bots and config); {GIVE}")
    run = Run(str(out), "tournament", _env_name(settings["game"], out), config)
    labels = entry_labels(bots)
    lines = sorted(scan_games(out), key=game_key)
    for line in lines:
        seats = line.get("bots")
        if not (isinstance(seats, list) and len(seats) == len(line["entries"])):
            seats = [labels[entry] if entry < len(labels) else f"entry {entry}" for entry in line["entries"]]
        forfeit = line.get("forfeit")
        stats = line.get("bot_stats")
        run.games.append(RunGame(list(seats), list(line["places"]), [float(v) for v in line["scores"]],
                                 forfeit["seat"] if forfeit else None, stats if _stats_ok(stats, seats) else None))
    if not run.games:
        raise ValueError(f"{out}: the tournament has no finished game yet (nothing in its {GAMES_FILE})")
    return run


def _read_records(path: Path) -> Run:
    from ..envs.records import read_records

    run: Run | None = None
    torn: list[str] = []
    for number, record in read_records(path, left_out=torn):
        where = f"{path}:{number}" if path.suffix == ".jsonl" else str(path)
        if not isinstance(record, dict) or not isinstance(record.get("seats"), list) or "game" not in record:
            kind = "a tournament's game line" if isinstance(record, dict) and "entries" in record else "no game record"
            raise ValueError(f"{where}: {kind} (a record has game, seats and returns); {GIVE}")
        seats, returns = record["seats"], record.get("returns")
        if not (seats and all(isinstance(seat, str) for seat in seats) and len(set(seats)) == len(seats)):
            raise ValueError(f"{where}: 'seats' must name each seat's bot once, got {seats!r:.80}")
        if not (isinstance(returns, list) and len(returns) == len(seats)
                and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                        for v in returns)):
            raise ValueError(f"{where}: an unfinished game (returns={returns!r:.80}): the table rates finished games")
        config = record.get("config") if isinstance(record.get("config"), dict) else {}
        game = record.get("env") if isinstance(record.get("env"), str) else _env_name(record["game"], where)
        if run is None:
            run = Run(str(path), "records", game, config)
        elif (game, config) != (run.game, run.config):
            raise ValueError(f"{where}: {_difference(game, config, run, 'its first record')}: a records file rated "
                             "as one run holds one game with one set of options")
        stats = record.get("bot_stats")
        run.games.append(RunGame(list(seats), places_from_scores(returns),
                                 [score_of(returns, seat) for seat in range(len(seats))], None,
                                 stats if _stats_ok(stats, seats) else None))
    assert run is not None  # read_records raises on a file without records
    return run


def _stats_ok(stats: Any, seats: Sequence[str]) -> bool:
    return (isinstance(stats, list) and len(stats) == len(seats)
            and all(item is None or isinstance(item, dict) for item in stats))


def _env_name(name: str, where: Any) -> str:
    from ..envs import get_game

    try:
        return get_game(name).env_name
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _difference(game: str, config: dict[str, Any], run: Run, first: str) -> str:
    """How a run (or record) differs from ``run`` (called ``first``): its game, else the first option that
    differs."""
    if game != run.game:
        return f"games of {game}; {first} holds games of {run.game}"
    option = next(key for key in sorted({*config, *run.config}) if config.get(key) != run.config.get(key))
    return f"option {option}={config.get(option)!r}; {first} has {option}={run.config.get(option)!r}"


def read_runs(names: Sequence[str | Path], progress: Any = None) -> list[Run]:
    """Every run, checked to be one each and of one game and options, in the order of their paths
    (``progress(1)`` after each)."""
    if not names:
        raise ValueError(f"no run to rate; {GIVE}")
    runs: list[Run] = []
    where: dict[Path, str] = {}
    for name in names:
        run = read_run(name)
        resolved = Path(run.path).resolve()
        if resolved in where:
            raise ValueError(f"{name}: the same run as {where[resolved]} (given twice, its games would count twice); "
                             "name each run once")
        where[resolved] = str(name)
        if runs and (run.game, run.config) != (runs[0].game, runs[0].config):
            raise ValueError(f"{name}: {_difference(run.game, run.config, runs[0], runs[0].path)}: a leaderboard "
                             "rates one game with one set of options")
        runs.append(run)
        if progress is not None:
            progress(1)
    return sorted(runs, key=lambda run: str(Path(run.path).resolve()))


def league_results(runs: Sequence[Run], confidence: float = 0.95) -> dict[str, Any]:
    """The table of ``runs`` (:func:`read_runs`) as a JSON-ready dict (see the module docstring)."""
    index: dict[str, int] = {}
    for run in runs:
        for game in run.games:
            for bot in game.bots:
                index.setdefault(bot, len(index))
    ratings = PlackettLuceTally(len(index))
    rows = [_Row(bot) for bot in index]
    for run in runs:
        for game in run.games:
            entries = [index[bot] for bot in game.bots]
            ratings.rate(entries, game.places)
            for seat, entry in enumerate(entries):
                rows[entry].add(run.path, game, seat)
    z = z_value(confidence)
    table = []
    for row, rating in zip(rows, ratings.ratings(), strict=True):
        score, low, high = mean_interval(row.shares, confidence)
        table.append({
            "bot": row.bot, "runs": len(row.runs), "games": len(row.shares), "wins": row.wins, "draws": row.draws,
            "losses": row.losses, "forfeits": row.forfeits, "score": score,
            "score_ci": [max(0.0, low), min(1.0, high)], "avg_place": row.place_sum / len(row.shares),
            "mu": rating["mu"], "mu_ci": [rating["mu"] - z * rating["sigma"], rating["mu"] + z * rating["sigma"]],
            "sigma": rating["sigma"], "ordinal": rating["ordinal"],
            **({"bot_stats": row.stats} if row.stats else {}),
        })
    order = sorted(range(len(table)), key=lambda i: (-table[i]["ordinal"], table[i]["bot"]))
    first = runs[0]
    return {
        "game": first.game, "config": first.config, "confidence": confidence,
        "runs": [{"path": run.path, "kind": run.kind, "games": len(run.games)} for run in runs],
        "games": sum(len(run.games) for run in runs),
        "leaderboard": [{"rank": rank, **table[i]} for rank, i in enumerate(order, start=1)],
    }


class _Row:
    """One bot's counts over every run."""

    def __init__(self, bot: str):
        self.bot = bot
        self.runs: set[str] = set()
        self.shares: list[float] = []
        self.wins = self.draws = self.losses = self.forfeits = 0
        self.place_sum = 0
        self.stats: dict[str, Any] = {}

    def add(self, run: str, game: RunGame, seat: int) -> None:
        share = game.scores[seat]
        self.runs.add(run)
        self.shares.append(share)
        self.wins += share == 1.0
        self.draws += 0.0 < share < 1.0
        self.losses += share == 0.0
        self.forfeits += game.forfeit == seat
        self.place_sum += game.places[seat]
        if game.stats is not None:
            add_stats(self.stats, game.stats[seat])


def print_league(results: dict[str, Any], file=None) -> None:
    """The table as rich prints it: one row per bot, ranked by ordinal; the ``llm:`` columns where any bot has
    stats."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from tavernzoo.userio import console as make_console

    from .leaderboard import llm_cells, llm_columns

    # A file is no terminal: rows are never wrapped (one line each, as userio's console writes to a pipe).
    console = Console(file=file, width=10_000) if file is not None else make_console()
    runs = results["runs"]
    title = (f"{results['game']}: {results['games']} games from {len(runs)} run(s), rated together "
             "(OpenSkill Plackett-Luce; ranked by ordinal = mu - 3 sigma)")
    table = Table(title=title, title_justify="left")
    stats = [row.get("bot_stats") for row in results["leaderboard"]]
    llm = llm_columns(stats) if any(stats) else ()
    percent = f"{100 * results['confidence']:g}%"
    for column in ("#", "bot", "runs", "games", "W-D-L", "forfeits", f"score [{percent}]", "avg place",
                   f"mu [{percent}]", "ordinal", *llm):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in results["leaderboard"]:
        low, high = row["mu_ci"]
        score = ("-" if row["score"] != row["score"] else
                 f"{row['score']:.3f} [{row['score_ci'][0]:.3f}, {row['score_ci'][1]:.3f}]")
        table.add_row(str(row["rank"]), Text(row["bot"]), str(row["runs"]), str(row["games"]),
                      f"{row['wins']}-{row['draws']}-{row['losses']}", str(row["forfeits"]), score,
                      f"{row['avg_place']:.2f}", f"{row['mu']:.2f} [{low:.2f}, {high:.2f}]", f"{row['ordinal']:.2f}",
                      *(llm_cells(row.get("bot_stats"), llm) if llm else ()))
    console.print(table)
    for run in runs:
        console.print(f"  {run['kind']} {run['path']}: {run['games']} games", highlight=False, markup=False)
