"""The llm: bot against a scripted OpenAI-compatible server (tests/llm_fake.py): spec, harness, bad input,
stats in records and results, every host, and ``tavernzoo mcp`` through the MCP SDK's own client."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest
from llm_fake import FakeLLM

from tavernzoo.agents import load_bot
from tavernzoo.agents.external import BotFailure
from tavernzoo.agents.llm import (
    DEFAULT_KEY_ENV,
    MAX_HISTORY_CHARS,
    MAX_REPLY_BYTES,
    LLMSpec,
    answer_grammar,
    answer_schema,
    parse_llm_spec,
    read_answer,
)
from tavernzoo.envs import get_game
from tavernzoo.eval.match import play_match
from tavernzoo.eval.results import print_results
from tavernzoo.eval.schedule import make_settings
from tavernzoo.eval.tournament import run_tournament


@pytest.fixture(scope="module")
def fake():
    server = FakeLLM()
    yield server
    server.close()


# --- the spec -------------------------------------------------------------------------------------------


def test_a_spec_parses_into_its_fields():
    spec = parse_llm_spec("llm:qwen/q-7b@http://127.0.0.1:8080/v1,temperature=0.5,max_tokens=20,time=3,"
                          "attempts=3,history=game,structured=grammar,seed=7,key_env=MY_KEY")
    assert spec == LLMSpec("qwen/q-7b", "http://127.0.0.1:8080/v1", 0.5, 20, 3.0, 3, "full", "grammar", 7, "MY_KEY")
    assert spec.endpoint == "http://127.0.0.1:8080/v1/chat/completions"
    assert parse_llm_spec("llm:m@https://api.example.com/v1/chat/completions").endpoint.endswith("/v1/chat/completions")
    assert parse_llm_spec("llm:a@b@http://h/v1").model == "a@b"  # the last @ starts the URL


@pytest.mark.parametrize(("spec", "message"), [
    ("llm:", "names no MODEL@URL"),
    ("llm:model", "names no MODEL@URL"),
    ("llm:@http://h/v1", "names no MODEL@URL"),
    ("llm:m@ftp://h/v1", "must be http:// or https://"),
    ("llm:m@http://h:99999/v1", "invalid port"),
    ("llm:m@http://user:secret@h/v1", "no credentials in its URL"),
    ("llm:m@http://h/v1,temperature=9", "temperature='9' must be a float from 0.0 to 2.0"),
    ("llm:m@http://h/v1,attempts=0", "attempts='0' must be a int from 1 to 5"),
    ("llm:m@http://h/v1,time=nan", "time='nan'"),
    ("llm:m@http://h/v1,history=all", "valid: summary, full, none"),
    ("llm:m@http://h/v1,structured=yes", "valid: on, json_schema, grammar, off"),
    ("llm:m@http://h/v1,colour=red", "unknown option 'colour=red'"),
    ("llm:m@http://h/v1,seed=1,seed=2", "seed given twice"),
    ("llm:m@http://h/v1,key_env=$X", "environment variable name"),
])
def test_bad_specs_are_refused_with_one_clear_sentence(spec, message):
    with pytest.raises(ValueError, match="bot spec") as caught:
        load_bot(spec, "tiny_minotaur")
    assert message in str(caught.value)
    assert "secret" not in str(caught.value)


# --- the strict reading of answers ------------------------------------------------------------------------


NAMES = ("attack:regular", "attack:middling", "pass", "target:10")


@pytest.mark.parametrize(("text", "expected"), [
    ("attack:regular", 0), ("  pass\n", 2), ('{"action": "pass"}', 2), ("target:10", 3),
    # A number is the line's position in the list shown (legal [0, 2, 3]: 1, 2, 3), never the action index.
    ("1", 0), ('{"action": 2}', 2), ('{"action": " 3 "}', 3),
])
def test_an_answer_naming_one_legal_action_exactly_is_taken(text, expected):
    assert read_answer(text, NAMES, [0, 2, 3]) == (expected, "")


@pytest.mark.parametrize(("text", "why"), [
    ("I pass", "not the name or number"),               # prose is never searched
    ("pass.", "not the name or number"),
    ("Pass", "not the name or number"),                  # no case folding
    ("attack", "not the name or number"),                # no prefixes
    ("0", "numbered 1 to 3"),                            # the list counts from 1
    ("4", "numbered 1 to 3"),                            # three actions are shown
    ("pass", "not legal now"),
    ("", "empty"),
    ('{"action": "pass", "why": "x"}', "exactly"),
    ('{"action": true}', "a name or a number"),
    ("{not json", "not valid JSON"),
    ("x" * 5000, "characters long"),
    ("١", "not the name or number"),                   # a non-ASCII digit is no number
])
def test_anything_else_is_refused_with_the_reason(text, why):
    index, reason = read_answer(text, NAMES, [0, 1, 3])
    assert index is None
    assert why in reason


def test_the_grammar_lists_exactly_the_legal_names_and_their_numbers():
    grammar = answer_grammar(["a:b", 'q"x'])
    assert grammar == 'root ::= "{\\"action\\": " ( "\\"a:b\\"" | "\\"q\\"x\\"" | "1" | "2" ) "}"\n'


def test_the_schema_admits_exactly_the_legal_names_and_their_numbers():
    jsonschema = pytest.importorskip("jsonschema")
    schema = answer_schema(["a:b", "pass"])
    for answer in ({"action": "a:b"}, {"action": "pass"}, {"action": 1}, {"action": 2}):
        jsonschema.validate(answer, schema)
    for answer in ({"action": "Pass"}, {"action": 0}, {"action": 3}, {"action": "1"}, {"action": "pass", "x": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(answer, schema)


def test_a_model_answering_1_plays_the_first_action_it_was_shown(fake):
    # Numbers were once the game's action indices: "1" played whatever action index 1 was when it happened
    # to be legal. Now it is the first line of the list, whatever its index.
    from tavernzoo.envs.core import Chance

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    bot = load_bot(f"llm:one@{fake.url},structured=off", game, config, seed=1)
    played = 0
    for seed in range(6):
        state = game.rules.new_game(config, Chance(seed))
        seat = game.rules.current_seat(state)
        legal = game.rules.legal_actions(state)
        bot.begin_game(seat)
        bot.observe_information_state(game.rules.information_state(state, seat), seat)
        mask = [0] * len(game.action_names(config))
        for index in legal:
            mask[index] = 1
        assert bot.act({"observation": None, "action_mask": mask}) == legal[0] != 1
        assert f"\n1: {game.action_names(config)[legal[0]]} — " in bot.last_prompt
        played += 1
    assert bot.game_stats()["illegal"] == 0 and played == 6


# --- playing through a server ---------------------------------------------------------------------------


def test_structured_answers_play_whole_games_in_every_game(fake):
    for name, config in (("tiny_minotaur", {}), ("minefield", {"num_players": 3}),
                         ("ministeel", {"num_players": 3}), ("wyvern", {"num_players": 2})):
        seats = get_game(name).rules.num_seats(get_game(name).make_config(config))
        result = play_match(name, [f"llm:first@{fake.url}"] + ["random"] * (seats - 1), seats, seed=1, config=config)
        row = result.rows[0]
        assert row.games == seats
        stats = row.bot_stats
        assert stats["games"] == seats and stats["moves"] > 0
        assert stats["requests"] == stats["moves"] and stats["illegal"] == 0 and stats["forfeits"] == 0
        assert stats["tokens_in"] == 100 * stats["requests"] and stats["tokens_out"] == 5 * stats["requests"]


def test_the_request_carries_the_legal_actions_the_prompt_and_a_seed(fake):
    fake.requests.clear()
    bot = load_bot(f"llm:first@{fake.url},temperature=0.3,max_tokens=9", "tiny_minotaur", seed=5)
    play_match("tiny_minotaur", [f"llm:first@{fake.url}", "random"], 1, seed=2)
    body = fake.requests[0]
    assert body["model"] == "first" and body["stream"] is False
    assert body["response_format"]["type"] == "json_object"
    enum = body["response_format"]["schema"]["properties"]["action"]["anyOf"][0]["enum"]
    prompt = body["messages"][-1]["content"]
    system = body["messages"][0]
    assert system["role"] == "system" and "exactly one legal action" in system["content"]
    for number, name in enumerate(enum, start=1):
        assert f"\n{number}: {name} — " in prompt
    # The rules go once, in the system message; the user message is what this decision adds.
    assert "## Rules" in system["content"] and "## Rules" not in prompt and "## What you see" in prompt
    assert isinstance(body["seed"], int)
    assert bot.spec.temperature == 0.3


@pytest.mark.parametrize("mode", ["json_schema", "grammar"])
def test_the_other_constrained_forms_are_sent_as_asked(fake, mode):
    fake.requests.clear()
    play_match("tiny_minotaur", [f"llm:first@{fake.url},structured={mode}", "random"], 1, seed=2)
    body = fake.requests[0]
    if mode == "grammar":
        assert body["grammar"].startswith("root ::=") and "response_format" not in body
    else:
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["action"]


def test_an_unreadable_answer_is_retried_once_with_the_reason_then_forfeits(fake):
    fake.requests.clear()
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:prose@{fake.url},structured=off", "random"], 1, seed=3)
    assert caught.value.kind == "illegal" and "2 answer(s) refused" in caught.value.reason
    assert len(fake.requests) == 2
    first, second = fake.requests
    assert "response_format" not in first
    retry = second["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I think I will attack, probably."}
    assert retry[-1]["role"] == "user" and retry[-1]["content"].startswith("Refused: ")
    assert "not the name or number of a legal action" in retry[-1]["content"]


def test_a_tournament_records_the_forfeits_and_the_llm_columns(fake, tmp_path, monkeypatch):
    settings = make_settings("tiny_minotaur", [f"llm:prose@{fake.url},structured=off,attempts=1", "random",
                                               f"llm:one@{fake.url},structured=off"], 6, seed=1)
    results = run_tournament(settings, tmp_path / "t")
    rows = {row["spec"]: row for row in results["leaderboard"]}
    prose, one = rows[settings.bots[0]], rows[settings.bots[2]]
    assert prose["forfeits"] == prose["games"] and prose["bot_stats"]["forfeits"] == prose["games"]
    assert prose["bot_stats"]["illegal"] == prose["bot_stats"]["requests"] == prose["games"]
    assert "bot_stats" not in rows["random"]
    assert one["bot_stats"]["illegal"] == 0 < one["bot_stats"]["requests"]  # "1": the first action shown
    kinds = {item["kind"] for item in results["forfeits"] if item["bot"] == prose["bot"]}
    assert kinds == {"illegal"}
    lines = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert all(len(line["bot_stats"]) == 2 for line in lines)
    assert all(line["record"]["bot_stats"] == line["bot_stats"] for line in lines)
    out = tmp_path / "table.txt"
    monkeypatch.setenv("COLUMNS", "400")  # a wide table: every column header whole
    with open(out, "w") as handle:
        print_results(results, file=handle)
    text = out.read_text()
    for column in ("requests", "forced", "illegal", "LLM forfeits", "tokens in/out", "s/move"):
        assert column in text
    prose_line = next(line for line in text.splitlines() if "llm:prose" in line)
    assert f" {prose['bot_stats']['tokens_in']}/{prose['bot_stats']['tokens_out']} " in prose_line


@pytest.mark.parametrize(("model", "kind", "words"), [
    ("error500", "http", "answered HTTP 500: internal trouble"),
    ("garbage", "garbage", "not a chat completion"),
    ("unknown", "http", "HTTP 404: model 'unknown' not found (is the model name right?)"),
    ("huge", "garbage", f"over {MAX_REPLY_BYTES} bytes"),
    ("hang", "timeout", "within the move's 1.5 s"),
    ("drip", "timeout", "within the move's 1.5 s"),
])
def test_a_misbehaving_server_fails_the_move_with_one_sentence(fake, model, kind, words):
    started = time.monotonic()
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:{model}@{fake.url},time=1.5", "random"], 1, seed=3)
    assert time.monotonic() - started < 6  # never a hang past the limit (1.5 s, and the test's margin)
    assert caught.value.kind == kind
    assert words in caught.value.reason
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 700


def test_a_server_dripping_its_status_line_and_headers_is_cut_at_the_moves_time(fake):
    """Every header byte comes well within any per-read timeout: only a deadline over the whole reply,
    headers included, ends the move (the fake drips for a minute)."""
    started = time.monotonic()
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:dripheaders@{fake.url},time=2", "random"], 1, seed=3)
    assert time.monotonic() - started < 8  # 2 s, and a margin for a loaded machine
    assert caught.value.kind == "timeout"
    assert "within the move's 2 s" in caught.value.reason


@pytest.mark.parametrize("model", ["cut", "cutchunked"])
def test_a_server_that_hangs_up_mid_reply_is_a_connection_failure(fake, model):
    """Half a chat completion is not the server's answer: the connection broke (kind ``connect``, as for a
    server that cannot be reached), not ``garbage``."""
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:{model}@{fake.url},time=5", "random"], 1, seed=3)
    assert caught.value.kind == "connect"
    assert f"{fake.url} cut the connection mid-reply" in caught.value.reason
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 700


def test_over_https_the_deadline_covers_the_handshake_headers_and_body(tmp_path, monkeypatch):
    """TLS sockets are made by the TLS context, not by the client: they keep the one deadline too."""
    import socket
    import ssl

    from llm_fake import self_signed_cert

    from tavernzoo.agents.llm import ChatClient

    certfile, keyfile = self_signed_cert(tmp_path)
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *args, **kwargs: real(cafile=certfile))
    server = FakeLLM(tls=(certfile, keyfile))
    # A listener that accepts and never says a word: the TLS handshake waits for the server's hello.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    messages = [{"role": "user", "content": "move"}]
    try:
        assert ChatClient(parse_llm_spec(f"llm:number@{server.url}")).complete(
            messages, time.monotonic() + 5, {}).text == " 0 "
        for url, kind, words in [
                (f"llm:dripheaders@{server.url}", "timeout", "did not answer within the move's 2 s"),
                (f"llm:drip@{server.url}", "timeout", "stopped sending within the move's 2 s"),
                (f"llm:m@https://127.0.0.1:{silent.getsockname()[1]}/v1", "timeout", "within the move's 2 s"),
                (f"llm:cut@{server.url}", "connect", "cut the connection mid-reply")]:
            started = time.monotonic()
            with pytest.raises(BotFailure) as caught:
                ChatClient(parse_llm_spec(url + ",time=2")).complete(messages, time.monotonic() + 2, {})
            assert time.monotonic() - started < 8
            assert caught.value.kind == kind and words in caught.value.reason, (url, caught.value)
    finally:
        silent.close()
        server.close()


def test_the_name_lookup_counts_against_the_moves_time(fake, monkeypatch):
    """One deadline from the lookup to the last byte: a slow resolver leaves the server less time."""
    import socket

    from tavernzoo.agents.llm import ChatClient

    real = socket.getaddrinfo
    port = fake.url.split(":")[2].split("/")[0]

    def getaddrinfo(host, *args, **kwargs):
        if host == "slow-host.test":
            time.sleep(2.5)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    messages = [{"role": "user", "content": "move"}]
    # The server's second of thought fits in 3 s ...
    client = ChatClient(parse_llm_spec(f"llm:late@{fake.url},time=3"))
    assert client.complete(messages, time.monotonic() + 3, {}).text == " 0 "
    # ... but not after a 2.5 s lookup.
    client = ChatClient(parse_llm_spec(f"llm:late@http://slow-host.test:{port}/v1,time=3"))
    started = time.monotonic()
    with pytest.raises(BotFailure) as caught:
        client.complete(messages, time.monotonic() + 3, {})
    assert time.monotonic() - started < 7
    assert caught.value.kind == "timeout"
    assert "did not answer within the move's 3 s" in caught.value.reason


def test_a_host_name_that_never_resolves_forfeits_within_the_move(fake, monkeypatch):
    """getaddrinfo takes no timeout: a resolver that hangs must not hold the move past its time."""
    import socket

    real = socket.getaddrinfo
    port = fake.url.split(":")[2].split("/")[0]

    def getaddrinfo(host, *args, **kwargs):
        if host == "slow-resolver.test":
            time.sleep(8)  # the lookup hangs (its daemon thread is left to finish)
        if host == "fake-host.test":
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    started = time.monotonic()
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:first@http://slow-resolver.test:{port}/v1,time=1", "random"], 1, seed=3)
    assert time.monotonic() - started < 5
    assert caught.value.kind == "timeout"
    assert "'slow-resolver.test'" in caught.value.reason and "not resolved within the move's 1 s" in caught.value.reason
    # A name that does resolve is connected to by its address (the fake answers; the move is played).
    played = play_match("tiny_minotaur", [f"llm:first@http://fake-host.test:{port}/v1,time=5", "random"], 1, seed=3)
    assert played.games == 2 and played.rows[0].bot_stats["requests"] > 0


def test_a_host_name_that_does_not_exist_is_a_connect_failure(monkeypatch):
    import socket

    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", ["llm:m@http://no-such-host.test/v1,time=2", "random"], 1, seed=3)
    assert caught.value.kind == "connect"
    assert "cannot reach http://no-such-host.test/v1" in caught.value.reason
    assert "Name or service not known" in caught.value.reason


def test_a_url_that_does_not_answer_is_one_error_line_from_the_command_line():
    command = [sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots",
               "llm:m@http://127.0.0.1:9/v1,time=2", "random", "--games", "1", "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "connect" in lines[0] and "cannot reach http://127.0.0.1:9/v1" in lines[0]


def test_the_api_key_goes_to_the_server_only(fake, monkeypatch, tmp_path):
    secret = "sk-test-5ecret-key"
    monkeypatch.setenv(DEFAULT_KEY_ENV, secret)
    fake.headers.clear()
    play_match("tiny_minotaur", [f"llm:first@{fake.url}", "random"], 2, seed=4, records_path=tmp_path / "r.jsonl")
    assert fake.headers[0]["Authorization"] == f"Bearer {secret}"
    assert secret not in (tmp_path / "r.jsonl").read_text()
    # A server that echoes the key back in an error never gets it into the reason.
    bot = load_bot(f"llm:error500@{fake.url}", "tiny_minotaur")
    assert bot.client.scrub(f"oops {secret}") == "oops [API key]"
    settings = make_settings("tiny_minotaur", [f"llm:error500@{fake.url},retries=0", "random"], 2, seed=1)
    results = run_tournament(settings, tmp_path / "t")
    assert secret not in json.dumps(results)
    assert secret not in (tmp_path / "t" / "games.jsonl").read_text()


def test_history_game_keeps_the_earlier_turns_and_turn_does_not(fake):
    for history, grows in (("game", True), ("turn", False)):
        fake.requests.clear()
        play_match("tiny_minotaur", [f"llm:first@{fake.url},history={history}", "random"], 1, seed=5)
        lengths = [len(body["messages"]) for body in fake.requests]
        assert (lengths[-1] > lengths[0]) is grows
        assert lengths[0] == 2


def test_the_play_and_web_paths_take_the_spec(fake):
    from tavernzoo.eval.play import TerminalGame
    from tavernzoo.web.app import WebState
    from tavernzoo.web.tables import Table

    answers = iter(["1"] * 300)
    out = []
    game = TerminalGame("tiny_minotaur", [f"llm:first@{fake.url}"], seat=0, seed=3,
                        read=lambda prompt: next(answers), write=out.append)
    assert game.play() is not None  # the game was played to its end (None: the person left)
    with pytest.raises(ValueError, match="--allow-local"):
        WebState(allow_local=False).resolve(f"llm:first@{fake.url}", get_game("tiny_minotaur"))
    web = WebState(allow_local=True)
    table = Table(get_game("tiny_minotaur"), {}, [f"llm:first@{fake.url}", "random"], 1, web.load)
    table.start()
    assert table.status == "over" and table.forfeit is None


# --- tavernzoo mcp ---------------------------------------------------------------------------------------


def test_mcp_over_stdio_plays_tables_with_the_sdks_client():
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def session():
        server = StdioServerParameters(command=sys.executable, args=["-m", "tavernzoo.cli", "mcp"],
                                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
        async with Client(server, read_timeout_seconds=60) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"list_games", "new_table", "view", "legal_actions", "act", "result", "close_table"}
            games = (await client.call_tool("list_games", {})).structured_content["result"]
            assert {g["game"] for g in games} == {"minefield", "ministeel", "tiny_minotaur", "wyvern"}
            first = (await client.call_tool("new_table", {"game": "tiny_minotaur", "opponents": ["random"],
                                                          "seed": 1})).structured_content
            second = (await client.call_tool("new_table", {
                "game": "ministeel", "seat": 1, "opponents": ["random"], "options": {"num_players": 3}, "seed": 2,
            })).structured_content
            assert first["table"] != second["table"] and "## Legal actions" in first["text"]
            bad = await client.call_tool("act", {"table": first["table"], "action": "fly"})
            assert bad.is_error and "'fly' is not legal now; legal: attack:regular" in bad.content[0].text
            refused = await client.call_tool("new_table", {"game": "tiny_minotaur", "opponents": ["cmd:ls"]})
            assert refused.is_error and "--allow-local" in refused.content[0].text
            unknown = await client.call_tool("view", {"table": "nope"})
            assert unknown.is_error and "no table 'nope'" in unknown.content[0].text
            as_json = (await client.call_tool("view", {"table": second["table"], "format": "json"})).structured_content
            assert as_json["view"]["seat"] == 1 and "hand" in as_json["view"]["view"]["players"][1]
            assert "hand" not in as_json["view"]["view"]["players"][0]
            for table in (first["table"], second["table"]):  # play both to the end, the first legal move each time
                for _ in range(2000):
                    legal = (await client.call_tool("legal_actions", {"table": table})).structured_content["result"]
                    if not legal:
                        break
                    await client.call_tool("act", {"table": table, "action": str(legal[0]["number"])})
                outcome = (await client.call_tool("result", {"table": table})).structured_content
                assert outcome["status"] == "over" and outcome["record"]["format"] == "tavernzoo-record"
                assert sum(outcome["scores"]) == pytest.approx(1.0)
            closed = (await client.call_tool("close_table", {"table": first["table"]})).structured_content
            assert closed == {"table": first["table"], "closed": True}

    asyncio.run(asyncio.wait_for(session(), 240))


def test_mcp_tables_refuse_bad_input_with_one_sentence():
    from tavernzoo.web.mcp import Tables
    from tavernzoo.web.tables import TableError

    tables = Tables()
    for arguments, words in (
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"game": "tiny_minotaur", "seat": 2}, "seat 2 is not a seat of tiny_minotaur"),
        ({"game": "tiny_minotaur", "seat": True}, "seat True"),
        ({"game": "tiny_minotaur", "opponents": ["random", "random"]}, "give one opponent for all"),
        ({"game": "tiny_minotaur", "opponents": ["human"]}, "opponents are bot specs"),
        ({"game": "tiny_minotaur", "opponents": ["llm:m@http://127.0.0.1:9/v1"]}, "--allow-local"),
        ({"game": "tiny_minotaur", "options": {"starting_hp": "many"}}, "starting_hp"),
        ({"game": "tiny_minotaur", "options": [1]}, "options must be an object"),
        ({"game": "tiny_minotaur", "seed": -1}, "seed -1"),
    ):
        with pytest.raises((TableError, ValueError, TypeError)) as caught:
            tables.new_table(**arguments)
        assert words in str(caught.value), (arguments, str(caught.value))
    table = tables.new_table("ministeel", options={"num_players": 2}, opponents=["random"], seed=3)["table"]
    with pytest.raises(TableError, match="format 'yaml'; valid: text, json"):
        tables.view(table, "yaml")
    with pytest.raises(TableError, match="not the number of a legal action: legal_actions numbers them 1 to"):
        tables.act(table, "999")
    # What the seat sees next starts with its own move's outcome, after it was told the earlier lines once.
    legal = tables.legal_actions(table)
    while not any(action["name"].startswith("play:") for action in legal):  # a Card Draw window first (v2)
        tables.act(table, "token:pass")
        legal = tables.legal_actions(table)
    move = next(action for action in legal if action["name"].startswith("play:"))
    after = tables.act(table, move["name"])["text"]
    since = after.split("## Events\n")[1].split("\n\n## ")[0]
    assert "## Changed" in after and "## Rules" not in after  # what changed, not the whole view again
    assert since.splitlines()[0].startswith("player_0 ")
    assert "initiative rolls" not in since


def test_an_mcp_client_can_leave_card_draw_windows_to_the_table():
    """act(..., answer_offers=True) at a Card Draw window keeps the tokens there and at every later window:
    the client is not asked at one again, and its events say each was answered for it."""
    from tavernzoo.web.mcp import Tables
    from tavernzoo.web.tables import TableError

    tables = Tables()
    key = tables.new_table("ministeel", options={"num_players": 4}, opponents=["heuristic"], seed=4)["table"]
    with pytest.raises(TableError, match="answer_offers='yes'"):
        tables.act(key, "token:pass", "yes")
    while not any(action["name"] == "token:pass" for action in tables.legal_actions(key)):
        tables.act(key, tables.legal_actions(key)[0]["name"])
    seen = tables.act(key, "token:pass", True)["text"]
    for _ in range(40):
        legal = [action["name"] for action in tables.legal_actions(key)]
        if not legal:
            break
        assert "token:pass" not in legal  # no window asks any more
        choice = next(name for name in legal if name != "token:draw")
        seen += tables.act(key, choice)["text"]
    assert seen.count("player_0 keeps their Card Draw tokens for now") > 1  # answered, and told


def test_the_information_state_alone_is_enough_to_act(fake):
    # Over the bot protocol a host sends the information state and no view: the bot builds the same view.
    from tavernzoo.agents.text_views import seat_view
    from tavernzoo.envs.core import Chance

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    state = game.rules.new_game(config, Chance(8))
    seat = game.rules.current_seat(state)
    bot = load_bot(f"llm:first@{fake.url}", game, config, seed=1)
    bot.begin_game(seat)
    bot.observe_information_state(game.rules.information_state(state, seat), seat)
    mask = [0] * len(game.action_names(config))
    for index in game.rules.legal_actions(state):
        mask[index] = 1
    action = bot.act({"observation": None, "action_mask": mask})
    assert action == game.rules.legal_actions(state)[0]
    assert bot.last_prompt == seat_view(game, state, seat).text(all_cards=True)  # cards=once: all in the system


def test_mcp_tables_never_read_a_server_file_named_in_their_options(tmp_path):
    """A client (perhaps a language model) names a deck or ruleset path: refused from the text alone, the same
    answer whether the file exists or not, unless the server was started with --allow-local."""
    from tavernzoo.web.mcp import Tables
    from tavernzoo.web.tables import TableError

    tables = Tables()
    answers = []
    for game, options in (("wyvern", {"num_players": 2, "decks": ["/etc/passwd", "adventurer"]}),
                          ("wyvern", {"num_players": 2, "decks": [str(tmp_path / "missing.toml"), "adventurer"]}),
                          ("tiny_minotaur", {"ruleset": "/proc/self/environ"})):
        with pytest.raises(TableError, match="--allow-local") as caught:
            tables.new_table(game, options=options, opponents=["random"])
        answers.append(str(caught.value).replace(str(tmp_path / "missing.toml"), "PATH").replace("/etc/passwd", "PATH"))
    assert answers[0] == answers[1] and "root:" not in answers[2]
    assert tables.new_table("tiny_minotaur", options={"ruleset": "house_narrowing"}, opponents=["random"])["table"]


# --- what the model is told happened ------------------------------------------------------------------------


def since_sections(prompts: list[str]) -> list[list[str]]:
    """The lines of each prompt's "Since your last decision" section (a whole view's), or its "Events" (what
    changed: left out when there are none)."""
    sections = []
    for prompt in prompts:
        heading = next((h for h in ("## Since your last decision\n", "## Events\n") if h in prompt), None)
        body = prompt.split(heading, 1)[1].split("\n\n## ", 1)[0] if heading else "(nothing new)"
        sections.append([] if body == "(nothing new)" else body.split("\n"))
    return sections


def seat_story(game, config, record, seat) -> list[list[str]]:
    """The record replayed step by step: the event lines ``seat`` was shown between its real decisions (one
    list per decision with more than one legal action, what came before it: a forced move asks nothing, so
    its events wait for the next real decision)."""
    from tavernzoo.agents.text_views import NOTHING_SHOWN, event_mark, new_events
    from tavernzoo.envs.core import Chance
    from tavernzoo.envs.records import play_joint, play_turn

    state = game.rules.new_game(config, Chance.scripted(record["chance"]))
    shown = event_mark(game, state, seat)
    pending, story = new_events(NOTHING_SHOWN, shown), []
    for number, step in enumerate(record["actions"]):
        if game.simultaneous:
            acting = str(seat) in step["joint"]
            choices = len(game.rules.legal_actions(state, seat)) if acting else 0
        else:
            acting = step["seat"] == seat
            choices = len(game.rules.legal_actions(state)) if acting else 0
        if choices > 1:
            story.append(pending)
            pending = []
        (play_joint if game.simultaneous else play_turn)(game, config, state, number, step)
        mark = event_mark(game, state, seat)
        pending, shown = pending + new_events(shown, mark), mark
    return story


def _one_llm_seat(fake, name: str, options: dict, forfeits: bool = False):
    """``(game, config, seat, result)``: a game with the fake server's ``llm:`` bot at seat 1 and random bots
    elsewhere, played at a Table (``forfeits``: as a tournament's, on the raw env), the server's requests
    cleared before it."""
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    game = get_game(name)
    config = game.make_config(options)
    seat = 1
    bots = [load_bot("random", game, config, seed=other) for other in range(game.rules.num_seats(config))]
    bots[seat] = load_bot(f"llm:first@{fake.url}", game, config, seed=1)
    fake.requests.clear()
    result = Table(make_env(game, config, raw=forfeits), bots, seed=3, forfeits=forfeits).play()
    return game, config, seat, result


@pytest.mark.parametrize(("name", "options", "forfeits"), [
    ("tiny_minotaur", {}, False), ("minefield", {"num_players": 5, "roll_battle": "mines_only"}, False),
    ("ministeel", {"num_players": 4}, False), ("ministeel", {"num_players": 3}, True),  # True: a tournament's table
    ("wyvern", {"num_players": 3}, False)])
def test_the_prompt_holds_every_event_line_since_the_seats_previous_decision(fake, name, options, forfeits):
    from tavernzoo.agents.text_views import bounded_events

    game, config, seat, result = _one_llm_seat(fake, name, options, forfeits)
    assert result.forfeit is None
    shown = since_sections([body["messages"][-1]["content"] for body in fake.requests])
    story = seat_story(game, config, result.record, seat)
    assert len(shown) == len(story) > 3
    assert [bounded_events(lines) for lines in story] == shown
    # Other players' moves between two decisions of the seat are all there, not only the latest step's.
    assert max(len(lines) for lines in story) > 2
    assert sum(map(len, story)) > len(story)


# --- what it costs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "options"), [("wyvern", {"num_players": 3}), ("wyvern", {"num_players": 2})])
def test_a_forced_move_is_played_without_a_request_and_counted(fake, name, options):
    from tavernzoo.envs.core import Chance
    from tavernzoo.envs.records import play_joint, play_turn

    game, config, seat, result = _one_llm_seat(fake, name, options)
    record = result.record
    stats = record["bot_stats"][seat]
    # The record replayed says how many of the seat's turns had one legal action; none of them cost a request.
    state = game.rules.new_game(config, Chance.scripted(record["chance"]))

    turns = forced = 0
    for number, step in enumerate(record["actions"]):
        if game.simultaneous:
            legal = game.rules.legal_actions(state, seat) if str(seat) in step["joint"] else None
        else:
            legal = game.rules.legal_actions(state) if step["seat"] == seat else None
        if legal is not None:
            turns += 1
            forced += len(legal) == 1
        (play_joint if game.simultaneous else play_turn)(game, config, state, number, step)
    assert forced > 0 and stats["forced"] == forced
    assert stats["moves"] == turns - forced == stats["requests"] == len(fake.requests)


def test_every_request_of_a_game_opens_with_the_same_system_message(fake):
    # A prompt-caching server reads the unchanging prefix once: the rules and entries' meanings are in it,
    # and nothing that changes between decisions (the example action, the events) is.
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    for history in ("turn", "game"):
        bots = [load_bot("random", game, config, seed=other) for other in range(3)]
        bots[1] = load_bot(f"llm:first@{fake.url},history={history}", game, config, seed=1)
        fake.requests.clear()
        Table(make_env(game, config), bots, seed=4).play()
        systems = {json.dumps(body["messages"][0]) for body in fake.requests}
        assert len(fake.requests) > 3 and len(systems) == 1
        system = fake.requests[0]["messages"][0]["content"]
        assert "## Rules" in system and "## What the view's entries mean" in system
        for body in fake.requests:
            assert all("## Rules" not in message["content"] for message in body["messages"][1:])
        if history == "game":
            # Each request extends the one before (the earlier messages resent unchanged), except where the
            # kept conversation passed its cap and was cut to half of it, which is seldom.
            cuts = 0
            for before, after in zip(fake.requests, fake.requests[1:], strict=False):
                if after["messages"][:len(before["messages"])] != before["messages"]:
                    cuts += 1
                    assert sum(len(m["content"]) for m in after["messages"][1:-1]) <= MAX_HISTORY_CHARS // 2
            assert cuts * 5 < len(fake.requests)


# --- the compact view -------------------------------------------------------------------------------------


def test_view_changes_name_each_changed_entry_with_its_new_value_only():
    from tavernzoo.agents.text_views import view_changes

    before = {"turn": 3, "phase": "main",
              "players": [{"seat": 0, "hp": 10, "hand": 4}, {"seat": 1, "hp": 9, "hand": 2}],
              "combat": {"monster": "goblin", "level": 3}, "door": "orc", "events": ["a"]}
    after = {"turn": 4, "phase": "main",
             "players": [{"seat": 0, "hp": 10, "hand": 5}, {"seat": 1, "hp": 7, "hand": 2}],
             "combat": {"monster": "goblin", "level": 5}, "new": {"x": 1, "y": None}, "events": ["b"]}
    assert view_changes(before, after) == ["turn: 4", "players: player_0 hand=5; player_1 hp=7",
                                           "combat: level=5", "new: {x=1}", "door: (none)"]
    assert view_changes(after, after) == []
    # A dict within a dict: its changed keys where that is shorter than its whole value; quiet fields (counts
    # the events imply) are never named, at any depth.
    talks = {"player_2": {"offers": 1, "best": 1, "asks": 0, "last": -1}, "player_3": {"offers": 2, "best": 2,
                                                                                       "asks": 1, "last": 3}}
    old = {"combat": {"talks": talks, "strength": 4}, "players": [{"seat": 0, "deck_size": 9, "hp": 3}]}
    new = {"combat": {"talks": {**talks, "player_3": {**talks["player_3"], "asks": 2}}, "strength": 4},
           "players": [{"seat": 0, "deck_size": 8, "hp": 3}]}
    assert view_changes(old, new) == ["combat: talks.player_3.asks=2", "players: player_0 deck_size=8"]
    assert view_changes(old, new, quiet=("deck_size", "talks")) == []
    assert view_changes(old, {**new, "combat": {"talks": {}, "strength": 5}}, quiet=("talks",)) == [
        "combat: strength=5", "players: player_0 deck_size=8"]
    # "entry.field": quiet within that entry only (a fight's level, not a player's).
    fight = {"combat": {"monster": "goblin", "level": 3, "fighter": 1}, "players": [{"seat": 0, "level": 2}]}
    later = {"combat": {"monster": "orc", "level": 8, "fighter": 1}, "players": [{"seat": 0, "level": 3}]}
    assert view_changes(fight, later, quiet=("combat.level",)) == ["combat: monster=orc", "players: player_0 level=3"]
    assert view_changes({}, later, quiet=("combat.level", "combat.fighter")) == [
        "combat: {monster=orc}", "players: [{seat=0, level=3}]"]
    # A list of names by what joined and left, where that is shorter; a whole new list where it is not.
    hand = {"hand": ["axe", "rope", "rope", "slime"], "players": [{"seat": 0, "equipped": ["helm"]}]}
    assert view_changes(hand, {"hand": ["axe", "rope", "slime", "wand"],
                               "players": [{"seat": 0, "equipped": ["helm", "boots"]}]}) == [
        "hand: +wand,-rope", "players: player_0 equipped=+boots"]
    assert view_changes(hand, {**hand, "hand": ["goblin"]}) == ["hand: [goblin]"]


def test_a_family_of_actions_is_described_once_and_an_unchanged_list_not_again():
    """``offer:+1:0`` ... ``offer:+3:5``: one member described, the others by name; the same list again is one
    line; the list cut after its Nth says so; an action whose description changed only in its numbers is not
    described again, one whose words changed is; three or more that count up by one, or that share all but
    their last part and need no description, are one line."""
    from tavernzoo.agents.text_views import LegalAction, SeatView, ShownSoFar

    game = get_game("wyvern")

    def seen(actions, hp=1):
        legal = [LegalAction(number, number, name, text) for number, (name, text) in enumerate(actions, start=1)]
        return SeatView(game, 0, {"hp": hp}, legal, since=[], config=None)

    offers = [(f"offer:+{p}:{t}", f"offer {t} treasures to player_{p} for help") for p in (1, 2) for t in (0, 1)]
    shown = ShownSoFar()
    shown.decision_text(seen([("pass", "pass")]))
    text = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_2's offer of 1 treasure"),
                                     *offers], hp=2))
    assert text.endswith("## Actions\n1: pass\n2: accept — accept player_2's offer of 1 treasure\n"
                         "3: offer:+1:0 — offer 0 treasures to player_1 for help\n4: offer:+1:1\n5: offer:+2:0\n"
                         "6: offer:+2:1")
    assert "hp=2" not in text and "hp: 2" in text and "## Events" not in text  # no events: no heading
    again = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_2's offer of 1 treasure"),
                                      *offers], hp=3))
    assert again.endswith("## Actions\nas at your previous decision (6)")
    cut = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_2's offer of 1 treasure")], hp=4))
    assert cut.endswith("## Actions\nthe first 2 of your previous decision's")
    # Another player, another amount (and its plural): the same action, numbers aside.
    numbers = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_3's offer of 2 treasures")], hp=5))
    assert numbers.endswith("## Actions\nas at your previous decision (2)")
    words = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_3's ask of 2 treasures")], hp=6))
    assert words.endswith("## Actions\n1: pass\n2: accept — accept player_3's ask of 2 treasures")
    # Back to a meaning told before: by name, but not "as at your previous decision" (that one meant the ask).
    back = shown.decision_text(seen([("pass", "pass"), ("accept", "accept player_1's offer of 0 treasures")], hp=7))
    assert back.endswith("## Actions\n1: pass\n2: accept")
    runs = [("pass", "pass"), *((f"ask:{k}", f"offer to help player_1 for {k} treasures") for k in range(4)),
            *((f"discard:{card}", f"discard {card}") for card in ("axe", "helm", "whip")),
            ("fight:rat", "fight Rat from your hand"), ("fight:ogre", "fight Ogre from your hand")]
    text = shown.decision_text(seen(runs, hp=8))
    assert text.endswith("## Actions\n1: pass\n2-5: ask:{0..3} — offer to help player_1 for 0 treasures\n"
                         "6-8: discard:{axe,helm,whip}\n9: fight:rat — fight Rat from your hand\n"
                         "10: fight:ogre — fight Ogre from your hand")


@pytest.mark.parametrize("name", ["tiny_minotaur", "ministeel", "wyvern"])
def test_every_entry_that_changed_between_two_decisions_is_named_and_no_other(name):
    import random

    from tavernzoo.agents.text_views import view_changes
    from tavernzoo.envs.core import Chance

    game = get_game(name)
    config = game.make_config({})
    rng = random.Random(2)
    state = game.rules.new_game(config, Chance(5))
    before, checked = None, 0
    while not game.rules.is_terminal(state) and checked < 60:
        if game.rules.current_seat(state) == 0:
            view = game.encoder.view(state, 0)
            if before is not None:
                named = {line.split(":")[0] for line in view_changes(before, view)}
                changed = {key for key in {*before, *view} if before.get(key) != view.get(key)
                           and "event" not in key}
                assert named == changed
                checked += 1
            before = view
        game.rules.apply(state, rng.choice(game.rules.legal_actions(state)))
    assert checked > 5


def test_after_the_first_decision_only_the_changes_are_sent_and_the_conversation_extends(fake):
    game, config, seat, result = _one_llm_seat(fake, "ministeel", {"num_players": 3})
    assert result.forfeit is None and len(fake.requests) > 5
    users = [body["messages"][-1]["content"] for body in fake.requests]
    assert "## What you see" in users[0] and "## Changed" not in users[0]
    for before, after, text in zip(fake.requests, fake.requests[1:], users[1:], strict=False):
        extends = after["messages"][:len(before["messages"]) - 1] == before["messages"][:-1]
        if extends:  # within the kept conversation: the changes only
            assert "## What you see" not in text and "## Actions\n" in text
        else:  # cut into a summary: the full view again, after the summary
            assert text.startswith("## Earlier in this game") and "## What you see" in text
    system = fake.requests[0]["messages"][0]["content"]
    assert "full_view" in system and '"## Changed"' in system


def test_cards_once_tells_every_card_in_the_system_message_and_cards_named_at_the_decisions(fake):
    """cards=once (the default with view=changes): every card's text in the one system message, none in a user
    message; cards=named: none in the system message, each named card's text in a user message once."""
    game = get_game("ministeel")
    config = game.make_config({"num_players": 2})
    texts = game.encoder.card_texts(config)
    for options, in_system in (("", True), (",cards=named", False), (",view=full,history=none", False)):
        fake.requests.clear()
        play_match("ministeel", [f"llm:first@{fake.url}{options}", "random"], 2, seed=2, config={"num_players": 2})
        system = fake.requests[0]["messages"][0]["content"]
        users = [message["content"] for body in fake.requests for message in body["messages"][1:]
                 if message["role"] == "user"]
        assert all(f"\n{name}: {text}" in system for name, text in texts.items()) == in_system, options
        told = [name for name, text in texts.items() if any(f"\n{name}: {text}" in user for user in users)]
        assert (told == []) == in_system, options


def test_a_small_history_budget_summarises_the_dropped_turns_and_shows_the_full_view_again(fake):
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    bots = [load_bot("random", game, config, seed=other) for other in range(3)]
    bots[1] = load_bot(f"llm:first@{fake.url},history_chars=3000", game, config, seed=1)
    fake.requests.clear()
    Table(make_env(game, config), bots, seed=4).play()
    summaries = [body["messages"][-1]["content"] for body in fake.requests
                 if body["messages"][-1]["content"].startswith("## Earlier in this game")]
    assert len(summaries) >= 2
    decisions = [int(text.split("\n")[1].split()[0]) for text in summaries]
    assert decisions == sorted(decisions) and decisions[0] > 0  # counted over the whole game so far
    assert all("you played: " in text and "## What you see" in text for text in summaries)
    for body in fake.requests:
        assert sum(len(m["content"]) for m in body["messages"][1:-1]) <= 3000


def test_full_every_and_history_none_show_the_whole_view(fake):
    for options, whole in (("full_every=3", [True, False, False, True, False, False, True]),
                           ("history=none", [True] * 7), ("view=full", [True] * 7)):
        fake.requests.clear()
        play_match("tiny_minotaur", [f"llm:first@{fake.url},{options}", "random"], 1, seed=5)
        shown = ["## What you see" in body["messages"][-1]["content"] for body in fake.requests]
        assert shown[:7] == whole, options


def test_view_changes_with_history_none_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match="view=changes needs a kept conversation"):
        parse_llm_spec("llm:m@http://h/v1,view=changes,history=none")


def test_the_model_may_ask_for_the_whole_view_once_a_decision_without_spending_an_attempt(fake):
    fake.requests.clear()
    result = play_match("tiny_minotaur", [f"llm:viewfirst@{fake.url},attempts=1", "random"], 1, seed=5)
    stats = result.rows[0].bot_stats
    assert stats["illegal"] == 0 and stats["forfeits"] == 0
    # Asked at every decision not shown whole already (a game's first, and the first after a cut).
    whole = sum("## What you see" in body["messages"][-1]["content"]
                and not body["messages"][-1]["content"].startswith("The whole view now") for body in fake.requests)
    assert stats["full_views"] == stats["moves"] - whole > 0
    assert stats["requests"] == stats["moves"] + stats["full_views"]
    asked = [body for body in fake.requests if body["messages"][-1]["content"].startswith("The whole view now")]
    assert len(asked) == stats["full_views"]
    for body in asked:
        assert "## What you see" in body["messages"][-1]["content"]
        assert "full_view" not in json.dumps(body["response_format"])  # not offered twice


def test_mcp_act_returns_what_changed_and_view_the_whole():
    from tavernzoo.web.mcp import Tables

    tables = Tables()
    key = tables.new_table("wyvern", options={"num_players": 3}, opponents=["random"], seed=2)["table"]
    changes = whole = 0
    for _ in range(30):
        legal = tables.legal_actions(key)
        if not legal:
            break
        after = tables.act(key, legal[-1]["number"])
        if after["status"] == "over":
            break
        assert "## Rules" not in after["text"] and "## What you see" not in after["text"]
        if tables.legal_actions(key):
            assert "## Actions\n" in after["text"]
        changes += len(after["text"])
        whole += len(tables.view(key)["text"])  # the whole view on request; act's next answer is changes since it
    assert 0 < changes * 3 < whole


# --- real APIs: retries, limits, reasoning models ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["flaky429", "flaky503", "flakyreset"])
def test_a_server_failing_twice_then_answering_costs_no_forfeit(fake, mode, monkeypatch):
    import tavernzoo.agents.llm as llm

    monkeypatch.setattr(llm, "BACKOFF_S", 0.01)  # the 503 and the reset name no wait: the backoff's, kept short
    result = play_match("tiny_minotaur", [f"llm:{mode}@{fake.url},time=20", "random"], 1, seed=5)
    stats = result.rows[0].bot_stats
    assert stats["forfeits"] == 0 and stats["illegal"] == 0
    assert stats["retries"] == 2 * stats["requests"] > 0


def test_retries_stop_at_their_count_and_at_the_moves_time(fake, monkeypatch):
    import tavernzoo.agents.llm as llm

    monkeypatch.setattr(llm, "BACKOFF_S", 0.01)
    fake.requests.clear()
    with pytest.raises(BotFailure) as caught:
        play_match("tiny_minotaur", [f"llm:error503@{fake.url},retries=3,time=20", "random"], 1, seed=5)
    assert caught.value.kind == "http" and "HTTP 503: overloaded (after 3 retries)" in caught.value.reason
    assert len(fake.requests) == 4
    started = time.monotonic()
    with pytest.raises(BotFailure) as caught:  # Retry-After: 3600 does not fit in the move: no wait at all
        play_match("tiny_minotaur", [f"llm:busy@{fake.url},time=20", "random"], 1, seed=5)
    assert time.monotonic() - started < 5
    assert "HTTP 429" in caught.value.reason and "waiting 3.6e+03 s to try again would pass the move's 20 s" \
        in caught.value.reason


def test_retry_after_reads_seconds_and_http_dates():
    from tavernzoo.agents.llm import retry_after_seconds

    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None


def test_an_endpoints_limits_are_shared_and_a_wait_past_the_deadline_fails_at_once():
    import threading

    from tavernzoo.agents.llm import EndpointLimit, endpoint_limit

    def timeout():
        return BotFailure("timeout", "no room")

    limit = EndpointLimit(rpm=2)
    deadline = time.monotonic() + 30
    limit.acquire(deadline, timeout)
    limit.release()
    limit.acquire(deadline, timeout)
    limit.release()
    started = time.monotonic()
    with pytest.raises(BotFailure):  # the minute's two are spent until after the deadline: refused at once
        limit.acquire(deadline, timeout)
    assert time.monotonic() - started < 1
    one = EndpointLimit(concurrency=1)
    one.acquire(time.monotonic() + 5, timeout)
    threading.Timer(0.2, one.release).start()  # the request in flight ends: the second goes
    one.acquire(time.monotonic() + 5, timeout)
    with pytest.raises(BotFailure):
        one.acquire(time.monotonic() + 0.2, timeout)
    # Every seat naming one endpoint shares one limit, the stricter of what they ask.
    first = endpoint_limit(parse_llm_spec("llm:a@http://127.0.0.1:9/v1,rpm=60,concurrency=4"))
    second = endpoint_limit(parse_llm_spec("llm:b@http://127.0.0.1:9/v1,rpm=30"))
    assert first is second and (first.rpm, first.concurrency) == (30, 4)
    assert endpoint_limit(parse_llm_spec("llm:a@http://127.0.0.1:9/v1")) is None


def test_seats_sharing_a_concurrency_limit_never_overlap_their_requests(fake):
    import threading

    from tavernzoo.agents.llm import ChatClient

    spec = parse_llm_spec(f"llm:late@{fake.url},concurrency=1,structured=off,time=20")
    clients = [ChatClient(spec) for _ in range(3)]
    spans = []

    def ask(client):
        started = time.monotonic()
        client.complete([{"role": "user", "content": "x"}], time.monotonic() + 20, {})
        spans.append((started, time.monotonic()))

    threads = [threading.Thread(target=ask, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ends = sorted(end for _, end in spans)
    assert ends[2] - ends[0] >= 1.9  # one at a time: the fake thinks 1 s each


def test_reasoning_settings_are_sent_as_named_and_temperature_none_is_left_out(fake):
    fake.requests.clear()
    play_match("tiny_minotaur", [f"llm:first@{fake.url},max_completion_tokens=500,temperature=none,"
                                 "reasoning_effort=low,thinking_budget=256", "random"], 1, seed=2)
    body = fake.requests[0]
    assert body["max_completion_tokens"] == 500 and "max_tokens" not in body and "temperature" not in body
    assert body["reasoning_effort"] == "low" and body["thinking"] == {"type": "enabled", "budget_tokens": 256}
    fake.requests.clear()
    play_match("tiny_minotaur", [f"llm:first@{fake.url}", "random"], 1, seed=2)
    body = fake.requests[0]
    assert body["max_tokens"] == 64 and body["temperature"] == 0
    assert not {"max_completion_tokens", "reasoning_effort", "thinking"} & set(body)


def test_a_thinking_model_is_read_from_its_last_action_line_only(fake):
    from tavernzoo.agents.llm import action_line

    assert action_line("<think>ACTION: 9</think>\nhmm\nACTION: pass\n") == (" pass", "")
    assert action_line("ACTION: 2\nthen again, maybe not")[0] is None
    result = play_match("tiny_minotaur", [f"llm:think@{fake.url},think=on", "random"], 1, seed=2)
    stats = result.rows[0].bot_stats
    assert stats["illegal"] == 0 and stats["reasoning_tokens"] == 3 * stats["requests"] > 0
    fake.requests.clear()
    with pytest.raises(BotFailure, match="last line must be ACTION:"):
        play_match("tiny_minotaur", [f"llm:thinkbad@{fake.url},think=on", "random"], 1, seed=2)
    body = fake.requests[0]
    assert "response_format" not in body and body["max_tokens"] == 2048
    assert "ACTION: attack:regular" in body["messages"][0]["content"]


@pytest.mark.parametrize(("spec", "message"), [
    ("llm:m@http://h/v1,max_tokens=5,max_completion_tokens=5", "not both"),
    ("llm:m@http://h/v1,think=on,structured=on", "think=on needs structured=off"),
    ("llm:m@http://h/v1,reasoning_effort=max", "valid: minimal, low, medium, high"),
    ("llm:m@http://h/v1,temperature=hot", "from 0.0 to 2.0 or none"),
    ("llm:m@http://h/v1,retries=11", "retries='11' must be a int from 0 to 10"),
    ("llm:m@http://h/v1,rpm=-1", "rpm='-1'"),
])
def test_bad_real_api_options_are_refused_with_one_sentence(spec, message):
    with pytest.raises(ValueError, match="bot spec") as caught:
        parse_llm_spec(spec)
    assert message in str(caught.value)


# --- records -------------------------------------------------------------------------------------------------


def test_records_carry_the_version_the_harness_hash_the_model_and_optionally_the_transcript(fake, monkeypatch,
                                                                                          tmp_path):
    from tavernzoo.agents.llm import LLMBot

    secret = "sk-transcript-secret"
    monkeypatch.setenv(DEFAULT_KEY_ENV, secret)
    play_match("tiny_minotaur", [f"llm:think@{fake.url},think=on,transcript=on", "random"], 1, seed=2,
               records_path=tmp_path / "r.jsonl")
    record = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    stats = next(item for item in record["bot_stats"] if item)
    assert stats["model"] == "think" and stats["model_id"] == "fake-model-2"
    assert len(stats["harness"]) == 16 and stats["tavernzoo"]
    transcript = stats["transcript"]
    assert "## Rules" in transcript[0]["system"]
    moves = [entry for entry in transcript if "move" in entry]
    assert len(moves) == stats["requests"] and moves[0]["answer"].endswith("ACTION: 1")
    assert moves[0]["reasoning"].startswith("ACTION: 2 would be wrong")  # kept, never read for the action
    assert secret not in (tmp_path / "r.jsonl").read_text()
    # The hash follows what the model is shown and how it is read, not the model or the server.
    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})

    def harness(spec, options=config):
        return LLMBot(options, 1, spec, game).harness_hash()

    same = harness("llm:a@http://h/v1")
    assert same == harness("llm:b@http://other/v1,temperature=1,seed=4")
    assert same != harness("llm:a@http://h/v1,view=full")
    assert same != harness("llm:a@http://h/v1", game.make_config({"num_players": 3, "starting_hp": 9}))
    plain = play_match("tiny_minotaur", [f"llm:first@{fake.url}", "random"], 1, seed=2)
    assert "transcript" not in plain.rows[0].bot_stats  # off by default; the counts still sum


def test_a_transcript_is_bounded(fake, monkeypatch):
    import tavernzoo.agents.llm as llm

    monkeypatch.setattr(llm, "MAX_TRANSCRIPT_CHARS", 20_000)
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    bots = [load_bot("random", game, config, seed=other) for other in range(3)]
    bots[1] = load_bot(f"llm:first@{fake.url},transcript=on", game, config, seed=1)
    record = Table(make_env(game, config), bots, seed=4).play().record
    transcript = record["bot_stats"][1]["transcript"]
    assert len(json.dumps(transcript)) < 21_000 and "cut" in transcript[-1]


# --- a fallback bot ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "options"), [("prose", "structured=off"), ("error503", "retries=0"),
                                                 ("late", "time=0.2")])
def test_with_a_fallback_the_named_bot_moves_instead_of_a_forfeit(fake, model, options, tmp_path):
    settings = make_settings("tiny_minotaur", [f"llm:{model}@{fake.url},{options},fallback=heuristic", "random"],
                             2, seed=1)
    results = run_tournament(settings, tmp_path / "t")
    assert results["forfeits"] == []
    row = next(row for row in results["leaderboard"] if row["spec"] == settings.bots[0])
    stats = row["bot_stats"]
    assert stats["fallbacks"] == stats["moves"] > 0 and stats["forfeits"] == 0
    for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines():
        from tavernzoo.envs.records import replay

        replay(json.loads(line)["record"])  # the fallback's moves are legal moves of the record


def test_a_bad_fallback_is_refused_in_one_sentence(fake):
    with pytest.raises(ValueError, match="fallback='llm:x@http://h/v1' must name a bot that needs no model"):
        parse_llm_spec("llm:m@http://h/v1,fallback=llm:x@http://h/v1")
    with pytest.raises(ValueError, match="fallback=nosuchbot") as caught:
        load_bot(f"llm:first@{fake.url},fallback=nosuchbot", "tiny_minotaur")
    assert "\n" not in str(caught.value)
