"""The Python side every game's compiled kernel (``envs/<game>/kernel.py``) shares: its :class:`Batch`, a row's
:class:`RowLayout` (and ``first_difference`` over it), the checks of what callers hand in, the reasons a kernel
gives for a game it cannot take, and the Python rules' fallback of ``random_rollouts``.

What each kernel keeps to itself: its row, its conversions to and from rules States, its error messages'
wording beyond the shared ones, and its compiled batch loops (``envs/compiled.py`` says why those are not
shared).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .compiled import MT_SIZE

# --- a row's layout, the checks of what callers hand in --------------------------------------------------------


class RowLayout:
    """The fields of one game's row, each at a fixed offset, in order: a kernel declares its row with
    :meth:`field` (``HP = LAYOUT.field(2, "hp")``) and names a differing slot with :meth:`describe`."""

    def __init__(self) -> None:
        self.fields: list[tuple[str, int, tuple[int, ...]]] = []  # (name, offset, shape), in row order
        self.size = 0

    def field(self, shape: int | tuple[int, ...], name: str) -> int:
        """Room for ``name`` (``shape`` int64 slots) at the end of the row; its offset."""
        shape = shape if isinstance(shape, tuple) else (shape,)
        start, self.size = self.size, self.size + int(np.prod(shape))
        self.fields.append((name, start, shape))
        return start

    def describe(self, at: int) -> str:
        """The field and index of slot ``at``: ``cards[1][4]``."""
        name, offset, shape = next(f for f in self.fields if f[1] <= at < f[1] + int(np.prod(f[2])))
        return name + "".join(f"[{int(i)}]" for i in np.unravel_index(at - offset, shape))

    def first_difference(self, row: np.ndarray, expected: np.ndarray, stop: int) -> str | None:
        """``field[index]: kernel K, rules R`` for the first slot below ``stop`` where ``row`` departs from
        ``expected`` (the row a rules State converts to); None when they agree."""
        if np.array_equal(row[:stop], expected[:stop]):
            return None
        at = int(np.flatnonzero(row[:stop] != expected[:stop])[0])
        return f"{self.describe(at)}: kernel {int(row[at])}, rules {int(expected[at])}"


def checked_seeds(seeds: Any) -> np.ndarray:
    """Game seeds as int64, each an integer from 0 to 2**63 - 1 (what ``compiled.seed_generator`` takes), or one
    ValueError line."""
    from .core import plain_int

    checked = [plain_int(seed) for seed in seeds]
    if any(seed is None or not 0 <= seed < 2**63 for seed in checked):
        raise ValueError("seeds must be integers from 0 to 2**63 - 1, one per game")
    return np.array(checked, dtype=np.int64)


def checked_rng_seeds(rng_seeds: Any, games: int) -> np.ndarray:
    """A rollout's move seeds as uint64 (``compiled.policy_random``'s state), one per game, or one ValueError line."""
    from .core import plain_int

    checked = [plain_int(seed) for seed in rng_seeds]
    if len(checked) != games or any(seed is None or not 0 <= seed < 2**64 for seed in checked):
        raise ValueError(f"rng_seeds must be {games} integers from 0 to 2**64 - 1, one per game")
    return np.array(checked, dtype=np.uint64)


def checked_max_steps(max_steps: Any) -> int:
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) or max_steps < 0:
        raise ValueError(f"max_steps must be a non-negative integer, got {max_steps!r}")
    return int(max_steps)


def generator_state(generator: Any) -> np.ndarray:
    """The 625 words of a ``random.Random`` (a Chance's ``_random``) as a kernel's ``mt`` row."""
    return np.array(generator.getstate()[1], dtype=np.uint32)


def set_generator_state(generator: Any, mt: np.ndarray) -> None:
    """Continue a kernel's ``mt`` row in a ``random.Random``."""
    generator.setstate((3, tuple(int(word) for word in mt), None))


# --- a batch and the wrappers' checks ----------------------------------------------------------------------------


@dataclass
class Batch:
    """Many games of one kernel as arrays: ``state`` (int64, ``(G, ROW_SIZE)``), ``chance`` (uint32,
    ``(G, 625)``) and the ``configs`` they were made with (what the kernel's ``to_state`` rebuilds States
    with). Each kernel subclasses it as its own ``Batch``."""

    state: np.ndarray
    chance: np.ndarray
    configs: list

    def __len__(self) -> int:
        return self.state.shape[0]

    def copy(self):
        return type(self)(self.state.copy(), self.chance.copy(), list(self.configs))


def empty_rows(games: int, row_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Zeroed ``state`` and ``chance`` arrays for ``games`` games."""
    return np.zeros((games, row_size), dtype=np.int64), np.zeros((games, MT_SIZE), dtype=np.uint32)


def unsupported_reason(game: str, compiler: Any, config: Any, config_class: type, chance: Any) -> str | None:
    """The reasons every kernel gives for a game it cannot play (a short sentence), or None: numba missing
    (``compiler``: the kernel module's ``numba``, which tests set to None), a config of another game
    (``game`` names the kernel's, as "MiniSteel"), a Chance of another class or a scripted one."""
    from .core import Chance

    if compiler is None:
        return "numba is not installed (pip install 'tavernzoo[kernel]')"
    if config is not None and not isinstance(config, config_class):
        return f"the kernel plays {game} Configs, not {type(config).__name__}"
    if chance is not None:
        if type(chance) is not Chance:
            return f"the kernel draws from a Chance's own generator, not from a {type(chance).__name__}"
        if chance._script is not None:
            return "a scripted Chance (a record's replay) has no generator for the kernel to continue"
    return None


def require_kernel(game: str, reason: str | None, compile_kernel: Callable[[], None]) -> None:
    """One ValueError line when the kernel cannot take a game (``reason``), else compile the kernel."""
    if reason is not None:
        raise ValueError(f"the {game} kernel cannot take this game: {reason}")
    compile_kernel()


def checked_actions(actions: Any, games: int) -> np.ndarray:
    """One action per game as int64 (-1: no move), or one ValueError line."""
    moves = np.asarray(actions)
    if moves.shape != (games,) or moves.dtype.kind not in "iu":
        raise ValueError(f"actions must be {games} integers, one per game (-1: no move), got shape "
                         f"{moves.shape} of {moves.dtype}")
    return moves.astype(np.int64)


def illegal_action(action: int, legal: Sequence[int], action_names: Sequence[str], game: int):
    """The IllegalActionError for ``action`` in game ``game`` of a batch, naming the legal actions."""
    from .core import IllegalActionError

    name = action_names[action] if 0 <= action < len(action_names) else action
    return IllegalActionError(name, [action_names[a] for a in legal], f"game {game} of the batch")


def chance_differs(chance_row: np.ndarray, chance: Any) -> bool:
    """Whether a kernel's ``mt`` row is not the generator state of ``chance`` (a rules State's Chance)."""
    return not np.array_equal(chance_row, generator_state(chance._random))


def rules_fallback_reason(game: str, states: Sequence[Any], use_kernel: bool,
                          unsupported: Callable[[Any, Any], str | None]) -> str | None:
    """Why ``random_rollouts`` plays on the Python rules (None: on the kernel). When the kernel was asked for
    but cannot take a State, says so in one line on stderr."""
    reason = "not asked for" if not use_kernel else next(
        (why for why in (unsupported(s.config, s.chance) for s in states) if why), None)
    if reason is not None and use_kernel:
        print(f"{game} kernel unavailable, rolling out on the Python rules: {reason}", file=sys.stderr)
    return reason


def random_rollouts_on_rules(states: Sequence[Any], rng_seeds: Sequence[int], max_steps: int, rules: Any,
                             apply: Callable[[Any, int], None], width: int) -> tuple[np.ndarray, np.ndarray]:
    """A single-actor game's random rollouts on its Python ``rules``: moves from ``random.Random(seed)``,
    played with ``apply`` (the rules' ``apply`` or ``apply_legal``); ``(G, width)`` returns and the steps."""
    values = np.zeros((len(states), width), dtype=np.float64)
    steps = np.zeros(len(states), dtype=np.int64)
    for g, (state, seed) in enumerate(zip(states, rng_seeds, strict=True)):
        game, picker = rules.clone(state), random.Random(int(seed))
        while not rules.is_terminal(game) and steps[g] < max_steps:
            legal = rules.legal_actions(game)
            apply(game, legal[int(picker.random() * len(legal))])
            steps[g] += 1
        game_returns = rules.returns(game)
        values[g, :len(game_returns)] = game_returns
    return values, steps


def rows_of_states(states: Sequence[Any], row_size: int, require: Callable[[Any, Any], None],
                   write_state: Callable[[np.ndarray, Any], None]) -> tuple[np.ndarray, np.ndarray]:
    """A kernel's ``state`` and ``chance`` arrays of Python States: each checked with ``require(config,
    chance)`` (the kernel's one-line refusal), written with ``write_state(row, state)``, and keeping its
    Chance's generator state."""
    rows, chances = empty_rows(len(states), row_size)
    for g, state in enumerate(states):
        require(state.config, state.chance)
        write_state(rows[g], state)
        chances[g, :] = generator_state(state.chance._random)
    return rows, chances
