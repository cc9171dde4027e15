"""bench/search_departures.py: where a search leaves a bot's move, for a network (with its probabilities) and for a
rule bot (without), by kind of move."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/search_departures.py", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_a_rule_bot_is_compared_without_probabilities_and_departures_are_counted_by_kind():
    done = run("ministeel", "--bot", "heuristic", "--spec", "mcts:sims=200", "--games", "1", "--kinds")
    assert done.returncode == 0, done.stderr[-2000:]
    line, kinds = done.stdout.splitlines()[:2]
    assert "heuristic gives no probabilities" in line and "Traceback" not in done.stderr
    share = float(re.search(r"another move at ([0-9.]+)", line).group(1))
    counted = sum(int(count) for count in re.findall(r" (\d+)(?:,|$)", kinds))
    decisions = int(re.search(r": (\d+) decisions", line).group(1))
    assert kinds.startswith("  departures by kind of move")  # the commonest 12 kinds of departure, so at most all
    assert counted <= round(share * decisions) and (counted > 0) == (share > 0)


def test_a_network_still_reports_how_sure_it_was():
    done = run("ministeel", "--spec", "mcts:sims=20,prior=zoo:ministeel", "--games", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the network's probability of its move: median" in done.stdout
    assert "departures by kind" not in done.stdout
