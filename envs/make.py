"""Env construction: the one way the library builds a game's PettingZoo env from a Game and a config.

A leaf of envs/ (it imports only the game's versioned module, ``tavernzoo.envs.<env_name>``): the match
loop, the tournament runner, training, the web tables and the bots' hosts all build their envs here.
"""

from __future__ import annotations

import importlib
from typing import Any

from .core import Game, config_to_dict


def make_env(game: Game, config: Any = None, render_mode: str | None = None, *, raw: bool = False):
    """The wrapped PettingZoo AEC env of ``game`` (an illegal move loses and ends the game); with ``raw``,
    the same env without PettingZoo's wrappers (an illegal move raises), for a caller that checks every
    action itself, as the tournament's :class:`~tavernzoo.eval.guard.Guard` does, or that plays only
    legal actions (the learner and its league)."""
    module = importlib.import_module(f"tavernzoo.envs.{game.env_name}")
    make = module.raw_env if raw else module.env
    return make(render_mode=render_mode, **config_to_dict(game.make_config(config)))
