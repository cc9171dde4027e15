"""Every `tavernzoo` subcommand, run as a user would run it, with tiny budgets."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def tavernzoo(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.mark.parametrize("command", [[], ["games"], ["match"], ["replay"], ["train"], ["tournament"], ["wyvern"],
                                     ["wyvern", "validate"], ["export"], ["zoo"], ["bot"], ["serve"], ["play"],
                                     ["leaderboard"]])
def test_help_explains_every_command(command):
    result = tavernzoo(*command, "--help")
    assert result.returncode == 0
    assert "usage: tavernzoo" in result.stdout


def test_games_lists_options_and_defaults():
    result = tavernzoo("games", "--json")
    assert result.returncode == 0
    listing = {entry["name"]: entry for entry in json.loads(result.stdout)}
    options = {row["name"]: row for row in listing["tiny_minotaur"]["options"]}
    assert options["starting_hp"]["default"] == 100 and options["heal_amount"]["default"] == 20
    assert "starting_hp" in tavernzoo("games").stdout


def test_match_prints_a_result_table_and_writes_records_that_replay(tmp_path):
    records = tmp_path / "games.jsonl"
    result = tavernzoo("match", "tiny_minotaur", "--bots", "heuristic", "random", "--games", "20", "--seed", "1",
                       "--set", "classes=sword,cloak", "--records", str(records), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "heuristic" in result.stdout and "wins" in result.stdout and "20 games" in result.stdout
    assert len(records.read_text().splitlines()) == 20
    replayed = tavernzoo("replay", str(records))
    assert replayed.returncode == 0 and "20 record(s) replayed" in replayed.stdout
    single = tmp_path / "one.json"
    single.write_text(records.read_text().splitlines()[0])
    shown = tavernzoo("replay", str(single), "--show")
    assert shown.returncode == 0 and "game over" in shown.stdout



def test_replay_table_pools_the_records_of_matches_of_other_seeds(tmp_path):
    files = []
    for seed in (1, 2):
        files.append(tmp_path / f"seed{seed}.jsonl")
        tavernzoo("match", "minefield", "--set", "num_players=4", "--bots", "heuristic", "random", "random", "random",
                  "--games", "8", "--seed", str(seed), "--records", str(files[-1]), "--no-progress")
    lines = files[1].read_text().splitlines()
    files[1].write_text("\n".join(lines[:-1]) + "\n")  # the second match stopped in its last deal
    shown = tavernzoo("replay", *map(str, files), "--table")
    assert shown.returncode == 0, shown.stderr
    assert "15 record(s) replayed" in shown.stdout and "12 games (3 deals x 4 seatings) from 2 file(s)" in shown.stdout
    assert "left out:" in shown.stdout and "3 of the 4 games" in shown.stdout and "random x3" in shown.stdout
    document = json.loads(tavernzoo("replay", *map(str, files), "--table", "--json").stdout)
    assert document["deals"] == 3 and document["seed"] is None and document["files"] == list(map(str, files))
    assert document["results_version"] == 2 and "seeding" not in document  # counted from records: no scheme
    assert [row["bot"] for row in document["rows"]] == ["heuristic", "random #1", "random #2", "random #3"]
    assert document["pooled"][0]["score"] == pytest.approx(1 - document["rows"][0]["score"])
    twice = tavernzoo("replay", str(files[0]), str(files[0]), "--table")
    assert twice.returncode == 2 and "given twice" in twice.stderr and "Traceback" not in twice.stderr
    alone = tavernzoo("replay", str(files[0]), "--json")
    assert alone.returncode == 2 and "--table" in alone.stderr


def test_options_are_taken_by_their_whole_names_only():
    # argparse's default takes "--gam" for "--games": a script using it breaks (or means another option) once
    # a command gains an option that begins alike.
    for args, abbreviated in ((["match", "minefield", "--gam", "4"], "--gam 4"),
                              (["export", "run", "--out", "bot.onnx", "--measur", "10"], "--measur 10"),
                              (["replay", "games.jsonl", "--tab"], "--tab")):
        result = tavernzoo(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert f"unrecognized arguments: {abbreviated}" in result.stderr and "Traceback" not in result.stderr


def test_a_records_file_cut_off_by_a_kill_replays_its_whole_records_and_takes_more(tmp_path):
    records = tmp_path / "games.jsonl"
    args = ("match", "minefield", "--set", "num_players=4", "--bots", "heuristic", "random", "random", "random",
            "--games", "4", "--no-progress", "--records", str(records))
    assert tavernzoo(*args, "--seed", "1").returncode == 0
    whole = records.read_text()
    records.write_text(whole + whole.splitlines()[0][:25])  # a fifth record's write stopped by a kill
    shown = tavernzoo("replay", str(records))
    assert shown.returncode == 0, shown.stderr
    assert "4 record(s) replayed" in shown.stdout and "games.jsonl:5: the last line is cut off" in shown.stdout
    table = tavernzoo("replay", str(records), "--table", "--json")
    assert table.returncode == 0
    assert "games.jsonl:5: the last line is cut off" in json.loads(table.stdout)["left_out"][0]
    more = tavernzoo(*args, "--seed", "2")  # appended after the cut-off line, which would have merged with it
    assert more.returncode == 0 and "note:" in more.stderr and "removed before appending" in more.stderr
    assert records.read_text().startswith(whole) and len(records.read_text().splitlines()) == 8
    assert "8 record(s) replayed" in tavernzoo("replay", str(records)).stdout


def test_match_of_two_pairs_prints_each_pair_pooled():
    args = ("match", "minefield", "--set", "num_players=4", "--bots", "random", "heuristic", "random", "heuristic",
            "--games", "8", "--no-progress")
    shown = tavernzoo(*args)
    assert shown.returncode == 0, shown.stderr
    assert "pooled by bot spec" in shown.stdout and "heuristic x2" in shown.stdout
    document = json.loads(tavernzoo(*args, "--json").stdout)
    pooled = {row["bot"]: row for row in document["pooled"]}
    assert set(pooled) == {"random x2", "heuristic x2"}
    assert pooled["random x2"]["fair_share"] == 0.5 and pooled["random x2"]["entries"] == 2
    assert pooled["random x2"]["score"] + pooled["heuristic x2"]["score"] == pytest.approx(1.0)
    alone = json.loads(tavernzoo("match", "--games", "2", "--json").stdout)
    assert "pooled" not in alone


def test_a_match_says_its_results_version_and_seeding_and_v1_is_deprecated():
    """Seeding v2 is the default (eval/deals.py); a match's JSON says so beside its results version, and
    --seeding v1 still plays the old scheme, for the figures published before 2026-12-05, with a note."""
    document = json.loads(tavernzoo("match", "--games", "4", "--json", "--no-progress").stdout)
    assert document["results_version"] == 2 and document["seeding"] == "v2"
    old = tavernzoo("match", "--games", "4", "--json", "--no-progress", "--seeding", "v1")
    assert old.returncode == 0 and json.loads(old.stdout)["seeding"] == "v1"
    assert "--seeding v1 is deprecated, for figures published before 2026-12-05" in old.stderr
    table = tavernzoo("match", "--games", "4", "--no-progress", "--seeding", "v1")
    assert ", seeding v1" in table.stdout and ", seeding" not in tavernzoo("match", "--games", "4").stdout
    said = " ".join(tavernzoo("match", "--help").stdout.split())
    assert "v1 deprecated, for figures published before 2026-12-05" in said
    wrong = tavernzoo("match", "--seeding", "v3")
    assert wrong.returncode == 2 and "invalid choice: 'v3'" in wrong.stderr and "Traceback" not in wrong.stderr


def test_replay_refuses_a_tampered_record(tmp_path):
    records = tmp_path / "games.jsonl"
    tavernzoo("match", "--games", "2", "--records", str(records), "--no-progress")
    record = json.loads(records.read_text().splitlines()[0])
    record["actions"] = record["actions"][:-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    result = tavernzoo("replay", str(bad))
    assert result.returncode == 1 and "does not replay" in result.stdout


def test_bad_input_gets_a_clear_error_and_exit_status():
    result = tavernzoo("match", "tiny_minotaur", "--set", "classes=wizard,sword", "--games", "2", "--no-progress")
    assert result.returncode == 2 and "wizard" in result.stderr and "sword, magic, cloak" in result.stderr
    result = tavernzoo("match", "chess", "--games", "2")
    assert result.returncode == 2 and "unknown game 'chess'" in result.stderr


def test_set_values_are_json_comma_lists_or_text():
    from tavernzoo.cli import parse_set

    lists = frozenset({"pool_bots", "net_arch"})
    parsed = parse_set(["net_arch=256,256", "pool_bots=heuristic", "learning_rate=1e-4", "game_config={\"a\": 1}",
                        "pool_bots2=zoo:ministeel,mcts:100", "single=[64]", "name=run"], lists=lists)
    assert parsed == {"net_arch": [256, 256], "pool_bots": ["heuristic"], "learning_rate": 1e-4,
                      "game_config": {"a": 1}, "pool_bots2": ["zoo:ministeel", "mcts:100"], "single": [64],
                      "name": "run"}
    assert parse_set(["net_arch=64"], lists=lists) == {"net_arch": [64]}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_set(["net_arch"])


def test_match_help_prints_a_plain_percent_sign():
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "--help"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "95% interval" in result.stdout and "%%" not in result.stdout
