"""Random-play speed of Tiny Minotaur next to its peers, all measured in this run.

    python bench/bench_tiny_minotaur.py [--seconds 3]

Prints agent-steps per second for
  (a) the Tiny Minotaur rules engine alone (legal_actions / apply),
  (b) the Tiny Minotaur AEC env through last() / step(), the loop every PettingZoo user writes,
  (c) PettingZoo's leduc_holdem_v4 and connect_four_v3 through the same loop (pip install '.[bench]'),
  (d) OpenSpiel's leduc_poker (C++), if the open-spiel package is installed,
and the ratios the project's targets are stated in: engine / OpenSpiel leduc_poker (>= 1) and
AEC env / PettingZoo leduc_holdem (>= 3). Not a test: figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable

from common import engine_loop, measure, pettingzoo_loop

from tavernzoo.envs.tiny_minotaur import rules


def openspiel_loop(game_name: str) -> Callable[[float], int]:
    import pyspiel

    game = pyspiel.load_game(game_name)

    def run(deadline: float) -> int:
        picker = random.Random(0)
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
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per entry (default 3)")
    args = parser.parse_args()

    from tavernzoo.envs import tiny_minotaur_v1

    results: dict[str, float | None] = {}
    results["tiny_minotaur engine"] = measure(engine_loop(rules, rules.Config()), args.seconds)
    results["tiny_minotaur AEC env"] = measure(pettingzoo_loop(tiny_minotaur_v1.env), args.seconds)
    try:
        from pettingzoo.classic import connect_four_v3, leduc_holdem_v4

        results["pettingzoo leduc_holdem_v4"] = measure(pettingzoo_loop(leduc_holdem_v4.env), args.seconds)
        results["pettingzoo connect_four_v3"] = measure(pettingzoo_loop(connect_four_v3.env), args.seconds)
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        results["pettingzoo leduc_holdem_v4"] = results["pettingzoo connect_four_v3"] = None
    try:
        results["openspiel leduc_poker"] = measure(openspiel_loop("leduc_poker"), args.seconds)
    except ImportError:
        print("(open-spiel not installed: pip install '.[bench]')")
        results["openspiel leduc_poker"] = None

    print(f"\nrandom play, agent-steps/s ({platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}, {args.seconds:g} s each)")
    for name, value in results.items():
        print(f"  {name:<28} {'n/a' if value is None else f'{value:>12,.0f}'}")

    def ratio(numerator: str, denominator: str, target: float) -> None:
        top, bottom = results[numerator], results[denominator]
        if top is None or bottom is None:
            return
        verdict = "meets" if top / bottom >= target else "MISSES"
        print(f"  {numerator} / {denominator}: {top / bottom:.2f}x  ({verdict} the {target:g}x target)")

    print("\nratios")
    ratio("tiny_minotaur engine", "openspiel leduc_poker", 1.0)
    ratio("tiny_minotaur AEC env", "pettingzoo leduc_holdem_v4", 3.0)
    ratio("tiny_minotaur AEC env", "pettingzoo connect_four_v3", 1.0)


if __name__ == "__main__":
    main()
