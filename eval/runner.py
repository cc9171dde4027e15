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

Workers start by ``fork`` where that is safe (Linux, and this process runs no other thread): they begin
at once with everything imported. Elsewhere they ``spawn``. Workers end when the tournament process
dies, even by ``kill -9``, and stop their external programs.

Forfeits
    A bot that raises (an external program that crashes, hangs past ``--move-timeout`` or answers out
    of protocol: :class:`~tavernzoo.agents.external.BotFailure`) or returns an action its mask forbids
    forfeits the game at once: it scores 0 and takes the last place (a loss); every other seat shares
    the win (score ``1/(n-1)`` each, first place together: a win in a duel, a shared top otherwise).
    The reason is logged in the game's line and in ``results.json``; an external program is restarted
    before its next game.
"""

from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..agents.base import as_bot
from ..envs.make import make_env
from .backends import start_method
from .deals import Deal, DealPlan, entry_labels
from .game_files import GamesFile, encode_lines, game_summary
from .guard import Forfeit, Guard
from .results import Tally
from .schedule import Settings
from .table import Table, TableResult
from .tally import score_game

__all__ = ["DealPlayer", "Forfeit", "GamesFile", "Guard", "batch_size", "encode_lines", "play_batch", "run_here",
           "run_workers", "start_method"]

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

    @classmethod
    def for_tournament(cls, settings: Settings) -> DealPlayer:
        from ..envs import get_game

        game = get_game(settings.game)
        return cls(game, game.make_config(settings.config), settings.bots, settings.plan(), settings.labels,
                   forfeits=True, move_timeout=settings.move_timeout)

    def _bot(self, entry: int, deal: int) -> Any:
        from ..agents import load_bot

        spec = self._specs[entry]
        seed = self.plan.bot_seed(deal, entry)
        if spec.kind == "name" and spec.mode is None and spec.name in self._builtin:
            # load_bot's answer, without re-validating the config every deal
            return self._builtin[spec.name](self.config, seed)
        if spec.kind == "cmd":
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
                # Each bot's begin_game gets its per-game seed (a program reseeds its new_game seeds with it).
                bot_seeds = [self.plan.game_seed(deal.index, entry, rotation) for entry in entries]
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
    """The tournament lines of ``deal``'s rotations not in ``skip``."""
    return [game_line(played) for played in player.play_deal(player.plan.deal(deal), frozenset(skip))]


class _ParentGone(BaseException):
    """Raised in a worker whose tournament process died: nobody records its games any more."""


def _follow_parent(parent: int) -> None:
    """End this worker when the tournament process ``parent`` dies, even by ``kill -9``.

    SIGTERM raises :class:`_ParentGone` (the worker then stops its external programs). Linux sends it the
    moment the parent dies (``PR_SET_PDEATHSIG``); everywhere, a thread checks the parent every second
    and, should the worker not have stopped within 10 s of the signal, ends it outright.
    """

    def on_term(signum, frame):
        raise _ParentGone()

    signal.signal(signal.SIGTERM, on_term)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="tavernzoo-parent-watch").start()
    if os.getppid() != parent:  # died before the signal was armed
        raise _ParentGone()


def play_batch(player: DealPlayer, batch: Sequence[Task], games: GamesFile) -> list[dict]:
    """Play a batch of deals, append their lines to ``games`` deal by deal; their summaries."""
    summaries = []
    for deal, _, skip in batch:
        lines = deal_lines(player, deal, skip)
        games.write(lines)
        summaries += [game_summary(line) for line in lines]
    return summaries


def _worker(settings: dict[str, Any], path: str, tasks, results, stop, parent: int | None = None) -> None:
    """A worker process (spawn-safe: module level, plain arguments): plays the batches it is handed,
    appends their games to its part ``path`` and sends the parent their summaries."""
    player = games = None
    try:
        if parent is not None:
            _follow_parent(parent)
        player = DealPlayer.for_tournament(Settings(**settings))
        games = GamesFile(path)
        while True:
            batch = tasks.get()
            if batch is None:
                break
            if stop.is_set():
                results.put(("skipped", None))
                continue
            results.put(("games", play_batch(player, batch, games)))
    except _ParentGone:
        results.cancel_join_thread()  # nobody reads the queue: exit without flushing it
        if player is not None:
            player.close()
        return
    except BaseException:  # noqa: BLE001 - reported to the main process, which stops the run
        results.put(("error", traceback.format_exc()))
    if player is not None:
        player.close()
    if games is not None:
        games.close()
    results.put(("exit", os.getpid()))


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
    """The local backend with one worker process per part in ``part_paths`` (:func:`_worker`), each handed
    its next batch of deals as it finishes one; the workers write the games, this process tallies them."""
    workers = len(part_paths)
    context = multiprocessing.get_context(start_method())
    task_queue, results, stop = context.Queue(), context.Queue(), context.Event()
    size = batch_size(deals, workers)
    exhausted = False

    def hand_out() -> None:
        """Queue the next batch, or (once there is none, or the run stops) one None per worker."""
        nonlocal exhausted
        batch = None if exhausted or stop.is_set() else list(itertools.islice(tasks, size))
        if batch:
            task_queue.put(batch)
        elif not exhausted:
            exhausted = True
            for _ in range(workers):
                task_queue.put(None)

    # Started before any queue is used: the queues' feeder threads must not exist when the workers fork;
    # and a forked worker flushes the standard streams it inherits, so they are flushed here first.
    sys.stdout.flush()
    sys.stderr.flush()
    processes = [context.Process(target=_worker, args=(asdict(settings), str(path), task_queue, results, stop,
                                                       os.getpid()), daemon=True) for path in part_paths]
    for process in processes:
        process.start()
    for _ in range(2 * workers):  # every worker busy, and one more batch each waiting
        hand_out()
    running = workers
    try:
        while running:
            try:
                kind, payload = results.get(timeout=5.0)
            except queue.Empty:
                if not any(process.is_alive() for process in processes):
                    raise RuntimeError("every tournament worker died; finish the run with --resume") from None
                continue
            if kind == "games":
                record(payload)
                if tally.decided_at is not None:
                    stop.set()
                hand_out()
            elif kind == "skipped":
                hand_out()
            elif kind == "exit":
                running -= 1
            elif kind == "error":
                raise RuntimeError(f"a tournament worker failed:\n{payload}")
    finally:
        stop.set()
        for process in processes:
            process.join(timeout=10.0)
            if process.is_alive():
                process.terminate()
