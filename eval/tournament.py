"""Tournaments between bots: covering schedules, duplicate deals, forfeits, worker processes, resume.

    tavernzoo tournament GAME --bots SPEC [SPEC ...] [--games N] [--workers K]
                         [--format round-robin|gauntlet] [--seed S] [--out DIR] [--resume]
                         [--sprt ELO0 ELO1 ALPHA BETA | --sequential [--alpha A]]
                         [--variance-reduction BOT [--chance-samples K]] [--move-timeout SECONDS] [--set KEY=VALUE]
                         [--backend local|ray [--address ADDR]]

This module is the entry point, :func:`run_tournament` (the command is tavernzoo/commands/tournament.py).
The parts live beside it: :mod:`.schedule` (entries, tables, seatings, seeds, settings), :mod:`.runner`
(playing deals, forfeits, worker processes), :mod:`.ray_backend` (deals as Ray tasks) and :mod:`.results`
(reading ``games.jsonl``, the SPRT, the leaderboard); their names are importable from here too.

Files (``--out DIR``)
    ``tournament.json`` the settings; ``games.jsonl`` one line per finished game (deal, rotation, seed,
    entries by seat, returns, scores, places, forfeit, with ``--variance-reduction`` each seat's luck
    (eval/luck.py), the full replayable record), appended by the one
    process that plays, or by each worker to its own part ``games/part-K.jsonl`` that is appended to
    ``games.jsonl`` when the run ends (:mod:`.results` has the layout); ``results.json`` the leaderboard and
    pairwise results, tallied as games end (:class:`~.results.Tally`), never by reading the games back;
    ``heatmap.png`` pairwise scores. Every game is a pure function of (seed, deal, rotation): bots are
    built afresh for every deal and seeded per game, so ``--resume`` replays exactly the games missing
    from the game files (a deal cut short is replayed, writing only its missing games), and the results
    equal those of an uninterrupted run whatever the number of workers. A line that is not a game line
    is reported with its line number and left out (its game is played again). Workers end when the
    tournament process dies, even by ``kill -9``, and stop their external programs.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .backends import BACKENDS, check_backend, progress_bar
from .deals import derived_seed, seating
from .results import (
    GAMES_FILE,
    PARTS_DIR,
    RESULTS_FILE,
    Tally,
    compute_results,
    game_files,
    merge_parts,
    part_path,
    print_results,
    read_games,
    scan_games,
)
from .schedule import (
    FORMATS,
    SETTINGS_FILE,
    Settings,
    make_settings,
    make_tables,
    offset_triples,
    read_settings,
    required_triples,
)

__all__ = [
    "BACKENDS", "FORMATS", "GAMES_FILE", "HEATMAP_FILE", "PARTS_DIR", "RESULTS_FILE", "SETTINGS_FILE",
    "Settings", "Tally", "compute_results", "derived_seed",
    "make_settings", "make_tables", "offset_triples", "print_results", "read_games", "read_settings",
    "required_triples", "run_tournament", "scan_games", "seating",
]


def __getattr__(name: str) -> Any:
    # The runner (envs, bots, numpy) is imported when a tournament is played, not when the command line is
    # built; its names stay importable from here.
    if name == "DealPlayer":
        from . import runner

        return runner.DealPlayer
    if name in ("Forfeit", "Guard"):
        from . import guard

        return getattr(guard, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


HEATMAP_FILE = "heatmap.png"

log = logging.getLogger("tavernzoo.tournament")


# --- the run --------------------------------------------------------------------------------------------


def run_tournament(settings: Settings, out: str | Path, *, workers: int = 1, resume: bool = False,
                   progress: bool = False, backend: str = "local", address: str | None = None,
                   batch: int | None = None) -> dict[str, Any]:
    """Play (or finish, with ``resume``) the tournament into ``out``; returns the results dict.

    ``backend="ray"`` plays the deals as Ray tasks (:mod:`tavernzoo.eval.ray_backend`: ``batch`` deals
    per task, on ``address``'s cluster or an embedded instance; ``workers`` is then unused), with the
    same games, files and results as the local backend. The results are tallied as games end
    (:class:`~tavernzoo.eval.results.Tally`); the game files are read only to resume."""
    out = Path(out)
    settings_path = out / SETTINGS_FILE
    check_backend(backend)
    if workers < 1:
        raise ValueError(f"workers={workers} must be at least 1")
    most = 8 * (os.cpu_count() or 1)
    if workers > most:
        raise ValueError(f"workers={workers}: each worker is a process; at most {most} (8 per CPU core) are allowed")
    if resume:
        stored = read_settings(out)
        mismatched = [key for key in Settings.IDENTITY if stored.get(key) != settings.identity()[key]]
        if mismatched:
            raise ValueError(f"--resume: the tournament in {out} differs in {', '.join(mismatched)} "
                             f"(stored: {', '.join(f'{k}={stored.get(k)!r}' for k in mismatched)})")
    else:
        used = [path for path in game_files(out) if path.stat().st_size > 0]
        if used:
            raise ValueError(f"{used[0]} already holds games: pass --resume to continue, or another --out")
    out.mkdir(parents=True, exist_ok=True)
    settings_path.write_text(json.dumps(asdict(settings), indent=1) + "\n")

    tables = make_tables(len(settings.bots), settings.seats, settings.format, settings.seed)
    tally = Tally(settings, tables)
    played: dict[int, set[int]] = {}  # deal -> rotations on disk, for the deals of this run
    for game in scan_games(out, settings, repair=True):  # empty unless resuming
        tally.add(game)
        if game["deal"] < settings.deals:
            played.setdefault(game["deal"], set()).add(game["rotation"])
    complete = sum(1 for rotations in played.values() if len(rotations) == settings.seats)
    missing_deals = 0 if tally.decided_at is not None else settings.deals - complete

    def tasks() -> Iterator[tuple[int, tuple[int, ...], list[int]]]:
        # Made as they are handed out: --games may be huge, and a run stopped early never makes the rest.
        for deal in range(settings.deals):
            if tally.decided_at is not None:
                return
            done = played.get(deal, ())
            if len(done) < settings.seats:
                yield deal, tables[deal % len(tables)], sorted(done)

    remaining = 0 if missing_deals == 0 else settings.deals * settings.seats - sum(map(len, played.values()))
    bar = progress_bar(progress, remaining, f"{settings.game} tournament")

    def record(games: list[dict]) -> None:
        """Every finished game's summary, as its deal ends: tally, log, progress."""
        for game in games:
            tally.add(game)
            if game["forfeit"]:
                forfeit = game["forfeit"]
                log.warning("deal %d rotation %d: %s forfeits (%s): %s", game["deal"], game["rotation"],
                            forfeit["bot"], forfeit["kind"], forfeit["reason"])
        if bar is not None:
            bar.update(len(games))

    from .runner import run_here, run_workers

    try:
        if backend == "ray" and missing_deals:
            from .ray_backend import run_deals

            run_deals(settings, tasks(), out / GAMES_FILE, record, tally, deals=missing_deals, address=address,
                      batch=batch)
        elif workers == 1 or missing_deals == 1:
            run_here(settings, tasks(), out / GAMES_FILE, record, tally)
        elif missing_deals:
            workers = min(workers, missing_deals)
            run_workers(settings, tasks(), [part_path(out, worker) for worker in range(workers)], record, tally,
                        missing_deals)
    finally:
        if bar is not None:
            bar.close()
    merge_parts(out)  # a finished run is one games.jsonl
    results = tally.results()
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=1) + "\n")
    return results
