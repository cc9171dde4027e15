"""``tavernzoo play GAME --vs SPEC``: a person against bots in the terminal (eval/play.py)."""

from __future__ import annotations

import argparse
from typing import Any

from tavernzoo.eval.play import TerminalGame

from .common import parse_config


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo play GAME --vs BOT_SPEC [--vs ...] [--seat N] [--seed S] [--set KEY=VALUE]``."""
    parser = commands.add_parser(
        "play", help="play a game in the terminal against bots",
        description="Play GAME in the terminal against bots, seeing only what your seat may see. Each turn pick "
        "a legal action by number or name; ? shows the table again, q leaves; at an offer the game lets you leave "
        "to the table (MiniSteel's Card Draw windows) auto turns it down there and at every later one, ask asks "
        "again. One --vs fills every other seat; "
        "repeat --vs to give each other seat its own bot (in seat order).",
    )
    parser.add_argument("game", help="game name (tavernzoo games lists them)")
    parser.add_argument("--vs", action="append", default=[], metavar="BOT_SPEC",
                        help="the bots: heuristic (default), random, zoo:GAME, BOT.onnx, a checkpoint, ...")
    parser.add_argument("--seat", type=int, default=0, help="your seat, from 0 (default 0: you start the seating)")
    parser.add_argument("--seed", type=int, help="seed of the deal and the bots (default: a fresh one, printed)")
    parser.add_argument("--config", metavar="FILE", help="game options from a TOML or JSON file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="one game option (repeatable); VALUE is JSON or a comma list: classes=sword,magic")
    parser.set_defaults(run=run_play)
    return parser


def run_play(args: argparse.Namespace) -> int:
    TerminalGame(args.game, args.vs, args.seat, args.seed, parse_config(args)).play()
    return 0

