"""The hosts that play deals, in CPU seconds per game, code against code (not a test).

    python bench/bench_hosts.py [--python NEW/.venv/bin/python OLD/.venv/bin/python] [--game tiny_minotaur]
                                [--set num_players=4] [--bots heuristic random] [--games 400] [--repeats 5]
                                [--hosts match match-v1 tournament report report-v1]

A host is one way the project plays deals between bots:

* ``match``: ``play_match`` in this process, the code's default seeding (``v2`` since 2026-12-05; the code
  before the one deal plan had one scheme, the one now called ``v1``);
* ``match-v1``: ``play_match(..., seeding="v1")`` (the code before: its only scheme, the same call);
* ``tournament``: ``run_tournament`` of the same bots and games, one process, into a fresh directory (its
  game files and results.json written as a user's run writes them);
* ``report``/``report-v1``: the training report's lockstep games, ``play_policy_matches`` of a random-weight
  policy against ``random`` and against the heuristic (``--games`` each), default seeding or ``v1``.

Each measurement is a child process of one interpreter (one checkout's code, given by ``--python``): it
imports the code, plays a few games to warm up, then times the host's call alone by its CPU time
(``time.process_time``: a busy machine changes it far less than the wall time) and prints the games per
CPU-second. The rounds are interleaved: every round runs every (interpreter, host) pair once, in an order
that alternates from round to round, so a machine whose load drifts treats them alike. With two
interpreters it prints, per host, the ratio of the first's games per CPU-second to the second's, taken
within each round, as the median and the range over rounds (above 1: the first is faster); with one, the
hosts' ratios to ``match``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTS = ("match", "match-v1", "tournament", "report", "report-v1")


def _play(host: str, game_name: str, options: dict, bots: list[str], games: int, seed: int,
          directory: Path) -> int:
    """Play ``host``'s games once; the games played."""
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import play_match

    game = get_game(game_name)
    config = game.make_config(options)
    if host in ("match", "match-v1"):
        extra = {}
        if host == "match-v1" and "seeding" in inspect.signature(play_match).parameters:
            extra = {"seeding": "v1"}  # the code before the one deal plan has no seeding: its one scheme is v1
        return play_match(game, bots, games, seed=seed, config=config, **extra).games
    if host == "tournament":
        from tavernzoo.eval.tournament import make_settings, run_tournament

        out = Path(tempfile.mkdtemp(dir=directory))
        return run_tournament(make_settings(game_name, bots, games, config=options, seed=seed), out)["games"]
    from tavernzoo.train.evaluate import play_policy_matches
    from tavernzoo.train.lean_policy import TorchActor

    policy_dir = directory / "policy"
    if not policy_dir.exists():
        _random_policy(game, config).save(policy_dir)
    from tavernzoo.agents.policy import MLPPolicy

    seats = game.rules.num_seats(config)
    lineups = [[str(policy_dir)] + [reference] * (seats - 1) for reference in ("random", "heuristic")]
    extra = {}
    if host == "report-v1" and "seeding" in inspect.signature(play_policy_matches).parameters:
        extra = {"seeding": "v1"}
    results = play_policy_matches(game, TorchActor(MLPPolicy.load(policy_dir)), lineups, games, seed=seed,
                                  config=config, **extra)
    return sum(result.games for result in results)


def _random_policy(game, config):
    """A policy of random weights (speed only), as bench_training.py makes one."""
    import numpy as np

    from tavernzoo.agents.policy import MLPPolicy

    rng = np.random.default_rng(0)
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    shapes = [(128, size), (128, 128), (actions, 128)]
    return MLPPolicy([rng.standard_normal(s).astype(np.float32) / np.sqrt(s[1]) for s in shapes],
                     [np.zeros(s[0], np.float32) for s in shapes], "tanh", {"env": game.env_name})


def child(args: argparse.Namespace) -> None:
    """One measurement: warm up, then the host's games per CPU-second, printed as JSON."""
    import tavernzoo

    options = _options(args.set)
    if args.child.startswith("report"):
        import torch

        torch.set_num_threads(1)  # the process's CPU time is the games', not idle threads spinning
    with tempfile.TemporaryDirectory() as directory:
        _play(args.child, args.game, options, args.bots, 2 * len(args.bots), 1, Path(directory))  # warm up
        cpu, wall = time.process_time(), time.perf_counter()
        games = _play(args.child, args.game, options, args.bots, args.games, 7, Path(directory))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(json.dumps({"games": games, "cpu": cpu, "wall": wall, "code": str(Path(tavernzoo.__file__).parent)}))


def _options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def measure(python: str, host: str, args: argparse.Namespace) -> dict:
    command = [python, str(Path(__file__).resolve()), "--child", host, "--game", args.game, "--games",
               str(args.games), "--bots", *args.bots, *[word for pair in args.set for word in ("--set", pair)]]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{python} {host} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", nargs="+", default=[sys.executable],
                        help="interpreters to compare, each with its checkout's code (default: this one)")
    parser.add_argument("--game", default="tiny_minotaur")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a game option")
    parser.add_argument("--bots", nargs="+", default=["heuristic", "random"], help="one spec per seat")
    parser.add_argument("--games", type=int, default=400, help="games a measurement plays (default 400)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--hosts", nargs="+", default=list(HOSTS), choices=HOSTS)
    parser.add_argument("--child", choices=HOSTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    pairs = [(python, host) for host in args.hosts for python in args.python]
    rates: dict[tuple[str, str], list[float]] = {pair: [] for pair in pairs}
    for round_index in range(args.repeats):
        for python, host in (pairs if round_index % 2 == 0 else pairs[::-1]):
            result = measure(python, host, args)
            rates[python, host].append(result["games"] / result["cpu"])
            print(f"round {round_index + 1}: {host:10s} {result['games']:5d} games {result['cpu']:7.2f} CPU-s "
                  f"{result['wall']:7.2f} s  {result['games'] / result['cpu']:8.1f} games/CPU-s  ({result['code']})",
                  flush=True)
    print(f"\n{args.game} {' '.join(args.set)} {' '.join(args.bots)}, {args.games} games a measurement, "
          f"{args.repeats} rounds; games per CPU-second, median [range]:")
    for host in args.hosts:
        cells = []
        for python in args.python:
            values = rates[python, host]
            cells.append(f"{statistics.median(values):8.1f} [{min(values):.1f}, {max(values):.1f}]")
        line = f"  {host:10s} " + "  ".join(cells)
        if len(args.python) == 2:
            ratios = [a / b for a, b in zip(rates[args.python[0], host], rates[args.python[1], host], strict=True)]
            line += f"   first/second {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
        elif host != "match" and "match" in args.hosts:
            ratios = [a / b for a, b in zip(rates[args.python[0], host], rates[args.python[0], "match"], strict=True)]
            line += f"   /match {statistics.median(ratios):.3f} [{min(ratios):.3f}, {max(ratios):.3f}]"
        print(line)


if __name__ == "__main__":
    main()
