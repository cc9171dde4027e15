"""The web app's server side: its API, what a player's page may receive, bounds, concurrency, bot check."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tavernzoo.envs import games
from tavernzoo.envs.core import describe_options
from tavernzoo.envs.records import replay
from tavernzoo.eval.compliance import check_program
from tavernzoo.web.app import Limits, create_app
from tavernzoo.web.server import ServerThread
from tavernzoo.web.tables import Store

FIXTURES = Path(__file__).parent / "fixtures"
GOOD_BOT = f"cmd:{sys.executable} {FIXTURES / 'protocol_random_bot.py'}"
CRASHING_BOT = f"cmd:{sys.executable} {FIXTURES / 'broken_bot.py'} crash"
SMALL = {"minefield": {"num_players": 3}, "ministeel": {"num_players": 3}, "wyvern": {"num_players": 3},
         "tiny_minotaur": {}}


def with_seat_tokens(client: TestClient) -> TestClient:
    """``client`` acting as the page does: each table it makes answers with its seat's token, which every later
    request about that table carries (the table id alone plays no seat)."""
    tokens: dict[str, str] = {}

    def send_token(request):
        found = re.match(r"/api/tables/([\w-]+)", request.url.path)
        if found and found[1] in tokens and "x-table-token" not in request.headers:
            request.headers["X-Table-Token"] = tokens[found[1]]

    def keep_token(response):
        if response.request.method == "POST" and response.status_code == 201:
            response.read()
            made = response.json()
            if isinstance(made, dict) and "token" in made:
                tokens[made["id"]] = made["token"]

    client.event_hooks = {"request": [send_token], "response": [keep_token]}
    client.tokens = tokens
    return client


@pytest.fixture
def client():
    with TestClient(create_app(hosts=("testserver",))) as client:
        yield with_seat_tokens(client)


@pytest.fixture
def local_client():
    with TestClient(create_app(hosts=("testserver",), allow_local=True)) as client:
        yield with_seat_tokens(client)


def wait_for(client, table_id, statuses=("your_turn", "over")):
    """The table's summary once it waits for the person or is over (bots think in a thread)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        summary = client.get(f"/api/tables/{table_id}").json()
        if summary["status"] in statuses:
            return summary
        time.sleep(0.01)
    raise AssertionError(f"table {table_id} never reached {statuses}")


def new_table(client, game, seats, seed=5, config=None):
    response = client.post("/api/tables", json={"game": game, "config": SMALL[game] if config is None else config,
                                                "seats": seats, "seed": seed})
    assert response.status_code == 201, response.text
    return response.json()


def hidden_information_of_others(document, you):
    """Every piece of another seat's hidden information found in a JSON document sent to seat ``you``."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            seat = node.get("seat")
            if "hand" in node and isinstance(seat, int) and seat != you:
                found.append(f"{path}: seat {seat}'s hand")
            if path.endswith("pick") and isinstance(seat, int) and seat != you and "cards" in node:
                found.append(f"{path}: the cards offered to seat {seat}")
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(document, "$")
    return found


def play_out(client, table, choose=lambda legal: legal[0]):
    """Play the person's seat to the end, checking every response; returns (summary, frames seen)."""
    you = table["human"]
    since, frames = -1, []
    while True:
        summary = wait_for(client, table["id"])
        assert "seed" not in summary or summary["status"] == "over"  # the seed would give away the deck
        while True:
            reply = client.get(f"/api/tables/{table['id']}/frames", params={"since": since}).json()
            assert not hidden_information_of_others(reply, you)
            if not reply["frames"]:
                break
            frames += reply["frames"]
            since = frames[-1]["step"]
        if summary["status"] == "over":
            return summary, frames
        record = client.get(f"/api/tables/{table['id']}/record")
        assert record.status_code == 409 and "once the game is over" in record.json()["error"]
        view = frames[-1]["view"]
        assert view["you"] == you and view["legal_actions"]
        assert set(frames[-1]["descriptions"]) == set(view["legal_actions"])
        response = client.post(f"/api/tables/{table['id']}/act", json={"action": choose(view["legal_actions"]),
                                                                        "step": since})
        assert response.status_code == 200, response.text


def test_the_games_listing_is_the_metadata_of_tavernzoo_games(client):
    listing = {entry["name"]: entry for entry in client.get("/api/games").json()["games"]}
    assert set(listing) == set(games())
    for name, game in games().items():
        assert listing[name]["options"] == json.loads(json.dumps(describe_options(game.rules.Config)))
        assert {"random", "heuristic", f"zoo:{name}"} <= set(listing[name]["bots"])


def test_the_games_listing_holds_each_cards_text_in_words(client):
    from tavernzoo.envs.wyvern.decks import CATALOG

    listing = {game["name"]: game for game in client.get("/api/games").json()["games"]}
    wyvern = listing["wyvern"]["cards"]
    assert set(wyvern) == {card.key for card in CATALOG}
    assert not [text for text in wyvern.values() if re.search(r"[a-z]_[a-z]", text) or not text]
    assert "the victim loses their next turn" in wyvern["paralysis"]
    assert re.fullmatch(r"level \d+ monster; beaten: .+; Bad Stuff: .+", wyvern["goblin"])
    assert listing["ministeel"]["cards"]["dagger"] == "Attack for 1 HP."
    assert listing["minefield"]["cards"] == {}
    assert listing["tiny_minotaur"]["cards"]["heal"].startswith("answer a hit: heal 20 HP")
    # A table's own options change its cards' texts.
    table = new_table(client, "tiny_minotaur", ["human", "random"], config={"heal_amount": 35})
    cards = client.get(f"/api/tables/{table['id']}/cards").json()["cards"]
    assert cards["heal"].startswith("answer a hit: heal 35 HP") and cards["regular"] == "attack: 10 damage, always hits"


@pytest.mark.parametrize("game", sorted(SMALL))
def test_a_whole_game_against_bots_sends_only_the_players_own_view(client, game):
    seats = SMALL[game].get("num_players", 2)
    table = new_table(client, game, ["heuristic", "human"] + ["heuristic"] * (seats - 2), seed=11)
    assert table["human"] == 1 and "seed" not in table
    summary, frames = play_out(client, table, choose=lambda legal: legal[-1])
    assert all(frame["view"]["agent"] == "player_1" for frame in frames)
    assert not frames[-1]["view"]["legal_actions"]
    result = summary["result"]
    assert result["verdict"] in ("you win", "you lose", "you share the win") and result["forfeit"] is None
    assert summary["seed"] == "11"  # a string: exact in a browser however large
    record = client.get(f"/api/tables/{table['id']}/record")
    assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
    _, state = replay(record.json())  # the downloaded record replays to its result
    assert record.json()["returns"] == result["returns"]
    assert client.get(f"/api/tables/{table['id']}/frames", params={"seat": 0}).status_code == 403
    rematch = client.post(f"/api/tables/{table['id']}/rematch", json={})
    assert rematch.status_code == 201 and rematch.json()["id"] != table["id"]
    assert [s["player"] for s in rematch.json()["seats"]] == [s["player"] for s in summary["seats"]]


def test_a_search_bot_takes_a_seat_at_the_page(client):
    # mcts needs its seat's information state: the page's table hands it over as every host does.
    table = new_table(client, "ministeel", ["mcts:20,seed=1", "human", "heuristic"], seed=4)
    summary, _ = play_out(client, table, choose=lambda legal: legal[0])
    assert summary["result"]["forfeit"] is None
    assert summary["result"]["verdict"] in ("you win", "you lose", "you share the win")


def test_a_wyvern_player_sees_only_their_own_hand(client):
    table = new_table(client, "wyvern", ["human", "heuristic", "heuristic"], seed=3)
    wait_for(client, table["id"])
    view = client.get(f"/api/tables/{table['id']}/frames").json()["frames"][-1]["view"]
    assert len(view["hand"]) == view["players"][0]["hand_size"]
    assert all("hand" not in player for player in view["players"])


def test_a_seed_past_2_53_is_kept_exact_both_ways(client, tmp_path):
    # A browser's numbers round past 2^53: the page sends the digits and reads them back as a string, so the
    # deal a person saw is the deal they retype.
    big = 2**60 + 1
    table = new_table(client, "tiny_minotaur", ["heuristic", "random"], seed=str(big))
    summary = wait_for(client, table["id"], statuses=("over",))
    assert summary["seed"] == str(big)
    record = client.get(f"/api/tables/{table['id']}/record").json()
    assert record["seed"] == big
    replayed = client.post("/api/replays", content=json.dumps(record).encode()).json()
    assert replayed["games"][0]["seed"] == str(big)
    for bad in ("12x", "-1", str(2**63), 2**63, "", None):
        reply = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", "random"], "seed": bad})
        if bad in ("", None):  # a fresh seed
            assert reply.status_code == 201
        else:
            assert reply.status_code == 400 and reply.json()["error"].startswith("'seed' must be a whole number")


def test_moves_out_of_turn_and_illegal_moves_are_refused(client):
    table = new_table(client, "tiny_minotaur", ["human", "heuristic"], seed=2)
    wait_for(client, table["id"])
    frames = client.get(f"/api/tables/{table['id']}/frames").json()["frames"]
    step = frames[-1]["step"]
    bad = client.post(f"/api/tables/{table['id']}/act", json={"action": "fly", "step": step})
    assert bad.status_code == 400 and re.search("'fly' is not legal now; legal: ", bad.json()["error"])
    stale = client.post(f"/api/tables/{table['id']}/act", json={"action": "pass", "step": step - 1})
    assert stale.status_code == 409
    assert client.get("/api/tables/nope").status_code == 404


@pytest.mark.parametrize("body,status,words", [
    ({"game": "chess", "seats": ["human"]}, 400, "unknown game 'chess'; valid: "),
    ({"game": "tiny_minotaur", "seats": ["human"]}, 400, "has 2 seats; got 1"),
    ({"game": "tiny_minotaur", "seats": ["human", "human"]}, 400, "at most one seat may be 'human'"),
    ({"game": "tiny_minotaur", "seats": ["human", "wizard"]}, 400, "'wizard' is not a bot this page may seat"),
    ({"game": "tiny_minotaur", "seats": ["human", "heuristic"], "seed": 1.5}, 400, "'seed' must be a whole number"),
    ({"game": "tiny_minotaur", "seats": ["human", "heuristic"], "config": {"colour": 1}}, 400, "unknown option"),
    ({"game": "tiny_minotaur", "seats": ["human", GOOD_BOT]}, 400, "server started with --allow-local"),
    ({"game": "tiny_minotaur", "seats": ["human", "/etc/passwd"]}, 400, "--allow-local"),
    # Specs nested in a search bot's options are held to the same rule.
    ({"game": "tiny_minotaur", "seats": ["human", "mcts:2,rollout=cmd:true --x"]}, 400, "--allow-local"),
    ({"game": "tiny_minotaur", "seats": ["human", "mcts:2,prior=/etc/passwd"]}, 400, "--allow-local"),
    ({"game": "tiny_minotaur", "seats": ["human", "mcts:2,value=/etc/passwd"]}, 400, "--allow-local"),
    ({"game": "tiny_minotaur", "seats": ["human", "mcts:2,others=/etc/passwd"]}, 400, "--allow-local"),
    ({"game": "tiny_minotaur", "seats": ["human", "heuristic"], "config": {"ruleset": "/etc/hostname"}}, 400,
     "would be read as a file on the server"),
    ({"game": "tiny_minotaur", "seats": ["human", "heuristic"], "config": {"ruleset": ["standard"]}}, 400,
     "ruleset must be a string"),
    ({"game": "tiny_minotaur", "seats": ["human", "heuristic"], "config": {"ruleset": {"a": 1}}}, 400,
     "ruleset must be a string"),
])
def test_bad_table_requests_get_one_clear_error(client, body, status, words):
    response = client.post("/api/tables", json=body)
    assert response.status_code == status and words in response.json()["error"], response.text


# Paths a request might name: ones that exist (a file, a /proc file, a folder) and one that does not. The
# answers must not differ but for the path quoted back, or the server is a file-existence oracle.
SERVER_PATHS = ["/etc/passwd", "/proc/self/environ", "/no/such/file.toml", "/tmp", "README.md"]


def _answers(client, requests):
    """Status and error of each request (``(method, url, kwargs)``) with the request's own path blanked."""
    answers = []
    for path, (method, url, kwargs) in requests:
        reply = client.request(method, url, **kwargs)
        answers.append((reply.status_code, reply.json()["error"].replace(repr(path), "PATH")))
    return answers


def _assert_no_oracle(answers, words):
    assert all(status == 400 for status, _ in answers), answers
    assert len({error for _, error in answers}) == 1, answers  # the same answer whether the path exists or not
    error = answers[0][1]
    assert words in error and "--allow-local" in error
    for leak in ("root:", "line ", "column", "exist", "TOML", "/tmp", "tavernzoo-web"):
        assert leak not in error, error


@pytest.fixture
def quiet_client():
    """A client that answers server errors as responses (a 500 would show), not as raised exceptions."""
    with TestClient(create_app(hosts=("testserver",)), raise_server_exceptions=False) as client:
        yield with_seat_tokens(client)


@pytest.mark.parametrize("game,config", [
    ("wyvern", lambda path: {"num_players": 3, "decks": ["adventurer", path, "random"]}),
    ("tiny_minotaur", lambda path: {"ruleset": path}),
])
def test_a_table_never_reads_a_server_file_named_by_the_request(quiet_client, game, config):
    seats = ["human"] + ["random"] * (2 if game == "wyvern" else 1)
    requests = [(path, ("POST", "/api/tables", {"json": {"game": game, "config": config(path), "seats": seats}}))
                for path in SERVER_PATHS]
    _assert_no_oracle(_answers(quiet_client, requests), "would be read as a file on the server")


@pytest.mark.parametrize("spec", ["{}", "mcts:2,prior={}", "mcts:2,rollout={}", "{}@sample"])
def test_a_bot_spec_never_names_a_server_file(quiet_client, spec):
    requests = [(spec.format(path), ("POST", "/api/tables", {"json": {
        "game": "tiny_minotaur", "seats": ["human", spec.format(path)]}})) for path in SERVER_PATHS]
    _assert_no_oracle(_answers(quiet_client, requests), "is not a bot this page may seat")


def test_a_replayed_record_never_reads_a_server_file(quiet_client, tmp_path):
    from tavernzoo.eval.match import play_match

    path = tmp_path / "games.jsonl"
    play_match("tiny_minotaur", ["heuristic", "random"], 1, seed=1, records_path=path)
    record = json.loads(path.read_text().splitlines()[0])
    requests = []
    for server_path in SERVER_PATHS:
        forged = {**record, "config": {**record["config"], "ruleset": server_path}}
        requests.append((server_path, ("POST", "/api/replays", {"content": json.dumps(forged).encode()})))
    _assert_no_oracle(_answers(quiet_client, requests), "would be read as a file on the server")
    wyvern = tmp_path / "wyvern.jsonl"
    play_match("wyvern", ["random"] * 2, 1, seed=1, config={"num_players": 2, "max_steps": 50}, records_path=wyvern)
    forged = json.loads(wyvern.read_text().splitlines()[0])
    forged["config"]["decks"] = ["adventurer", "/etc/passwd"]
    reply = quiet_client.post("/api/replays", content=json.dumps(forged).encode())
    assert reply.status_code == 400 and "decks[1]='/etc/passwd' would be read" in reply.json()["error"]


def test_a_rematch_is_held_to_the_same_rule(quiet_client, tmp_path):
    from tavernzoo.envs import get_game
    from tavernzoo.envs.wyvern.decks import bundled_decks

    table = new_table(quiet_client, "wyvern", ["human", "random", "random"])
    # A table whose config names a deck file (as one started under --allow-local would): its rematch on a
    # server without the flag is refused like a new table.
    adventurer = bundled_decks()["adventurer"]
    deck = tmp_path / "deck.toml"
    deck.write_text('name = "Mine"\nsummon = "goblin"\n[cards]\n'
                    + "".join(f"{card} = {count}\n" for card, count in adventurer["cards"].items()))
    stored = quiet_client.app.state.web.tables.get(table["id"])
    stored.config = get_game("wyvern").make_config(num_players=3, decks=[str(deck)] * 3)
    reply = quiet_client.post(f"/api/tables/{table['id']}/rematch")
    assert reply.status_code == 400 and "would be read as a file on the server" in reply.json()["error"]


def test_server_files_are_read_with_allow_local(local_client, tmp_path):
    from tavernzoo.envs.tiny_minotaur import rules

    ruleset = tmp_path / "house.toml"
    ruleset.write_text((Path(rules.__file__).parent / "ruleset.toml").read_text())
    table = new_table(local_client, "tiny_minotaur", ["human", "heuristic"], config={"ruleset": str(ruleset)})
    assert table["status"] in ("starting", "bots", "your_turn")


def test_requests_are_bounded_and_must_be_json_from_this_host(client):
    big = client.post("/api/tables", content=b"{" + b" " * (Limits.body_bytes + 1),
                      headers={"Content-Type": "application/json"})
    assert big.status_code == 413
    plain = client.post("/api/tables", content=b"{}", headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and "Content-Type: application/json" in plain.json()["error"]
    assert client.get("/api/games", headers={"Host": "evil.example"}).status_code == 400
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]


def test_the_page_loads_nothing_from_elsewhere():
    static = Path(__file__).parents[1] / "web" / "static"
    for path in static.iterdir():
        text = path.read_text()
        assert not re.search(r"https?:|[\"'(]//", text), path  # no absolute or protocol-relative address


def test_a_crashing_program_forfeits_and_the_table_says_so(local_client):
    table = new_table(local_client, "tiny_minotaur", ["human", CRASHING_BOT], seed=4, config={})
    summary, frames = play_out(local_client, table)
    forfeit = summary["result"]["forfeit"]
    assert forfeit["seat"] == 1 and forfeit["kind"] == "crash" and "crashing on purpose" in forfeit["reason"]
    assert summary["result"]["verdict"] == "you win" and "forfeits: crash" in frames[-1]["note"]
    # scored by the one tally (eval/tally.py score_game), as a tournament's game line: 0 and the last place
    assert (summary["result"]["scores"], summary["result"]["places"]) == ([1.0, 0.0], [1, 2])
    assert local_client.get(f"/api/tables/{table['id']}/record").json()["forfeit"]["seat"] == 1


def test_a_tables_record_carries_the_llm_bots_counts(local_client):
    """As in tournaments' games.jsonl: the record of a game with an llm: bot says what it cost."""
    from llm_fake import FakeLLM

    server = FakeLLM()
    try:
        table = new_table(local_client, "tiny_minotaur", ["human", f"llm:first@{server.url}"], seed=4, config={})
        play_out(local_client, table)
        record = local_client.get(f"/api/tables/{table['id']}/record").json()
    finally:
        server.close()
    person, bot = record["bot_stats"]
    assert person is None  # the person's seat counts nothing
    assert bot["moves"] >= 1 and bot["requests"] >= bot["moves"] and bot["illegal"] == 0
    plain = new_table(local_client, "tiny_minotaur", ["human", "heuristic"], seed=4, config={})
    play_out(local_client, plain)
    assert "bot_stats" not in local_client.get(f"/api/tables/{plain['id']}/record").json()


def test_a_watched_table_shows_any_seat_and_streams_its_progress(local_client):
    table = new_table(local_client, "ministeel", ["heuristic", "random", GOOD_BOT], seed=8)
    assert table["human"] is None
    summary = wait_for(local_client, table["id"], ("over",))
    assert summary["steps"] > 2 and summary["result"]["verdict"] is None
    hands = {}
    for seat in range(3):
        frames = local_client.get(f"/api/tables/{table['id']}/frames", params={"since": 0, "seat": seat}).json()
        view = frames["frames"][0]["view"]
        assert frames["frames"][0]["step"] == 1 and view["you"] == seat
        hands[seat] = view["players"][seat]["hand"]
    assert len(hands) == 3
    with local_client.stream("GET", f"/api/tables/{table['id']}/events") as events:
        lines = [line for line in events.iter_lines() if line.startswith("data:")]
    assert json.loads(lines[-1][len("data:"):])["status"] == "over"


def test_a_records_file_replays_step_by_step(client, tmp_path):
    from tavernzoo.eval.match import play_match

    path = tmp_path / "games.jsonl"
    play_match("ministeel", ["heuristic", "random"], 2, seed=1, config={"num_players": 2}, records_path=path)
    tournament_line = json.dumps({"deal": 0, "record": json.loads(path.read_text().splitlines()[0]), "forfeit": None})
    body = path.read_text() + tournament_line + "\n"
    reply = client.post("/api/replays", content=body.encode())
    assert reply.status_code == 201, reply.text
    replay_id, listing = reply.json()["id"], reply.json()["games"]
    assert len(listing) == 3 and listing[0]["seats"] == ["heuristic", "random"]
    last = listing[0]["steps"] - 1
    start = client.get(f"/api/replays/{replay_id}/0", params={"step": 0, "seat": 1}).json()
    end = client.get(f"/api/replays/{replay_id}/0", params={"step": last, "seat": 0}).json()
    back = client.get(f"/api/replays/{replay_id}/0", params={"step": 1, "seat": 1}).json()
    assert start["note"] is None and start["view"]["you"] == 1 and "hand" in start["view"]["players"][1]
    assert end["view"]["phase"] == "over" and back["note"].startswith("player_")
    assert client.get(f"/api/replays/{replay_id}/0", params={"step": last + 1}).status_code == 400
    assert client.get(f"/api/replays/{replay_id}/9").status_code == 404
    bad = client.post("/api/replays", content=b'{"format": "something else"}\n')
    assert bad.status_code == 400 and "not a tavernzoo game record" in bad.json()["error"]
    assert client.post("/api/replays", content=b"[" * 200_000).status_code == 400  # too deep, not a crash
    # A forged step (no seat, or a seat not to act) is refused when the file is opened, not a server error.
    forged = json.loads(path.read_text().splitlines()[0])
    forged["actions"][0] = {"action": forged["actions"][0]["action"]}
    reply = client.post("/api/replays", content=json.dumps(forged).encode())
    assert reply.status_code == 400 and "step 1 (player_? plays" in reply.json()["error"]


def test_a_step_outside_the_replay_is_named_as_asked_with_the_range(client, tmp_path):
    from tavernzoo.eval.match import play_match

    path = tmp_path / "games.jsonl"
    play_match("tiny_minotaur", ["heuristic", "random"], 1, seed=1, records_path=path)
    reply = client.post("/api/replays", content=path.read_bytes()).json()
    last = reply["games"][0]["steps"] - 1
    for step in (999, last + 1, -1):
        frame = client.get(f"/api/replays/{reply['id']}/0", params={"step": step, "seat": 0})
        assert frame.status_code == 400, frame.text
        assert frame.json()["error"].startswith(f"step {step} is not in this game: its steps are 0..{last}")


def test_a_record_with_an_illegal_last_action_is_refused_at_upload(client, tmp_path):
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match
    from tavernzoo.web.tables import Timeline

    path = tmp_path / "games.jsonl"
    play_match("ministeel", ["heuristic", "random"], 2, seed=1, config={"num_players": 2}, records_path=path)
    good, forged = (json.loads(line) for line in path.read_text().splitlines())
    # The last action replaced by one the game has but that is not legal there.
    game = get_game("ministeel")
    before = Timeline(forged, trusted=True).state(len(forged["actions"]) - 1)
    seat = forged["actions"][-1]["seat"]
    legal = {game.action_names(game.make_config(forged["config"]))[a] for a in game.rules.legal_actions(before)}
    illegal = next(name for name in game.action_names(game.make_config(forged["config"])) if name not in legal)
    forged["actions"][-1]["action"] = illegal
    steps = len(forged["actions"])
    reply = client.post("/api/replays", content=json.dumps(forged).encode())
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert f"step {steps} (player_{seat} plays {illegal!r}) cannot be played" in error and "\n" not in error
    # In a file of several games, the game is named too.
    reply = client.post("/api/replays", content=(json.dumps(good) + "\n" + json.dumps(forged)).encode())
    assert reply.status_code == 400 and "game 2 of 2: step" in reply.json()["error"]


def test_each_frame_carries_the_events_it_adds_and_identical_events_are_all_kept(client, tmp_path):
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match
    from tavernzoo.eval.play import event_mark
    from tavernzoo.web.tables import Timeline

    path = tmp_path / "games.jsonl"
    # Seed 3: player_0 drinks a potion at two steps running; both are told.
    play_match("ministeel", ["heuristic", "heuristic"], 1, seed=3, config={"num_players": 2}, records_path=path,
               seeding="v1")  # the deal this test was written against
    record = json.loads(path.read_text().splitlines()[0])
    reply = client.post("/api/replays", content=json.dumps(record).encode()).json()
    timeline = Timeline(record)
    frames = [client.get(f"/api/replays/{reply['id']}/0", params={"step": step, "seat": 0}).json()
              for step in range(timeline.steps)]
    told = [line for frame in frames for line in frame["events"]]
    assert any(told[i] == told[i + 1] == "player_0 drinks a potion" for i in range(len(told) - 1)), told
    # The whole history: each step's events (the game's own events hook) once, in order, also when the
    # frames are asked for out of order.
    game, expected = get_game("ministeel"), []
    for step in range(timeline.steps):
        steps, lines = event_mark(game, timeline.state(step), 0)
        if step == 0 or steps != event_mark(game, timeline.state(step - 1), 0)[0]:
            expected += lines
    assert told == expected
    middle = timeline.steps // 2
    assert Timeline(record).frame(middle, 0)["events"] == frames[middle]["events"]


def test_moves_are_told_in_words_not_action_names(client, tmp_path):
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match

    # A bot's move at a person's table: "player_1 (heuristic): heal", not "plays react:heal".
    names = set(get_game("tiny_minotaur").action_names(get_game("tiny_minotaur").make_config()))
    table = new_table(client, "tiny_minotaur", ["human", "heuristic"], seed=2)
    _, frames = play_out(client, table, choose=lambda legal: legal[-1])
    bot_notes = [frame["note"] for frame in frames if frame["note"] and frame["note"].startswith("player_1")]
    assert bot_notes and not [note for note in bot_notes if note.split(": ")[-1] in names or " plays " in note]
    # A replay's steps: "player_0: hook rope at player_1", not "play:hook_rope>seat+1".
    path = tmp_path / "games.jsonl"
    play_match("ministeel", ["heuristic", "random"], 1, seed=1, config={"num_players": 2}, records_path=path)
    reply = client.post("/api/replays", content=path.read_bytes()).json()
    notes = [client.get(f"/api/replays/{reply['id']}/0", params={"step": step, "seat": 0}).json()["note"]
             for step in range(1, reply["games"][0]["steps"])]
    assert not [note for note in notes if re.search(r"\w[:>]\w|[a-z]_[a-z]", note)], notes


def test_minefield_places_follow_the_order_players_went_out(client):
    # Every loser is paid alike ("winner" rewards); the last one out still finished second, the first one out last.
    from tavernzoo.web.tables import Timeline

    table = new_table(client, "minefield", ["random"] * 4, seed=3, config={"num_players": 4})
    summary = wait_for(client, table["id"], statuses=("over",))
    result = summary["result"]
    record = client.get(f"/api/tables/{table['id']}/record").json()
    state = Timeline(record, trusted=True).state(len(record["actions"]))
    out = list(state.out_order)
    assert len(out) == 3 and len(set(result["returns"][seat] for seat in out)) == 1
    assert [result["places"][seat] for seat in out] == [4, 3, 2]
    assert result["places"][result["scores"].index(1.0)] == 1


def test_a_person_at_minefield_gets_every_round_in_the_frames(client):
    table = new_table(client, "minefield", ["human", "random", "random"], seed=2)
    summary, frames = play_out(client, table)
    told = [line for frame in frames for line in frame["events"]]
    rounds = [line for line in told if re.fullmatch(r"round \d+:", line)]
    assert rounds == [f"round {n}:" for n in range(1, len(rounds) + 1)] and len(rounds) >= 2
    assert any("mine roll: d10" in line for line in told)
    # The person's own pick is echoed with the round it was played in, in words.
    notes = [frame["note"] for frame in frames if frame["note"]]
    assert notes and all(re.fullmatch(r"you chose: attack player_\d+", note) for note in notes), notes
    assert [frame for frame in frames if frame["note"]][0]["events"][0] == "round 1:"


def test_an_uploaded_exported_bot_takes_a_seat(client, tmp_path):
    pytest.importorskip("onnx")
    import base64

    from tavernzoo.agents.onnx_bot import ZOO_DIR

    manifest = json.loads((ZOO_DIR / "tiny_minotaur.json").read_text())
    onnx = base64.b64encode((ZOO_DIR / "tiny_minotaur.onnx").read_bytes()).decode()
    reply = client.post("/api/uploads", json={"manifest": manifest, "onnx": onnx})
    assert reply.status_code == 201 and reply.json()["env"] == "tiny_minotaur_v1"
    table = new_table(client, "tiny_minotaur", ["human", reply.json()["spec"]], seed=1)
    assert wait_for(client, table["id"])["status"] in ("your_turn", "over")
    tampered = client.post("/api/uploads", json={"manifest": manifest, "onnx": base64.b64encode(b"xx").decode()})
    assert tampered.status_code == 400 and "SHA-256" in tampered.json()["error"]
    assert str(client.app.state.web.upload_dir) not in tampered.json()["error"]  # no server path
    assert "tavernzoo-web-" not in tampered.json()["error"]
    # Uploads are bounded on disk: past the limit the oldest one and its folder are gone.
    web = client.app.state.web
    keys = [client.post("/api/uploads", json={"manifest": manifest, "onnx": onnx}).json()["spec"]
            for _ in range(web.limits.uploads + 1)]
    assert len(list(web.upload_dir.iterdir())) == web.limits.uploads
    gone = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", reply.json()["spec"]]})
    assert gone.status_code == 400 and "upload it again" in gone.json()["error"]
    assert new_table(client, "tiny_minotaur", ["human", keys[-1]], seed=1)["human"] == 0


def test_stores_are_bounded_and_expire():
    dropped = []
    store = Store(2, 3600, dropped.append)
    for key in "abc":
        store.add(key, key.upper())
    assert store.get("a") is None and store.get("c") == "C" and dropped == ["A"]
    stale = Store(5, 0.0, dropped.append)
    stale.add("x", "X")
    stale.add("y", "Y")  # adding expires what has outlived its time (here: at once)
    assert stale.get("x") is None and "X" in dropped


def test_a_new_table_never_evicts_a_game_in_play():
    class Few(Limits):
        tables = 2

    with TestClient(create_app(hosts=("testserver",), limits=Few)) as client:
        with_seat_tokens(client)
        first = new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        second = new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        wait_for(client, first["id"]), wait_for(client, second["id"])
        # The first table is the least recently used, but its game is in play: the third is refused.
        client.get(f"/api/tables/{second['id']}")
        third = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", "heuristic"]})
        assert third.status_code == 503 and "the server is busy" in third.json()["error"], third.text
        assert client.get(f"/api/tables/{first['id']}").status_code == 200
        # A finished table makes room once its player has the end and the record.
        play_out(client, first)
        assert client.get(f"/api/tables/{first['id']}/record").status_code == 200
        fourth = new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        assert client.get(f"/api/tables/{first['id']}").status_code == 404
        assert client.get(f"/api/tables/{second['id']}").status_code == 200
        assert client.get(f"/api/tables/{fourth['id']}").status_code == 200


@pytest.mark.parametrize("spec,words", [
    ("mcts:sims=999999999", "at most 20000 simulations"),
    ("mcts:999999999", "at most 20000 simulations"),
    ("mcts:time=100000", "at most 2 s"),
    ("mcts:sims=100,time=2.5", "at most 2 s"),
    ("mcts:root=paired,width=40,rollout=heuristic", "width=40"),
])
def test_a_seats_search_is_held_to_the_servers_max_think(client, spec, words):
    """A request names the bot; the operator (--max-think, default 2 s) decides how long it may think."""
    response = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", spec]})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert words in error and "--max-think" in error and "\n" not in error, error


def test_a_search_without_a_time_limit_gets_the_servers_and_a_looser_server_allows_more():
    web = create_app(hosts=("testserver",), max_think=5).state.web
    game = games()["tiny_minotaur"]
    assert web.resolve("mcts:400", game) == "mcts:400,time=5"  # a slow rollout cannot stretch a move either
    assert web.resolve("mcts:sims=50000,time=4", game) == "mcts:sims=50000,time=4"
    with pytest.raises(ValueError, match="at most 50000 simulations"):
        web.resolve("mcts:sims=50001", game)
    with pytest.raises(ValueError, match="--max-think"):
        create_app(max_think=0)


def test_closing_a_table_stops_its_bots_search():
    # The operator allows long searches here, so that a search that did not stop would outlast the join below.
    app = create_app(hosts=("testserver",), max_think=600)
    with TestClient(app) as client:
        with_seat_tokens(client)
        table = new_table(client, "tiny_minotaur", ["mcts:sims=1000000,time=600"] * 2, config={})
        held = app.state.web.tables.get(table["id"])
        wait_for(client, table["id"], statuses=("bots",))
        closed = client.delete(f"/api/tables/{table['id']}")
        assert closed.status_code == 200 and closed.json()["closed"] is True
        held.worker.join(timeout=60)
        assert not held.worker.is_alive(), "the search went on after its table was closed"
        assert client.get(f"/api/tables/{table['id']}").status_code == 404


def test_one_client_cannot_take_every_table():
    class Few(Limits):
        tables = 6
        tables_per_client = 2

    app = create_app(hosts=("testserver",), limits=Few)
    with TestClient(app) as client, TestClient(app, client=("192.0.2.7", 50000)) as other:
        with_seat_tokens(client), with_seat_tokens(other)
        first = new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        third = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", "heuristic"]})
        assert third.status_code == 429, third.text
        assert "you hold 2 tables on this server, the most one client may" in third.json()["error"]
        new_table(other, "tiny_minotaur", ["human", "heuristic"], config={})  # another address has its own
        # A game finished and seen (the end and the record) no longer counts; nor does a closed one.
        play_out(client, first)
        assert client.get(f"/api/tables/{first['id']}/record").status_code == 200
        fourth = new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        assert client.post("/api/tables", json={"game": "tiny_minotaur",
                                                "seats": ["human", "heuristic"]}).status_code == 429
        assert client.delete(f"/api/tables/{fourth['id']}").status_code == 200
        new_table(client, "tiny_minotaur", ["human", "heuristic"], config={})
        # Many requests at once take no more than the quota either: it is checked as each table is kept.
        results = []
        threads = [threading.Thread(target=lambda: results.append(other.post(
            "/api/tables", json={"game": "tiny_minotaur", "seats": ["human", "heuristic"]}).status_code))
            for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert sorted(results) == [201] + [429] * 5, results


def test_a_finished_table_waits_for_its_player_and_a_full_server_says_busy():
    class Few(Limits):
        tables = 2

    with TestClient(create_app(hosts=("testserver",), limits=Few)) as client:
        with_seat_tokens(client)
        first = new_table(client, "tiny_minotaur", ["human", "random"], config={})
        since = -1
        while wait_for(client, first["id"])["status"] != "over":  # played to the end, whose frame is not fetched
            while frames := _frames(client, first["id"], since):
                since, view = frames[-1]["step"], frames[-1]["view"]
            client.post(f"/api/tables/{first['id']}/act", json={"action": view["legal_actions"][0], "step": since})
        second = new_table(client, "tiny_minotaur", ["human", "random"], config={})
        busy = client.post("/api/tables", json={"game": "tiny_minotaur", "seats": ["human", "random"]})
        assert busy.status_code == 503 and "the server is busy" in busy.json()["error"], busy.text
        # The end is still there for its player: the last frame, the result, the record.
        assert client.get(f"/api/tables/{first['id']}/record").status_code == 200
        new_table(client, "tiny_minotaur", ["human", "random"], config={})  # now the finished one makes room
        assert client.get(f"/api/tables/{first['id']}").status_code == 404
        assert client.get(f"/api/tables/{second['id']}").status_code == 200


# --- the real server on loopback ----------------------------------------------------------------------


def test_two_hundred_concurrent_clients_are_all_answered():
    results = []

    def one(number):
        body = json.dumps({"type": "hello", "game": "tiny_minotaur", "session": str(number)}).encode()
        request = urllib.request.Request(url + "bot", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                results.append(json.loads(response.read())["type"])
        except OSError as error:
            results.append(repr(error))

    with ServerThread(create_app(bot="heuristic")) as url:
        threads = [threading.Thread(target=one, args=(n,)) for n in range(200)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert results == ["hello"] * 200


def test_every_finished_game_reaches_its_own_player_under_load():
    """Forty clients on loopback, each playing short games one after another against a small table limit: every
    game finished is seen to its end by its own player (the last frame, the result, the record); a full server
    answers 503 "busy" to a new table, which the client asks again for, and never drops a finished game."""
    class Few(Limits):
        tables = 6
        tables_per_client = 1000  # every client here has the same address

    clients, games_each = 40, 3
    finished, lost, busy_errors = [], [], []
    deadline = time.monotonic() + 600

    def call(method, path, body=None, token=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url + path.lstrip("/"), data=data, method=method,
                                         headers={"Content-Type": "application/json",
                                                  **({"X-Table-Token": token} if token else {})})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def play(number):
        for _ in range(games_each):
            while True:
                status, table = call("POST", "/api/tables", {"game": "tiny_minotaur", "seats": ["human", "random"],
                                                            "seed": number})
                if status != 503 or time.monotonic() > deadline:
                    break
                busy_errors.append(table["error"])
                time.sleep(0.05)
            if status != 201:
                lost.append(f"client {number}: new table {status} {table}")
                return
            since = -1
            while time.monotonic() < deadline:
                status, reply = call("GET", f"/api/tables/{table['id']}/frames?since={since}", token=table["token"])
                if status != 200:
                    lost.append(f"client {number}: frames {status} {reply}")
                    return
                if reply["frames"]:
                    since = reply["frames"][-1]["step"]
                    last = reply["frames"][-1]
                summary = reply["summary"]
                if summary["status"] == "over" and since >= summary["steps"] - 1:
                    status, record = call("GET", f"/api/tables/{table['id']}/record", token=table["token"])
                    if status != 200 or summary["result"]["scores"] is None or last["view"].get("legal_actions"):
                        lost.append(f"client {number}: the end {status} {summary}")
                        return
                    finished.append(number)
                    break
                if summary["status"] == "your_turn" and since == summary["steps"] - 1:
                    status, reply = call("POST", f"/api/tables/{table['id']}/act",
                                         {"action": last["view"]["legal_actions"][0], "step": since}, table["token"])
                    if status != 200:
                        lost.append(f"client {number}: act {status} {reply}")
                        return
                else:
                    time.sleep(0.01)

    with ServerThread(create_app(limits=Few)) as url:
        threads = [threading.Thread(target=play, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(1.0, deadline - time.monotonic()))
    assert not lost, lost[:5]
    assert len(finished) == clients * games_each
    assert all("the server is busy" in error for error in busy_errors), busy_errors[:3]


def test_a_stalled_client_blocks_nobody_and_is_cut_off():
    with ServerThread(create_app(), header_seconds=1.0) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        stalled = socket.create_connection(("127.0.0.1", port), timeout=60)
        stalled.sendall(b"GET /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and never the rest
        with urllib.request.urlopen(url + "api/games", timeout=30) as response:
            assert response.status == 200
        assert stalled.recv(1024) == b""  # the server closed it (the header time-out); bounded by the socket's 60 s
        stalled.close()


def test_the_web_command_serves_the_page_on_loopback():
    process = subprocess.Popen([sys.executable, "-m", "tavernzoo.cli", "web", "--port", "0", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert banner.startswith("tavernzoo web on http://127.0.0.1:"), process.stderr.read()
        url = banner.split(" on ")[1].split()[0]
        with urllib.request.urlopen(url, timeout=30) as response:
            assert b'<script src="/static/app.js">' in response.read()
    finally:
        process.terminate()
        process.wait(timeout=30)


# --- tavernzoo bot check -----------------------------------------------------------------------------


def test_a_correct_program_passes_the_compliance_run():
    report = check_program(GOOD_BOT[len("cmd:"):], ["tiny_minotaur", "minefield"], games_each=2)
    assert not report.violations, report.violations
    assert report.games_played == {"tiny_minotaur_v1": 2, "minefield_v0": 2}
    assert {check.stage for check in report.checks} == {"handshake", "errors", "quit", "games"}


def test_the_handshake_programs_reader_cannot_swallow_the_games_programs_hello(monkeypatch):
    """Issue 47: the compliance run stopped its handshake program by closing that program's stdout from the
    checking thread. A reader about to read still held the descriptor's number, the games' program started
    next was given the same number, and the reader swallowed its hello reply: "no reply to 'hello' within
    30 s" on a loaded machine, however fast the program (this one answers in well under a second even on two
    cores with four busy loops beside it). Here the reader is held up between taking the number and reading
    it, as a thread preempted there is, so the race is met on every run instead of once in a while."""
    import os

    from tavernzoo.agents.external import _pump
    from tavernzoo.eval import compliance

    class HeldUp:
        def __init__(self, stream):
            self.stream = stream

        def read(self, size):
            number = self.stream.fileno()
            before = os.fstat(number).st_ino
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:  # held up until the number is closed (maybe reused), or 0.5 s
                try:
                    if os.fstat(number).st_ino != before:
                        break
                except OSError:
                    time.sleep(0.001)
                    continue
                time.sleep(0.001)
            return os.read(number, size)

        def close(self):
            self.stream.close()

    monkeypatch.setattr(compliance, "_pump", lambda stream, lines, stop: _pump(HeldUp(stream), lines, stop))
    report = check_program(GOOD_BOT[len("cmd:"):], ["tiny_minotaur"], games_each=1, start_timeout=10,
                           move_timeout=20)  # every reply is held up to 0.5 s
    assert not report.violations, report.violations
    assert report.games_played == {"tiny_minotaur_v1": 1}


def test_bot_check_start_timeout_bounds_the_games_starts_too(tmp_path):
    """``--start-timeout`` is the limit for every start of the program, the games' as well as the handshake's
    (the games' was a fixed 30 s). This program starts slowly from its second start on."""
    slow = tmp_path / "slow_second_start.py"
    slow.write_text(f"import pathlib, runpy, sys, time\nmark = pathlib.Path({str(tmp_path / 'started')!r})\n"
                    "if mark.exists():\n    time.sleep(4)\nmark.touch()\n"
                    f"sys.argv = [{str(FIXTURES / 'protocol_random_bot.py')!r}]\n"
                    "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "bot", "check", f"{sys.executable} {slow}",
                             "--game", "tiny_minotaur", "--games", "1", "--start-timeout", "2"],
                            capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "300"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no reply to 'hello' within 2 s" in result.stdout, result.stdout
    bad = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "bot", "check", f"{sys.executable} {slow}",
                          "--start-timeout", "0"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "--start-timeout 0 must be above 0" in bad.stderr


@pytest.mark.parametrize("mode,words", [("crash", "crash: "), ("garbage", "garbage: "), ("illegal", "illegal: ")])
def test_the_compliance_run_reports_every_violation(mode, words):
    report = check_program(f"{sys.executable} {FIXTURES / 'broken_bot.py'} {mode}", ["tiny_minotaur"], games_each=2,
                           move_timeout=20)  # room for a slow start on a loaded machine
    failed_games = [check for check in report.violations if check.stage == "games"]
    assert len(failed_games) == 2 and all(words in check.detail for check in failed_games), report.violations


def test_the_bot_check_command_exits_1_on_violations():
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "bot", "check",
                             f"{sys.executable} {FIXTURES / 'broken_bot.py'} garbage", "--game", "tiny_minotaur",
                             "--games", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "violation(s)" in result.stdout, result.stderr


def test_the_compliance_run_reads_a_flooding_program_in_bounded_lines(tmp_path):
    # A reply line of 8 MiB: refused as too long (and never held whole), the run goes on to its report.
    flood = tmp_path / "flood.py"
    flood.write_text("import sys\nfor line in sys.stdin:\n    sys.stdout.write('x' * (8 << 20) + '\\n')\n"
                     "    sys.stdout.flush()\n")
    report = check_program(f"{sys.executable} {flood}", ["tiny_minotaur"], games_each=1, move_timeout=20)
    assert any("longer than" in check.detail for check in report.violations), report.violations


def test_the_compliance_run_names_a_missing_program():
    with pytest.raises(ValueError, match="no-such-program-here"):
        check_program("no-such-program-here --flag", ["tiny_minotaur"], games_each=1)


def test_the_uploads_folder_is_made_at_the_first_upload_and_removed_with_the_app():
    """A server that never gets an upload leaves nothing on disk; one that does removes its folder when it
    goes (the test suite alone made hundreds of empty folders in the temp directory before)."""
    import gc

    from tavernzoo.web.app import WebState

    before = set(Path(tempfile.gettempdir()).glob("tavernzoo-web-*"))
    state = WebState(allow_local=False)
    assert set(Path(tempfile.gettempdir()).glob("tavernzoo-web-*")) == before
    folder = state.upload_dir
    assert folder.is_dir() and state.upload_dir == folder
    (folder / "bot").mkdir()
    del state
    gc.collect()
    assert not folder.exists()



def _frames(client, table_id, since=-1):
    return client.get(f"/api/tables/{table_id}/frames", params={"since": since}).json()["frames"]


def test_card_draw_windows_can_be_left_to_the_table_and_asked_again(client):
    """MiniSteel v2 asks a token holder at every Card Draw window. A frame there names the action that
    declines; with answer_offers the table plays it for the person at every later window (each a frame
    saying so, none asking), and answer_offers false alone asks again."""
    table = new_table(client, "ministeel", ["human", "heuristic", "heuristic", "heuristic"], seed=4,
                      config={"num_players": 4})
    assert table["offers"] == "Card Draw windows" and table["answer_offers"] is False
    tid, frames = table["id"], []
    while True:  # play the first action until a window asks
        summary = wait_for(client, tid)
        assert summary["status"] == "your_turn"
        frames += _frames(client, tid, frames[-1]["step"] if frames else -1)
        if "offer" in frames[-1]:
            break
        legal = frames[-1]["view"]["legal_actions"]
        client.post(f"/api/tables/{tid}/act", json={"action": legal[0], "step": frames[-1]["step"]})
    offer = frames[-1]["offer"]
    assert offer == {"decline": "token:pass", "offers": "Card Draw windows"}
    assert offer["decline"] in frames[-1]["view"]["legal_actions"]
    reply = client.post(f"/api/tables/{tid}/act", json={"action": "token:pass", "step": frames[-1]["step"],
                                                        "answer_offers": True})
    assert reply.status_code == 200 and reply.json()["answer_offers"] is True
    summary = wait_for(client, tid)
    frames += _frames(client, tid, frames[-1]["step"])
    answered = [f for f in frames if f.get("answered")]
    assert answered and all("offer" not in f for f in frames[-len(answered) - 1:])
    notes = [f["note"] for f in frames if f["note"] and "answered for you: Card Draw windows" in f["note"]]
    assert len(notes) == len(answered)
    # asking again: alone, at any time; the summary says so and later windows ask
    reply = client.post(f"/api/tables/{tid}/act", json={"answer_offers": False})
    assert reply.status_code == 200 and reply.json()["answer_offers"] is False
    while summary["status"] != "over":
        frames += _frames(client, tid, frames[-1]["step"])
        if "offer" in frames[-1]:
            break
        legal = frames[-1]["view"]["legal_actions"]
        choice = next((a for a in legal if not a.startswith("token:draw")), legal[0])  # keep the tokens
        client.post(f"/api/tables/{tid}/act", json={"action": choice, "step": frames[-1]["step"]})
        summary = wait_for(client, tid)
    assert "offer" in frames[-1]  # a window asked again


def test_never_ask_me_from_the_start_holds_for_the_whole_game(client):
    """The person's "never ask me" setting, given with the new table: no Card Draw window asks them all game
    (each is answered, and said so), their own choices still come, and a rematch keeps the setting."""
    table = client.post("/api/tables", json={"game": "ministeel", "config": {"num_players": 4}, "seed": 4,
                                             "seats": ["human", "heuristic", "heuristic", "heuristic"],
                                             "answer_offers": True})
    assert table.status_code == 201 and table.json()["answer_offers"] is True
    summary, frames = play_out(client, table.json(),
                               choose=lambda legal: next((a for a in legal if a != "token:draw"), legal[0]))
    assert not [frame for frame in frames if "offer" in frame]
    answered = [frame for frame in frames if frame.get("answered")]
    assert len(answered) >= 5 and len([frame for frame in frames if frame["view"]["legal_actions"]]) > len(answered)
    rematch = client.post(f"/api/tables/{table.json()['id']}/rematch", json={})
    assert rematch.status_code == 201 and rematch.json()["answer_offers"] is True


@pytest.mark.parametrize("seats, setting, words", [
    (["human", "heuristic"], True, "tiny_minotaur has no offers the table could answer"),
    (["human", "heuristic", "heuristic"], "yes", "answer_offers='yes': give true"),
    (["heuristic", "heuristic", "heuristic"], True, "nobody plays at this table"),
])
def test_a_bad_never_ask_setting_at_a_new_table_is_refused(client, seats, setting, words):
    game = "tiny_minotaur" if len(seats) == 2 else "ministeel"
    reply = client.post("/api/tables", json={"game": game, "seats": seats, "answer_offers": setting,
                                             "config": SMALL[game]})
    assert reply.status_code == 400 and words in reply.json()["error"]


def test_the_games_say_which_offers_a_person_may_leave_to_the_table(client):
    offers = {game["name"]: game["offers"] for game in client.get("/api/games").json()["games"]}
    assert offers == {"tiny_minotaur": None, "minefield": None, "ministeel": "Card Draw windows", "wyvern": None}


@pytest.mark.parametrize("game, body, words", [
    ("ministeel", {"answer_offers": "yes"}, "answer_offers='yes': give true"),
    ("tiny_minotaur", {"answer_offers": True}, "tiny_minotaur has no offers the table could answer"),
])
def test_a_bad_answer_offers_is_refused(client, game, body, words):
    table = new_table(client, game, ["human", "heuristic"] + (["heuristic"] if game == "ministeel" else []))
    reply = client.post(f"/api/tables/{table['id']}/act", json=body)
    assert reply.status_code == 400 and words in reply.json()["error"]
    assert client.get(f"/api/tables/{table['id']}").json().get("answer_offers") in (False, None)
