"""Scale-out on Ray: tournament deals, solver tables and long evaluations as Ray tasks.

One machine stays the default (local processes, :mod:`tavernzoo.eval.runner`); this module is used
only when asked for (``--backend ray``) and imports Ray lazily, so tavernzoo works without the extra
(``pip install "tavernzoo[ray]"``).

    connect(address=None)      start an embedded Ray instance, or join a cluster (``ray start --head``)
    map_tasks(fn, items)       fn(item) for every item as Ray tasks, in batches, yielded as batches finish
    run_deals(settings, ...)   the tournament runner's Ray backend: batches of deals, lines streamed back

Batches: Ray's scheduling costs about a millisecond per task, and its guidance is tasks of at least ~10 ms;
one tournament deal of a fast game takes about that, so deals go out in batches (by default enough batches
for every CPU to get about sixteen, so the last ones still balance the load) and the driver writes each
batch's games the moment it comes back.
"""

from __future__ import annotations

import itertools
import math
import os
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict
from typing import Any

INSTALL_HINT = 'the Ray backend needs Ray: pip install -c constraints/cpu.txt "tavernzoo[ray]"'
BATCHES_PER_CPU = 16
CONNECT_TIMEOUT_S = 10.0  # to reach a cluster's address before Ray is asked to join it


def import_ray():
    """The ``ray`` module, or a ValueError naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise ValueError(INSTALL_HINT) from None
    return ray


def connect(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised: an existing connection is reused; ``address`` joins a running cluster ("auto" for
    the one this node belongs to, or HOST:PORT), else an embedded instance of this machine's CPUs starts.
    ``$RAY_ADDRESS`` works as in every Ray program."""
    ray = import_ray()
    if not ray.is_initialized():
        # Workers import tavernzoo from their own installation; nothing but the task arguments travels.
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True,
                                   "configure_logging": False}
        address = address or os.environ.get("RAY_ADDRESS")
        if address:
            check_reachable(address)
            ray.init(address=address, **options)
        else:
            # Ray runs its workers at niceness 15 so that they never starve its own daemons; an embedded
            # instance stands in for the local backend's worker processes (niceness 0), and at 15 it loses
            # half its speed to whatever else shares the machine. A cluster keeps its own setting.
            options["_system_config"] = {"worker_niceness": 0}
            ray.init(num_cpus=num_cpus, **options)
    return ray


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A ValueError unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a connection within ``timeout``
    seconds: Ray itself keeps retrying an address where nothing listens for minutes. ``auto`` (this node's
    cluster, found by Ray from its own files) is left to Ray."""
    if address == "auto":
        return
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ValueError(f"Ray address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as error:
        raise ValueError(f"no Ray cluster answers at {address} ({error}); start one there with "
                         "`ray start --head`, or leave the address out for one on this machine") from None


def cluster_cpus(ray) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def batch_size(items: int, cpus: int, batch: int | None = None) -> int:
    """Items per task: ``batch`` if given, else enough batches for about BATCHES_PER_CPU per CPU."""
    if batch is not None:
        if batch < 1:
            raise ValueError(f"batch={batch} must be at least 1 item per task")
        return batch
    return max(1, math.ceil(items / (cpus * BATCHES_PER_CPU)))


def _apply(fn: Callable, chunk: Sequence) -> list:
    return [fn(item) for item in chunk]


def map_tasks(fn: Callable[[Any], Any], items: Iterable, *, address: str | None = None,
              batch: int | None = None) -> Iterator[tuple[Any, Any]]:
    """``(item, fn(item))`` for every item, computed by Ray tasks of ``batch`` items each and yielded as
    each task finishes (not in item order). ``fn`` must be picklable (a module-level function, or a
    ``functools.partial`` of one)."""
    ray = connect(address)
    items = list(items)
    size = batch_size(len(items), cluster_cpus(ray), batch)
    remote = ray.remote(_apply)
    pending = {}
    for start in range(0, len(items), size):
        chunk = items[start:start + size]
        pending[remote.remote(fn, chunk)] = chunk
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            chunk = pending.pop(done[0])
            yield from zip(chunk, ray.get(done[0]), strict=True)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


# --- command-line options --------------------------------------------------------------------------------


def add_backend_arguments(parser: Any, what: str = "the games") -> None:
    """``--workers``, ``--backend`` and ``--address`` for a command that plays a match (``match``, ``export
    --measure``); :func:`backend_options` reads them back as ``play_match``'s keywords. (Here, not in
    :mod:`tavernzoo.eval.match`, so that building the command line imports nothing heavy.)"""
    parser.add_argument("--workers", type=int, default=1,
                        help=f"local processes playing {what}, a block of 64 deals each (default 1: this "
                        "process); the results do not depend on it")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help=f"local (default) or ray: {what} as Ray tasks, with the same results "
                        "(pip install 'tavernzoo[ray]'; docs/distributed.md)")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster to join (HOST:PORT or auto; "
                        "default: start one on this machine)")


def backend_options(args: Any) -> dict[str, Any]:
    """``play_match``'s ``backend``, ``workers`` and ``address`` from :func:`add_backend_arguments`."""
    if args.address and args.backend != "ray":
        raise ValueError("--address names a Ray cluster: it needs --backend ray")
    return {"backend": args.backend, "workers": args.workers, "address": args.address}


# --- tournaments ------------------------------------------------------------------------------------------


def _play_deals(settings: dict[str, Any], tasks: list) -> list[tuple[list[dict], str]]:
    """A Ray task: plays a batch of deals with one :class:`DealPlayer`; for each deal, its games' summaries
    and their lines already encoded as JSON lines (the driver writes the text as it is, without decoding
    or encoding any record)."""
    from .results import game_summary
    from .runner import DealPlayer, encode_lines
    from .schedule import Settings

    player = DealPlayer(Settings(**settings))
    done = []
    try:
        for deal, table, skip in tasks:
            lines = list(player.play_deal(deal, table, frozenset(skip)))
            done.append(([game_summary(line) for line in lines], encode_lines(lines)))
        return done
    finally:
        player.close()


def run_deals(settings, tasks: Iterable, games_path, record: Callable[[list[dict]], None], tally, *, deals: int,
              address: str | None = None, batch: int | None = None) -> None:
    """The tournament's Ray backend (same contract as its local runners): plays ``tasks`` (deal, table,
    skip; ``deals`` of them, taken lazily) in batches of deals, appends each deal's games to
    ``games_path`` and hands their summaries to ``record`` as its batch returns; once the SPRT of
    ``tally`` decides, no more batches are handed out and those in flight are cancelled.

    At most two batches per CPU are in flight, so memory stays bounded however many deals there are.
    Every game is a pure function of (seed, deal, rotation), so the lines equal the local backend's.
    A killed driver loses only the batches in flight: ``--resume`` replays the games missing from
    the game files, the same way as after a local run."""
    from .runner import GamesFile

    ray = connect(address)
    cpus = cluster_cpus(ray)
    size = batch_size(deals, cpus, batch)
    remote = ray.remote(_play_deals).options(max_retries=2)
    plain = asdict(settings)
    source = iter(tasks)
    pending: list = []

    def submit() -> bool:
        chunk = list(itertools.islice(source, size))
        if chunk:
            pending.append(remote.remote(plain, chunk))
        return bool(chunk)

    games = GamesFile(games_path)
    try:
        while len(pending) < 2 * cpus and submit():
            pass
        while pending:
            done, pending[:] = ray.wait(pending, num_returns=1)
            for summaries, text in ray.get(done[0]):
                games.write_text(text)  # on disk before it is counted
                record(summaries)
            if tally.decided_at is not None:
                break
            submit()
    finally:
        games.close()
        for ref in pending:
            ray.cancel(ref, force=True)
