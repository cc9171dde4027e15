"""Tournament schedules: entries, tables and the settings of a run (deals and seeds: eval/deals.py).

Entries
    Every ``--bots`` spec is one entry (:func:`tavernzoo.agents.load_bot`: built-ins, checkpoints,
    ``.onnx``, ``zoo:``, ``cmd:PROGRAM ARGS``); a spec given twice is two entries (``random #1``).
    A game seats ``n`` players (its config), so at least ``n`` entries are needed.

Tables and seats
    A *table* is an ordered tuple of ``n`` distinct entries. A *deal* is one seed played at one table
    under all ``n`` cyclic rotations of the seats (entry ``table[i]`` sits at seat ``(i + r) % n`` in
    rotation ``r``): the duplicate deal, so every entry at the table meets the same cards and dice from
    every seat. Deal ``d`` uses table ``d % T`` of the schedule's ``T`` tables, so ``--games N`` plays
    ``ceil(N / n)`` deals.

    The schedule covers, for every ordered pair of distinct entries ``(a, b)`` and every pair of
    distinct seats ``(s, t)``, a game with ``a`` at seat ``s`` and ``b`` at seat ``t`` — once the run
    has played its first ``T`` deals (``results.json`` says whether it has: ``cycle.complete``).
    Rotations give every seat, so the tables need every *offset* ``b - a (mod n)`` for every ordered
    pair; two-player round-robins are all pairs, bigger tables are chosen greedily (each new table
    covers the most missing ``(a, b, offset)`` triples, from seeded random candidates built around the
    first missing triple, so it always makes progress). In a *gauntlet* only pairs with the first
    entry (the candidate) must be covered and every table holds it.

Settings
    ``tournament.json`` (in ``--out``) holds the :class:`Settings`; ``--resume`` reads them back
    (:func:`read_settings`) and refuses a run whose identity differs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .deals import DealPlan, entry_labels
from .ratings import Sprt

FORMATS = ("round-robin", "gauntlet")
SETTINGS_FILE = "tournament.json"


# --- the schedule ---------------------------------------------------------------------------------------


def offset_triples(table: Sequence[int]) -> set[tuple[int, int, int]]:
    """The ``(a, b, offset)`` triples a table covers: ``b`` sits ``offset`` seats after ``a``."""
    n = len(table)
    return {(table[i], table[j], (j - i) % n) for i in range(n) for j in range(n) if i != j}


def required_triples(entries: int, seats: int, fmt: str = "round-robin") -> set[tuple[int, int, int]]:
    """The triples a schedule must cover: every ordered pair (with the candidate, in a gauntlet)."""
    return {(a, b, k) for a in range(entries) for b in range(entries) for k in range(1, seats)
            if a != b and (fmt == "round-robin" or 0 in (a, b))}


def make_tables(entries: int, seats: int, fmt: str = "round-robin", seed: int = 0) -> list[tuple[int, ...]]:
    """The schedule's tables (see the module docstring for what they cover)."""
    if fmt not in FORMATS:
        raise ValueError(f"format={fmt!r} is not valid; choose one of: {', '.join(FORMATS)}")
    if seats < 2:
        raise ValueError(f"a tournament needs a game of at least 2 seats, not {seats}")
    if entries < seats:
        raise ValueError(
            f"this game seats {seats} players, so a tournament needs at least {seats} bot entries; got "
            f"{entries} (enter a spec several times to fill a table: --bots heuristic random random ...)"
        )
    if seats == 2:
        if fmt == "gauntlet":
            return [(0, b) for b in range(1, entries)]
        return list(itertools.combinations(range(entries), 2))
    rng = random.Random(f"tavernzoo-schedule:{entries}:{seats}:{fmt}:{seed}")
    missing = required_triples(entries, seats, fmt)
    tables: list[tuple[int, ...]] = []
    while missing:
        a, b, k = min(missing)
        others = [e for e in range(entries) if e not in (a, b)]
        best, best_gain = None, -1
        for _ in range(64):
            rest = iter(rng.sample(others, seats - 2))
            table = tuple(a if i == 0 else b if i == k else next(rest) for i in range(seats))
            gain = len(offset_triples(table) & missing)
            if gain > best_gain:
                best, best_gain = table, gain
        tables.append(best)
        missing -= offset_triples(best)
    return tables


# --- settings -------------------------------------------------------------------------------------------


@dataclass
class Settings:
    """What a tournament is; everything but ``games`` and ``move_timeout`` must match on ``--resume``."""

    game: str
    bots: list[str]
    config: dict[str, Any]
    format: str = "round-robin"
    seed: int = 0
    games: int = 1000
    move_timeout: float = 10.0
    sprt: list[float] | None = None
    labels: list[str] = field(default_factory=list)
    seats: int = 0
    luck: str | None = None
    """The value bot that measures each game's luck (``--variance-reduction``, eval/luck.py), or None."""
    chance_samples: int | None = None
    """With ``luck``: the draws of each chance event that estimate its expected value."""
    sequential: float | None = None
    """The alpha of the sequential stop (``--sequential``), or None: stop at the first deal where an entry's
    confidence sequence excludes the fair share (eval/stats.py ``sequential_separation``)."""

    IDENTITY = ("game", "bots", "config", "format", "seed", "sprt", "luck", "chance_samples", "sequential")
    LATER = ("luck", "chance_samples", "sequential")
    """Keys of the identity that a settings file written before them lacks (read as None, what they are off)."""

    def identity(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self.IDENTITY}

    @property
    def deals(self) -> int:
        return math.ceil(self.games / self.seats)

    def plan(self) -> DealPlan:
        """The run's deals at its covering tables, every seed from the one scheme (eval/deals.py, ``v2``)."""
        tables = make_tables(len(self.bots), self.seats, self.format, self.seed)
        return DealPlan(self.seed, self.seats, self.deals, "v2", tuple(tables))


def make_settings(game: str, bots: Sequence[str], games: int, *, config: Any = None, fmt: str = "round-robin",
                  seed: int = 0, move_timeout: float = 10.0, sprt: Sequence[float] | None = None,
                  luck: str | None = None, chance_samples: int | None = None,
                  sequential: float | None = None) -> Settings:
    """Validated settings: the game and config exist, every spec loads, the sizes fit; ``luck`` (a bot with a
    value head, eval/luck.py) with ``chance_samples`` (default 4), ``sequential`` (an alpha) apart from an SPRT."""
    from ..agents import load_bot
    from ..agents.base import as_bot
    from ..envs import get_game
    from ..envs.core import config_to_dict

    spec_game = get_game(game)
    validated = spec_game.make_config(config)
    seats = spec_game.rules.num_seats(validated)
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    if not (math.isfinite(move_timeout) and move_timeout > 0):
        raise ValueError(f"move timeout {move_timeout} must be a positive number of seconds")
    make_tables(len(bots), seats, fmt, seed)
    if sprt is not None:
        if not all(math.isfinite(value) for value in sprt):
            raise ValueError(f"--sprt {' '.join(map(str, sprt))}: every value must be a finite number")
        Sprt(*sprt)
        if len(bots) != 2 or seats != 2:
            raise ValueError("--sprt compares two bots in a two-player game: pass exactly two --bots "
                             f"(candidate, then champion); got {len(bots)} bots and {seats} seats")
    if chance_samples is not None and luck is None:
        raise ValueError("--chance-samples needs --variance-reduction BOT or playouts")
    if luck is not None:
        from .luck import DEFAULT_SAMPLES, luck_meter

        chance_samples = DEFAULT_SAMPLES if chance_samples is None else chance_samples
        luck_meter(luck, spec_game, validated, chance_samples)  # a bot without a value head fails here, once
    if sequential is not None:
        if isinstance(sequential, bool) or not isinstance(sequential, float | int) or not 0.0 < sequential < 0.5:
            raise ValueError(f"--sequential alpha={sequential!r} must lie strictly between 0 and 0.5")
        if sprt is not None:
            raise ValueError("--sequential and --sprt are two stopping rules: pass one of them")
    for spec in bots:  # fail here, on a typo, rather than in a worker
        as_bot(load_bot(spec, spec_game, validated, seed=0)).close()
    # An earlier version a game still plays (ministeel_v1) is kept by its env name: by the game's name
    # alone the workers would play the current version.
    name = spec_game.name if get_game(spec_game.name) is spec_game else spec_game.env_name
    return Settings(name, list(bots), config_to_dict(validated), fmt, seed, games, float(move_timeout),
                    list(sprt) if sprt is not None else None, entry_labels(list(bots)), seats, luck, chance_samples,
                    None if sequential is None else float(sequential))


def read_settings(out: str | Path) -> dict[str, Any]:
    """The stored settings of the tournament in ``out``, checked to be one (else a ValueError)."""
    from tavernzoo.userio import read_table_file

    path = Path(out) / SETTINGS_FILE
    if not path.exists():
        raise ValueError(f"nothing to resume in {out}: no {SETTINGS_FILE} there")
    stored = read_table_file(path, "--resume:", "tournament settings")
    names = {item.name for item in dataclasses.fields(Settings)}
    required = [key for key in Settings.IDENTITY if key not in Settings.LATER]
    if not names >= set(stored) or not set(required) <= set(stored):
        raise ValueError(f"--resume: {path} is not a tournament's settings file (it needs the keys "
                         f"{', '.join(required)} and no others but {', '.join(sorted(names))})")
    bots, config = stored["bots"], stored["config"]
    if not (isinstance(bots, list) and bots and all(isinstance(spec, str) for spec in bots)
            and isinstance(config, dict)):
        raise ValueError(f"--resume: {path} is damaged: bots must be a list of specs and config a table")
    return stored
