"""Benchmark: Wyvern TCG random play next to PettingZoo's texas_holdem_v4, through the same AEC loop.

    python bench/bench_wyvern.py [--seconds 10] [--players 4]

Both envs are the wrapped PettingZoo AEC envs; the loop is identical (``agent_iter``, ``last``, a
uniform choice among the masked legal actions, ``step``; a finished agent is stepped with ``None``).
Reported: AEC agent-steps per second, games per second, and the ratio wyvern / texas_holdem.
Not a timed test: the figures go to docs/performance.md and docs/rules/wyvern.md.
"""

from __future__ import annotations

import argparse
import platform
import random
import time

import numpy as np


def random_play(env, seconds: float, seed: int = 0) -> tuple[float, float, int]:
    """(agent-steps/s, games/s, steps) of uniform random play for about ``seconds``."""
    pick = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=pick.randrange(2**31))
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(legal[pick.randrange(legal.size)])
            env.step(action)
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed, steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of play per env")
    parser.add_argument("--players", type=int, default=4, help="players at both tables")
    args = parser.parse_args(argv)

    from pettingzoo.classic import texas_holdem_v4

    from tavernzoo.envs import wyvern_v1

    rows = []
    for name, factory in (
        ("wyvern_v1", lambda: wyvern_v1.env(num_players=args.players)),
        ("texas_holdem_v4", lambda: texas_holdem_v4.env(num_players=args.players)),
    ):
        env = factory()
        random_play(env, min(1.0, args.seconds / 5))  # warm-up
        rate, games, steps = random_play(env, args.seconds)
        rows.append((name, rate, games, steps))
    print(f"random play, {args.players} players, {args.seconds:.0f} s each "
          f"(Python {platform.python_version()}, {platform.machine()})")
    print(f"{'env':<18}{'agent-steps/s':>15}{'games/s':>10}{'steps':>10}")
    for name, rate, games, steps in rows:
        print(f"{name:<18}{rate:>15,.0f}{games:>10.2f}{steps:>10,}")
    print(f"ratio wyvern / texas_holdem: {rows[0][1] / rows[1][1]:.2f}x (agent-steps/s)")


if __name__ == "__main__":
    main()
