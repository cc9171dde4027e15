"""Bot levels (agents/levels.py): ``level:1`` .. ``level:5`` in every game and every host, the careless bot."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tavernzoo.agents import builtin_bots, load_bot
from tavernzoo.agents.levels import LEVEL_NAMES, CarelessBot, level_listing, levels
from tavernzoo.agents.onnx_bot import zoo_bots
from tavernzoo.agents.random_bot import RandomBot
from tavernzoo.agents.spec import BotSpec
from tavernzoo.envs import games, get_game
from tavernzoo.envs.make import make_env
from tavernzoo.eval.bot_server import spec_envs
from tavernzoo.eval.loop import play_game


@pytest.mark.parametrize("name", sorted(games()))
def test_every_game_has_five_levels_that_load_and_any_server_may_seat(name):
    game = get_game(name)
    ladder = levels(game)
    assert len(ladder) == len(LEVEL_NAMES) == 5
    assert ladder[0] == "random" and ladder[1] == "careless" and ladder[2] == "heuristic"
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
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", "level:1",
                             "level:3", "--games", "4", "--seed", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "level:1" in result.stdout and "level:3" in result.stdout
    bad = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", "level:9",
                          "random", "--games", "2"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "level:5 (expert)" in bad.stderr, bad.stderr


def test_random_is_level_one():
    assert isinstance(load_bot("level:1", "wyvern", None, seed=0), RandomBot)
