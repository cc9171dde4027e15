"""What every benchmark here shares: the timing harness and the random-play loops measured with it.

Scripts in bench/ import this as ``from common import ...`` (a script's own folder is on sys.path).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def measure(run_games: Callable[[float], int], seconds: float) -> float:
    """Steps per second of ``run_games(deadline) -> steps`` over about ``seconds`` (after a short warm-up)."""
    run_games(time.perf_counter() + min(0.3, seconds / 5))
    start = time.perf_counter()
    steps = run_games(start + seconds)
    return steps / (time.perf_counter() - start)


def engine_loop(rules: Any, config: Any) -> Callable[[float], int]:
    """Random play straight on a turn-based rules engine: legal_actions, a uniform pick, apply."""
    from tavernzoo.envs.core import Chance

    def run(deadline: float) -> int:
        picker = random.Random(0)
        steps, seed = 0, 0
        while time.perf_counter() < deadline:
            state = rules.new_game(config, Chance(seed))
            seed += 1
            while not rules.is_terminal(state):
                legal = rules.legal_actions(state)
                rules.apply(state, legal[int(picker.random() * len(legal))])
                steps += 1
        return steps

    return run


def pettingzoo_loop(make_env: Callable[[], Any]) -> Callable[[float], int]:
    """The loop every PettingZoo user writes: last(), a random legal action from the mask, step()."""

    def run(deadline: float) -> int:
        env = make_env()
        picker = random.Random(0)
        steps, seed = 0, 0
        while time.perf_counter() < deadline:
            env.reset(seed=seed)
            seed += 1
            for _agent in env.agent_iter():
                observation, _, termination, truncation, _ = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                legal = np.flatnonzero(observation["action_mask"])
                env.step(int(legal[int(picker.random() * len(legal))]))
                steps += 1
        return steps

    return run
