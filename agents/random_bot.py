"""The uniform random bot: every game's baseline."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .base import BotBase, legal_actions


class RandomBot(BotBase):
    """Picks uniformly among the legal actions of the mask, from its own seeded generator."""

    name = "random"

    def __init__(self, config: Any = None, seed: int | None = None):
        self._random = random.Random(seed)

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        return legal[self._random.randrange(len(legal))]

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        legal = np.asarray(masks, dtype=np.float64) > 0
        return legal / legal.sum(axis=1, keepdims=True)
