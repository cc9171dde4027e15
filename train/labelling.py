"""Expert iteration's collection: seeded games in which a teacher labels every decision at its seats.

:func:`collect` plays games ``first_game ..`` of a :class:`CollectJob` through the one game loop
(``eval.loop.play_game``) over worker processes; each labelled seat is a :class:`Labeller` (the teacher
labels, the student may play: DAgger), and :func:`teacher_target` is the policy target of one decision
(train/expert.py's docstring: the targets by what the teacher offers). The result is a
:class:`~tavernzoo.train.samples.Samples` in game order, whatever the number of workers.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
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

    Passes the teacher's information-state and view hooks through, so search teachers get what the
    match loop hands them (``agents.infoset.feed``).
    """

    def __init__(self, teacher: Any, student: Any, dagger: float, rng: random.Random):
        self.teacher, self.student, self.dagger, self.rng = teacher, student, dagger, rng
        self.name = f"labelled:{getattr(teacher, 'name', 'teacher')}"
        self._hooks = as_bot(teacher)
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    @property
    def wants_view(self) -> bool:
        return self._hooks.wants_view

    @property
    def wants_information_state(self) -> bool:
        return self._hooks.wants_information_state

    def observe_view(self, view: dict[str, Any]) -> None:
        self._hooks.observe_view(view)

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
            self.rows.append((np.array(observation["observation"], np.float32), mask.copy(),
                              teacher_target(self.teacher, observation, action)))
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
            bots.append(Labeller(teacher, student, job.dagger, random.Random(rng.randrange(2**31))))
        else:
            bots.append(load_bot(job.opponents, game, config, seed=rng.randrange(2**31)))
    returns, _ = play_game(env, bots, seed=rng.randrange(2**31))
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    parts = [Samples.empty(size, actions)]
    for seat in labelled:
        rows = bots[seat].rows
        if rows:
            parts.append(Samples(np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows]),
                                 np.stack([r[2] for r in rows]), np.full(len(rows), returns[seat], np.float32)))
    return Samples.concat(parts)


def collect(job: CollectJob, games: int, workers: int = 2, progress: bool = False, first_game: int = 0,
            backend: str = "local", address: str | None = None) -> Samples:
    """Play and label games ``first_game .. first_game + games - 1`` of ``job``; the samples in game order.

    ``backend="ray"`` plays them as Ray tasks (``address``: the cluster to join, else one on this machine),
    a shard of games each, with the files the teacher, opponents and student name shipped to the nodes
    (eval/shipping.py); a game's seeds depend on its index alone, so the samples equal the local backend's."""
    from ..eval.backends import BACKENDS, progress_bar

    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    bar = progress_bar(progress, games, f"labelling ({job.teacher})")
    results: dict[int, Samples] = {}
    indices = range(first_game, first_game + games)
    try:
        if backend == "ray":
            for part in _collect_on_ray(job, indices, address):
                results.update(part)
                if bar is not None:
                    bar.update(len(part))
        elif workers <= 1:
            state = _worker_setup(job)
            for index in indices:
                results[index] = _play_one(state, index)
                if bar is not None:
                    bar.update(1)
        else:
            import functools

            from ..eval.pool import WorkerPool

            # spawn: the parent holds torch's thread pools, which a forked child must not inherit.
            with WorkerPool(workers, _play_one, setup=functools.partial(_worker_setup, job), spawn=True) as pool:
                for index, samples in pool.imap(indices):
                    results[index] = samples
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return Samples.concat([results[i] for i in indices])


# Ray shards of labelled games per CPU of the cluster: a search teacher's game takes seconds, and with several
# shards a CPU the last ones still balance the load; each shard builds its env once.
SHARDS_PER_CPU = 4


def _collect_on_ray(job: CollectJob, indices: range, address: str | None):
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


def _play_shard(job: CollectJob, indices: range) -> dict[int, Samples]:
    """One Ray task: the games of ``indices`` (:func:`_play_one` each, on one env)."""
    state = _worker_setup(job)
    return {index: _play_one(state, index) for index in indices}
