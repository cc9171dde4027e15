"""``tavernzoo bot check CMD``: a bot-protocol compliance run of an external program.

For people writing bots in other languages (as fastchess's ``--compliance`` does for chess engines): the
program is started as a ``cmd:`` bot would be and put through the protocol (docs/bot-protocol.md), and
every violation is reported instead of stopping at the first:

1. *handshake*, for every game: ``hello`` must be answered with a ``hello`` (``protocol`` 1, a ``name``,
   ``games`` naming the env) or, for a game the bot does not play, an ``error`` with code ``wrong_game``;
2. *errors*: a line that is not JSON must get an ``error`` reply (``bad_json``), an unknown request type
   an ``error`` (``bad_request``), and the bot must keep serving afterwards (``new_game`` is ``ok``);
3. *games*: a few whole games of each game it plays, against random bots in every seat, through
   :class:`~tavernzoo.agents.external.ExternalBot` (every ``act`` answered in time with a legal action,
   ``game_over`` with ``ok``); a failure is a violation and the program is restarted for the next game;
4. *quit*: ``quit`` is answered ``ok`` and the program exits within a few seconds.

``--sandbox [LIMITS]`` runs every stage with the program confined as a tournament's ``--sandbox`` would
(agents/sandbox.py): an author sees whether their bot plays within the limits.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..agents.external import MAX_LINE_BYTES, MAX_PENDING_LINES, _pump, _TooLong, parse_command, write_within
from ..agents.sandbox import Limits, Sandbox, available
from ..envs import games as all_games
from ..envs import get_game

PROTOCOL = 1


@dataclass
class Check:
    """One thing the run checked: ``ok`` or the violation found."""

    stage: str
    what: str
    ok: bool
    detail: str = ""


@dataclass
class Report:
    command: str
    checks: list[Check] = field(default_factory=list)
    games_played: dict[str, int] = field(default_factory=dict)

    @property
    def violations(self) -> list[Check]:
        return [check for check in self.checks if not check.ok]

    def add(self, stage: str, what: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(stage, what, ok, detail))


class _Program:
    """The program under test on raw JSON lines (replies read by a thread, each awaited with a time limit).

    Its output is read as the tournament reads a ``cmd:`` bot's: bounded lines through a bounded queue
    (:func:`.external._pump`), so a program that floods cannot grow the checker; its input is written as
    the tournament writes it (:func:`.external.write_within`), within the same time limit as the reply, so
    a program that stops reading cannot block the checker."""

    def __init__(self, argv: list[str], sandbox: Limits | None = None):
        self.sandbox = Sandbox(sandbox) if sandbox is not None else None
        if self.sandbox is not None:
            try:
                argv = self.sandbox.wrap(argv)
            except ValueError:  # a program it could not show: its groups go, the line is the caller's
                self.sandbox.close()
                raise
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        bufsize=0)
        os.set_blocking(self.process.stdin.fileno(), False)
        self.lines: queue.Queue = queue.Queue(maxsize=MAX_PENDING_LINES)
        self.stopped = threading.Event()
        self.ended = False
        self.deaf = ""  # why the program was stopped for not reading its input
        threading.Thread(target=_pump, args=(self.process.stdout, self.lines, self.stopped), daemon=True).start()

    def ask(self, line: str, timeout: float) -> tuple[Any, str]:
        """``(reply object or None, problem)`` for one request line."""
        if self.deaf:
            return None, self.deaf
        if self.ended:
            return None, f"the program has exited (status {self.process.poll()})"
        deadline = time.monotonic() + timeout  # one limit for the write and the read, as in a tournament
        data = (line + "\n").encode()
        try:
            written = write_within(self.process.stdin, data, deadline)
        except (BrokenPipeError, OSError, ValueError) as error:
            return None, f"the program stopped reading its input ({error})"
        if written < len(data):
            # Part of the line may be in the pipe and would run into the next request: the program is
            # stopped (the games stage starts its own), as a tournament kills a cmd: bot that fails.
            self.deaf = f"the program did not read its input within {timeout:g} s (stopped)"
            self.stop()
            return None, self.deaf
        try:
            reply = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None, f"no reply within {timeout:g} s"
        if reply is None:
            self.ended = True
            try:
                status = self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            breach = self.sandbox.breach or self.sandbox.check() if self.sandbox is not None else None
            if breach is not None:
                return None, f"the sandbox stopped the program ({breach[0]}): {breach[1]}"
            return None, f"the program exited (status {status}) without replying"
        if isinstance(reply, _TooLong):
            return None, f"the reply line is longer than {MAX_LINE_BYTES} bytes: {reply.start[:80]!r}..."
        try:
            document = json.loads(reply)
        except (json.JSONDecodeError, RecursionError):
            return None, f"the reply is not JSON: {reply[:80]!r}"
        if not isinstance(document, dict) or not isinstance(document.get("type"), str):
            return None, f"the reply is not a message object with a 'type': {reply[:80]!r}"
        return document, ""

    def stop(self) -> None:
        self.stopped.set()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        if self.sandbox is not None:
            self.sandbox.close()
        # Only stdin is closed here; stdout belongs to its reader thread, which closes it at the end of the
        # stream (the program is dead, so that end is near). Closed from this thread, its descriptor could be
        # freed while the reader is about to read it, and the games' program started next is given the same
        # number: the reader would then swallow that program's hello reply (a "no reply to 'hello'" on a
        # loaded machine), as ExternalBot._kill says too.
        try:
            self.process.stdin.close()
        except OSError:
            pass


def _hello(game: Any, config: Any) -> str:
    from ..envs.core import config_to_dict

    return json.dumps({"type": "hello", "protocol": PROTOCOL, "game": game.name, "env": game.env_name,
                       "config": config_to_dict(config)})


def check_program(command: str, game_names: list[str] | None = None, games_each: int = 2,
                  move_timeout: float = 10.0, start_timeout: float = 30.0, seed: int = 0,
                  sandbox: Limits | None = None) -> Report:
    """Run every check against the program ``command`` (``PROGRAM ARGS``) and report what it found;
    with ``sandbox``, the program runs confined by those limits (agents/sandbox.py), as a tournament's
    ``--sandbox`` would run it."""
    if not command.strip():
        raise ValueError("name the program to check: tavernzoo bot check 'PROGRAM ARGS'")
    argv = parse_command(command)
    targets = [get_game(name) for name in game_names] if game_names else list(all_games().values())
    if games_each < 1:
        raise ValueError(f"--games {games_each} must be at least 1")
    if sandbox is not None:
        available()
    report = Report(command)
    try:
        program = _Program(argv, sandbox)
    except OSError as error:
        report.add("start", f"start {argv[0]}", False, str(error))
        return report
    playable = []
    try:
        for game in targets:
            config = game.make_config()
            reply, problem = program.ask(_hello(game, config), start_timeout)
            what = f"hello for {game.env_name}"
            if reply is None:
                report.add("handshake", what, False, problem)
                if program.process.poll() is not None:
                    break
                continue
            if reply["type"] == "error":
                ok = reply.get("code") == "wrong_game"
                report.add("handshake", what, ok, "declined (wrong_game)" if ok else
                           f"an error reply must have code 'wrong_game' for a game the bot does not play, got {reply}")
                continue
            problems = _hello_problems(reply, game)
            report.add("handshake", what, not problems, "; ".join(problems))
            if not problems:
                playable.append(game)
        if playable and program.process.poll() is None:
            _check_errors(program, playable[-1], report, move_timeout)
        if program.process.poll() is None:
            reply, problem = program.ask(json.dumps({"type": "quit"}), move_timeout)
            ok = reply is not None and reply["type"] == "ok"
            report.add("quit", "quit is answered ok", ok, problem or ("" if ok else f"got {reply}"))
            try:
                program.process.wait(timeout=5)
                report.add("quit", "the program exits after quit", True)
            except subprocess.TimeoutExpired:
                report.add("quit", "the program exits after quit", False, "still running 5 s after quit")
    finally:
        program.stop()
    for game in playable:
        _check_games(command, game, games_each, move_timeout, seed, report, sandbox, start_timeout)
    if not playable:
        report.add("games", "plays at least one game", False, "the program accepted none of: "
                   + ", ".join(game.env_name for game in targets))
    return report


def _hello_problems(reply: dict[str, Any], game: Any) -> list[str]:
    problems = []
    if reply["type"] != "hello":
        problems.append(f"expected a 'hello' or 'error' reply, got {reply['type']!r}")
        return problems
    if reply.get("protocol") != PROTOCOL:
        problems.append(f"'protocol' must be {PROTOCOL}, got {reply.get('protocol')!r}")
    if not isinstance(reply.get("name"), str) or not reply.get("name"):
        problems.append("'name' must be a non-empty string")
    listed = reply.get("games")
    if not isinstance(listed, list) or game.env_name not in listed:
        problems.append(f"'games' must be a list naming {game.env_name}, got {listed!r}")
    return problems


def _check_errors(program: _Program, game: Any, report: Report, timeout: float) -> None:
    """Bad requests get error replies, and the bot serves on."""
    program.ask(_hello(game, game.make_config()), timeout)
    for line, code, what in (("this is not json", "bad_json", "a line that is not JSON"),
                             (json.dumps({"type": "dance"}), "bad_request", "an unknown request type")):
        reply, problem = program.ask(line, timeout)
        ok = reply is not None and reply["type"] == "error"
        detail = problem or ("" if ok else f"expected an error reply, got {reply}")
        if ok and reply.get("code") != code:
            detail = f"answered with code {reply.get('code')!r}; the protocol's code for this is {code!r}"
        report.add("errors", f"{what} gets an error reply", ok, detail)
        if program.process.poll() is not None:
            report.add("errors", "the bot keeps serving after an error", False, "the program exited")
            return
    reply, problem = program.ask(json.dumps({"type": "new_game", "seat": 0, "seed": 1}), timeout)
    ok = reply is not None and reply["type"] == "ok"
    report.add("errors", "the bot keeps serving after an error", ok, problem or ("" if ok else f"got {reply}"))


def _check_games(command: str, game: Any, count: int, move_timeout: float, seed: int, report: Report,
                 sandbox: Limits | None = None, start_timeout: float = 30.0) -> None:
    from ..agents import load_bot
    from ..agents.external import ExternalBot
    from ..envs.make import make_env
    from .guard import Forfeit, Guard
    from .loop import play_game

    config = game.make_config()
    seats = game.rules.num_seats(config)
    bot = ExternalBot(config, seed, command, game, sandbox=sandbox)
    bot.move_timeout = move_timeout
    bot.start_timeout = start_timeout  # the handshake's limit here too: a program starts afresh for the games
    env = make_env(game, config)
    played = 0
    try:
        for number in range(count):
            seat = number % seats
            players = [Guard(load_bot("random", game, config, seed + number * seats + s), s, seed + s, env)
                       for s in range(seats)]
            players[seat] = Guard(bot, seat, seed + number, env)
            try:
                returns, _ = play_game(env, players, seed + number)
                bot.game_over([float(r) for r in returns], seat)
                report.add("games", f"{game.env_name} game {number + 1} (seat {seat})", True)
                played += 1
            except Forfeit as lost:
                report.add("games", f"{game.env_name} game {number + 1} (seat {seat})", False,
                           f"{lost.kind}: {lost.reason}")
            except Exception as error:  # noqa: BLE001 - game_over's failure is a violation like any other
                report.add("games", f"{game.env_name} game {number + 1} (seat {seat})", False,
                           f"{getattr(error, 'kind', type(error).__name__)}: {getattr(error, 'reason', error)}")
    finally:
        bot.close()
    report.games_played[game.env_name] = played


def print_report(report: Report) -> None:
    from rich.console import Console

    console = Console()
    stage = None
    for check in report.checks:
        if check.stage != stage:
            stage = check.stage
            console.print(f"[bold]{stage}[/]")
        mark = "[green]ok[/]  " if check.ok else "[red]FAIL[/]"
        console.print(f"  {mark} {check.what}" + (f": {check.detail}" if check.detail else ""), highlight=False)
    bad = report.violations
    verdict = "[green]compliant[/]" if not bad else f"[red]{len(bad)} violation(s)[/]"
    console.print(f"{report.command}: {verdict} ({len(report.checks)} checks)", highlight=False)


def run_check(args: argparse.Namespace) -> int:
    if not args.command:
        raise ValueError("tavernzoo bot check needs the program: tavernzoo bot check 'python my_bot.py'")
    sandbox = None if getattr(args, "sandbox", None) is None else Limits.parse(args.sandbox)
    if not args.start_timeout > 0:  # nan too
        raise ValueError(f"--start-timeout {args.start_timeout:g} must be above 0 (seconds)")
    if not args.move_timeout > 0:
        raise ValueError(f"--move-timeout {args.move_timeout:g} must be above 0 (seconds)")
    report = check_program(args.command, args.game or None, args.games, args.move_timeout,
                           start_timeout=args.start_timeout, sandbox=sandbox)
    print_report(report)
    return 1 if report.violations else 0
