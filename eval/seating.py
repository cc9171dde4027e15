"""Seats and seeds: who sits where, what a seat's result scores, the seeds derived from a run's seed.

A leaf of eval/ (it imports nothing else of tavernzoo), shared by the match (eval/match.py), the
tournament (schedule, runner, results) and the training report (train/evaluate.py).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


def score_of(returns: Sequence[float], seat: int) -> float:
    """Win share of ``seat``: 1 for the sole best return, 1/k for a top shared by k seats, else 0."""
    top = max(returns)
    if returns[seat] != top:
        return 0.0
    return 1.0 / sum(1 for value in returns if value == top)


def entry_labels(bot_specs: Sequence[str]) -> list[str]:
    """Display names: a spec entered more than once is numbered (``random #2``)."""
    labels = []
    for i, spec in enumerate(bot_specs):
        if bot_specs.count(spec) > 1:
            labels.append(f"{spec} #{bot_specs[: i + 1].count(spec)}")
        else:
            labels.append(spec)
    return labels



def seating(table: Sequence[int], rotation: int) -> list[int]:
    """The entry at each seat in ``rotation``: ``table[i]`` sits at seat ``(i + rotation) % n``."""
    n = len(table)
    return [table[(seat - rotation) % n] for seat in range(n)]


def derived_seed(seed: int, *parts: Any) -> int:
    """A seed that depends only on the tournament seed and ``parts`` (deal, rotation, entry...)."""
    return random.Random(":".join(map(str, ("tavernzoo-tournament", seed, *parts)))).randrange(2**63)

