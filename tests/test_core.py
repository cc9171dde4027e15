"""The shared contract: Chance, configuration helpers, the registry and the statistics."""

from __future__ import annotations

import math

import pytest

from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance, ReplayError, check_range, make_config
from tavernzoo.envs.tiny_minotaur.rules import Config
from tavernzoo.eval.stats import mean_interval, wilson_interval


def test_chance_logs_every_outcome_and_a_script_replays_them():
    chance = Chance(42)
    draws = [chance.roll(20) for _ in range(50)] + [chance.below(7) for _ in range(20)]
    items = list(range(10))
    chance.shuffle(items)
    assert all(1 <= d <= 20 for d in draws[:50]) and all(0 <= d < 7 for d in draws[50:])
    assert sorted(items) == list(range(10))
    again = Chance.scripted(chance.outcomes)
    assert [again.roll(20) for _ in range(50)] + [again.below(7) for _ in range(20)] == draws
    replayed = list(range(10))
    again.shuffle(replayed)
    assert replayed == items and again.exhausted


def test_same_seed_same_outcomes_other_seed_other_outcomes():
    a, b, c = Chance(7), Chance(7), Chance(8)
    assert [a.roll(100) for _ in range(30)] == [b.roll(100) for _ in range(30)]
    assert [Chance(7).roll(100) for _ in range(30)] != [c.roll(100) for _ in range(30)]


def test_dice_are_uniform_enough():
    chance = Chance(1)
    counts = [0] * 20
    for _ in range(40_000):
        counts[chance.roll(20) - 1] += 1
    # each face's count is Binomial(40000, 1/20): mean 2000, sd ~43.6; 5 sd either side
    assert all(1780 < n < 2220 for n in counts), counts


def test_scripted_chance_refuses_a_different_die_and_running_out():
    chance = Chance.dice((20, 4))
    with pytest.raises(ReplayError, match="out of 20"):
        chance.roll(6)
    spent = Chance.dice((6, 2))
    assert spent.roll(6) == 2
    with pytest.raises(ReplayError, match="after the record's last one"):
        spent.roll(6)
    with pytest.raises(ReplayError, match="outside"):
        Chance.scripted([(6, 6)])


def test_make_config_rejects_unknown_options_and_converts_lists():
    config = make_config(Config, {"classes": ["sword", "magic"]})
    assert config.classes == ("sword", "magic")
    with pytest.raises(ValueError, match="unknown option.*colour.*valid: num_players"):
        make_config(Config, {"colour": "red"})
    with pytest.raises(ValueError, match="between 1 and 3"):
        check_range("x", 4, 1, 3)
    with pytest.raises(ValueError, match="must be a number"):
        check_range("x", True, 0)


def test_registry_finds_games_by_name_and_env_name():
    assert get_game("tiny_minotaur") is get_game("tiny_minotaur_v1")
    with pytest.raises(ValueError, match="unknown game 'chess'; valid: .*tiny_minotaur"):
        get_game("chess")


def test_wilson_interval_matches_hand_computed_values():
    # 50/100 at 95%: centre 0.5, half-width 1.96*sqrt(0.25/100 + 1.96^2/40000)/(1+1.96^2/100)
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.2775, abs=1e-4)


def test_mean_interval_matches_hand_computed_values():
    mean, low, high = mean_interval([0.0, 1.0, 0.0, 1.0])
    # sd = sqrt(1/3), half = 1.959964 * sqrt(1/3) / 2
    assert mean == 0.5 and high - mean == pytest.approx(1.959964 * math.sqrt(1 / 3) / 2, rel=1e-5)
    assert mean_interval([0.3])[1] == -math.inf


def test_an_unpickled_game_is_the_registrys_own_instance():
    import pickle
    from dataclasses import replace

    from tavernzoo.envs import games

    for game in games().values():
        assert pickle.loads(pickle.dumps(game)) is game
    # A game that is not the registered one (another title) arrives as itself, equal but its own.
    other = replace(next(iter(games().values())), title="a house variant")
    copy = pickle.loads(pickle.dumps(other))
    assert copy == other and copy is not other
