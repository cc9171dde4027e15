"""Tiny Minotaur PvP: a two-player d20 card duel (rules in :mod:`.rules`, observations in :mod:`.encode`)."""

from ..core import Game
from . import encode, rules

GAME = Game(name="tiny_minotaur", version=1, title="Tiny Minotaur PvP", rules=rules, encoder=encode)
