"""A bot program that stops reading its stdin never hangs the host: every host's write to a program is
bounded by the move's time limit, and the program forfeits (``timeout``) in match, tournament, bot check
and the web tables (issue 47).

The program (tests/fixtures/deaf_bot.py) answers ``hello`` and never reads again; its pipe holds one page,
so a Wyvern ``act`` request (more than 4 KiB) cannot be written whole. Each test is bounded (a subprocess
time-out, or a thread awaited) so that a host that hangs fails the test instead of the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tavernzoo.agents.external import ExternalBot
from tavernzoo.eval.compliance import _Program
from tavernzoo.web.app import create_app

FIXTURES = Path(__file__).parent / "fixtures"
DEAF = f"{sys.executable} {FIXTURES / 'deaf_bot.py'}"
CLI = [sys.executable, "-m", "tavernzoo.cli"]
BOUND = 240  # seconds; generous for a loaded machine, where each failure takes about 2 s of move time
SAID = "did not read its input within 2 s"
# The command line with a 2 s limit for every cmd: bot, for the commands that have no --move-timeout (match,
# bot): the library's default limit is shortened in the child process.
SHORT_LIMIT_CLI = [sys.executable, "-c", "import sys; from tavernzoo.agents.external import ExternalBot; "
                   "from tavernzoo.cli import main; ExternalBot.move_timeout = 2; sys.exit(main(sys.argv[1:]))"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the fixture fills its pipe with Linux's F_SETPIPE_SZ")


def bounded(function, seconds: float = BOUND):
    """``function()``'s result, or a failed test if it has not returned within ``seconds`` (it is left
    running on a daemon thread: the hang under test must not hang the suite)."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still blocked after {seconds} s: the host hangs on a program that stopped reading")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("value")


def test_a_match_fails_with_one_error_line_naming_the_deaf_program():
    result = subprocess.run([*SHORT_LIMIT_CLI, "match", "wyvern", "--set", "num_players=2", "--bots",
                             f"cmd:{DEAF}", "random", "--games", "2", "--no-progress"],
                            capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 1, result.stderr
    assert "error: an external bot failed (timeout)" in result.stderr and SAID in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_tournament_records_the_forfeits_and_goes_on(tmp_path):
    out = tmp_path / "t"
    result = subprocess.run([*CLI, "tournament", "wyvern", "--set", "num_players=2", "--bots", f"cmd:{DEAF}",
                             "random", "--games", "4", "--move-timeout", "2", "--workers", "1", "--out", str(out),
                             "--no-progress", "--no-plot"], capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(lines) == 4  # every game played: one forfeit each, not a stop
    for line in lines:
        deaf = line["entries"].index(0)
        assert line["forfeit"]["seat"] == deaf and line["forfeit"]["kind"] == "timeout", line["forfeit"]
        assert SAID in line["forfeit"]["reason"]
    results = json.loads((out / "results.json").read_text())
    assert len(results["forfeits"]) == 4


def test_bot_check_prints_a_fail_line_instead_of_hanging():
    result = subprocess.run([*CLI, "bot", "check", DEAF, "--game", "wyvern", "--games", "1", "--move-timeout", "2"],
                            capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 1, result.stderr
    words = " ".join(result.stdout.split())  # the report wraps at the terminal's width
    failed = words.split("FAIL wyvern_v1 game 1 (seat 0): ")
    assert len(failed) == 2 and failed[1].startswith("timeout: ") and SAID in failed[1], result.stdout


def test_the_checkers_own_requests_are_bounded_too():
    """``bot check``'s handshake and error stages write to the program themselves (not through ExternalBot): a
    request the program does not take fails in time, and the program is stopped (a half-written line would
    run into the next request)."""
    program = _Program(DEAF.split())
    try:
        hello = json.dumps({"type": "hello", "protocol": 1, "game": "wyvern", "env": "wyvern_v1", "config": {}})
        reply, problem = bounded(lambda: program.ask(hello, 30))
        assert reply is not None and reply["type"] == "hello", problem
        started = time.monotonic()
        reply, problem = bounded(lambda: program.ask(json.dumps({"type": "dance", "pad": "x" * 100_000}), 2))
        assert reply is None and "the program did not read its input within 2 s" in problem
        assert time.monotonic() - started >= 1.5  # the limit was waited out, not skipped
        assert program.process.poll() is not None
        reply, problem = program.ask(json.dumps({"type": "quit"}), 2)
        assert reply is None and "did not read its input" in problem
    finally:
        program.stop()


def test_a_web_table_shows_the_forfeit(monkeypatch):
    monkeypatch.setattr(ExternalBot, "move_timeout", 2.0)
    with TestClient(create_app(hosts=("testserver",), allow_local=True)) as client:
        response = client.post("/api/tables", json={"game": "wyvern", "config": {"num_players": 3},
                                                    "seats": [f"cmd:{DEAF}", "random", "random"], "seed": 3})
        assert response.status_code == 201, response.text
        table = response.json()

        def over() -> dict:
            while (summary := client.get(f"/api/tables/{table['id']}").json())["status"] != "over":
                time.sleep(0.05)
            return summary

        forfeit = bounded(over)["result"]["forfeit"]
    assert forfeit["seat"] == 0 and forfeit["kind"] == "timeout" and SAID in forfeit["reason"], forfeit


def _wyvern_requests() -> list[dict]:
    """hello, new_game and a Wyvern act (larger than the deaf program's pipe) for a served bot."""
    import numpy as np

    from tavernzoo.envs import get_game
    from tavernzoo.envs.make import make_env

    game = get_game("wyvern")
    config = game.make_config({"num_players": 2})
    env = make_env(game, config)
    env.reset(seed=1)
    agent = env.agent_selection
    seat, observation = env.possible_agents.index(agent), env.observe(agent)
    mask = [int(v) for v in observation["action_mask"]]
    names = game.action_names(config)
    vector = np.asarray(observation["observation"], dtype=float).tolist()
    return [{"type": "hello", "game": "wyvern", "config": {"num_players": 2}},
            {"type": "new_game", "seat": seat, "seed": 1},
            {"type": "act", "seat": seat, "observation": vector, "action_mask": mask,
             "legal_actions": [names[i] for i in np.flatnonzero(mask)]}]


def test_a_served_program_fails_with_one_error_line():
    """``tavernzoo bot cmd:...`` (serve's stdio form) passes an ``act`` on to the program, which takes none of it."""
    requests = _wyvern_requests()
    result = subprocess.run([*SHORT_LIMIT_CLI, "bot", f"cmd:{DEAF}"], capture_output=True, text=True,
                            input="".join(json.dumps(request) + "\n" for request in requests), timeout=BOUND)
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [reply["type"] for reply in replies] == ["hello", "ok"], result.stdout
    assert result.returncode == 1 and "error: an external bot failed (timeout)" in result.stderr, result.stderr
    assert SAID in result.stderr and "Traceback" not in result.stderr


def test_a_program_served_over_http_answers_bot_failed(monkeypatch):
    """``tavernzoo serve --bot cmd:...``: the program's failure is the client's answer (502, ``bot_failed``,
    the reason), not a bare 500; the server goes on."""
    from starlette.testclient import TestClient

    from tavernzoo.agents.external import ExternalBot
    from tavernzoo.web.app import create_app

    monkeypatch.setattr(ExternalBot, "move_timeout", 2.0)
    hello, new_game, act = _wyvern_requests()

    def play(client):
        assert client.post("/", json={**hello, "session": "a"}).status_code == 200
        assert client.post("/", json={**new_game, "session": "a"}).status_code == 200
        return client.post("/", json={**act, "session": "a"})

    with TestClient(create_app(bot=f"cmd:{DEAF}", web=False, hosts=("testserver",)),
                    raise_server_exceptions=False) as client:
        reply = bounded(lambda: play(client))
        assert reply.status_code == 502, reply.text
        body = reply.json()
        assert body["type"] == "error" and body["code"] == "bot_failed" and "(timeout)" in body["error"], body
        assert SAID in body["error"]
        assert client.post("/", json={**new_game, "session": "a"}).status_code == 200  # restarted, serving on


def test_a_served_programs_session_dropped_or_the_server_stopped_lets_the_program_go(monkeypatch, tmp_path):
    """``tavernzoo serve --bot cmd:...`` keeps the newest sessions: a dropped one's program is told to quit,
    and so is every program when the server stops (none is left running for the garbage collector)."""
    from starlette.testclient import TestClient

    import tavernzoo.eval.bot_server as bot_server
    from tavernzoo.web.app import create_app

    monkeypatch.setattr(bot_server, "MAX_SESSIONS", 2)
    log = tmp_path / "heard.log"
    spec = f"cmd:{sys.executable} {FIXTURES / 'protocol_random_bot.py'} --log {log}"
    hello = {"type": "hello", "game": "tiny_minotaur"}
    with TestClient(create_app(bot=spec, web=False, hosts=("testserver",))) as client:
        for key in ("a", "b", "c"):  # the third drops the first; new_game starts each session's program
            for request in (hello, {"type": "new_game", "seat": 0, "seed": 1}):
                assert client.post("/", json={**request, "session": key}).status_code == 200
        assert log.read_text().split().count("hello") == 3
        assert log.read_text().split().count("quit") == 1
    assert log.read_text().split().count("quit") == 3  # the other two went with the server
