"""``tavernzoo mcp``: tavernzoo's tables as an MCP server over stdio (web/mcp.py, docs/llm.md)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo mcp [--allow-local]``."""
    parser = commands.add_parser(
        "mcp", help="serve tavernzoo's tables to MCP clients (stdio)",
        description="An MCP server on stdin/stdout: tools to start a game against tavernzoo's bots, read your "
        "seat's view, act and read the result (docs/llm.md).")
    parser.add_argument("--allow-local", action="store_true",
                        help="let clients seat cmd:, file, .onnx and llm: bots (they run programs, read files or "
                        "call network services on this machine)")
    parser.set_defaults(run=run_mcp)
    return parser


def run_mcp(args: argparse.Namespace) -> int:
    from tavernzoo.web.mcp import Tables, make_server

    tables = Tables(allow_local=args.allow_local)
    server = make_server(tables)
    try:
        server.run("stdio")
    finally:
        tables.close()
    return 0
