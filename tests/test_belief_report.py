"""bench/belief_report.py: a bot that only names its move is refused as the belief's model in one line unless
smoothed, and smoothed it is a proper model: each row a distribution over the legal moves, most of it on the
bot's own move, under which the report runs to its figures."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import gives_probabilities
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/belief_report.py", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_a_bot_without_probabilities_is_refused_unless_smoothed_and_smoothed_the_report_runs():
    refused = run("--model", "heuristic", "--games", "1")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "only names its move" in refused.stderr and "--smooth" in refused.stderr
    out_of_range = run("--model", "heuristic", "--smooth", "1.5", "--games", "1")
    assert out_of_range.returncode == 2 and "in (0, 1]" in out_of_range.stderr
    done = run("--model", "heuristic", "--smooth", "0.1", "--games", "1", "--particles", "8")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(smoothed, EPS 0.1)" in done.stdout and "gained" in done.stdout


def test_the_smoothed_heuristic_puts_the_rest_of_each_row_on_its_own_move():
    spec = importlib.util.spec_from_file_location("belief_report", ROOT / "bench" / "belief_report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    game = get_game("ministeel")
    config = game.make_config(num_players=3)
    rules, observer = game.rules, game.make_observer()
    heuristic = load_bot("heuristic", game, config, seed=0)
    model = report.Smoothed(heuristic, 0.2)
    state = rules.new_game(config, Chance(5))
    observations, masks, moves = [], [], []
    while not rules.is_terminal(state) and len(observations) < 40:
        legal = rules.legal_actions(state)
        observation = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
        observer.encode(state, rules.current_seat(state), observation)
        mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
        mask[legal] = 1
        move = heuristic.act({"observation": observation, "action_mask": mask})
        observations.append(observation)
        masks.append(mask)
        moves.append(move)
        rules.apply(state, move)
    probabilities = model.action_probabilities(np.stack(observations), np.stack(masks))
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    assert np.all(probabilities[np.stack(masks) == 0] == 0)
    for row, (mask, move) in enumerate(zip(masks, moves, strict=True)):
        legal = int(mask.sum())
        assert np.isclose(probabilities[row, move], 0.8 + 0.2 / legal)
    assert gives_probabilities(model, game, config)
    assert not gives_probabilities(heuristic, game, config)
