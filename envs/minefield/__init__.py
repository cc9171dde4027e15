"""Minefield: an N-player simultaneous-move elimination game (rules in :mod:`.rules`, observations in
:mod:`.encode`)."""

from ..core import Game
from . import encode, rules

GAME = Game(name="minefield", version=0, title="Minefield", rules=rules, encoder=encode, simultaneous=True)
