"""External bots: any program that speaks the bot protocol (docs/bot-protocol.md) over stdin/stdout.

``load_bot("cmd:PROGRAM ARGS", game)`` returns an :class:`ExternalBot`. The program is started
(``shlex.split`` of the command, no shell) when its first game begins, greeted with ``hello`` and then
told about every game (``new_game``), every decision (``act``) and every result (``game_over``).

Every reply must arrive within a time limit (``move_timeout`` seconds for ``act``, ``start_timeout`` for
the handshake); the program's stdout is read by a thread, so a hung program never blocks the host.
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

import collections
import json
import queue
import random
import shlex
import subprocess
import threading
from typing import Any

import numpy as np

PROTOCOL = 1


class BotFailure(RuntimeError):
    """An external bot crashed, timed out or broke the protocol; ``kind`` says which, ``reason`` how."""

    def __init__(self, kind: str, reason: str):
        super().__init__(f"{kind}: {reason}")
        self.kind = kind  # "crash", "timeout", "garbage", "protocol", "illegal" or "start"
        self.reason = reason


class ExternalBot:
    """A bot played by an external program over JSON lines (see the module docstring)."""

    move_timeout: float = 10.0
    start_timeout: float = 30.0

    def __init__(self, config: Any, seed: int | None, command: str, game: Any):
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("cmd: bot spec names no program; write cmd:PROGRAM ARGS")
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
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._view: dict[str, Any] | None = None
        self._wants_information_state = False
        self._information_state: dict[str, Any] | None = None
        self._started_once = False

    # --- the Bot protocol ---------------------------------------------------------------------------

    def reset(self) -> None:
        """A new game begins: (re)start the program if needed, then send ``new_game``."""
        self._ensure_started()
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
        reply = self._expect(self._request(message, self.move_timeout), "action")
        return self._action_index(reply, legal)

    # --- optional hooks the tournament runner uses ------------------------------------------------------

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        """Start a game at ``seat``; ``seed`` (when given) reseeds the seeds sent in ``new_game``."""
        self.seat = seat
        if seed is not None:
            self._random = random.Random(seed)
        self.reset()

    def observe_view(self, view: dict[str, Any]) -> None:
        """Send ``view`` with the next ``act`` request."""
        self._view = view

    def observe_information_state(self, state: Any, seat: int) -> None:
        """Send the seat's information state with the next ``act``, if the program asked for it in its
        ``hello`` reply (search bots do; docs/search.md)."""
        if self._wants_information_state:
            from .infoset import state_to_json

            self._information_state = state_to_json(state)

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
                self._send({"type": "quit"})
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
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, encoding="utf-8", errors="replace", bufsize=1,
            )
        except OSError as error:
            self._process = None
            raise BotFailure("start", f"cannot start {self.argv[0]!r}: {error}") from None
        self._lines = queue.Queue()
        self._stderr.clear()
        threading.Thread(target=_pump, args=(self._process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=_drain, args=(self._process.stderr, self._stderr), daemon=True).start()
        hello = {"type": "hello", "protocol": PROTOCOL, "game": self.game.name, "env": self.game.env_name,
                 "config": _config_dict(self.config)}
        reply = self._expect(self._request(hello, self.start_timeout), "hello")
        self.program_name = str(reply.get("name") or self.argv[0])
        wants = reply.get("wants")
        self._wants_information_state = isinstance(wants, list) and "information_state" in wants

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
            pass
        for stream in (process.stdin, process.stdout, process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _fail(self, kind: str, reason: str) -> BotFailure:
        """Kill the program (it is restarted before the next game) and build the exception to raise."""
        tail = " | ".join(self._stderr)
        self._kill()
        return BotFailure(kind, reason + (f"; stderr: {tail}" if tail and kind in ("crash", "start") else ""))

    def _send(self, message: dict[str, Any]) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            raise self._fail("crash", f"{self.argv[0]} is not running (exit status "
                             f"{None if process is None else process.returncode})")
        try:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise self._fail("crash", f"{self.argv[0]} stopped reading its input ({error})") from None

    def _request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._send(message)
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise self._fail("timeout", f"no reply to {message['type']!r} within {timeout:g} s") from None
        if line is None:
            process = self._process
            code = process.wait(timeout=5.0) if process is not None else None
            raise self._fail("crash", f"{self.argv[0]} exited (status {code}) before answering {message['type']!r}")
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise self._fail("garbage", f"reply to {message['type']!r} is not JSON: {line[:80]!r}") from None
        if not isinstance(reply, dict) or "type" not in reply:
            raise self._fail("garbage", f"reply to {message['type']!r} is not a message object: {line[:80]!r}")
        return reply

    def _expect(self, reply: dict[str, Any], kind: str) -> dict[str, Any]:
        if reply["type"] == kind:
            return reply
        if reply["type"] == "error":
            detail = f"{reply.get('code')}: {reply.get('error')}"
            raise self._fail("protocol", f"the bot answered an error where {kind!r} was expected ({detail})")
        raise self._fail("protocol", f"expected a {kind!r} reply, got {reply['type']!r}")

    def _action_index(self, reply: dict[str, Any], legal: list[int]) -> int:
        name, index = reply.get("action"), reply.get("index")
        if name is None and index is None:
            raise self._fail("protocol", "the action reply names neither 'action' nor 'index'")
        from_name = None
        if name is not None:
            if not isinstance(name, str) or name not in self.action_names:
                raise self._fail("illegal", f"no such action {name!r}")
            from_name = self.action_names.index(name)
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.action_names):
                raise self._fail("illegal", f"no such action index {index!r}")
            if from_name is not None and from_name != index:
                raise self._fail("protocol", f"'action' {name!r} and 'index' {index} disagree")
        chosen = from_name if from_name is not None else index
        if chosen not in legal:
            legal_names = ", ".join(self.action_names[i] for i in legal)
            raise self._fail("illegal", f"{self.action_names[chosen]!r} is not legal now; legal: {legal_names}")
        return chosen


def _pump(stream, lines: queue.Queue) -> None:
    """Move the program's stdout lines into ``lines``; None marks the end of the stream."""
    try:
        for line in stream:
            lines.put(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
    lines.put(None)


def _drain(stream, tail: collections.deque) -> None:
    """Keep the last lines of the program's stderr (they go into crash reports)."""
    try:
        for line in stream:
            tail.append(line.rstrip("\n"))
    except (OSError, ValueError):
        pass


def _config_dict(config: Any) -> dict[str, Any]:
    from ..envs.core import config_to_dict

    return config_to_dict(config)


__all__ = ["BotFailure", "ExternalBot"]
