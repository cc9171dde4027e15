"""The bot protocol (docs/bot-protocol.md): every reply and error, over a subprocess's stdio and over HTTP."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.policy import MLPPolicy
from tavernzoo.envs import get_game
from tavernzoo.eval.bot_server import MAX_REQUEST, BotSession
from tavernzoo.eval.match import make_env

TM = get_game("tiny_minotaur")

# The installed command, as a user runs it (main() turns a ValueError into exit status 2).
CLI = ["-m", "tavernzoo.cli"]


@pytest.fixture(scope="module")
def onnx_bot(tmp_path_factory):
    """An untrained tiny_minotaur bot exported to ONNX (the protocol does not care how good it is)."""
    pytest.importorskip("onnx")
    from tavernzoo.agents.export import export

    folder = tmp_path_factory.mktemp("bot")
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.5, (16, 65)).astype(np.float32), rng.normal(0, 0.5, (8, 16)).astype(np.float32)]
    policy = MLPPolicy(weights, [np.zeros(16, np.float32), np.zeros(8, np.float32)], "tanh",
                       {"game": TM.name, "env": TM.env_name, "game_config": None})
    policy.save(folder / "checkpoint")
    return str(export(folder / "checkpoint", folder / "bot.onnx")[0])


def first_decision(seed=0):
    """The env at the first decision of a tiny_minotaur game and the act request for it."""
    env = make_env(TM)
    env.reset(seed=seed)
    agent = env.agent_selection
    return env, act_request(env, agent)


def act_request(env, agent):
    observation = env.observe(agent)
    return {"type": "act", "seat": env.possible_agents.index(agent),
            "observation": observation["observation"].tolist(), "action_mask": observation["action_mask"].tolist(),
            "legal_actions": env.unwrapped.legal_action_names(agent), "view": env.unwrapped.view(agent)}


HELLO = {"type": "hello", "protocol": 1, "game": "tiny_minotaur", "env": "tiny_minotaur_v1", "config": {}}


def test_a_session_answers_every_request_as_the_protocol_says(onnx_bot):
    session = BotSession(onnx_bot)
    _, act = first_decision()
    assert session.handle({"type": "act"})["code"] == "illegal_state"  # before hello
    hello = session.handle(HELLO)
    assert hello == {"type": "hello", "protocol": 1, "name": "onnx:bot.onnx", "games": ["tiny_minotaur_v1"]}
    assert session.handle(act)["code"] == "illegal_state"  # before new_game
    assert session.handle({"type": "new_game", "seat": 0, "seed": 5}) == {"type": "ok"}
    seat = act["seat"]
    session.handle({"type": "new_game", "seat": seat, "seed": 5})
    reply = session.handle(act)
    assert reply["type"] == "action" and reply["action"] in act["legal_actions"]
    assert TM.action_names(TM.make_config())[reply["index"]] == reply["action"]
    expected = load_bot(onnx_bot, TM).act({"observation": np.array(act["observation"], np.float32),
                                            "action_mask": np.array(act["action_mask"], np.int8)})
    assert reply["index"] == expected
    # Either form of the legal actions is enough on its own.
    assert session.handle({**act, "action_mask": None})["index"] == expected
    assert session.handle({**act, "legal_actions": None})["index"] == expected
    assert session.handle({"type": "game_over", "returns": [1.0, -1.0], "seat": seat}) == {"type": "ok"}
    assert session.handle(act)["code"] == "illegal_state"  # the game is over
    assert session.handle({"type": "quit"}) == {"type": "ok"} and session.finished


@pytest.mark.parametrize("change,code,words", [
    ({"type": "dance"}, "bad_request", "unknown request type 'dance'; valid: hello, new_game"),
    ({"observation": [0.5] * 64}, "bad_request", "list of 65 finite numbers"),
    ({"observation": [float("nan")] * 65}, "bad_request", "finite numbers"),
    ({"observation": [2.0] * 65}, "illegal_state", "lie in \\[0, 1\\]"),
    ({"action_mask": [0] * 8, "legal_actions": None}, "illegal_state", "no legal action"),
    ({"action_mask": [1] * 8}, "illegal_state", "disagree"),
    ({"action_mask": None, "legal_actions": ["fly"]}, "bad_request", "unknown action name\\(s\\) fly"),
    ({"action_mask": None, "legal_actions": None}, "bad_request", "needs 'action_mask' or 'legal_actions'"),
    ({"seat": "the other seat"}, "illegal_state", "this bot plays seat [01] in this game, not [01]"),
    ({"game": "minefield"}, "wrong_game", "plays tiny_minotaur, not 'minefield'"),
])
def test_bad_act_requests_get_named_errors_and_the_session_goes_on(onnx_bot, change, code, words):
    session = BotSession(onnx_bot)
    session.handle(HELLO)
    _, act = first_decision()
    session.handle({"type": "new_game", "seat": act["seat"]})
    bad = {**act, **change}
    if "seat" in change:
        bad["seat"] = 1 - act["seat"]
    reply = session.handle(bad)
    assert reply["type"] == "error" and reply["code"] == code
    assert re.search(words, reply["error"]), reply
    session.handle({"type": "new_game", "seat": act["seat"]})
    assert session.handle(act)["type"] == "action"


@pytest.mark.parametrize("hello,code,words", [
    ({"game": "minefield", "env": None}, "wrong_game", "plays tiny_minotaur_v1, not minefield_v0"),
    ({"env": "tiny_minotaur_v7", "game": None}, "wrong_game", "tiny_minotaur_v7 is not an env"),
    ({"game": "chess", "env": None}, "wrong_game", "unknown game 'chess'"),
    ({"config": {"starting_hp": -3}}, "wrong_game", "starting_hp"),
    ({"config": {"colour": "red"}}, "wrong_game", "unknown option\\(s\\) colour"),
    ({"protocol": 2}, "bad_request", "speaks protocol 1, not 2"),
    ({"game": None, "env": None}, "bad_request", "must name the 'game' or the 'env'"),
])
def test_a_hello_the_bot_cannot_serve_is_refused(onnx_bot, hello, code, words):
    session = BotSession(onnx_bot)
    reply = session.handle({**HELLO, **hello})
    assert reply["code"] == code and re.search(words, reply["error"]), reply
    assert session.handle(HELLO)["type"] == "hello"


def test_a_builtin_spec_plays_whichever_game_the_hello_names():
    session = BotSession("heuristic")
    assert set(session.hello_reply()["games"]) >= {"tiny_minotaur_v1", "minefield_v0", "ministeel_v2", "ministeel_v1",
                                                   "wyvern_v1"}
    assert session.handle({"type": "hello", "protocol": 1, "game": "ministeel"})["games"] == ["ministeel_v2"]
    v1 = BotSession("heuristic").handle({"type": "hello", "protocol": 1, "env": "ministeel_v1"})
    assert v1["games"] == ["ministeel_v1"]  # an earlier version the game still plays
    assert session.handle_line(b"{not json")["code"] == "bad_json"
    assert session.handle_line(b"[1, 2]")["code"] == "bad_request"
    assert session.handle_line(b"[" * 100_000)["code"] == "bad_json"  # too deep for the parser, not a crash
    assert session.handle_line(b" " * (MAX_REQUEST + 1) + b"{}")["code"] == "oversize"
    with pytest.raises(ValueError, match="unknown bot spec 'wizard'"):
        BotSession("wizard")


def read_reply(process):
    line = process.stdout.readline()
    assert line, process.stderr.read()
    return json.loads(line)


def test_a_whole_game_and_bad_input_through_the_stdio_subprocess(onnx_bot):
    process = subprocess.Popen([sys.executable, *CLI, "bot", onnx_bot], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def ask(request):
            process.stdin.write((request if isinstance(request, str) else json.dumps(request)) + "\n")
            process.stdin.flush()
            return read_reply(process)

        assert ask("hello there")["code"] == "bad_json"
        assert ask(HELLO)["type"] == "hello"
        assert ask({**HELLO, "game": "wyvern", "env": None})["code"] == "wrong_game"
        assert ask("x" * (MAX_REQUEST + 10))["code"] == "oversize"
        env = make_env(TM)
        env.reset(seed=11)
        assert ask(HELLO)["type"] == "hello"
        assert ask({"type": "new_game", "seat": 0, "seed": 11}) == {"type": "ok"}
        random_bot = load_bot("random", TM, seed=0)
        decisions = 0
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if agent == "player_0":
                reply = ask(act_request(env, agent))
                assert reply["action"] in env.unwrapped.legal_action_names(agent)
                action = reply["index"]
                decisions += 1
                if decisions == 3:
                    assert ask('{"type": "act", "observation": 7}')["code"] == "bad_request"
            else:
                action = random_bot.act(observation)
            env.step(action)
        assert decisions > 3
        assert ask({"type": "game_over", "returns": [0.0, 0.0], "seat": 0}) == {"type": "ok"}
        assert ask({"type": "quit"}) == {"type": "ok"}
        assert process.wait(timeout=30) == 0
        assert "bad_json" in process.stderr.read()
    finally:
        process.kill()
        process.wait()


def test_the_stdio_command_refuses_an_unknown_spec_at_once():
    result = subprocess.run([sys.executable, *CLI, "bot", "no-such-bot"], capture_output=True, text=True,
                            input="", timeout=120)
    assert result.returncode == 2 and "unknown bot spec 'no-such-bot'" in result.stderr


def post(url, body, headers=None):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def http_server(onnx_bot):
    from tavernzoo.web.app import create_app
    from tavernzoo.web.server import ServerThread

    with ServerThread(create_app(bot=onnx_bot, web=False)) as url:
        yield url


def test_an_http_round_trip_on_loopback(http_server, onnx_bot):
    with urllib.request.urlopen(http_server, timeout=30) as response:
        assert json.loads(response.read()) == {"type": "hello", "protocol": 1, "name": onnx_bot,
                                               "games": ["tiny_minotaur_v1"]}
    assert post(http_server, HELLO)[1]["type"] == "hello"
    _, act = first_decision()
    assert post(http_server, {"type": "new_game", "seat": act["seat"], "seed": 1}) == (200, {"type": "ok"})
    status, reply = post(http_server, act)
    assert status == 200 and reply["type"] == "action" and reply["action"] in act["legal_actions"]
    # Errors come back as error objects with a 4xx status, and the server goes on.
    status, reply = post(http_server, b"{oops")
    assert status == 400 and reply["code"] == "bad_json"
    assert post(http_server, {"type": "act", "session": "other"})[1]["code"] == "illegal_state"  # its own session
    status, reply = post(http_server, b" " * (MAX_REQUEST + 1))
    assert status == 413 and reply["code"] == "oversize"
    assert post(http_server, {**act, "game": "wyvern"})[1]["code"] == "wrong_game"
    assert post(http_server, act)[1]["type"] == "action"
    assert post(http_server, {"type": "quit"}) == (200, {"type": "ok"})
    assert post(http_server, act)[1]["code"] == "illegal_state"  # a new session: hello first
    assert post(http_server, HELLO)[1]["type"] == "hello"
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(http_server + "elsewhere", timeout=30)


def test_the_serve_command_binds_loopback_and_answers():
    process = subprocess.Popen([sys.executable, *CLI, "serve", "--bot", "heuristic", "--port", "0", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert banner.startswith("serving heuristic"), process.stderr.read()
        url = banner.split(" on ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        assert post(url, {"type": "hello", "protocol": 1, "game": "minefield"})[1]["games"] == ["minefield_v0"]
    finally:
        process.terminate()
        process.wait(timeout=30)
