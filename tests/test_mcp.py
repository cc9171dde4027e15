"""``tavernzoo mcp``'s bounds: the operator's budget for a search, a cap on tables that refuses instead of dropping
a game in play, answers that do not wait on the bots, and every value the client sent echoed cut short.

(The tools played through whole games, the SDK's client over stdio and the refusal of server files are in
tests/test_llm.py.)"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from tavernzoo.web.mcp import MAX_TABLES, Tables
from tavernzoo.web.tables import TableError


def returns_within(seconds, call, *args, **kwargs):
    """What ``call`` returns or raises, from a thread, or AssertionError if it has not returned in ``seconds``
    (generous: a call that never returns is what is caught)."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"{call.__name__} did not return within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize("spec,words", [
    ("mcts:sims=999999999", "at most 20000 simulations"),
    ("mcts:time=1e9", "at most 2 s"),
    ("mcts:root=paired,width=99", "width=99"),
])
def test_an_mcts_opponent_is_held_to_the_servers_max_think(spec, words):
    tables = Tables()
    with pytest.raises((TableError, ValueError)) as caught:
        returns_within(60, tables.new_table, "tiny_minotaur", opponents=[spec])
    assert words in str(caught.value) and "--max-think" in str(caught.value), str(caught.value)
    assert not tables.store.items


def test_new_table_answers_while_the_bots_think_and_close_table_stops_them():
    # The operator allows long searches here, so that a search that did not stop would outlast the joins below.
    tables = Tables(max_think=600, wait_seconds=1)
    # Minefield's bots in seats 0 and 1 choose before the client in seat 2.
    started = returns_within(120, tables.new_table, "minefield", seat=2, opponents=["mcts:sims=1000000,time=600"],
                             options={"num_players": 3}, seed=1)
    assert started["status"] == "bots" and "call view again" in started["note"]
    table = tables.table(started["table"])
    assert tables.view(started["table"])["status"] == "bots"
    assert returns_within(60, tables.close_table, started["table"]) == {"table": started["table"], "closed": True}
    table.worker.join(60)
    assert not table.worker.is_alive(), "the search went on after its table was closed"


def test_the_command_takes_max_think():
    from tavernzoo.cli import build_parser

    args = build_parser(["mcp", "--max-think", "0.5"]).parse_args(["mcp", "--max-think", "0.5"])
    assert args.max_think == 0.5
    with pytest.raises(ValueError, match="--max-think"):
        Tables(max_think=-1)
    with pytest.raises((TableError, ValueError), match="at most 0.5 s"):
        Tables(max_think=0.5).new_table("tiny_minotaur", opponents=["mcts:time=1"])


def test_a_full_server_refuses_a_new_table_instead_of_dropping_a_game_in_play():
    tables = Tables()
    keys = [tables.new_table("tiny_minotaur", opponents=["random"], seed=n)["table"] for n in range(MAX_TABLES)]
    with pytest.raises(TableError, match=f"holds {MAX_TABLES} tables, the most one client may; close_table"):
        tables.new_table("tiny_minotaur", opponents=["random"])
    assert all(tables.view(key)["status"] == "your_turn" for key in keys)  # every game in play is still there
    tables.close_table(keys[0])
    fresh = tables.new_table("tiny_minotaur", opponents=["random"], seed=99)["table"]
    # A game played out whose result the client has read makes room by itself.
    while legal := tables.legal_actions(fresh):
        tables.act(fresh, legal[0]["number"])
    assert tables.result(fresh)["status"] == "over"
    newest = tables.new_table("tiny_minotaur", opponents=["random"])["table"]
    with pytest.raises(TableError, match=f"no table '{fresh}'"):
        tables.view(fresh)
    assert all(tables.view(key)["status"] == "your_turn" for key in [*keys[1:], newest])


def test_echoed_values_are_cut_short_and_oversize_ones_refused_early():
    tables = Tables()
    key = tables.new_table("tiny_minotaur", opponents=["random"], seed=1)["table"]
    for call, args in ((tables.act, (key, "x" * 5_000_000)), (tables.view, ("t" * 1_000_000,)),
                       (tables.act, ("t" * 1_000_000, "pass")), (tables.new_table, ("g" * 1_000_000,)),
                       (tables.new_table, ("tiny_minotaur", 0, ["s" * 1_000_000])),
                       (tables.view, (key, "f" * 1_000_000))):
        with pytest.raises((TableError, ValueError)) as caught:
            call(*args)
        assert len(str(caught.value)) < 600 and "more characters" in str(caught.value), str(caught.value)[:300]


def test_the_sdk_client_gets_one_clear_error_for_a_bool_and_may_act_by_number():
    """Over stdio with the SDK's own client: ``seat: true`` is refused (not taken as seat 1), an action may be a
    name or a number as documented, ``answer_offers: "yes"`` is refused, and a 5 MB action comes back cut short."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def session():
        server = StdioServerParameters(command=sys.executable, args=["-m", "tavernzoo.cli", "mcp"],
                                       env={**os.environ, "PYTHONUNBUFFERED": "1"})
        async with Client(server, read_timeout_seconds=120) as client:
            as_bool = await client.call_tool("new_table", {"game": "tiny_minotaur", "seat": True})
            assert as_bool.is_error and "seat True is not a seat" in as_bool.content[0].text, as_bool.content
            seed_bool = await client.call_tool("new_table", {"game": "tiny_minotaur", "seed": True})
            assert seed_bool.is_error and "seed True" in seed_bool.content[0].text, seed_bool.content
            table = (await client.call_tool("new_table", {"game": "tiny_minotaur", "opponents": ["random"],
                                                          "seed": 1})).structured_content["table"]
            legal = (await client.call_tool("legal_actions", {"table": table})).structured_content["result"]
            by_number = await client.call_tool("act", {"table": table, "action": legal[0]["number"]})
            assert not by_number.is_error, by_number.content
            legal = (await client.call_tool("legal_actions", {"table": table})).structured_content["result"]
            if legal:
                by_name = await client.call_tool("act", {"table": table, "action": legal[0]["name"]})
                assert not by_name.is_error, by_name.content
            flag = await client.call_tool("act", {"table": table, "action": "pass", "answer_offers": "yes"})
            assert flag.is_error and "answer_offers" in flag.content[0].text and "validation" not in \
                flag.content[0].text, flag.content
            huge = await client.call_tool("act", {"table": table, "action": "x" * 5_000_000})
            assert huge.is_error and len(huge.content[0].text) < 600, len(huge.content[0].text)
            unknown = await client.call_tool("view", {"table": "t" * 1_000_000})
            assert unknown.is_error and len(unknown.content[0].text) < 600, len(unknown.content[0].text)

    asyncio.run(asyncio.wait_for(session(), 300))


def test_an_action_number_is_its_line_in_the_list_not_the_games_action_index():
    # A client answering 2 means the second line it was shown, whatever that action's index in the game.
    tables = Tables()
    table = tables.new_table("ministeel", options={"num_players": 3}, opponents=["random"], seed=5)["table"]
    for _ in range(6):
        legal = tables.legal_actions(table)
        if len(legal) > 1:
            break
        tables.act(table, legal[0]["name"])
    else:
        pytest.fail("no decision with two legal actions came")
    assert [action["number"] for action in legal] == list(range(1, len(legal) + 1))
    assert f"\n2: {legal[1]['name']} — " in tables.view(table)["text"]
    tables.act(table, 2)
    mine = [step["action"] for step in tables.table(table).env.unwrapped.record()["actions"] if step["seat"] == 0]
    assert mine[-1] == legal[1]["name"]
    with pytest.raises(TableError, match="numbers them 1 to"):
        tables.act(table, 0)


def test_the_games_list_their_levels_and_a_level_is_an_opponent():
    tables = Tables()
    listed = {entry["game"]: entry for entry in tables.list_games()}
    assert [level["name"] for level in listed["wyvern"]["levels"]][::4] == ["beginner", "expert"]
    started = returns_within(120, tables.new_table, "tiny_minotaur", opponents=["level:2"], seed=3)
    assert started["table"]
    with pytest.raises((TableError, ValueError), match="level:5 \\(expert\\)"):
        returns_within(60, tables.new_table, "tiny_minotaur", opponents=["level:6"])
