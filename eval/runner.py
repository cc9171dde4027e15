"""Playing a tournament's deals on this machine: in this process or in worker processes.

Each deal is played by a :class:`DealPlayer` (one env, bots built afresh per deal, external programs
kept running); :func:`run_here` and :func:`run_workers` are the local backends that
:func:`tavernzoo.eval.tournament.run_tournament` chooses between (:mod:`tavernzoo.eval.ray_backend` is
the other, with the same contract). Workers end when the tournament process dies, even by ``kill -9``,
and stop their external programs.

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
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any

from ..agents.infoset import feed
from ..envs.aec import as_action
from .ratings import places_from_scores
from .results import SprtTracker
from .schedule import Settings, derived_seed, seating

# --- playing deals (in a worker process, or in this one) ----------------------------------------------


class Forfeit(Exception):  # noqa: N818 - a game outcome, not an error of the runner
    """Raised inside a game when the bot at ``seat`` forfeits it."""

    def __init__(self, seat: int, kind: str, reason: str):
        super().__init__(f"seat {seat} forfeits ({kind}): {reason}")
        self.seat, self.kind, self.reason = seat, kind, reason


class Guard:
    """Wraps a bot for one game: turns its failures and illegal actions into a :class:`Forfeit`."""

    def __init__(self, bot: Any, seat: int, seed: int, env: Any):
        self.bot, self.seat, self.seed, self.env = bot, seat, seed, env
        self.name = getattr(bot, "name", type(bot).__name__)

    def reset(self) -> None:
        try:
            if hasattr(self.bot, "begin_game"):
                self.bot.begin_game(self.seat, self.seed)
            else:
                self.bot.reset()
        except Exception as error:  # noqa: BLE001 - any failure of a bot forfeits its game
            raise _forfeit(self.seat, error) from None

    def act(self, observation: dict[str, Any]) -> int:
        from ..agents.external import clip

        mask = observation["action_mask"]
        try:
            feed(self.bot, self.env, f"player_{self.seat}")  # the view / information state it takes
            action = self.bot.act(observation)
        except Exception as error:  # noqa: BLE001 - any failure of a bot forfeits its game
            raise _forfeit(self.seat, error) from None
        try:  # an integer only: a bot's True or 1.7 is no move (as the envs hold it)
            index = as_action(action, len(mask))
            legal = bool(mask[index])
        except (TypeError, ValueError):
            legal = False
        if not legal:
            raise Forfeit(self.seat, "illegal", f"action {clip(repr(action), 100)} is not legal now")
        return index


def _forfeit(seat: int, error: Exception) -> Forfeit:
    from ..agents.external import clip

    kind = getattr(error, "kind", None) or "error"
    reason = getattr(error, "reason", None) or f"{type(error).__name__}: {error}"
    return Forfeit(seat, clip(str(kind), 40), clip(str(reason)))


class DealPlayer:
    """Plays deals for one process: one env, fresh bots per deal, external programs kept running."""

    def __init__(self, settings: Settings):
        from ..agents import builtin_bots
        from ..envs import get_game
        from .match import make_env

        self.settings = settings
        self.game = get_game(settings.game)
        self.config = self.game.make_config(settings.config)
        self.env = make_env(self.game, self.config)
        self._external: dict[int, Any] = {}
        self._builtin = builtin_bots(self.game)

    def _bot(self, entry: int, deal: int) -> Any:
        from ..agents import load_bot

        spec = self.settings.bots[entry]
        seed = derived_seed(self.settings.seed, "bot", deal, entry)
        if spec in self._builtin:  # load_bot's answer, without re-validating the config every deal
            return self._builtin[spec](self.config, seed)
        if spec.startswith("cmd:"):
            # A program is started once per process and reseeded every game (begin_game).
            if entry not in self._external:
                bot = load_bot(spec, self.game, self.config, seed=0)
                bot.move_timeout = self.settings.move_timeout
                self._external[entry] = bot
            return self._external[entry]
        return load_bot(spec, self.game, self.config, seed=seed)

    def play_deal(self, deal: int, table: Sequence[int], skip: frozenset[int] = frozenset()) -> Iterator[dict]:
        """Every rotation of ``deal`` at ``table``, yielding each game's line; rotations in ``skip`` are
        played (the bots' state carries over within a deal) but not yielded."""
        from .match import play_game

        settings = self.settings
        seed = derived_seed(settings.seed, "deal", deal)
        bots = {entry: self._bot(entry, deal) for entry in table}
        n = len(table)
        for rotation in range(n):
            entries = seating(table, rotation)
            labels = [settings.labels[entry] for entry in entries]
            guards = [Guard(bots[entry], seat, derived_seed(settings.seed, "bot", deal, entry, rotation), self.env)
                      for seat, entry in enumerate(entries)]
            forfeit = None
            try:
                returns, record = play_game(self.env, guards, seed, labels)
                returns = [float(value) for value in returns]
                scores = [_share(returns, seat) for seat in range(n)]
                places = places_from_scores(returns)
            except Forfeit as lost:
                record = self.env.unwrapped.record(seats=labels)
                returns = None
                scores = [0.0 if seat == lost.seat else 1.0 / (n - 1) for seat in range(n)]
                places = [n if seat == lost.seat else 1 for seat in range(n)]
                forfeit = {"seat": lost.seat, "entry": entries[lost.seat], "bot": labels[lost.seat],
                           "kind": lost.kind, "reason": lost.reason}
            for seat, entry in enumerate(entries):
                bot = bots[entry]
                if hasattr(bot, "game_over") and getattr(bot, "alive", True):
                    try:
                        bot.game_over(returns, seat)
                    except Exception:  # noqa: BLE001, S110 - it will be restarted before its next game
                        pass
            if rotation in skip:
                continue
            yield {"deal": deal, "rotation": rotation, "seed": seed, "entries": entries, "bots": labels,
                   "returns": returns, "scores": scores, "places": places, "forfeit": forfeit, "record": record}

    def close(self) -> None:
        for bot in self._external.values():
            bot.close()
        self._external.clear()


def _share(returns: Sequence[float], seat: int) -> float:
    from .match import score_of

    return score_of(returns, seat)


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


def _worker(settings: dict[str, Any], tasks, results, stop, parent: int | None = None) -> None:
    """A worker process (spawn-safe: module level, plain arguments): plays the deals it is handed."""
    player = None
    try:
        if parent is not None:
            _follow_parent(parent)
        player = DealPlayer(Settings(**settings))
        while True:
            task = tasks.get()
            if task is None:
                break
            deal, table, skip = task
            if stop.is_set():
                results.put(("skipped", deal))
                continue
            for line in player.play_deal(deal, table, frozenset(skip)):
                results.put(("game", line))
            results.put(("deal", deal))
    except _ParentGone:
        results.cancel_join_thread()  # nobody reads the queue: exit without flushing it
        if player is not None:
            player.close()
        return
    except BaseException:  # noqa: BLE001 - reported to the main process, which stops the run
        results.put(("error", traceback.format_exc()))
    if player is not None:
        player.close()
    results.put(("exit", os.getpid()))


# --- the local backends ---------------------------------------------------------------------------------


def run_here(settings: Settings, tasks: Iterator, write, tracker: SprtTracker) -> None:
    """The local backend without workers: plays ``tasks`` in this process, in order, until the SPRT decides."""
    player = DealPlayer(settings)
    try:
        for deal, table, skip in tasks:
            for line in player.play_deal(deal, table, frozenset(skip)):
                write(line)
            tracker.deal_done(deal)
            if tracker.decided_at is not None:
                break
    finally:
        player.close()


def run_workers(settings: Settings, tasks: Iterator, write, tracker: SprtTracker, workers: int) -> None:
    """The local backend with ``workers`` spawned processes (:func:`_worker`), each handed its next deal as it
    finishes one; the lines come back to this process, which alone writes them."""
    context = multiprocessing.get_context("spawn")
    task_queue, results, stop = context.Queue(), context.Queue(), context.Event()
    exhausted = False

    def hand_out() -> None:
        """Queue the next task, or (once there is none, or the run stops) one None per worker."""
        nonlocal exhausted
        task = None if exhausted or stop.is_set() else next(tasks, None)
        if task is not None:
            task_queue.put(task)
        elif not exhausted:
            exhausted = True
            for _ in range(workers):
                task_queue.put(None)

    for _ in range(2 * workers):  # every worker busy, and one more task each waiting
        hand_out()
    processes = [context.Process(target=_worker, args=(asdict(settings), task_queue, results, stop, os.getpid()),
                                 daemon=True) for _ in range(workers)]
    for process in processes:
        process.start()
    running = workers
    try:
        while running:
            try:
                kind, payload = results.get(timeout=5.0)
            except queue.Empty:
                if not any(process.is_alive() for process in processes):
                    raise RuntimeError("every tournament worker died; finish the run with --resume") from None
                continue
            if kind == "game":
                write(payload)
            elif kind in ("deal", "skipped"):
                if kind == "deal":
                    tracker.deal_done(payload)
                    if tracker.decided_at is not None:
                        stop.set()
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
