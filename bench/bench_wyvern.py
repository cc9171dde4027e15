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

from common import (
    LOOPS,
    Run,
    engine_loop,
    interleaved,
    machine_line,
    pettingzoo_loop,
    report,
    report_same_games,
    same_games_ratio,
)

from tavernzoo.envs.wyvern import rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per entry, all rounds (default 6)")
    parser.add_argument("--repeats", type=int, default=6, help="rounds, entries taken in turns (default 6)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    args = parser.parse_args()
    players = args.players

    from tavernzoo.envs import wyvern_v1

    try:
        from pettingzoo.classic import texas_holdem_v4
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        texas_holdem_v4 = None
    entries: dict[str, Run | None] = {"wyvern engine": engine_loop(rules, rules.Config(num_players=players))}
    for loop in LOOPS:
        entries[f"wyvern env() {loop}"] = pettingzoo_loop(lambda: wyvern_v1.env(num_players=players), loop)
        entries[f"wyvern raw_env() {loop}"] = pettingzoo_loop(lambda: wyvern_v1.raw_env(num_players=players), loop)
        entries[f"pettingzoo texas_holdem_v4 {loop}"] = pettingzoo_loop(
            lambda: texas_holdem_v4.env(num_players=players), loop) if texas_holdem_v4 else None

    rates = interleaved(entries, args.seconds, args.repeats)
    ratios: list[tuple[str, str, float | None]] = []
    for loop in LOOPS:
        ratios += [(f"wyvern env() {loop}", f"pettingzoo texas_holdem_v4 {loop}", 2.5 if players == 4 else None),
                   (f"wyvern env() {loop}", f"wyvern raw_env() {loop}", 0.91)]
    ratios.append(("wyvern env() plain", "wyvern engine", 0.3 if players == 6 else None))
    report(f"Wyvern random play at {players} players, agent-steps per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates, ratios)

    same = same_games_ratio(lambda: wyvern_v1.env(num_players=players),
                            lambda: wyvern_v1.raw_env(num_players=players),
                            games=3, rounds=args.repeats)
    report_same_games("wyvern env() / raw_env()", same, 0.91)


if __name__ == "__main__":
    main()
