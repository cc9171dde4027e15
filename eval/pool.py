"""The one local worker pool: worker processes for every host that plays games in parallel on this machine
(the match's blocks, the tournament's batches of deals, expert iteration's labelled games); Ray is the other
backend (eval/backends.py ``map_tasks``).

    with WorkerPool(workers, run, setup=..., teardown=...) as pool:
        for task, result in pool.imap(tasks, ordered=False):
            ...

Each worker calls ``setup(index)`` once (its env, its bots, its own part of a file: whatever a task needs
that is worth keeping) and then ``run(state, task)`` for every task it is handed; ``teardown(state)`` when it
ends. The three must be picklable (module-level functions, or ``functools.partial`` of them), as must the
tasks and results. Tasks are taken from the iterable lazily, as workers finish (two per worker in flight: every
worker busy and one more waiting), so a huge or endless source is fine, and a caller that stops iterating (a
tournament's SPRT that decided) stops the handing out: the tasks not yet started are dropped, those running
finish (what they write is kept) and the workers end.

Workers start by ``fork`` where that is safe (Linux, and this process runs no other thread): they begin at
once with everything imported; elsewhere, or with ``spawn=True`` (a parent holding torch's thread pools,
which a forked child must not inherit), they ``spawn``. Workers end when the process that started them dies,
even by ``kill -9`` (Linux: at once, through ``PR_SET_PDEATHSIG``; elsewhere within seconds), and then run
``teardown`` (a tournament's workers stop their external programs). A task that raises in a worker stops the
pool with a RuntimeError holding the worker's traceback.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .backends import start_method

__all__ = ["WorkerPool"]


class _ParentGone(BaseException):
    """Raised in a worker whose parent died: nobody reads its results any more."""


def _follow_parent(parent: int) -> None:
    """End this worker when the process ``parent`` dies, even by ``kill -9``.

    SIGTERM raises :class:`_ParentGone` (the worker then runs its teardown). Linux sends it the moment the
    parent dies (``PR_SET_PDEATHSIG``); everywhere, a thread checks the parent every second and, should the
    worker not have stopped within 10 s of the signal, ends it outright.
    """

    def on_term(signum, frame):
        raise _ParentGone()

    signal.signal(signal.SIGTERM, on_term)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="tavernzoo-parent-watch").start()
    if os.getppid() != parent:  # died before the signal was armed
        raise _ParentGone()


def _worker(index: int, run: Callable, setup: Callable | None, teardown: Callable | None, tasks, results, stop,
            parent: int) -> None:
    """A worker process (spawn-safe: module level, plain arguments)."""
    state = None
    set_up = False
    try:
        _follow_parent(parent)
        state = setup(index) if setup is not None else None
        set_up = True
        while (item := tasks.get()) is not None:
            if stop.is_set():
                continue  # the pool closed: what was handed out and not begun is dropped
            number, task = item
            results.put(("done", (number, run(state, task))))
    except _ParentGone:
        results.cancel_join_thread()  # nobody reads the queue: exit without flushing it
        if set_up and teardown is not None:
            teardown(state)
        return
    except BaseException:  # noqa: BLE001 - reported to the parent, which stops the pool
        results.put(("error", traceback.format_exc()))
    if set_up and teardown is not None:
        teardown(state)


class WorkerPool:
    """``workers`` processes running ``run(setup(index), task)`` over tasks (see the module docstring)."""

    def __init__(self, workers: int, run: Callable[[Any, Any], Any], *, setup: Callable[[int], Any] | None = None,
                 teardown: Callable[[Any], None] | None = None, spawn: bool = False):
        if workers < 1:
            raise ValueError(f"workers={workers} must be at least 1")
        self.workers = workers
        context = multiprocessing.get_context("spawn" if spawn else start_method())
        self._tasks, self._results, self._stop = context.Queue(), context.Queue(), context.Event()
        # Started before any queue is used: the queues' feeder threads must not exist when the workers fork;
        # and a forked worker flushes the standard streams it inherits, so they are flushed here first.
        sys.stdout.flush()
        sys.stderr.flush()
        self._processes = [context.Process(target=_worker, daemon=True,
                                           args=(index, run, setup, teardown, self._tasks, self._results,
                                                 self._stop, os.getpid())) for index in range(workers)]
        for process in self._processes:
            process.start()
        self._closed = False

    def imap(self, tasks: Iterable, ordered: bool = False) -> Iterator[tuple[Any, Any]]:
        """``(task, result)`` for every task, as workers finish them (``ordered``: in the tasks' order). Once the
        caller stops iterating, no more tasks are handed out."""
        source = enumerate(tasks)
        handed: dict[int, Any] = {}  # number -> task, for the tasks in flight
        done: dict[int, Any] = {}  # results held back for ``ordered``
        next_out = 0
        exhausted = False

        def hand_out() -> None:
            nonlocal exhausted
            if exhausted:
                return
            item = next(source, None)
            if item is None:
                exhausted = True
                return
            handed[item[0]] = item[1]
            self._tasks.put(item)

        for _ in range(2 * self.workers):  # every worker busy, and one more task each waiting
            hand_out()
        while handed:
            number, result = self._next_result()
            task = handed.pop(number)
            hand_out()
            if not ordered:
                yield task, result
                continue
            done[number] = (task, result)
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1

    def _next_result(self) -> tuple[int, Any]:
        while True:
            try:
                kind, payload = self._results.get(timeout=5.0)
            except queue.Empty:
                if not any(process.is_alive() for process in self._processes):
                    raise RuntimeError("every worker process died") from None
                continue
            if kind == "done":
                return payload
            if kind == "error":
                raise RuntimeError(f"a worker process failed:\n{payload}")

    def close(self) -> None:
        """Drop the tasks not yet started, let the running ones finish, end the workers (their teardown)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for _ in self._processes:
            self._tasks.put(None)
        # Results still coming are read and dropped: a worker whose pipe is full would never exit.
        deadline = time.monotonic() + 10.0
        while any(process.is_alive() for process in self._processes) and time.monotonic() < deadline:
            try:
                self._results.get(timeout=0.1)
            except (queue.Empty, OSError, EOFError):
                pass
        for process in self._processes:
            if process.is_alive():
                process.terminate()
            process.join(timeout=1.0)
        # The queues' feeder threads end here: a thread left running would make the next pool of this process
        # spawn its workers instead of forking them (backends.start_method).
        for channel in (self._tasks, self._results):
            channel.close()
            channel.join_thread()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
