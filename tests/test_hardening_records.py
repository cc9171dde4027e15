"""Hardening of game records (issue 14): a record's dice must be its seed's, its shape is checked with
a message naming what is wrong, an empty records file is an error, and `tavernzoo replay` says so in
one line without a traceback."""

from __future__ import annotations

import copy
import importlib
import json
import subprocess
import sys
from functools import cache

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.envs import ReplayError, get_game
from tavernzoo.envs import records as records_module
from tavernzoo.envs.records import read_records, replay
from tavernzoo.eval.match import play_game

GAME_CONFIGS = {"tiny_minotaur": {}, "ministeel": {}, "minefield": {"num_players": 5}, "wyvern": {"num_players": 3}}


@cache
def played(name: str, seed: int = 3) -> dict:
    """The record of one game between random bots."""
    game = get_game(name)
    config = game.make_config(GAME_CONFIGS[name])
    env = importlib.import_module(f"tavernzoo.envs.{game.env_name}").env(**GAME_CONFIGS[name])
    bots = [load_bot("random", game, config, seed=seed + seat) for seat in range(len(env.possible_agents))]
    return play_game(env, bots, seed)[1]


def record_of(name: str) -> dict:
    return copy.deepcopy(played(name))


# --- the dice must be the seed's -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GAME_CONFIGS))
def test_every_single_die_edit_is_refused_naming_the_outcome(name):
    record = record_of(name)
    replay(record)
    outcomes = record["chance"]
    assert outcomes, "the game drew nothing"
    step = max(1, len(outcomes) // 60)  # long records: an even sample of their outcomes
    for number in range(0, len(outcomes), step):
        n, value = outcomes[number]
        if n == 1:
            continue  # a draw out of one has no other value
        edited = copy.deepcopy(record)
        edited["chance"][number][1] = (value + 1) % n
        with pytest.raises(ReplayError, match=rf"chance outcome #{number} is \[{n}, {(value + 1) % n}\], "
                                              rf"but seed {record['seed']} draws \[{n}, {value}\]"):
            replay(edited)


def test_an_edited_seed_is_refused_and_a_record_without_a_seed_replays_from_its_log():
    record = record_of("tiny_minotaur")
    with pytest.raises(ReplayError, match=rf"chance outcome #\d+ is .*, but seed {record['seed'] + 1} draws"):
        replay({**record, "seed": record["seed"] + 1})
    replay({**record, "seed": None})  # dice rolled elsewhere: the log is the only truth


# --- the record's shape ------------------------------------------------------------------------------------------


def edited(name: str, **changes) -> dict:
    return {**record_of(name), **changes}


SHAPES = [
    ([1, 2], "a record is a JSON object, got a list"),
    (None, "a record is a JSON object, got null"),
    ("record", "a record is a JSON object, got a string"),
    (edited("tiny_minotaur", actions="attack:regular"), "'actions' must be a list of steps, got a string"),
    (edited("tiny_minotaur", actions={"0": 1}), "'actions' must be a list of steps, got an object"),
    (edited("tiny_minotaur", config=[]), "'config' must be an object of options, got a list"),
    (edited("tiny_minotaur", config=None), "'config' must be an object of options, got null"),
    (edited("tiny_minotaur", chance=None), "'chance' must be a list of"),
    (edited("tiny_minotaur", chance=[["20", 3]]), r'chance outcome #0 must be \[n, value\] .*, got \["20", 3\]'),
    (edited("tiny_minotaur", chance=[[20, 20]]), r"chance outcome #0 must be \[n, value\] with 0 <= value < n"),
    (edited("tiny_minotaur", chance=[[2, True]]), r"chance outcome #0 must be"),
    (edited("tiny_minotaur", seed=1.5), "'seed' must be an integer or null, got 1.5"),
    (edited("tiny_minotaur", returns=["1", "-1"]), "'returns' must be a list of numbers or null"),
    (edited("tiny_minotaur", game=7), "'game' must be a game name, got a number"),
    (edited("tiny_minotaur", game="chess"), "unknown game 'chess'"),
    (edited("tiny_minotaur", config={"starting_hp": 10.5}), "config: starting_hp must be an integer, got 10.5"),
    ({k: v for k, v in record_of("tiny_minotaur").items() if k != "chance"}, "the record has no 'chance'"),
    (edited("minefield", actions=[{"joint": ["target:1"]}]), r'action #0 must be \{"joint": '),
    (edited("minefield", actions=[{"joint": {"x": "target:1"}}]), r'action #0 must be \{"joint": '),
]


@pytest.mark.parametrize(("record", "message"), SHAPES, ids=[message[:40] for _, message in SHAPES])
def test_a_record_of_the_wrong_shape_is_named(record, message):
    with pytest.raises(ReplayError, match=message):
        replay(record)


@pytest.mark.parametrize("bad_step", ["attack:regular", None, 3, ["0", "attack:regular"], {"seat": "0", "action": "x"},
                                      {"seat": 0, "action": 2}, {"seat": True, "action": "attack:regular"}])
def test_a_step_that_is_not_a_seat_and_an_action_name_is_named(bad_step):
    record = record_of("tiny_minotaur")
    record["actions"][2] = bad_step
    with pytest.raises(ReplayError, match=r'action #2 must be \{"seat": <int>, "action": <name>\}, got '):
        replay(record)


def test_an_action_the_rules_refuse_is_named_with_its_number():
    record = record_of("tiny_minotaur")
    record["actions"][0]["action"] = "no:such:action"
    with pytest.raises(ReplayError, match=r"action #0: illegal action 'no:such:action' \(no such action"):
        replay(record)


# --- reading records files ------------------------------------------------------------------------------------


def test_a_records_file_without_records_is_an_error(tmp_path):
    for text in ("", "\n\n  \n"):
        path = tmp_path / "games.jsonl"
        path.write_text(text)
        with pytest.raises(ReplayError, match="holds no records"):
            list(read_records(path))
    path = tmp_path / "one.json"
    path.write_text("")
    with pytest.raises(ReplayError, match="holds no records"):
        list(read_records(path))


def test_records_are_read_line_by_line_naming_a_bad_line(tmp_path, monkeypatch):
    line = json.dumps(record_of("tiny_minotaur"))
    path = tmp_path / "games.jsonl"
    path.write_text(f"{line}\n\n{line}\n{{oops\n")
    found = []
    with pytest.raises(ReplayError, match=r"games.jsonl:4: not valid JSON"):
        for number, _record in read_records(path):
            found.append(number)
    assert found == [1, 3]
    monkeypatch.setattr(records_module, "MAX_RECORD_CHARS", len(line) - 1)
    with pytest.raises(ReplayError, match=r"games.jsonl:1: a record longer than"):
        list(read_records(path))


def test_a_last_line_cut_off_by_a_kill_is_left_out_when_asked_and_named_otherwise(tmp_path):
    line = json.dumps(record_of("tiny_minotaur"))
    path = tmp_path / "games.jsonl"
    path.write_text(f"{line}\n{line}\n{line[:40]}")  # the third write stopped mid-line: no line end
    left_out: list[str] = []
    assert [number for number, _ in read_records(path, left_out=left_out)] == [1, 2]
    assert len(left_out) == 1 and "games.jsonl:3: the last line is cut off (40 characters" in left_out[0]
    with pytest.raises(ReplayError, match=r"games.jsonl:3: the last line is cut off"):
        list(read_records(path))
    # Only the last line, only without its line end: a bad line anywhere else is an error, left_out or not.
    for text in (f"{line}\n{line[:40]}\n", f"{line[:40]}\n{line}\n"):
        path.write_text(text)
        with pytest.raises(ReplayError, match="not valid JSON"):
            list(read_records(path, left_out=[]))
    path.write_text(line[:40])  # nothing but the cut-off line: no records, and not "empty"
    with pytest.raises(ReplayError, match=r"holds no records \(its only line is cut off\)"):
        list(read_records(path, left_out=[]))
    single = tmp_path / "one.json"
    single.write_text(line[:40])
    with pytest.raises(ReplayError, match="not valid JSON"):
        list(read_records(single, left_out=[]))


def test_end_torn_tail_makes_a_records_file_safe_to_append_to(tmp_path):
    line = json.dumps(record_of("tiny_minotaur"))
    path = tmp_path / "games.jsonl"
    assert records_module.end_torn_tail(path) is None  # no file
    path.write_text("")
    assert records_module.end_torn_tail(path) is None and path.read_text() == ""
    path.write_text(f"{line}\n")
    assert records_module.end_torn_tail(path) is None and path.read_text() == f"{line}\n"
    path.write_text(f"{line}\n{line[:-3]}")  # a record cut off: removed, the whole one before it kept
    said = records_module.end_torn_tail(path)
    assert said is not None and "cut off" in said and f"from byte {len(line) + 1:,}" in said
    assert path.read_text() == f"{line}\n"
    path.write_text(f"{line}\n{line}")  # a whole record without its line end: it gets one
    said = records_module.end_torn_tail(path)
    assert said is not None and "line end" in said and path.read_text() == f"{line}\n{line}\n"
    big = "x" * (1 << 17)  # a cut-off line longer than one backward read
    path.write_text(f"{line}\n{{{big}")
    assert records_module.end_torn_tail(path) is not None and path.read_text() == f"{line}\n"
    path.write_text(f"{{{big}")  # the file's only line
    assert records_module.end_torn_tail(path) is not None and path.read_text() == ""


# --- the command line ----------------------------------------------------------------------------------------------


def tavernzoo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True, timeout=300)


def test_replay_refuses_bad_records_in_one_line_without_a_traceback(tmp_path):
    good = json.dumps(record_of("tiny_minotaur"))
    dice = record_of("tiny_minotaur")
    dice["chance"][4][1] = (dice["chance"][4][1] + 1) % dice["chance"][4][0]
    step = record_of("tiny_minotaur")
    step["actions"][1] = "attack:regular"
    cases = {
        "empty.jsonl": ("", 2, "holds no records"),
        "list.jsonl": (f"{good}\n[1, 2]\n", 1, "list.jsonl:2: record does not replay: a record is a JSON object"),
        "null.jsonl": ("null\n", 1, "null.jsonl:1: record does not replay: a record is a JSON object, got null"),
        "actions.json": (json.dumps(edited("tiny_minotaur", actions="x")), 1, "'actions' must be a list of steps"),
        "step.json": (json.dumps(step), 1, 'action #1 must be {"seat": <int>, "action": <name>}, got "attack:regular"'),
        "config.json": (json.dumps(edited("tiny_minotaur", config=[])), 1, "'config' must be an object of options"),
        "dice.jsonl": (f"{good}\n{json.dumps(dice)}\n", 1, "dice.jsonl:2: record does not replay: chance outcome #4"),
        "broken.jsonl": (f"{good}\n{{\n", 2, "broken.jsonl:2: not valid JSON"),
    }
    for name, (text, code, message) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        result = tavernzoo("replay", str(path))
        output = (result.stdout + result.stderr).strip()
        assert result.returncode == code, (name, output)
        assert message in output and "Traceback" not in output and len(output.splitlines()) == 1, (name, output)


def test_a_file_written_whole_is_as_readable_as_one_written_plainly(tmp_path):
    """atomic_file's temporary is private (mkstemp: 0600); the file it becomes takes the mode open() gives a new
    file under the umask, or keeps the mode of the file it replaces."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        records_module.write_json_atomic(tmp_path / "new.json", {"a": 1})
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
        os.umask(0o077)
        records_module.write_json_atomic(tmp_path / "private.json", {"a": 1})
        assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
        (tmp_path / "new.json").chmod(0o640)
        records_module.write_json_atomic(tmp_path / "new.json", {"a": 2})
        assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
        assert json.loads((tmp_path / "new.json").read_text()) == {"a": 2}
    finally:
        os.umask(old)
