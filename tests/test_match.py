"""The match loop: seat rotation, scoring, records written as games end, and the heuristic's strength."""

from __future__ import annotations

import json
import os

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.envs.records import replay
from tavernzoo.eval.match import entry_labels, play_match
from tavernzoo.eval.tally import score_of

FULL = bool(os.environ.get("TAVERNZOO_FULL"))


def test_a_game_scores_once_for_every_host_a_forfeit_too():
    """The one tally (eval/tally.py): shares and places from the returns, or from a forfeit."""
    from tavernzoo.eval.tally import DRAW, LOSS, WIN, outcome, score_game

    assert score_game([2.0, 2.0, -1.0], 3) == score_game([2.0, 2.0, -1.0], 3, None)
    assert (score_game([2.0, 2.0, -1.0], 3).scores, score_game([2.0, 2.0, -1.0], 3).places) == ([0.5, 0.5, 0.0],
                                                                                                [1, 1, 3])
    assert score_game([0.0, 0.0, 0.0], 3, seats_out=[2, 0]).places == [2, 1, 3]
    lost = score_game(None, 3, forfeit_seat=1)
    assert (lost.scores, lost.places) == ([0.5, 0.0, 0.5], [1, 3, 1])
    assert [outcome(share) for share in (1.0, 0.5, 0.0)] == [WIN, DRAW, LOSS]
    with pytest.raises(ValueError, match="without returns"):
        score_game(None, 2)


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


@pytest.mark.parametrize("seeding", ["v2", "v1"])
def test_a_match_played_here_writes_each_record_as_its_game_ends(tmp_path, monkeypatch, seeding):
    """A long match shows its progress in its records file, and one killed keeps the games it finished (bots
    built per deal, v2, or per block, v1: every game is played at the table engine's Table)."""
    from tavernzoo.eval.table import Table

    path = tmp_path / "games.jsonl"
    lines_before_each_game = []
    real_play = Table.play

    def counting_play(self, *args, **kwargs):
        lines_before_each_game.append(len(path.read_text().splitlines()) if path.exists() else 0)
        return real_play(self, *args, **kwargs)

    monkeypatch.setattr(Table, "play", counting_play)
    play_match("tiny_minotaur", ["heuristic", "random"], games=6, seed=2, records_path=path, seeding=seeding)
    assert lines_before_each_game == [0, 1, 2, 3, 4, 5]
    assert len(path.read_text().splitlines()) == 6


def test_a_spec_entered_twice_is_also_pooled_into_one_team_row():
    # A B A B at 4 seats: each pair's share of the wins is the sum of its entries' shares, deal by deal
    result = play_match("minefield", ["random", "heuristic", "random", "heuristic"], games=24, seed=5,
                        config={"num_players": 4})
    assert [row.bot for row in result.pooled] == ["random x2", "heuristic x2"]
    for team, (first, second) in zip(result.pooled, ((0, 2), (1, 3)), strict=True):
        rows = result.rows[first], result.rows[second]
        assert team.games == 2 * result.games and team.wins == rows[0].wins + rows[1].wins
        assert team.score == pytest.approx(rows[0].score + rows[1].score)
        assert team.per_deal_scores == pytest.approx([a + b for a, b in zip(rows[0].per_deal_scores,
                                                                                 rows[1].per_deal_scores, strict=True)])
        assert team.score_ci[0] <= team.score <= team.score_ci[1]
    assert sum(team.score for team in result.pooled) == pytest.approx(1.0)
    # no spec repeated: nothing pooled
    assert play_match("tiny_minotaur", ["heuristic", "random"], games=4, seed=1).pooled == []


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


# --- blocks, workers, backends ------------------------------------------------------------------------------


def test_a_match_of_one_block_plays_the_games_it_always_played():
    # Seeding v1 (deprecated, kept for one release): up to BLOCK_DEALS deals the bots take the seeds they took
    # before blocks existed: these numbers come from the match loop of the version before (tiny_minotaur,
    # heuristic vs random, 100 games, seed 4).
    result = play_match("tiny_minotaur", ["heuristic", "random"], games=100, seed=4, seeding="v1")
    assert result.seeding == "v1"
    assert [(row.wins, row.draws, row.losses, row.total_return) for row in result.rows] == [(69, 0, 31, 38.0),
                                                                                            (31, 0, 69, -38.0)]


@pytest.mark.parametrize("seeding", ["v2", "v1"])
def test_workers_play_the_same_games_records_and_results(tmp_path, seeding):
    from dataclasses import asdict

    from tavernzoo.eval.deals import DealPlan
    from tavernzoo.eval.match import BLOCK_DEALS

    games = 3 * (2 * BLOCK_DEALS + 4)  # three blocks, the last one short
    results = {}
    for workers in (1, 3):
        records = tmp_path / f"w{workers}.jsonl"
        results[workers] = play_match("ministeel", ["heuristic", "random", "random"], games, seed=2,
                                      config={"num_players": 3}, records_path=records, workers=workers,
                                      seeding=seeding)
    assert asdict(results[1]) == asdict(results[3]) and results[1].games == games
    assert (tmp_path / "w1.jsonl").read_bytes() == (tmp_path / "w3.jsonl").read_bytes()
    seeds = [json.loads(line)["seed"] for line in (tmp_path / "w1.jsonl").read_text().splitlines()]
    blocks = DealPlan(2, 3, games // 3, seeding).blocks(BLOCK_DEALS)
    assert seeds == [seed for block in blocks for seed in block.deal_seeds for _ in range(3)]  # in play order
    assert [len(block.deal_seeds) for block in blocks] == [BLOCK_DEALS, BLOCK_DEALS, 4]
    # v1: every block's bots are seeded afresh; v2 builds them per deal (the blocks carry no bot seeds)
    assert len({block.bot_seeds for block in blocks}) == (3 if seeding == "v1" else 1)


def test_smaller_blocks_spread_a_short_match_over_workers_with_the_same_deals(tmp_path):
    """block_deals=1 (seeding v1; v2's blocks: the next test): each deal a block (its bots seeded afresh), so
    6 deals are 6 jobs for the workers; the same games and records for any number of workers, and the deals
    the default block size plays."""
    from dataclasses import asdict

    from tavernzoo.eval.deals import DealPlan
    from tavernzoo.eval.match import BLOCK_DEALS

    results = {}
    for workers in (1, 2):
        results[workers] = play_match("ministeel", ["heuristic", "random", "random"], 18, seed=4,
                                      config={"num_players": 3}, records_path=tmp_path / f"w{workers}.jsonl",
                                      workers=workers, block_deals=1, seeding="v1")
    assert asdict(results[1]) == asdict(results[2]) and results[1].deals == 6
    assert (tmp_path / "w1.jsonl").read_bytes() == (tmp_path / "w2.jsonl").read_bytes()
    blocks = DealPlan(4, 3, 6, "v1").blocks(1)
    assert [len(block.deal_seeds) for block in blocks] == [1] * 6 and len({block.bot_seeds for block in blocks}) == 6
    assert tuple(seed for block in blocks for seed in block.deal_seeds) == DealPlan(4, 3, 6, "v1").blocks(
        BLOCK_DEALS)[0].deal_seeds
    with pytest.raises(ValueError, match="block_deals=0 must be a whole number from 1 to 100,000"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, block_deals=0)


def test_the_default_seeding_v2_plays_the_tournaments_games_for_any_block_size(tmp_path):
    """The one deal plan (eval/deals.py): a match, by default of seeding v2, plays, game for game, the
    tournament of the same seed at the table of its entries (random bots included: each is built per deal and
    reseeded per game), and the same games whatever the block size and the workers (which v1 does not promise
    for random bots)."""
    from dataclasses import asdict

    from tavernzoo.eval.tournament import make_settings, run_tournament

    bots = ["random", "heuristic"]
    settings = make_settings("tiny_minotaur", bots, 12, seed=6)
    run_tournament(settings, tmp_path / "t")
    lines = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    results = {}
    for workers, block_deals in ((1, 64), (1, 1), (2, 2)):
        path = tmp_path / f"m{workers}-{block_deals}.jsonl"
        results[workers, block_deals] = play_match("tiny_minotaur", bots, 12, seed=6, records_path=path,
                                                   workers=workers, block_deals=block_deals)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert [record["actions"] for record in records] == [line["record"]["actions"] for line in lines]
        assert [record["returns"] for record in records] == [line["returns"] for line in lines]
    assert asdict(results[1, 64]) == asdict(results[1, 1]) == asdict(results[2, 2])
    assert results[1, 64].seeding == "v2"
    assert asdict(play_match("tiny_minotaur", bots, 12, seed=6, seeding="v2")) == asdict(results[1, 64])
    v1 = play_match("tiny_minotaur", bots, 12, seed=6, records_path=tmp_path / "v1.jsonl", seeding="v1")
    assert [json.loads(line)["seed"] for line in (tmp_path / "v1.jsonl").read_text().splitlines()] != \
        [line["seed"] for line in lines]  # v1 keeps the seeds of the figures published before 2026-12-05
    assert v1.seeding == "v1"
    with pytest.raises(ValueError, match="seeding 'v3' is not one of v1, v2"):
        play_match("tiny_minotaur", bots, 2, seeding="v3")


def test_results_documents_say_their_scheme_and_older_ones_read_as_written_before():
    """eval/deals.py: every results document is stamped with its results version and seeding; one from before
    the stamp reads as the scheme its host used then (a match's v1, a tournament's v2)."""
    from tavernzoo.eval.deals import DealPlan, results_seeding, results_stamp

    assert DealPlan(0, 2, 4).seeding == "v2"
    assert results_stamp("v2") == {"results_version": 2, "seeding": "v2"}
    assert results_seeding({"game": "tiny_minotaur"}) == "v1" and results_seeding({}, unstamped="v2") == "v2"
    assert results_seeding(results_stamp("v1")) == "v1" and results_seeding({"results_version": 2}) is None
    with pytest.raises(ValueError, match="seeding 'v9', not one of v1, v2"):
        results_seeding({"results_version": 2, "seeding": "v9"})
    with pytest.raises(ValueError, match="seeding 'v0' is not one of v1, v2"):
        results_stamp("v0")


@pytest.mark.parametrize(("games", "workers", "block_deals", "noted"), [
    (8, 2, None, True), (2 * 64 + 2, 2, None, False), (2 * 64 + 2, 3, None, True), (8, 1, None, False),
    (8, 2, 2, False), (8, 3, 2, True)])
def test_the_match_command_says_when_workers_would_sit_idle(games, workers, block_deals, noted):
    """A block of deals is one process's: asking for more workers than blocks gets a note, not silence."""
    import subprocess
    import sys

    blocks_option = [] if block_deals is None else ["--block-deals", str(block_deals)]
    done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", "random",
                           "random", "--games", str(games), "--workers", str(workers), "--no-progress",
                           *blocks_option], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    blocks = -(-(games // 2) // (block_deals or 64))
    assert (f"note: --workers {workers}, but {games // 2} deal(s) make {blocks} block(s)" in done.stderr) is noted
    assert ("--block-deals 1" in done.stderr) is noted


def test_a_resumed_match_notes_idle_workers_by_the_deals_left_to_play(tmp_path):
    """``--resume`` plays only the deals its records lack: 130 of 132 recorded leave one block of two deals,
    so a second worker would sit idle and is noted, though 132 deals make three blocks."""
    import subprocess
    import sys

    records = tmp_path / "r.jsonl"

    def match(games: int, *extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", "random",
                               "random", "--games", str(games), "--records", str(records), "--no-progress", *extra],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done

    match(260)
    resumed = match(264, "--resume", "--workers", "2")
    assert ("note: --workers 2, but the 2 deal(s) left to play make 1 block(s) of up to 64 deals"
            in resumed.stderr), resumed.stderr
    assert "resumed: 130 of the 132 deals" in resumed.stderr


def test_a_resumed_match_reads_its_records_once(tmp_path, monkeypatch, capsys):
    """The idle-workers note comes from play_match's own count of the deals left, not a second reading of the
    records (a resumed match of many thousand games reads a file of hundreds of megabytes)."""
    from tavernzoo.cli import main
    from tavernzoo.eval import match as match_module

    records = tmp_path / "r.jsonl"
    reads = []
    recorded_deals = match_module.recorded_deals

    def counted(*args, **kwargs):
        reads.append(args[0])
        return recorded_deals(*args, **kwargs)

    monkeypatch.setattr(match_module, "recorded_deals", counted)
    common = ["match", "tiny_minotaur", "--bots", "random", "random", "--records", str(records), "--no-progress"]
    assert main([*common, "--games", "8"]) == 0
    assert main([*common, "--games", "12", "--resume", "--workers", "2"]) == 0
    assert len(reads) == 1
    assert "note: --workers 2, but the 2 deal(s) left to play make 1 block(s)" in capsys.readouterr().err


def test_bad_backend_options_are_refused():
    with pytest.raises(ValueError, match="backend 'dask' is not one of local, ray"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, backend="dask")
    with pytest.raises(ValueError, match="workers=0 must be a whole number from 1"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, workers=0)
    with pytest.raises(ValueError, match="needs backend='ray'"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, address="auto")


def _rows(result):
    return [(row.bot, row.games, row.wins, row.draws, row.losses, row.score, row.score_ci, row.per_deal_scores)
            for row in [*result.rows, *result.pooled]]


def _lines(path):
    return [(f"{path}:{number}", json.loads(line)) for number, line in enumerate(path.read_text().splitlines(), 1)]


@pytest.mark.parametrize("game, config, bots", [
    ("tiny_minotaur", None, ["heuristic", "random"]),
    ("ministeel", {"num_players": 4}, ["heuristic", "random", "heuristic", "random"]),
    ("minefield", {"num_players": 3}, ["random", "heuristic", "random"]),
])
def test_the_table_of_a_matchs_records_is_the_matchs_own(tmp_path, game, config, bots):
    from tavernzoo.eval.match import tally_records

    path = tmp_path / "games.jsonl"
    result = play_match(game, bots, games=24, seed=5, config=config, records_path=path)
    recorded = tally_records(_lines(path))
    assert _rows(recorded.result) == _rows(result) and recorded.left_out == []
    assert (recorded.result.deals, recorded.result.games, recorded.result.seed) == (result.deals, result.games, None)
    assert recorded.config == json.loads(path.read_text().splitlines()[0])["config"]


def test_records_of_matches_of_other_seeds_pool_and_an_unfinished_deal_is_left_out(tmp_path):
    from tavernzoo.eval.match import tally_records

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    one = play_match("ministeel", ["heuristic", "random", "random"], games=9, seed=1, config={"num_players": 3},
                     records_path=first)
    two = play_match("ministeel", ["heuristic", "random", "random"], games=6, seed=2, config={"num_players": 3},
                     records_path=second)
    lines = second.read_text().splitlines()
    second.write_text("\n".join(lines[:-1]) + "\n")  # the second match stopped in its last deal's last seating
    recorded = tally_records(_lines(first) + _lines(second))
    heuristic = recorded.result.rows[0]
    assert heuristic.bot == "heuristic" and recorded.result.deals == 4 and heuristic.games == 12
    assert heuristic.per_deal_scores == one.rows[0].per_deal_scores + two.rows[0].per_deal_scores[:1]
    assert recorded.left_out == [f"{second}:4: 2 of the 3 games of deal seed "
                                 f"{json.loads(lines[3])['seed']} (an unfinished deal)"]
    assert [row.bot for row in recorded.result.pooled] == ["random x2"]
    # Stopped in its first deal and rerun into the same file: the cut deal is left out, the rerun counts.
    second.write_text("\n".join(lines[:1]) + "\n" + "\n".join(lines) + "\n")
    rerun = tally_records(_lines(second))
    assert rerun.result.rows[0].per_deal_scores == two.rows[0].per_deal_scores and len(rerun.left_out) == 1


@pytest.mark.parametrize("edit, message", [
    ("twice", "was counted already"),
    ("other bots", "matches between other bots"),
    ("other options", "option double_whammy=True, the first record.s False"),
    ("no seed", "no deal seed"),
    ("unfinished game", "an unfinished game"),
    ("one seat twice", "sits at seat 1 again in deal seed"),
    ("all cut", "no whole deal"),
    ("cut, other bots", "matches between other bots"),
    ("bad stats", "'bot_stats' must be a list"),
])
def test_records_that_make_no_honest_table_are_refused_naming_the_record(tmp_path, edit, message):
    from tavernzoo.eval.match import tally_records

    path = tmp_path / "games.jsonl"
    play_match("minefield", ["random", "heuristic", "random"], games=6, seed=1, config={"num_players": 3},
               records_path=path)
    lines = _lines(path)
    record = lines[4][1]  # the second deal's second seating
    if edit == "twice":
        lines += lines
    elif edit == "other bots":
        record["seats"] = ["random #1", "heuristic", "oracle"]
    elif edit == "other options":
        record["config"] = {**record["config"], "double_whammy": True}
    elif edit == "no seed":
        record["seed"] = None
    elif edit == "unfinished game":
        record["returns"] = None
    elif edit == "one seat twice":  # the deal's third game seated as its second
        lines[5][1]["seats"] = record["seats"]
    elif edit == "all cut":
        lines = lines[:2]
    elif edit == "cut, other bots":  # an unfinished deal at the end, of another match's bots
        lines = lines[:4] + [(f"{path}:7", {**lines[0][1], "seed": 7, "seats": ["random #1", "heuristic", "oracle"]})]
    elif edit == "bad stats":
        record["bot_stats"] = [{}]
    with pytest.raises(ValueError, match=message) as raised:
        tally_records(lines)
    named = {"all cut": "", "twice": f"{path}:1:", "one seat twice": f"{path}:6:", "cut, other bots": f"{path}:7:"}
    assert named.get(edit, f"{path}:5:") in str(raised.value)


def test_records_are_grouped_into_deals_by_their_seed(tmp_path):
    """A duel stopped after its first game, then a match of another seed with the bots the other way round:
    the cut game is not paired with the next match's first (same seats, another deal)."""
    from tavernzoo.eval.match import tally_records

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    play_match("tiny_minotaur", ["heuristic", "random"], games=2, seed=1, records_path=first)
    first.write_text(first.read_text().splitlines()[0] + "\n")
    other = play_match("tiny_minotaur", ["random", "heuristic"], games=8, seed=2, records_path=second)
    recorded = tally_records(_lines(first) + _lines(second))
    assert recorded.left_out[0].startswith(f"{first}:1: 1 of the 2 games") and len(recorded.left_out) == 1
    assert _rows(recorded.result) == _rows(other)


@pytest.mark.parametrize(("seeding", "bots", "workers", "block_deals"), [
    ("v2", ["heuristic", "random", "random"], 1, 64),
    ("v2", ["heuristic", "random", "random"], 2, 1),
    ("v1", ["heuristic", "heuristic", "heuristic"], 1, 4),  # v1 rebuilds bots where it resumes: ones that draw none
])
def test_a_match_resumed_from_its_records_counts_them_and_plays_only_the_rest(tmp_path, seeding, bots, workers,
                                                                             block_deals):
    """A match stopped part way (here: deals 0, 2 and 3 whole, deal 4 cut after two seatings, deal 1 lost, as
    workers ending out of order leave it) and resumed: the table of the match never stopped, deal for deal, and
    a records file whose own table is that one too."""
    from dataclasses import asdict

    from tavernzoo.eval.match import tally_records

    options = {"config": {"num_players": 3}, "seeding": seeding, "block_deals": block_deals}
    whole = play_match("ministeel", bots, 30, seed=3, records_path=tmp_path / "whole.jsonl", **options)
    lines = (tmp_path / "whole.jsonl").read_text().splitlines(keepends=True)
    stopped = tmp_path / "stopped.jsonl"
    stopped.write_text("".join(line for number, line in enumerate(lines[:14]) if number // 3 != 1))
    resumed = play_match("ministeel", bots, 30, seed=3, records_path=stopped, resume=True, workers=workers,
                         **options)
    assert resumed.resumed == 3 and whole.resumed == 0
    assert asdict(resumed) == {**asdict(whole), "resumed": 3}
    after = stopped.read_text().splitlines(keepends=True)
    assert after[11:] == [lines[i] for i in [*range(3, 6), *range(12, 30)]]  # deal 1, then 4 to 9 whole
    recorded = tally_records(_lines(stopped))
    assert [row.score for row in recorded.result.rows] == pytest.approx([row.score for row in whole.rows])
    assert recorded.result.deals == 10 and len(recorded.left_out) == 1  # deal 4's cut seatings, replayed whole


def test_resuming_passes_over_other_matches_records_and_a_finished_match_plays_nothing(tmp_path):
    bots, options = ["heuristic", "random", "random"], {"config": {"num_players": 3}}
    path = tmp_path / "games.jsonl"
    play_match("ministeel", bots, 6, seed=9, records_path=path, **options)  # another seed's deals
    play_match("ministeel", ["random", "heuristic", "random"], 6, seed=4, records_path=path, **options)  # other bots
    before = path.read_text()
    first = play_match("ministeel", bots, 9, seed=4, records_path=path, resume=True, **options)
    assert first.resumed == 0 and path.read_text().startswith(before) and len(path.read_text().splitlines()) == 21
    finished = path.read_bytes()
    again = play_match("ministeel", bots, 9, seed=4, records_path=path, resume=True, **options)
    assert again.resumed == 3 and path.read_bytes() == finished  # nothing played, nothing written
    assert [row.per_deal_scores for row in again.rows] == [row.per_deal_scores for row in first.rows]
    fresh = play_match("ministeel", bots, 9, seed=4, records_path=tmp_path / "new.jsonl", resume=True, **options)
    assert fresh.resumed == 0 and fresh.deals == 3  # no file yet: the whole match, as without resume
    empty = tmp_path / "empty.jsonl"
    empty.touch()  # a match killed before its first game ended leaves its records file empty
    resumed_empty = play_match("ministeel", bots, 9, seed=4, records_path=empty, resume=True, **options)
    assert resumed_empty.resumed == 0 and resumed_empty.deals == 3


def test_resume_is_refused_where_it_cannot_count_the_recorded_deals(tmp_path):
    import subprocess
    import sys

    with pytest.raises(ValueError, match="needs the records file"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, resume=True)
    with pytest.raises(ValueError, match="cannot go with variance reduction"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, records_path=tmp_path / "r.jsonl", resume=True,
                   luck="playouts")
    with pytest.raises(ValueError, match="cannot go with sequential"):
        play_match("tiny_minotaur", ["heuristic", "random"], 2, records_path=tmp_path / "r.jsonl", resume=True,
                   sequential=True)
    done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--resume", "--games",
                           "2"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "needs the records file (--records FILE)" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r.jsonl").exists()


def test_a_match_rerun_into_its_records_without_resume_is_refused_and_writes_nothing(tmp_path):
    """Played again into the same file, a match's deals would stand there twice, which no tally counts: the
    rerun is refused in one line naming --resume, and the file is left as it was. Another seed, or other bots,
    may share the file (matches pooled into one file)."""
    import subprocess
    import sys

    records = tmp_path / "r.jsonl"
    bots = ["heuristic", "random"]
    play_match("tiny_minotaur", bots, 4, seed=3, records_path=records)
    before = records.read_bytes()
    with pytest.raises(ValueError, match=r"already holds 4 game\(s\) of this match .*--resume continues it"):
        play_match("tiny_minotaur", bots, 6, seed=3, records_path=records)
    assert records.read_bytes() == before
    play_match("tiny_minotaur", bots, 4, seed=4, records_path=records)  # another seed: other deals
    play_match("tiny_minotaur", ["random", "random"], 4, seed=3, records_path=records)  # other bots
    assert play_match("tiny_minotaur", bots, 6, seed=3, records_path=records, resume=True).resumed == 2
    done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--bots", *bots,
                           "--games", "4", "--seed", "3", "--records", str(records), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--resume continues it" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("seeding", ["v2", "v1"])
def test_a_resumed_match_with_more_games_plays_on_from_the_same_deals(tmp_path, seeding):
    bots, options = ["heuristic", "heuristic", "heuristic"], {"config": {"num_players": 3}, "seeding": seeding}
    longer = play_match("ministeel", bots, 18, seed=6, **options)
    path = tmp_path / "games.jsonl"
    play_match("ministeel", bots, 9, seed=6, records_path=path, **options)
    extended = play_match("ministeel", bots, 18, seed=6, records_path=path, resume=True, **options)
    assert extended.resumed == 3 and len(path.read_text().splitlines()) == 18
    assert [row.per_deal_scores for row in extended.rows] == [row.per_deal_scores for row in longer.rows]
