"""External bots: any program that speaks the bot protocol (docs/bot-protocol.md) over stdin/stdout.

``sandbox=Limits(...)`` (the spec ``sandbox[LIMITS]:cmd:...``, ``--sandbox``) runs the program confined
(:mod:`.sandbox`, docs/sandbox.md): a limit it breaks becomes the failure's kind (``memory``,
``processes``, ``cpu``), whatever the host saw first.

``load_bot("cmd:PROGRAM ARGS", game)`` returns an :class:`ExternalBot`. The program is started
(``shlex.split`` of the command, no shell) when its first game begins, greeted with ``hello`` and then
told about every game (``new_game``), every decision (``act``) and every result (``game_over``).

Every request must be taken and answered within a time limit (``move_timeout`` seconds for ``act``,
``start_timeout`` for the handshake): the limit covers writing the request and reading the reply together.
The program's stdout is read by a thread and its stdin is written without blocking (:func:`write_within`),
so a hung program, or one that stopped reading its input with the pipe full, never blocks the host.
Whatever the program writes, the host's memory stays bounded: stdout is read in chunks, a line longer
than ``MAX_LINE_BYTES`` is refused (``garbage``) without being held, at most ``MAX_PENDING_LINES``
unanswered lines wait (then the reader stops reading, so the program blocks on its own output), only
the last ``STDERR_TAIL_BYTES`` of stderr are kept, and every failure reason is cut to ``MAX_REASON_CHARS``.
A program that exits, times out, answers something that is not JSON, out of protocol, or an action that
is not legal in the current state raises :class:`BotFailure`; the program is then killed and started
afresh before its next game (``restarts`` counts how often).

The ``act`` request carries the observation, the action mask and the legal action names. The match
loop hands bots only the observation dict, so the ``view`` (``env.unwrapped.view(agent)``) is sent only
when the host called :meth:`ExternalBot.observe_view` before ``act`` (the tournament runner does);
otherwise it is omitted. The seat in ``new_game`` is :attr:`ExternalBot.seat` (the tournament runner
sets it through :meth:`ExternalBot.begin_game`; a plain ``reset()`` reuses the last one, 0 at first).
"""

from __future__ import annotations

import json
import os
import queue
import random
import select
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from .base import BotBase
from .sandbox import Limits, Sandbox, SandboxUnavailable, available

PROTOCOL = 1
MAX_LINE_BYTES = 1 << 20
"""The longest reply line accepted (a reply is a small JSON object; this leaves room for long names)."""
MAX_PENDING_LINES = 64
"""Lines read ahead of the host's requests before the reader stops reading."""
STDERR_TAIL_BYTES = 2000
"""The end of the program's stderr kept for crash reports; the rest is read and dropped."""
MAX_REASON_CHARS = 500
"""Failure reasons (logged, written to games.jsonl and results.json) are cut to this length."""
_CHUNK = 1 << 16


def clip(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


class BotFailure(RuntimeError):
    """An external bot crashed, timed out or broke the protocol; ``kind`` says which, ``reason`` how."""

    def __init__(self, kind: str, reason: str):
        reason = clip(reason)
        super().__init__(f"{kind}: {reason}")
        # "crash", "timeout", "garbage", "protocol", "illegal", "start"; under a sandbox also "memory",
        # "processes" or "cpu" (agents/sandbox.py)
        self.kind = kind
        self.reason = reason


class ExternalBot(BotBase):
    """A bot played by an external program over JSON lines (see the module docstring)."""

    wants_view = True  # sent with the next act (a program may use it or not)
    move_timeout: float = 10.0
    start_timeout: float = 30.0

    def __init__(self, config: Any, seed: int | None, command: str, game: Any, sandbox: Limits | None = None):
        self.argv = parse_command(command)
        if sandbox is not None:
            available()  # one clear line here, before any game, where this machine cannot sandbox
        self.sandbox = sandbox
        self._sandbox: Sandbox | None = None
        self.command = command
        self.game = game
        self.config = config
        self.name = f"cmd:{command}"
        self.action_names = tuple(game.action_names(config))
        self.seat = 0
        self.restarts = 0
        self.program_name: str | None = None
        self._random = random.Random(seed)
        self._process: subprocess.Popen | None = None
        self._lines: queue.Queue | None = None
        self._stderr: _Tail = _Tail(STDERR_TAIL_BYTES)
        self._stderr_reader: threading.Thread | None = None
        self._stop_reading: threading.Event | None = None
        self._view: dict[str, Any] | None = None
        self._wants_information_state = False
        self._information_state: dict[str, Any] | None = None
        self._wants_history = False
        self._history: list[list[int]] | None = None
        self._started_once = False

    # --- the Bot protocol ---------------------------------------------------------------------------

    def reset(self) -> None:
        """A new game begins: (re)start the program if needed, then send ``new_game``."""
        self._ensure_started()
        if self._sandbox is not None:
            self._sandbox.start_game()
        self._view = None
        message = {"type": "new_game", "seat": self.seat, "seed": self._random.randrange(2**31)}
        self._expect(self._request(message, self.start_timeout), "ok")

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = [int(i) for i in np.flatnonzero(mask)]
        message: dict[str, Any] = {
            "type": "act",
            "seat": self.seat,
            "observation": np.asarray(observation["observation"], dtype=float).tolist(),
            "action_mask": [int(v) for v in mask],
            "legal_actions": [self.action_names[i] for i in legal],
        }
        if self._view is not None:
            message["view"] = self._view
            self._view = None
        if self._information_state is not None:
            message["information_state"] = self._information_state
            self._information_state = None
        if self._history is not None:
            message["history"] = self._history
            self._history = None
        reply = self._expect(self._request(message, self.move_timeout), "action")
        return self._action_index(reply, legal)

    # --- the hooks hosts call (agents/base.py) -----------------------------------------------------------

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        """Start a game at ``seat``; ``seed`` (when given) reseeds the seeds sent in ``new_game``."""
        self.seat = seat
        if seed is not None:
            self._random = random.Random(seed)
        self.reset()

    def observe_view(self, view: dict[str, Any]) -> None:
        """Send ``view`` with the next ``act`` request."""
        self._view = view

    @property
    def wants_information_state(self) -> bool:
        """Whether the program asked for information states; until its ``hello`` is in, it may."""
        return self._wants_information_state or self._process is None

    def observe_information_state(self, state: Any, seat: int) -> None:
        """Send the seat's information state with the next ``act``, if the program asked for it in its
        ``hello`` reply (search bots do; docs/search.md)."""
        if self._wants_information_state:
            from .infoset import state_to_json

            self._information_state = state_to_json(state)

    @property
    def wants_history(self) -> bool:
        """Whether the program asked for the moves so far (a search with a belief); until its ``hello`` is in,
        it may."""
        return self._wants_history or self._process is None

    def observe_history(self, moves: list[tuple[int, int]]) -> None:
        """Send the moves so far as the seat saw them (``[[seat, action index], ...]``, -1 for a move it did
        not see) with the next ``act``, if the program asked for them in its ``hello`` reply."""
        if self._wants_history:
            self._history = [[int(mover), int(action)] for mover, action in moves]

    def game_over(self, returns: Any, seat: int | None = None) -> None:
        """Tell the program the game ended (``returns`` per seat, or None after a forfeit)."""
        if not self.alive:
            return
        message = {"type": "game_over", "returns": returns, "seat": self.seat if seat is None else seat}
        self._expect(self._request(message, self.move_timeout), "ok")

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def close(self) -> None:
        """Send ``quit`` and stop the program (killed if it does not exit within a second)."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            try:
                self._send({"type": "quit"}, time.monotonic() + 1.0, 1.0)
                process.wait(timeout=1.0)
            except (BotFailure, subprocess.TimeoutExpired):
                pass
        self._kill()

    def __del__(self):
        try:
            self._kill()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    # --- the process --------------------------------------------------------------------------------

    def _ensure_started(self) -> None:
        if self.alive:
            return
        if self._process is not None:
            self._kill()
        if self._started_once:
            self.restarts += 1
        self._started_once = True
        argv = self.argv
        if self.sandbox is not None:
            self._sandbox = Sandbox(self.sandbox)
            try:
                argv = self._sandbox.wrap(self.argv)
            except SandboxUnavailable as error:  # a program it could not show (its folder is private)
                self._close_sandbox()
                raise BotFailure("start", str(error)) from None
        try:
            # Binary pipes, read in bounded chunks by the threads below (see the module docstring).
            self._process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
            )
        except OSError as error:
            self._process = None
            self._close_sandbox()
            raise BotFailure("start", f"cannot start {self.argv[0]!r}: {error}") from None
        os.set_blocking(self._process.stdin.fileno(), False)  # written by write_within, never blocked on
        self._lines = queue.Queue(maxsize=MAX_PENDING_LINES)
        self._stderr = _Tail(STDERR_TAIL_BYTES)
        self._stop_reading = threading.Event()
        threading.Thread(target=_pump, args=(self._process.stdout, self._lines, self._stop_reading),
                         daemon=True).start()
        self._stderr_reader = threading.Thread(target=_drain, args=(self._process.stderr, self._stderr), daemon=True)
        self._stderr_reader.start()
        hello = {"type": "hello", "protocol": PROTOCOL, "game": self.game.name, "env": self.game.env_name,
                 "config": _config_dict(self.config)}
        reply = self._expect(self._request(hello, self.start_timeout), "hello")
        self.program_name = clip(str(reply.get("name") or self.argv[0]), 100)
        wants = reply.get("wants")
        self._wants_information_state = isinstance(wants, list) and "information_state" in wants
        self._wants_history = isinstance(wants, list) and "history" in wants

    def _kill(self) -> None:
        process, self._process = self._process, None
        if self._stop_reading is not None:
            self._stop_reading.set()
        if process is None:
            self._close_sandbox()
            return
        if process.poll() is None:
            process.kill()
        self._close_sandbox()
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
            pass
        # Only stdin is closed here. The program's stdout and stderr belong to their reader threads, which
        # close them when they reach the end: closing them from this thread could free a descriptor that a
        # reader is about to read, and the next program's pipe may be given that number (its hello
        # reply would then vanish into the dead program's queue).
        try:
            if process.stdin is not None:
                process.stdin.close()
        except OSError:
            pass

    def _fail(self, kind: str, reason: str) -> BotFailure:
        """Kill the program (it is restarted before the next game) and build the exception to raise.

        A sandboxed program that broke a limit forfeits with the limit's name (``memory``, ``processes``,
        ``cpu``), whatever the failure the host saw first (its death, a time-out, a half-written line)."""
        breach = (self._sandbox.breach or self._sandbox.check()) if self._sandbox is not None else None
        if breach is not None:
            kind, reason = breach
        process, reader = self._process, self._stderr_reader
        if process is not None and process.poll() is not None and reader is not None:
            # A program that died has written all its stderr: let the reader reach the end of the pipe (on
            # a loaded machine it may still be a chunk behind), so the report holds the program's last words.
            reader.join(timeout=1.0)
        tail = self._stderr.text()
        self._kill()
        return BotFailure(kind, reason + (f"; stderr: {tail}" if tail and kind in ("crash", "start") else ""))

    def _close_sandbox(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()

    def _send(self, message: dict[str, Any], deadline: float, timeout: float) -> None:
        """Write ``message`` by ``deadline`` (``time.monotonic()``; ``timeout`` seconds from the request)."""
        process = self._process
        if process is None or process.poll() is not None:
            raise self._fail("crash", f"{self.argv[0]} is not running (exit status "
                             f"{None if process is None else process.returncode})")
        data = json.dumps(message).encode() + b"\n"
        try:
            written = write_within(process.stdin, data, deadline)
        except (BrokenPipeError, OSError, ValueError) as error:
            raise self._fail("crash", f"{self.argv[0]} stopped reading its input ({error})") from None
        if written < len(data):
            # Part of a line may be in the pipe; _fail kills the program, so no later request runs into it.
            raise self._fail("timeout", f"{self.argv[0]} did not read its input within {timeout:g} s ({written} "
                             f"of the {len(data)} bytes of {message['type']!r} taken)")

    def _request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout  # one limit for the write and the read
        sandbox = self._sandbox
        if sandbox is not None:
            sandbox.asked()
        self._send(message, deadline, timeout)
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if sandbox is not None:
                sandbox.answered()
        except queue.Empty:
            raise self._fail("timeout", f"no reply to {message['type']!r} within {timeout:g} s") from None
        if line is None:
            process = self._process
            code = process.wait(timeout=5.0) if process is not None else None
            raise self._fail("crash", f"{self.argv[0]} exited (status {code}) before answering {message['type']!r}")
        if isinstance(line, _TooLong):
            raise self._fail("garbage", f"reply to {message['type']!r} is a line longer than {MAX_LINE_BYTES} "
                             f"bytes: {line.start!r}...")
        try:
            reply = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise self._fail("garbage", f"reply to {message['type']!r} is not JSON: {line[:80]!r}") from None
        if not isinstance(reply, dict) or "type" not in reply:
            raise self._fail("garbage", f"reply to {message['type']!r} is not a message object: {line[:80]!r}")
        return reply

    def _expect(self, reply: dict[str, Any], kind: str) -> dict[str, Any]:
        if reply["type"] == kind:
            return reply
        if reply["type"] == "error":
            detail = clip(f"{reply.get('code')}: {reply.get('error')}", 200)
            raise self._fail("protocol", f"the bot answered an error where {kind!r} was expected ({detail})")
        raise self._fail("protocol", f"expected a {kind!r} reply, got {clip(repr(reply['type']), 100)}")

    def _action_index(self, reply: dict[str, Any], legal: list[int]) -> int:
        name, index = reply.get("action"), reply.get("index")
        if name is None and index is None:
            raise self._fail("protocol", "the action reply names neither 'action' nor 'index'")
        from_name = None
        if name is not None:
            if not isinstance(name, str) or name not in self.action_names:
                raise self._fail("illegal", f"no such action {clip(repr(name), 100)}")
            from_name = self.action_names.index(name)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.action_names):
                raise self._fail("illegal", f"no such action index {clip(repr(index), 100)}")
            if from_name is not None and from_name != index:
                raise self._fail("protocol", f"'action' {name!r} and 'index' {index} disagree")
        chosen = from_name if from_name is not None else index
        if chosen not in legal:
            legal_names = ", ".join(self.action_names[i] for i in legal)
            raise self._fail("illegal", f"{self.action_names[chosen]!r} is not legal now; legal: {legal_names}")
        return chosen


def write_within(stream: Any, data: bytes, deadline: float) -> int:
    """Write ``data`` to the non-blocking pipe ``stream`` until ``deadline`` (``time.monotonic()``); the bytes
    written, fewer than ``len(data)`` if the reader did not take them all in time.

    A program that stops reading its stdin fills the pipe (64 KiB, a few Wyvern requests); a blocking write
    would then wait for ever, whatever the time limit of the reply. BrokenPipeError when the reader is gone.
    """
    fd = stream.fileno()
    view = memoryview(data)
    poller = None
    while view:
        try:
            view = view[os.write(fd, view):]  # a full pipe takes part of a write, or nothing
            continue
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if poller is None:  # poll, not select: a busy host's descriptors may number more than 1024
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
        poller.poll(max(1, int(left * 1000)))  # room in the pipe, or the reader gone (the write then says so)
    return len(data) - len(view)


class _TooLong:
    """Stands in the line queue for a line longer than ``MAX_LINE_BYTES`` (``start`` is its beginning)."""

    def __init__(self, start: bytes):
        self.start = start.decode("utf-8", errors="replace")


def _pump(stream, lines: queue.Queue, stop: threading.Event) -> None:
    """Move the program's stdout lines into ``lines``; None marks the end of the stream.

    Reads bounded chunks and never holds more than one line of at most ``MAX_LINE_BYTES``; a longer line
    is queued as :class:`_TooLong` and dropped up to its end. A full queue stops the reading (the program
    then blocks on its output) until there is room or ``stop`` is set.
    """

    def put(item) -> bool:
        while not stop.is_set():
            try:
                lines.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    buffer = bytearray()
    skipping = False  # inside a line already reported as too long
    try:
        while not stop.is_set():
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            buffer += chunk
            start = 0
            while (end := buffer.find(b"\n", start)) >= 0:
                line, start = bytes(buffer[start:end]), end + 1
                if skipping:
                    skipping = False
                elif not put(line.decode("utf-8", errors="replace")):
                    return
            del buffer[:start]
            if len(buffer) > MAX_LINE_BYTES:
                if not skipping and not put(_TooLong(bytes(buffer[:80]))):
                    return
                skipping = True
                buffer.clear()
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
    put(None)


class _Tail:
    """The last ``size`` bytes written to a stream, as text."""

    def __init__(self, size: int):
        self.size = size
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.size:
            cut = len(self.data) - self.size
            self.dropped += cut
            del self.data[:cut]

    def text(self) -> str:
        lines = [line for line in self.data.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return ("..." if self.dropped else "") + " | ".join(lines)


def _drain(stream, tail: _Tail) -> None:
    """Read the program's stderr to its end, keeping only its last bytes (they go into crash reports)."""
    try:
        while chunk := stream.read(_CHUNK):
            tail.add(chunk)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


def parse_command(command: str) -> list[str]:
    """The argv of ``cmd:COMMAND`` (split as a shell would, without one), its program checked to exist."""
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ValueError(f"bot spec cmd:{command}: {error} (quote it as a shell would split it)") from None
    if not argv:
        raise ValueError("cmd: bot spec names no program; write cmd:PROGRAM ARGS")
    _check_program(argv[0])
    return argv


def _check_program(program: str) -> None:
    """Refuse (ValueError) a program that cannot be found, before any game is played."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        if not path.is_file():
            raise ValueError(f"cmd: bot program {program!r} not found: there is no such file")
        if not os.access(path, os.X_OK):
            raise ValueError(f"cmd: bot program {program!r} is not executable (chmod +x it, or name its "
                             "interpreter first: cmd:python3 bot.py)")
    elif shutil.which(program) is None:
        raise ValueError(f"cmd: bot program {program!r} not found on PATH; give its path or an installed "
                         "command (cmd:python3 my_bot.py)")


def _config_dict(config: Any) -> dict[str, Any]:
    from ..envs.core import config_to_dict

    return config_to_dict(config)


__all__ = ["BotFailure", "ExternalBot", "clip", "parse_command", "write_within"]
