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


CONTROL_WARMUP = 8
"""Deals scored without a correction while the control variate's coefficient has too few deals to be fitted."""


def control_variate_values(values: Sequence[float], controls: Sequence[float],
                           warmup: int = CONTROL_WARMUP) -> list[float]:
    """``values[k] - beta_k * controls[k]`` for each sample: a control variate with a coefficient fitted on the
    samples before it.

    ``controls[k]`` must have expectation zero given everything before sample ``k`` (eval/luck.py: the luck of a
    deal, whose chance is independent of the deals before it). ``beta_k`` is the least-squares slope of the
    values on the controls of samples ``0..k-1`` (zero for the first ``warmup`` samples), so it is known before
    sample ``k`` is drawn: ``E[values[k] - beta_k * controls[k]] = E[values[k]]`` exactly, where a slope fitted on
    all samples would bias the mean by O(1/n). The corrected samples keep the order of the draws (a martingale
    around the mean), which is what :func:`mean_interval` and :func:`confidence_sequence` take."""
    if len(values) != len(controls):
        raise ValueError(f"{len(values)} values but {len(controls)} controls")
    corrected = []
    sum_c = sum_v = sum_cc = sum_cv = 0.0
    for k, (value, control) in enumerate(zip(values, controls, strict=True)):
        beta = 0.0
        if k >= max(2, warmup):
            variance = sum_cc - sum_c * sum_c / k
            if variance > 1e-12:
                beta = (sum_cv - sum_c * sum_v / k) / variance
        corrected.append(value - beta * control)
        sum_c += control
        sum_v += value
        sum_cc += control * control
        sum_cv += control * value
    return corrected


def confidence_sequence(values: Sequence[float], alpha: float = 0.05, planned: int = 1000
                        ) -> tuple[float, float, float]:
    """Mean and an asymptotic confidence sequence's bounds ``(mean, low, high)`` after ``len(values)`` samples:
    an interval that may be looked at after every sample and still covers the mean at every time at once with
    probability about ``1 - alpha`` (Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas, "Time-uniform central
    limit theory and asymptotic confidence sequences", 2021: Robbins' normal mixture with the sample variance).
    A fixed-n interval looked at after every block would exclude a true mean far more often than ``alpha``.
    ``planned``: the number of samples at which the sequence is tightest (the mixture's width is tuned there)."""
    n = len(values)
    if n < 2:
        return (math.fsum(values) / n if n else math.nan, -math.inf, math.inf)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    mean = math.fsum(values) / n
    deviation = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    rho2 = (-2.0 * math.log(alpha) + math.log(-2.0 * math.log(alpha) + 1.0)) / max(planned, 1)
    half = deviation * math.sqrt(2.0 * (n * rho2 + 1.0) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1.0) / alpha))
    return (mean, mean - half, mean + half)


SEQUENTIAL_MIN_DEALS = 20
"""Deals before a sequential test may stop: the confidence sequence leans on the central limit theorem."""


def sequential_separation(samples: Sequence[Sequence[float]], fair: float, alpha: float = 0.05,
                          planned: int = 1000, min_samples: int = SEQUENTIAL_MIN_DEALS) -> list[tuple[int, int]]:
    """The entries whose mean differs from the fair share ``fair``, by a test that may be run after every deal:
    ``(entry, +1 above / -1 below)`` for each entry whose :func:`confidence_sequence` at level
    ``alpha / entries`` (Bonferroni over the entries) excludes ``fair``; empty before ``min_samples`` samples.

    ``samples[entry]``: the entry's per-deal scores so far (plain, or luck-corrected; in a tournament, of the
    deals at its tables only, so the entries' counts may differ). Where every entry's
    expected score is the fair share (equal bots), a match stopped at the first deal where this is not empty
    stops with probability at most about ``alpha`` over its whole run, however long and however often it looks
    (tests/test_luck.py checks it by simulation); with two entries, one above is the other below."""
    entries = len(samples)
    if entries == 0 or min(map(len, samples)) < min_samples:  # a tournament's entries sit at some deals only
        return []
    separated = []
    for entry, values in enumerate(samples):
        _, low, high = confidence_sequence(values, alpha / entries, planned)
        if low > fair or high < fair:
            separated.append((entry, 1 if low > fair else -1))
    return separated


def sequential_line(verdict: dict, seats: int) -> str:
    """The sequential test's verdict (``{"alpha", "planned", "decided_at", "separated"}``, as match and
    tournament results hold it) in one line, for the match's and the tournament's tables alike."""
    fair = f"the fair share {1 / seats:.3f}"
    if verdict["decided_at"] is None:
        return (f"sequential test (alpha {verdict['alpha']:g}): no entry separated from {fair} within "
                f"{verdict['planned']} deals")
    sides = ", ".join(f"{label} {'above' if side > 0 else 'below'}" for label, side in verdict["separated"])
    return (f"sequential test (alpha {verdict['alpha']:g}): stopped after {verdict['decided_at']} of at most "
            f"{verdict['planned']} deals: {sides} {fair}")
