"""Random-play speed of Tiny Minotaur next to its peers, all measured in this run, side by side.

    python bench/bench_tiny_minotaur.py [--seconds 4] [--repeats 8]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the Tiny Minotaur rules engine alone (legal_actions / apply),
  (b) the Tiny Minotaur AEC env, wrapped (env()) and raw (raw_env()), through agent_iter / last() /
      step(), the loop every PettingZoo user writes, in both its forms: reset() without a seed when a
      game ends (plain) and reset(seed=k) for every game (seeded),
  (c) PettingZoo's leduc_holdem_v4 through the same loops (pip install '.[bench]'),
  (d) OpenSpiel's leduc_poker (C++), if the open-spiel package is installed,
and the ratios the project's targets are stated in: env() / leduc_holdem_v4 >= 3 in both loops,
env() / raw_env() >= 0.91 (the wrapper's checks cost at most 10%) (also on the same seeded games, played
by both in turns: the steadier measure of a ratio near 1), engine / OpenSpiel leduc_poker >= 1.
Not a test: figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import random
import time

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

from tavernzoo.envs.tiny_minotaur import rules


def openspiel_loop(game_name: str) -> Run:
    import pyspiel

    game = pyspiel.load_game(game_name)
    picker = random.Random(0)

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(picker.choices(outcomes, probabilities)[0])
                    continue
                legal = state.legal_actions()
                state.apply_action(legal[int(picker.random() * len(legal))])
                steps += 1
        return steps

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    args = parser.parse_args()

    from tavernzoo.envs import tiny_minotaur_v1

    try:
        from pettingzoo.classic import leduc_holdem_v4
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        leduc_holdem_v4 = None
    entries: dict[str, Run | None] = {"tiny_minotaur engine": engine_loop(rules, rules.Config())}
    for loop in LOOPS:
        entries[f"tiny_minotaur env() {loop}"] = pettingzoo_loop(tiny_minotaur_v1.env, loop)
        entries[f"tiny_minotaur raw_env() {loop}"] = pettingzoo_loop(tiny_minotaur_v1.raw_env, loop)
        entries[f"pettingzoo leduc_holdem_v4 {loop}"] = (
            pettingzoo_loop(leduc_holdem_v4.env, loop) if leduc_holdem_v4 else None)
    try:
        entries["openspiel leduc_poker"] = openspiel_loop("leduc_poker")
    except ImportError:
        print("(open-spiel not installed: pip install '.[bench]')")

    rates = interleaved(entries, args.seconds, args.repeats)
    ratios: list[tuple[str, str, float | None]] = [("tiny_minotaur engine", "openspiel leduc_poker", 1.0)]
    for loop in LOOPS:
        ratios += [(f"tiny_minotaur env() {loop}", f"pettingzoo leduc_holdem_v4 {loop}", 3.0),
                   (f"tiny_minotaur env() {loop}", f"tiny_minotaur raw_env() {loop}", 0.91)]
    report(f"Tiny Minotaur random play, agent-steps per CPU-second ({machine_line(args.seconds, args.repeats)})",
           rates, ratios)

    same = same_games_ratio(lambda: tiny_minotaur_v1.env(), lambda: tiny_minotaur_v1.raw_env(),
                            games=150, rounds=args.repeats)
    report_same_games("tiny_minotaur env() / raw_env()", same, 0.91)


if __name__ == "__main__":
    main()
