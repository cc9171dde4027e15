"""``tavernzoo replay FILE...``: game records replayed and checked against their recorded results, and with
``--table`` the result table of the match games among them (eval/match.py ``tally_records``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console


def add_parser(commands: Any) -> argparse.ArgumentParser:
    replay = commands.add_parser(
        "replay", help="replay game records and check they reproduce their results",
        description="Replay a record (JSON) or every record in JSON-lines files; with --table, print the result "
        "table of the match games they hold, as match prints it: only whole deals, pooled over the files (a "
        "long match split into matches of different --seed, or stopped for time, counted together).")
    replay.add_argument("file", nargs="+", help="a record .json or a .jsonl of records (as written by match --records)")
    replay.add_argument("--show", action="store_true", help="print the final table of each replayed game")
    replay.add_argument("--table", action="store_true",
                        help="the result table of the replayed games: each entry's wins, score and 95%% interval over "
                        "the deals played at every seating (an unfinished deal is left out and said so)")
    replay.add_argument("--json", action="store_true", help="with --table: the table as one JSON document")
    replay.add_argument("--no-progress", action="store_true", help="hide the progress bar (hidden anyway when "
                        "stderr is not a terminal)")
    replay.set_defaults(run=run_replay)
    return replay


class _NotReplayed(Exception):
    """A record that does not replay, with where it is."""

    def __init__(self, where: str, error: Exception):
        super().__init__(where)
        self.where, self.error = where, error


def run_replay(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from tavernzoo.envs.core import ReplayError
    from tavernzoo.envs.records import read_records, replay
    from tavernzoo.eval.backends import progress_bar
    from tavernzoo.eval.match import tally_records

    from .common import fail

    if args.json and not args.table:
        return fail("--json prints the result table: it goes with --table")
    paths = [Path(name) for name in args.file]
    if args.table and len({path.resolve() for path in paths}) < len(paths):
        return fail("a file is given twice: its deals would count twice; give each records file once")
    console = Console(stderr=args.json)  # with --json, stdout holds the JSON document alone
    replayed = 0
    torn: list[str] = []  # last lines cut off by a kill: left out, said below
    shown = not (args.show or args.no_progress)  # --show prints each game: no bar between them
    bar = progress_bar(True, _lines(paths), "replay", unit="record") if shown else None

    def checked() -> Iterator[tuple[str, Any]]:
        nonlocal replayed
        for path in paths:
            for line, record in read_records(path, left_out=torn):
                where = f"{path}:{line}" if path.suffix == ".jsonl" else str(path)
                try:
                    game, state = replay(record)
                except ReplayError as error:
                    raise _NotReplayed(where, error) from None
                replayed += 1
                if bar is not None:
                    bar.update(1)
                if args.show:
                    console.print(game.encoder.render(state), highlight=False)
                yield where, record

    try:
        try:
            if args.table:
                recorded = tally_records(checked())
            else:
                for _ in checked():
                    pass
        finally:  # before any message: the bar's line is finished first
            if bar is not None:
                bar.close()
    except _NotReplayed as bad:
        console.print(f"[bold red]{escape(bad.where)}: record does not replay:[/] {escape(str(bad.error))}",
                      highlight=False, soft_wrap=True)
        return 1
    except ValueError as error:  # the file itself (no records, a line not JSON or too long), or not a match's games
        return fail(escape(str(error)))
    console.print(f"{replayed} record(s) replayed to their recorded results.")
    if args.table:
        recorded.left_out[:0] = torn  # the cut-off lines first, then the deals cut short
    for line in recorded.left_out if args.table else torn:
        console.print(f"left out: {escape(line)}", highlight=False, soft_wrap=True)
    if not args.table:
        return 0
    from .match import print_result

    result = recorded.result
    files = f"{len(paths)} file(s)" if len(paths) > 1 else str(paths[0])
    print_result(result, recorded.config, as_json=args.json,
                 title=f"{result.game}: {result.games} games ({result.deals} deals x {result.seats} seatings) "
                 f"from {escape(files)}", extra={"files": [str(path) for path in paths], "left_out": recorded.left_out})
    return 0


def _lines(paths: list[Path]) -> int:
    """About how many records ``paths`` hold, for the progress bar: a .jsonl file's lines, a .json file one."""
    total = 0
    for path in paths:
        if path.suffix != ".jsonl":
            total += 1
            continue
        with open(path, "rb") as file:
            total += sum(chunk.count(b"\n") for chunk in iter(lambda file=file: file.read(1 << 20), b""))
    return total
