"""``tavernzoo leaderboard RUN...`` (eval/league.py): one rating table over tournaments and matches that share
bots, an llm: seat among them; bad runs refused in one sentence."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from llm_fake import FakeLLM

from tavernzoo.eval.league import league_results, print_league, read_runs
from tavernzoo.eval.match import play_match
from tavernzoo.eval.ratings import PlackettLuceTally
from tavernzoo.eval.schedule import make_settings
from tavernzoo.eval.tally import places_from_scores
from tavernzoo.eval.tournament import run_tournament


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A tournament (heuristic, random, an llm: seat answering the first legal action, whose fallback is
    random) and a match (heuristic against mcts) of Tiny Minotaur, and a MiniSteel match: what the tests read."""
    root = tmp_path_factory.mktemp("runs")
    server = FakeLLM()
    try:
        llm = f"llm:first@{server.url},fallback=random"
        settings = make_settings("tiny_minotaur", ["heuristic", "random", llm], 6, seed=3)
        run_tournament(settings, root / "tour", workers=1, progress=False)
    finally:
        server.close()
    play_match("tiny_minotaur", ["heuristic", "mcts:10"], 4, seed=1, records_path=root / "match.jsonl")
    play_match("ministeel", ["random", "random"], 2, seed=1, config={"num_players": 2},
               records_path=root / "ministeel.jsonl")
    return root, llm


def test_runs_that_share_a_bot_make_one_table_rated_over_every_game(runs):
    root, llm = runs
    both = read_runs([str(root / "tour"), str(root / "match.jsonl")])
    results = league_results(both)
    rows = {row["bot"]: row for row in results["leaderboard"]}
    assert set(rows) == {"heuristic", "random", llm, "mcts:10"}
    tour_games = json.loads((root / "tour" / "results.json").read_text())["games"]
    assert results["games"] == tour_games + 4
    assert rows["heuristic"]["runs"] == 2 and rows[llm]["runs"] == 1
    assert rows["heuristic"]["games"] == tour_games * 2 // 3 + 4  # two seats of three at each table, every match game
    # The ratings are OpenSkill's over every game, the runs in the order of their paths (match.jsonl < tour).
    index = {bot: i for i, bot in enumerate(["heuristic", "mcts:10", "random", llm])}
    tally = PlackettLuceTally(len(index))
    for line in (root / "match.jsonl").read_text().splitlines():
        record = json.loads(line)
        tally.rate([index[bot] for bot in record["seats"]], places_from_scores(record["returns"]))
    for line in sorted((json.loads(text) for text in (root / "tour" / "games.jsonl").read_text().splitlines()),
                       key=lambda line: (line["deal"], line["rotation"])):
        tally.rate([index[bot] for bot in line["bots"]], line["places"])
    for bot, rating in zip(index, tally.ratings(), strict=True):
        assert rows[bot]["mu"] == rating["mu"] and rows[bot]["ordinal"] == rating["ordinal"]
        low, high = rows[bot]["mu_ci"]
        assert low < rows[bot]["mu"] < high and high - low == pytest.approx(2 * 1.959964 * rating["sigma"])
    ordinals = [row["ordinal"] for row in results["leaderboard"]]
    assert ordinals == sorted(ordinals, reverse=True)
    # The order runs are named in changes nothing.
    assert league_results(read_runs([str(root / "match.jsonl"), str(root / "tour")])) == results


def test_llm_seats_show_their_counts_fallbacks_retries_and_reasoning_tokens_included(runs):
    root, llm = runs
    results = league_results(read_runs([str(root / "tour"), str(root / "match.jsonl")]))
    stats = {row["bot"]: row.get("bot_stats") for row in results["leaderboard"]}
    assert stats[llm]["requests"] > 0 and stats[llm]["fallbacks"] == 0 and stats["heuristic"] is None
    out = io.StringIO()
    print_league(results, file=out)
    text = out.getvalue()
    for column in ("requests", "fallbacks", "retries", "reasoning tokens", "LLM forfeits", "mu [95%]", "ordinal"):
        assert column in text
    # A table without llm: seats has none of their columns.
    out = io.StringIO()
    print_league(league_results(read_runs([str(root / "match.jsonl")])), file=out)
    assert "requests" not in out.getvalue() and "mcts:10" in out.getvalue()


def tavernzoo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True, timeout=120)


def test_the_command_prints_the_table_and_refuses_bad_runs_in_one_line(runs, tmp_path):
    root, _ = runs
    done = tavernzoo("leaderboard", str(root / "tour" / "results.json"), str(root / "match.jsonl"), "--json")
    assert done.returncode == 0, done.stderr
    assert {row["bot"] for row in json.loads(done.stdout)["leaderboard"]} >= {"heuristic", "mcts:10"}
    (tmp_path / "other.json").write_text('{"leaderboard": []}')
    (tmp_path / "empty").mkdir()
    for args, words in (
        ([str(tmp_path / "missing")], "missing: no such file or directory"),
        ([str(tmp_path / "other.json")], "other.json: no game record"),
        ([str(tmp_path / "empty")], "empty: a directory without a tournament's tournament.json"),
        ([str(root / "match.jsonl"), str(root / "ministeel.jsonl")], "games of ministeel"),
        ([str(root / "tour"), str(root / "tour" / "games.jsonl")], "the same run as"),
    ):
        done = tavernzoo("leaderboard", *args)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
