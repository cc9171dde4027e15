"""Bot levels (agents/levels.py): ``level:1`` .. ``level:5`` in every game and every host, the careless bot, Tiny
Minotaur's erring oracle.

The ladders' order is a measurement (docs/zoo.md, "Levels"); the short form here checks Tiny Minotaur's two ends on
small decks, ``TAVERNZOO_FULL=1`` each adjacent pair of its real ladder over 1000 games."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tavernzoo.agents import builtin_bots, load_bot
from tavernzoo.agents.levels import LEVEL_NAMES, CarelessBot, level_listing, levels
from tavernzoo.agents.onnx_bot import zoo_bots
from tavernzoo.agents.random_bot import RandomBot
from tavernzoo.agents.spec import BotSpec
from tavernzoo.agents.tiny_minotaur_oracle import ErringOracleBot, OracleBot
from tavernzoo.envs import games, get_game
from tavernzoo.envs.make import make_env
from tavernzoo.eval.bot_server import spec_envs
from tavernzoo.eval.loop import play_game
from tavernzoo.eval.match import play_match

FULL = bool(os.environ.get("TAVERNZOO_FULL"))


@pytest.mark.parametrize("name", sorted(games()))
def test_every_game_has_five_levels_that_load_and_any_server_may_seat(name):
    game = get_game(name)
    ladder = levels(game)
    assert len(ladder) == len(LEVEL_NAMES) == 5
    if name == "tiny_minotaur":  # exact play erring less at each level (agents/tiny_minotaur.py LEVELS)
        shares = [load_bot(spec, game, None, seed=1).blunder for spec in ladder[:-1]]
        assert ladder[-1] == "oracle" and shares[0] == 1.0 and shares == sorted(shares, reverse=True)
        assert len(set(shares)) == len(shares) and shares[-1] > 0.0
    else:
        assert ladder[:3] == ("random", "careless", "heuristic")
    zoo = set(zoo_bots())
    for number, spec in enumerate(ladder, start=1):
        # Nothing a level loads is a program or a file outside the package: `tavernzoo web` seats it unasked.
        assert not BotSpec.parse(spec).local(builtin_bots(game), zoo), spec
        assert not BotSpec.parse(f"level:{number}").local(builtin_bots(game), zoo)
        bot = load_bot(f"level:{number}", game, None, seed=1)
        assert bot.name  # loads for the game's default options
    assert [entry["name"] for entry in level_listing(game)] == list(LEVEL_NAMES)
    assert [entry["bot"] for entry in level_listing(game)] == list(ladder)


def test_a_level_spec_parses_and_formats_back():
    spec = BotSpec.parse("level:3")
    assert (spec.kind, spec.name) == ("level", "3")
    assert spec.format() == "level:3" == str(spec) and BotSpec.parse(spec.format()) == spec


@pytest.mark.parametrize("text", ["level:0", "level:6", "level:", "level:x", "level:²", "level:-1"])
def test_a_level_outside_the_ladder_is_one_error_naming_the_levels(text):
    with pytest.raises(ValueError) as caught:
        load_bot(text, "ministeel")
    message = str(caught.value)
    assert text in message and "level:1 (beginner)" in message and "level:5 (expert)" in message
    assert "\n" not in message


def test_a_level_nested_in_a_search_stands_for_its_bot_but_never_for_a_search():
    load_bot("mcts:5,rollout=level:3", "ministeel", None, seed=1)  # the heuristic
    with pytest.raises(ValueError, match="cannot itself be mcts"):
        load_bot("mcts:5,rollout=level:5", "ministeel", None, seed=1)


def test_careless_plays_the_heuristic_or_a_random_move_by_its_share():
    game = get_game("tiny_minotaur")
    env = make_env(game, game.make_config(), raw=True)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    assert len(legal) > 1
    heuristic = builtin_bots(game)["heuristic"](game.make_config(), 0)
    never = CarelessBot(heuristic, seed=1, share=0.0)
    assert {never.act(observation) for _ in range(20)} == {heuristic.act(observation)}
    always = CarelessBot(heuristic, seed=1, share=1.0)
    assert {always.act(observation) for _ in range(200)} == set(legal)


def test_careless_is_a_built_in_of_every_game_and_plays_the_same_game_from_the_same_seeds():
    for name in games():
        assert "careless" in builtin_bots(name)
    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    env = make_env(game, config)

    def one() -> list:
        bots = [load_bot("careless", game, config, seed=seat) for seat in range(3)]
        return play_game(env, bots, seed=11)[1]["actions"]

    assert one() == one()


def test_the_bot_server_knows_which_games_a_level_plays():
    assert sorted(spec_envs("level:3")) == sorted(game.env_name for game in games().values())
    with pytest.raises(ValueError, match="level:1 \\(beginner\\)"):
        spec_envs("level:9")


def test_the_web_page_lists_the_levels_and_a_level_search_is_shortened_to_the_servers_budget():
    from tavernzoo.web.app import create_app, games_listing

    listing = {entry["name"]: entry for entry in games_listing()}
    assert [level["spec"] for level in listing["ministeel"]["levels"]] == [f"level:{n}" for n in range(1, 6)]
    web = create_app(hosts=("testserver",), max_think=0.2).state.web
    game = get_game("ministeel")
    searched = BotSpec.parse(web.resolve("level:5", game))
    assert searched.kind == "mcts" and searched.option("time") == "0.2" and searched.option("sims") == "2000"
    assert web.resolve("level:3", game) == "heuristic"
    with pytest.raises(ValueError, match="level:1 \\(beginner\\)"):
        web.resolve("level:7", game)


def test_match_takes_levels():
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "wyvern", "--set", "num_players=2",
                             "--bots", "level:1", "level:3", "--games", "4", "--seed", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "level:1" in result.stdout and "level:3" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", "level:9",
                          "random", "--games", "2"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "level:5 (expert)" in bad.stderr, bad.stderr


def test_random_is_level_one():
    assert isinstance(load_bot("level:1", "wyvern", None, seed=0), RandomBot)


# Standard decks at a lower HP: the solver answers these matchups in a blink (as tests/test_tiny_minotaur_solver.py).
SMALL_DUEL = {"starting_hp": 30, "hp_cap": 30, "classes": ["magic", "cloak"]}


def _decisions(config, seed: int, count: int) -> list[dict]:
    """Observations of ``count`` decisions with a choice between moves of different value, from random play."""
    game = get_game("tiny_minotaur")
    env = make_env(game, config, raw=True)
    oracle, chooser = OracleBot(config, 0), RandomBot(None, seed)
    found = []
    env.reset(seed=seed)
    while len(found) < count:
        if not env.agents:
            env.reset(seed=seed + len(found) + 1)
        observation = env.observe(env.agent_selection)
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if len(legal) > 1 and len(set(oracle.values(observation).values())) > 1:
            found.append({key: value.copy() for key, value in observation.items()})
        env.step(chooser.act(observation))
    return found


def test_the_erring_oracle_plays_exact_moves_or_its_worst_by_its_share_and_its_seed():
    config = get_game("tiny_minotaur").make_config(SMALL_DUEL)
    decisions = _decisions(config, seed=5, count=12)
    oracle = OracleBot(config, 0)
    best = [oracle.act(observation) for observation in decisions]
    worst = []
    for observation in decisions:
        values = oracle.values(observation)
        worst.append(min(values, key=lambda action: (values[action], action)))
    assert best != worst
    assert [ErringOracleBot(config, 1, blunder=0.0).act(o) for o in decisions] == best
    assert [ErringOracleBot(config, 1, blunder=1.0).act(o) for o in decisions] == worst
    half = ErringOracleBot(config, 1, blunder=0.5)
    played = [[half.act(o) for o in decisions] for _ in range(20)]
    assert all(move in (b, w) for moves in played for move, b, w in zip(moves, best, worst, strict=True))
    assert any(moves != best for moves in played) and any(moves != worst for moves in played)
    half.begin_game(0, seed=9)
    again = [half.act(o) for o in decisions]
    half.begin_game(0, seed=9)
    assert [half.act(o) for o in decisions] == again  # the game's seed decides which decisions go wrong
    with pytest.raises(ValueError, match="0..1"):
        ErringOracleBot(config, 1, blunder=1.5)


def test_exact_play_beats_the_oracle_that_plays_its_worst_move_by_far():
    """The two ends of Tiny Minotaur's ladder on small decks: about 0.9 at the default HP (docs/zoo.md)."""
    result = play_match("tiny_minotaur", ["oracle", "oracle_errs_100"], games=200, seed=0, config=SMALL_DUEL)
    low, high = result.rows[0].score_ci
    assert low > 0.64, (low, high)


@pytest.mark.skipif(not FULL, reason="1000 games a pair at the default options: TAVERNZOO_FULL=1")
@pytest.mark.parametrize("level", [2, 3, 4, 5])
def test_each_tiny_minotaur_level_beats_the_one_below(level):
    result = play_match("tiny_minotaur", [f"level:{level}", f"level:{level - 1}"], games=1000, seed=0)
    low, high = result.rows[0].score_ci
    assert low > 0.5, (level, low, high)
