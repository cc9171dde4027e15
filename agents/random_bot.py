"""The uniform random bot: every game's baseline."""

from __future__ import annotations

import random
from typing import Any

import numpy as np


class RandomBot:
    """Picks uniformly among the legal actions of the mask, from its own seeded generator."""

    name = "random"

    def __init__(self, config: Any = None, seed: int | None = None):
        self._random = random.Random(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("RandomBot was asked to act with an all-zero action mask")
        return int(legal[self._random.randrange(legal.size)])
