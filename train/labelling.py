"""Expert iteration's collection: seeded games in which a teacher labels every decision at its seats.

:func:`collect` plays games ``first_game ..`` of a :class:`CollectJob` through the one game loop
(``eval.loop.play_game``) over worker processes; each labelled seat is a :class:`Labeller` (the teacher
labels, the student may play: DAgger), and :func:`teacher_target` is the policy target of one decision
(train/expert.py's docstring: the targets by what the teacher offers). The result is a
:class:`~tavernzoo.train.samples.Samples` in game order, whatever the number of workers.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.base import BotBase, as_bot
from .samples import Samples


def teacher_target(teacher: Any, observation: dict[str, Any], action: int) -> np.ndarray:
    """The policy target for the position the teacher just chose ``action`` in (train/expert.py: Targets)."""
    mask = np.asarray(observation["action_mask"], dtype=bool)
    target = np.zeros(len(mask), np.float32)
    visits = getattr(teacher, "visit_distribution", None)
    values = getattr(teacher, "values", None)
    if visits is not None:
        for a, share in visits().items():
            target[a] = share
    elif values is not None:
        by_action = values(observation)
        best = max(by_action.values())
        optimal = [a for a, v in by_action.items() if v >= best - 1e-9]
        target[optimal] = 1.0 / len(optimal)
    else:
        target[action] = 1.0
    if not math.isclose(float(target.sum()), 1.0, abs_tol=1e-5) or (target[~mask] != 0).any():
        raise RuntimeError(f"{getattr(teacher, 'name', teacher)}: its target {target} is not a distribution over "
                           "the legal actions")
    return target


class Labeller(BotBase):
    """A seat's bot during collection: the teacher labels every decision; the student may play it.

    Passes the teacher's hooks through (information state, view, history, events), so search teachers get
    what the match loop hands them (``agents.infoset.feed``; a belief's history among them).
    """

    def __init__(self, teacher: Any, student: Any, dagger: float, rng: random.Random, search_values: bool = False):
        self.teacher, self.student, self.dagger, self.rng = teacher, student, dagger, rng
        self.search_values = search_values  # each row keeps the teacher's search value (value_target=search)
        self.name = f"labelled:{getattr(teacher, 'name', 'teacher')}"
        self._hooks = as_bot(teacher)
        # observation, mask, target, and the teacher's search value there (None where not asked or none given)
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, float | None]] = []

    @property
    def wants_view(self) -> bool:
        return self._hooks.wants_view

    @property
    def wants_information_state(self) -> bool:
        return self._hooks.wants_information_state

    @property
    def wants_history(self) -> bool:  # a teacher with a belief (mcts belief=) weighs the others' moves
        return self._hooks.wants_history

    @property
    def wants_events(self) -> bool:
        return self._hooks.wants_events

    def observe_view(self, view: dict[str, Any]) -> None:
        self._hooks.observe_view(view)

    def observe_history(self, moves: list[tuple[int, int]]) -> None:
        self._hooks.observe_history(moves)

    def observe_events(self, lines: list[str]) -> None:
        self._hooks.observe_events(lines)

    def observe_information_state(self, state: Any, seat: int) -> None:
        self._hooks.observe_information_state(state, seat)

    def reset(self) -> None:
        self.teacher.reset()
        if self.student is not None:
            self.student.reset()
        self.rows = []

    def act(self, observation: dict[str, Any]) -> int:
        action = int(self.teacher.act(observation))
        mask = np.asarray(observation["action_mask"], dtype=bool)
        if mask.sum() > 1:
            search_value = getattr(self.teacher, "search_value", None) if self.search_values else None
            self.rows.append((np.array(observation["observation"], np.float32), mask.copy(),
                              teacher_target(self.teacher, observation, action),
                              search_value() if search_value is not None else None))
            if self.student is not None and self.rng.random() < self.dagger:
                return int(self.student.act(observation))
        return action


# --- collection ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectJob:
    """What every worker needs to play and label games (picklable: specs and paths only)."""

    game: str
    game_config: dict[str, Any]
    teacher: str
    opponents: str | None
    student: str | None  # a policy directory, or None in the first round
    dagger: float
    seed: int
    value_target: str = "return"  # the rows' values: the seat's final return, or the teacher's search value


def _worker_setup(job: CollectJob, worker: int = 0) -> dict[str, Any]:
    """What a worker keeps between games: the job, its game, config and env (eval/pool.py ``setup``)."""
    from ..envs import get_game
    from ..envs.make import make_env

    game = get_game(job.game)
    config = game.make_config(job.game_config)
    return {"job": job, "game": game, "config": config, "env": make_env(game, config)}


def _play_one(state: dict[str, Any], index: int) -> Samples:
    """Game ``index`` of the job: its own seeds, so the result does not depend on the worker."""
    from ..agents import load_bot
    from ..eval.loop import play_game

    job, game, config, env = (state[k] for k in ("job", "game", "config", "env"))
    seats = game.rules.num_seats(config)
    seed = job.seed * 1_000_003 + index
    rng = random.Random(seed)
    labelled = range(seats) if job.opponents is None else [index % seats]
    bots: list[Any] = []
    for seat in range(seats):
        if seat in labelled:
            teacher = load_bot(job.teacher, game, config, seed=rng.randrange(2**31))
            student = load_bot(job.student, game, config, seed=0) if job.student and job.dagger > 0 else None
            bots.append(Labeller(teacher, student, job.dagger, random.Random(rng.randrange(2**31)),
                                 search_values=job.value_target == "search"))
        else:
            bots.append(load_bot(job.opponents, game, config, seed=rng.randrange(2**31)))
    returns, _ = play_game(env, bots, seed=rng.randrange(2**31))
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    parts = [Samples.empty(size, actions)]
    for seat in labelled:
        rows = bots[seat].rows
        if rows:
            if job.value_target == "search":
                if any(row[3] is None for row in rows):
                    raise RuntimeError(f"{job.teacher}: value_target=search, but the teacher gave no search value")
                values = np.array([row[3] for row in rows], np.float32)
            else:
                values = np.full(len(rows), returns[seat], np.float32)
            parts.append(Samples(np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows]),
                                 np.stack([r[2] for r in rows]), values))
    return Samples.concat(parts)


def collect(job: CollectJob, games: int, workers: int = 2, progress: bool = False, first_game: int = 0,
            backend: str = "local", address: str | None = None, done: dict[int, Samples] | None = None,
            keep: Callable[[dict[int, Samples]], None] | None = None) -> Samples:
    """Play and label games ``first_game .. first_game + games - 1`` of ``job``; the samples in game order.

    ``backend="ray"`` plays them as Ray tasks (``address``: the cluster to join, else one on this machine),
    a shard of games each, with the files the teacher, opponents and student name shipped to the nodes
    (eval/shipping.py); a game's seeds depend on its index alone, so the samples equal the local backend's.
    ``done`` holds games labelled before (by index: a killed round's, train/expert.py), which are not played
    again; ``keep`` is handed every game labelled so far at most every :data:`KEEP_EVERY_S` seconds (or ten
    times as long as ``keep`` last took, whichever is longer) and once all are, so that a long round killed
    midway loses at most that much of its labelling."""
    from ..eval.backends import check_backend, progress_bar

    check_backend(backend, address)
    indices = range(first_game, first_game + games)
    results: dict[int, Samples] = {index: samples for index, samples in (done or {}).items() if index in indices}
    todo = [index for index in indices if index not in results]
    bar = progress_bar(progress, games, f"labelling ({job.teacher})", initial=len(results))
    kept_at, every = time.monotonic(), KEEP_EVERY_S

    def finished(part: dict[int, Samples]) -> None:
        nonlocal kept_at, every
        results.update(part)
        if bar is not None:
            bar.update(len(part))
        if keep is not None and (len(results) == games or time.monotonic() - kept_at >= every):
            started = time.monotonic()
            keep(results)
            kept_at = time.monotonic()
            # a round of a million positions takes seconds to write: keeping it costs at most a tenth of the time
            every = max(KEEP_EVERY_S, 10 * (kept_at - started))

    try:
        if not todo:
            pass
        elif backend == "ray":
            for part in _collect_on_ray(job, todo, address):
                finished(part)
        elif workers <= 1:
            state = _worker_setup(job)
            for index in todo:
                finished({index: _play_one(state, index)})
        else:
            import functools

            from ..eval.pool import WorkerPool

            # spawn: the parent holds torch's thread pools, which a forked child must not inherit.
            with WorkerPool(workers, _play_one, setup=functools.partial(_worker_setup, job), spawn=True) as pool:
                for index, samples in pool.imap(todo):
                    finished({index: samples})
    finally:
        if bar is not None:
            bar.close()
    return Samples.concat([results[i] for i in indices])


# How often ``collect`` hands its games so far to ``keep`` (seconds): a search teacher's round of a thousand games
# runs for an hour, and rewriting its positions every minute costs a few seconds of it.
KEEP_EVERY_S = 60.0


# --- a round's labelling kept while it runs ---------------------------------------------------------------------

# Beside an expert run's samples: the games of the round under way labelled so far (train/expert.py), removed once
# the round is complete. Plain arrays: the samples' fields, the games' indices and row counts, and the job.
UNFINISHED_ROUND = "unfinished_round.npz"


def _job_key(job: CollectJob, round_index: int, expert_dir: Path) -> str:
    """What makes a round's games the games they are: its job (teacher, opponents, student, DAgger, seed).

    The run's own students (``RUN/expert/round_K``, in the student and in the teacher's spec) are written
    relative to the run: the same run resumed from another working directory, or moved, spells them otherwise
    and is still the same job."""
    key = json.dumps({"round": round_index, **dataclasses.asdict(job)}, sort_keys=True)
    for spelling in sorted({str(expert_dir), str(expert_dir.resolve())}, key=len, reverse=True):
        key = key.replace(json.dumps(spelling + os.sep)[1:-1], "<run>/expert/")
    return key


def keep_labelled(path: Path, job: CollectJob, round_index: int, results: dict[int, Samples]) -> None:
    """Write the games of ``results`` (round ``round_index`` of ``job``) to ``path``, atomically."""
    order = sorted(results)
    samples = Samples.concat([results[index] for index in order]) if order else None
    arrays = {name: getattr(samples, name) for name in Samples.FIELDS} if samples is not None else {}
    arrays |= {"games": np.array(order, np.int64), "rows": np.array([len(results[i]) for i in order], np.int64),
               "job": np.array(_job_key(job, round_index, path.parent))}
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(path.name + ".partial")
    with open(staging, "wb") as handle:
        np.savez(handle, **arrays)
    os.replace(staging, path)


def labelled_before(path: Path, job: CollectJob, round_index: int, sizes: tuple[int, int]) -> dict[int, Samples]:
    """The games :func:`keep_labelled` wrote to ``path`` for this round of this job, by index; ``{}`` where
    there is no such file, or it was written for another round or job, or cannot be read (then the round's
    games are all labelled afresh: nothing but time is lost). Never unpickles."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            if str(archive["job"]) != _job_key(job, round_index, path.parent):
                return {}
            games, rows = archive["games"], archive["rows"]
            if not len(games):
                return {}
            arrays = {name: archive[name] for name in Samples.FIELDS}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}
    total = int(rows.sum())
    shapes = {"observations": (total, sizes[0]), "masks": (total, sizes[1]), "targets": (total, sizes[1]),
              "values": (total,), "weights": (total,)}
    if len(games) != len(rows) or any(arrays[name].shape != shape for name, shape in shapes.items()):
        return {}
    ends = np.cumsum(rows)
    return {int(index): Samples(*(arrays[name][end - count:end] for name in Samples.FIELDS))
            for index, count, end in zip(games, rows, ends, strict=True)}


# Ray shards of labelled games per CPU of the cluster: a search teacher's game takes seconds, and with several
# shards a CPU the last ones still balance the load; each shard builds its env once.
SHARDS_PER_CPU = 4


def _collect_on_ray(job: CollectJob, indices: Sequence[int], address: str | None):
    """The labelled games of ``indices`` as Ray tasks, ``{index: samples}`` per shard as each finishes."""
    import functools

    from ..envs import get_game
    from ..eval.backends import cluster_cpus, connect, map_tasks
    from ..eval.shipping import gather

    files = gather(get_game(job.game), [spec for spec in (job.teacher, job.opponents, job.student) if spec],
                   job.game_config)
    per_shard = max(1, math.ceil(len(indices) / (cluster_cpus(connect(address)) * SHARDS_PER_CPU)))
    shards = [indices[start:start + per_shard] for start in range(0, len(indices), per_shard)]
    for _, part in map_tasks(functools.partial(_play_shard, job), shards, address=address, batch=1, files=files):
        yield part


def _play_shard(job: CollectJob, indices: Sequence[int]) -> dict[int, Samples]:
    """One Ray task: the games of ``indices`` (:func:`_play_one` each, on one env)."""
    state = _worker_setup(job)
    return {index: _play_one(state, index) for index in indices}
