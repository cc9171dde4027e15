"""Wyvern TCG: a 2-6 player Munchkin-like card game with own decks (rules in :mod:`.rules`, observations
in :mod:`.encode`, catalog, decks and the deck validator in :mod:`.decks`)."""

from ..core import Game
from . import encode, rules

GAME = Game(name="wyvern", version=1, title="Wyvern TCG", rules=rules, encoder=encode)


def __getattr__(name: str):
    # The vector envs import numba and compile on first use: only when asked for, not with the rules.
    if name in ("vector_env", "self_play_vector_env"):
        from . import vector

        return getattr(vector, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
