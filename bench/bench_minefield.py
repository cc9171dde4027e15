"""Minefield's Parallel env against PettingZoo's own ``rps_v2`` Parallel env, through the same loop.

    python bench/bench_minefield.py [--seconds 5] [--players 8] [--repeats 5]

Random play: every agent in ``agents`` picks uniformly among the legal actions of its mask (or of its
action space when the observation has no mask), from one seeded ``random.Random``; the loop resets
when ``agents`` empties. It prints agent-steps/s (one agent's action in one step) and games/s for
both envs (medians of ``--repeats`` runs taken in turns) and their ratio. Not a timed test: figures
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import warnings

import numpy as np


def random_play(env, seconds: float, seed: int = 0) -> tuple[float, float, int]:
    """Play random games for about ``seconds``: (agent-steps/s, games/s, games)."""
    rng = random.Random(seed)
    agent_steps = games = 0
    observations, _ = env.reset(seed=seed)
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        actions = {}
        for agent in env.agents:
            observation = observations[agent]
            if isinstance(observation, dict) and "action_mask" in observation:
                legal = np.flatnonzero(observation["action_mask"])
                actions[agent] = int(legal[rng.randrange(legal.size)])
            else:
                actions[agent] = rng.randrange(env.action_space(agent).n)
        agent_steps += len(actions)
        observations, _, _, _, _ = env.step(actions)
        if not env.agents:
            games += 1
            if time.perf_counter() >= deadline:
                break
            observations, _ = env.reset(seed=rng.randrange(2**31))
    elapsed = time.perf_counter() - start
    return agent_steps / elapsed, games / elapsed, games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of play per env, all runs together")
    parser.add_argument("--players", type=int, default=8, help="Minefield players")
    parser.add_argument("--repeats", type=int, default=5, help="runs per env, taken in turns")
    args = parser.parse_args()

    from tavernzoo.envs import minefield_v0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.classic import rps_v2

    minefield = minefield_v0.parallel_env(num_players=args.players)
    rps = rps_v2.parallel_env()
    envs = ((f"minefield_v0 ({args.players} players)", minefield), ("pettingzoo rps_v2", rps))
    for _, env in envs:
        random_play(env, 0.3)  # warm-up
    # Short runs taken in turns, medians reported: the machine's load drifts between runs.
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in envs}
    for repeat in range(args.repeats):
        for name, env in envs:
            runs[name].append(random_play(env, args.seconds / args.repeats, seed=repeat))
    print(f"{'env':<28} {'agent-steps/s':>14} {'games/s':>10} {'games':>8}")
    medians = []
    for name, _ in envs:
        steps = statistics.median(run[0] for run in runs[name])
        games = statistics.median(run[1] for run in runs[name])
        medians.append(steps)
        print(f"{name:<28} {steps:>14,.0f} {games:>10,.1f} {sum(run[2] for run in runs[name]):>8}")
    ratios = [a[0] / b[0] for a, b in zip(*runs.values(), strict=True)]
    print(f"ratio minefield / rps (agent-steps/s): {medians[0] / medians[1]:.2f} "
          f"(per pair of runs: {min(ratios):.2f}-{max(ratios):.2f})")

if __name__ == "__main__":
    main()
