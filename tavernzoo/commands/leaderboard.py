"""``tavernzoo leaderboard RUN...``: one rating table across tournaments and matches that share bots
(eval/league.py reads and rates them)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .common import run_alone


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "leaderboard",
        help="one rating table across tournaments and matches that share bots (LLM seats beside the others)",
        description="Rate every game of the given runs together (OpenSkill Plackett-Luce, as tournaments do): "
        "a tournament's --out directory (or its results.json or games.jsonl), or a file of game records "
        "(match --records FILE). A bot is the same in every run that names it the same. Prints one row per "
        "bot: its runs, games, W-D-L, forfeits, win share and mu with 95%% intervals, ordinal (mu - 3 sigma, "
        "the rank), and the llm: seats' counts where any bot has them.",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="a tournament's --out directory, its results.json or games.jsonl, or a records file")
    parser.add_argument("--json", action="store_true", help="print the table as one JSON document")
    parser.add_argument("--no-progress", action="store_true",
                        help="hide the progress bar (hidden anyway when stderr is not a terminal)")
    parser.set_defaults(run=run_leaderboard)
    return parser


def run_leaderboard(args: argparse.Namespace) -> int:
    from tavernzoo.eval.backends import progress_bar
    from tavernzoo.eval.league import league_results, print_league, read_runs

    bar = progress_bar(not args.no_progress, len(args.runs), "reading runs", unit="run")
    try:
        runs = read_runs(args.runs, bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    results = league_results(runs)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print_league(results)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.commands.leaderboard ...``: the same as ``tavernzoo leaderboard ...``."""
    return run_alone("leaderboard", add_parser, argv)
