"""Wyvern TCG: a 2-6 player Munchkin-like card game with own decks (rules in :mod:`.rules`, observations
in :mod:`.encode`, catalog, decks and the deck validator in :mod:`.decks`)."""

from ..core import Game
from . import encode, rules

GAME = Game(name="wyvern", version=1, title="Wyvern TCG", rules=rules, encoder=encode)
