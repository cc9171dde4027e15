"""The one match loop: bots play a game through its PettingZoo env, deals replayed with seats rotated.

A *deal* is one seed. Every deal is played once per seat rotation (two games for a duel, the seats
swapped; n games for n seats), so each bot meets the same dice from every seat and luck largely cancels.
Scores are win shares (a win 1, a shared top place 1/k, otherwise 0) and their interval is computed over
deals, the independent unit.

Two options make a match cheaper to read (docs/strength.md, "Luck taken out"): ``luck`` names a bot whose value
network measures each game's luck at its chance events (eval/luck.py), and every row gets a luck-corrected score
and interval beside the plain one; ``sequential`` stops the match at the first deal where an entry's confidence
sequence (eval/stats.py ``sequential_separation``) excludes the fair share, ``games`` being then the most.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import load_bot
from ..agents.base import as_bot
from ..envs import Game, get_game
from ..envs.core import config_to_dict
from ..envs.make import make_env
from ..envs.records import end_torn_tail
from .backends import BACKENDS, check_backend, map_tasks, progress_bar
from .deals import DEFAULT_SEEDING, Deal, DealPlan, MatchBlock, check_seeding, entry_labels, results_stamp
from .loop import play_game
from .pool import WorkerPool
from .stats import sequential_separation
from .tally import BotRow, add_deal, finish_rows, pooled_rows

# The game loop, env construction and seats live in leaf modules; their names stay importable from here.
__all__ = ["BACKENDS", "BLOCK_DEALS", "BotRow", "MatchBlock", "MatchResult", "RecordedMatch", "entry_labels",
           "make_env", "play_game", "play_match", "recorded_deals", "tally_records"]


@dataclass
class MatchResult:
    game: str
    deals: int
    games: int
    seats: int
    seed: int | None
    """The match seed (None for a table counted from records, :func:`tally_records`)."""
    rows: list[BotRow]
    pooled: list[BotRow] = field(default_factory=list)
    """One row per bot spec entered more than once (eval/tally.py ``pooled_rows``)."""
    seeding: str | None = DEFAULT_SEEDING
    """The seed scheme the deals were played under (eval/deals.py); None for a table counted from records."""
    luck: str | None = None
    """The value bot that measured each game's luck (rows then carry ``corrected`` scores), or None."""
    sequential: dict[str, Any] | None = None
    """With ``sequential``: ``alpha``, the deals ``planned`` (the most), ``decided_at`` (the deal count at which
    it stopped, or None) and ``separated`` (``[entry label, +1 above / -1 below the fair share]``)."""
    resumed: int = 0
    """With ``resume``: how many of the deals were counted from the records file rather than played."""


BLOCK_DEALS = 64
"""Deals played as one job (a worker's, a Ray task's): bots are built afresh every deal (``v2``; once a block,
``v1``), so that blocks can be played anywhere, in any order, with the same games (64 deals of a fast game
are a good Ray task). A match may ask for smaller blocks (``block_deals``): a slow match of a few dozen deals
then has blocks for every worker."""
MAX_BLOCK_DEALS = 100_000

class _BlockPlayer:
    """Plays blocks of one match in one process: one env, bots built per block (``v1``) or per deal (``v2``,
    by the tournament's :class:`~.runner.DealPlayer`)."""

    def __init__(self, game_name: str, config: dict[str, Any], bot_specs: Sequence[str], records: bool,
                 plan: DealPlan, luck: tuple[str, int] | None = None, build: bool = True):
        self.key = (game_name, json.dumps(config, sort_keys=True), tuple(bot_specs), records, plan, luck)
        if not build:
            return
        self.game = get_game(game_name)
        self.config = self.game.make_config(config)
        self.specs, self.records, self.plan = list(bot_specs), records, plan
        self.labels = entry_labels(self.specs)
        self.env = make_env(self.game, self.config)
        self.meter = None
        if luck is not None:  # the value bot and its chance samples (eval/luck.py)
            from .luck import luck_meter

            self.meter = luck_meter(luck[0], self.game, self.config, luck[1],
                                         dict(zip(self.labels, self.specs, strict=True)))
        self.dealer = None
        if plan.seeding != "v1":
            from .runner import DealPlayer

            self.dealer = DealPlayer(self.game, self.config, self.specs, plan, self.labels)

    def play(self, block: MatchBlock, on_game: Callable[[int], Any] | None = None,
             on_record: Callable[[str], Any] | None = None,
             ) -> tuple[list[tuple[list[float], list[int], list | None]], str]:
        """Each game's returns, seating (entry at each seat), bot stats and, with a luck meter, each seat's luck
        (else None), in play order; the records as JSON lines
        (empty without records, or when ``on_record`` takes each record's line as its game ends: a match played
        in this process writes its records file game by game). ``on_game(1)`` is called as each game ends (the
        progress bar)."""
        games, records = [], []
        for returns, seating, record in self._games(block):
            luck = self.meter.luck(record) if self.meter is not None else None
            games.append((list(returns), seating, record.get("bot_stats"), luck))
            if self.records:
                line = json.dumps(record) + "\n"
                if on_record is not None:
                    on_record(line)
                else:
                    records.append(line)
            if on_game is not None:
                on_game(1)
        return games, "".join(records)

    def close(self) -> None:
        """Stop the programs a ``v2`` player keeps running over deals."""
        if self.dealer is not None:
            self.dealer.close()

    def _games(self, block: MatchBlock):
        """Each game of the block's deals in play order: its returns, seating (the entry at each seat), record."""
        table = self.plan.tables[0]
        deals = [Deal(block.first_deal + i, seed, table) for i, seed in enumerate(block.deal_seeds)]
        if self.dealer is not None:
            for deal in deals:
                for played in self.dealer.play_deal(deal):
                    yield played.result.returns, played.entries, played.result.record
            return
        bots = [load_bot(spec, self.game, self.config, seed=bot_seed)
                for spec, bot_seed in zip(self.specs, block.bot_seeds, strict=True)]
        for deal in deals:
            for seating in deal.seatings():
                returns, record = play_game(self.env, [bots[entry] for entry in seating], deal.seed,
                                            [self.labels[entry] for entry in seating])
                yield returns, seating, record
        for bot in bots:
            as_bot(bot).close()


_process_player: _BlockPlayer | None = None


def _play_block_here(arguments: tuple) -> tuple[list, str]:
    """A Ray task's block: the player is built once per process (and kept for the next task of the match)."""
    global _process_player
    *match, block = arguments
    if _process_player is None or _process_player.key != _BlockPlayer(*match, build=False).key:
        _process_player = _BlockPlayer(*match)
    return _process_player.play(block)


def play_match(
    game: Game | str,
    bot_specs: Sequence[str],
    games: int,
    seed: int = 0,
    config: Any = None,
    progress: bool = False,
    records_path: str | Path | None = None,
    *,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    block_deals: int = BLOCK_DEALS,
    seeding: str = DEFAULT_SEEDING,
    luck: str | None = None,
    chance_samples: int = 4,
    sequential: bool = False,
    alpha: float = 0.05,
    resume: bool = False,
    idle: Callable[[int, int, bool], None] | None = None,
) -> MatchResult:
    """Play at least ``games`` games (whole deals: ``ceil(games / seats)`` deals x ``seats`` rotations).

    ``bot_specs`` holds one spec per seat. Each finished game's record is appended to ``records_path``
    (JSON lines; a last line left cut off by a kill is removed first, envs/records.py ``end_torn_tail``) in
    play order: as the game ends where the match plays in this process, a block of deals at
    a time where blocks come back from workers or Ray tasks. Deals are played in blocks of ``block_deals``
    (:data:`BLOCK_DEALS`; eval/deals.py ``DealPlan.blocks``), in this process (``workers=1``), in ``workers``
    local processes, or as Ray tasks (``backend="ray"``, on ``address``'s cluster or an embedded instance;
    ``workers`` is then unused): the same seed and block size give the same games, results and records
    everywhere. Smaller blocks let a slow match of a few deals use every worker (``block_deals=1``: each
    deal a job of its own, its records written as it ends).

    ``seeding`` (eval/deals.py): ``"v2"`` (the default), the one scheme of every host (bots built per deal,
    each game seeded on its own; the tournament's games of the same seed, and the same for every block size),
    or ``"v1"``, deprecated: the seeds of the match figures published before 2026-12-05 (bots built per block).

    ``luck``: a bot spec with a value head (``zoo:ministeel``) whose estimates measure each game's luck at its
    chance events, from ``chance_samples`` draws of each (eval/luck.py); each row then has ``corrected`` and
    ``corrected_ci`` beside its plain score. ``sequential``: stop at the first deal where an entry's confidence
    sequence at level ``alpha`` (over the luck-corrected scores with ``luck``) excludes the fair share
    (eval/stats.py ``sequential_separation``); ``games`` is then the most played, the rest of the block that
    decided is played but not counted (its records are written).

    ``resume``: continue a match stopped part way into ``records_path``. The deals of this match (its game,
    options, bots, seed and seeding) that the file holds at every seating are counted from their records and not
    played again (:func:`recorded_deals`); the others are played and appended, and the result counts them all
    (``resumed`` says how many came from the file). Under ``v2`` the games are those of a match never stopped;
    under ``v1`` the deals are, but bots that draw random numbers draw others (they are built per block).

    ``idle``: called before play as ``idle(blocks, deals_left, resumed)`` where ``workers`` asks for more local
    processes than there are blocks of deals left to play (``resumed``: some deals came from the records), since
    one process plays a block and the rest would sit idle; the match command says so on stderr.
    """
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    seats = game.rules.num_seats(config)
    if len(bot_specs) != seats:
        raise ValueError(f"{game.name} with this config seats {seats} players; got {len(bot_specs)} bot specs")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    check_backend(backend)
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 8 * (os.cpu_count() or 1):
        raise ValueError(f"workers={workers!r} must be a whole number from 1 to {8 * (os.cpu_count() or 1)} "
                         "(8 per CPU core)")
    if address is not None and backend != "ray":
        raise ValueError("address names a Ray cluster: it needs backend='ray'")
    if isinstance(block_deals, bool) or not isinstance(block_deals, int) or not 1 <= block_deals <= MAX_BLOCK_DEALS:
        raise ValueError(f"block_deals={block_deals!r} must be a whole number from 1 to {MAX_BLOCK_DEALS:,} "
                         f"(default {BLOCK_DEALS})")
    if isinstance(alpha, bool) or not isinstance(alpha, float | int) or not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha={alpha!r} must lie strictly between 0 and 0.5")
    if resume and not records_path:
        raise ValueError("resume continues a match from its records: it needs the records file (--records FILE)")
    if resume and (luck is not None or sequential):
        raise ValueError("resume counts the recorded deals as they were played: it cannot go with "
                         + ("variance reduction (the recorded games' luck was not kept)" if luck is not None
                            else "sequential (its stopping rule reads the deals in play order)"))
    deals = math.ceil(games / seats)
    plan = DealPlan(seed, seats, deals, check_seeding(seeding))
    measured = None
    if luck is not None:
        from .luck import luck_meter

        luck_meter(luck, game, config, chance_samples)  # a bot without a value head fails here, once
        measured = (luck, chance_samples)
    labels = entry_labels(list(bot_specs))
    plain_config = config_to_dict(config)
    if records_path:
        end_torn_tail(records_path)  # a record cut off by a kill would otherwise run into the next one
    if records_path and not resume and (held := games_of_match(records_path, game, plain_config, labels, plan)):
        # Played again, these deals would be in the file twice, which no tally counts (a deal is one deal).
        raise ValueError(f"{records_path} already holds {held} game(s) of this match (the same game, options, "
                         "bots, seed and seeding): --resume continues it; another records file keeps both")
    done = recorded_deals(records_path, game, plain_config, labels, plan) if resume else {}
    blocks = unplayed_blocks(plan, block_deals, done)
    if idle is not None and backend == "local" and 0 < len(blocks) < workers:
        idle(len(blocks), deals - len(done), bool(done))
    if backend == "ray" or (workers > 1 and len(blocks) > 1):
        for spec in bot_specs:  # fail here, on a typo, rather than in a worker
            as_bot(load_bot(spec, game, config, seed=0)).close()
    rows = [BotRow(label) for label in labels]
    recorded = sorted(done, reverse=True)  # counted in deal order among the played ones, as if never stopped
    arguments = [(game.env_name, plain_config, list(bot_specs), records_path is not None, plan, measured, block)
                 for block in blocks]
    records_file = open(records_path, "a") if records_path else None  # noqa: SIM115 - closed below
    bar = progress_bar(progress and bool(blocks), (deals - len(done)) * seats, f"{game.name}: {' vs '.join(labels)}")
    try:
        advance = bar.update if bar is not None else None
        files = None
        if backend == "ray":  # the bot and option files travel with the tasks (eval/shipping.py)
            from .luck import luck_bots
            from .shipping import gather

            files = gather(game, [*bot_specs, *(luck_bots(luck) if luck else [])], plain_config)
        def write_record(line: str) -> None:
            records_file.write(line)  # type: ignore[union-attr]
            records_file.flush()  # a long match killed keeps every game it finished

        on_record = write_record if records_file is not None else None
        decided = None
        # The blocks' results first: zip then runs the generator to its end (its finally closes the players).
        for (played, records), block in zip(_played_blocks(arguments, backend, workers, address, advance, files,
                                                           on_record) if arguments else (), blocks, strict=True):
            if records_file is not None:
                records_file.write(records)
                records_file.flush()
            for start in range(0, len(played), seats):  # a block holds whole deals, seatings in order
                while recorded and recorded[-1] < block.first_deal + start // seats:
                    add_deal(rows, done[recorded.pop()])
                add_deal(rows, played[start:start + seats])
                if sequential and (decided := sequential_separation(
                        [row.deal_values() for row in rows], 1.0 / seats, alpha, planned=deals)):
                    break
            if decided:
                break
    finally:
        if bar is not None:
            bar.close()
        if records_file is not None:
            records_file.close()
    while recorded:
        add_deal(rows, done[recorded.pop()])
    finish_rows(rows)
    counted = len(rows[0].per_deal_scores)
    verdict = None
    if sequential:
        verdict = {"alpha": alpha, "planned": deals, "decided_at": counted if decided else None,
                   "separated": [[labels[entry], side] for entry, side in decided or []]}
    return MatchResult(game.name, counted, counted * seats, seats, seed, rows, pooled_rows(list(bot_specs), rows),
                       seeding, luck, verdict, len(done))


def unplayed_blocks(plan: DealPlan, block_deals: int, done: dict[int, Any]) -> list[MatchBlock]:
    """The blocks a match plays: ``plan``'s blocks of ``block_deals`` deals less the deals in ``done`` (a
    resumed match's :func:`recorded_deals`), each run of unplayed deals a block, numbered in order."""
    return [dataclasses.replace(piece, index=index) for index, piece in
            enumerate(piece for block in plan.blocks(block_deals) for piece in _unplayed(block, done))]


def _unplayed(block: MatchBlock, done: dict[int, Any]) -> Iterator[MatchBlock]:
    """``block`` less the deals in ``done``: its runs of unplayed deals, each a block (numbered by the caller)."""
    run: list[int] = []
    for offset in range(len(block.deal_seeds) + 1):
        if offset < len(block.deal_seeds) and block.first_deal + offset not in done:
            run.append(offset)
            continue
        if run:
            yield MatchBlock(block.index, block.first_deal + run[0],
                             block.deal_seeds[run[0]:run[-1] + 1], block.bot_seeds)
            run = []


def recorded_deals(records_path: str | Path, game: Game, config: dict[str, Any], labels: Sequence[str],
                   plan: DealPlan) -> dict[int, list[tuple]]:
    """The deals of ``plan`` that ``records_path`` holds at every seating, by deal index, each as
    :func:`~.tally.add_deal`'s games in seating order: the records of this match's game, options and entries
    (their labels at the seats of a seating) whose seed is the deal's. Other records (another match's, a deal
    cut short) are passed over; a seating recorded twice (a deal cut short, played again on resume) counts
    once. A missing or empty file holds none. A record of this match that is no finished game is a ValueError
    naming its line."""
    seatings = plan.deal(0).seatings()
    found: dict[int, dict[int, tuple]] = {}
    for line, deal, rotation, record in _match_records(records_path, game, config, labels, plan):
        returns, stats = _finished_game(f"{records_path}:{line}", record, len(labels))
        found.setdefault(deal, {}).setdefault(rotation, (list(returns), seatings[rotation], stats))
    return {deal: [games[rotation] for rotation in range(len(seatings))]
            for deal, games in found.items() if len(games) == len(seatings)}


def games_of_match(records_path: str | Path, game: Game, config: dict[str, Any], labels: Sequence[str],
                   plan: DealPlan) -> int:
    """How many records in ``records_path`` are games of this match (its game, options, entries at a seating and
    one of ``plan``'s deals): 0 for a missing or empty file."""
    return sum(1 for _ in _match_records(records_path, game, config, labels, plan))


def _match_records(records_path: str | Path, game: Game, config: dict[str, Any], labels: Sequence[str],
                   plan: DealPlan) -> Iterator[tuple[int, int, int, dict]]:
    """``(line, deal index, rotation, record)`` for each record in ``records_path`` of this match: its game,
    options and entries (their labels at the seats of one of the plan's seatings), and one of its deals' seeds.
    A missing or empty file holds none (a match killed before its first game ended leaves its file empty)."""
    from ..envs.records import read_records

    if not Path(records_path).exists() or Path(records_path).stat().st_size == 0:
        return
    index_of = {plan.deal_seed(deal): deal for deal in range(plan.deals)}
    rotation_of = {tuple(labels[entry] for entry in seating): rotation
                   for rotation, seating in enumerate(plan.deal(0).seatings())}
    for line, record in read_records(records_path, left_out=[]):
        if not (isinstance(record, dict) and record.get("game") == game.name and record.get("env") == game.env_name
                and record.get("config") == config and record.get("seed") in index_of):
            continue
        seats = record.get("seats")
        rotation = rotation_of.get(tuple(seats)) if isinstance(seats, list) else None
        if rotation is not None:
            yield line, index_of[record["seed"]], rotation, record


@dataclass
class RecordedMatch:
    """A match's result counted from its game records (:func:`tally_records`)."""

    result: MatchResult
    config: dict[str, Any]
    """The game options every record was played with."""
    left_out: list[str] = field(default_factory=list)
    """One line per unfinished deal left out (fewer games than seatings: a match stopped part way)."""
    deal_seeds: list[int] = field(default_factory=list)
    """The seed of each counted deal, in the order of the rows' ``per_deal_scores``: what pairs the deals of two
    tables (bench/paired_records.py)."""


def tally_records(records: Iterable[tuple[str, Any]]) -> RecordedMatch:
    """The result table of recorded match games, ``(where, record)`` pairs in the order a match wrote them
    (``where`` names the file and line in errors): records of one game and options, from one match or from
    several (matches of other seeds, between the same bots, pool: a match stopped for time and the next one of
    another seed count together). Games are grouped into deals by their deal seed, one game per seating (each
    entry, named by its seat label, at every seat once); a run of a deal's games cut short, the end of a match
    that was stopped, is left out and said so (only whole deals are counted, as :func:`play_match` counts them).
    A deal begun again (its first seating's seats once more: a stopped match rerun into its file) starts a new
    run. Records carry no rotation number: rerun with the bots in another order, a match stopped in a deal's
    first seating pairs that game with the rerun's first (the same deal, each bot at every seat once: counted)
    and leaves out the rerun's second. Raises ValueError naming the record for a record that is no finished
    match game (no deal seed, no returns), one of another game or options, other bots, a deal whose seatings are
    not one per seat, or a deal counted twice (the same file given twice, or a match rerun with the same seed:
    its games are not new deals). The result's ``seed`` is None: the deals' seeds are in the records, the
    matches' are not. Records are read one at a time; a deal's summaries are all that is held."""
    first: tuple[str, str, str] | None = None  # the game, its env and its options, as the first record has them
    config: dict[str, Any] = {}
    entries: list[str] = []
    rows: list[BotRow] = []
    deal_at: dict[int, str] = {}  # deal seed -> where its counted games begin
    left_out: list[str] = []
    run: list[tuple[str, list[str], list[float], Any]] = []  # the current deal's games: where, seats, returns, stats
    run_seed: Any = None  # their deal seed
    cut: list[tuple[str, list[str]]] = []  # the games of unfinished deals: where, seats

    def check_bots(where: str, labels: list[str]) -> None:
        if sorted(labels) != sorted(entries):
            raise ValueError(f"{where}: the seats hold {labels}, the other deals' entries are {entries}: "
                             "records of matches between other bots do not make one table")

    def close_run() -> None:
        if not run:
            return
        seed, seats = run_seed, len(run[0][1])
        if seed in deal_at:
            raise ValueError(f"{run[0][0]}: deal seed {seed} was counted already (from {deal_at[seed]}): a deal "
                             "played twice (a file given twice, or a match rerun with the same --seed) is not two "
                             "deals; count each once (matches of different --seed pool)")
        if len(run) < seats:  # checked against the entries at the end: they may not be known yet
            cut.extend((where, labels) for where, labels, _, _ in run)
            left_out.append(f"{run[0][0]}: {len(run)} of the {seats} games of deal seed {seed} (an unfinished deal)")
            run.clear()
            return
        if not entries:
            entries.extend(run[0][1])
            rows.extend(BotRow(label) for label in entries)
        for where, labels, _, _ in run:
            if sorted(labels) != sorted(entries):
                raise ValueError(f"{where}: the seats hold {labels}, the other deals' entries are {entries}: "
                                 "records of matches between other bots do not make one table")
        for entry in entries:
            taken: set[int] = set()
            for where, labels, _, _ in run:
                if labels.index(entry) in taken:
                    raise ValueError(f"{where}: {entry!r} sits at seat {labels.index(entry)} again in deal seed "
                                     f"{seed}: a match plays each deal once per seating, every entry at every seat")
                taken.add(labels.index(entry))
        add_deal(rows, [(returns, [entries.index(label) for label in labels], stats)
                        for _, labels, returns, stats in run])
        deal_at[seed] = run[0][0]
        run.clear()

    for where, record in records:
        if not isinstance(record, dict):
            raise ValueError(f"{where}: a record is a JSON object")
        key = (record.get("game"), record.get("env"), json.dumps(record.get("config"), sort_keys=True))
        if first is None:
            first, config = key, record.get("config") or {}
        elif key != first:
            raise ValueError(f"{where}: {_difference(record, first[:2], config)}: records of one game with one set "
                             "of options make one table")
        seed, labels = record.get("seed"), record.get("seats")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"{where}: the record has no deal seed (seed={seed!r}): only games that a match "
                             "played (deal by deal, one game per seating) make a table")
        if not (isinstance(labels, list) and labels and all(isinstance(label, str) for label in labels)
                and len(set(labels)) == len(labels)):
            raise ValueError(f"{where}: 'seats' must name each seat's bot once, got {labels!r}")
        returns, stats = _finished_game(where, record, len(labels))
        if run and (seed != run_seed or len(labels) != len(run[0][1]) or labels == run[0][1]):
            close_run()  # another deal, or this one begun again (a stopped match rerun into the same file)
        run_seed = seed
        run.append((where, labels, returns, stats))
        if len(run) == len(labels):
            close_run()
    close_run()
    for where, labels in cut:
        if entries:
            check_bots(where, labels)
    if first is None or not rows:
        raise ValueError("no whole deal in the records: a table counts deals that were played at every seating"
                         + (f" ({'; '.join(left_out)})" if left_out else ""))
    finish_rows(rows)
    deals = len(rows[0].per_deal_scores)
    seats = len(entries)
    result = MatchResult(first[0], deals, deals * seats, seats, None, rows, pooled_rows(_specs_of(entries), rows),
                         None)
    return RecordedMatch(result, config, left_out, list(deal_at))


def _finished_game(where: str, record: dict[str, Any], seats: int) -> tuple[list, Any]:
    """A recorded match game's returns and bot stats, or a ValueError naming ``where`` for a record that is no
    finished game of ``seats`` seats."""
    returns, stats = record.get("returns"), record.get("bot_stats")
    if not (isinstance(returns, list) and len(returns) == seats
            and all(isinstance(value, int | float) and not isinstance(value, bool) for value in returns)):
        raise ValueError(f"{where}: an unfinished game (returns={returns!r:.80}): a table counts finished games")
    if stats is not None and not (isinstance(stats, list) and len(stats) == seats
                                  and all(item is None or isinstance(item, dict) for item in stats)):
        raise ValueError(f"{where}: 'bot_stats' must be a list of each seat's stats (an object or null), "
                         f"got {stats!r:.80}")
    return returns, stats


def _difference(record: dict[str, Any], game_env: tuple[str, str], config: dict[str, Any]) -> str:
    """What sets ``record`` apart from the first record (its game and env, its options)."""
    for name, theirs in zip(("game", "env"), game_env, strict=True):
        if record.get(name) != theirs:
            return f"{name} {record.get(name)!r}, the first record's {theirs!r}"
    mine = record.get("config") if isinstance(record.get("config"), dict) else {}
    option = next((key for key in sorted({*mine, *config}) if mine.get(key) != config.get(key)), None)
    if option is None:
        return f"options {record.get('config')!r}, the first record's {config!r}"
    return f"option {option}={mine.get(option)!r}, the first record's {config.get(option)!r}"


def _specs_of(labels: Sequence[str]) -> list[str]:
    """The bot specs behind entry labels, as :func:`entry_labels` numbered them (``mcts #2``: the second
    ``mcts``), so that alike entries pool; labels that no specs number that way are taken as they are."""
    specs = []
    for label in labels:
        base, _, number = label.rpartition(" #")
        specs.append(base if base and number.isdigit() else label)
    return specs if entry_labels(specs) == list(labels) else list(labels)


def _played_blocks(arguments: list[tuple], backend: str, workers: int, address: str | None,
                   advance: Callable[[int], Any] | None, files: Any = None,
                   on_record: Callable[[str], Any] | None = None):
    """Each block's games and records, in block order, played where asked; ``advance(n)`` counts games
    as they end here, or a block's games as the block comes back from a worker. Played here, each record
    goes to ``on_record`` as its game ends (the block's records then come back empty)."""
    if backend == "ray":
        # Blocks finish in any order; they are handed on in order (a block waits for those before it).
        waiting: dict[int, tuple] = {}
        next_block = 0
        for (*_, block), result in map_tasks(_play_block_here, arguments, address=address, batch=1,
                                                    files=files):
            waiting[block.index] = result
            if advance is not None:
                advance(len(result[0]))
            while next_block in waiting:
                yield waiting.pop(next_block)
                next_block += 1
        return
    if workers == 1 or len(arguments) == 1:
        player = _BlockPlayer(*arguments[0][:-1])
        try:
            for *_, block in arguments:
                yield player.play(block, advance, on_record)
        finally:
            player.close()
        return
    setup = functools.partial(_block_player, arguments[0][:-1])
    blocks = [block for *_, block in arguments]
    with WorkerPool(min(workers, len(arguments)), _play_block, setup=setup, teardown=_BlockPlayer.close) as pool:
        for _, result in pool.imap(blocks, ordered=True):
            if advance is not None:
                advance(len(result[0]))
            yield result


def _block_player(match: tuple, index: int) -> _BlockPlayer:
    """A worker's player of the match's blocks (eval/pool.py ``setup``)."""
    return _BlockPlayer(*match)


def _play_block(player: _BlockPlayer, block: MatchBlock) -> tuple[list, str]:
    return player.play(block)


def measure(onnx_path: str | os.PathLike, games: int, seed: int = 0, progress: bool = False,
            seeding: str = DEFAULT_SEEDING, **where: Any) -> dict[str, Any]:
    """An exported bot's strength against ``random`` and ``heuristic`` in every other seat, written into its
    manifest (``tavernzoo export --measure``).

    Played with the options the bot was trained with, seats rotated (``play_match``); each entry holds the
    bot's win share (``score``) with its 95% interval over deals, and its wins, draws and losses; it says its
    ``results_version`` and ``seeding`` (``play_match``'s; eval/deals.py: a manifest without them was measured
    with ``v1``).
    ``where``: ``play_match``'s ``backend``, ``workers`` and ``address`` (the same results wherever they are
    played).
    """
    from ..agents.export import manifest_path
    from ..envs.records import write_json_atomic

    path = manifest_path(onnx_path)
    manifest = json.loads(path.read_text())
    game = get_game(manifest["env"])
    config = game.make_config(manifest["game_config"])
    seats = game.rules.num_seats(config)
    strength: dict[str, Any] = {"games": games, "seed": seed, "seats": seats, **results_stamp(seeding)}
    for reference in ("random", "heuristic"):
        result = play_match(game, [str(onnx_path)] + [reference] * (seats - 1), games, seed=seed, config=config,
                            progress=progress, seeding=seeding, **where)
        row = result.rows[0]
        strength[reference] = {"games": row.games, "wins": row.wins, "draws": row.draws, "losses": row.losses,
                               "score": round(row.score, 4), "score_ci": [round(v, 4) for v in row.score_ci],
                               "fair_share": round(1 / seats, 4)}
    manifest["strength"] = strength
    write_json_atomic(path, manifest)
    return strength
