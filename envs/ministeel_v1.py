"""MiniSteel v1 as a PettingZoo AEC environment: Card Draw tokens in your own main phase only.

The current version is :mod:`tavernzoo.envs.ministeel_v2` (its docstring holds the version history).
This module plays v1 exactly (the same engine with v1's options, :class:`~tavernzoo.envs.ministeel.rules.
ConfigV1`: v1's 291-float observation, 140 actions and records named ``ministeel_v1``), so that v1
records replay and v1 bots (``zoo:ministeel_v1``) play the game they were trained on. ``ministeel_v2``
with ``token_timing=own_turn`` plays the same rules, observations and actions under the v2 name.
"""

from .aec import make_env_factories
from .ministeel import GAME_V1 as GAME

env, raw_env = make_env_factories(GAME)

__all__ = ["env", "raw_env", "GAME"]
