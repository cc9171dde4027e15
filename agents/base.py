"""What the built-in bots share: reading the legal actions from a mask, and the rule-based bots' base."""

from __future__ import annotations

from typing import Any

import numpy as np


def legal_actions(observation: dict[str, Any], bot_name: str) -> list[int]:
    """The legal action indices of an observation's mask; a bot asked to act on an all-zero mask (an agent
    that is not to act) fails loudly instead of inventing a move."""
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    if not legal:
        raise ValueError(f"{bot_name} bot was asked to act with an all-zero action mask")
    return legal


class RuleBot:
    """Base of the built-in rule-based bots that keep nothing between games: they hold the game's config
    (the game's defaults when none is given, if ``config_type`` is set) and ``reset()`` does nothing."""

    name = "rule-based"
    config_type: type | None = None

    def __init__(self, config: Any = None, seed: int | None = None):
        if config is None and self.config_type is not None:
            config = self.config_type()
        self.config = config

    def reset(self) -> None:
        pass
