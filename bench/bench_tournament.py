"""The whole ``tavernzoo tournament`` command at 1 and 2 workers: games/s, their ratio, peak memory (not a test).

    python bench/bench_tournament.py [--game tiny_minotaur] [--bots heuristic random] [--games 20000]
                                     [--workers 1 2] [--repeats 3] [--extra "--no-plot"]
                                     [--executable NEW/tavernzoo OLD/tavernzoo]

Runs the command exactly as a user types it (a subprocess: start-up, schedule, games, results, heatmap,
the printed table), ``tavernzoo tournament GAME --bots ... --games N --workers K --out DIR
--no-progress``, for every worker count in turn and in alternating order (1, 2, then 2, 1, ...), so a
machine whose speed drifts treats them alike. For each run it prints the wall time, games/s (games
played / wall time of the whole command) and peak memory:

* ``max RSS``: the largest peak resident set of the command and each of its worker processes (``wait4``'s
  ``ru_maxrss``, which covers the process and every descendant it waited for);
* ``sum of peaks``: the peaks (``VmHWM``) of the command and of every worker, sampled from ``/proc``
  every 50 ms and added up (an upper bound of the tree's memory at any one time; Linux only);

and the CPU seconds of all its processes (user + system) and of its busiest worker (sampled from
``/proc``), which a busy machine changes far less than the wall time: on a machine shared with other
jobs (Linux groups CPU time by session, so a second worker does not get the command a larger share of
the machine), the CPU time per game, and how evenly the workers share it, are the figures to compare.

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


def command(args: argparse.Namespace, workers: int, out: Path, executable: str | None = None) -> list[str]:
    return [executable or args.executable[0], "tournament", args.game, "--bots", *args.bots, "--games", str(args.games),
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


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process so far (``/proc/PID/stat``)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
    cpu: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for process in [pid, *_descendants(pid)]:
                value = _high_water_kb(process)
                if value is not None:
                    peaks[process] = max(peaks.get(process, 0), value)
                seconds = _cpu_seconds(process)
                if seconds is not None:
                    cpu[process] = seconds
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return {"seconds": seconds, "status": os.waitstatus_to_exitcode(status), "max_rss_mb": usage.ru_maxrss / 1024,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "sum_of_peaks_mb": sum(peaks.values()) / 1024, "processes": len(peaks),
            "busiest_worker_cpu": max((value for process, value in cpu.items() if process != pid), default=0.0)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tiny_minotaur")
    parser.add_argument("--bots", nargs="+", default=["heuristic", "random"])
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to compare (default 1 2)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--extra", default="", help="more options for the command, e.g. '--no-plot'")
    parser.add_argument("--executable", nargs="+", default=[shutil.which("tavernzoo") or "tavernzoo"],
                        help="the tavernzoo command(s) to run: give another installation's too, to compare "
                        "versions run for run (default: this one's)")
    args = parser.parse_args(argv)

    shown = shlex.join(command(args, args.workers[0], Path("DIR")))
    print(f"$ {shown}   (--workers {' / '.join(map(str, args.workers))})")
    for index, executable in enumerate(args.executable):
        print(f"  version {index}: {executable}")
    print(f"load average before: {', '.join(f'{value:.1f}' for value in os.getloadavg())}", flush=True)
    runs = [(version, workers) for version in range(len(args.executable)) for workers in args.workers]
    speeds: dict[tuple[int, int], list[float]] = {run: [] for run in runs}
    results_seen: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        warm = argparse.Namespace(**{**vars(args), "games": 20})
        for index, executable in enumerate(args.executable):  # untimed: file caches, the first imports
            run_once(command(warm, 1, Path(folder) / f"warm-up-{index}", executable))
        for repeat in range(args.repeats):
            order = runs if repeat % 2 == 0 else list(reversed(runs))
            for version, workers in order:
                out = Path(folder) / f"v{version}-w{workers}-{repeat}"
                argv = command(args, workers, out, args.executable[version])
                run = run_once(argv)
                if run["status"] != 0:
                    sys.exit(f"the command failed (exit status {run['status']}): {shlex.join(argv)}")
                results = json.loads((out / "results.json").read_text())
                results_seen.append(json.dumps({key: results[key] for key in ("leaderboard", "pairs", "games")},
                                               sort_keys=True))
                speed = results["games"] / run["seconds"]
                speeds[(version, workers)].append(speed)
                busiest = (f", busiest worker {run['busiest_worker_cpu']:.1f} s" if run["busiest_worker_cpu"]
                           else "")
                print(f"  version {version} --workers {workers} run {repeat + 1}: {results['games']} games in "
                      f"{run['seconds']:.2f} s = {speed:,.0f} games/s ({run['cpu_seconds']:.1f} CPU s in all, "
                      f"{1000 * run['cpu_seconds'] / results['games']:.2f} ms a game{busiest}); max RSS "
                      f"{run['max_rss_mb']:.0f} MB, sum of peaks {run['sum_of_peaks_mb']:.0f} MB over "
                      f"{run['processes']} processes", flush=True)
                shutil.rmtree(out)
    print(f"\n{args.game} {' vs '.join(args.bots)}, {args.games} games, the whole command:")
    for version, workers in runs:
        values = speeds[(version, workers)]
        print(f"  version {version} --workers {workers}: median {statistics.median(values):,.0f} games/s "
              f"(runs: {', '.join(f'{speed:,.0f}' for speed in values)})")
    for version in range(len(args.executable)):
        base = speeds[(version, args.workers[0])]
        for workers in args.workers[1:]:
            ratios = [mine / theirs for mine, theirs in zip(speeds[(version, workers)], base, strict=True)]
            print(f"  version {version}: ratio {workers}w/{args.workers[0]}w per pair: "
                  f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)}; median {statistics.median(ratios):.2f}x")
    for version in range(1, len(args.executable)):
        for workers in args.workers:
            ratios = [mine / theirs for mine, theirs in zip(speeds[(0, workers)], speeds[(version, workers)],
                                                            strict=True)]
            print(f"  version 0 / version {version} at --workers {workers}: "
                  f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)}; median {statistics.median(ratios):.2f}x")
    print(f"  results identical in every run: {len(set(results_seen)) == 1}")
    print(f"load average after: {', '.join(f'{value:.1f}' for value in os.getloadavg())}")

if __name__ == "__main__":
    main()
