"""The llm: bot against a real OpenAI-compatible server, offline: llama.cpp's own server (tests/llm_server.py,
from the prebuilt ``xllamacpp`` wheel, so no install compiles llama.cpp) serving a tiny random GGUF model the
test writes itself (tests/llm_gguf.py).

One server for the module. Without xllamacpp these tests skip, except under CI=true, where they fail: the
``llm`` extra is part of ``dev``, so CI has it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tavernzoo.eval.match import play_match
from tavernzoo.eval.schedule import make_settings
from tavernzoo.eval.tournament import run_tournament

# Small tables, so that every game ends in a few dozen decisions.
GAMES = [
    ("tiny_minotaur", {"max_turns": 16}),
    ("minefield", {"num_players": 3}),
    ("ministeel", {"num_players": 2, "max_turns": 8}),
    ("wyvern", {"num_players": 2, "max_turns": 4}),
]


def _need_llama_cpp() -> None:
    try:
        import gguf  # noqa: F401
        import xllamacpp  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the llm: server tests: {error} (pip install -e '.[dev]' installs it)")
        pytest.skip(f"xllamacpp is not installed ({error}); pip install 'tavernzoo[llm]'")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _need_llama_cpp()
    from llm_gguf import CONTEXT, write_tiny_gguf

    folder = tmp_path_factory.mktemp("llm")
    started = time.monotonic()
    model = write_tiny_gguf(folder / "tiny.gguf")
    written = time.monotonic() - started
    assert model.stat().st_size < 1 << 20 and written < 5
    port = _free_port()
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "llm_server.py"), "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(CONTEXT), "--threads", "1", "--alias", "tiny"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"the llama.cpp server exited ({process.returncode}): "
                            f"{(folder / 'server.log').read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                    json.load(answer)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the llama.cpp server did not answer within 120 s")
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.mark.parametrize("structured", ["on", "grammar"])
@pytest.mark.parametrize(("name", "config"), GAMES, ids=[name for name, _ in GAMES])
def test_constrained_answers_finish_whole_games_with_legal_moves_only(server, tmp_path, name, config, structured):
    from tavernzoo.envs import get_game

    seats = get_game(name).rules.num_seats(get_game(name).make_config(config))
    spec = f"llm:tiny@{server},structured={structured},max_tokens=96,time=60,temperature=1"
    settings = make_settings(name, [spec] + ["random"] * (seats - 1), seats, config=config, seed=3)
    results = run_tournament(settings, tmp_path / "t")
    assert results["games"] == seats
    assert results["forfeits"] == []
    row = next(row for row in results["leaderboard"] if row["spec"] == spec)
    stats = row["bot_stats"]
    assert stats["games"] == seats and stats["moves"] >= 1
    # A random model also answers full_view now and then (view=changes): a request, never an illegal answer.
    assert stats["requests"] == stats["moves"] + stats["full_views"]
    assert stats["illegal"] == 0 and stats["forfeits"] == 0
    assert stats["tokens_in"] > 100 * stats["moves"] and stats["tokens_out"] >= 4 * stats["moves"]
    for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines():
        game_line = json.loads(line)
        assert game_line["returns"] is not None  # the game ran to its end: no forfeit, no error
        from tavernzoo.envs.records import replay

        replay(game_line["record"])  # every move legal and the record replays to its returns


def test_unconstrained_answers_are_retried_with_the_reason_then_forfeit(server, tmp_path):
    spec = f"llm:tiny@{server},structured=off,max_tokens=12,time=60,temperature=1"
    settings = make_settings("tiny_minotaur", [spec, "random"], 4, config={"max_turns": 30}, seed=5)
    results = run_tournament(settings, tmp_path / "t")
    row = next(row for row in results["leaderboard"] if row["spec"] == spec)
    stats = row["bot_stats"]
    # A random model's free text is (almost surely) never exactly a legal action: each game's first move
    # gets its retry and the game is forfeited.
    assert row["forfeits"] == stats["forfeits"] == results["games"] == 4
    assert stats["requests"] == 2 * stats["moves"] and stats["illegal"] == stats["requests"]
    assert {item["kind"] for item in results["forfeits"]} == {"illegal"}
    assert all("2 answer(s) refused" in item["reason"] for item in results["forfeits"])


def test_a_match_through_the_command_line_prints_the_llm_columns(server, tmp_path):
    spec = f"llm:tiny@{server},structured=grammar,time=60"
    command = [sys.executable, "-m", "tavernzoo.cli", "match", "minefield", "--set", "num_players=2", "--bots",
               spec, "random", "--games", "2", "--no-progress", "--records", str(tmp_path / "r.jsonl")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    for column in ("requests", "illegal", "tokens in/out", "s/move"):
        assert column in done.stdout
    records = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert all(record["bot_stats"][record["seats"].index(spec)]["illegal"] == 0 for record in records)


def test_a_seed_makes_the_llm_seat_reproducible(server):
    spec = f"llm:tiny@{server},structured=on,max_tokens=96,temperature=1,seed=11"
    first = play_match("tiny_minotaur", [spec, "random"], 2, seed=9, config={"max_turns": 20})
    again = play_match("tiny_minotaur", [spec, "random"], 2, seed=9, config={"max_turns": 20})
    assert [row.per_deal_scores for row in first.rows] == [row.per_deal_scores for row in again.rows]
    assert first.rows[0].bot_stats["moves"] == again.rows[0].bot_stats["moves"]


def test_the_server_launcher_names_a_model_it_cannot_load_in_one_line(tmp_path):
    _need_llama_cpp()
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    done = subprocess.run([sys.executable, str(Path(__file__).parent / "llm_server.py"), "--model", str(broken),
                           "--port", str(_free_port())], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"error: cannot serve {broken}" in done.stderr, done.stderr[-2000:]


def test_against_the_real_server_each_prompt_holds_every_event_line_since_the_seats_previous_decision(server):
    # The bar of issue 51 on a real server: a MiniSteel game at the table engine, every prompt's "since" lines
    # compared with the record replayed step by step.
    from test_llm import seat_story, since_sections

    from tavernzoo.agents import load_bot
    from tavernzoo.agents.text_views import bounded_events
    from tavernzoo.envs import get_game
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3, "max_turns": 6})
    llm = load_bot(f"llm:tiny@{server},structured=grammar,time=60", game, config, seed=1)
    prompts = []
    complete = llm.client.complete

    def recording(messages, deadline, extra):
        if not messages[-1]["content"].startswith("The whole view now"):  # the model's full_view: no new decision
            prompts.append(messages[-1]["content"])
        return complete(messages, deadline, extra)

    llm.client.complete = recording
    bots = [load_bot("random", game, config, seed=seat) for seat in range(3)]
    bots[1] = llm
    result = Table(make_env(game, config, raw=True), bots, seed=2, forfeits=True).play()
    assert result.forfeit is None and llm.game_stats()["illegal"] == 0
    story = seat_story(game, config, result.record, 1)
    assert len(prompts) == len(story) > 3
    assert since_sections(prompts) == [bounded_events(lines) for lines in story]
