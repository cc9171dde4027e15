"""Minefield's envs against PettingZoo's own ``rps_v2`` Parallel env, through the same loops, one run.

    python bench/bench_minefield.py [--seconds 4] [--repeats 8] [--players 8]

Random play (see bench/common.py), medians over rounds taken in turns, agent-steps per CPU-second (one agent's
action in one joint step, or one AEC decision):
  (a) minefield_v0 ``parallel_env`` (the native API) and PettingZoo ``rps_v2`` ``parallel_env``,
  (b) minefield_v0's AEC forms ``env()`` and ``raw_env()`` (parallel_to_aec) through agent_iter / last()
      / step(),
each in both loops: reset() without a seed when a game ends (plain) and reset(seed=k) every game (seeded).
Ratios: parallel_env / rps_v2 (target >= 1) and env() / raw_env() (>= 0.91). Not a timed test.
"""

from __future__ import annotations

import argparse
import warnings

from common import LOOPS, Run, interleaved, machine_line, parallel_loop, pettingzoo_loop, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=8, help="Minefield players (default 8)")
    args = parser.parse_args()
    players = args.players

    from tavernzoo.envs import minefield_v0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.classic import rps_v2

    entries: dict[str, Run | None] = {}
    for loop in LOOPS:
        entries[f"minefield parallel_env() {loop}"] = parallel_loop(
            lambda: minefield_v0.parallel_env(num_players=players), loop)
        entries[f"pettingzoo rps_v2 parallel_env() {loop}"] = parallel_loop(rps_v2.parallel_env, loop)
        entries[f"minefield env() {loop}"] = pettingzoo_loop(lambda: minefield_v0.env(num_players=players), loop)
        entries[f"minefield raw_env() {loop}"] = pettingzoo_loop(
            lambda: minefield_v0.raw_env(num_players=players), loop)

    rates = interleaved(entries, args.seconds, args.repeats)
    ratios: list[tuple[str, str, float | None]] = []
    for loop in LOOPS:
        ratios += [(f"minefield parallel_env() {loop}", f"pettingzoo rps_v2 parallel_env() {loop}", 1.0),
                   (f"minefield env() {loop}", f"minefield raw_env() {loop}", 0.91)]
    report(f"Minefield random play at {players} players, agent-steps per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates, ratios)


if __name__ == "__main__":
    main()
