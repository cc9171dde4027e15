"""bench/paired_records.py: one bot's score on the same deals in two matches, paired by deal; and the one-line
errors for records it cannot pair (a file holding two matches, no complete deal); a resumed match's file pairs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, cwd=ROOT)


def match(records: Path, bot: str, games: int = 6) -> None:
    done = run("-m", "tavernzoo.cli", "match", "ministeel", "--set", "num_players=3", "--bots", bot, "heuristic",
               "heuristic", "--games", str(games), "--seed", "3", "--workers", "1", "--no-progress",
               "--records", str(records))
    assert done.returncode == 0, done.stderr[-2000:]


def test_two_matches_on_the_same_deals_are_paired_and_a_doubled_file_is_refused(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    match(first, "random")
    match(second, "heuristic")  # the table of three heuristics: the lone bot is the first seat's, "heuristic"
    paired = run("bench/paired_records.py", str(first), str(second), "--bot", "random")
    assert paired.returncode != 0 and "no seat whose spec starts with 'random'" in paired.stderr
    paired = run("bench/paired_records.py", str(first), str(first))
    assert paired.returncode == 0, paired.stderr
    assert "over 2 deals" in paired.stdout and "A - B = +0.000 [+0.000, +0.000]" in paired.stdout
    # A match stopped in a deal's first game and resumed into the same file (`match --resume`) plays that deal
    # again from its first seating: the deal counts once, whole, as `tavernzoo replay --table` counts it.
    lines = second.read_text().splitlines(keepends=True)
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(lines[:4] + lines[3:]))  # deal 2's first game, then deal 2 again from its start
    paired = run("bench/paired_records.py", str(resumed), str(second), "--bot", "heuristic")
    assert paired.returncode == 0, paired.stderr
    assert "over 2 deals" in paired.stdout and "A - B = +0.000 [+0.000, +0.000]" in paired.stdout
    first.write_text(first.read_text() * 2)  # the same deals twice in one file (two files catenated)
    doubled = run("bench/paired_records.py", str(first), str(second), "--bot", "random")
    assert doubled.returncode != 0 and "was counted already" in doubled.stderr
    assert "Traceback" not in doubled.stderr
    partial = tmp_path / "partial.jsonl"
    partial.write_text(second.read_text().splitlines(keepends=True)[0])
    cut = run("bench/paired_records.py", str(partial), str(partial), "--bot", "heuristic")
    assert cut.returncode != 0 and "no whole deal" in cut.stderr and "Traceback" not in cut.stderr
