"""Hyperparameter sweeps on Ray Tune: many ordinary training runs, searched, stopped early or evolved.

    tavernzoo sweep GAME [--grid KEY=V1,V2 ...] [--uniform KEY=LOW:HIGH ...] [--loguniform KEY=LOW:HIGH ...]
                    [--seeds 0 1 ...] [--samples N] [--scheduler fifo|asha|pbt] [--timesteps T]
                    [--reports R] [--eval-games G] [--set KEY=VALUE] [--out DIR] [--address ADDR]

Every trial is a normal training run (:class:`tavernzoo.train.run.Trainer`) in ``DIR/trials/NAME``, with
its own checkpoints, ``config.json`` and ``report.json``, so any trial's checkpoint is a bot spec. A trial
trains in ``R`` chunks of ``T / R`` timesteps (each chunk resumes the run from its last checkpoint) and
after each chunk plays ``G`` seeded games against the heuristic; that score (``score``, between 0 and 1,
higher is better) is what the schedulers compare.

Search space: ``--grid`` values are tried exhaustively, ``--uniform``/``--loguniform`` are sampled,
``--seeds`` is a grid over ``TrainConfig.seed``; ``--samples N`` repeats the grid N times with fresh
samples (Tune's ``num_samples``). Any ``TrainConfig`` field can be searched; ``--set`` fixes the others.

Schedulers: ``fifo`` runs every trial to the end; ``asha`` (asynchronous successive halving) stops trials
whose score after a chunk is in the bottom part of those that reached the same chunk; ``pbt``
(population-based training, the league method) replaces the bottom quarter of the population after
each chunk by copies of the top quarter's checkpoints with perturbed hyperparameters (only the
``--uniform``/``--loguniform`` keys are perturbed).

Files: ``DIR/results.csv`` (one row per trial: its hyperparameters, score, timesteps, checkpoint),
``DIR/sweep.png`` (score against timesteps per trial), ``DIR/best.json`` (the best trial and its
checkpoint: pass that path as a bot spec), ``DIR/trials/`` the runs, ``DIR/tune/`` Tune's own files.
Trials write to ``DIR`` directly, so on a cluster ``DIR`` must be on a filesystem every node shares.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

from ..envs.records import write_json_atomic
from .config import TrainConfig, make_train_config

METRIC = "score"
SCHEDULERS = ("fifo", "asha", "pbt")


@dataclasses.dataclass
class SweepSpec:
    """One sweep: the fixed training options, the searched ones, and how the search runs."""

    game: str
    out: str
    fixed: dict[str, Any] = dataclasses.field(default_factory=dict)
    grid: dict[str, list] = dataclasses.field(default_factory=dict)
    uniform: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)
    loguniform: dict[str, tuple[float, float]] = dataclasses.field(default_factory=dict)
    seeds: list[int] = dataclasses.field(default_factory=lambda: [0])
    samples: int = 1
    scheduler: str = "fifo"
    timesteps: int | None = None
    reports: int = 4
    eval_games: int = 200
    cpus_per_trial: float = 1.0

    def validate(self) -> None:
        fields = {f.name for f in dataclasses.fields(TrainConfig)} - {"game", "seed", "timesteps", "eval_games"}
        for name in [*self.grid, *self.uniform, *self.loguniform]:
            if name not in fields:
                raise ValueError(f"cannot sweep {name!r}: searchable TrainConfig fields are "
                                 f"{', '.join(sorted(fields))}")
        for name, (low, high) in {**self.uniform, **self.loguniform}.items():
            if not low < high or (name in self.loguniform and low <= 0):
                raise ValueError(f"range {name}={low}:{high} needs LOW < HIGH (and LOW > 0 for --loguniform)")
        if self.scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler {self.scheduler!r} is not one of {', '.join(SCHEDULERS)}")
        if self.scheduler == "pbt" and not (self.uniform or self.loguniform):
            raise ValueError("--scheduler pbt perturbs hyperparameters: give at least one --uniform or --loguniform")
        for name in ("samples", "reports"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be at least 1")
        if self.eval_games < 1:
            raise ValueError(f"eval_games={self.eval_games} must be at least 1: the score needs games")
        if not self.seeds:
            raise ValueError("--seeds needs at least one seed")
        # Fail on a bad fixed option or value now, not in every trial.
        self.base_config(self.seeds[0], {name: values[0] for name, values in self.grid.items()})

    def base_config(self, seed: int, params: dict[str, Any]) -> TrainConfig:
        return make_train_config(self.game, None, {**self.fixed, **params}, timesteps=self.timesteps, seed=seed,
                                 eval_games=self.eval_games)


def _trial(params: dict[str, Any], spec: dict[str, Any]) -> None:
    """One Tune trial (runs in a Ray worker): an ordinary training run, trained and scored chunk by chunk."""
    from ray import tune

    from .run import Trainer

    sweep = SweepSpec(**spec)
    params = dict(params)
    seed = int(params.pop("seed"))
    config = sweep.base_config(seed, params)
    run = Path(sweep.out) / "trials" / tune.get_context().get_trial_name()
    total = config.timesteps
    chunk = math.ceil(total / sweep.reports)
    restored = tune.get_checkpoint()
    if restored is not None:  # PBT: continue from (another trial's) checkpoint, with this trial's new values
        checkpoints = run / "checkpoints"
        shutil.rmtree(checkpoints, ignore_errors=True)
        with restored.as_directory() as folder:
            name = (Path(folder) / "latest").read_text().strip()
            shutil.copytree(Path(folder) / name, checkpoints / name)
        (checkpoints / "latest").write_text(name + "\n")
        write_json_atomic(run / "config.json", config.to_dict())
    done = _trained_timesteps(run)
    while done < total:
        target = min(total, (done // chunk + 1) * chunk)
        if done == 0 and not (run / "checkpoints" / "latest").exists():
            config.timesteps = target
            trainer = Trainer(config, run)
        else:
            trainer = Trainer(None, run, resume=True, timesteps=target)
        report = trainer.run(progress=False)
        done = report["timesteps"]
        heuristic = report["against"]["heuristic"]
        metrics = {METRIC: heuristic["score"], "score_vs_random": report["against"]["random"]["score"],
                   "timesteps": done, "checkpoint": report["checkpoint"]}
        if sweep.scheduler == "pbt":
            checkpoint = Path(report["checkpoint"])
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(str(checkpoint.parent)))
        else:
            tune.report(metrics)


def _trained_timesteps(run: Path) -> int:
    pointer = run / "checkpoints" / "latest"
    if not pointer.is_file():
        return 0
    metrics = run / "checkpoints" / pointer.read_text().strip() / "metrics.json"
    return int(json.loads(metrics.read_text())["timesteps"])


def _space(sweep: SweepSpec) -> dict[str, Any]:
    from ray import tune

    space: dict[str, Any] = {"seed": tune.grid_search(list(sweep.seeds))}
    space.update({name: tune.grid_search(list(values)) for name, values in sweep.grid.items()})
    space.update({name: tune.uniform(*bounds) for name, bounds in sweep.uniform.items()})
    space.update({name: tune.loguniform(*bounds) for name, bounds in sweep.loguniform.items()})
    return space


def _scheduler(sweep: SweepSpec):
    from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, PopulationBasedTraining

    if sweep.scheduler == "asha":
        return ASHAScheduler(time_attr="training_iteration", max_t=sweep.reports, grace_period=1,
                             reduction_factor=2)
    if sweep.scheduler == "pbt":
        from ray import tune

        mutations = {name: tune.uniform(*bounds) for name, bounds in sweep.uniform.items()}
        mutations.update({name: tune.loguniform(*bounds) for name, bounds in sweep.loguniform.items()})
        return PopulationBasedTraining(time_attr="training_iteration", perturbation_interval=1,
                                       hyperparam_mutations=mutations, quantile_fraction=0.25)
    return FIFOScheduler()


def run_sweep(sweep: SweepSpec, *, address: str | None = None) -> dict[str, Any]:
    """Run the sweep into ``sweep.out``; returns the summary written to ``best.json``."""
    sweep.validate()
    from ..eval.backends import connect

    out = Path(sweep.out).resolve()
    sweep = dataclasses.replace(sweep, out=str(out))
    if (out / "results.csv").exists():
        raise ValueError(f"{out} already holds a sweep; choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    ray = connect(address)
    from ray import tune

    trainable = tune.with_resources(tune.with_parameters(_trial, spec=dataclasses.asdict(sweep)),
                                    {"cpu": sweep.cpus_per_trial})
    tuner = tune.Tuner(
        trainable,
        param_space=_space(sweep),
        tune_config=tune.TuneConfig(metric=METRIC, mode="max", scheduler=_scheduler(sweep),
                                    num_samples=sweep.samples),
        run_config=tune.RunConfig(name="tune", storage_path=str(out), verbose=0,
                                  checkpoint_config=tune.CheckpointConfig(num_to_keep=2)),
    )
    grid = tuner.fit()
    del ray
    rows = []
    for result in grid:
        history = result.metrics_dataframe
        params = {k: v for k, v in (result.config or {}).items()}
        row = {"trial": Path(result.metrics.get("checkpoint", "")).parent.parent.name if result.metrics else "",
               **params, METRIC: result.metrics.get(METRIC), "score_vs_random": result.metrics.get("score_vs_random"),
               "timesteps": result.metrics.get("timesteps"), "checkpoint": result.metrics.get("checkpoint"),
               "error": str(result.error).splitlines()[0] if result.error else ""}
        rows.append((row, history))
    if not rows or all(row[METRIC] is None for row, _ in rows):
        errors = "; ".join(row["error"] for row, _ in rows if row["error"]) or "no trial reported"
        raise ValueError(f"every trial failed: {errors}")
    rows.sort(key=lambda pair: -1.0 if pair[0][METRIC] is None else -pair[0][METRIC])
    columns = list(dict.fromkeys(key for row, _ in rows for key in row))
    with open(out / "results.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=columns)
        writer.writeheader()
        writer.writerows(row for row, _ in rows)
    _plot(rows, out / "sweep.png")
    best = rows[0][0]
    summary = {"game": sweep.game, "scheduler": sweep.scheduler, "metric": METRIC, "trials": len(rows),
               "best": best, "checkpoint": best["checkpoint"]}
    write_json_atomic(out / "best.json", summary)
    return {**summary, "rows": [row for row, _ in rows]}


def _plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    for row, history in rows:
        if history is not None and METRIC in history and "timesteps" in history:
            axes.plot(history["timesteps"], history[METRIC], marker="o", label=row["trial"].lstrip("_"))
    axes.set_xlabel("timesteps")
    axes.set_ylabel("score against the heuristic")
    axes.set_ylim(0, 1)
    if len(rows) <= 12:
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
