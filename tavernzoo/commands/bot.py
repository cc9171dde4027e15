"""``tavernzoo bot BOT_SPEC``: any bot over the bot protocol on stdin/stdout (eval/bot_server.py);
``tavernzoo bot check CMD``: a compliance run of an external program (eval/compliance.py)."""

from __future__ import annotations

import argparse
from typing import Any

from tavernzoo.eval.bot_server import serve_stdio, spec_envs


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo bot BOT_SPEC`` and ``tavernzoo bot check CMD``."""
    bot = commands.add_parser(
        "bot", help="serve a bot over the bot protocol on stdin/stdout (JSON lines)",
        description="Answer bot-protocol requests (docs/bot-protocol.md) read from stdin, one JSON object per "
        "line, with one JSON reply per line on stdout, until 'quit' or the end of input. BOT_SPEC is any bot "
        "spec: heuristic, random, zoo:GAME, BOT.onnx, a training checkpoint.",
    )
    bot.add_argument("spec", metavar="BOT_SPEC", help="the bot to serve (or 'check': a compliance run of CMD)")
    check = bot.add_argument_group("tavernzoo bot check CMD", "a bot-protocol compliance run of the external "
                                   "program CMD ('PROGRAM ARGS'): every violation is reported; exit status 1 if any")
    check.add_argument("command", nargs="?", metavar="CMD", help="the program to check (with 'check')")
    check.add_argument("--game", action="append", default=[], help="check this game only (repeatable; default all)")
    check.add_argument("--games", type=int, default=2, help="games to play of each game it plays (default 2)")
    check.add_argument("--move-timeout", type=float, default=10.0, help="seconds for each reply (default 10)")
    check.add_argument("--start-timeout", type=float, default=30.0,
                       help="seconds for the reply to hello and new_game, which include the program's start "
                       "(default 30; more for a program that loads a large model)")
    check.add_argument("--sandbox", nargs="?", const="", default=None, metavar="LIMITS",
                       help="run the program in the sandbox a tournament's --sandbox uses (LIMITS as there: "
                       "memory=512,processes=256,cpu=60,idle=0.1,files=256; docs/sandbox.md)")
    bot.set_defaults(run=run_bot)
    return bot


def run_bot(args: argparse.Namespace) -> int:
    if args.spec == "check":
        from tavernzoo.eval.compliance import run_check

        return run_check(args)
    if args.command is not None:
        raise ValueError(f"tavernzoo bot takes one BOT_SPEC; got {args.spec!r} and {args.command!r} "
                         "(to check a program: tavernzoo bot check CMD)")
    spec_envs(args.spec)  # a bad spec fails now, with exit status 2, not at the first hello
    return serve_stdio(args.spec)
