"""Play tavernzoo's games in a browser: ``tavernzoo web`` serves a page on loopback.

Set up any game (its options, each seat a person or any bot spec, a seed), play one seat seeing only
that seat's view, watch bot-against-bot games live, and step through recorded games. The page is plain
HTML, CSS and JavaScript served by the app itself (:mod:`.app`, Starlette on uvicorn, :mod:`.server`);
games are played by :mod:`.tables` through the same envs, bots and records as every other command.
See docs/web.md.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo web [--port P] [--host H] [--bot SPEC] [--allow-local] [--sandbox [LIMITS]] [--max-think S]``."""
    from .tables import SIMS_PER_SECOND, THINK_SECONDS

    parser = commands.add_parser(
        "web", help="play, watch and replay games in a browser (a page served on loopback)",
        description="Serve the tavernzoo page: set up any game, play a seat against bots, watch bots play, "
        "replay records files. Binds to 127.0.0.1 unless --host says otherwise; open the printed address.",
    )
    parser.add_argument("--port", type=int, default=8000, help="TCP port; 0 picks a free one (default 8000)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    parser.add_argument("--bot", metavar="BOT_SPEC", help="also serve this bot over the bot protocol at /bot")
    parser.add_argument("--allow-local", action="store_true",
                        help="let the page seat cmd:PROGRAM bots and bots read from files on this machine")
    parser.add_argument("--sandbox", nargs="?", const="", default=None, metavar="LIMITS",
                        help="run the cmd: programs that --allow-local lets the page seat in a sandbox (LIMITS as "
                        "for tournament --sandbox: memory=512,processes=256,cpu=60,idle=0.1,files=256; "
                        "docs/sandbox.md)")
    parser.add_argument("--max-think", type=float, default=THINK_SECONDS, metavar="SECONDS",
                        help=f"the most a seat's search (mcts) may think about one move: a spec asking for more "
                        f"time=, or more than {SIMS_PER_SECOND} sims= per second of it, is refused, and one "
                        f"without time= gets this (default {THINK_SECONDS:g})")
    parser.add_argument("--quiet", action="store_true", help="do not log each request on stderr")
    parser.set_defaults(run=run_web)
    return parser


def run_web(args: argparse.Namespace) -> int:
    from .server import run_server
    from .tables import check_max_think

    check_max_think(args.max_think)  # one line now, not at the first seat

    if args.bot is not None:
        from ..eval.bot_server import spec_envs

        spec_envs(args.bot)
    if args.sandbox is not None:
        from ..agents.sandbox import Limits, available

        Limits.parse(args.sandbox)
        available()  # one line now, not at the first seat
    return run_server(bot=args.bot, web=True, host=args.host, port=args.port, quiet=args.quiet,
                      allow_local=args.allow_local, sandbox=args.sandbox, max_think=args.max_think,
                      banner=lambda url: f"tavernzoo web on {url} (Ctrl-C stops)")
