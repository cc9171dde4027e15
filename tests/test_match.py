"""The match loop: seat rotation, scoring, records written as games end, and the heuristic's strength."""

from __future__ import annotations

import json
import os

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.envs.records import replay
from tavernzoo.eval.match import entry_labels, play_match, score_of

FULL = bool(os.environ.get("TAVERNZOO_FULL"))


def test_score_of_gives_win_shares():
    assert score_of([1.0, -1.0], 0) == 1.0 and score_of([1.0, -1.0], 1) == 0.0
    assert score_of([0.0, 0.0], 1) == 0.5
    assert score_of([1.0, 1.0, -1.0, -1.0], 0) == 0.5


def test_entry_labels_number_repeated_specs():
    assert entry_labels(["heuristic", "random", "random"]) == ["heuristic", "random #1", "random #2"]


def test_a_match_rotates_seats_over_whole_deals_and_appends_a_record_per_game(tmp_path):
    path = tmp_path / "games.jsonl"
    result = play_match("tiny_minotaur", ["random", "random"], games=21, seed=3, records_path=path)
    assert result.deals == 11 and result.games == 22
    for row in result.rows:
        assert row.games == 22 and row.wins + row.draws + row.losses == 22
    assert result.rows[0].wins == result.rows[1].losses and result.rows[0].draws == result.rows[1].draws
    assert sum(row.score for row in result.rows) == pytest.approx(1.0)
    lines = path.read_text().splitlines()
    assert len(lines) == 22
    records = [json.loads(line) for line in lines]
    # each deal is played twice with the seats swapped
    assert records[0]["seed"] == records[1]["seed"] and records[0]["seats"] == records[1]["seats"][::-1]
    for record in records:
        replay(record)


def test_a_match_is_reproducible_from_its_seed():
    first = play_match("tiny_minotaur", ["heuristic", "random"], games=40, seed=9)
    second = play_match("tiny_minotaur", ["heuristic", "random"], games=40, seed=9)
    assert [(r.wins, r.draws, r.losses) for r in first.rows] == [(r.wins, r.draws, r.losses) for r in second.rows]


def test_bad_bot_specs_and_seat_counts_are_refused():
    with pytest.raises(ValueError, match="unknown bot spec 'genius'.*valid: random, heuristic"):
        load_bot("genius", "tiny_minotaur")
    with pytest.raises(ValueError, match="seats 2 players; got 3"):
        play_match("tiny_minotaur", ["random"] * 3, games=2)


@pytest.mark.slow
def test_the_heuristic_beats_random_by_a_clear_margin():
    games = 2000 if FULL else 400
    result = play_match("tiny_minotaur", ["heuristic", "random"], games=games, seed=0)
    heuristic = result.rows[0]
    assert heuristic.score_ci[0] > 0.6, heuristic
