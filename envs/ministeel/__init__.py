"""MiniSteel: a 2-6 player hidden-hand card game with reactions, poison and combos (rules in
:mod:`.rules`, observations in :mod:`.encode`, the card sheet in ``cards.toml``)."""

from ..core import Game
from . import encode, rules

GAME = Game(name="ministeel", version=1, title="MiniSteel", rules=rules, encoder=encode)
