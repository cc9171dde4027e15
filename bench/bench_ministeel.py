"""Random-play speed of MiniSteel next to PettingZoo's texas_holdem_v4 at the same table size, one run.

    python bench/bench_ministeel.py [--seconds 4] [--repeats 8] [--players 4]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the MiniSteel rules engine alone (legal_actions / apply),
  (b) the MiniSteel AEC env, wrapped (env()) and raw (raw_env()), through agent_iter / last() / step(),
      in both loops: reset() without a seed when a game ends (plain) and reset(seed=k) every game (seeded),
  (c) PettingZoo's texas_holdem_v4 with the same num_players through the same loops (pip install '.[bench]'),
and the ratios the targets are stated in: env() / texas_holdem_v4 >= 2.5 in both loops and
env() / raw_env() >= 0.91 (also on the same seeded games, played
by both in turns: the steadier measure of a ratio near 1). Not a test: the figures go to docs/performance.md.
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

from tavernzoo.envs.ministeel import rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    args = parser.parse_args()
    players = args.players

    from tavernzoo.envs import ministeel_v1

    try:
        from pettingzoo.classic import texas_holdem_v4
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        texas_holdem_v4 = None
    entries: dict[str, Run | None] = {"ministeel engine": engine_loop(rules, rules.Config(num_players=players))}
    for loop in LOOPS:
        entries[f"ministeel env() {loop}"] = pettingzoo_loop(lambda: ministeel_v1.env(num_players=players), loop)
        entries[f"ministeel raw_env() {loop}"] = pettingzoo_loop(
            lambda: ministeel_v1.raw_env(num_players=players), loop)
        entries[f"pettingzoo texas_holdem_v4 {loop}"] = pettingzoo_loop(
            lambda: texas_holdem_v4.env(num_players=players), loop) if texas_holdem_v4 else None

    rates = interleaved(entries, args.seconds, args.repeats)
    ratios: list[tuple[str, str, float | None]] = []
    for loop in LOOPS:
        ratios += [(f"ministeel env() {loop}", f"pettingzoo texas_holdem_v4 {loop}", 2.5),
                   (f"ministeel env() {loop}", f"ministeel raw_env() {loop}", 0.91)]
    ratios.append(("ministeel env() plain", "ministeel engine", None))
    report(f"MiniSteel random play at {players} players, agent-steps per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates, ratios)

    same = same_games_ratio(lambda: ministeel_v1.env(num_players=players),
                            lambda: ministeel_v1.raw_env(num_players=players),
                            games=40, rounds=args.repeats)
    report_same_games("ministeel env() / raw_env()", same, 0.91)


if __name__ == "__main__":
    main()
