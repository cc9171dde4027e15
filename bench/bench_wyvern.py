"""Random-play speed of Wyvern TCG next to PettingZoo's texas_holdem_v4 at the same table size, one run.

    python bench/bench_wyvern.py [--seconds 6] [--repeats 6] [--players 4]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the Wyvern rules engine alone (legal_actions / apply),
  (b) the Wyvern AEC env, wrapped (env()) and raw (raw_env()), through agent_iter / last() / step(),
      in both loops: reset() without a seed when a game ends (plain) and reset(seed=k) every game (seeded),
  (c) PettingZoo's texas_holdem_v4 with the same num_players through the same loops (pip install '.[bench]'),
and the ratios the targets are stated in: env() / texas_holdem_v4 >= 2.5 at 4 players in both loops,
env() / raw_env() >= 0.91 (also on the same seeded games, played by both in turns: the steadier
measure of a ratio near 1), and env() / engine >= 0.3 at 6 players (the encoder's share). A random
Wyvern game lasts about 1,000 decisions, so the two loops differ little here.
Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse

from common import against_texas_holdem

from tavernzoo.envs.wyvern import rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per entry, all rounds (default 6)")
    parser.add_argument("--repeats", type=int, default=6, help="rounds, entries taken in turns (default 6)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    args = parser.parse_args()
    from tavernzoo.envs import wyvern_v1

    against_texas_holdem("wyvern", "Wyvern", wyvern_v1, rules, args, same_games=3,
                         texas_target=2.5 if args.players == 4 else None,
                         engine_target=0.3 if args.players == 6 else None)


if __name__ == "__main__":
    main()
