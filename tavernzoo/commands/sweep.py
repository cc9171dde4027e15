"""``tavernzoo sweep GAME --grid KEY=V1,V2``: a hyperparameter sweep on Ray Tune (train/sweep.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tavernzoo.train.sweep import METRIC, SCHEDULERS, SweepSpec, run_sweep


def _pairs(items: list[str], option: str) -> dict[str, str]:
    values = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key or not raw:
            raise ValueError(f"{option} expects KEY=VALUE, got {item!r}")
        values[key.strip()] = raw
    return values


def _json_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _range(raw: str, option: str, key: str) -> tuple[float, float]:
    low, sep, high = raw.partition(":")
    try:
        return float(low), float(high)
    except ValueError:
        raise ValueError(f"{option} {key}={raw!r}: expected LOW:HIGH, two numbers") from None


def add_parser(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "sweep", help="hyperparameter sweep on Ray Tune (grid/random search, ASHA, PBT)",
        description="Train many runs of GAME over a search space on Ray Tune; every trial is an ordinary "
        "training run whose checkpoint is a bot spec. Needs the ray extra.")
    parser.add_argument("game", help="game name")
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                        help="a TrainConfig field and the values to try (repeatable)")
    parser.add_argument("--uniform", action="append", default=[], metavar="KEY=LOW:HIGH",
                        help="a field sampled uniformly (repeatable)")
    parser.add_argument("--loguniform", action="append", default=[], metavar="KEY=LOW:HIGH",
                        help="a field sampled log-uniformly, e.g. learning_rate=1e-4:1e-3 (repeatable)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="training seeds, a grid (default 0)")
    parser.add_argument("--samples", type=int, default=1, help="repeats of the grid with fresh samples (default 1)")
    parser.add_argument("--scheduler", choices=SCHEDULERS, default="fifo",
                        help="fifo: run every trial out; asha: stop weak trials early; pbt: population-based")
    parser.add_argument("--timesteps", type=int, help="timesteps per trial (default: the game's)")
    parser.add_argument("--reports", type=int, default=4, help="chunks per trial, each scored (default 4)")
    parser.add_argument("--eval-games", type=int, default=200,
                        help="games against the heuristic after each chunk (default 200)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a fixed training option")
    parser.add_argument("--cpus-per-trial", type=float, default=1.0, help="Ray CPUs per trial (default 1)")
    parser.add_argument("--out", metavar="DIR", help="sweep directory (default: sweeps/GAME)")
    parser.add_argument("--address", help="Ray cluster to join (HOST:PORT or auto; default: start one here)")
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    grid = {}
    for key, raw in _pairs(args.grid, "--grid").items():
        grid[key] = [_json_value(part) for part in raw.split(",")]
    spec = SweepSpec(
        game=args.game, out=args.out or f"sweeps/{args.game}",
        fixed={key: _json_value(raw) for key, raw in _pairs(args.set, "--set").items()}, grid=grid,
        uniform={k: _range(v, "--uniform", k) for k, v in _pairs(args.uniform, "--uniform").items()},
        loguniform={k: _range(v, "--loguniform", k) for k, v in _pairs(args.loguniform, "--loguniform").items()},
        seeds=args.seeds, samples=args.samples, scheduler=args.scheduler, timesteps=args.timesteps,
        reports=args.reports, eval_games=args.eval_games, cpus_per_trial=args.cpus_per_trial)
    summary = run_sweep(spec, address=args.address)
    searched = ["seed", *spec.grid, *spec.uniform, *spec.loguniform]
    table = Table(title=f"{spec.game} sweep ({spec.scheduler}): score against the heuristic", title_justify="left")
    for column in ("trial", *searched, "score", "timesteps"):
        table.add_column(column, justify="left" if column == "trial" else "right")
    for row in summary["rows"]:
        cells = [f"{row.get(key):.4g}" if isinstance(row.get(key), float) else str(row.get(key)) for key in searched]
        score = "failed" if row[METRIC] is None else f"{row[METRIC]:.3f}"
        table.add_row(row["trial"], *cells, score, str(row["timesteps"]))
    console = Console()
    console.print(table)
    console.print(f"best checkpoint: {summary['checkpoint']}  (use it as a bot spec); table {spec.out}/results.csv, "
                  f"plot {spec.out}/sweep.png", highlight=False)
    return 0

