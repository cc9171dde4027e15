"""``tavernzoo mcp``: tavernzoo's tables as an MCP server over stdio (web/mcp.py, docs/llm.md)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo mcp [--allow-local] [--max-think SECONDS]``."""
    from tavernzoo.web.tables import SIMS_PER_SECOND, THINK_SECONDS

    parser = commands.add_parser(
        "mcp", help="serve tavernzoo's tables to MCP clients (stdio)",
        description="An MCP server on stdin/stdout: tools to start a game against tavernzoo's bots, read your "
        "seat's view, act and read the result (docs/llm.md).")
    parser.add_argument("--allow-local", action="store_true",
                        help="let clients seat cmd:, file, .onnx and llm: bots (they run programs, read files or "
                        "call network services on this machine)")
    parser.add_argument("--max-think", type=float, default=THINK_SECONDS, metavar="SECONDS",
                        help=f"the most an mcts opponent may think about one move: a spec asking for more time=, or "
                        f"more than {SIMS_PER_SECOND} sims= per second of it, is refused, and one without time= gets "
                        f"this (default {THINK_SECONDS:g})")
    parser.set_defaults(run=run_mcp)
    return parser


def run_mcp(args: argparse.Namespace) -> int:
    from tavernzoo.web.mcp import Tables, make_server

    tables = Tables(allow_local=args.allow_local, max_think=args.max_think)
    server = make_server(tables)
    try:
        server.run("stdio")
    finally:
        tables.close()
    return 0
