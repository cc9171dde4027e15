"""What every command shares: running one with a user's mistakes reported as one line, game options.

The commands (one module each, beside this one) are the thin layer over the library; nothing in the
library imports this package or tavernzoo/cli.py (tests/test_layering.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tavernzoo.eval.backends import BACKENDS, check_backend
from tavernzoo.userio import console, parse_set, read_table_file


def run_guarded(run, args: argparse.Namespace) -> int:
    """``run(args)``, with a user's mistake (ValueError, OSError), a failed external bot or Ctrl-C reported
    as one line on stderr and an exit status instead of a traceback."""
    from tavernzoo.agents.external import BotFailure

    try:
        return run(args)
    except BrokenPipeError:
        # The reader left (`tavernzoo zoo | head -3`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (ValueError, OSError) as error:
        return fail(_describe(error))
    except BotFailure as failure:
        return fail(f"an external bot failed ({failure.kind}): {failure.reason}", status=1)
    except KeyboardInterrupt:
        return fail("interrupted", status=130)


def fail(message: str, status: int = 2) -> int:
    """Print ``error: message`` on stderr as one line; return the exit status."""
    console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False)
    return status


def _describe(error: Exception) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="game options from a TOML or JSON file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="one game option (repeatable); VALUE is JSON or a comma list: classes=sword,magic")


def parse_config(args: argparse.Namespace) -> dict[str, Any]:
    """Game options from ``--config FILE`` then ``--set KEY=VALUE`` (later wins)."""
    options: dict[str, Any] = {}
    if args.config:
        options.update(read_table_file(args.config, "--config", "game options",
                                       ' (JSON: {"num_players": 3}, or a .toml file)'))
    options.update(parse_set(args.set))
    return options



class ExactParser(argparse.ArgumentParser):
    """argparse taking options by their whole names only: ``--measur`` is an unrecognised argument, not
    ``--measure``. An abbreviation argparse accepts today becomes ambiguous, or names another option, when
    a command gains one that begins alike, and a script that used it breaks or does something else."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def run_alone(name: str, add_parser: Any, argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.commands.NAME ARGS``: the same as ``tavernzoo NAME ARGS``."""
    parser = ExactParser(prog="tavernzoo")
    add_parser(parser.add_subparsers(parser_class=ExactParser))
    args = parser.parse_args([name, *(sys.argv[1:] if argv is None else argv)])
    return run_guarded(args.run, args)


def add_backend_arguments(parser: Any, what: str = "the games") -> None:
    """``--workers``, ``--backend`` and ``--address`` for a command that plays a match (``match``, ``export
    --measure``); :func:`backend_options` reads them back as ``play_match``'s keywords."""
    parser.add_argument("--workers", type=int, default=1,
                        help=f"local processes playing {what}, a block of 64 deals each (default 1: this "
                        "process); the results do not depend on it")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help=f"local (default) or ray: {what} as Ray tasks, with the same results "
                        "(pip install 'tavernzoo[ray]'; docs/distributed.md)")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster to join (HOST:PORT or auto; "
                        "default: start one on this machine)")


def add_sandbox_argument(parser: Any) -> None:
    """``--sandbox [LIMITS]``: every ``cmd:`` program confined (agents/sandbox.py, docs/sandbox.md);
    :func:`sandboxed` applies it to the specs."""
    parser.add_argument("--sandbox", nargs="?", const="", default=None, metavar="LIMITS",
                        help="run every cmd: program in a sandbox: no network, no files but its own folder "
                        "(read-only) and a private /tmp, limited memory, processes, CPU and open files; "
                        "LIMITS as memory=512,processes=256,cpu=60,idle=0.1,files=256 (those are the defaults; "
                        "docs/sandbox.md). The way to run programs you did not write")


def sandboxed(specs: list[str], limits: str | None) -> list[str]:
    """``specs`` with their ``cmd:`` programs sandboxed by ``--sandbox LIMITS`` (unchanged without it);
    the limits are checked, and so is this machine's sandbox (one line saying what is missing)."""
    if limits is None:
        return list(specs)
    from tavernzoo.agents.sandbox import Limits, available
    from tavernzoo.agents.spec import BotSpec

    Limits.parse(limits)
    available()
    return [str(BotSpec.parse(spec).sandboxed(limits)) for spec in specs]


def note_trained_against(game: str, bots: list[str]) -> None:
    """Say on stderr where a network seated at this table (or guiding a search seated there) met another
    seated network in its training league: its score against that bot is a response trained on it, not a
    stranger's measure (docs/strength.md, "What it does not measure"). Rule bots in a league are left
    unsaid: every network meets them, by design."""
    from rich.markup import escape

    from tavernzoo.agents import builtin_bots
    from tavernzoo.agents.export import same_network, training_opponents
    from tavernzoo.agents.spec import BotSpec

    builtins = builtin_bots(game)
    seated = list(dict.fromkeys(bots))
    said: set[tuple[str, str]] = set()
    for entry in seated:
        for part in BotSpec.parse(entry).within():
            if not part.names_network(builtins):
                continue
            for member, games in training_opponents(part.format(), game).items():
                if games == 0 or not BotSpec.parse(member).names_network(builtins):
                    continue
                for other in seated:
                    if (other != entry and (part.format(), other) not in said
                            and not same_network(other, part.format(), game) and same_network(other, member, game)):
                        said.add((part.format(), other))
                        met = f"{games:,} games of its training league" if games else "its training pool"
                        console(stderr=True).print(
                            f"note: {escape(part.format())} trained against {escape(other)} ({met}): its score "
                            f"against {escape(other)} is a response trained on that bot, not a stranger's "
                            "measure (docs/strength.md)", highlight=False, soft_wrap=True)


def backend_options(args: Any) -> dict[str, Any]:
    """``play_match``'s ``backend``, ``workers`` and ``address`` from :func:`add_backend_arguments`."""
    check_backend(args.backend, args.address)
    return {"backend": args.backend, "workers": args.workers, "address": args.address}



def print_strength_report(out: Any, report: dict[str, Any], title: str) -> None:
    """A trained policy's final report (train/evaluate.py ``strength_report``) as one table on ``out``."""
    from rich.table import Table

    if not report.get("against"):  # eval_games=0: nothing was measured, so no empty table
        out.print(f"{title}: no final report (eval_games=0)", highlight=False)
        return
    table = Table(title=title, title_justify="left")
    for column in ("opponents", "games", "wins", "draws", "losses", "score", "95% interval", "their score"):
        table.add_column(column, justify="left" if column == "opponents" else "right")
    for name, row in report.get("against", {}).items():
        table.add_row(f"{name} x{row['seats'] - 1}", str(row["games"]), str(row["wins"]), str(row["draws"]),
                      str(row["losses"]), f"{row['score']:.3f}",
                      f"{row['score_ci'][0]:.3f} - {row['score_ci'][1]:.3f}", f"{row['reference_score']:.3f}")
    out.print(table)
