"""Random-play speed of MiniSteel next to PettingZoo's texas_holdem_v4 at the same table size, one run.

    python bench/bench_ministeel.py [--seconds 4] [--repeats 8] [--players 4]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the MiniSteel rules engine alone (legal_actions / apply),
  (b) the MiniSteel AEC env, wrapped (env()) and raw (raw_env()), through agent_iter / last() / step(),
      in both loops: reset() without a seed when a game ends (plain) and reset(seed=k) every game (seeded),
  (c) PettingZoo's texas_holdem_v4 with the same num_players through the same loops (pip install '.[bench]'),
and the ratios the targets are stated in: env() / texas_holdem_v4 >= 2.5 in both loops and
env() / raw_env() >= 0.91 (also on the same seeded games, played by both in turns: the steadier measure of
a ratio near 1); then env() / engine, timed and on the same seeded games game by game (no target here).
Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse

from common import against_texas_holdem

from tavernzoo.envs.ministeel import rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    args = parser.parse_args()
    from tavernzoo.envs import ministeel_v1

    against_texas_holdem("ministeel", "MiniSteel", ministeel_v1, rules, args, same_games=40,
                         texas_target=2.5, engine_target=None)


if __name__ == "__main__":
    main()
