"""What ``--sandbox`` costs a ``cmd:`` program: its start and its games, confined and not, in one run.

    python bench/bench_sandbox.py [--starts 10] [--games 200]

(a) starts: the protocol fixture (tests/fixtures/protocol_random_bot.py) started, greeted (``hello``) and
    given a ``new_game``, then closed, ``--starts`` times each way, taken in turns; medians in ms;
(b) games: ``--games`` Tiny Minotaur games of the fixture against ``random`` through the match loop,
    one program each way; games per second.
Ratios: sandboxed / unconfined. Needs a machine that sandboxes (docs/sandbox.md). Not a timed test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "protocol_random_bot.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=10, help="program starts each way (default 10)")
    parser.add_argument("--games", type=int, default=200, help="games each way (default 200)")
    args = parser.parse_args()

    from tavernzoo.agents import load_bot
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match

    game = get_game("tiny_minotaur")
    config = game.make_config()
    plain = f"cmd:{sys.executable} {FIXTURE}"
    specs = {"unconfined": plain, "sandboxed": f"sandbox:{plain}"}
    starts: dict[str, list[float]] = {name: [] for name in specs}
    for _ in range(args.starts):
        for name, spec in specs.items():  # in turns: a change of load hits both
            bot = load_bot(spec, game, config, seed=0)
            began = time.perf_counter()
            bot.begin_game(0, 1)
            starts[name].append(time.perf_counter() - began)
            bot.close()
    rates = {}
    for name, spec in specs.items():
        began = time.perf_counter()
        play_match(game, [spec, "random"], args.games, seed=0)
        rates[name] = args.games / (time.perf_counter() - began)
    import os
    import platform

    print(f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name in specs:
        print(f"{name:>10}: start {1000 * statistics.median(starts[name]):6.1f} ms (median of {args.starts}), "
              f"{rates[name]:7.1f} games/s")
    start_ratio = statistics.median(starts["sandboxed"]) / statistics.median(starts["unconfined"])
    games_ratio = rates["sandboxed"] / rates["unconfined"]
    print(f"ratio sandboxed / unconfined: start {start_ratio:.2f}, games/s {games_ratio:.2f}")


if __name__ == "__main__":
    main()
