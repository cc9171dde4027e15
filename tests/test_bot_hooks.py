"""The bot base class and the one way hosts drive a bot (agents/base.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tavernzoo.agents import BotBase, as_bot, builtin_bots, load_bot
from tavernzoo.agents.base import HookedBot
from tavernzoo.envs import games, get_game
from tavernzoo.eval.loop import play_game
from tavernzoo.eval.match import make_env

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ["eval/loop.py", "eval/guard.py", "eval/runner.py", "eval/match.py", "eval/schedule.py", "train/evaluate.py",
         "train/expert.py", "train/labelling.py", "agents/infoset.py", "eval/bot_server.py"]


@pytest.mark.parametrize("name", sorted(games()))
def test_every_built_in_bot_is_a_bot_base(name):
    from tavernzoo.agents.onnx_bot import read_manifest, zoo_bots

    game = get_game(name)
    zoo = zoo_bots()
    for spec in [*builtin_bots(game), "mcts:4", *([f"zoo:{name}"] if name in zoo else [])]:
        # a zoo bot plays the options it was trained on
        config = read_manifest(zoo[name])["provenance"].get("game_config") if spec.startswith("zoo:") else None
        bot = load_bot(spec, game, config, seed=1)
        assert isinstance(bot, BotBase), spec
        assert as_bot(bot) is bot


class Recorder(BotBase):
    """Records every hook call, in order."""

    name = "recorder"
    wants_view = True

    def __init__(self):
        self.calls: list[tuple] = []

    def begin_game(self, seat, seed=None):
        self.calls.append(("begin_game", seat, seed))

    def observe_view(self, view):
        self.calls.append(("observe_view",))

    def act(self, observation):
        self.calls.append(("act",))
        return int(observation["action_mask"].nonzero()[0][0])


def test_the_game_loop_calls_begin_game_one_way_and_feeds_views():
    game = get_game("tiny_minotaur")
    bots = [Recorder(), Recorder()]
    play_game(make_env(game), bots, seed=3)
    for seat, bot in enumerate(bots):
        assert bot.calls[0] == ("begin_game", seat, None)
        acts = [i for i, call in enumerate(bot.calls) if call == ("act",)]
        assert acts and all(bot.calls[i - 1] == ("observe_view",) for i in acts)


class Minimal:
    """A bot written to the protocol alone (act, reset), with a begin_game of the old, one-argument form."""

    name = "minimal"

    def __init__(self):
        self.seats: list[int] = []
        self.resets = 0

    def reset(self):
        self.resets += 1

    def begin_game(self, seat):
        self.seats.append(seat)

    def act(self, observation):
        return int(observation["action_mask"].nonzero()[0][-1])


def test_a_bot_that_is_no_bot_base_is_driven_through_as_bot():
    game = get_game("tiny_minotaur")
    minimal, plain = Minimal(), load_bot("random", game, seed=0)
    returns, record = play_game(make_env(game), [minimal, plain], seed=5)
    assert minimal.seats == [0] and minimal.resets == 0
    hooked = as_bot(minimal)
    assert isinstance(hooked, HookedBot) and hooked.name == "minimal"
    assert not hooked.wants_view and not hooked.wants_information_state
    hooked.game_over(returns, 0)  # defaults where the bot has no hook
    hooked.close()
    with pytest.raises(TypeError):  # a seed is passed on when given; this begin_game takes none
        hooked.begin_game(1, 99)
    assert minimal.seats == [0]


def test_a_hooked_bot_passes_seeds_and_hooks_on():
    calls = []

    class Full:
        name = "full"

        def reset(self):
            calls.append("reset")

        def begin_game(self, seat, seed=None):
            calls.append(("begin", seat, seed))

        def act(self, observation):
            return 0

        def observe_information_state(self, state, seat):
            calls.append("info")

        def game_over(self, returns, seat):
            calls.append(("over", seat))

        def close(self):
            calls.append("close")

    hooked = as_bot(Full())
    assert hooked.wants_information_state and not hooked.wants_view
    hooked.begin_game(2, 7)
    hooked.begin_game(1, None)
    hooked.observe_information_state(None, 1)
    hooked.game_over([1.0, -1.0], 1)
    hooked.close()
    assert calls == [("begin", 2, 7), ("begin", 1, None), "info", ("over", 1), "close"]


def test_the_tournament_guard_hands_each_bot_its_per_game_seed():
    from tavernzoo.eval.guard import Guard

    bot = Recorder()
    guard = Guard(bot, 1, 1234, env=None)
    guard.begin_game(1, None)
    assert bot.calls == [("begin_game", 1, 1234)]


def test_hosts_never_ask_a_bot_which_hooks_it_has():
    # hasattr/getattr on a bot belongs to as_bot alone (agents/base.py); hosts call the hooks.
    found = []
    for relative in HOSTS:
        for node in ast.walk(ast.parse((ROOT / relative).read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("hasattr", "getattr")
                    and node.args and "bot" in ast.unparse(node.args[0]).lower()
                    and ast.unparse(node.args[1]) != "'name'"):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
