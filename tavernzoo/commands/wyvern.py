"""``tavernzoo wyvern validate DECK``: a Wyvern deck checked against the deck-building rules."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    wyvern = commands.add_parser("wyvern", help="Wyvern TCG tools (deck validation)",
                                 description="Tools for Wyvern TCG's own decks.")
    wyvern_tools = wyvern.add_subparsers(title="tools", metavar="TOOL")
    validate = wyvern_tools.add_parser(
        "validate", help="check a deck file against the deck-building rules (exit 1 if illegal)",
        description="Check a Wyvern deck (a TOML file, or a bundled deck name) against every deck-building "
        "rule; print each broken rule; exit status 1 for an illegal deck.")
    validate.add_argument("deck_file", help="deck TOML file or bundled deck name")
    validate.set_defaults(run=run_wyvern_validate)
    return wyvern


def run_wyvern_validate(args: argparse.Namespace) -> int:
    from tavernzoo.envs.wyvern.decks import validate_main

    return validate_main([args.deck_file])

