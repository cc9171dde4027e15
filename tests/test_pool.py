"""The one local worker pool (eval/pool.py): every task's result, in order when asked, an early stop, a
worker's failure as one error. Its functions come from the standard library, so the pool works under fork and
spawn alike."""

from __future__ import annotations

import functools
import operator

import pytest

from tavernzoo.eval.pool import WorkerPool

SETUP = functools.partial(operator.mul, 0)  # every worker's state: 0
RUN = operator.add  # a task's result: 0 + task


@pytest.mark.parametrize("spawn", [False, True])
def test_every_task_comes_back_in_order_when_asked(spawn):
    with WorkerPool(3, RUN, setup=SETUP, spawn=spawn) as pool:
        assert list(pool.imap(range(40), ordered=True)) == [(task, task) for task in range(40)]
        assert sorted(pool.imap(iter(range(7)))) == [(task, task) for task in range(7)]


def test_a_caller_that_stops_stops_the_handing_out():
    taken = []

    def source():
        for task in range(10_000):
            taken.append(task)
            yield task

    with WorkerPool(2, RUN, setup=SETUP) as pool:
        for _ in pool.imap(source()):
            break
    assert len(taken) <= 2 * 2 + 1  # two per worker in flight, one more handed as the first came back


def test_a_failing_task_stops_the_pool_with_the_workers_traceback():
    with WorkerPool(2, RUN, setup=SETUP) as pool, pytest.raises(RuntimeError, match="(?s)worker.*TypeError"):
        list(pool.imap([1, "two", 3]))
    with pytest.raises(ValueError, match="workers=0 must be at least 1"):
        WorkerPool(0, RUN)


def test_a_closed_pool_leaves_no_thread_behind():
    """A thread left running (a queue's feeder) would make every later pool of the process spawn its workers
    instead of forking them (eval/backends.py start_method)."""
    import threading

    before = threading.active_count()
    with WorkerPool(2, RUN, setup=SETUP) as pool:
        assert sorted(pool.imap(range(9))) == [(task, task) for task in range(9)]
    assert threading.active_count() == before
