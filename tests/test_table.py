"""The table engine (eval/table.py): one game, the one owner of a bot's per-game hooks.

A recording bot (in Python, and a protocol program that logs every request) shows what a table tells its
seats; the host-conformance tests run the same program through several hosts and compare what it heard.
"""

from __future__ import annotations

import shlex
import sys
import threading
import time
from pathlib import Path

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import BotBase, legal_actions
from tavernzoo.envs import get_game
from tavernzoo.envs.core import IllegalActionError
from tavernzoo.envs.make import make_env
from tavernzoo.eval.loop import play_game
from tavernzoo.eval.match import play_match
from tavernzoo.eval.play import TerminalGame
from tavernzoo.eval.table import Table
from tavernzoo.eval.tournament import make_settings, run_tournament

FIXTURES = Path(__file__).parent / "fixtures"


class Recorder(BotBase):
    """Plays its first legal action (or ``illegal`` at its ``fail_at``-th move) and notes every hook."""

    def __init__(self, heard: list, fail_at: int | None = None, fail_with: str = "raise"):
        self.heard, self.fail_at, self.fail_with, self.moves = heard, fail_at, fail_with, 0

    def begin_game(self, seat, seed=None):
        self.heard.append(("begin_game", seat, seed))

    def act(self, observation):
        self.moves += 1
        if self.moves == self.fail_at:
            if self.fail_with == "raise":
                raise RuntimeError("the recorder fails on purpose")
            return -1
        self.heard.append(("act",))
        return legal_actions(observation, "recorder")[0]

    def game_over(self, returns, seat):
        self.heard.append(("game_over", seat, returns))

    def game_stats(self):
        return {"moves": self.moves}


def _env(name="tiny_minotaur"):
    game = get_game(name)
    return game, make_env(game, game.make_config(), raw=True)


@pytest.mark.parametrize("name", ["tiny_minotaur", "ministeel", "minefield", "wyvern"])
def test_a_table_tells_every_seat_the_same_story_and_stepping_equals_playing(name):
    game, env = _env(name)
    seats = len(env.possible_agents)
    heard = [[] for _ in range(seats)]
    played = Table(env, [Recorder(heard[seat]) for seat in range(seats)], 7, bot_seeds=list(range(seats))).play()
    for seat in range(seats):
        assert heard[seat][0] == ("begin_game", seat, seat)
        assert heard[seat][-1] == ("game_over", seat, played.returns)
        assert all(item == ("act",) for item in heard[seat][1:-1])
    assert played.forfeit is None and played.record["bot_stats"][0]["moves"] >= 1
    # Stepped by hand, the same game: the same returns and record.
    table = Table(env, [Recorder([]) for _ in range(seats)], 7)
    table.begin()
    moves = 0
    while (seat := table.to_move()) is not None:
        assert table.to_move() == seat  # asking again changes nothing (rewards are counted once)
        assert table.step()
        moves += 1
    assert not table.step()
    stepped = table.finish()
    assert stepped.returns == played.returns and stepped.record["actions"] == played.record["actions"]
    assert moves > 0
    assert play_game(env, [Recorder([]) for _ in range(seats)], 7) == (played.returns, played.record)


@pytest.mark.parametrize("fail_with", ["raise", "illegal"])
def test_with_forfeits_a_failing_seat_forfeits_and_every_seat_still_hears_game_over(fail_with):
    _, env = _env()
    heard = [[], []]
    bots = [Recorder(heard[0]), Recorder(heard[1], fail_at=2, fail_with=fail_with)]
    result = Table(env, bots, 3, forfeits=True).play()
    assert result.returns is None and result.forfeit is not None and result.forfeit.seat == 1
    assert result.forfeit.kind == ("error" if fail_with == "raise" else "illegal")
    assert heard[0][-1] == ("game_over", 0, None) and heard[1][-1] == ("game_over", 1, None)
    assert result.record["bot_stats"][1]["moves"] == 2  # counted for a forfeited game too
    # Without forfeits (a match) the failure is the host's to report.
    with pytest.raises(RuntimeError, match="on purpose"):
        Table(env, [Recorder([]), Recorder([], fail_at=2)], 3).play()


def test_finish_before_the_end_is_refused():
    _, env = _env()
    table = Table(env, [Recorder([]), Recorder([])], 3)
    table.begin()
    with pytest.raises(RuntimeError, match="step\\(\\) until it returns False"):
        table.finish()


# --- host conformance: one program, the same messages under every host ---------------------------------


def _spec(log: Path) -> str:
    return f"cmd:{sys.executable} {FIXTURES / 'protocol_random_bot.py'} --log {log}"


def _games(log: Path) -> list[list[str]]:
    """The log as games: the requests from each ``new_game`` on, runs of ``act`` counted as one."""
    games: list[list[str]] = []
    for kind in log.read_text().split():
        if kind == "new_game":
            games.append([])
        if kind in ("hello", "quit"):  # the program's start and end, not a game's
            continue
        if games and not (kind == "act" and games[-1][-1:] == ["act"]):
            games[-1].append(kind)
    return games


def _play_at_the_web(spec: str, games: int, log: Path) -> None:
    """``games`` games at the web page (a person's seat played by the first legal action), as the page does."""
    from starlette.testclient import TestClient

    from tavernzoo.web.app import create_app

    def settled(table_id):
        while (summary := client.get(f"/api/tables/{table_id}").json())["status"] not in ("your_turn", "over"):
            time.sleep(0.01)
        return summary

    with TestClient(create_app(hosts=("testserver",), allow_local=True)) as client:
        for seed in range(games):
            table = client.post("/api/tables", json={"game": "tiny_minotaur", "config": {}, "seats": ["human", spec],
                                                     "seed": seed}).json()
            while (summary := settled(table["id"]))["status"] != "over":
                last = summary["steps"] - 2  # the frames after this step: the newest one
                frame = client.get(f"/api/tables/{table['id']}/frames", params={"since": last}).json()["frames"][-1]
                client.post(f"/api/tables/{table['id']}/act", json={"action": frame["view"]["legal_actions"][0]})
    deadline = time.monotonic() + 30
    while log.read_text().split().count("quit") < games and time.monotonic() < deadline:
        time.sleep(0.05)  # a finished table closes its bots after it says "over"


def _play_in_the_terminal(spec: str, games: int) -> None:
    for seed in range(games):
        game = TerminalGame("tiny_minotaur", [spec], seat=0, seed=seed, read=lambda _: "1", write=lambda _: None)
        game.play()


HOSTS = {  # each plays 4 games of Tiny Minotaur with the program in one seat: (spec, its log, a folder)
    "match": lambda spec, log, folder: play_match("tiny_minotaur", [spec, "random"], 4, seed=1),
    "tournament": lambda spec, log, folder: run_tournament(make_settings("tiny_minotaur", [spec, "random"], 4),
                                                           folder / "t", workers=1),
    "web": lambda spec, log, folder: _play_at_the_web(spec, 4, log),
    "terminal": lambda spec, log, folder: _play_in_the_terminal(spec, 4),
    # A match against the bot server (`tavernzoo bot SPEC` on stdio) serving the program: what it relays.
    "bot-server": lambda spec, log, folder: play_match(
        "tiny_minotaur", [f"cmd:{sys.executable} -m tavernzoo.cli bot {shlex.quote(spec)}", "random"], 4, seed=1),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_program_hears_the_same_messages_under_every_host(host, tmp_path):
    log = tmp_path / f"{host}.log"
    HOSTS[host](_spec(log), log, tmp_path)
    games = _games(log)
    assert len(games) == 4 and all(game == ["new_game", "act", "game_over"] for game in games), games
    text = log.read_text().split()
    assert text[0] == "hello" and text[-1] == "quit", (text[:3], text[-3:])


def test_only_a_bot_that_may_read_the_game_seed_gets_one_derived():
    """eval/table.py ``takes_game_seed``: the built-in bots keep BotBase's begin_game, which ignores its seed, so
    the hosts skip deriving one for them; a program, a levelled bot and an object with its own begin_game get
    theirs."""
    from tavernzoo.agents.base import as_bot
    from tavernzoo.agents.external import ExternalBot
    from tavernzoo.agents.levels import CarelessBot
    from tavernzoo.eval.table import takes_game_seed

    game = get_game("tiny_minotaur")
    config = game.make_config()
    for spec in ("random", "heuristic", "oracle", "mcts:10"):
        assert not takes_game_seed(load_bot(spec, game, config, seed=0)), spec

    class OwnSeeds:
        def begin_game(self, seat, seed=None):
            self.seed = seed

        def act(self, observation):
            return legal_actions(observation)[0]

    assert takes_game_seed(as_bot(OwnSeeds()))
    assert takes_game_seed(object.__new__(ExternalBot)) and takes_game_seed(object.__new__(CarelessBot))


def test_a_loaded_bot_runs_through_a_table():
    game, env = _env()
    bots = [load_bot("heuristic", game, game.make_config(), seed=0), load_bot("random", game, game.make_config(), 1)]
    result = Table(env, bots, 11).play()
    assert result.returns is not None and len(result.returns) == 2


# --- a person's seat ------------------------------------------------------------------------------------


def test_a_persons_seat_waits_for_the_hosts_move_and_an_illegal_one_is_refused():
    _, env = _env()
    heard = []
    table = Table(env, [None, Recorder(heard)], 5, bot_seeds=[None, 9])
    table.begin()
    refused = 0
    while (seat := table.to_move()) is not None:
        if seat == 1:
            assert table.step()
            continue
        with pytest.raises(RuntimeError, match="a person's: play their move with step\\(action\\)"):
            table.step()
        legal = env.unwrapped.legal_action_names()
        illegal = next(name for name in env.unwrapped.action_names if name not in legal)
        before = env.unwrapped.record()["actions"]
        for bad in (env.unwrapped.action_names.index(illegal), "attack", -1, 10**6):
            with pytest.raises(IllegalActionError, match="legal now: " + ", ".join(legal)):
                table.step(bad)
            refused += 1
        assert env.unwrapped.record()["actions"] == before  # nothing moved, nothing replaced
        assert table.step(env.unwrapped.action_names.index(legal[0]))
    result = table.finish()
    assert refused > 0 and result.forfeit is None and result.returns is not None
    assert heard[0] == ("begin_game", 1, 9) and heard[-1] == ("game_over", 1, result.returns)
    assert result.record["bot_stats"] == [None, {"moves": sum(item == ("act",) for item in heard)}]


def test_a_person_who_leaves_forfeits_and_the_bots_hear_it():
    _, env = _env()
    heard = []
    table = Table(env, [Recorder(heard), None], 5, forfeits=True)
    table.begin()
    while table.to_move() == 0:
        assert table.step()
    table.resign(1)
    assert table.to_move() is None and not table.step()
    result = table.finish()
    assert result.returns is None and (result.forfeit.seat, result.forfeit.kind) == (1, "left")
    assert heard[-1] == ("game_over", 0, None)
    with pytest.raises(ValueError, match="only a person resigns"):
        table.resign(0)


def test_a_host_may_ask_a_bot_for_its_move_and_play_it_later():
    _, env = _env()
    played = Table(env, [Recorder([]), Recorder([])], 8).play()
    table = Table(env, [Recorder([]), Recorder([])], 8)
    table.begin()
    while (action := table.think()) is not None:  # the web page asks outside its lock, plays inside
        assert table.step(action)
    assert table.finish().record["actions"] == played.record["actions"]


# --- a web or MCP table closed mid-game -----------------------------------------------------------------


class Thinker(Recorder):
    """A Recorder whose first move lasts until its table is closed (a long search), saying when it began."""

    def __init__(self, heard: list):
        super().__init__(heard)
        self.table, self.thinking = None, threading.Event()

    def act(self, observation):
        if self.moves == 0:
            self.thinking.set()
            while not self.table.closed:
                time.sleep(0.005)
        return super().act(observation)

    def close(self):
        self.heard.append(("close",))


@pytest.mark.parametrize("kind", ["web", "mcp"])
def test_a_table_closed_mid_game_waits_for_its_worker_then_tells_the_bots_game_over(kind):
    """Closing waits for the move under way (the table's worker), then every seated bot hears game_over without
    a result, and only then is closed; no bot moves after it heard the game end."""
    from tavernzoo.web.mcp import SeatTable
    from tavernzoo.web.tables import Table as WebTable

    heard = [[], []]
    bots = [Thinker(heard[0]), Recorder(heard[1])]
    bots[1].close = lambda: heard[1].append(("close",))
    game = get_game("minefield")  # seats 0 and 1 choose before the person at seat 2
    table = (WebTable if kind == "web" else SeatTable)(game, {"num_players": 3}, ["a", "b", "human"], 4,
                                                      lambda spec, *_: bots["ab".index(spec)] if spec in ("a", "b")
                                                      else Recorder([]))  # the person's stand-in (web)
    bots[0].table = table
    table.worker = threading.Thread(target=table.start, daemon=True)
    table.worker.start()
    assert bots[0].thinking.wait(60)
    table.close()
    assert not table.worker.is_alive()
    for seat in (0, 1):
        assert heard[seat][0][0] == "begin_game"
        assert heard[seat][-2:] == [("game_over", seat, None), ("close",)], heard[seat]
    table.close()  # a second close tells nothing more
    assert [item for item in heard[0] if item[0] == "game_over"] == [("game_over", 0, None)]
