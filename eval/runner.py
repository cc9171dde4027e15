"""Playing a tournament's deals on this machine: in this process or in worker processes.

Each deal is played by a :class:`DealPlayer` (one env, bots built afresh per deal, external programs
kept running); :func:`run_here` and :func:`run_workers` are the local backends that
:func:`tavernzoo.eval.tournament.run_tournament` chooses between (:mod:`tavernzoo.eval.ray_backend` is
the other, with the same contract: play the tasks, write every game's line, hand each game's summary to
``record`` as its deal ends, stop handing out deals once the SPRT decides).

Who writes what
    :func:`run_here` appends every game to ``games.jsonl`` itself. With :func:`run_workers` each worker
    appends its games to its own part (``games/part-K.jsonl``, see :mod:`.results`) and sends the parent
    only the games' summaries (the line without its record, a few hundred bytes), one message per batch
    of deals; the parent keeps the running tally and never reads the games back. A worker writes a
    batch's lines before it reports them, so the tally never counts a game that is not on disk.

The workers are the one local pool's (eval/pool.py): they start by ``fork`` where that is safe, and end
when the tournament process dies, even by ``kill -9``, stopping their external programs.

Forfeits
    A bot that raises (an external program that crashes, hangs past ``--move-timeout`` or answers out
    of protocol: :class:`~tavernzoo.agents.external.BotFailure`) or returns an action its mask forbids
    forfeits the game at once: it scores 0 and takes the last place (a loss); every other seat shares
    the win (score ``1/(n-1)`` each, first place together: a win in a duel, a shared top otherwise).
    The reason is logged in the game's line and in ``results.json``; an external program is restarted
    before its next game.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..agents.base import as_bot
from ..envs.make import make_env
from .deals import Deal, DealPlan, entry_labels
from .game_files import GamesFile, encode_lines, game_summary
from .guard import Forfeit, Guard
from .pool import WorkerPool
from .results import Tally
from .schedule import Settings
from .table import Table, TableResult, takes_game_seed
from .tally import score_game

__all__ = ["DealPlayer", "Forfeit", "GamesFile", "Guard", "batch_size", "encode_lines", "play_batch", "run_here",
           "run_workers"]

Task = tuple[int, tuple[int, ...], list[int]]
"""One deal to play: (deal, table, rotations already played)."""

Record = Callable[[list[dict]], None]
"""Takes the summaries of finished games (the tournament's tally, log and progress bar)."""

MAX_BATCH = 16
"""The most deals in one task handed to a worker: enough to make the messages rare, few enough that the
workers finish together and that little is played past an SPRT decision."""

# --- playing deals (in a worker process, or in this one) ----------------------------------------------


@dataclass
class PlayedGame:
    """One game of a deal as a :class:`DealPlayer` played it: the entry and label at each seat, the result."""

    deal: Deal
    rotation: int
    entries: list[int]
    labels: list[str]
    result: TableResult


class DealPlayer:
    """Plays deals for one process: one env, fresh bots per deal, external programs kept running.

    The deals and every seed come from ``plan`` (eval/deals.py, ``v2``). ``bot_specs[entry]`` is each entry's
    spec, ``labels`` name the entries in the records. With ``forfeits`` (a tournament) each game is played on
    the game's raw AEC env, without PettingZoo's wrapper stack: every action reaches it through a
    :class:`Guard`, which already refuses what the wrappers would (an action that is no integer, out of range
    or masked forfeits the game before the env sees it), so the games and records are the same. Without (a
    match), on the checked env, a bot's failure raises.
    """

    def __init__(self, game: Any, config: Any, bot_specs: Sequence[str], plan: DealPlan,
                 labels: Sequence[str] | None = None, *, forfeits: bool = False, move_timeout: float | None = None):
        from ..agents import BotSpec, builtin_bots

        self.game, self.config, self.plan, self.forfeits = game, config, plan, forfeits
        self.labels = list(labels) if labels is not None else entry_labels(list(bot_specs))
        self.move_timeout = move_timeout
        self.env = make_env(self.game, self.config, raw=forfeits)
        self._external: dict[int, Any] = {}
        self._builtin = builtin_bots(self.game)
        self._specs = [BotSpec.parse(spec) for spec in bot_specs]
        self.meter: Any = None
        """A tournament's luck meter (eval/luck.py ``LuckMeter``) with ``--variance-reduction``, else None."""

    @classmethod
    def for_tournament(cls, settings: Settings) -> DealPlayer:
        from ..envs import get_game

        game = get_game(settings.game)
        player = cls(game, game.make_config(settings.config), settings.bots, settings.plan(), settings.labels,
                     forfeits=True, move_timeout=settings.move_timeout)
        if settings.luck is not None:  # each game's luck, measured where it is played (eval/luck.py)
            from .luck import luck_meter

            player.meter = luck_meter(settings.luck, game, player.config, settings.chance_samples,
                                           dict(zip(settings.labels, settings.bots, strict=True)))
        return player

    def _bot(self, entry: int, deal: int) -> Any:
        from ..agents import load_bot

        spec = self._specs[entry]
        seed = self.plan.bot_seed(deal, entry)
        if spec.kind == "name" and spec.mode is None and spec.name in self._builtin:
            # load_bot's answer, without re-validating the config every deal
            return self._builtin[spec.name](self.config, seed)
        if spec.traits.program:
            # A program is started once per process and reseeded every game (begin_game).
            if entry not in self._external:
                bot = load_bot(spec, self.game, self.config, seed=0)
                if self.move_timeout is not None:
                    bot.move_timeout = self.move_timeout
                self._external[entry] = bot
            return self._external[entry]
        return load_bot(spec, self.game, self.config, seed=seed)

    def play_deal(self, deal: Deal, skip: frozenset[int] = frozenset()) -> Iterator[PlayedGame]:
        """Every rotation of ``deal``, in order; rotations in ``skip`` are played (the bots' state carries over
        within a deal) but not yielded. The deal's bots (but a program's) are closed after it."""
        bots = {entry: self._bot(entry, deal.index) for entry in deal.table}
        try:
            for rotation, entries in enumerate(deal.seatings()):
                labels = [self.labels[entry] for entry in entries]
                # Each bot's begin_game gets its per-game seed (a program reseeds its new_game seeds with it);
                # one that ignores it gets None (takes_game_seed: deriving the seed is not free).
                bot_seeds = [self.plan.game_seed(deal.index, entry, rotation) if takes_game_seed(bots[entry])
                             else None for entry in entries]
                result = Table(self.env, [bots[entry] for entry in entries], deal.seed, labels, bot_seeds,
                               forfeits=self.forfeits).play()
                if rotation not in skip:
                    yield PlayedGame(deal, rotation, entries, labels, result)
        finally:
            for entry, bot in bots.items():
                if entry not in self._external:
                    as_bot(bot).close()

    def close(self) -> None:
        for bot in self._external.values():
            bot.close()
        self._external.clear()


def game_line(played: PlayedGame) -> dict:
    """A tournament's line of a game: deal, rotation, seed, entries, bots, returns, scores, places, forfeit and
    the record (games.jsonl)."""
    result, entries, labels = played.result, played.entries, played.labels
    record, returns, lost = result.record, result.returns, result.forfeit
    forfeit = None
    if lost is not None:
        forfeit = {"seat": lost.seat, "entry": entries[lost.seat], "bot": labels[lost.seat],
                   "kind": lost.kind, "reason": lost.reason}
    score = score_game(returns, len(entries), None if lost is None else lost.seat)
    line = {"deal": played.deal.index, "rotation": played.rotation, "seed": played.deal.seed, "entries": entries,
            "bots": labels, "returns": returns, "scores": score.scores, "places": score.places, "forfeit": forfeit,
            "record": record}
    if "bot_stats" in record:  # the llm: bots' counts, forfeits too
        line["bot_stats"] = record["bot_stats"]
    return line


def deal_lines(player: DealPlayer, deal: int, skip: Sequence[int] = ()) -> list[dict]:
    """The tournament lines of ``deal``'s rotations not in ``skip``; with the player's luck meter, each line has
    each seat's ``luck`` (eval/luck.py; a forfeited game's up to the forfeit)."""
    lines = [game_line(played) for played in player.play_deal(player.plan.deal(deal), frozenset(skip))]
    if player.meter is not None:
        for line in lines:
            line["luck"] = player.meter.luck(line["record"])
    return lines


def play_batch(player: DealPlayer, batch: Sequence[Task], games: GamesFile) -> list[dict]:
    """Play a batch of deals, append their lines to ``games`` deal by deal; their summaries."""
    summaries = []
    for deal, _, skip in batch:
        lines = deal_lines(player, deal, skip)
        games.write(lines)
        summaries += [game_summary(line) for line in lines]
    return summaries


def _worker_setup(settings: dict[str, Any], part_paths: Sequence[str], index: int) -> tuple[DealPlayer, GamesFile]:
    """A worker's player and its own part of the game files (eval/pool.py ``setup``)."""
    return DealPlayer.for_tournament(Settings(**settings)), GamesFile(part_paths[index])


def _worker_batch(state: tuple[DealPlayer, GamesFile], batch: Sequence[Task]) -> list[dict]:
    player, games = state
    return play_batch(player, batch, games)


def _worker_teardown(state: tuple[DealPlayer, GamesFile]) -> None:
    player, games = state
    player.close()  # its external programs stop
    games.close()


# --- the local backends ---------------------------------------------------------------------------------


def run_here(settings: Settings, tasks: Iterator[Task], games_path: str | Path, record: Record,
             tally: Tally) -> None:
    """The local backend without workers: plays ``tasks`` in this process, in order, appending each deal's
    games to ``games_path``, until the SPRT decides."""
    player = DealPlayer.for_tournament(settings)
    games = GamesFile(games_path)
    try:
        for task in tasks:
            record(play_batch(player, [task], games))
            if tally.decided_at is not None:
                break
    finally:
        games.close()
        player.close()


def batch_size(deals: int, workers: int) -> int:
    """Deals per task: about sixteen tasks per worker, at most :data:`MAX_BATCH` deals each."""
    return max(1, min(MAX_BATCH, deals // (16 * workers)))


def run_workers(settings: Settings, tasks: Iterator[Task], part_paths: Sequence[str | Path], record: Record,
                tally: Tally, deals: int) -> None:
    """The local backend with one worker process per part in ``part_paths`` (eval/pool.py), each handed its next
    batch of deals as it finishes one; the workers write the games, this process tallies them. Once the SPRT
    decides, no more batches are handed out."""
    workers = len(part_paths)
    size = batch_size(deals, workers)
    batches = iter(lambda: list(itertools.islice(tasks, size)), [])
    setup = functools.partial(_worker_setup, asdict(settings), [str(path) for path in part_paths])
    try:
        with WorkerPool(workers, _worker_batch, setup=setup, teardown=_worker_teardown) as pool:
            for _, summaries in pool.imap(batches):
                record(summaries)
                if tally.decided_at is not None:
                    break
    except RuntimeError as error:
        raise RuntimeError(f"a tournament worker failed; finish the run with --resume:\n{error}") from None
