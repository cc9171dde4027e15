"""Luck taken out of match scores (eval/luck.py) and the sequential stop (eval/stats.py), proved by simulation:
the luck has mean zero, the luck-corrected score keeps the plain score's expectation with less variance, and a
sequential match between equal bots stops no more often than its alpha."""

from __future__ import annotations

import math
import random
import subprocess
import sys

import pytest

from tavernzoo.eval.match import play_match
from tavernzoo.eval.stats import (
    confidence_sequence,
    control_variate_values,
    mean_interval,
    sequential_separation,
)


@pytest.fixture(scope="module")
def measured():
    """Tiny Minotaur, heuristic against random, every game's luck measured by the zoo network."""
    return play_match("tiny_minotaur", ["heuristic", "random"], 300, seed=11, luck="zoo:tiny_minotaur",
                      chance_samples=4)


def test_luck_has_mean_zero(measured):
    for row in measured.rows:
        mean, low, high = mean_interval(row.per_deal_luck, confidence=0.999)
        assert low < 0.0 < high, (row.bot, mean, low, high)
        assert any(abs(luck) > 0.05 for luck in row.per_deal_luck)  # it measures something


def test_corrected_score_is_unbiased_and_tighter(measured):
    """The corrected mean agrees with the plain score of many more games (other deals), and its variance over
    deals is lower than the plain score's over the same deals."""
    plain = play_match("tiny_minotaur", ["heuristic", "random"], 3000, seed=12)
    for row, truth in zip(measured.rows, plain.rows, strict=True):
        values = row.deal_values()
        mean, _, _ = mean_interval(values)
        spread = math.sqrt(_variance(values) / len(values) + _variance(truth.per_deal_scores) / plain.deals)
        assert abs(mean - truth.score) < 3.3 * spread, (row.bot, mean, truth.score, spread)
        assert row.corrected == pytest.approx(mean)
    random_row = measured.rows[1]  # the seat whose luck the network reads best (docs/strength.md)
    assert _variance(random_row.deal_values()) < 0.85 * _variance(random_row.per_deal_scores)


def test_control_variate_slope_uses_only_earlier_samples():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    controls = [1.0, -1.0, 1.0, -1.0, 1.0]
    corrected = control_variate_values(values, controls, warmup=3)
    assert corrected[:3] == values[:3]
    # Changing a later sample leaves the earlier corrections alone.
    assert control_variate_values(values[:4] + [50.0], controls, warmup=3)[:4] == corrected[:4]
    with pytest.raises(ValueError, match="2 values but 1 controls"):
        control_variate_values([1.0, 2.0], [0.0])


def _null_deal(rng: random.Random, seats: int) -> list[float]:
    """One deal between equal bots: each of its games won by a seat drawn at random."""
    scores = [0.0] * seats
    for _ in range(seats):
        scores[rng.randrange(seats)] += 1.0 / seats
    return scores


def _stops(rng: random.Random, seats: int, deals: int, every: int, test) -> bool:
    samples: list[list[float]] = [[] for _ in range(seats)]
    for deal in range(1, deals + 1):
        for entry, score in enumerate(_null_deal(rng, seats)):
            samples[entry].append(score)
        if deal % every == 0 and test(samples):
            return True
    return False


def test_sequential_error_rate_holds_under_the_null():
    """Equal bots, looked at every 4 deals up to 200: the sequence stops at most about alpha of the time, where
    a fixed-n 95% interval looked at as often stops far more."""
    rng = random.Random(5)
    runs, seats, deals = 150, 4, 200

    def sequence(samples):
        return bool(sequential_separation(samples, 1 / seats, 0.05, planned=deals))

    def naive(samples):
        return len(samples[0]) >= 20 and any(
            not (low < 1 / seats < high) for _, low, high in map(mean_interval, samples))

    stops = sum(_stops(rng, seats, deals, 4, sequence) for _ in range(runs))
    naive_stops = sum(_stops(rng, seats, deals, 4, naive) for _ in range(runs))
    assert stops <= 0.09 * runs, stops
    assert naive_stops > 2 * max(stops, 0.05 * runs), (naive_stops, stops)


def test_sequential_stops_for_a_stronger_bot():
    rng = random.Random(6)
    samples = [[], []]
    decided = []
    for _ in range(400):
        won = 1.0 if rng.random() < 0.7 else 0.0
        samples[0].append(won)
        samples[1].append(1.0 - won)
        if decided := sequential_separation(samples, 0.5, 0.05, planned=400):
            break
    assert decided == [(0, 1), (1, -1)]
    assert len(samples[0]) < 200


def test_confidence_sequence_is_wider_than_the_fixed_interval():
    rng = random.Random(1)
    values = [rng.random() for _ in range(100)]
    _, low, high = mean_interval(values)
    _, seq_low, seq_high = confidence_sequence(values, 0.05, planned=100)
    assert seq_low < low and high < seq_high


def test_match_sequential_stops_early():
    result = play_match("tiny_minotaur", ["heuristic", "random"], 2000, seed=3, sequential=True, block_deals=16)
    assert result.sequential["decided_at"] == result.deals < 1000
    assert result.sequential["separated"] == [["heuristic", 1], ["random", -1]]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_cli_bad_input_is_one_line():
    for args, words in [
        (("--variance-reduction", "heuristic"), "has no value head"),
        (("--variance-reduction", "zoo:ministeel"), "plays ministeel"),
        (("--chance-samples", "3"), "--chance-samples needs --variance-reduction"),
        (("--variance-reduction", "zoo:tiny_minotaur", "--chance-samples", "0"), "from 1 to 256"),
        (("--sequential", "--alpha", "0.7"), "alpha=0.7"),
        (("--variance-reduction", "playouts:0"), "from 1 to 4096"),
        (("--variance-reduction", "playouts:many"), "from 1 to 4096"),
        (("--variance-reduction", "playouts:8:mcts", "ministeel", "--set", "num_players=2"),
         "a stand-in must be a bot"),
        (("--variance-reduction", "playouts:8:zoo:tiny_minotaur"), "the heuristic alone"),
        (("--variance-reduction", "playouts", "minefield", "--set", "num_players=2"), "not Minefield"),
    ]:
        done = _run("match", "--games", "4", "--no-progress", *args)
        assert done.returncode != 0
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, done.stderr)


def test_cli_prints_the_corrected_score_beside_the_plain_one():
    done = _run("match", "--games", "40", "--no-progress", "--variance-reduction", "zoo:tiny_minotaur",
                "--sequential")
    assert done.returncode == 0, done.stderr
    assert "luck-corrected" in done.stdout and "sequential test" in done.stdout
    plain = _run("match", "--games", "40", "--no-progress")
    assert "luck-corrected" not in plain.stdout and "sequential" not in plain.stdout


def _variance(values) -> float:
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def test_decision_luck_of_a_bot_that_draws_its_moves_has_mean_zero(tmp_path):
    """AIVAT's decision term: at each move of a bot whose move probabilities are known (the random bot), the
    value after the drawn move less the probability-weighted value after every move it might have drawn. Over
    many games it has mean zero; a bot that names its moves (the heuristic) adds none."""
    import json

    from tavernzoo.envs import get_game
    from tavernzoo.eval.luck import value_bot_meter

    records = tmp_path / "games.jsonl"
    play_match("tiny_minotaur", ["heuristic", "random"], 240, seed=13, records_path=records)
    game = get_game("tiny_minotaur")
    seats = {"heuristic": "heuristic", "random": "random"}
    chance_only = value_bot_meter("zoo:tiny_minotaur", game, None, 2)
    with_decisions = value_bot_meter("zoo:tiny_minotaur", game, None, 2, seats)
    named_only = value_bot_meter("zoo:tiny_minotaur", game, None, 2, {"heuristic": "heuristic"})
    assert with_decisions.movers["random"].move_probabilities is not None
    decisions = []
    for line in records.read_text().splitlines():
        record = json.loads(line)
        plain = chance_only.luck(record)
        assert named_only.luck(record) == plain
        decisions += [a - b for a, b in zip(with_decisions.luck(record), plain, strict=True)]
    mean, low, high = mean_interval(decisions, confidence=0.999)
    assert low < 0.0 < high, (mean, low, high)
    assert any(abs(value) > 0.05 for value in decisions)  # it measures something


def test_move_probabilities_are_what_a_bot_plays():
    import numpy as np

    from tavernzoo.agents import load_bot
    from tavernzoo.agents.base import as_bot
    from tavernzoo.envs import get_game

    game = get_game("tiny_minotaur")
    config = game.make_config()
    observations = np.zeros((2, game.encoder.observation_size(config)), dtype=np.float32)
    masks = np.zeros((2, len(game.action_names(config))), dtype=np.int8)
    masks[0, [0, 2]] = masks[1, 1] = 1

    def probabilities(spec):
        return as_bot(load_bot(spec, game, config, seed=0)).move_probabilities(observations, masks)

    assert probabilities("heuristic") is None and probabilities("zoo:tiny_minotaur") is None  # named, not drawn
    uniform = probabilities("random")
    assert uniform[0, 0] == uniform[0, 2] == 0.5 and uniform[1, 1] == 1.0 and uniform.sum() == 2.0
    sampled = probabilities("zoo:tiny_minotaur@sample")
    assert np.allclose(sampled.sum(axis=1), 1.0) and not sampled[masks == 0].any()


# --- playouts (--variance-reduction playouts[:N]) ------------------------------------------------------------------


@pytest.mark.parametrize("game_name", ["ministeel", "wyvern"])
def test_seated_playouts_replay_the_game_the_seated_bots_played(tmp_path, game_name):
    """The meter's playouts seat the table's bots in the kernel (the heuristic compiled, the network asked in
    batches): played out from a recorded game's deal with its own dice, they play that game again, to the same
    returns; the heuristic standing in for the network plays other games."""
    import json

    from tavernzoo.envs import get_game
    from tavernzoo.envs.core import Chance
    from tavernzoo.eval.luck import PlayoutMeter

    records = tmp_path / "games.jsonl"
    bots = [f"zoo:{game_name}", "heuristic", "heuristic", "heuristic"]
    play_match(game_name, bots, 16, seed=4, records_path=records)
    game = get_game(game_name)
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    labels = {label: label.rpartition(" #")[0] or label for label in lines[0]["seats"]}
    seated = PlayoutMeter(game, lines[0]["config"], 1, 1, labels)
    stand_in = PlayoutMeter(game, lines[0]["config"], 1, 1)
    config = game.make_config(lines[0]["config"])
    replayed, others = [], []
    for line in lines:
        deal = seated.kernel.from_states([game.rules.new_game(config, Chance(line["seed"]))])
        replayed.append([round(value, 9) for value in seated.play_out(deal, line["seats"])[0]])
        others.append([round(value, 9) for value in stand_in.play_out(deal, line["seats"])[0]])
    played = [[round(value, 9) for value in line["returns"]] for line in lines]
    assert replayed == played
    assert any(other != returns for other, returns in zip(others, played, strict=True))
    # A stand-in the user names plays the seats the kernel cannot: the network for a search, here.
    searched = {**labels, lines[0]["seats"][0]: "mcts:10"}
    stood_in = PlayoutMeter(game, lines[0]["config"], 1, 1, searched, stand_in=f"zoo:{game_name}")
    again = [[round(value, 9) for value in stood_in.play_out(
        seated.kernel.from_states([game.rules.new_game(config, Chance(line["seed"]))]), line["seats"])[0]]
        for line in lines]
    assert again == played


def test_playout_luck_has_mean_zero_and_takes_luck_out():
    """Tiny Minotaur, heuristic against random, luck by playouts: the luck has mean zero, the corrected score
    agrees with the plain score of other deals, and its variance over deals is lower."""
    measured = play_match("tiny_minotaur", ["heuristic", "random"], 300, seed=11, luck="playouts:8",
                          chance_samples=2)
    plain = play_match("tiny_minotaur", ["heuristic", "random"], 3000, seed=12)
    for row, truth in zip(measured.rows, plain.rows, strict=True):
        mean, low, high = mean_interval(row.per_deal_luck, confidence=0.999)
        assert low < 0.0 < high, (row.bot, mean, low, high)
        values = row.deal_values()
        mean, _, _ = mean_interval(values)
        spread = math.sqrt(_variance(values) / len(values) + _variance(truth.per_deal_scores) / plain.deals)
        assert abs(mean - truth.score) < 3.3 * spread, (row.bot, mean, truth.score, spread)
        assert _variance(values) < 0.85 * _variance(row.per_deal_scores)

