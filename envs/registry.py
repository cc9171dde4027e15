"""Finds the games: every subpackage of ``tavernzoo.envs`` that exports a ``GAME`` (a core.Game)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .core import Game


def _game_packages() -> list[object]:
    package = importlib.import_module("tavernzoo.envs")
    return [importlib.import_module(f"tavernzoo.envs.{module.name}")
            for module in pkgutil.iter_modules(package.__path__) if module.ispkg]


@cache
def games() -> dict[str, Game]:
    """All games by name (their current versions), in alphabetical order."""
    found: dict[str, Game] = {}
    for module in _game_packages():
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            found[game.name] = game
    return dict(sorted(found.items()))


@cache
def earlier_versions() -> dict[str, Game]:
    """Older versions a game still plays (its package's ``EARLIER_VERSIONS``), by env name
    (``ministeel_v1``): their records replay and their bots play them."""
    return {game.env_name: game for module in _game_packages() for game in getattr(module, "EARLIER_VERSIONS", ())
            if isinstance(game, Game)}


def get_game(name: str) -> Game:
    """The game called ``name`` (``tiny_minotaur`` or its env name ``tiny_minotaur_v1``; an earlier
    version a game still plays by its env name, ``ministeel_v1``)."""
    known = games()
    if name in known:
        return known[name]
    for game in known.values():
        if name == game.env_name:
            return game
    earlier = earlier_versions()
    if name in earlier:
        return earlier[name]
    raise ValueError(f"unknown game {name!r}; valid: {', '.join([*known, *earlier])}")
