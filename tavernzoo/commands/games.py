"""``tavernzoo games``: the games, their player counts and options with defaults."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from tavernzoo.userio import console


def add_parser(commands: Any) -> argparse.ArgumentParser:
    games = commands.add_parser("games", help="list the games with their options and defaults",
                                description="List every game, its env name, player counts and options.")
    games.add_argument("--json", action="store_true", help="print machine-readable JSON instead of tables")
    games.set_defaults(run=run_games)
    return games


def run_games(args: argparse.Namespace) -> int:
    from tavernzoo.envs import games
    from tavernzoo.envs.core import describe_options

    listing = []
    for game in games().values():
        listing.append({
            "name": game.name,
            "env": game.env_name,
            "title": game.title,
            "players": [game.rules.MIN_PLAYERS, game.rules.MAX_PLAYERS],
            "simultaneous": game.simultaneous,
            "options": describe_options(game.rules.Config),
        })
    if args.json:
        print(json.dumps(listing, indent=1))
        return 0
    out = console()
    for entry in listing:
        low, high = entry["players"]
        players = f"{low} players" if low == high else f"{low}-{high} players"
        table = Table(title=f"{entry['title']}  ({entry['name']}, env {entry['env']}, {players})",
                      title_justify="left")
        table.add_column("option")
        table.add_column("default")
        table.add_column("meaning")
        for row in entry["options"]:
            meaning = row["help"] + (f" (one of: {', '.join(map(str, row['choices']))})" if row["choices"] else "")
            table.add_row(row["name"], json.dumps(row["default"]), meaning)
        out.print(table)
    return 0

