"""Tables for several people and bots (web/tables.py, web/app.py): seat links, what each person and each
spectator may receive, the stand-in for a person away or out of time, the bounds."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient
from test_web import hidden_information_of_others

from tavernzoo.envs import get_game
from tavernzoo.envs.make import make_env
from tavernzoo.web.app import Limits, create_app
from tavernzoo.web.tables import public_view


def hands_anywhere(document):
    """Every hand, or cards offered to a seat, in a JSON document (a spectator may see none)."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "hand" or (path.endswith("pick") and key == "cards"):
                    found.append(f"{path}.{key}")
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(document, "$")
    return found


def as_(token):
    return {"X-Table-Token": token}


def play_people(client, made, tokens, deadline=180.0, act=True):
    """Play every person's seat of a table to its end (each through its own token, the first legal action);
    returns each token's frames and the spectators', and the summaries at the end (``acted`` counts each
    token's moves that the table took)."""
    table_id = made["id"]
    seen = {token: [] for token in tokens}
    play_people.acted = {token: 0 for token in tokens}
    ends = time.monotonic() + deadline
    while time.monotonic() < ends:
        for token, frames in seen.items():
            since = frames[-1]["step"] if frames else -1
            reply = client.get(f"/api/tables/{table_id}/frames", params={"since": since}, headers=as_(token)).json()
            frames += reply["frames"]
            summary = reply["summary"]
            if summary["status"] == "over":
                continue
            if act and summary["status"] == "your_turn" and frames and frames[-1]["view"]["legal_actions"] \
                    and frames[-1]["step"] == summary["steps"] - 1:
                reply = client.post(f"/api/tables/{table_id}/act", headers=as_(token),
                                    json={"action": frames[-1]["view"]["legal_actions"][0], "step": frames[-1]["step"]})
                play_people.acted[token] += reply.status_code == 200
        summaries = [client.get(f"/api/tables/{table_id}", headers=as_(token)).json() for token in tokens]
        if all(s["status"] == "over" and len(seen[t]) == s["steps"] for s, t in zip(summaries, tokens, strict=True)):
            return seen, summaries
        time.sleep(0.01)
    raise AssertionError("the table never ended")


@pytest.fixture
def client():
    with TestClient(create_app(hosts=("testserver",))) as client:
        yield client


def test_two_people_and_two_bots_each_see_only_their_own_seat_and_a_spectator_sees_no_hand(client):
    made = client.post("/api/tables", json={"game": "ministeel", "config": {"num_players": 4}, "seed": 3,
                                            "seats": ["human", "open", "heuristic", "heuristic"]})
    assert made.status_code == 201, made.text
    made = made.json()
    links = made["links"]
    mine, theirs, watch = made["token"], links["seats"]["1"], links["watch"]
    assert set(links["seats"]) == {"0", "1"} and links["seats"]["0"] == mine
    assert len({mine, theirs, watch, made["id"]}) == 4 and all(len(t) >= 32 for t in (mine, theirs, watch))
    # The table id alone reads no seat's frames and plays no seat; a made-up token is refused.
    table_id = made["id"]
    assert client.get(f"/api/tables/{table_id}/frames").status_code == 403
    assert client.post(f"/api/tables/{table_id}/act", json={"action": "pass"}).status_code == 403
    assert client.get(f"/api/tables/{table_id}/frames", headers=as_(made["id"])).status_code == 403
    assert client.post(f"/api/tables/{table_id}/act", headers=as_("x" * 32), json={"action": "pass"}).status_code == 403
    # The second person's page: their seat is "you"
    second = client.get(f"/api/tables/{table_id}", headers=as_(theirs)).json()
    assert second["human"] == 1 and second["seats"][1]["player"] == "you" and second["seats"][0]["player"] == "person"
    assert client.get(f"/api/tables/{table_id}/frames", params={"seat": 0}, headers=as_(theirs)).status_code == 403
    seen, summaries = play_people(client, made, [mine, theirs, watch])
    assert {s["result"]["verdict"] for s in summaries[:2]} <= {"you win", "you lose"}
    for you, token in ((0, mine), (1, theirs)):
        assert seen[token] and not hidden_information_of_others(seen[token], you)
        assert any(frame["view"]["legal_actions"] for frame in seen[token])  # each person played
        assert all(frame["view"]["you"] == you for frame in seen[token])
    spectator = seen[watch]
    assert spectator and not hands_anywhere(spectator)
    assert all(not frame["view"]["legal_actions"] and "you" not in frame["view"] for frame in spectator)
    assert any(frame["events"] for frame in spectator)  # the public events are told
    assert all(isinstance(player.get("hp"), int) for player in spectator[-1]["view"]["players"])  # public numbers kept
    # The record holds every hand: after the end it takes a seat's token (header or ?token=), never the id alone
    # or the spectator link.
    record = f"/api/tables/{table_id}/record"
    assert client.get(record).status_code == 403
    assert client.get(record, headers=as_(watch)).status_code == 403
    assert client.get(record, params={"token": watch}).status_code == 403
    assert client.get(record, headers=as_(theirs)).status_code == 200
    assert len(client.get(record, params={"token": mine}).json()["actions"]) > 0


def test_a_spectator_may_not_act_nor_read_a_seat(client):
    made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 1, "seats": ["human", "open"]}).json()
    watch = made["links"]["watch"]
    assert client.post(f"/api/tables/{made['id']}/act", headers=as_(watch), json={"action": "pass"}).status_code == 403
    assert client.get(f"/api/tables/{made['id']}/frames", params={"seat": 1}, headers=as_(watch)).status_code == 403
    summary = client.get(f"/api/tables/{made['id']}", headers=as_(watch)).json()
    assert summary["spectator"] is True and summary["human"] is None


def test_the_other_persons_move_is_refused_until_their_turn(client):
    made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 2, "seats": ["human", "open"]}).json()
    tokens = [made["token"], made["links"]["seats"]["1"]]
    deadline = time.monotonic() + 60
    while True:
        summaries = [client.get(f"/api/tables/{made['id']}", headers=as_(t)).json() for t in tokens]
        if any(s["status"] == "your_turn" for s in summaries) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    waiting = next(t for t, s in zip(tokens, summaries, strict=True) if s["status"] == "waiting")
    refused = client.post(f"/api/tables/{made['id']}/act", headers=as_(waiting), json={"action": "pass"})
    assert refused.status_code == 409 and "not your turn" in refused.json()["error"]


class Quick(Limits):
    absent_seconds = 0.3
    clock_seconds = (0.05, 60.0)


def test_an_open_seat_nobody_takes_is_played_by_the_stand_in_and_a_person_back_plays_on():
    with TestClient(create_app(hosts=("testserver",), limits=Quick)) as client:
        made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 4, "seats": ["human", "open"],
                                                "fallback": "level:1"}).json()
        seen, summaries = play_people(client, made, [made["token"]])
        assert summaries[0]["status"] == "over"
        assert summaries[0]["seats"][1]["player"] == "open seat"  # nobody took it: the stand-in played it
        assert play_people.acted[made["token"]] > 0


def test_a_person_away_has_the_stand_in_play_for_them_and_back_they_play_on():
    with TestClient(create_app(hosts=("testserver",), limits=Quick)) as client:
        made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 6, "seats": ["human", "open"],
                                                "fallback": "level:1"}).json()
        late = made["links"]["seats"]["1"]
        table = client.app.state.web.tables.get(made["id"])
        deadline = time.monotonic() + 60
        while not any("played for you" in (f["note"] or "") for f in table.frames[1]):
            client.get(f"/api/tables/{made['id']}", headers=as_(made["token"]))  # the maker stays, seat 1 is away
            if table.status == "your_turn" and table.waiting_for == 0:
                frames = table.frames[0]
                client.post(f"/api/tables/{made['id']}/act", headers=as_(made["token"]),
                            json={"action": frames[-1]["view"]["legal_actions"][0]})
            assert time.monotonic() < deadline and table.status != "over"
            time.sleep(0.01)
        seen, summaries = play_people(client, made, [made["token"], late])
        assert summaries[1]["seats"][1]["player"] == "you" and summaries[0]["seats"][1]["player"] == "person"
        assert play_people.acted[late] > 0  # back, the person played their own moves


def test_a_person_out_of_time_has_the_stand_in_play_their_move():
    with TestClient(create_app(hosts=("testserver",), limits=Quick)) as client:
        made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 5, "seats": ["human", "heuristic"],
                                                "clock": 0.05}).json()
        seen, summaries = play_people(client, made, [made["token"]], act=False)  # the person never moves
        notes = [f["note"] for f in seen[made["token"]] if f["note"]]
        assert any(note.startswith("played for you (your time ran out)") for note in notes), notes
        assert summaries[0]["clock"] == 0.05


@pytest.mark.parametrize("body,words", [
    ({"clock": 0.01}, "'clock' must be"),
    ({"clock": "fast"}, "'clock' must be"),
    ({"fallback": "cmd:true"}, "--allow-local"),
    ({"fallback": "level:9"}, "level:5 (expert)"),
    ({"seats": ["human", "human"]}, "'open'"),
])
def test_bad_table_settings_are_one_clear_error(client, body, words):
    request = {"game": "tiny_minotaur", "seats": ["human", "open"], **body}
    response = client.post("/api/tables", json=request)
    assert response.status_code == 400 and words in response.json()["error"], response.text


def test_spectator_streams_are_bounded_per_table():
    class One(Limits):
        spectators_per_table = 1

    app = create_app(hosts=("testserver",), limits=One)
    with TestClient(app) as client:
        made = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 1, "seats": ["human", "open"]}).json()
        url = f"/api/tables/{made['id']}/events?token={made['links']['watch']}"
        table = app.state.web.tables.get(made["id"])
        table.spectators = 1  # one spectator's stream is open
        refused = client.get(url)
        assert refused.status_code == 429 and "spectators" in refused.json()["error"]
        assert client.get(f"/api/tables/{made['id']}/events?token=wrong").status_code == 403


@pytest.mark.parametrize("name", ["ministeel", "wyvern"])
def test_the_public_view_holds_no_hand_at_any_step(name):
    game = get_game(name)
    config = game.make_config({"num_players": 3})
    env = make_env(game, config, raw=True)
    env.reset(seed=7)
    steps = 0
    while env.agents and steps < 150:
        view = public_view(game, env.unwrapped.game_state, 3, sample_seed=steps)
        assert not hands_anywhere(view) and "you" not in view, (steps, hands_anywhere(view))
        agent = env.agent_selection
        legal = env.unwrapped.legal_action_names(agent)
        if not legal:
            env.step(None)
            continue
        env.step(env.unwrapped.action_names.index(legal[steps % len(legal)]))
        steps += 1


def test_the_lobby_lists_open_tables_and_hands_each_open_seat_once(client):
    listed = client.post("/api/tables", json={"game": "ministeel", "config": {"num_players": 3}, "seed": 1,
                                              "seats": ["human", "open", "open"], "lobby": True}).json()
    hidden = client.post("/api/tables", json={"game": "tiny_minotaur", "seed": 1, "seats": ["human", "open"]}).json()
    lobby = client.get("/api/lobby").json()["tables"]
    assert [entry["id"] for entry in lobby] == [listed["id"]] and lobby[0]["open"] == 2
    assert "token" not in str(lobby) and listed["token"] not in str(lobby)
    joined = [client.post(f"/api/tables/{listed['id']}/join", json={}).json() for _ in range(2)]
    assert [j["seat"] for j in joined] == [1, 2] and joined[0]["human"] == 1
    assert joined[0]["token"] == listed["links"]["seats"]["1"]
    full = client.post(f"/api/tables/{listed['id']}/join", json={})
    assert full.status_code == 409 and "no open seat" in full.json()["error"]
    assert client.get("/api/lobby").json()["tables"] == []
    refused = client.post(f"/api/tables/{hidden['id']}/join", json={})
    assert refused.status_code == 403 and "not in the lobby" in refused.json()["error"]
    assert client.post(f"/api/tables/{listed['id']}/join", content=b"{}").status_code == 415  # JSON only
