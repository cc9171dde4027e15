"""The one deal plan: from a seed and a count, every host's deals, seatings and seeds.

A *deal* is one seed played at one *table* (an ordered tuple of entries) under every cyclic rotation of
the seats: entry ``table[i]`` sits at seat ``(i + rotation) % n`` in rotation ``rotation``. Every host that
plays deals (the match, the tournament, the training report, and through them expert iteration's and
exploit's strength lines, and ``export --measure``) takes its deals, seatings and seeds from a
:class:`DealPlan`, so the same command gives the same games wherever it runs.

Seedings
    ``v2`` (the one scheme, every host's default): every seed is :func:`derived_seed` of the run's seed and the
    deal (and the entry, and the rotation), so a game depends on nothing but (seed, deal, rotation): not on
    workers, blocks, lanes or the order games end. An entry's bot is built afresh for each deal, seeded by
    :meth:`DealPlan.bot_seed`, plays the deal's rotations in order, and each game's ``begin_game`` gets
    :meth:`DealPlan.game_seed` (a ``cmd:`` program reseeds its ``new_game`` seeds with it). It is the
    tournament's scheme since its first version, so tournaments are unchanged; a match and a training report
    play exactly the tournament's games of the same seed at the table of all entries.

    ``v1`` (deprecated, kept for one release to reproduce the match and training-report figures published
    before 2026-12-05, when it was their default; ``tavernzoo match --seeding v1``): the deal seeds are drawn
    from ``random.Random(seed)`` after one seed per entry. The match builds its bots once per block of deals
    (:meth:`DealPlan.blocks`: block 0's from those entry seeds), so bots that draw random numbers draw other
    ones with another block size; the training report builds each game's bots from the entry's seed and the
    game's index (:meth:`DealPlan.lockstep_bot_seed`).

Results versions
    Every document that holds scores (a match's ``--json``, a training report, an expert round's strength
    line, an exploiter's measure, an exported bot's measured strength, a tournament's ``results.json``) carries
    :func:`results_stamp`: ``results_version`` (:data:`RESULTS_VERSION`) and the ``seeding`` it was played
    under. A document without them was written before (version 1): a match's or a training report's was of
    ``v1``, a tournament's of its own scheme, ``v2`` (:func:`results_seeding` reads either).

A leaf of eval/ (it imports nothing else of tavernzoo).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

SEEDINGS = ("v1", "v2")
"""The seed schemes (see the module docstring): ``v2`` the one scheme, every host's default (the tournament's);
``v1`` the match's and training report's before 2026-12-05, deprecated."""

DEFAULT_SEEDING = "v2"

SEEDING_HELP = ("the seed scheme (docs/tournaments.md, 'Deals and seeds'): v2 (default) the one scheme of every "
                "host, a tournament's games of the same seed; v1 deprecated, for figures published before "
                "2026-12-05")
"""What ``export``'s ``--seeding`` says (``match --seeding`` and ``expert --eval-seeding`` say more)."""

RESULTS_VERSION = 2
"""The version of a results document (see the module docstring): 2 since every host's default is ``v2``."""


def check_seeding(seeding: str) -> str:
    """``seeding``, or a ValueError naming the valid ones."""
    if seeding not in SEEDINGS:
        raise ValueError(f"seeding {seeding!r} is not one of {', '.join(SEEDINGS)}")
    return seeding


def results_stamp(seeding: str) -> dict[str, Any]:
    """What a results document says of how it was made: ``{"results_version": 2, "seeding": seeding}``."""
    return {"results_version": RESULTS_VERSION, "seeding": check_seeding(seeding)}


def results_seeding(document: dict[str, Any], unstamped: str = "v1") -> str | None:
    """The seed scheme ``document`` (a results document) was played under: its ``seeding`` (None where it names
    none: a table counted from game records), or ``unstamped`` for one written before documents said (no
    ``results_version``): ``v1`` for a match's or a training report's, ``v2`` for a tournament's. A seeding
    that is no scheme is a ValueError naming it."""
    if "results_version" not in document and "seeding" not in document:
        return unstamped
    seeding = document.get("seeding")
    if seeding is not None and seeding not in SEEDINGS:
        raise ValueError(f"the results name seeding {seeding!r}, not one of {', '.join(SEEDINGS)}")
    return seeding


def entry_labels(bot_specs: Sequence[str]) -> list[str]:
    """Display names: a spec entered more than once is numbered (``random #2``)."""
    labels = []
    for i, spec in enumerate(bot_specs):
        if bot_specs.count(spec) > 1:
            labels.append(f"{spec} #{bot_specs[: i + 1].count(spec)}")
        else:
            labels.append(spec)
    return labels


def seating(table: Sequence[int], rotation: int) -> list[int]:
    """The entry at each seat in ``rotation``: ``table[i]`` sits at seat ``(i + rotation) % n``."""
    n = len(table)
    return [table[(seat - rotation) % n] for seat in range(n)]


def derived_seed(seed: int, *parts: Any) -> int:
    """A seed that depends only on the run's seed and ``parts`` (deal, rotation, entry...)."""
    return random.Random(":".join(map(str, ("tavernzoo-tournament", seed, *parts)))).randrange(2**63)


@dataclass(frozen=True)
class Deal:
    """Deal ``index`` of a plan: its seed and its table (the entries, first at seat 0 in rotation 0)."""

    index: int
    seed: int
    table: tuple[int, ...]

    def seatings(self) -> list[list[int]]:
        """The entry at each seat, for each rotation in order."""
        return [seating(self.table, rotation) for rotation in range(len(self.table))]


@dataclass(frozen=True)
class MatchBlock:
    """A block of a match's deals: where it starts, the deals' seeds and the bots' seeds (``v1``: one set of
    bots plays the block's deals)."""

    index: int
    first_deal: int
    deal_seeds: tuple[int, ...]
    bot_seeds: tuple[int, ...]


@dataclass(frozen=True)
class DealPlan:
    """``deals`` deals of a run of ``seed`` at tables of ``seats`` seats (see the module docstring).

    ``tables``: the run's tables, deal ``d`` at ``tables[d % len(tables)]`` (a tournament's covering
    schedule); by default one table of the ``seats`` entries in order (a match)."""

    seed: int
    seats: int
    deals: int
    seeding: str = DEFAULT_SEEDING
    tables: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self):
        check_seeding(self.seeding)
        if not self.tables:
            object.__setattr__(self, "tables", (tuple(range(self.seats)),))

    def __reduce__(self):
        # Sent to workers by its fields: the v1 seeds cached below are drawn again there, not shipped.
        return (DealPlan, (self.seed, self.seats, self.deals, self.seeding, self.tables))

    @cached_property
    def _v1_seeds(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``v1``'s entry seeds and deal seeds, drawn in the order every v1 match has drawn them."""
        seeds = random.Random(self.seed)
        entries = tuple(seeds.randrange(2**63) for _ in range(self.seats))
        return entries, tuple(seeds.randrange(2**63) for _ in range(self.deals))

    def deal_seed(self, deal: int) -> int:
        if self.seeding == "v1":
            return self._v1_seeds[1][deal]
        return derived_seed(self.seed, "deal", deal)

    def deal(self, index: int) -> Deal:
        return Deal(index, self.deal_seed(index), self.tables[index % len(self.tables)])

    def __iter__(self) -> Iterator[Deal]:
        return (self.deal(d) for d in range(self.deals))

    def __len__(self) -> int:
        return self.deals

    # --- the bots' seeds ------------------------------------------------------------------------------------

    def bot_seed(self, deal: int, entry: int) -> int:
        """``v2``: the seed an entry's bot is built with for ``deal``."""
        return derived_seed(self.seed, "bot", deal, entry)

    def game_seed(self, deal: int, entry: int, rotation: int) -> int | None:
        """The seed of the entry's ``begin_game`` in a game of ``deal``: ``v2``'s per game, None in ``v1``
        (the bot keeps its own)."""
        return None if self.seeding == "v1" else derived_seed(self.seed, "bot", deal, entry, rotation)

    def entry_seeds(self) -> tuple[int, ...]:
        """``v1``: one seed per entry (block 0's bots; the training report's bots derive from them)."""
        return self._v1_seeds[0]

    def lockstep_bot_seed(self, entry: int, deal: int, rotation: int) -> int:
        """``v1``'s training report: the seed of the entry's bot in the game ``deal * seats + rotation``, a
        function of the entry's seed and the game's index alone."""
        index = deal * self.seats + rotation
        return random.Random(f"{self.entry_seeds()[entry]}:{index}").randrange(2**63)

    def blocks(self, block_deals: int) -> list[MatchBlock]:
        """The match's deals in blocks of ``block_deals`` (a block is the job of one worker). ``v1``: block 0's
        bots take the entry seeds every match has taken since the first version, so a match of up to one block
        is the same as before blocks; a later block's bots are seeded from the match seed and the block. The
        deals are the seed's whatever the block size. ``v2`` builds bots per deal: its blocks' bot seeds are
        unused (empty)."""
        if self.seeding == "v1":
            first_bots, deal_seeds = self._v1_seeds
        else:
            first_bots, deal_seeds = (), tuple(self.deal_seed(d) for d in range(self.deals))
        blocks = []
        for index, start in enumerate(range(0, self.deals, block_deals)):
            if self.seeding == "v2":
                bots: tuple[int, ...] = ()
            elif index == 0:
                bots = first_bots
            else:
                block_seeds = random.Random(f"tavernzoo-match:{self.seed}:block:{index}")
                bots = tuple(block_seeds.randrange(2**63) for _ in range(self.seats))
            blocks.append(MatchBlock(index, start, deal_seeds[start:start + block_deals], bots))
        return blocks
