"""The review of a finished table (web/review.py, eval/review.py): any step from any seat once the game is over,
the spectators' public view, each decision marked with its cost, and a branch that plays on from a step."""

from __future__ import annotations

import time

import numpy as np
import pytest
from starlette.testclient import TestClient
from test_web import hidden_information_of_others, new_table, play_out, wait_for, with_seat_tokens

from tavernzoo.agents.tiny_minotaur_oracle import OracleBot
from tavernzoo.envs import get_game
from tavernzoo.eval.review import review_marks
from tavernzoo.web.app import create_app


@pytest.fixture
def client():
    with TestClient(create_app(hosts=("testserver",))) as client:
        yield with_seat_tokens(client)


def finished(client, game="ministeel", seats=("human", "heuristic", "level:2"), choose=lambda legal: legal[0]):
    table = new_table(client, game, list(seats))
    play_out(client, table, choose)
    return table


def test_the_review_opens_once_the_game_is_over_and_shows_every_step_from_every_seat(client):
    table = new_table(client, "ministeel", ["human", "heuristic", "level:2"])
    early = client.get(f"/api/tables/{table['id']}/review")
    assert early.status_code == 409 and "once the game is over" in early.json()["error"]
    play_out(client, table)
    end = client.get(f"/api/tables/{table['id']}/review").json()  # the end, from the person's own seat
    steps = end["steps"]
    assert end["step"] == steps - 1 and end["seat"] == 0 and end["view"]["agent"] == "player_0"
    assert not end["branch"]  # nothing is left to play at the end
    for seat in range(3):  # the game is over: every seat's view, its hand included, may be looked at
        frame = client.get(f"/api/tables/{table['id']}/review", params={"step": 2, "seat": seat}).json()
        assert frame["view"]["you"] == seat and frame["step"] == 2 and frame["branch"]
        assert frame["view"]["players"][seat]["hand"] is not None
    back = [client.get(f"/api/tables/{table['id']}/review", params={"step": k}).json() for k in (3, 2, 1, 0)]
    assert [frame["step"] for frame in back] == [3, 2, 1, 0] and back[-1]["note"] is None  # 0 is the deal
    wrong = client.get(f"/api/tables/{table['id']}/review", params={"step": steps})
    assert wrong.status_code == 400 and f"0..{steps - 1}" in wrong.json()["error"]
    assert client.get(f"/api/tables/{table['id']}/review", params={"seat": 3}).status_code == 400


def test_a_spectator_reviews_the_public_table_alone_and_the_table_id_nothing(client):
    table = finished(client)
    watch = {"X-Table-Token": table["links"]["watch"]}
    steps = client.get(f"/api/tables/{table['id']}/review").json()["steps"]
    for step in range(0, steps, max(1, steps // 12)):
        frame = client.get(f"/api/tables/{table['id']}/review", params={"step": step}, headers=watch)
        assert frame.status_code == 200 and frame.json()["seat"] is None
        assert not hidden_information_of_others(frame.json(), None)
        assert not any("hand" in player for player in frame.json()["view"]["players"])
    assert client.get(f"/api/tables/{table['id']}/review", params={"seat": 0}, headers=watch).status_code == 403
    assert client.get(f"/api/tables/{table['id']}/review/marks", headers=watch).status_code == 403
    assert client.post(f"/api/tables/{table['id']}/branch", json={"step": 1}, headers=watch).status_code == 403
    bare = TestClient(client.app)  # the table id alone, no token
    assert bare.get(f"/api/tables/{table['id']}/review").status_code == 403
    assert bare.post(f"/api/tables/{table['id']}/branch", json={"step": 1}).status_code == 403


def test_tiny_minotaur_marks_a_bad_move_with_its_exact_cost_and_the_oracles_moves_with_none(client):
    """The person plays the oracle's move at every decision but one, where they play the worst one: that one
    alone costs something, exactly the oracle's difference between the best and the worst."""
    web = client.app.state.web
    table = new_table(client, "tiny_minotaur", ["human", "heuristic"], seed=11)
    oracle = OracleBot(get_game("tiny_minotaur").make_config())
    played: dict[int, tuple[str, float]] = {}  # step -> (what was played, what it cost)

    def choose(legal):
        env = web.tables.get(table["id"]).env
        values = oracle.values(env.observe(env.agent_selection))
        names = env.unwrapped.action_names
        by_name = {names[action]: value for action, value in values.items()}
        best, worst = max(by_name.values()), min(by_name.values())
        step = len(env.unwrapped._history)
        bad = not any(cost > 0 for _, cost in played.values()) and best - worst > 1e-6
        name = min(by_name, key=by_name.get) if bad else max(by_name, key=by_name.get)
        played[step] = (name, best - by_name[name])
        return name

    play_out(client, table, choose)
    marks = client.get(f"/api/tables/{table['id']}/review/marks").json()
    assert marks["exact"] and "oracle" in marks["method"]
    marked = {mark["step"]: mark for mark in marks["decisions"]}
    chosen = played
    assert any(cost > 0 for _, cost in chosen.values()), "the game had no decision where a move was worse"
    for step, (name, cost) in chosen.items():
        if step not in marked:  # one legal move: no decision
            continue
        assert marked[step]["action"] == name
        assert marked[step]["cost"] == pytest.approx(cost, abs=1e-6)
        assert (marked[step]["cost"] > 0) == (cost > 1e-9)
    bad_step = next(step for step, (_, cost) in chosen.items() if cost > 0)
    assert marks["worst"] == [bad_step] and marks["complete"]
    assert client.get(f"/api/tables/{table['id']}/review/marks").json() == marks  # kept, not computed again


def test_marks_in_a_game_with_hidden_information_come_from_the_value_head_within_the_servers_time(client):
    table = finished(client)
    marks = client.get(f"/api/tables/{table['id']}/review/marks").json()
    assert not marks["exact"] and "zoo:ministeel" in marks["method"] and marks["complete"]
    assert marks["decisions"] and all(mark["cost"] >= 0 for mark in marks["decisions"])
    costs = {mark["step"]: mark["cost"] for mark in marks["decisions"]}
    assert [costs[step] for step in marks["worst"]] == sorted((c for c in costs.values() if c > 0), reverse=True)[:3]
    other = client.get(f"/api/tables/{table['id']}/review/marks", params={"seat": 1}).json()
    assert other["seat"] == 1 and {m["step"] for m in other["decisions"]}.isdisjoint(costs)


def test_a_deadline_already_past_leaves_every_decision_unmarked():
    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    from tavernzoo.agents import load_bot
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.table import Table

    env = make_env(game, config)
    Table(env, [load_bot("random", game, config, seat) for seat in range(3)], 3).play()
    marks = review_marks(env.unwrapped.record(), 1, deadline=time.monotonic() - 1)
    assert not marks["complete"] and marks["decisions"] and all(m["cost"] is None for m in marks["decisions"])
    with pytest.raises(ValueError, match=r"0-2"):
        review_marks(env.unwrapped.record(), 3)


def test_a_branch_replays_the_game_to_the_step_with_the_same_bots_and_the_person_at_their_seat(client):
    table = finished(client)
    marks = client.get(f"/api/tables/{table['id']}/review/marks").json()
    step = marks["decisions"][len(marks["decisions"]) // 2]["step"]  # one of the person's decisions
    made = client.post(f"/api/tables/{table['id']}/branch", json={"step": step})
    assert made.status_code == 201, made.text
    branch = made.json()
    assert branch["branch"] == {"from": table["id"], "step": step} and branch["steps"] == step + 1
    assert [seat["player"] for seat in branch["seats"]] == ["you", "heuristic", "level:2"]
    assert "token" in branch and branch["id"] != table["id"]
    summary = wait_for(client, branch["id"])
    assert summary["status"] == "your_turn"  # it was the person's decision there, and is again
    web = client.app.state.web
    old, new = web.tables.get(table["id"]).review.timeline, web.tables.get(branch["id"])
    render = new.game.encoder.render
    assert render(new.env.unwrapped.game_state) == render(old.state(step))  # the whole table, hands and all
    frames = client.get(f"/api/tables/{branch['id']}/frames", params={"since": -1}).json()["frames"]
    assert len(frames) == step + 1 and frames[-1]["view"]["legal_actions"]
    original = client.get(f"/api/tables/{table['id']}/review", params={"step": step}).json()
    assert frames[-1]["view"]["players"] == original["view"]["players"]
    # The branch is a table like any other: the person plays it on to its end.
    play_out(client, {**branch, "human": 0})


def test_a_step_that_cannot_be_played_on_from_is_refused_in_one_line_naming_the_valid_steps(client):
    table = new_table(client, "tiny_minotaur", ["human", "heuristic"])
    early = client.post(f"/api/tables/{table['id']}/branch", json={"step": 1})
    assert early.status_code == 409 and "once the game is over" in early.json()["error"]
    play_out(client, table)
    steps = client.get(f"/api/tables/{table['id']}/review").json()["steps"]
    for bad in (steps - 1, steps + 50, -1, "3", True, None):
        reply = client.post(f"/api/tables/{table['id']}/branch", json={"step": bad})
        assert reply.status_code == 400
        error = reply.json()["error"]
        assert f"0..{steps - 2}" in error and "\n" not in error and "Traceback" not in error
    assert client.post(f"/api/tables/{table['id']}/branch", json=[1]).status_code == 400


def test_a_table_of_bots_is_branched_from_with_the_seat_to_play(client):
    table = new_table(client, "tiny_minotaur", ["heuristic", "random"])
    wait_for(client, table["id"], ("over",))
    assert client.post(f"/api/tables/{table['id']}/branch", json={"step": 0}).status_code == 400  # which seat?
    made = client.post(f"/api/tables/{table['id']}/branch", json={"step": 0, "seat": 1}).json()
    assert [seat["player"] for seat in made["seats"]] == ["heuristic", "you"] and made["human"] == 1
    marks = client.get(f"/api/tables/{table['id']}/review/marks", params={"seat": 1}).json()
    assert marks["seat"] == 1 and all(mark["cost"] is not None for mark in marks["decisions"])
    assert np.isfinite([mark["cost"] for mark in marks["decisions"]]).all()
