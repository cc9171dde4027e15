"""The tournament's Ray backend against its local backend: games/s, interleaved and repeated (not a test).

    python bench/bench_ray.py [--game tiny_minotaur] [--bots heuristic random] [--games 2000]
                              [--workers 2] [--repeats 3] [--address ADDR]

Plays the same tournament (same seed) with the local backend (``--workers`` processes) and the Ray
backend (a Ray instance of this machine's CPUs, or ``--address``'s cluster), alternating local, Ray,
local, Ray, ... so that a machine whose speed drifts treats both alike, and prints each run's games/s,
the median ratio Ray/local, and whether every run's games and results are identical. Ray's start-up
(seconds, once per driver) and one tiny warm-up tournament on Ray (its workers' first import of
tavernzoo) are left out of games/s: they are paid once per driver, not per game.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from tavernzoo.eval.ray_backend import connect
from tavernzoo.eval.tournament import GAMES_FILE, make_settings, run_tournament


def games_of(out: Path) -> list[tuple]:
    lines = [json.loads(line) for line in (out / GAMES_FILE).read_text().splitlines()]
    return sorted((line["deal"], line["rotation"], line["entries"], line["returns"], line["scores"])
                  for line in lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tiny_minotaur")
    parser.add_argument("--bots", nargs="+", default=["heuristic", "random"])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2, help="local backend's worker processes (default 2)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--address", help="Ray cluster to join (default: start one of this machine's CPUs)")
    args = parser.parse_args(argv)

    settings = make_settings(args.game, args.bots, args.games)
    start = time.perf_counter()
    ray = connect(args.address)
    print(f"ray {ray.__version__} started in {time.perf_counter() - start:.1f} s "
          f"({int(ray.cluster_resources().get('CPU', 0))} CPUs)")
    speeds: dict[str, list[float]] = {"local": [], "ray": []}
    reference = None
    identical = True
    with tempfile.TemporaryDirectory() as folder:
        # Untimed: Ray's worker processes import tavernzoo once (the local backend's do on every run,
        # which its timed runs include).
        run_tournament(make_settings(args.game, args.bots, 2 * settings.seats), Path(folder) / "warm-up",
                       backend="ray", address=args.address)
        for repeat in range(args.repeats):
            for backend in ("local", "ray"):
                out = Path(folder) / f"{backend}-{repeat}"
                start = time.perf_counter()
                results = run_tournament(settings, out, workers=args.workers, backend=backend, address=args.address)
                seconds = time.perf_counter() - start
                played = sum(1 for _ in (out / GAMES_FILE).open())
                speeds[backend].append(played / seconds)
                games = (games_of(out), json.dumps(results["leaderboard"], sort_keys=True))
                reference = reference or games
                identical &= games == reference
                print(f"  {backend:5} run {repeat + 1}: {played} games in {seconds:.2f} s = "
                      f"{played / seconds:,.0f} games/s", flush=True)
    ratios = [r / loc for r, loc in zip(speeds["ray"], speeds["local"], strict=True)]
    print(f"\n{args.game} {' vs '.join(args.bots)}, {args.games} games, local --workers {args.workers} vs Ray:")
    print(f"  local median {statistics.median(speeds['local']):,.0f} games/s, "
          f"ray median {statistics.median(speeds['ray']):,.0f} games/s")
    print(f"  ratio ray/local per pair: {', '.join(f'{r:.2f}x' for r in ratios)}; "
          f"median {statistics.median(ratios):.2f}x (target >= 0.8x)")
    print(f"  games and results identical in every run: {identical}")


if __name__ == "__main__":
    main()
