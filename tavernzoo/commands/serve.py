"""``tavernzoo serve --bot BOT_SPEC``: any bot over the bot protocol on HTTP, on loopback (web/server.py)."""

from __future__ import annotations

import argparse
from typing import Any

from tavernzoo.eval.bot_server import spec_envs


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo serve --bot BOT_SPEC --port P``."""
    serve = commands.add_parser(
        "serve", help="serve a bot over the bot protocol on HTTP (for web frontends)",
        description="Answer bot-protocol requests POSTed as JSON to / (GET / gives the hello reply). Binds to "
        "127.0.0.1 unless --host says otherwise; anyone who can reach the port can use the bot.",
    )
    serve.add_argument("--bot", required=True, metavar="BOT_SPEC", help="the bot to serve")
    serve.add_argument("--port", type=int, default=8765, help="TCP port; 0 picks a free one (default 8765)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    serve.add_argument("--quiet", action="store_true", help="do not log each request on stderr")
    serve.set_defaults(run=run_serve)
    return serve


def run_serve(args: argparse.Namespace) -> int:
    from tavernzoo.web.server import run_server

    spec_envs(args.bot)  # a bad spec fails now, with exit status 2
    return run_server(bot=args.bot, web=False, host=args.host, port=args.port, quiet=args.quiet,
                      banner=lambda url: f"serving {args.bot} ({', '.join(spec_envs(args.bot))}) on {url} "
                      "(Ctrl-C stops)")

