"""``tavernzoo replay FILE``: game records replayed and checked against their recorded results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console


def add_parser(commands: Any) -> argparse.ArgumentParser:
    replay = commands.add_parser("replay", help="replay game records and check they reproduce their results",
                                 description="Replay a record (JSON) or every record in a JSON-lines file.")
    replay.add_argument("file", help="a record .json or a .jsonl of records (as written by match --records)")
    replay.add_argument("--show", action="store_true", help="print the final table of each replayed game")
    replay.set_defaults(run=run_replay)
    return replay


def run_replay(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from tavernzoo.envs.core import ReplayError
    from tavernzoo.envs.records import read_records, replay

    path = Path(args.file)
    console = Console()
    replayed = 0
    try:
        for line, record in read_records(path):
            try:
                game, state = replay(record)
            except ReplayError as error:
                where = f"{path}:{line}" if path.suffix == ".jsonl" else str(path)
                console.print(f"[bold red]{escape(where)}: record does not replay:[/] {escape(str(error))}",
                              highlight=False, soft_wrap=True)
                return 1
            replayed += 1
            if args.show:
                console.print(game.encoder.render(state), highlight=False)
    except ReplayError as error:  # the file itself: no records, a line that is not JSON or is too long
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(error))}", highlight=False, soft_wrap=True)
        return 2
    console.print(f"{replayed} record(s) replayed to their recorded results.")
    return 0

