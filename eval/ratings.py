"""Ratings of tournament results: Elo with error bars, likelihood of superiority, SPRT, OpenSkill.

Two players (a duel, or one pair of bots inside a bigger tournament) are rated from their game count
of wins ``W``, draws ``D`` and losses ``L``, the way cutechess-cli and fastchess do:

* score ``s = (W + D/2) / N`` and its per-game variance ``v = (W(1-s)^2 + D(1/2-s)^2 + L s^2) / N``
  (the trinomial model: every game is an independent win, draw or loss);
* 95% interval of the score ``s ± 1.96 sqrt(v / N)``;
* Elo difference ``-400 log10(1/s - 1)``, error bar half the Elo width of the score interval;
* likelihood of superiority ``LOS = Phi((W - L) / sqrt(W + L))`` — draws carry no information on who
  is stronger;
* SPRT: the generalised SPRT of fastchess/fishtest with logistic Elo bounds. With
  ``s0, s1 = 1 / (1 + 10^(-elo/400))`` for ``elo0, elo1``, ``LLR = N (s1 - s0)(2s - s0 - s1) / (2v)``;
  H1 (the candidate is ``elo1`` better) is accepted at ``LLR >= ln((1-beta)/alpha)``, H0 (it is only
  ``elo0`` better) at ``LLR <= ln(beta/(1-alpha))``.

Multi-player tables are rated with OpenSkill's Plackett-Luce model (``openskill>=6.2``): every game is
a ranking of its seats (ties allowed), processed in a fixed order; each bot gets ``mu``, ``sigma`` and the
conservative ``ordinal = mu - 3 sigma``. :class:`PlackettLuceTally` is the same model updated one
game at a time, for the tournament's running tally.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .stats import z_value


def elo_from_score(score: float) -> float:
    """The logistic Elo difference that expects ``score``; ±inf at 1 and 0."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of an ``elo`` difference (logistic)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_variance(wins: float, draws: float, losses: float) -> float:
    """Per-game variance of the score under the trinomial model (0 with no games)."""
    games = wins + draws + losses
    if games <= 0:
        return 0.0
    s = (wins + draws / 2.0) / games
    return (wins * (1.0 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s**2) / games


@dataclass(frozen=True)
class EloEstimate:
    """A pairing's result: score with its interval, Elo with its error bar, likelihood of superiority."""

    games: int
    wins: float
    draws: float
    losses: float
    score: float
    score_ci: tuple[float, float]
    elo: float
    elo_error: float
    los: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "score": self.score, "score_ci": list(self.score_ci), "elo": _finite(self.elo),
            "elo_error": _finite(self.elo_error), "los": self.los,
        }


def elo_estimate(wins: float, draws: float, losses: float, confidence: float = 0.95) -> EloEstimate:
    """Score, Elo difference and error bar, and LOS from a W/D/L count (see the module docstring)."""
    games = wins + draws + losses
    if games <= 0:
        return EloEstimate(0, wins, draws, losses, math.nan, (0.0, 1.0), math.nan, math.inf, 0.5)
    score = (wins + draws / 2.0) / games
    half = z_value(confidence) * math.sqrt(score_variance(wins, draws, losses) / games)
    low, high = score - half, score + half
    elo_error = (elo_from_score(high) - elo_from_score(low)) / 2.0 if 0.0 < low and high < 1.0 else math.inf
    return EloEstimate(int(round(games)), wins, draws, losses, score, (max(0.0, low), min(1.0, high)),
                       elo_from_score(score), elo_error, likelihood_of_superiority(wins, losses))


def likelihood_of_superiority(wins: float, losses: float) -> float:
    """P(the first player is stronger) from wins and losses: ``Phi((W - L) / sqrt(W + L))``."""
    if wins + losses <= 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# --- SPRT ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of ``elo0`` (H0) against ``elo1`` (H1)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self):
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT needs elo0 < elo1, got elo0={self.elo0} and elo1={self.elo1}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT {name}={value} must lie strictly between 0 and 0.5")

    @property
    def lower(self) -> float:
        """At or below this LLR, H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this LLR, H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, wins: float, draws: float, losses: float) -> float:
        """The log-likelihood ratio of H1 against H0 after these games (0 while the variance is 0)."""
        games = wins + draws + losses
        variance = score_variance(wins, draws, losses)
        if games <= 0 or variance <= 0.0:
            return 0.0
        score = (wins + draws / 2.0) / games
        s0, s1 = score_from_elo(self.elo0), score_from_elo(self.elo1)
        return games * (s1 - s0) * (2.0 * score - s0 - s1) / (2.0 * variance)

    def decision(self, llr: float) -> str | None:
        """``"H1"``, ``"H0"`` or None (keep playing)."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "lower": self.lower, "upper": self.upper}


# --- OpenSkill ----------------------------------------------------------------------------------------


def openskill_ratings(games: Iterable[tuple[Sequence[int], Sequence[int]]], players: int) -> list[dict[str, float]]:
    """OpenSkill Plackett-Luce ratings of ``players`` bots from games given as ``(entries, places)``.

    ``entries[seat]`` is the bot at that seat and ``places[seat]`` its finishing place (1 best, ties
    share a place). Games are rated in the order given, one team per seat. Returns, per bot,
    ``{"mu", "sigma", "ordinal"}``.
    """
    try:
        from openskill.models import PlackettLuce
    except ImportError as error:  # pragma: no cover - depends on the install
        raise ImportError(f"multi-player ratings need openskill>=6.2 ({error}): pip install 'openskill>=6.2'") from None
    model = PlackettLuce()
    ratings = [model.rating(name=str(i)) for i in range(players)]
    for entries, places in games:
        teams = [[ratings[entry]] for entry in entries]
        updated = model.rate(teams, ranks=[float(place) for place in places])
        for entry, team in zip(entries, updated, strict=True):
            ratings[entry] = team[0]
    return [{"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for r in ratings]


def _finite(value: float) -> float | None:
    """JSON has no infinity: None stands for an unbounded value."""
    return value if math.isfinite(value) else None


class PlackettLuceTally:
    """OpenSkill's Plackett-Luce ratings (``openskill.models.PlackettLuce()`` with its defaults, one player
    a team, ranks given), updated one game at a time without the library's per-game copies and checks.

    The arithmetic is the library's (openskill 6.2, ``PlackettLuce.rate`` and ``_compute``), step for
    step in the same order, so the ratings are the same to the last bit
    (:func:`tavernzoo.eval.ratings.openskill_ratings` computes them with the library itself, and the
    tests compare the two); it costs a few microseconds a game instead of about a hundred.
    """

    MU, SIGMA = 25.0, 25.0 / 3.0
    BETA, KAPPA, TAU = 25.0 / 6.0, 0.0001, 25.0 / 300.0

    def __init__(self, players: int):
        self.mu = [self.MU] * players
        self.sigma = [self.SIGMA] * players

    def rate(self, entries: Sequence[int], places: Sequence[float]) -> None:
        tau_squared = self.TAU * self.TAU
        # rate(): sigma corrected with tau; teams sorted by rank (stable), the sorted ranks as ints.
        order = sorted(range(len(entries)), key=lambda seat: places[seat])
        ranks = sorted(float(place) for place in places)
        mus = [self.mu[entries[seat]] for seat in order]
        sigmas = [math.sqrt(self.sigma[entries[seat]] * self.sigma[entries[seat]] + tau_squared) for seat in order]
        rank = [int(value) for value in ranks]
        # _calculate_team_ratings: one player, balance off: mu and sigma**2 summed from 0.0
        team_mu = [0.0 + mu * 1.0 for mu in mus]
        team_sigma_squared = [0.0 + (sigma * 1.0) ** 2 for sigma in sigmas]
        beta_squared = self.BETA**2
        collective = 0.0
        for value in team_sigma_squared:
            collective += value + beta_squared
        c = math.sqrt(collective)
        sum_q: dict[int, float] = {}
        for i in range(len(order)):
            summed = math.exp(team_mu[i] / c)
            for q in range(len(order)):
                if rank[i] >= rank[q]:
                    sum_q[q] = sum_q[q] + summed if q in sum_q else summed
        sums = list(sum_q.values())
        a = [sum(1 for q in rank if q == r) for r in rank]
        for i in range(len(order)):
            omega = 0.0
            delta = 0.0
            i_mu_over_c = math.exp(team_mu[i] / c)
            for q in range(len(order)):
                ratio = i_mu_over_c / sums[q]
                if rank[q] <= rank[i]:
                    delta += ratio * (1 - ratio) / a[q]
                    if q == i:
                        omega += (1 - ratio) / a[q]
                    else:
                        omega -= ratio / a[q]
            sigma_squared = team_sigma_squared[i]
            omega *= sigma_squared / c
            delta *= sigma_squared / c**2
            delta *= math.sqrt(sigma_squared) / c
            mu, sigma = mus[i], sigmas[i]
            if omega >= 0:
                mu += (sigma**2 / sigma_squared) * omega * 1.0
                sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared) * delta * 1.0, self.KAPPA))
            else:
                mu += (sigma**2 / sigma_squared) * omega / 1.0
                sigma *= math.sqrt(max(1 - (sigma**2 / sigma_squared) * delta / 1.0, self.KAPPA))
            entry = entries[order[i]]
            self.mu[entry], self.sigma[entry] = mu, sigma

    def ratings(self) -> list[dict[str, float]]:
        return [{"mu": mu, "sigma": sigma, "ordinal": 1 * ((mu - 3.0 * sigma) + (0 / 1))}
                for mu, sigma in zip(self.mu, self.sigma, strict=True)]
