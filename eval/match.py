"""The one match loop: bots play a game through its PettingZoo env, deals replayed with seats rotated.

A *deal* is one seed. Every deal is played once per seat rotation (two games for a duel, the seats
swapped; n games for n seats), so each bot meets the same dice from every seat and luck largely cancels.
Scores are win shares (a win 1, a shared top place 1/k, otherwise 0) and their interval is computed over
deals, the independent unit.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import load_bot
from ..agents.base import as_bot
from ..envs import Game, get_game
from ..envs.core import config_to_dict
from ..envs.make import make_env
from .backends import BACKENDS, map_tasks, progress_bar, start_method
from .loop import add_stats, play_game
from .seating import entry_labels, score_of
from .stats import mean_interval

# The game loop, env construction and seats live in leaf modules; their names stay importable from here.
__all__ = ["BACKENDS", "BLOCK_DEALS", "BotRow", "MatchBlock", "MatchResult", "entry_labels", "make_env",
           "match_blocks", "play_game", "play_match", "score_of"]


@dataclass
class BotRow:
    """One entry of the match (an entry is a bot spec at a position in ``bot_specs``)."""

    bot: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    total_return: float = 0.0
    score: float = 0.0
    score_ci: tuple[float, float] = (0.0, 1.0)
    per_deal_scores: list[float] = field(default_factory=list, repr=False)
    bot_stats: dict[str, Any] = field(default_factory=dict)
    """The bot's ``game_stats`` summed over its games (the ``llm:`` bot's; empty for other bots)."""

    @property
    def mean_return(self) -> float:
        return self.total_return / self.games if self.games else math.nan

    def add_game(self, game_return: float, share: float) -> None:
        """Count one game: this entry's return and its share of the win (1 won, 0 lost, between: drawn)."""
        self.games += 1
        self.total_return += game_return
        self.wins += share == 1.0
        self.draws += 0.0 < share < 1.0
        self.losses += share == 0.0


@dataclass
class MatchResult:
    game: str
    deals: int
    games: int
    seats: int
    seed: int
    rows: list[BotRow]
    pooled: list[BotRow] = field(default_factory=list)
    """One row per bot spec entered more than once (a team of alike bots, e.g. the A pair of A B A B): its
    entries' games together, its score the team's share of the wins (fair share: entries / seats), the
    interval over deals as for a single entry."""


def pooled_rows(bot_specs: Sequence[str], rows: Sequence[BotRow]) -> list[BotRow]:
    """The :attr:`MatchResult.pooled` rows of ``rows`` (one per entry, in ``bot_specs`` order)."""
    pooled = []
    for spec in dict.fromkeys(bot_specs):
        entries = [row for entry, row in zip(bot_specs, rows, strict=True) if entry == spec]
        if len(entries) < 2:
            continue
        team = BotRow(f"{spec} x{len(entries)}")
        for row in entries:
            team.games += row.games
            team.wins += row.wins
            team.draws += row.draws
            team.losses += row.losses
            team.total_return += row.total_return
        team.per_deal_scores = [math.fsum(scores) for scores in zip(*(row.per_deal_scores for row in entries),
                                                                      strict=True)]
        mean, low, high = mean_interval(team.per_deal_scores)
        team.score, team.score_ci = mean, (max(0.0, low), min(1.0, high))
        pooled.append(team)
    return pooled


BLOCK_DEALS = 64
"""Deals played by one set of bots: bots are built afresh (and reseeded) every block, so that blocks can be
played anywhere, in any order, with the same games (64 deals of a fast game are a good Ray task)."""

@dataclass(frozen=True)
class MatchBlock:
    """A block of a match's deals: where it starts, the deals' seeds and the bots' seeds."""

    index: int
    first_deal: int
    deal_seeds: tuple[int, ...]
    bot_seeds: tuple[int, ...]


def match_blocks(seed: int, seats: int, deals: int) -> list[MatchBlock]:
    """The match's blocks. Block 0 takes the seeds every match has taken since the first version (the bots'
    seeds, then the deals', from ``random.Random(seed)``), so a match of up to :data:`BLOCK_DEALS` deals is
    the same as before blocks; a later block's bots are seeded from the match seed and the block."""
    seeds = random.Random(seed)
    first_bots = tuple(seeds.randrange(2**63) for _ in range(seats))
    deal_seeds = [seeds.randrange(2**63) for _ in range(deals)]
    blocks = []
    for index, start in enumerate(range(0, deals, BLOCK_DEALS)):
        if index == 0:
            bots = first_bots
        else:
            block_seeds = random.Random(f"tavernzoo-match:{seed}:block:{index}")
            bots = tuple(block_seeds.randrange(2**63) for _ in range(seats))
        blocks.append(MatchBlock(index, start, tuple(deal_seeds[start:start + BLOCK_DEALS]), bots))
    return blocks


class _BlockPlayer:
    """Plays blocks of one match in one process (one env, bots built per block)."""

    def __init__(self, game_name: str, config: dict[str, Any], bot_specs: Sequence[str], records: bool,
                 build: bool = True):
        self.key = (game_name, json.dumps(config, sort_keys=True), tuple(bot_specs), records)
        if not build:
            return
        self.game = get_game(game_name)
        self.config = self.game.make_config(config)
        self.specs, self.records = list(bot_specs), records
        self.labels = entry_labels(self.specs)
        self.env = make_env(self.game, self.config)

    def play(self, block: MatchBlock, on_game: Callable[[int], Any] | None = None,
             on_record: Callable[[str], Any] | None = None,
             ) -> tuple[list[tuple[list[float], list[int], list | None]], str]:
        """Each game's returns, seating (entry at each seat) and bot stats, in play order; the records as JSON lines
        (empty without records, or when ``on_record`` takes each record's line as its game ends: a match played
        in this process writes its records file game by game). ``on_game(1)`` is called as each game ends (the
        progress bar)."""
        seats = len(self.specs)
        bots = [load_bot(spec, self.game, self.config, seed=bot_seed)
                for spec, bot_seed in zip(self.specs, block.bot_seeds, strict=True)]
        games, records = [], []
        for deal_seed in block.deal_seeds:
            for rotation in range(seats):
                # Entry i sits at seat (i + rotation) % seats.
                seating = [(seat - rotation) % seats for seat in range(seats)]
                returns, record = play_game(self.env, [bots[entry] for entry in seating], deal_seed,
                                            [self.labels[entry] for entry in seating])
                games.append((list(returns), seating, record.get("bot_stats")))
                if self.records:
                    line = json.dumps(record) + "\n"
                    if on_record is not None:
                        on_record(line)
                    else:
                        records.append(line)
                if on_game is not None:
                    on_game(1)
        for bot in bots:
            as_bot(bot).close()
        return games, "".join(records)


_process_player: _BlockPlayer | None = None


def _play_block_here(arguments: tuple) -> tuple[list, str]:
    """A worker's block (in a local process or a Ray task): the player is built once per process."""
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
) -> MatchResult:
    """Play at least ``games`` games (whole deals: ``ceil(games / seats)`` deals x ``seats`` rotations).

    ``bot_specs`` holds one spec per seat. Each finished game's record is appended to ``records_path``
    (JSON lines) in play order: as the game ends where the match plays in this process, a block of deals at
    a time where blocks come back from workers or Ray tasks. Deals are played in blocks of
    :data:`BLOCK_DEALS` (:func:`match_blocks`), in this process (``workers=1``), in ``workers`` local
    processes, or as Ray tasks (``backend="ray"``, on ``address``'s cluster or an embedded instance;
    ``workers`` is then unused): the same seed gives the same games, results and records everywhere.
    """
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    seats = game.rules.num_seats(config)
    if len(bot_specs) != seats:
        raise ValueError(f"{game.name} with this config seats {seats} players; got {len(bot_specs)} bot specs")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 8 * (os.cpu_count() or 1):
        raise ValueError(f"workers={workers!r} must be a whole number from 1 to {8 * (os.cpu_count() or 1)} "
                         "(8 per CPU core)")
    if address is not None and backend != "ray":
        raise ValueError("address names a Ray cluster: it needs backend='ray'")
    deals = math.ceil(games / seats)
    blocks = match_blocks(seed, seats, deals)
    if backend == "ray" or (workers > 1 and len(blocks) > 1):
        for spec in bot_specs:  # fail here, on a typo, rather than in a worker
            as_bot(load_bot(spec, game, config, seed=0)).close()
    labels = entry_labels(list(bot_specs))
    rows = [BotRow(label) for label in labels]
    plain_config = config_to_dict(config)
    arguments = [(game.env_name, plain_config, list(bot_specs), records_path is not None, block) for block in blocks]
    records_file = open(records_path, "a") if records_path else None  # noqa: SIM115 - closed below
    bar = progress_bar(progress, deals * seats, f"{game.name}: {' vs '.join(labels)}")
    try:
        advance = bar.update if bar is not None else None
        files = None
        if backend == "ray":  # the bot and option files travel with the tasks (eval/shipping.py)
            from .shipping import gather

            files = gather(game, bot_specs, plain_config)
        def write_record(line: str) -> None:
            records_file.write(line)  # type: ignore[union-attr]
            records_file.flush()  # a long match killed keeps every game it finished

        on_record = write_record if records_file is not None else None
        for played, records in _played_blocks(arguments, backend, workers, address, advance, files, on_record):
            if records_file is not None:
                records_file.write(records)
                records_file.flush()
            for index, (returns, seating, stats) in enumerate(played):
                if index % seats == 0:
                    deal_scores = [0.0] * seats
                for seat, entry in enumerate(seating):
                    share = score_of(returns, seat)
                    rows[entry].add_game(returns[seat], share)
                    if stats is not None:
                        add_stats(rows[entry].bot_stats, stats[seat])
                    deal_scores[entry] += share / seats
                if index % seats == seats - 1:
                    for entry, row in enumerate(rows):
                        row.per_deal_scores.append(deal_scores[entry])
    finally:
        if bar is not None:
            bar.close()
        if records_file is not None:
            records_file.close()
    for row in rows:
        mean, low, high = mean_interval(row.per_deal_scores)
        row.score = mean
        row.score_ci = (max(0.0, low), min(1.0, high))
    return MatchResult(game.name, deals, deals * seats, seats, seed, rows, pooled_rows(list(bot_specs), rows))


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
        for *_, block in arguments:
            yield player.play(block, advance, on_record)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor


    context = multiprocessing.get_context(start_method())
    with ProcessPoolExecutor(min(workers, len(arguments)), mp_context=context) as pool:
        for result in pool.map(_play_block_here, arguments):
            if advance is not None:
                advance(len(result[0]))
            yield result


