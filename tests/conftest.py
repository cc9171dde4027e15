"""Shared test set-up."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_temporary_folder(tmp_path_factory):
    # Stable-Baselines3 makes a fresh folder under the system's temp directory for every model that
    # learns without a log folder; the tests' models log into one folder pytest cleans up instead.
    previous = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3-logs"))
    yield
    if previous is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = previous


@pytest.fixture
def private_solver_cache(tmp_path, monkeypatch):
    """The Tiny Minotaur solver writes its solutions to this test's own cache directory, and starts and
    ends with an empty memory (use it with ``pytestmark = pytest.mark.usefixtures(...)``)."""
    from tavernzoo.envs.tiny_minotaur import solver

    monkeypatch.setenv("TAVERNZOO_CACHE", str(tmp_path / "cache"))
    solver.clear_memory()
    yield
    solver.clear_memory()


@pytest.fixture
def house_ruleset(tmp_path):
    """A Tiny Minotaur house-rules file with small decks (test_tiny_minotaur_solver.HOUSE_DECKS): games the
    solver and the exact best response finish in a blink."""
    from test_tiny_minotaur_solver import HOUSE_DECKS

    path = tmp_path / "house.toml"
    path.write_text(HOUSE_DECKS)
    return str(path)
