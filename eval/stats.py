"""Intervals for match results: small, exact formulas, each with its assumption stated."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist


def z_value(confidence: float = 0.95) -> float:
    """The two-sided normal quantile: 1.96 for 95%."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: float, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (good near 0 and 1, unlike the Wald interval)."""
    if trials <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"successes={successes} must lie between 0 and trials={trials}")
    z = z_value(confidence)
    p = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean and normal-approximation interval of independent samples: ``(mean, low, high)``.

    Match scores are averaged per deal first (a deal's games share their dice), so the samples given
    here are the independent units. With fewer than two samples the interval is unbounded.
    """
    n = len(values)
    if n == 0:
        return (math.nan, -math.inf, math.inf)
    mean = math.fsum(values) / n
    if n < 2:
        return (mean, -math.inf, math.inf)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = z_value(confidence) * math.sqrt(variance / n)
    return (mean, mean - half, mean + half)


def counted_mean_interval(counts: Counter, confidence: float = 0.95) -> tuple[float, float, float]:
    """:func:`mean_interval` of the samples that ``counts`` holds (value: how
    often), to the last bit: its ``fsum``s are correctly rounded sums, and so are these exact ones."""
    n = sum(counts.values())
    if n == 0:
        return (math.nan, -math.inf, math.inf)
    mean = float(sum(Fraction(value) * times for value, times in counts.items())) / n
    if n < 2:
        return (mean, -math.inf, math.inf)
    variance = float(sum(Fraction((value - mean) ** 2) * times for value, times in counts.items())) / (n - 1)
    half = z_value(confidence) * math.sqrt(variance / n)
    return (mean, mean - half, mean + half)
