"""Tournaments: covering schedules, duplicate deals, results, forfeits of broken external bots, resume, SPRT."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.external import BotFailure, ExternalBot
from tavernzoo.envs.records import replay
from tavernzoo.eval.ratings import Sprt, openskill_ratings
from tavernzoo.eval.results import PlackettLuceTally, game_key, game_summary
from tavernzoo.eval.stats import counted_mean_interval
from tavernzoo.eval.tournament import (
    GAMES_FILE,
    PARTS_DIR,
    Tally,
    compute_results,
    make_settings,
    make_tables,
    read_games,
    required_triples,
    run_tournament,
    scan_games,
    seating,
)

FIXTURES = Path(__file__).parent / "fixtures"
PYTHON = sys.executable
GOOD = f"cmd:{PYTHON} {FIXTURES / 'protocol_random_bot.py'}"


def broken(mode: str, *extra: str) -> str:
    return f"cmd:{PYTHON} {FIXTURES / 'broken_bot.py'} {mode} {' '.join(extra)}".rstrip()


def play(tmp_path, bots, games, name="t", *, game="tiny_minotaur", workers=1, resume=False, **options):
    settings = make_settings(game, bots, games, **options)
    return run_tournament(settings, tmp_path / name, workers=workers, resume=resume)


def games_of(tmp_path, name="t"):
    return read_games(tmp_path / name / GAMES_FILE)


# --- the schedule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entries", "seats", "fmt"),
    [(2, 2, "round-robin"), (5, 2, "round-robin"), (4, 2, "gauntlet"), (3, 3, "round-robin"), (4, 4, "round-robin"),
     (6, 4, "round-robin"), (7, 3, "gauntlet"), (6, 6, "round-robin"), (9, 5, "round-robin"), (8, 6, "gauntlet")],
)
def test_one_cycle_of_tables_puts_every_pair_in_every_pair_of_seats(entries, seats, fmt):
    tables = make_tables(entries, seats, fmt, seed=3)
    met = set()
    for table in tables:
        assert len(set(table)) == seats and all(0 <= e < entries for e in table)
        if fmt == "gauntlet":
            assert 0 in table
        for rotation in range(seats):  # one deal = every rotation of the table
            at = seating(table, rotation)
            met |= {(at[s], at[t], s, t) for s in range(seats) for t in range(seats) if s != t}
    pairs = {(a, b) for a, b, _ in required_triples(entries, seats, fmt)}
    everyone = itertools.permutations(range(entries), 2)
    assert pairs == {(a, b) for a, b in everyone if fmt == "round-robin" or 0 in (a, b)}
    for a, b in pairs:
        for s, t in itertools.permutations(range(seats), 2):
            assert (a, b, s, t) in met, f"{a} never sat at seat {s} with {b} at seat {t}"
    # a cycle is not wasteful: a table covers n(n-1) ordered-pair offsets (2(n-1) with the candidate, in a
    # gauntlet) and every pair needs n-1, so at least N(N-1)/n tables (N-1 in a gauntlet) are needed
    lower = entries - 1 if fmt == "gauntlet" else -(-entries * (entries - 1) // seats)
    assert lower <= len(tables) <= 1.7 * lower + 1
    assert tables == make_tables(entries, seats, fmt, seed=3)


def test_every_rotation_seats_every_table_member_once_in_every_seat():
    for table in make_tables(5, 4, seed=0):
        seats_of = {entry: sorted(seating(table, r).index(entry) for r in range(4)) for entry in table}
        assert all(seats == [0, 1, 2, 3] for seats in seats_of.values())


def test_too_few_entries_or_bad_settings_are_refused():
    with pytest.raises(ValueError, match="seats 4 players.*at least 4 bot entries; got 2"):
        make_settings("ministeel", ["heuristic", "random"], 10)
    with pytest.raises(ValueError, match="format='swiss'"):
        make_tables(4, 2, "swiss")
    with pytest.raises(ValueError, match="unknown bot spec 'genius'"):
        make_settings("tiny_minotaur", ["genius", "random"], 10)
    with pytest.raises(ValueError, match="two bots in a two-player game"):
        make_settings("tiny_minotaur", ["heuristic", "random", "random"], 10, sprt=[0, 10, 0.05, 0.05])


# --- a run -------------------------------------------------------------------------------------------


def test_a_duel_round_robin_plays_duplicate_deals_and_rates_every_pair(tmp_path):
    results = play(tmp_path, ["heuristic", "random", "random"], 23, seed=5)
    lines = games_of(tmp_path)
    assert results["games"] == len(lines) == 24 and results["deals"] == 12  # rounded up to whole deals
    by_deal = {}
    for line in lines:
        by_deal.setdefault(line["deal"], []).append(line)
        assert line["record"]["seed"] == line["seed"] and line["record"]["seats"] == line["bots"]
        replay(line["record"])  # the full game record replays to its result
    for deal, games in by_deal.items():
        # the duplicate deal: one seed, both seatings, the same two entries swapped
        assert {g["seed"] for g in games} == {games[0]["seed"]} and len(games) == 2
        assert games[0]["entries"] == games[1]["entries"][::-1]
        assert set(games[0]["entries"]) == set(make_tables(3, 2)[deal % 3])
    board = {row["bot"]: row for row in results["leaderboard"]}
    assert set(board) == {"heuristic", "random #1", "random #2"}
    assert sum(row["games"] for row in board.values()) == 48
    assert sum(row["wins"] for row in board.values()) == sum(row["losses"] for row in board.values())
    assert board["heuristic"]["rank"] == 1 and board["heuristic"]["elo"] > 0
    for row in board.values():
        assert row["deals"] == 8 and row["score_ci"][0] <= row["score"] <= row["score_ci"][1]
        assert row["deal_wins"] + row["deal_draws"] + row["deal_losses"] == 8
    assert len(results["pairs"]) == 3 and results["cycle"]["complete"]
    stored = json.loads((tmp_path / "t" / "results.json").read_text())
    assert stored["leaderboard"] == results["leaderboard"]


def test_a_four_player_table_gets_openskill_ratings_and_places(tmp_path):
    results = play(tmp_path, ["heuristic", "random", "random", "random"], 20, game="ministeel", seed=1)
    lines = games_of(tmp_path)
    assert results["cycle"]["deals"] == 5  # four bots at four seats: five orderings cover every seat pair
    assert len(lines) == 20 and results["cycle"]["complete"]
    expected = openskill_ratings([(line["entries"], line["places"]) for line in lines], 4)
    for row in results["leaderboard"]:
        entry = results["bots"].index(row["bot"])
        assert row["mu"] == pytest.approx(expected[entry]["mu"])
        assert row["ordinal"] == pytest.approx(expected[entry]["ordinal"])
        assert 1.0 <= row["avg_place"] <= 4.0 and row["games"] == 20
    for line in lines:
        assert sorted(line["entries"]) == [0, 1, 2, 3]
        assert sum(line["scores"]) == pytest.approx(1.0)
    ordinals = [row["ordinal"] for row in results["leaderboard"]]
    assert ordinals == sorted(ordinals, reverse=True)


# --- forfeits ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "kind"), [("crash", "crash"), ("hang", "timeout"), ("garbage", "garbage"),
                                            ("illegal", "illegal")])
def test_a_broken_external_bot_forfeits_every_game_and_the_tournament_goes_on(tmp_path, mode, kind):
    # Only the hanging bot needs a short limit; the others get room to start on a loaded machine, where a
    # slow start would read as a timeout instead of the fault under test.
    results = play(tmp_path, [GOOD, broken(mode)], 4, move_timeout=0.5 if mode == "hang" else 10)
    lines = games_of(tmp_path)
    assert len(lines) == 4
    for line in lines:
        bad_seat = line["entries"].index(1)
        assert line["forfeit"]["seat"] == bad_seat and line["forfeit"]["kind"] == kind
        assert line["scores"][bad_seat] == 0.0 and line["scores"][1 - bad_seat] == 1.0
        assert line["places"][bad_seat] == 2 and line["returns"] is None
        replay_prefix = line["record"]  # the record of the game so far, unfinished
        assert replay_prefix["returns"] is None
    board = {row["spec"]: row for row in results["leaderboard"]}
    assert board[broken(mode)]["forfeits"] == 4 and board[broken(mode)]["losses"] == 4
    assert board[GOOD]["wins"] == 4 and board[GOOD]["forfeits"] == 0
    assert len(results["forfeits"]) == 4
    if mode == "crash":
        assert "crashing on purpose" in results["forfeits"][0]["reason"]  # its stderr is in the log


def test_a_program_restarted_right_after_a_bad_reply_gets_its_own_replies():
    """The dead program's reader thread owns its pipe: closing it from the host could free a descriptor the
    reader was about to read, hand that number to the next program's pipe and lose its reply there (about
    one restart in 200 timed out before the fix)."""
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import make_env

    game = get_game("tiny_minotaur")
    config = game.make_config()
    env = make_env(game, config)
    bot = load_bot(broken("illegal"), game, config, seed=0)
    kinds = Counter()
    for number in range(300):
        env.reset(seed=number)
        try:
            bot.begin_game(0)
            bot.act(env.observe(env.agent_selection))
        except BotFailure as failure:
            kinds[failure.kind] += 1
    bot.close()
    assert kinds == Counter(illegal=300) and bot.restarts == 299


def test_a_crashed_program_is_restarted_and_plays_its_next_games(tmp_path):
    marker = tmp_path / "crashed-once"
    results = play(tmp_path, ["random", broken("crash-once", str(marker))], 6)
    lines = sorted(games_of(tmp_path), key=lambda line: (line["deal"], line["rotation"]))
    assert marker.exists()
    assert lines[0]["forfeit"]["kind"] == "crash"
    assert [line["forfeit"] for line in lines[1:]] == [None] * 5
    assert len(results["forfeits"]) == 1


def test_a_multi_player_forfeit_loses_and_the_others_share_the_win(tmp_path):
    play(tmp_path, ["random", "random", "heuristic", broken("garbage")], 4, game="ministeel")
    for line in games_of(tmp_path):
        bad = line["entries"].index(3)
        assert line["forfeit"]["seat"] == bad
        assert line["scores"] == [0.0 if seat == bad else pytest.approx(1 / 3) for seat in range(4)]
        assert line["places"] == [4 if seat == bad else 1 for seat in range(4)]


def test_an_in_process_bot_that_raises_forfeits(tmp_path, monkeypatch):
    from tavernzoo.agents.random_bot import RandomBot

    def explode(self, observation):
        raise RuntimeError("boom")

    monkeypatch.setattr(RandomBot, "act", explode)
    play(tmp_path, ["heuristic", "random"], 2)
    for line in games_of(tmp_path):
        assert line["forfeit"]["kind"] == "error" and "RuntimeError: boom" in line["forfeit"]["reason"]


def test_external_bots_get_the_view_with_each_decision(tmp_path):
    results = play(tmp_path, [GOOD, broken("needs-view"), "heuristic"], 12, seed=2)
    assert results["forfeits"] == [] and results["games"] == 12


def test_external_bot_speaks_the_protocol_and_fails_with_a_reason():
    bot = load_bot(GOOD, "tiny_minotaur", seed=1)
    assert isinstance(bot, ExternalBot)
    from tavernzoo.eval.match import make_env

    env = make_env(bot.game)
    env.reset(seed=4)
    agent = env.agent_selection  # the seat that moves first (the initiative roll decides)
    bot.begin_game(env.possible_agents.index(agent), seed=9)
    assert bot.program_name == "fixture-random"
    observation = env.observe(agent)
    assert observation["action_mask"][bot.act(observation)] == 1
    bot.game_over([1.0, -1.0], 0)
    bot.close()
    assert not bot.alive
    hung = load_bot(broken("hang"), "tiny_minotaur")
    hung.move_timeout = 0.3
    hung.begin_game(1, seed=0)
    with pytest.raises(BotFailure, match="timeout: no reply to 'act' within 0.3 s") as failure:
        hung.act(observation)
    assert failure.value.kind == "timeout" and not hung.alive
    hung.begin_game(1, seed=0)  # restarted before its next game
    assert hung.alive and hung.restarts == 1
    hung.close()
    with pytest.raises(ValueError, match="'/nonexistent/program' not found"):
        ExternalBot(bot.config, 0, "/nonexistent/program --flag", bot.game)
    with pytest.raises(ValueError, match="names no program"):
        load_bot("cmd:", "tiny_minotaur")


# --- resume ------------------------------------------------------------------------------------------


def _game_lines(tmp_path, name):
    return {(line["deal"], line["rotation"]): line for line in games_of(tmp_path, name)}


def test_resuming_a_shorter_run_gives_the_uninterrupted_run_whatever_the_workers(tmp_path):
    bots = ["heuristic", "random", GOOD]
    whole = play(tmp_path, bots, 24, "whole", seed=7, workers=2)
    play(tmp_path, bots, 10, "parts", seed=7)
    resumed = play(tmp_path, bots, 24, "parts", seed=7, resume=True)
    assert resumed["leaderboard"] == whole["leaderboard"] and resumed["pairs"] == whole["pairs"]
    lines = [json.loads(raw) for raw in (tmp_path / "parts" / GAMES_FILE).read_text().splitlines()]
    keys = Counter((line["deal"], line["rotation"]) for line in lines)
    assert len(lines) == 24 and max(keys.values()) == 1  # nothing lost, nothing twice
    assert _game_lines(tmp_path, "parts") == _game_lines(tmp_path, "whole")
    # finished: resuming again plays nothing
    again = play(tmp_path, bots, 24, "parts", seed=7, resume=True)
    assert again["games"] == 24 and len(games_of(tmp_path, "parts")) == 24


def test_resume_refuses_another_tournament_and_a_fresh_run_refuses_a_used_directory(tmp_path):
    play(tmp_path, ["heuristic", "random"], 2, seed=1)
    with pytest.raises(ValueError, match="already holds games: pass --resume"):
        play(tmp_path, ["heuristic", "random"], 2, seed=1)
    with pytest.raises(ValueError, match="differs in seed"):
        play(tmp_path, ["heuristic", "random"], 4, seed=2, resume=True)
    with pytest.raises(ValueError, match="nothing to resume"):
        play(tmp_path, ["heuristic", "random"], 4, "elsewhere", resume=True)


def test_killing_a_run_midway_and_resuming_leaves_exactly_the_requested_games(tmp_path):
    slow = f"{GOOD} --delay 0.01"
    out = tmp_path / "killed"
    script = (
        "import sys; from tavernzoo.eval.tournament import make_settings, run_tournament; "
        f"run_tournament(make_settings('tiny_minotaur', ['heuristic', {slow!r}], 24, seed=3), {str(out)!r})"
    )
    process = subprocess.Popen([PYTHON, "-c", script], start_new_session=True)
    games_path = out / GAMES_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if games_path.exists() and games_path.read_text().count("\n") >= 4:
            break
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)  # the runner and its bot program, mid-game
    process.wait()
    written = games_path.read_text().count("\n")
    assert 4 <= written < 24, "the run finished before it could be killed"
    with open(games_path, "a") as handle:
        handle.write('{"deal": 99, "rotat')  # a line cut short by the kill
    resumed = run_tournament(make_settings("tiny_minotaur", ["heuristic", slow], 24, seed=3), out, resume=True)
    lines = [json.loads(raw) for raw in games_path.read_text().splitlines()]
    keys = Counter((line["deal"], line["rotation"]) for line in lines)
    assert len(lines) == 24 and set(keys) == {(d, r) for d in range(12) for r in range(2)}
    assert resumed["games"] == 24
    whole = play(tmp_path, ["heuristic", slow], 24, "whole", seed=3)
    assert resumed["leaderboard"] == whole["leaderboard"]


# --- SPRT, the command, the heatmap ----------------------------------------------------------------------


def test_sprt_stops_at_the_first_deal_that_decides(tmp_path):
    results = play(tmp_path, ["heuristic", "random"], 400, sprt=[0, 100, 0.05, 0.05], seed=4)
    sprt = results["sprt"]
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"]
    assert results["games"] == sprt["games"] < 400
    test = Sprt(0, 100, 0.05, 0.05)
    lines = sorted(games_of(tmp_path), key=lambda line: (line["deal"], line["rotation"]))
    wdl = [0, 0, 0]
    for number, line in enumerate(lines[: results["games"]], start=1):
        share = line["scores"][line["entries"].index(0)]
        wdl[0 if share == 1 else 2 if share == 0 else 1] += 1
        if number % 2 == 0 and number < results["games"]:
            assert test.decision(test.llr(*wdl)) is None  # no earlier deal decided
    assert sprt["llr"] == pytest.approx(test.llr(*wdl)) and [sprt["wins"], sprt["draws"], sprt["losses"]] == wdl


def test_the_command_prints_the_leaderboard_and_writes_results_and_heatmap(tmp_path):
    out = tmp_path / "cli"
    command = [PYTHON, "-m", "tavernzoo.cli", "tournament", "wyvern", "--set", "num_players=3", "--bots", "heuristic",
               "random", "random", "--games", "6", "--workers", "1", "--out", str(out), "--no-progress"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "heuristic" in done.stdout and "ordinal" in done.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["games"] == 6 and results["config"]["num_players"] == 3
    assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # --resume needs only the game and the directory: bots, options and seed come from tournament.json
    from tavernzoo.commands.tournament import main

    assert main(["wyvern", "--out", str(out), "--resume", "--games", "9", "--no-progress", "--no-plot"]) == 0
    assert json.loads((out / "results.json").read_text())["games"] == 9
    # ... and its number of games: a resumed run ends where it was going to, not at the default 1000
    assert main(["wyvern", "--out", str(out), "--resume", "--no-progress", "--no-plot"]) == 0
    assert json.loads((out / "results.json").read_text())["games"] == 9


def test_main_reports_user_errors_with_exit_status_2(tmp_path, capsys):
    from tavernzoo.commands.tournament import main

    assert main(["ministeel", "--bots", "random", "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "at least 4 bot entries" in capsys.readouterr().err


def test_checkpoints_enter_like_any_other_bot(tmp_path):
    import numpy as np

    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.envs import get_game

    game = get_game("tiny_minotaur")
    config = game.make_config()
    sizes = [game.encoder.observation_size(config), 16, len(game.action_names(config))]
    rng = np.random.default_rng(0)
    weights = [rng.normal(size=(out, inp)).astype(np.float32) for inp, out in itertools.pairwise(sizes)]
    biases = [np.zeros(out, dtype=np.float32) for out in sizes[1:]]
    checkpoint = tmp_path / "checkpoint"
    MLPPolicy(weights, biases, "tanh", {"env": game.env_name}).save(checkpoint)
    results = play(tmp_path, [str(checkpoint), f"{checkpoint}@sample", "random"], 12, seed=1)
    assert results["games"] == 12 and results["forfeits"] == []
    assert {row["spec"] for row in results["leaderboard"]} == {str(checkpoint), f"{checkpoint}@sample", "random"}


@pytest.mark.parametrize("answer", [True, 1.7, "0", None])
def test_a_bot_answering_something_other_than_an_integer_forfeits(answer):
    # As in the envs, only an integer is a move: True or 1.7 is not silently read as action 1.
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import make_env
    from tavernzoo.eval.runner import Forfeit, Guard

    class Answers:
        name = "answers"

        def reset(self):
            pass

        def act(self, observation):
            return answer

    env = make_env(get_game("tiny_minotaur"), get_game("tiny_minotaur").make_config())
    env.reset(seed=0)
    observation, *_ = env.last()
    with pytest.raises(Forfeit, match="is not legal now"):
        Guard(Answers(), 0, 0, env).act(observation)


# --- per-worker parts, the running tally -------------------------------------------------------------------


def _sorted_lines(path):
    return sorted((json.loads(raw) for raw in Path(path).read_text().splitlines()),
                  key=lambda line: (line["deal"], line["rotation"]))


def test_any_number_of_workers_writes_the_same_games_and_results(tmp_path):
    bots = ["heuristic", "random", "random"]
    runs = {workers: play(tmp_path, bots, 60, f"w{workers}", seed=11, workers=workers) for workers in (1, 2, 3)}
    assert runs[1] == runs[2] == runs[3]
    lines = {workers: _sorted_lines(tmp_path / f"w{workers}" / GAMES_FILE) for workers in runs}
    assert lines[1] == lines[2] == lines[3] and len(lines[1]) == 60
    for workers in (2, 3):  # the workers' parts were appended to games.jsonl and removed
        assert not (tmp_path / f"w{workers}" / PARTS_DIR).exists()


def test_the_tally_counts_games_in_any_order_as_the_file_would(tmp_path):
    import random

    settings = make_settings("ministeel", ["heuristic", "random", "random", "random", "random"], 40, seed=2)
    results = run_tournament(settings, tmp_path / "t", workers=2)
    summaries = [game_summary(line) for line in games_of(tmp_path)]  # no records: the tally does not need them
    random.Random(0).shuffle(summaries)
    tally = Tally(settings)
    for game in summaries + summaries[:7]:  # a game taken twice counts once
        tally.add(game)
    assert tally.results() == results == compute_results(settings, games_of(tmp_path))


def test_sprt_and_forfeits_are_the_same_with_workers(tmp_path):
    one = play(tmp_path, ["heuristic", "random"], 400, "one", sprt=[0, 100, 0.05, 0.05], seed=4)
    two = play(tmp_path, ["heuristic", "random"], 400, "two", sprt=[0, 100, 0.05, 0.05], seed=4, workers=2)
    assert one["sprt"] == two["sprt"] and one["leaderboard"] == two["leaderboard"] and one["games"] == two["games"]
    forfeits = play(tmp_path, [GOOD, broken("garbage"), "random"], 12, "forfeits", seed=1, workers=2)
    assert len(forfeits["forfeits"]) == 8  # the broken bot's 8 games (2 of its 3 pairings x 2 seats x 2 deals)
    assert forfeits["forfeits"] == sorted(forfeits["forfeits"], key=lambda item: (item["deal"], item["rotation"]))
    assert forfeits == play(tmp_path, [GOOD, broken("garbage"), "random"], 12, "forfeits-1", seed=1)


def test_killing_a_run_with_workers_leaves_parts_that_resume_counts_once(tmp_path):
    slow = f"{GOOD} --delay 0.01"
    out = tmp_path / "killed"
    script = (
        "from tavernzoo.eval.tournament import make_settings, run_tournament; "
        f"run_tournament(make_settings('tiny_minotaur', ['heuristic', {slow!r}], 40, seed=3), {str(out)!r}, "
        "workers=2)"
    )
    process = subprocess.Popen([PYTHON, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        parts = list((out / PARTS_DIR).glob("*.jsonl")) if (out / PARTS_DIR).exists() else []
        if sum(part.read_text().count("\n") for part in parts) >= 6:
            break
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)  # the driver, its workers and their bot programs
    process.wait()
    parts = sorted((out / PARTS_DIR).glob("*.jsonl"))
    written = sum(part.read_text().count("\n") for part in parts)
    assert parts and 6 <= written < 40, "the run finished before it could be killed"
    assert not (out / GAMES_FILE).exists() or (out / GAMES_FILE).stat().st_size == 0
    # A kill between appending a part to games.jsonl and removing it leaves a game twice; and a part's
    # last line cut short by the kill.
    # The first whole line of any part: under load one worker's part may still be empty when the kill comes.
    first = next(text.split("\n", 1)[0] for text in (part.read_text() for part in parts) if "\n" in text)
    (out / GAMES_FILE).write_text(first + "\n")
    with open(parts[-1], "a") as handle:
        handle.write('{"deal": 7, "rotat')
    resumed = run_tournament(make_settings("tiny_minotaur", ["heuristic", slow], 40, seed=3), out, resume=True)
    lines = _sorted_lines(out / GAMES_FILE)
    keys = Counter((line["deal"], line["rotation"]) for line in lines)
    assert set(keys) == {(d, r) for d in range(20) for r in range(2)}
    assert sum(keys.values()) == 41  # the one game written twice by the (simulated) cut merge, nothing else
    assert not (out / PARTS_DIR).exists() and resumed["games"] == 40 and resumed["games_not_counted"] == 0
    whole = play(tmp_path, ["heuristic", slow], 40, "whole", seed=3, workers=2)
    assert resumed == whole
    assert {key: line for key, line in ((game_key(x), x) for x in lines)} == {
        game_key(x): x for x in _sorted_lines(tmp_path / "whole" / GAMES_FILE)}


def test_a_directory_of_the_older_layout_resumes(tmp_path):
    # Before per-worker parts a tournament was games.jsonl alone (with a cut last line after a kill).
    whole = play(tmp_path, ["heuristic", "random", "random"], 30, "whole", seed=6)
    old = tmp_path / "old"
    old.mkdir()
    (old / "tournament.json").write_text((tmp_path / "whole" / "tournament.json").read_text())
    kept = (tmp_path / "whole" / GAMES_FILE).read_text().splitlines()[:11]
    (old / GAMES_FILE).write_text("\n".join(kept) + "\n" + kept[0][:40])
    resumed = play(tmp_path, ["heuristic", "random", "random"], 30, "old", seed=6, resume=True, workers=2)
    assert resumed == whole
    assert _sorted_lines(old / GAMES_FILE) == _sorted_lines(tmp_path / "whole" / GAMES_FILE)
    assert sum(1 for _ in scan_games(old)) == 30


def test_results_say_their_version_and_a_run_from_before_still_resumes_and_rates(tmp_path):
    """results.json carries results_version 2 and the tournament's one seeding, v2 (eval/deals.py); a run from
    before (its results.json without them) still rates in a leaderboard and resumes to the same results."""
    from tavernzoo.eval.deals import results_seeding
    from tavernzoo.eval.league import league_results, read_run
    from tavernzoo.eval.results import RESULTS_FILE

    whole = play(tmp_path, ["heuristic", "random"], 8, "whole", seed=3)
    assert (whole["results_version"], whole["seeding"]) == (2, "v2")
    assert json.loads((tmp_path / "whole" / RESULTS_FILE).read_text())["results_version"] == 2
    old = tmp_path / "old"
    play(tmp_path, ["heuristic", "random"], 4, "old", seed=3)
    before = json.loads((old / RESULTS_FILE).read_text())
    del before["results_version"], before["seeding"]
    (old / RESULTS_FILE).write_text(json.dumps(before))
    assert results_seeding(before, unstamped="v2") == "v2"  # tournaments have always seeded this way
    assert league_results([read_run(old / RESULTS_FILE)])["games"] == 4
    resumed = play(tmp_path, ["heuristic", "random"], 8, "old", seed=3, resume=True)
    assert resumed == whole and json.loads((old / RESULTS_FILE).read_text())["seeding"] == "v2"


def test_fast_openskill_equals_the_library_to_the_last_bit():
    import random

    rng = random.Random(5)
    for _ in range(100):
        players = rng.randint(2, 7)
        seats = rng.randint(2, min(players, 6))
        games = [(rng.sample(range(players), seats), [rng.randint(1, seats) for _ in range(seats)])
                 for _ in range(rng.randint(1, 30))]  # ties and gaps in the places included
        fast = PlackettLuceTally(players)
        for entries, places in games:
            fast.rate(entries, places)
        assert fast.ratings() == openskill_ratings(games, players)


def test_counted_intervals_equal_the_interval_of_the_samples():
    import random

    from tavernzoo.eval.stats import mean_interval

    rng = random.Random(1)
    for size in (0, 1, 2, 3, 50, 400):
        samples = [rng.choice([0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.25, 0.1]) for _ in range(size)]
        assert counted_mean_interval(Counter(samples)) == mean_interval(samples) or size == 0
    assert counted_mean_interval(Counter())[1:] == (float("-inf"), float("inf"))


# --- luck taken out and the sequential stop (eval/luck.py, docs/strength.md "Luck taken out") -------------------


def test_variance_reduction_gives_every_entry_a_corrected_score_from_its_games_luck(tmp_path):
    from tavernzoo.eval.stats import control_variate_values, mean_interval

    bots = ["heuristic", "random", "random"]
    results = play(tmp_path, bots, 240, seed=5, luck="zoo:tiny_minotaur", chance_samples=2)
    assert results["variance_reduction"] == {"bot": "zoo:tiny_minotaur", "chance_samples": 2}
    lines = sorted(games_of(tmp_path), key=game_key)
    assert all(len(line["luck"]) == 2 for line in lines)
    # Each entry's corrected score is the match's: its deals' mean share less the fitted slope times their luck.
    for row in results["leaderboard"]:
        entry = results["bots"].index(row["bot"])
        deals: dict[int, list[tuple[float, float]]] = {}
        for line in lines:
            if entry in line["entries"]:
                seat = line["entries"].index(entry)
                deals.setdefault(line["deal"], []).append((line["scores"][seat], line["luck"][seat]))
        scores = [sum(s for s, _ in games) / len(games) for _, games in sorted(deals.items())]
        luck = [sum(x for _, x in games) / len(games) for _, games in sorted(deals.items())]
        mean, low, high = mean_interval(control_variate_values(scores, luck))
        assert row["corrected_score"] == pytest.approx(mean) and row["corrected_ci"] == pytest.approx([low, high])
        assert row["deal_score"] == pytest.approx(sum(scores) / len(scores))
        assert "mu" in row  # the ratings stay on the plain outcomes
    # The luck of a game has mean zero whatever the bots do (the proof by simulation is tests/test_luck.py's).
    mean, low, high = mean_interval([value for line in lines for value in line["luck"]], confidence=0.999)
    assert low < 0.0 < high and any(abs(value) > 0.05 for line in lines for value in line["luck"])


def test_variance_reduction_by_playouts_of_the_seated_bots(tmp_path):
    """``--variance-reduction playouts:N``: the seated bots play each state out in the kernel (a network among
    them asked in batches), each game's line carries every seat's luck, and no value bot is named or shipped."""
    bots = ["zoo:ministeel", "heuristic", "random"]
    results = play(tmp_path, bots, 12, seed=3, game="ministeel", config={"num_players": 3}, luck="playouts:4",
                   chance_samples=1)
    assert results["variance_reduction"] == {"bot": "playouts:4", "chance_samples": 1}
    lines = games_of(tmp_path)
    assert all(len(line["luck"]) == 3 for line in lines) and any(any(line["luck"]) for line in lines)
    assert all("corrected_score" in row for row in results["leaderboard"])


def test_variance_reduction_results_are_the_same_with_workers_and_resume(tmp_path):
    options = {"seed": 2, "luck": "zoo:tiny_minotaur", "chance_samples": 1}
    whole = play(tmp_path, ["heuristic", "random"], 16, "whole", **options)
    play(tmp_path, ["heuristic", "random"], 6, "parts", **options)
    resumed = play(tmp_path, ["heuristic", "random"], 16, "parts", workers=2, resume=True, **options)
    assert resumed["leaderboard"] == whole["leaderboard"]
    assert _game_lines(tmp_path, "parts") == _game_lines(tmp_path, "whole")
    with pytest.raises(ValueError, match="differs in luck"):
        play(tmp_path, ["heuristic", "random"], 16, "parts", seed=2, resume=True)


def test_sequential_stops_a_tournament_at_the_first_deal_that_separates_an_entry(tmp_path):
    from tavernzoo.eval.stats import sequential_separation

    results = play(tmp_path, ["heuristic", "random", "random"], 3000, seed=1, sequential=0.05)
    verdict = results["sequential"]
    assert verdict["decided_at"] == results["deals"] < 200 and verdict["planned"] == 1500
    assert ["heuristic", 1] in verdict["separated"]
    lines = sorted(games_of(tmp_path), key=game_key)
    per_entry: dict[int, dict[int, list[float]]] = {}
    for line in lines:
        for seat, entry in enumerate(line["entries"]):
            per_entry.setdefault(entry, {}).setdefault(line["deal"], []).append(line["scores"][seat])

    def separated_after(deals: int) -> list:
        samples = [[sum(s) / len(s) for deal, s in sorted(per_entry[entry].items()) if deal < deals]
                   for entry in range(3)]
        return sequential_separation(samples, 0.5, 0.05, planned=1500)

    assert separated_after(results["deals"]) and not separated_after(results["deals"] - 1)


def test_variance_reduction_and_sequential_refuse_bad_input_in_one_line(tmp_path, capsys):
    from tavernzoo.commands.tournament import main

    for args, words in [
        (["--variance-reduction", "heuristic"], "has no value head"),
        (["--variance-reduction", "playouts:0"], "from 1 to 4096"),
        (["--chance-samples", "3"], "--chance-samples needs --variance-reduction"),
        (["--variance-reduction", "zoo:tiny_minotaur", "--chance-samples", "0"], "from 1 to 256"),
        (["--alpha", "0.1"], "--alpha needs --sequential"),
        (["--sequential", "--alpha", "0.7"], "alpha=0.7"),
        (["--sequential", "--sprt", "0", "100", "0.05", "0.05"], "two stopping rules"),
    ]:
        code = main(["tiny_minotaur", "--bots", "heuristic", "random", "--games", "2", "--no-progress",
                     "--out", str(tmp_path / "x"), *args])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and words in err[0], (args, err)
