"""What a seat's result scores.

A leaf of eval/ (it imports nothing else of tavernzoo), shared by the match (eval/match.py), the
tournament (schedule, runner, results) and the training report (train/evaluate.py).
"""

from __future__ import annotations

from collections.abc import Sequence


def score_of(returns: Sequence[float], seat: int) -> float:
    """Win share of ``seat``: 1 for the sole best return, 1/k for a top shared by k seats, else 0."""
    top = max(returns)
    if returns[seat] != top:
        return 0.0
    return 1.0 / sum(1 for value in returns if value == top)
