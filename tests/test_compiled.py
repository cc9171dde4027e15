"""envs/compiled.py: a cached kernel function is compiled afresh when a file it calls into changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tavernzoo.envs import compiled

pytestmark = pytest.mark.skipif(compiled.numba is None, reason="numba is not installed")

CALLEE = """
from tavernzoo.envs.compiled import Kernel

KERNEL = Kernel(dict)


@KERNEL.compiled
def step(s):
    return s + {answer}
"""

CALLER = """
import callee

compiled = callee.KERNEL.compiled


@compiled
def twice(s):
    return callee.step(s) + callee.step(s)


print(callee.KERNEL.compile() or twice(1))
"""


def run(folder) -> int:
    done = subprocess.run([sys.executable, "caller.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


def test_a_caller_cached_before_its_callees_file_changed_is_compiled_afresh(tmp_path):
    """numba's own cache checks only the caller's file: the caller would keep the old callee linked in."""
    (tmp_path / "caller.py").write_text(textwrap.dedent(CALLER))
    (tmp_path / "callee.py").write_text(CALLEE.format(answer=1))
    assert run(tmp_path) == 4
    assert list((tmp_path / "__pycache__").glob("caller.twice*.nbi")), "the caller was cached"
    assert run(tmp_path) == 4  # from the cache
    (tmp_path / "callee.py").write_text(CALLEE.format(answer=10))
    assert run(tmp_path) == 22
