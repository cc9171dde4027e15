"""Games declare their own traits and search hooks; the consumers keep no tables of game names."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tavernzoo.agents.mcts import Options, parse_options
from tavernzoo.agents.search_hooks import NONE, search_hooks
from tavernzoo.envs import Chance, games
from tavernzoo.eval.play import PUBLIC_GAMES

ROOT = Path(__file__).resolve().parents[1]


def test_a_game_is_public_exactly_when_its_rules_hide_nothing():
    for name, game in games().items():
        assert game.public == (not getattr(game.rules, "HIDDEN_FIELDS", ())), name
    assert PUBLIC_GAMES == {name for name, game in games().items() if game.public}
    assert PUBLIC_GAMES == {"tiny_minotaur", "minefield"}  # the two games without hidden cards


@pytest.mark.parametrize("name", sorted(games()))
def test_each_game_declares_its_search_defaults_and_they_parse(name):
    hooks = search_hooks(name)
    assert hooks is not NONE and hooks.defaults
    options = parse_options("mcts", name)
    assert isinstance(options, Options)
    assert {key: getattr(options, key) for key in hooks.defaults} == dict(hooks.defaults)


@pytest.mark.parametrize("name", sorted(games()))
def test_a_declared_value_estimate_gives_each_seat_a_value_in_range(name):
    game = games()[name]
    value = search_hooks(name).value
    if value is None:
        pytest.skip(f"{name} declares no value estimate (its rollouts play to the end)")
    config = game.make_config()
    rng = random.Random(0)
    state = game.rules.new_game(config, Chance(1))
    for _ in range(30):
        if game.rules.is_terminal(state):
            break
        values = value(state)
        assert len(values) == game.rules.num_seats(config) and all(-1.0 <= v <= 1.0 for v in values)
        game.rules.apply(state, rng.choice(game.rules.legal_actions(state)))


def test_no_search_module_keeps_a_table_of_game_names():
    for relative in ("agents/mcts.py", "agents/mcts_closed.py", "eval/play.py"):
        text = (ROOT / relative).read_text()
        quoted = [name for name in games() if f'"{name}"' in text or f"'{name}'" in text]
        assert quoted == [], f"{relative} names games: {quoted}"


def test_an_unknown_game_declares_nothing():
    assert search_hooks("") is NONE and search_hooks("no_such_game") is NONE
