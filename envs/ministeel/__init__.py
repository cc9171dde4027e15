"""MiniSteel: a 2-6 player hidden-hand card game with reactions, poison and combos (rules in
:mod:`.rules`, observations in :mod:`.encode`, the card sheet in ``cards.toml``).

``vector_env(num_envs, ...)`` and ``self_play_vector_env(num_envs, ...)`` are the batched envs on the
compiled kernel (:mod:`.vector`; numba, the ``kernel`` extra), imported on first use.

``GAME`` is the current version (v2: Card Draw tokens at any time, ``tavernzoo.envs.ministeel_v2``);
``GAME_V1`` (``tavernzoo.envs.ministeel_v1``) is v1, the same engine with tokens on your own turn only,
kept so that v1 records replay and v1 bots play (the version history: ``ministeel_v2``'s docstring).
"""

from ..core import Game
from . import encode, rules, rules_v1

GAME = Game(name="ministeel", version=2, title="MiniSteel", rules=rules, encoder=encode)
GAME_V1 = Game(name="ministeel", version=1, title="MiniSteel v1: ministeel_v2 with token_timing=own_turn",
               rules=rules_v1, encoder=encode)
EARLIER_VERSIONS = (GAME_V1,)


def __getattr__(name: str):
    # The vector envs import numba and compile on first use: only when asked for, not with the rules.
    if name in ("vector_env", "self_play_vector_env"):
        from . import vector

        return getattr(vector, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
