"""Any tavernzoo bot behind the bot protocol (docs/bot-protocol.md): JSON lines on stdin/stdout, or HTTP.

``tavernzoo bot BOT_SPEC`` answers one JSON line on stdout for every request line on stdin (anything else
the process prints goes to stderr); ``tavernzoo serve --bot BOT_SPEC --port P`` answers ``POST /`` with
the same replies and ``GET /`` with the ``hello`` reply, on 127.0.0.1 unless ``--host`` says otherwise,
through the web app's ASGI server (:mod:`tavernzoo.web`: many clients at once, bounded requests and
time-outs); ``tavernzoo web --bot BOT_SPEC`` serves the same at ``/bot`` beside the page.
``BOT_SPEC`` is anything :func:`tavernzoo.agents.load_bot` takes (``heuristic``, ``zoo:GAME``,
``BOT.onnx``, a training checkpoint, ...); the bot is built for the game and options the ``hello`` names.

Every problem with a request gets an ``error`` reply naming it, and the bot keeps serving: ``bad_json``,
``bad_request``, ``wrong_game``, ``illegal_state`` and ``oversize`` (a request over 1 MiB).

HTTP is stateless, so the server keeps one protocol session per ``"session"`` string that requests may
carry (an extension of the protocol; absent means ``""``): one frontend needs nothing extra, several
frontends sharing a server name their sessions. The newest :data:`MAX_SESSIONS` sessions are kept, and
``quit`` over HTTP ends its session, not the server.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from ..agents.base import as_bot
from ..agents.infoset import WANTS_HISTORY, WANTS_INFORMATION_STATE, state_from_json
from ..agents.spec import BotSpec
from ..envs import games, get_game
from ..envs.registry import earlier_versions
from .table import tell_game_begins, tell_game_over

PROTOCOL = 1
MAX_REQUEST = 1 << 20  # bytes of one request line or body
MAX_SESSIONS = 64
REQUEST_TYPES = ("hello", "new_game", "act", "game_over", "quit")


class ProtocolError(Exception):
    """A request the bot must answer with an error reply (``code`` as in docs/bot-protocol.md)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


BOT_FAILED = "bot_failed"
"""The error code of tavernzoo's HTTP server when the bot it serves fails (HTTP status 502)."""


def error_reply(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "error": message}


def spec_envs(spec: str | BotSpec) -> list[str]:
    """The env names ``spec`` can play (all games for ``cmd:``, ``mcts`` and ``llm:``); ValueError if it names no
    bot at all."""
    from ..agents import builtin_bots

    spec = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    if spec.kind == "zoo":
        from ..agents.onnx_bot import read_manifest, zoo_bots

        bots = zoo_bots()
        if spec.name not in bots:  # a served zoo bot is named: no game is played yet to stand for ``zoo:``
            raise ValueError(f"there is no zoo bot for {spec.name!r}; available: {', '.join(bots) or 'none'}")
        return [read_manifest(bots[spec.name])["env"]]
    if spec.kind == "onnx":
        from ..agents.onnx_bot import read_manifest

        return [read_manifest(spec.name)["env"]]
    if spec.kind == "cmd":
        from ..agents.external import parse_command

        parse_command(spec.name)
    if spec.kind == "llm":
        from ..agents.llm import parse_llm_spec

        parse_llm_spec(spec.format())  # a bad spec fails at startup, not at the first hello
    if spec.kind == "mcts":
        from ..agents.mcts import parse_options

        parse_options(spec, "")  # bad options fail at startup, not at the first hello
    if spec.traits.every_game:
        return [game.env_name for game in games().values()]
    if spec.kind == "level":
        from ..agents.levels import level_spec

        playable = [game for game in games().values() if _has_level(spec, game)]
        if not playable:
            level_spec(spec, next(iter(games().values())))  # the error naming the levels
        return [game.env_name for game in playable]
    path = Path(spec.name)
    if path.exists():
        from ..agents.policy import find_policy_dir, read_policy_meta

        meta = read_policy_meta(find_policy_dir(path) / "policy.json")
        return [meta.get("env", "?")]
    envs = [game.env_name for game in [*games().values(), *earlier_versions().values()]
            if spec.mode is None and spec.name in builtin_bots(game)]
    if not envs:
        raise ValueError(f"unknown bot spec {str(spec)!r}; valid: random, heuristic (or a game's other built-in bots), "
                         "level:1..5, zoo:GAME, BOT.onnx, a training run or checkpoint, cmd:PROGRAM, mcts[:OPTIONS], "
                         "llm:MODEL@URL")
    return envs


def _has_level(spec: BotSpec, game: Any) -> bool:
    from ..agents.levels import level_spec

    try:
        level_spec(spec, game)
    except ValueError:
        return False
    return True


class BotSession:
    """One host's conversation with the bot: ``handle(request) -> reply`` (see the protocol doc)."""

    def __init__(self, spec: str, envs: list[str] | None = None):
        self.spec = spec
        self.parsed = BotSpec.parse(spec)
        self.envs = envs if envs is not None else spec_envs(self.parsed)
        self.game: Any = None
        self.config: Any = None
        self.bot: Any = None
        self.seat: int | None = None
        self.names: list[str] = []
        self.size = 0
        self.seats = 0
        self.finished = False

    def hello_reply(self) -> dict[str, Any]:
        name = getattr(self.bot, "name", None) or self.spec
        envs = [self.game.env_name] if self.game is not None else self.envs
        reply = {"type": "hello", "protocol": PROTOCOL, "name": name, "games": envs}
        if self.bot is not None and self.bot.wants_information_state:  # a search bot (docs/search.md)
            reply["wants"] = [WANTS_INFORMATION_STATE]
            if self.bot.wants_history:  # a search with a belief weighs the others' moves
                reply["wants"].append(WANTS_HISTORY)
        return reply

    def handle_line(self, line: bytes | str) -> dict[str, Any]:
        """The reply to one raw request (a line without or with its newline)."""
        raw = line.encode() if isinstance(line, str) else line
        if len(raw.rstrip(b"\r\n")) > MAX_REQUEST:
            return error_reply("oversize", f"a request may be at most {MAX_REQUEST} bytes; this one has {len(raw)}")
        try:
            request = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            return error_reply("bad_json", f"the request is not JSON ({error}); send one JSON object per line")
        return self.handle(request)

    def handle(self, request: Any) -> dict[str, Any]:
        """The reply to one parsed request."""
        try:
            if not isinstance(request, dict):
                raise ProtocolError("bad_request", f"a request must be a JSON object, not {type(request).__name__}")
            kind = request.get("type")
            if kind not in REQUEST_TYPES:
                raise ProtocolError("bad_request", f"unknown request type {kind!r}; valid: {', '.join(REQUEST_TYPES)}")
            if kind != "hello" and self.game is None and kind != "quit":
                raise ProtocolError("illegal_state", f"{kind!r} before 'hello': the first request must be hello")
            return getattr(self, f"_{kind}")(request)
        except ProtocolError as error:
            return error_reply(error.code, str(error))

    # -- the requests --

    def _hello(self, request: dict[str, Any]) -> dict[str, Any]:
        protocol = request.get("protocol", PROTOCOL)
        if protocol != PROTOCOL:
            raise ProtocolError("bad_request", f"this bot speaks protocol {PROTOCOL}, not {protocol!r}")
        name, env = request.get("game"), request.get("env")
        if name is None and env is None:
            raise ProtocolError("bad_request", "hello must name the 'game' or the 'env' (e.g. tiny_minotaur_v1)")
        if not all(isinstance(v, str | None) for v in (name, env)):
            raise ProtocolError("bad_request", "'game' and 'env' must be strings")
        config = request.get("config")
        if config is not None and not isinstance(config, dict):
            raise ProtocolError("bad_request", "'config' must be an object of game options (or absent)")
        if name is None and env.rpartition("_v")[0] in games():
            name = env.rpartition("_v")[0]  # so that an unknown version of a known game is named as such
        try:
            game = get_game(name if name is not None else env)
            if env is not None and env != game.env_name:
                earlier = earlier_versions().get(env)  # a version the game still plays (ministeel_v1)
                if earlier is None or earlier.name != game.name:
                    raise ValueError(f"{env} is not an env this tavernzoo has; {game.name} is {game.env_name}")
                game = earlier
            if game.env_name not in self.envs:
                raise ValueError(f"{self.spec} plays {', '.join(self.envs)}, not {game.env_name}")
            config = game.make_config(config)
            bot = self._load(game, config, None)
        except (ValueError, TypeError) as error:
            raise ProtocolError("wrong_game", str(error)) from None
        self.close()  # the bot of the game before, if any
        self.game, self.config, self.bot, self.seat = game, config, bot, None
        self.names = list(game.action_names(config))
        self.size = game.encoder.observation_size(config)
        self.seats = game.rules.num_seats(config)
        return self.hello_reply()

    def _load(self, game: Any, config: Any, seed: int | None) -> Any:
        from ..agents import load_bot

        return as_bot(load_bot(self.parsed, game, config, seed))

    def _new_game(self, request: dict[str, Any]) -> dict[str, Any]:
        seat, seed = request.get("seat"), request.get("seed")
        if not _is_int(seat) or not 0 <= seat < self.seats:
            raise ProtocolError("bad_request", f"new_game needs 'seat', an integer from 0 to {self.seats - 1}")
        if seed is not None and not _is_int(seed):
            raise ProtocolError("bad_request", "'seed' must be an integer (or absent)")
        if seed is not None and not self.parsed.traits.program:
            # A fresh bot per seeded game makes a bot's own randomness reproducible from the host's seed.
            self.close()
            self.bot = self._load(self.game, self.config, seed)
        # The served bot hears the game as under any host (eval/table.py): its seat, and the host's seed (a
        # program passes it on in its own new_game).
        tell_game_begins({seat: self.bot}, {seat: seed})
        self.seat = seat
        return {"type": "ok"}

    def _act(self, request: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        self._check_game(request)
        if self.seat is None:
            raise ProtocolError("illegal_state", "'act' before 'new_game': start a game first")
        seat = request.get("seat", self.seat)
        if seat != self.seat:
            raise ProtocolError("illegal_state", f"this bot plays seat {self.seat} in this game, not {seat!r}")
        observation = request.get("observation")
        if not isinstance(observation, list) or len(observation) != self.size or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in observation):
            raise ProtocolError("bad_request", f"'observation' must be a list of {self.size} finite numbers "
                                f"({self.game.env_name}'s observation vector; this bot acts on it, not on the view)")
        if min(observation) < 0.0 or max(observation) > 1.0:
            raise ProtocolError("illegal_state", "observation values lie in [0, 1]; this one has values outside")
        mask = self._mask(request)
        if not mask.any():
            raise ProtocolError("illegal_state", "the action mask has no legal action: nothing to decide")
        if "information_state" in request and self.bot.wants_information_state:
            try:
                info = state_from_json(self.game, self.config, request["information_state"])
            except (ValueError, TypeError) as error:
                raise ProtocolError("bad_request", str(error)) from None
            self.bot.observe_information_state(info, self.seat)
        if "history" in request and self.bot.wants_history:
            self.bot.observe_history(self._history(request["history"]))
        try:
            index = int(self.bot.act({"observation": np.asarray(observation, dtype=np.float32), "action_mask": mask}))
        except (ValueError, IndexError, KeyError, TypeError, AttributeError) as error:
            raise ProtocolError("illegal_state", f"the bot cannot act on this state: {error}") from None
        if not (0 <= index < len(mask) and mask[index]):
            raise ProtocolError("illegal_state", f"the bot chose {index}, which this state does not allow")
        return {"type": "action", "action": self.names[index], "index": index}

    def _history(self, moves: Any) -> list[tuple[int, int]]:
        """The ``history`` of an ``act`` request: ``[[seat, action index], ...]`` (-1: a move the seat did not see)."""
        if not isinstance(moves, list) or not all(
                isinstance(move, list) and len(move) == 2 and all(type(v) is int for v in move)
                and 0 <= move[0] < self.seats and -1 <= move[1] < len(self.names) for move in moves):
            raise ProtocolError("bad_request", f"'history' must be a list of [seat, action index] pairs (seats "
                                f"0..{self.seats - 1}, actions -1..{len(self.names) - 1})")
        return [(move[0], move[1]) for move in moves]

    def _mask(self, request: dict[str, Any]) -> Any:
        import numpy as np

        given, legal = request.get("action_mask"), request.get("legal_actions")
        if given is None and legal is None:
            raise ProtocolError("bad_request", "'act' needs 'action_mask' or 'legal_actions'")
        mask = None
        if given is not None:
            if not isinstance(given, list) or len(given) != len(self.names) or not all(v in (0, 1) for v in given):
                raise ProtocolError("bad_request", f"'action_mask' must be a list of {len(self.names)} zeros and ones")
            mask = np.asarray(given, dtype=np.int8)
        if legal is not None:
            if not isinstance(legal, list) or not all(isinstance(v, str) for v in legal):
                raise ProtocolError("bad_request", "'legal_actions' must be a list of action names")
            unknown = [v for v in legal if v not in self.names]
            if unknown:
                raise ProtocolError("bad_request",
                                    f"unknown action name(s) {', '.join(unknown)} in {self.game.env_name}")
            from_names = np.zeros(len(self.names), dtype=np.int8)
            from_names[[self.names.index(v) for v in legal]] = 1
            if mask is not None and not np.array_equal(mask, from_names):
                raise ProtocolError("illegal_state", "'action_mask' and 'legal_actions' disagree")
            mask = from_names
        return mask

    def _game_over(self, request: dict[str, Any]) -> dict[str, Any]:
        returns = request.get("returns")
        if returns is not None and (not isinstance(returns, list)
                                    or not all(isinstance(v, int | float) for v in returns)):
            raise ProtocolError("bad_request", "'returns' must be a list of numbers, one per seat")
        if self.seat is not None:
            # The game is over either way: a bot failing to hear it is not the host's error.
            tell_game_over({self.seat: self.bot}, returns, failures_ignored=True)
        self.seat = None
        return {"type": "ok"}

    def _quit(self, request: dict[str, Any]) -> dict[str, Any]:
        self.close()
        self.finished = True
        return {"type": "ok"}

    def close(self) -> None:
        """Let the served bot go (a ``cmd:`` program is told to quit)."""
        if self.bot is not None:
            self.bot.close()

    def _check_game(self, request: dict[str, Any]) -> None:
        for key, expected in (("game", self.game.name), ("env", self.game.env_name)):
            if key in request and request[key] != expected:
                raise ProtocolError("wrong_game", f"this session plays {expected}, not {request[key]!r}; "
                                    "send a new hello to change games")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- JSON lines over stdin/stdout -------------------------------------------------------------------------


def serve_stdio(spec: str, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Answer requests from ``stdin`` on ``stdout`` until ``quit`` or the end of input."""
    session = BotSession(spec)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    saved, sys.stdout = sys.stdout, sys.stderr  # whatever a bot prints must not corrupt the replies
    try:
        while True:
            line = stdin.readline(MAX_REQUEST + 2)
            if not line:
                session.close()  # the host went away without quit
                return 0
            if len(line) > MAX_REQUEST + 1:
                size = len(line)
                while line and not line.endswith(b"\n"):  # skip the rest of the oversize line
                    line = stdin.readline(1 << 16)
                    size += len(line)
                reply = error_reply("oversize", f"a request may be at most {MAX_REQUEST} bytes; this one has {size}")
            elif not line.strip():
                continue
            else:
                reply = session.handle_line(line)
            if reply["type"] == "error":
                print(f"bot: {reply['code']}: {reply['error']}", file=sys.stderr)
            stdout.write(json.dumps(reply) + "\n")
            stdout.flush()
            if session.finished:
                return 0
    finally:
        sys.stdout = saved


# --- HTTP -------------------------------------------------------------------------------------------------


class BotSessions:
    """The protocol sessions of one bot spec served over HTTP, one per ``"session"`` key (the newest
    :data:`MAX_SESSIONS` kept). Thread-safe: requests of different sessions are answered concurrently,
    those of one session one at a time. The web app (:mod:`tavernzoo.web.app`) serves it."""

    def __init__(self, spec: str):
        self.spec = spec
        self.envs = spec_envs(spec)
        self.sessions: OrderedDict[str, tuple[threading.Lock, BotSession]] = OrderedDict()
        self.lock = threading.Lock()

    def hello(self) -> dict[str, Any]:
        """The reply to ``GET``: the ``hello`` reply of a fresh session."""
        return BotSession(self.spec, self.envs).hello_reply()

    def _session(self, key: str) -> tuple[threading.Lock, BotSession]:
        dropped: list[tuple[threading.Lock, BotSession]] = []
        with self.lock:
            if key not in self.sessions:
                self.sessions[key] = (threading.Lock(), BotSession(self.spec, self.envs))
                while len(self.sessions) > MAX_SESSIONS:
                    dropped.append(self.sessions.popitem(last=False)[1])
            self.sessions.move_to_end(key)
            found = self.sessions[key]
        for lock, session in dropped:  # its bot goes with it (a cmd: program quits), once its request is answered
            with lock:
                session.close()
        return found

    def close(self) -> None:
        """Let every session's bot go (the server stops)."""
        with self.lock:
            sessions, self.sessions = list(self.sessions.values()), OrderedDict()
        for lock, session in sessions:
            with lock:
                session.close()

    def answer(self, body: bytes) -> dict[str, Any]:
        """The reply to one POSTed body."""
        try:
            request = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            return error_reply("bad_json", f"the request body is not JSON ({error}); POST one JSON object")
        key = request.get("session", "") if isinstance(request, dict) else ""
        if not isinstance(key, str):
            return error_reply("bad_request", "'session' must be a string")
        lock, session = self._session(key)
        with lock:
            try:
                reply = session.handle(request)
            except Exception as error:  # noqa: BLE001 - a failure of the served bot is the client's answer
                if not hasattr(error, "kind") or not hasattr(error, "reason"):
                    raise  # not the bot's failure (a BotFailure or an LLM's): a bug, for the server's log
                # A cmd: program that crashed, hung or stopped reading: it is restarted at the next new_game.
                reply = error_reply(BOT_FAILED, f"the served bot failed ({error.kind}): {error.reason}")
        if session.finished:  # 'quit' over HTTP ends the session, not the server
            with self.lock:
                if self.sessions.get(key, (None, None))[1] is session:
                    del self.sessions[key]
        return reply
