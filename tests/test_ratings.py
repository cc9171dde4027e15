"""Rating maths against hand-computed cases: Elo with error bars, LOS, SPRT LLR, OpenSkill, places."""

from __future__ import annotations

import math

import pytest

from tavernzoo.eval.ratings import (
    Sprt,
    elo_estimate,
    elo_from_score,
    likelihood_of_superiority,
    openskill_ratings,
    score_from_elo,
    score_variance,
)
from tavernzoo.eval.tally import places_from_scores


def test_elo_and_its_error_bars_for_60_wins_20_draws_20_losses():
    # s = (60 + 10) / 100 = 0.7; v = (60 * 0.3^2 + 20 * 0.2^2 + 20 * 0.7^2) / 100 = 0.16; se = sqrt(0.16/100) = 0.04
    # 95%: 0.7 -+ 1.959964 * 0.04 = [0.621601, 0.778399]
    # Elo: -400 log10(1/0.7 - 1) = 147.19; ends: 86.22 and 218.25, error bar (218.25 - 86.22) / 2 = 66.01
    estimate = elo_estimate(60, 20, 20)
    assert score_variance(60, 20, 20) == pytest.approx(0.16)
    assert estimate.score == pytest.approx(0.7)
    assert estimate.score_ci == pytest.approx((0.621601, 0.778399), abs=1e-6)
    assert estimate.elo == pytest.approx(147.19, abs=0.01)
    assert elo_from_score(0.778399) == pytest.approx(218.25, abs=0.01)
    assert elo_from_score(0.621601) == pytest.approx(86.22, abs=0.01)
    assert estimate.elo_error == pytest.approx(66.01, abs=0.01)


def test_elo_edge_cases():
    assert elo_from_score(0.5) == 0.0
    assert score_from_elo(elo_from_score(0.3)) == pytest.approx(0.3)
    perfect = elo_estimate(10, 0, 0)
    assert perfect.elo == math.inf and perfect.elo_error == math.inf
    assert perfect.as_dict()["elo"] is None  # JSON has no infinity
    empty = elo_estimate(0, 0, 0)
    assert math.isnan(empty.score) and empty.los == 0.5


def test_likelihood_of_superiority_ignores_draws():
    # (W - L) / sqrt(W + L) = 10 / 10 = 1 standard deviation: Phi(1) = 0.841345 ... in the erf form
    # 0.5 (1 + erf((W - L) / sqrt(2 (W + L)))) = 0.5 (1 + erf(10 / sqrt(100))) = 0.5 (1 + erf(1)) = 0.921350
    assert likelihood_of_superiority(30, 20) == pytest.approx(0.921350, abs=1e-6)
    assert elo_estimate(30, 50, 20).los == elo_estimate(30, 0, 20).los
    assert likelihood_of_superiority(20, 20) == 0.5
    assert likelihood_of_superiority(0, 0) == 0.5


def test_sprt_llr_on_known_counts():
    sprt = Sprt(0.0, 10.0, 0.05, 0.05)
    # bounds: ln(0.05 / 0.95) = -2.944439, ln(0.95 / 0.05) = 2.944439
    assert sprt.lower == pytest.approx(-2.944439, abs=1e-6) and sprt.upper == pytest.approx(2.944439, abs=1e-6)
    # 30 W, 50 D, 20 L: s = 0.55, v = 0.425 - 0.55^2 = 0.1225; s0 = 0.5, s1 = 1 / (1 + 10^-0.025) = 0.514387
    # LLR = 100 * 0.014387 * (1.1 - 1.014387) / (2 * 0.1225) = 0.50275
    assert sprt.llr(30, 50, 20) == pytest.approx(0.50275, abs=1e-4)
    assert sprt.decision(sprt.llr(30, 50, 20)) is None
    # ten times the games, same rates: ten times the LLR, past the upper bound
    assert sprt.llr(300, 500, 200) == pytest.approx(5.0275, abs=1e-3)
    assert sprt.decision(sprt.llr(300, 500, 200)) == "H1"
    # mirrored record: s = 0.45, LLR = 100 * 0.014387 * (0.9 - 1.014387) / 0.245 = -0.67171
    assert sprt.llr(20, 50, 30) == pytest.approx(-0.67171, abs=1e-4)
    assert sprt.decision(sprt.llr(200, 500, 300)) == "H0"
    assert sprt.llr(5, 0, 0) == 0.0  # no variance yet: no evidence either way


def test_sprt_on_a_known_sequence_stops_where_the_llr_first_crosses():
    sprt = Sprt(0.0, 50.0, 0.1, 0.1)  # bounds -+ ln 9 = 2.197225
    sequence = "WWDLWWDWLWWDWWLW" * 4  # W 10, D 3, L 3 per 16 games
    wins = draws = losses = 0
    stopped = None
    for number, outcome in enumerate(sequence, start=1):
        wins, draws, losses = wins + (outcome == "W"), draws + (outcome == "D"), losses + (outcome == "L")
        if sprt.decision(sprt.llr(wins, draws, losses)):
            stopped = number
            break
    # hand-computed: after 16 games (W 10, D 3, L 3) s = 11.5/16 = 0.71875,
    # v = (10 * 0.28125^2 + 3 * 0.21875^2 + 3 * 0.71875^2) / 16 = 2.484375 / 16 = 0.155273,
    # s1 = 1 / (1 + 10^-0.125) = 0.571463, LLR = 16 * 0.071463 * (1.4375 - 1.071463) / (2 * 0.155273) = 1.3477;
    # after 23 (W 14, D 5, L 4): s = 0.717391, v = 0.148393, LLR = 2.0121 < 2.1972 (continue);
    # after 24 (W 15, D 5, L 4): s = 0.729167, v = 0.145399, LLR = 2.2817 >= 2.1972: H1
    assert sprt.llr(10, 3, 3) == pytest.approx(1.3477, abs=1e-4)
    assert sprt.llr(14, 5, 4) == pytest.approx(2.0121, abs=1e-4)
    assert sprt.llr(15, 5, 4) == pytest.approx(2.2817, abs=1e-4)
    assert stopped == 24 and (wins, draws, losses) == (15, 5, 4)
    assert sprt.decision(sprt.llr(wins, draws, losses)) == "H1"


def test_sprt_refuses_bad_parameters():
    with pytest.raises(ValueError, match="elo0 < elo1"):
        Sprt(5.0, 0.0)
    with pytest.raises(ValueError, match="alpha=0.7"):
        Sprt(0.0, 5.0, 0.7, 0.05)


def test_places_share_ties():
    assert places_from_scores([1.0, -1.0]) == [1, 2]
    assert places_from_scores([0.0, 3.0, 3.0, -1.0]) == [3, 1, 1, 4]


def _plackett_luce(mus, sigmas, ranks, beta=25 / 6, tau=25 / 300, kappa=1e-4):
    """Weng & Lin (2011) Algorithm 4, by hand: what openskill's PlackettLuce computes by default."""
    sigmas = [math.sqrt(s * s + tau * tau) for s in sigmas]
    c = math.sqrt(sum(s * s + beta * beta for s in sigmas))
    n = len(mus)
    tied = [sum(1 for r in ranks if r == ranks[q]) for q in range(n)]
    below = [sum(math.exp(mus[s] / c) for s in range(n) if ranks[s] >= ranks[q]) for q in range(n)]
    out = []
    for i in range(n):
        omega = delta = 0.0
        for q in range(n):
            if ranks[q] <= ranks[i]:
                share = math.exp(mus[i] / c) / below[q]
                delta += share * (1 - share) / tied[q]
                omega += ((1 - share) if q == i else -share) / tied[q]
        omega *= sigmas[i] ** 2 / c
        delta *= sigmas[i] ** 2 / c**2 * (sigmas[i] / c)
        out.append((mus[i] + omega, sigmas[i] * math.sqrt(max(1 - delta, kappa))))
    return out


def test_openskill_on_a_four_player_ranking():
    # Four new players (mu 25, sigma 25/3) finish 1st..4th. By hand (Algorithm 4 above, tau = 25/300):
    # mu = 27.795, 26.553, 24.689, 20.962; sigma = 8.2636, 8.1796, 8.0841, 8.0841
    ratings = openskill_ratings([([0, 1, 2, 3], [1, 2, 3, 4])], players=4)
    expected = [(27.7953, 8.2636), (26.5529, 8.1796), (24.6894, 8.0841), (20.9624, 8.0841)]
    for rating, (mu, sigma), (hand_mu, hand_sigma) in zip(
        ratings, expected, _plackett_luce([25.0] * 4, [25 / 3] * 4, [1, 2, 3, 4]), strict=True
    ):
        assert rating["mu"] == pytest.approx(mu, abs=1e-4) == pytest.approx(hand_mu, abs=1e-4)
        assert rating["sigma"] == pytest.approx(sigma, abs=1e-4) == pytest.approx(hand_sigma, abs=1e-4)
        assert rating["ordinal"] == pytest.approx(rating["mu"] - 3 * rating["sigma"])
    # seats are mapped to bots: the same ranking seen from other seats rates the same bots the same
    permuted = openskill_ratings([([3, 1, 0, 2], [4, 2, 1, 3])], players=4)
    assert [r["mu"] for r in permuted] == pytest.approx([r["mu"] for r in ratings])


def test_openskill_second_game_uses_updated_ratings_and_ties():
    games = [([0, 1, 2, 3], [1, 2, 3, 4]), ([2, 0, 3, 1], [1, 1, 3, 4])]
    ratings = openskill_ratings(games, players=4)
    first = _plackett_luce([25.0] * 4, [25 / 3] * 4, [1, 2, 3, 4])
    seats = [2, 0, 3, 1]
    second = _plackett_luce([first[b][0] for b in seats], [first[b][1] for b in seats], [1, 1, 3, 4])
    for seat, bot in enumerate(seats):
        assert ratings[bot]["mu"] == pytest.approx(second[seat][0], abs=1e-4)
        assert ratings[bot]["sigma"] == pytest.approx(second[seat][1], abs=1e-4)
