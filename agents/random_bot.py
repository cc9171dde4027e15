"""The uniform random bot (every game's baseline) and ``legal_actions``, which every bot reads its mask with."""

from __future__ import annotations

import random
from typing import Any

import numpy as np


def legal_actions(observation: dict[str, Any], bot_name: str) -> list[int]:
    """The legal action indices of an observation's mask; a bot asked to act on an all-zero mask (an agent
    that is not to act) fails loudly instead of inventing a move."""
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    if not legal:
        raise ValueError(f"{bot_name} bot was asked to act with an all-zero action mask")
    return legal


class RandomBot:
    """Picks uniformly among the legal actions of the mask, from its own seeded generator."""

    name = "random"

    def __init__(self, config: Any = None, seed: int | None = None):
        self._random = random.Random(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        return legal[self._random.randrange(len(legal))]
