"""The whole ``tavernzoo tournament`` command at 1 and 2 workers: games/s, their ratio, peak memory (not a test).

    python bench/bench_tournament.py [--game tiny_minotaur] [--bots heuristic random] [--games 20000]
                                     [--workers 1 2] [--repeats 3] [--extra "--no-plot"]

Runs the command exactly as a user types it (a subprocess: start-up, schedule, games, results, heatmap,
the printed table), ``tavernzoo tournament GAME --bots ... --games N --workers K --out DIR
--no-progress``, for every worker count in turn and in alternating order (1, 2, then 2, 1, ...), so a
machine whose speed drifts treats them alike. For each run it prints the wall time, games/s (games
played / wall time of the whole command) and peak memory:

* ``max RSS``: the largest peak resident set of the command and each of its worker processes (``wait4``'s
  ``ru_maxrss``, which covers the process and every descendant it waited for);
* ``sum of peaks``: the peaks (``VmHWM``) of the command and of every worker, sampled from ``/proc``
  every 50 ms and added up (an upper bound of the tree's memory at any one time; Linux only);

and the CPU seconds of all its processes (user + system), which a busy machine changes far less than
the wall time: on a machine shared with other jobs (Linux groups CPU time by session, so a second
worker does not get the command a larger share), the CPU time per game is the figure to compare.

Then per worker count the median games/s, and each pair's ratio to the first worker count with their
median (ratios of runs made side by side are what survive a busy machine; the absolute figures do not).
Every run plays the same seed, so the results must be identical: the script says whether they were.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path


def command(args: argparse.Namespace, workers: int, out: Path) -> list[str]:
    return [args.executable, "tournament", args.game, "--bots", *args.bots, "--games", str(args.games),
            "--workers", str(workers), "--out", str(out), "--no-progress", *shlex.split(args.extra)]


def _descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    children = [int(child) for child in handle.read().split()]
                found += children
                stack += children
        except OSError:
            continue
    return found


def _high_water_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def run_once(argv: list[str]) -> dict:
    """Run ``argv``; its wall time, exit status, ``ru_maxrss`` and the sum of its processes' VmHWM (MB)."""
    start = time.perf_counter()
    # subprocess.Popen reaps the child itself; wait4 is needed for its rusage, so fork/exec by hand.
    pid = os.fork()
    if pid == 0:  # the child: silence the table, run the command
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    peaks: dict[int, int] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for process in [pid, *_descendants(pid)]:
                value = _high_water_kb(process)
                if value is not None:
                    peaks[process] = max(peaks.get(process, 0), value)
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return {"seconds": seconds, "status": os.waitstatus_to_exitcode(status), "max_rss_mb": usage.ru_maxrss / 1024,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "sum_of_peaks_mb": sum(peaks.values()) / 1024, "processes": len(peaks)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tiny_minotaur")
    parser.add_argument("--bots", nargs="+", default=["heuristic", "random"])
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare (default 1 2)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--extra", default="", help="more options for the command, e.g. '--no-plot'")
    parser.add_argument("--executable", default=shutil.which("tavernzoo") or "tavernzoo",
                        help="the tavernzoo command to run (another installation's, to compare versions)")
    args = parser.parse_args(argv)

    shown = shlex.join(command(args, args.workers[0], Path("DIR")))
    print(f"$ {shown}   (--workers {' / '.join(map(str, args.workers))})")
    print(f"load average before: {', '.join(f'{value:.1f}' for value in os.getloadavg())}", flush=True)
    speeds: dict[int, list[float]] = {workers: [] for workers in args.workers}
    results_seen: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        warm = argparse.Namespace(**{**vars(args), "games": 20})
        run_once(command(warm, 1, Path(folder) / "warm-up"))  # untimed: file caches, the first imports
        for repeat in range(args.repeats):
            order = args.workers if repeat % 2 == 0 else list(reversed(args.workers))
            for workers in order:
                out = Path(folder) / f"w{workers}-{repeat}"
                run = run_once(command(args, workers, out))
                if run["status"] != 0:
                    failed = shlex.join(command(args, workers, out))
                    sys.exit(f"the command failed (exit status {run['status']}): {failed}")
                results = json.loads((out / "results.json").read_text())
                results_seen.append(json.dumps({key: results[key] for key in ("leaderboard", "pairs", "games")},
                                               sort_keys=True))
                speed = results["games"] / run["seconds"]
                speeds[workers].append(speed)
                print(f"  --workers {workers} run {repeat + 1}: {results['games']} games in {run['seconds']:.2f} s = "
                      f"{speed:,.0f} games/s ({run['cpu_seconds']:.1f} CPU s, all processes); max RSS "
                      f"{run['max_rss_mb']:.0f} MB, sum of peaks {run['sum_of_peaks_mb']:.0f} MB over "
                      f"{run['processes']} processes", flush=True)
                shutil.rmtree(out)
    base = args.workers[0]
    print(f"\n{args.game} {' vs '.join(args.bots)}, {args.games} games, the whole command:")
    for workers in args.workers:
        print(f"  --workers {workers}: median {statistics.median(speeds[workers]):,.0f} games/s "
              f"(runs: {', '.join(f'{speed:,.0f}' for speed in speeds[workers])})")
    for workers in args.workers[1:]:
        ratios = [mine / theirs for mine, theirs in zip(speeds[workers], speeds[base], strict=True)]
        print(f"  ratio {workers}w/{base}w per pair: {', '.join(f'{ratio:.2f}x' for ratio in ratios)}; "
              f"median {statistics.median(ratios):.2f}x")
    print(f"  results identical in every run: {len(set(results_seen)) == 1}")
    print(f"load average after: {', '.join(f'{value:.1f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
