"""Random-play speed of MiniSteel (4 players) next to PettingZoo's texas_holdem_v4 (4 players), one run.

    python bench/bench_ministeel.py [--seconds 3]

Prints agent-steps per second for
  (a) the MiniSteel rules engine alone (legal_actions / apply),
  (b) the MiniSteel AEC env through last() / step(), wrapped (env()) and raw (raw_env()),
  (c) PettingZoo's texas_holdem_v4 with num_players=4 through the same loop (pip install '.[bench]'),
and the ratio the issue states its target in: MiniSteel AEC env / texas_holdem_v4 (>= 1).
Not a test: the figures go to docs/rules/ministeel.md (and docs/performance.md).
"""

from __future__ import annotations

import argparse
import platform

from common import engine_loop, measure, pettingzoo_loop

from tavernzoo.envs.ministeel import rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per entry (default 3)")
    args = parser.parse_args()

    from tavernzoo.envs import ministeel_v1

    results: dict[str, float | None] = {}
    results["ministeel engine"] = measure(engine_loop(rules, rules.Config(num_players=4)), args.seconds)
    results["ministeel AEC env"] = measure(pettingzoo_loop(lambda: ministeel_v1.env(num_players=4)), args.seconds)
    results["ministeel AEC raw_env"] = measure(
        pettingzoo_loop(lambda: ministeel_v1.raw_env(num_players=4)), args.seconds
    )
    try:
        from pettingzoo.classic import texas_holdem_v4

        results["pettingzoo texas_holdem_v4"] = measure(
            pettingzoo_loop(lambda: texas_holdem_v4.env(num_players=4)), args.seconds
        )
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        results["pettingzoo texas_holdem_v4"] = None

    print(f"\nrandom play at 4 players, agent-steps/s ({platform.python_implementation()} "
          f"{platform.python_version()}, {platform.machine()}, {args.seconds:g} s each)")
    for name, value in results.items():
        print(f"  {name:<28} {'n/a' if value is None else f'{value:>12,.0f}'}")

    def ratio(numerator: str, denominator: str, target: float | None) -> None:
        top, bottom = results[numerator], results[denominator]
        if top is None or bottom is None:
            return
        verdict = ""
        if target is not None:
            verdict = f"  ({'meets' if top / bottom >= target else 'MISSES'} the {target:g}x target)"
        print(f"  {numerator} / {denominator}: {top / bottom:.2f}x{verdict}")

    print("\nratios")
    ratio("ministeel AEC env", "pettingzoo texas_holdem_v4", 1.0)
    ratio("ministeel AEC raw_env", "pettingzoo texas_holdem_v4", None)
    ratio("ministeel engine", "pettingzoo texas_holdem_v4", None)


if __name__ == "__main__":
    main()
