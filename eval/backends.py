"""Where games run: the backends (local processes, Ray) and the one progress bar.

A leaf of eval/ (it imports nothing else of tavernzoo): the match, the tournament, the training report,
expert labelling and the solver's tables all choose a backend and show progress through it.

    BACKENDS                   "local" (this process, or worker processes) and "ray"
    start_method()             how local worker processes start: fork where safe, else spawn
    progress_bar(...)          a tqdm bar counting games, or None
    connect(address=None)      start an embedded Ray instance, or join a cluster (``ray start --head``)
    map_tasks(fn, items)       fn(item) for every item as Ray tasks, in batches, yielded as batches finish

Ray is imported lazily, so tavernzoo works without the extra (``pip install "tavernzoo[ray]"``). Batches:
Ray's scheduling costs about a millisecond per task, and its guidance is tasks of at least ~10 ms; one
tournament deal of a fast game takes about that, so work goes out in batches (by default enough batches
for every CPU to get about sixteen, so the last ones still balance the load).
"""

from __future__ import annotations

import math
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

BACKENDS = ("local", "ray")


def start_method() -> str:
    """``fork`` on Linux when this process runs no other thread (forking threads can deadlock), else
    ``spawn``."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"



def progress_bar(enabled: bool, total: int, description: str, unit: str = "game", initial: int = 0):
    """A progress bar of ``total`` games (or other ``unit``s; ``bar.update(n)``, ``bar.close()``), ``initial``
    of them done before it starts (a resumed run: its ETA counts only what is left), or None when not
    ``enabled`` or there is nothing to count."""
    if not enabled or total <= 0:
        return None
    from tqdm.auto import tqdm

    # disable=None: no bar when stderr is not a terminal (a log file would get one line per update).
    return tqdm(total=total, desc=description, unit=unit, initial=initial, dynamic_ncols=True, disable=None)


# --- Ray ---------------------------------------------------------------------------------------------------


INSTALL_HINT = 'the Ray backend needs Ray: pip install -c constraints/cpu.txt "tavernzoo[ray]"'


BATCHES_PER_CPU = 16


def check_backend(backend: str, address: str | None = None) -> None:
    """One error for a backend that is none of :data:`BACKENDS`, or for a Ray address given to another."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if address and backend != "ray":
        raise ValueError("--address names a Ray cluster: it needs --backend ray")


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


def _apply(fn: Callable, chunk: Sequence, files: Any = None) -> list:
    if files is not None:
        files.install()
    return [fn(item) for item in chunk]


def map_tasks(fn: Callable[[Any], Any], items: Iterable, *, address: str | None = None,
              batch: int | None = None, files: Any = None) -> Iterator[tuple[Any, Any]]:
    """``(item, fn(item))`` for every item, computed by Ray tasks of ``batch`` items each and yielded as
    each task finishes (not in item order). ``fn`` must be picklable (a module-level function, or a
    ``functools.partial`` of one). ``files`` (a :class:`tavernzoo.eval.shipping.Shipment`: bot and option
    files) is put into Ray's object store once and installed by every task before ``fn`` runs."""
    ray = connect(address)
    items = list(items)
    size = batch_size(len(items), cluster_cpus(ray), batch)
    remote = ray.remote(_apply)
    shipped = ray.put(files) if files else None
    pending = {}
    for start in range(0, len(items), size):
        chunk = items[start:start + size]
        pending[remote.remote(fn, chunk, shipped)] = chunk
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            chunk = pending.pop(done[0])
            yield from zip(chunk, ray.get(done[0]), strict=True)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)

