"""Finds the games: every subpackage of ``tavernzoo.envs`` that exports a ``GAME`` (a core.Game)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .core import Game


@cache
def games() -> dict[str, Game]:
    """All games by name, in alphabetical order."""
    package = importlib.import_module("tavernzoo.envs")
    found: dict[str, Game] = {}
    for module in pkgutil.iter_modules(package.__path__):
        if not module.ispkg:
            continue
        game = getattr(importlib.import_module(f"tavernzoo.envs.{module.name}"), "GAME", None)
        if isinstance(game, Game):
            found[game.name] = game
    return dict(sorted(found.items()))


def get_game(name: str) -> Game:
    """The game called ``name`` (``tiny_minotaur`` or its env name ``tiny_minotaur_v1``)."""
    known = games()
    if name in known:
        return known[name]
    for game in known.values():
        if name == game.env_name:
            return game
    raise ValueError(f"unknown game {name!r}; valid: {', '.join(known)}")
