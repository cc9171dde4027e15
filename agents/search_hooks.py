"""What search needs to know of a game beyond its rules, declared by the game: ``SEARCH`` in its bots'
module (``agents/<game>.py``), next to its ``BOTS``.

    SEARCH = SearchHooks(
        defaults={"sims": 100, "depth": 20, "rollout": "heuristic"},  # mcts options (docs/search.md)
        value=my_value_estimate,   # state -> a value per seat in [-1, 1], for rollouts cut short (depth=)
        closed_loop=ClosedLoopGame(key, fixed, copy),  # a game without hidden information: tree=closed
        kernel="tavernzoo.agents.my_game_kernel",  # the module whose SEARCH_KERNEL runs whole simulations
    )                                              # in compiled code (agents/mcts_kernel.py)

A game that declares nothing is searched with the general defaults, open-loop, to the end of every
rollout. The search itself (agents/mcts.py, agents/mcts_closed.py) keeps no table of games.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class ClosedLoopGame(NamedTuple):
    """What closed-loop search needs of a game beyond its rules: the state key, the parts fixed for a
    whole game (a table is reused only while they are equal), and a fast ``copy(state, chance)``."""

    key: Callable[[Any], tuple]
    fixed: Callable[[Any], tuple]
    copy: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class SearchHooks:
    """A game's search declarations (the module docstring)."""

    defaults: Mapping[str, Any] = field(default_factory=dict)
    value: Callable[[Any], list[float]] | None = None
    closed_loop: ClosedLoopGame | None = None
    # The import name of the module whose ``SEARCH_KERNEL`` (agents/mcts_kernel.py ``GameSearchKernel``) runs
    # this game's simulations in compiled code; a name, not the module: it imports numba, and it builds on the
    # game's bots, which declare these hooks.
    kernel: str | None = None


NONE = SearchHooks()


def search_hooks(game_name: str) -> SearchHooks:
    """The ``SEARCH`` that ``agents/<game_name>.py`` declares, or :data:`NONE`."""
    if not game_name:
        return NONE
    module_name = f"tavernzoo.agents.{game_name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        return NONE
    return getattr(module, "SEARCH", NONE)


def lead_values(strength: list[float], scale: float) -> list[float]:
    """Each seat's lead over its best rival, as a fraction of ``scale``, in [-1, 1] (a value estimate's
    usual shape: the leader by some measure of the race)."""
    # Every seat's best rival is the leader, the leader's own is the runner-up (the same value on a tie):
    # one pass instead of one per seat, since this scores every cut-off rollout.
    top = max(strength)
    leader = strength.index(top)  # the first of the best
    runner_up = max(strength[:leader] + strength[leader + 1:])
    values = []
    for seat, mine in enumerate(strength):
        lead = (mine - (runner_up if seat == leader else top)) / scale
        values.append(1.0 if lead >= 1.0 else -1.0 if lead <= -1.0 else lead)  # clipped to [-1, 1]
    return values
