"""tavernzoo's games as PettingZoo environments.

Each game lives in a subpackage (``tiny_minotaur/``: ``rules.py``, ``encode.py``) and is exposed as a
versioned module (``tiny_minotaur_v1``) with ``env(**config)`` and ``raw_env(**config)``.
``games()`` lists them; ``get_game(name)`` returns one. The contract: docs/architecture.md.
"""

from .core import Chance, Game, IllegalActionError, ReplayError
from .registry import games, get_game

__all__ = ["Chance", "Game", "IllegalActionError", "ReplayError", "games", "get_game"]
