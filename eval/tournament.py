"""Tournaments between bots: covering schedules, duplicate deals, forfeits, worker processes, resume.

    tavernzoo tournament GAME --bots SPEC [SPEC ...] [--games N] [--workers K]
                         [--format round-robin|gauntlet] [--seed S] [--out DIR] [--resume]
                         [--sprt ELO0 ELO1 ALPHA BETA] [--move-timeout SECONDS] [--set KEY=VALUE]
                         [--backend local|ray [--address ADDR]]

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

Forfeits
    A bot that raises (an external program that crashes, hangs past ``--move-timeout`` or answers out
    of protocol: :class:`~tavernzoo.agents.external.BotFailure`) or returns an action its mask forbids
    forfeits the game at once: it scores 0 and takes the last place (a loss); every other seat shares
    the win (score ``1/(n-1)`` each, first place together: a win in a duel, a shared top otherwise).
    The reason is logged in the game's line and in ``results.json``; an external program is restarted
    before its next game.

Files (``--out DIR``)
    ``tournament.json`` the settings; ``games.jsonl`` one line per finished game, appended the moment
    the main process receives it (deal, rotation, seed, entries by seat, returns, scores, places,
    forfeit, the full replayable record); ``results.json`` the leaderboard and pairwise results;
    ``heatmap.png`` pairwise scores. Every game is a pure function of (seed, deal, rotation): bots
    are built afresh for every deal and seeded per game, so ``--resume`` replays exactly the games
    missing from ``games.jsonl`` (a deal cut short is replayed, writing only its missing games), and the
    results equal those of an uninterrupted run whatever the number of workers. A line that is not a game
    line is reported with its line number and left out (its game is played again). Workers end when the
    tournament process dies, even by ``kill -9``, and stop their external programs.

SPRT (``--sprt``, two entries in a two-player game: candidate first)
    After every deal (in deal order) the LLR of the candidate's W/D/L against the champion is checked;
    the run stops at the first deal where H0 or H1 is accepted, and the results count the deals up to
    that one (deals that other workers were finishing are kept in the file, not counted).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import itertools
import json
import logging
import math
import multiprocessing
import os
import queue
import random
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..agents.infoset import feed
from .ratings import Sprt, elo_estimate, openskill_ratings, places_from_scores
from .stats import mean_interval

FORMATS = ("round-robin", "gauntlet")
BACKENDS = ("local", "ray")
SETTINGS_FILE = "tournament.json"
GAMES_FILE = "games.jsonl"
RESULTS_FILE = "results.json"
HEATMAP_FILE = "heatmap.png"

log = logging.getLogger("tavernzoo.tournament")


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


def seating(table: Sequence[int], rotation: int) -> list[int]:
    """The entry at each seat in ``rotation``: ``table[i]`` sits at seat ``(i + rotation) % n``."""
    n = len(table)
    return [table[(seat - rotation) % n] for seat in range(n)]


def derived_seed(seed: int, *parts: Any) -> int:
    """A seed that depends only on the tournament seed and ``parts`` (deal, rotation, entry...)."""
    return random.Random(":".join(map(str, ("tavernzoo-tournament", seed, *parts)))).randrange(2**63)


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

    IDENTITY = ("game", "bots", "config", "format", "seed", "sprt")

    def identity(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self.IDENTITY}

    @property
    def deals(self) -> int:
        return math.ceil(self.games / self.seats)


def make_settings(game: str, bots: Sequence[str], games: int, *, config: Any = None, fmt: str = "round-robin",
                  seed: int = 0, move_timeout: float = 10.0, sprt: Sequence[float] | None = None) -> Settings:
    """Validated settings: the game and config exist, every spec loads, the sizes fit."""
    from ..agents import load_bot
    from ..envs import get_game
    from ..envs.core import config_to_dict
    from .match import entry_labels

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
    for spec in bots:  # fail here, on a typo, rather than in a worker
        bot = load_bot(spec, spec_game, validated, seed=0)
        if hasattr(bot, "close"):
            bot.close()
    return Settings(spec_game.name, list(bots), config_to_dict(validated), fmt, seed, games, float(move_timeout),
                    list(sprt) if sprt is not None else None, entry_labels(list(bots)), seats)


# --- playing deals (in a worker process, or in this one) ----------------------------------------------


class Forfeit(Exception):  # noqa: N818 - a game outcome, not an error of the runner
    """Raised inside a game when the bot at ``seat`` forfeits it."""

    def __init__(self, seat: int, kind: str, reason: str):
        super().__init__(f"seat {seat} forfeits ({kind}): {reason}")
        self.seat, self.kind, self.reason = seat, kind, reason


class _Guard:
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
        try:
            index = int(action)
            legal = 0 <= index < len(mask) and bool(mask[index])
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
            guards = [_Guard(bots[entry], seat, derived_seed(settings.seed, "bot", deal, entry, rotation), self.env)
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


# --- the run --------------------------------------------------------------------------------------------


def run_tournament(settings: Settings, out: str | Path, *, workers: int = 1, resume: bool = False,
                   progress: bool = False, backend: str = "local", address: str | None = None,
                   batch: int | None = None) -> dict[str, Any]:
    """Play (or finish, with ``resume``) the tournament into ``out``; returns the results dict.

    ``backend="ray"`` plays the deals as Ray tasks (:mod:`tavernzoo.eval.ray_backend`: ``batch`` deals
    per task, on ``address``'s cluster or an embedded instance; ``workers`` is then unused), with the
    same games, files and results as the local backend."""
    out = Path(out)
    settings_path, games_path = out / SETTINGS_FILE, out / GAMES_FILE
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if workers < 1:
        raise ValueError(f"workers={workers} must be at least 1")
    most = 8 * (os.cpu_count() or 1)
    if workers > most:
        raise ValueError(f"workers={workers}: each worker is a process; at most {most} (8 per CPU core) are allowed")
    if resume:
        stored = read_settings(out)
        mismatched = [key for key in Settings.IDENTITY if stored.get(key) != settings.identity()[key]]
        if mismatched:
            raise ValueError(f"--resume: the tournament in {out} differs in {', '.join(mismatched)} "
                             f"(stored: {', '.join(f'{k}={stored.get(k)!r}' for k in mismatched)})")
    elif games_path.exists() and games_path.stat().st_size > 0:
        raise ValueError(f"{games_path} already holds games: pass --resume to continue, or another --out")
    out.mkdir(parents=True, exist_ok=True)
    settings_path.write_text(json.dumps(asdict(settings), indent=1) + "\n")

    tables = make_tables(len(settings.bots), settings.seats, settings.format, settings.seed)
    lines = read_games(games_path, repair=True, settings=settings)
    done = {(line["deal"], line["rotation"]) for line in lines}
    sprt = Sprt(*settings.sprt) if settings.sprt else None
    tracker = _SprtTracker(sprt, settings.seats)
    for line in sorted(lines, key=_key):
        tracker.add(line)
    played = Counter(deal for deal, _ in done if deal < settings.deals)
    complete = sum(1 for count in played.values() if count == settings.seats)
    missing_deals = 0 if tracker.decided_at is not None else settings.deals - complete

    def tasks() -> Iterator[tuple[int, tuple[int, ...], list[int]]]:
        # Made as they are handed out: --games may be huge, and a run stopped early never makes the rest.
        if tracker.decided_at is not None:
            return
        for deal in range(settings.deals):
            if played[deal] < settings.seats:
                yield deal, tables[deal % len(tables)], [r for r in range(settings.seats) if (deal, r) in done]

    remaining = 0 if missing_deals == 0 else settings.deals * settings.seats - sum(played.values())
    bar = _progress(progress, remaining, f"{settings.game} tournament")
    with open(games_path, "a") as games_file:
        def write(line: dict) -> None:
            games_file.write(json.dumps(line) + "\n")
            games_file.flush()
            tracker.add(line)
            if line["forfeit"]:
                forfeit = line["forfeit"]
                log.warning("deal %d rotation %d: %s forfeits (%s): %s", line["deal"], line["rotation"],
                            forfeit["bot"], forfeit["kind"], forfeit["reason"])
            if bar is not None:
                bar.update(1)

        try:
            if backend == "ray" and missing_deals:
                from .ray_backend import run_deals

                run_deals(settings, tasks(), write, tracker, deals=missing_deals, address=address, batch=batch)
            elif workers == 1 or missing_deals == 1:
                _run_here(settings, tasks(), write, tracker)
            elif missing_deals:
                _run_workers(settings, tasks(), write, tracker, min(workers, missing_deals))
        finally:
            if bar is not None:
                bar.close()
    results = compute_results(settings, read_games(games_path, settings=settings, quiet=True), tables,
                              tracker)
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=1) + "\n")
    return results


def read_settings(out: str | Path) -> dict[str, Any]:
    """The stored settings of the tournament in ``out``, checked to be one (else a ValueError)."""
    from tavernzoo.cli import read_table_file

    path = Path(out) / SETTINGS_FILE
    if not path.exists():
        raise ValueError(f"nothing to resume in {out}: no {SETTINGS_FILE} there")
    stored = read_table_file(path, "--resume:", "tournament settings")
    names = {item.name for item in dataclasses.fields(Settings)}
    if not names >= set(stored) or not set(Settings.IDENTITY) <= set(stored):
        raise ValueError(f"--resume: {path} is not a tournament's settings file (it needs the keys "
                         f"{', '.join(Settings.IDENTITY)} and no others but {', '.join(sorted(names))})")
    bots, config = stored["bots"], stored["config"]
    if not (isinstance(bots, list) and bots and all(isinstance(spec, str) for spec in bots)
            and isinstance(config, dict)):
        raise ValueError(f"--resume: {path} is damaged: bots must be a list of specs and config a table")
    return stored


def _run_here(settings: Settings, tasks: Iterator, write, tracker: _SprtTracker) -> None:
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


def _run_workers(settings: Settings, tasks: Iterator, write, tracker: _SprtTracker, workers: int) -> None:
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


class _SprtTracker:
    """Feeds finished deals to the SPRT in deal order; ``decided_at`` is the deciding deal."""

    def __init__(self, sprt: Sprt | None, seats: int):
        self.sprt, self.seats = sprt, seats
        self.wdl = [0, 0, 0]
        self.next_deal = 0
        self.decided_at: int | None = None
        self.decision: str | None = None
        self.llr = 0.0
        self._games: dict[int, list[dict]] = {}

    def add(self, line: dict) -> None:
        if self.sprt is None:
            return
        self._games.setdefault(line["deal"], []).append(line)
        if len(self._games[line["deal"]]) == self.seats:
            self.deal_done(line["deal"])

    def deal_done(self, deal: int) -> None:
        while (self.sprt is not None and self.decided_at is None
               and len(self._games.get(self.next_deal, ())) == self.seats):
            for line in self._games[self.next_deal]:
                share = line["scores"][line["entries"].index(0)]
                self.wdl[0 if share == 1.0 else 2 if share == 0.0 else 1] += 1
            self.llr = self.sprt.llr(*self.wdl)
            self.decision = self.sprt.decision(self.llr)
            if self.decision is not None:
                self.decided_at = self.next_deal
            self.next_deal += 1


def read_games(path: str | Path, repair: bool = False, settings: Settings | None = None,
               quiet: bool = False) -> list[dict]:
    """The game lines of ``games.jsonl`` (first copy of each (deal, rotation)). With ``repair``, a last
    line cut short by a killed run is removed from the file. A line that is not a game line (of a
    tournament with ``settings``, when given) is left out with a warning naming its line number: its game
    counts as not played, so ``--resume`` plays it again (``quiet``: no warnings)."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    if repair and data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with open(path, "r+b") as handle:
            handle.truncate(len(data))
    lines, seen = [], set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            problem = _game_line_problem(line, settings)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            problem = f"not JSON ({error})"
        except RecursionError:
            problem = "nested too deeply"
        if problem:
            if not quiet:
                log.warning("%s line %d skipped: %s", path, number, problem)
            continue
        key = _key(line)
        if key not in seen:
            seen.add(key)
            lines.append(line)
    return lines


def _game_line_problem(line: Any, settings: Settings | None) -> str | None:
    """What makes ``line`` unfit to count as a game (None if nothing)."""
    if not isinstance(line, dict):
        return f"a {type(line).__name__}, not a game object"
    for key in ("deal", "rotation"):
        value = line.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key}={value!r} is not a whole number >= 0"
    fields = {key: line.get(key) for key in ("entries", "scores", "places")}
    if not all(isinstance(value, list) for value in fields.values()):
        return "entries, scores and places must be lists"
    if len({len(value) for value in fields.values()}) != 1 or not fields["entries"]:
        return "entries, scores and places must have one item per seat"
    seats = len(fields["entries"])
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in fields["entries"] + fields["places"]):
        return "entries and places must hold whole numbers"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in fields["scores"]):
        return "scores must hold numbers"
    returns = line.get("returns")
    if returns is not None and (not isinstance(returns, list) or len(returns) != seats
                                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in returns)):
        return "returns must be null or one number per seat"
    forfeit = line.get("forfeit")
    if forfeit is not None and not (isinstance(forfeit, dict) and forfeit.get("seat") in range(seats)):
        return "forfeit must be null or name the forfeiting seat"
    if settings is not None:
        if seats != settings.seats or line["rotation"] >= seats:
            return f"it seats {seats} players in rotation {line['rotation']}; this tournament seats {settings.seats}"
        if any(entry >= len(settings.bots) for entry in fields["entries"]):
            return f"entries {fields['entries']} name bots beyond the {len(settings.bots)} of this tournament"
    return None


def _key(line: dict) -> tuple[int, int]:
    return (line["deal"], line["rotation"])


# --- results --------------------------------------------------------------------------------------------


def compute_results(settings: Settings, lines: list[dict], tables: Sequence[Sequence[int]] | None = None,
                    tracker: _SprtTracker | None = None) -> dict[str, Any]:
    """The leaderboard, pairwise results and SPRT of the counted games (see the module docstring)."""
    n_entries, seats = len(settings.bots), settings.seats
    tables = tables or make_tables(n_entries, seats, settings.format, settings.seed)
    limit = settings.deals
    if tracker is not None and tracker.decided_at is not None:
        limit = min(limit, tracker.decided_at + 1)
    counted = sorted((line for line in lines if line["deal"] < limit), key=_key)
    entries = [_Tally() for _ in range(n_entries)]
    pairs = [[[0, 0, 0] for _ in range(n_entries)] for _ in range(n_entries)]
    forfeits = []
    for line in counted:
        for seat, entry in enumerate(line["entries"]):
            entries[entry].add(line, seat)
            for other_seat, other in enumerate(line["entries"]):
                if other != entry:
                    mine, theirs = line["places"][seat], line["places"][other_seat]
                    pairs[entry][other][0 if mine < theirs else 2 if mine > theirs else 1] += 1
        if line["forfeit"]:
            forfeits.append({"deal": line["deal"], "rotation": line["rotation"], **line["forfeit"]})
    ratings = openskill_ratings(((line["entries"], line["places"]) for line in counted), n_entries)
    rows = []
    for entry, tally in enumerate(entries):
        row = tally.summary(seats)
        row.update(bot=settings.labels[entry], spec=settings.bots[entry], **ratings[entry])
        if seats == 2:
            field_wdl = [sum(pairs[entry][other][i] for other in range(n_entries)) for i in range(3)]
            estimate = elo_estimate(*field_wdl)
            row.update(elo=estimate.as_dict()["elo"], elo_error=estimate.as_dict()["elo_error"], los=estimate.los)
        rows.append(row)
    order = sorted(range(n_entries), key=lambda e: (-(rows[e]["score"] if seats == 2 else rows[e]["ordinal"]), e))
    leaderboard = []
    for rank, entry in enumerate(order, start=1):
        leaderboard.append({"rank": rank, **rows[entry]})
    pair_rows, matrix = [], [[None] * n_entries for _ in range(n_entries)]
    for a in range(n_entries):
        for b in range(n_entries):
            if a != b and sum(pairs[a][b]):
                estimate = elo_estimate(*pairs[a][b])
                matrix[a][b] = estimate.score
                if a < b:
                    pair_rows.append({"bot": settings.labels[a], "opponent": settings.labels[b], **estimate.as_dict()})
    deals_counted = len({line["deal"] for line in counted})
    results: dict[str, Any] = {
        "game": settings.game,
        "config": settings.config,
        "format": settings.format,
        "seed": settings.seed,
        "seats": seats,
        "bots": settings.labels,
        "specs": settings.bots,
        "games_requested": settings.deals * seats,
        "games": len(counted),
        "deals": deals_counted,
        "games_not_counted": len(lines) - len(counted),
        "cycle": {"tables": [list(t) for t in tables], "deals": len(tables),
                  "complete": deals_counted >= len(tables)},
        "leaderboard": leaderboard,
        "pairs": pair_rows,
        "pair_matrix": matrix,
        "forfeits": forfeits,
        "sprt": None,
    }
    if settings.sprt and tracker is not None:
        sprt = Sprt(*settings.sprt)
        results["sprt"] = {**sprt.as_dict(), "llr": tracker.llr, "decision": tracker.decision,
                           "wins": tracker.wdl[0], "draws": tracker.wdl[1], "losses": tracker.wdl[2],
                           "games": sum(tracker.wdl)}
    return results


class _Tally:
    """One entry's counts over the counted games."""

    def __init__(self):
        self.games = self.wins = self.draws = self.losses = self.forfeits = 0
        self.shares: list[float] = []
        self.places: list[int] = []
        self.returns: list[float] = []
        self.deal_shares: dict[int, list[float]] = {}

    def add(self, line: dict, seat: int) -> None:
        share = line["scores"][seat]
        self.games += 1
        self.wins += share == 1.0
        self.draws += 0.0 < share < 1.0
        self.losses += share == 0.0
        self.forfeits += bool(line["forfeit"]) and line["forfeit"]["seat"] == seat
        self.shares.append(share)
        self.places.append(line["places"][seat])
        if line["returns"] is not None:
            self.returns.append(line["returns"][seat])
        self.deal_shares.setdefault(line["deal"], []).append(share)

    def summary(self, seats: int) -> dict[str, Any]:
        score, low, high = mean_interval(self.shares)
        deal_means = [sum(values) / len(values) for values in self.deal_shares.values()]
        deal_score, deal_low, deal_high = mean_interval(deal_means)
        fair = 1.0 / seats
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "forfeits": self.forfeits,
            "score": _number(score), "score_ci": [_clip(low), _clip(high)],
            "deals": len(deal_means),
            "deal_score": _number(deal_score), "deal_score_ci": [_clip(deal_low), _clip(deal_high)],
            "deal_wins": sum(1 for m in deal_means if m > fair + 1e-9),
            "deal_draws": sum(1 for m in deal_means if abs(m - fair) <= 1e-9),
            "deal_losses": sum(1 for m in deal_means if m < fair - 1e-9),
            "mean_return": _number(sum(self.returns) / len(self.returns)) if self.returns else None,
            "avg_place": _number(sum(self.places) / len(self.places)) if self.places else None,
        }


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value)) if math.isfinite(value) else (0.0 if value < 0 else 1.0)


# --- the command ----------------------------------------------------------------------------------------


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``tavernzoo tournament`` on the CLI's subparsers."""
    from tavernzoo.cli import _add_config_arguments

    parser = commands.add_parser(
        "tournament",
        help="a tournament between bots: duplicate deals, every seat, ratings, forfeits, resume",
        description="Play a round-robin or gauntlet between bots. Every deal is replayed under every seat "
        "rotation; tables cover every pair of bots in every pair of seats. Prints the leaderboard and writes "
        "games.jsonl, results.json and heatmap.png into --out.",
    )
    parser.add_argument("game", help="game name (tavernzoo games lists them)")
    parser.add_argument("--bots", nargs="+", metavar="SPEC",
                        help="bot specs: random, heuristic, a checkpoint, BOT.onnx, zoo:GAME, 'cmd:PROGRAM ARGS' "
                        "(a spec given twice enters twice; on --resume: default the stored ones)")
    parser.add_argument("--games", type=int, default=1000,
                        help="games to play in all, rounded up to whole deals (default 1000; with --sprt the most)")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="worker processes playing games in parallel (default: up to 4)")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="local: worker processes on this machine (default); ray: deals as Ray tasks "
                        "(pip install 'tavernzoo[ray]'; docs/distributed.md)")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster to join (HOST:PORT or auto; "
                        "default: start one on this machine)")
    parser.add_argument("--format", choices=FORMATS,
                        help="round-robin (every pair, the default) or gauntlet (the first bot against the rest)")
    parser.add_argument("--seed", type=int, help="seed of the schedule, deals and bots (default 0)")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: runs/tournament-GAME-seedS)")
    parser.add_argument("--resume", action="store_true", help="continue the killed or finished tournament in --out")
    parser.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                        help="stop once the first bot is shown ELO1 better (H1) or not ELO0 better (H0)")
    parser.add_argument("--move-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="time limit of one decision of an external bot (default 10)")
    _add_config_arguments(parser)
    parser.add_argument("--no-progress", action="store_true",
                        help="hide the progress bar (hidden anyway when stderr is not a terminal)")
    parser.add_argument("--no-plot", action="store_true", help="skip heatmap.png")
    parser.add_argument("--json", action="store_true",
                        help="print the results (as in results.json) as one JSON document instead of the table")
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    from tavernzoo.cli import parse_config

    out = Path(args.out or f"runs/tournament-{args.game}-seed{args.seed or 0}")
    config, bots, fmt, seed, sprt = parse_config(args), args.bots, args.format, args.seed, args.sprt
    if args.resume:
        # What --resume is not told again comes from the stored settings.
        stored = read_settings(out)
        bots, config = bots or stored["bots"], config or stored["config"]
        fmt = fmt or stored["format"]
        seed = stored["seed"] if seed is None else seed
        sprt = sprt or stored["sprt"]
    if not bots:
        raise ValueError("--bots is required: one spec per entry, e.g. --bots heuristic random")
    settings = make_settings(args.game, bots, args.games, config=config, fmt=fmt or "round-robin", seed=seed or 0,
                             move_timeout=args.move_timeout, sprt=sprt)
    if args.address and args.backend != "ray":
        raise ValueError("--address names a Ray cluster: it needs --backend ray")
    results = run_tournament(settings, out, workers=args.workers, resume=args.resume, progress=not args.no_progress,
                             backend=args.backend, address=args.address)
    if not args.json:
        print_results(results)
    plotted = False
    if not args.no_plot and results["games"]:
        from .plots import pairwise_heatmap

        try:
            pairwise_heatmap(results, out / HEATMAP_FILE)
            plotted = True
        except ImportError as error:
            print(f"no heatmap: {error}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"games: {out / GAMES_FILE}  results: {out / RESULTS_FILE}"
          + (f"  heatmap: {out / HEATMAP_FILE}" if plotted else ""))
    return 0


def print_results(results: dict[str, Any], file=None) -> None:
    """The leaderboard (and SPRT, forfeits) as a rich table."""
    from rich.console import Console
    from rich.table import Table

    from tavernzoo.cli import console as make_console

    console = Console(file=file) if file is not None else make_console()
    duel = results["seats"] == 2
    title = (f"{results['game']} {results['format']}: {results['games']} games, {results['deals']} deals x "
             f"{results['seats']} seatings, seed {results['seed']}")
    table = Table(title=title, title_justify="left")
    columns = ["#", "bot", "games", "W-D-L", "forfeits", "score [95%]", "deal score [95%]"]
    columns += ["Elo", "LOS"] if duel else ["avg place", "mu", "sigma", "ordinal"]
    for column in columns:
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in results["leaderboard"]:
        cells = [str(row["rank"]), row["bot"], str(row["games"]), f"{row['wins']}-{row['draws']}-{row['losses']}",
                 str(row["forfeits"]), _with_ci(row["score"], row["score_ci"]),
                 _with_ci(row["deal_score"], row["deal_score_ci"])]
        if duel:
            elo, error = row.get("elo"), row.get("elo_error")
            cells += [("-" if elo is None else f"{elo:+.0f}") + ("" if error is None else f" ± {error:.0f}"),
                      f"{100 * row['los']:.1f}%"]
        else:
            cells += [_fmt(row["avg_place"], ".2f"), f"{row['mu']:.2f}", f"{row['sigma']:.2f}", f"{row['ordinal']:.2f}"]
        table.add_row(*cells)
    console.print(table)
    if not results["cycle"]["complete"]:
        console.print(f"[yellow]note:[/] the schedule covers every pair in every seat after "
                      f"{results['cycle']['deals']} deals; this run has {results['deals']}", highlight=False)
    sprt = results.get("sprt")
    if sprt:
        verdict = {"H1": "H1 accepted (the first bot is better)", "H0": "H0 accepted (not better)"}.get(
            sprt["decision"], "no decision yet")
        console.print(f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] alpha {sprt['alpha']:g} beta {sprt['beta']:g}: "
                      f"LLR {sprt['llr']:.2f} ({sprt['lower']:.2f}, {sprt['upper']:.2f}) after {sprt['games']} "
                      f"games: {verdict}", highlight=False)
    if results["forfeits"]:
        console.print(f"{len(results['forfeits'])} forfeit(s); the first:", highlight=False)
        for item in results["forfeits"][:5]:
            console.print(f"  deal {item['deal']} rotation {item['rotation']}: {item['bot']} ({item['kind']}) "
                          f"{item['reason']}", highlight=False, markup=False)


def _with_ci(value: float | None, interval: Sequence[float]) -> str:
    if value is None:
        return "-"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _progress(enabled: bool, total: int, description: str):
    if not enabled or total <= 0:
        return None
    from tqdm.auto import tqdm

    # disable=None: no bar when stderr is not a terminal (a log file would get one line per update).
    return tqdm(total=total, desc=description, unit="game", dynamic_ncols=True, disable=None)


def main(argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.eval.tournament ...``: the same as ``tavernzoo tournament ...``."""
    parser = argparse.ArgumentParser(prog="tavernzoo")
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["tournament", *(sys.argv[1:] if argv is None else argv)])
    from tavernzoo.cli import run_guarded

    return run_guarded(args.run, args)


if __name__ == "__main__":
    sys.exit(main())
