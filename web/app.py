"""The web app (Starlette): the page, its JSON API, a live event stream, and the bot protocol over HTTP.

:func:`create_app` builds the one ASGI app both commands run: ``tavernzoo web`` serves the page at ``/``
(with the bot protocol at ``/bot`` when ``--bot`` names a bot) and ``tavernzoo serve --bot SPEC``
serves the bot protocol at ``/`` alone (docs/bot-protocol.md).

The API (JSON; every error is ``{"error": "a sentence"}`` with a 4xx status):

==========================================  ===========================================================
``GET /api/games``                          every game: options (as ``tavernzoo games``), seats, bots
``POST /api/tables``                        ``{"game", "config", "seats": ["human", "open", "heuristic",
                                            ...], "seed", "fallback", "clock"}``: a new table; its
                                            summary, the maker's seat ``token`` and the ``links`` (each
                                            open seat's token, the spectators'); a seed may be a string
                                            of digits, and is sent back as one: exact past 2^53;
                                            ``"answer_offers": true``: never ask the person at the game's
                                            declinable offers (as ``/act`` below), from the first one
``GET /api/lobby``                          the tables made with ``"lobby": true`` that have an open seat
``POST /api/tables/ID/join``                a lobby table's open seat: its ``token`` (the seat's link)
``GET /api/tables/ID``                      the summary: seats, status, steps (and result once over)
``GET /api/tables/ID/frames?since=N``       the frames after N: the person's own view after each step
                                            (any ``seat``'s view when the table is watched)
``GET /api/tables/ID/events``               server-sent events: the summary whenever the table changes
``POST /api/tables/ID/act``                 ``{"action": NAME, "step": N}``: the person's move; with
                                            ``"answer_offers": true`` (or false), with a move or alone, the
                                            table answers the game's declinable offers for the person
                                            (MiniSteel's Card Draw windows: keep the tokens) or asks again
``GET /api/tables/ID/record``               the game record (once over; a seat's token at a table of people)
``DELETE /api/tables/ID``                   close the table (its bots stop thinking)
``GET /api/tables/ID/cards``                each card's text under the table's options
``POST /api/tables/ID/rematch``             the same seats and options, a new deal
``GET /api/tables/ID/review?step=K&seat=S``  once over: step K from seat S's view (web/review.py)
``GET /api/tables/ID/review/marks?seat=S``   once over: seat S's decisions marked with their cost
``POST /api/tables/ID/branch``              ``{"step": K}``: a new table, the game replayed to step K
``POST /api/uploads``                       ``{"manifest": {...}, "onnx": BASE64}``: an exported bot;
                                            its spec (``upload:ID``) for the seats
``POST /api/replays``                       a records file (JSON or JSON lines) as the body
``GET /api/replays/ID/N?step=K&seat=S``     game N of a replay at step K from seat S
==========================================  ===========================================================

A table with people answers for a seat only to a request carrying that seat's token (header
``X-Table-Token``; the event stream's ``?token=``), and shows spectators (the spectator token) the public
frames alone; the table id alone reads no person's frames and plays no seat (docs/web.md).

Every table and replay lives in a bounded store and expires when unused; request bodies are bounded in
size and time (:mod:`tavernzoo.web.server` bounds the headers and idle connections). A finished table is kept
until its player has fetched the end; one client (an address) holds at most ``Limits.tables_per_client``
tables; a seat's search thinks at most ``max_think`` seconds a move (``--max-think``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import secrets
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..agents.spec import BotSpec
from ..envs import ReplayError, games, get_game
from ..envs.core import describe_options
from ..eval.bot_server import BOT_FAILED, MAX_REQUEST, BotSessions, error_reply
from ..eval.play import offers_of
from .review import BranchTable, branch_request, review_frame, review_marks
from .tables import (
    FALLBACK,
    PERSON_SEATS,
    SPECTATOR,
    THINK_SECONDS,
    Store,
    Table,
    TableError,
    Timeline,
    check_max_think,
    read_records,
    refuse_server_files,
    shown,
    within_budget,
)

STATIC = Path(__file__).resolve().parent / "static"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class Limits:
    """The bounds of one server (defaults fit one person's machine)."""

    body_bytes = 64 << 10  # an API request
    upload_bytes = 16 << 20  # an exported bot, or a records file
    body_seconds = 10.0  # to receive a whole request body
    tables = 64
    # One client (a remote address) holds at most this many tables that are in use: not finished and seen, nor
    # left unused for evict_idle_seconds. Without it one client could take every table in a second.
    tables_per_client = 16
    replays = 16
    uploads = 16  # uploaded bots kept on disk (each at most upload_bytes)
    records_per_replay = 10_000
    idle_seconds = 1800.0  # a table or replay unused this long is dropped
    # When the tables are full a new one replaces a finished table whose player has fetched the end, or one no
    # page has used this long (abandoned: an open page keeps its table in use); a game in play, or a finished one
    # whose player has not yet seen the end, is never dropped for a new one: the new one is refused instead.
    evict_idle_seconds = 300.0
    seen_seconds = 60.0  # a finished table whose player has the end may go once unused this long (the record read: now)
    stream_seconds = 300.0  # one event stream; the browser reconnects on its own
    spectators_per_table = 16  # spectator event streams open at once on one table
    absent_seconds = 45.0  # a person whose page sent nothing with their token this long is away (a stand-in plays)
    clock_seconds = (5.0, 3600.0)  # the least and the most a table's clock may give a move
    lobby_listed = 50  # tables the lobby lists at once
    frames_per_request = 64
    # The marks of a finished game's review (eval/review.py): the server's time for one seat's, at most once per
    # seat of a table (kept with it); the decisions not reached in it are left unmarked. No request sets it.
    review_seconds = 20.0


class BodyError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


async def read_body(request: Request, limit: int, seconds: float) -> bytes:
    """The request body, refused (413) past ``limit`` bytes and (408) when it takes over ``seconds``.

    An oversize body that is not much over the limit is read to its end and dropped before the 413 goes
    out: a client still sending when the server closes gets a broken pipe instead of the reply. Past
    ``DRAIN_FACTOR`` times the limit the connection is simply closed with the reply."""
    declared = request.headers.get("content-length")
    drain_limit = limit * DRAIN_FACTOR
    if declared is not None and declared.isdigit() and int(declared) > limit:
        if int(declared) <= drain_limit:
            await _drain(request, drain_limit, seconds)
        raise BodyError(413, f"a request may be at most {limit} bytes; this one has {declared}")
    chunks, size = [], 0
    try:
        with anyio.fail_after(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    break
                chunks.append(chunk)
    except TimeoutError:
        raise BodyError(408, f"the request body did not arrive within {seconds:g} s") from None
    except ClientDisconnect:
        raise BodyError(400, "the client went away before sending the whole body") from None
    if size > limit:
        await _drain(request, drain_limit - size, seconds)
        raise BodyError(413, f"a request may be at most {limit} bytes")
    return b"".join(chunks)


DRAIN_FACTOR = 4


async def _drain(request: Request, budget: int, seconds: float) -> None:
    """Read and drop up to ``budget`` more bytes of the body within ``seconds``; give up quietly past either."""
    try:
        with anyio.fail_after(seconds):
            async for chunk in request.stream():
                budget -= len(chunk)
                if budget < 0:
                    return
    except (TimeoutError, ClientDisconnect):
        return


def fail(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_json(request: Request, limit: int) -> Any:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        # A cross-site page cannot send application/json without the browser asking first (CORS), and
        # this server never says yes: only pages it serves itself can drive it.
        raise BodyError(415, "send the request as JSON (Content-Type: application/json)")
    body = await read_body(request, limit, Limits.body_seconds)
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise BodyError(400, f"the request body is not JSON ({error})") from None


def _is_local(spec: str, game: Any) -> bool:
    """Whether a spec may run a program or read a file on the server (:meth:`BotSpec.local`): all but a
    built-in bot of ``game``, a bundled ``zoo:`` bot and an ``mcts`` spec whose nested specs pass. Decided
    from the text alone: the disk is never asked whether a path exists."""
    from ..agents import builtin_bots
    from ..agents.onnx_bot import zoo_bots

    zoo = set(zoo_bots())
    if game.name in zoo:
        zoo.add("")  # zoo: alone is the game played
    return BotSpec.parse(spec).local(builtin_bots(game), zoo)


class WebState:
    """What one app holds: tables, replays, uploaded bots, and which bot specs the page may use."""

    def __init__(self, allow_local: bool, limits: type[Limits] = Limits, sandbox: str | None = None,
                 max_think: float = THINK_SECONDS):
        self.limits = limits
        self.allow_local = allow_local
        self.sandbox = sandbox
        """The limits every ``cmd:`` seat runs under (``--sandbox``), or None: programs run unconfined."""
        self.max_think = check_max_think(max_think)
        """The seconds a seat's search may think about one move (``--max-think``): the operator's, not a request's."""
        # A dropped table's programs are stopped in the background: stopping one may take a second.
        self.tables = Store(
            limits.tables, limits.idle_seconds, lambda table: _in_background(table.close),
            evictable=lambda table, idle: (table.released(idle, limits.seen_seconds)
                                           or idle > limits.evict_idle_seconds),
            full_message=f"the server is busy: it holds {limits.tables} games, the most it keeps at once, each in "
                         "play or finished and not yet seen by its player; try again in a minute (a game no page "
                         f"has used for {limits.evict_idle_seconds / 60:g} minutes makes room)")
        self.replays = Store(limits.replays, limits.idle_seconds, None)
        self._upload_dir: Path | None = None
        self._clock: threading.Thread | None = None
        self._clock_lock = threading.Lock()
        # An uploaded bot's folder goes with it: the disk holds at most ``limits.uploads`` of them.
        self.uploads = Store(limits.uploads, limits.idle_seconds,
                             lambda path: shutil.rmtree(path.parent, ignore_errors=True))

    def watch_people(self) -> None:
        """Start the thread that has a stand-in play for a person who is away or out of time (once a table
        with people exists; it stops with this state)."""
        with self._clock_lock:
            if self._clock is None:
                self._clock = threading.Thread(target=_stand_ins_play, args=(weakref.ref(self),), daemon=True,
                                               name="tavernzoo-clock")
                self._clock.start()

    @property
    def upload_dir(self) -> Path:
        """The folder of uploaded bots: made at the first upload (most servers never get one) and removed with
        this state, or when the process exits."""
        if self._upload_dir is None:
            self._upload_dir = Path(tempfile.mkdtemp(prefix="tavernzoo-web-"))
            weakref.finalize(self, shutil.rmtree, self._upload_dir, True)
        return self._upload_dir

    def resolve(self, spec: Any, game: Any) -> str:
        """The bot spec to load for a seat choice, refusing programs and files unless allowed."""
        if not isinstance(spec, str) or not spec.strip():
            raise TableError("each seat must be 'human' or a bot spec (a non-empty string)")
        spec = spec.strip()
        if spec.startswith("upload:"):
            path = self.uploads.get(spec[len("upload:"):])
            if path is None:
                raise TableError(f"no uploaded bot {shown(spec)} (an upload is kept {self.limits.idle_seconds / 60:g} "
                                 "minutes after its last use; upload it again)")
            return str(path)
        if not self.allow_local and _is_local(spec, game):
            from ..agents import builtin_bots

            raise TableError(
                f"{shown(spec)} is not a bot this page may seat: choose a built-in bot "
                f"({', '.join(builtin_bots(game))}), "
                "level:1..5, zoo:GAME, mcts[:OPTIONS] or an uploaded exported bot (.onnx + .json); programs (cmd:) and "
                "files on the server need the server started with --allow-local")
        spec = within_budget(spec, game, self.max_think)
        if self.sandbox is not None:
            parsed = BotSpec.parse(spec)
            if any(part.kind == "cmd" and part.sandbox is None for part in parsed.within()[1:]):
                raise TableError(f"{shown(spec)} nests a cmd: program, which this server's --sandbox cannot confine; "
                                 "seat the program itself")
            return str(parsed.sandboxed(self.sandbox))
        return spec

    def quota(self, owner: str) -> Any:
        """The check that ``owner`` (a client's address) may open one more table (:meth:`Store.add`'s admit):
        its tables in use (not finished and seen, not abandoned) are fewer than ``limits.tables_per_client``."""
        limits = self.limits

        def admit(held: list[tuple[Table, float]]) -> None:
            mine = sum(1 for table, idle in held if table.owner == owner
                       and not table.released(idle, limits.seen_seconds) and idle <= limits.evict_idle_seconds)
            if mine >= limits.tables_per_client:
                raise TableError(f"you hold {mine} tables on this server, the most one client may; finish one, "
                                 "close it (DELETE /api/tables/ID) or leave it unused for "
                                 f"{limits.evict_idle_seconds / 60:g} minutes, then try again", 429)

        return admit

    def load(self, spec: str, game: Any, config: Any, seed: int) -> Any:
        from ..agents import load_bot

        return load_bot(self.resolve(spec, game), game, config, seed)


# --- the API ------------------------------------------------------------------------------------------


def games_listing() -> list[dict[str, Any]]:
    from ..agents import builtin_bots
    from ..agents.levels import level_listing
    from ..agents.onnx_bot import zoo_bots

    zoo = zoo_bots()
    listing = []
    for game in games().values():
        config = game.make_config()
        bots = list(builtin_bots(game))
        if game.name in zoo:
            bots.append(f"zoo:{game.name}")
        listing.append({
            "name": game.name, "env": game.env_name, "title": game.title,
            "players": [game.rules.MIN_PLAYERS, game.rules.MAX_PLAYERS],
            "seats": game.rules.num_seats(config),
            "simultaneous": game.simultaneous, "options": describe_options(game.rules.Config), "bots": bots,
            "levels": level_listing(game),  # level:1..5, each with its name and the bot it stands for
            # what the offers a person may leave to the table are called (the "never ask me" setting), or None
            "offers": offers_of(game),
            # each card's text by name, where the game's encoder has them (card_texts): shown beside the cards
            "cards": game.encoder.card_texts(config) if hasattr(game.encoder, "card_texts") else {},
        })
    return listing


async def api_games(request: Request) -> Response:
    listing = await anyio.to_thread.run_sync(games_listing)
    return JSONResponse({"games": listing, "allow_local": request.app.state.web.allow_local})


async def api_new_table(request: Request) -> Response:
    web: WebState = request.app.state.web
    body = await read_json(request, web.limits.body_bytes)
    if not isinstance(body, dict):
        raise TableError("the request must be an object: {game, config, seats, seed}")
    return await _open_table(request, body)


async def _open_table(request: Request, body: dict[str, Any], branch: dict[str, Any] | None = None) -> Response:
    """A new table from ``body`` (``POST /api/tables``'s); ``branch``: a :class:`BranchTable`'s own arguments
    (the game replayed to a step of another's, before the answer)."""
    web: WebState = request.app.state.web
    name, config, seats, seed = body.get("game"), body.get("config") or {}, body.get("seats"), body.get("seed")
    if not isinstance(name, str):
        raise TableError("name the 'game' (GET /api/games lists them)")
    if not isinstance(config, dict):
        raise TableError("'config' must be an object of game options")
    if not isinstance(seats, list) or not seats:
        raise TableError("'seats' must be a list: 'human' or a bot spec for each seat")
    seed = read_seed(seed)
    game = get_game(name)
    for seat in seats:
        if seat not in PERSON_SEATS:
            web.resolve(seat, game)
    fallback = body.get("fallback") or FALLBACK
    if any(seat in PERSON_SEATS for seat in seats):
        web.resolve(fallback, game)
    clock = read_clock(body.get("clock"), web.limits)
    refuse_server_files(game, config, web.allow_local)
    owner = request.client.host if request.client is not None else ""
    admit = web.quota(owner)
    admit(web.tables.held())  # refused before any bot is loaded; checked again as the table is kept

    def build() -> Table:
        try:
            game_config = game.make_config(config)
        except TypeError as error:
            raise TableError(f"bad options for {game.name}: {error}") from None
        made = Table if branch is None else BranchTable
        table = made(game, game_config, seats, seed, web.load, body.get("answer_offers"), fallback=fallback,
                     clock=clock, absent_seconds=web.limits.absent_seconds, listed=body.get("lobby") is True,
                     **(branch or {}))
        if branch is not None:
            try:
                table.prepare()  # the steps replayed now: the page shows them at once, not paced as new moves
            except BaseException:
                table.close()
                raise
        return table

    table = await anyio.to_thread.run_sync(build)
    table.owner = owner
    try:
        web.tables.add(table.id, table, admit)
    except TableError:
        _in_background(table.close)  # its bots may be programs: stop them
        raise
    table.worker = _in_background(table.start)
    if table.people:
        web.watch_people()
    # The capability tokens go to the table's maker alone, in this answer: its own seat's (``token``) and the
    # links it hands on (each open seat's, the spectators').
    made = {**table.summary(table.human), "links": table.links(),
            "request": {"game": name, "config": config, "seats": seats}}
    if table.human is not None:
        made["token"] = table.tokens[table.human]
    return JSONResponse(made, status_code=201)


def read_clock(value: Any, limits: type[Limits]) -> float | None:
    """A request's clock: the seconds a person has for each move before the stand-in plays it; None: no clock."""
    if value is None or value == "":
        return None
    least, most = limits.clock_seconds
    if isinstance(value, bool) or not isinstance(value, int | float) or not least <= value <= most:
        raise TableError(f"'clock' must be the seconds a person has for a move, {least:g} to {most:g} (absent: no "
                         f"clock), not {shown(value)}")
    return float(value)


TOKEN_HEADER = "x-table-token"
"""The header a page sends its seat's (or the spectators') token in: never in the address the server sees."""


def _viewer(request: Request, table: Table) -> int | str | None:
    """The seat (or :data:`SPECTATOR`) the request's token stands for at ``table``; None without one."""
    token = request.headers.get(TOKEN_HEADER)
    if token is None or len(token) > 100:
        return None
    viewer = table.viewer(token)
    if viewer is None:
        raise TableError("this link's token is not one of this table's (a seat's link or the spectator link)", 403)
    return viewer


def read_seed(value: Any) -> int | None:
    """A request's seed: a whole number from 0 to 2^63-1, given as a JSON number or, exact past 2^53 (where a
    browser's numbers round), as a string of digits; None (a fresh one) when absent or empty."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise TableError(f"'seed' must be a whole number from 0 to 2^63-1, not {shown(value)} (a number, or a string "
                         "of digits for one past 2^53; absent or empty: a fresh one)")
    return value


CLOCK_TICK = 0.25  # seconds between the checks of who is away or out of time


def _stand_ins_play(state: Any) -> None:
    """Every tick, the stand-in plays for each person the tables wait for who is away or out of time
    (:meth:`Table.overdue`), in the table's own worker thread; ends when the web state is gone."""
    while (web := state()) is not None:
        for table in list(web.tables.values()):
            if not table.people or (table.worker is not None and table.worker.is_alive()):
                continue
            seat = table.overdue()
            if seat is not None:
                table.worker = _in_background(lambda table=table, seat=seat: table.stand_in(seat))
        del web
        time.sleep(CLOCK_TICK)


def _in_background(work: Any) -> threading.Thread:
    """Bots think in a thread of their own: a slow or hung program holds up only its own table."""
    thread = threading.Thread(target=work, daemon=True, name="tavernzoo-table")
    thread.start()
    return thread


def _table(request: Request) -> Table:
    web: WebState = request.app.state.web
    table = web.tables.get(request.path_params["id"])
    if table is None:
        raise TableError(f"no such table: a table no page has used for {web.limits.idle_seconds / 60:g} minutes is "
                         "dropped, and a finished one may make room for a new game once its player has seen the end "
                         "(or left it unused for "
                         f"{web.limits.evict_idle_seconds / 60:g} minutes); start a new game", 404)
    return table


def _int_param(request: Request, key: str, default: int | None) -> int | None:
    raw = request.query_params.get(key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise TableError(f"'{key}' must be a whole number, not {raw!r}") from None


async def api_lobby(request: Request) -> Response:
    """The tables in the lobby with an open seat nobody took (at most ``limits.lobby_listed``, newest first)."""
    web: WebState = request.app.state.web
    listed = [table for table in web.tables.values() if table.listed and table.status != "over"
              and table.open_seats()]
    return JSONResponse({"tables": [table.lobby_entry() for table in reversed(listed)][:web.limits.lobby_listed]})


async def api_join(request: Request) -> Response:
    """Take a lobby table's open seat: its token (the seat's link) and the seat's summary."""
    table = _table(request)
    # JSON only, as every POST here: a page elsewhere cannot send it, so it cannot use up the open seats.
    await read_json(request, request.app.state.web.limits.body_bytes)
    seat, token = table.join()
    return JSONResponse({**table.summary(table.viewer(token)), "token": token, "seat": seat})


async def api_table(request: Request) -> Response:
    table = _table(request)
    return JSONResponse(table.summary(_viewer(request, table)))


async def api_frames(request: Request) -> Response:
    table = _table(request)
    viewer = _viewer(request, table)
    since = _int_param(request, "since", -1)
    seat = _int_param(request, "seat", None)
    over = table.status == "over"  # read before the frames: once over, every frame is there
    try:
        frames = await anyio.to_thread.run_sync(table.frames_since, since, seat,
                                                request.app.state.web.limits.frames_per_request, viewer)
    except ReplayError as error:
        raise TableError(str(error)) from None
    if over and viewer != SPECTATOR and (frames[-1]["step"] if frames else since) >= table.steps_for(viewer) - 1:
        table.saw_end()  # the player has the last frame: the table may now make room for another game
    return JSONResponse({"frames": frames, "summary": table.summary(viewer)})


async def api_act(request: Request) -> Response:
    table = _table(request)
    viewer = _viewer(request, table)
    body = await read_json(request, request.app.state.web.limits.body_bytes)
    if not isinstance(body, dict):
        raise TableError("send {\"action\": NAME, \"step\": N}")
    if not isinstance(viewer, int):
        # The table id is no seat: a move needs the seat's own token (its link), which the table maker got.
        raise TableError("a move needs your seat's link (its token); the table's address alone plays no seat"
                         if table.people else "nobody plays at this table: it is watched", 403)
    await anyio.to_thread.run_sync(table.act, body.get("action"), body.get("step"), body.get("answer_offers"),
                                   viewer)
    table.worker = _in_background(table.advance)
    return JSONResponse(table.summary(viewer))


async def api_events(request: Request) -> Response:
    """Server-sent events: the table's summary now and after every change (``id`` is its version). A browser's
    EventSource sends no headers, so a seat's or the spectators' token comes as ``?token=`` here (the summary is
    then that seat's: "you", "your turn"); a table holds at most ``limits.spectators_per_table`` spectator
    streams at once, and one more is refused (429)."""
    table = _table(request)
    limits = request.app.state.web.limits
    token = request.query_params.get("token")
    viewer = table.viewer(token) if token is not None and len(token) <= 100 else None
    if token is not None and viewer is None:
        raise TableError("this link's token is not one of this table's (a seat's link or the spectator link)", 403)
    if viewer == SPECTATOR:
        with table.lock:
            if table.spectators >= limits.spectators_per_table:
                raise TableError(f"this table has {table.spectators} spectators, the most it takes; try again later",
                                 429)
            table.spectators += 1

    async def stream():
        try:
            async for part in events():
                yield part
        finally:
            if viewer == SPECTATOR:
                with table.lock:
                    table.spectators -= 1

    async def events():
        seen = None
        loop = asyncio.get_running_loop()
        ends = loop.time() + limits.stream_seconds
        touched = loop.time()
        yield "retry: 1000\n\n"
        while loop.time() < ends:
            if loop.time() - touched > 10:  # a page watching its table is using it
                touched = loop.time()
                if request.app.state.web.tables.get(table.id) is not table:
                    return
            if table.version != seen:
                seen = table.version
                yield f"id: {seen}\nevent: table\ndata: {json.dumps(table.summary(viewer))}\n\n"
                if table.status == "over":
                    return
            await asyncio.sleep(0.05)
        yield ": this stream ends; reconnect for more\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def api_close(request: Request) -> Response:
    """Close a table: a bot thinking stops (a search after its current simulation), and its place is free.
    (A page elsewhere cannot send a DELETE without the browser asking first, which this server never allows.)"""
    web: WebState = request.app.state.web
    table = _table(request)
    if table.people and not isinstance(_viewer(request, table), int):
        raise TableError("closing a table people play at needs a seat's link (its token)", 403)
    web.tables.remove(table.id)
    _in_background(table.close)  # its bots may be programs: stopping one may take a second
    return JSONResponse({"id": table.id, "closed": True})


async def api_cards(request: Request) -> Response:
    """Each card's text under this table's options (``card_texts``; a house rule may change them)."""
    table = _table(request)
    texts = getattr(table.game.encoder, "card_texts", None)
    return JSONResponse({"cards": texts(table.config) if texts is not None else {}})


async def api_record(request: Request) -> Response:
    """The finished game's record. It holds every hand, so at a table with people it takes a seat's token (the
    header, or ``?token=`` for the page's download link, which sends no headers): the table id alone, or the
    spectators' link, shows no hand even after the end."""
    table = _table(request)
    if table.people:
        token = request.headers.get(TOKEN_HEADER) or request.query_params.get("token")
        viewer = table.viewer(token) if token is not None and len(token) <= 100 else None
        if not isinstance(viewer, int):
            raise TableError("this table's record holds every hand: it takes a seat's link (its token), not the table "
                             "id alone or the spectator link", 403)
    record = table.record()
    table.saw_end(record=True)
    name = f"{table.game.name}-{table.seed}.json"
    return JSONResponse(record, headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def api_rematch(request: Request) -> Response:
    table = _table(request)
    from ..envs.core import config_to_dict

    viewer = _viewer(request, table)
    if table.people and not isinstance(viewer, int):
        raise TableError("a rematch of a table people play at needs a seat's link (its token)", 403)
    # The person's "never ask me" setting goes with them to the next game; the new table's links are new (the
    # answer holds them: the other people need theirs).
    return await _open_table(request, {"game": table.game.name, "config": config_to_dict(table.config),
                                       "seats": table.seats, "seed": None, "fallback": table.fallback,
                                       "clock": table.clock, "answer_offers": table.human in table.answering})


async def api_review(request: Request) -> Response:
    """A finished game's step from a seat's view (web/review.py: who may see which)."""
    table = _table(request)
    viewer = _viewer(request, table)
    step, seat = _int_param(request, "step", None), _int_param(request, "seat", None)
    return JSONResponse(await anyio.to_thread.run_sync(review_frame, table, viewer, step, seat))


async def api_review_marks(request: Request) -> Response:
    """Each decision of a seat in the finished game, marked with its cost (computed once, in the server's time)."""
    table = _table(request)
    viewer = _viewer(request, table)
    seat = _int_param(request, "seat", None)
    seconds = request.app.state.web.limits.review_seconds
    return JSONResponse(await anyio.to_thread.run_sync(review_marks, table, viewer, seat, seconds))


async def api_branch(request: Request) -> Response:
    """Play on from a step of the finished game at a new table: the same bots, the person at their seat."""
    table = _table(request)
    viewer = _viewer(request, table)
    body = await read_json(request, request.app.state.web.limits.body_bytes)
    if not isinstance(body, dict):
        raise TableError("send {\"step\": N}: the step to play on from")
    made, branch = await anyio.to_thread.run_sync(branch_request, table, viewer, body)
    return await _open_table(request, made, branch)


async def api_upload(request: Request) -> Response:
    web: WebState = request.app.state.web
    body = await read_json(request, web.limits.upload_bytes)
    manifest, data = (body.get("manifest"), body.get("onnx")) if isinstance(body, dict) else (None, None)
    if not isinstance(manifest, dict) or not isinstance(data, str):
        raise TableError("send {\"manifest\": the bot's .json, \"onnx\": its .onnx in base64}")
    try:
        onnx = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise TableError("'onnx' is not base64") from None
    key = secrets.token_urlsafe(8)
    folder = web.upload_dir / key
    folder.mkdir()
    (folder / "bot.onnx").write_bytes(onnx)
    (folder / "bot.json").write_text(json.dumps(manifest))

    def check() -> str:
        from ..agents.onnx_bot import read_manifest

        env = read_manifest(folder / "bot.onnx")["env"]
        game = get_game(env)
        from ..agents import load_bot

        load_bot(str(folder / "bot.onnx"), game)  # the hash, the interface, the action names
        return env

    try:
        env = await anyio.to_thread.run_sync(check)
    except ValueError as error:
        shutil.rmtree(folder, ignore_errors=True)
        # The messages name the files by their place in the server's temp folder: that is the server's own.
        message = str(error).replace(str(folder / "bot.onnx"), "bot.onnx").replace(str(folder / "bot.json"),
                                                                                     "bot.json")
        raise TableError(f"the uploaded bot cannot play: {message.replace(str(folder), 'the upload')}") from None
    web.uploads.add(key, folder / "bot.onnx")
    return JSONResponse({"spec": f"upload:{key}", "env": env}, status_code=201)


async def api_new_replay(request: Request) -> Response:
    web: WebState = request.app.state.web
    body = await read_body(request, web.limits.upload_bytes, web.limits.body_seconds)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise TableError("the records file is not UTF-8 text") from None

    def build() -> list[Timeline]:
        records = read_records(text, web.limits.records_per_replay)
        timelines = []
        for number, record in enumerate(records, start=1):
            try:
                timelines.append(Timeline(record, web.allow_local))
            except ReplayError as error:
                if len(records) == 1:
                    raise
                raise ReplayError(f"game {number} of {len(records)}: {error}") from None
        return timelines

    try:
        timelines = await anyio.to_thread.run_sync(build)
    except ReplayError as error:
        raise TableError(f"cannot replay this file: {error}") from None
    key = secrets.token_urlsafe(12)
    web.replays.add(key, timelines)
    return JSONResponse({"id": key, "games": [t.summary() for t in timelines]}, status_code=201)


async def api_replay_frame(request: Request) -> Response:
    timelines = request.app.state.web.replays.get(request.path_params["id"])
    if timelines is None:
        raise TableError("no such replay (it may have expired); open the file again", 404)
    number = request.path_params["number"]
    if not 0 <= number < len(timelines):
        raise TableError(f"the file holds games 0-{len(timelines) - 1}, not {number}", 404)
    step, seat = _int_param(request, "step", 0), _int_param(request, "seat", 0)
    try:
        frame = await anyio.to_thread.run_sync(timelines[number].frame, step, seat)
    except ReplayError as error:
        raise TableError(str(error)) from None
    return JSONResponse(frame)


async def page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html")


# --- the bot protocol over HTTP -----------------------------------------------------------------------


async def bot_hello(request: Request) -> Response:
    return JSONResponse(request.app.state.bot.hello())


async def bot_request(request: Request) -> Response:
    try:
        body = await read_body(request, MAX_REQUEST, Limits.body_seconds)
    except BodyError as error:
        code = "oversize" if error.status == 413 else "bad_request"
        return JSONResponse(error_reply(code, str(error)), status_code=error.status)
    reply = await anyio.to_thread.run_sync(request.app.state.bot.answer, body)
    if reply["type"] != "error":
        return JSONResponse(reply)
    return JSONResponse(reply, status_code=502 if reply["code"] == BOT_FAILED else 400)


# --- the app ------------------------------------------------------------------------------------------


async def on_table_error(request: Request, error: Exception) -> Response:
    return fail(getattr(error, "status", 400), str(error))


async def on_not_found(request: Request, error: Exception) -> Response:
    if request.app.state.web is None:
        return JSONResponse(error_reply("bad_request", f"no such path {request.url.path}; GET / or POST /"),
                            status_code=404)
    return fail(404, f"no such page {request.url.path}")


async def on_bad_method(request: Request, error: Exception) -> Response:
    return fail(405, f"{request.method} is not allowed on {request.url.path}")


class SecurityHeaders:
    """Headers on every response: the page may load nothing from elsewhere, nor be framed."""

    HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
               (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")]

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(bot: str | None = None, web: bool = True, allow_local: bool = False,
               hosts: tuple[str, ...] = LOOPBACK_HOSTS, limits: type[Limits] = Limits,
               sandbox: str | None = None, max_think: float = THINK_SECONDS) -> Starlette:
    """The ASGI app: the page and its API (``web``), and the bot protocol for ``bot`` (a bot spec)
    at ``/bot`` beside the page or at ``/`` alone. With ``sandbox`` (limits, ``''`` the defaults) the
    page's ``cmd:`` seats run sandboxed (agents/sandbox.py); ``max_think`` bounds a seat's search."""
    if not web and bot is None:
        raise ValueError("the app serves the page, a bot, or both")
    routes: list[Any] = []
    if bot is not None:
        where = "/bot" if web else "/"
        routes += [Route(where, bot_hello, methods=["GET"]), Route(where, bot_request, methods=["POST"])]
    if web:
        routes += [
            Route("/", page, methods=["GET"]),
            Route("/api/games", api_games, methods=["GET"]),
            Route("/api/tables", api_new_table, methods=["POST"]),
            Route("/api/lobby", api_lobby, methods=["GET"]),
            Route("/api/tables/{id}/join", api_join, methods=["POST"]),
            Route("/api/tables/{id}", api_table, methods=["GET"]),
            Route("/api/tables/{id}", api_close, methods=["DELETE"]),
            Route("/api/tables/{id}/frames", api_frames, methods=["GET"]),
            Route("/api/tables/{id}/events", api_events, methods=["GET"]),
            Route("/api/tables/{id}/act", api_act, methods=["POST"]),
            Route("/api/tables/{id}/record", api_record, methods=["GET"]),
            Route("/api/tables/{id}/cards", api_cards, methods=["GET"]),
            Route("/api/tables/{id}/rematch", api_rematch, methods=["POST"]),
            Route("/api/tables/{id}/review", api_review, methods=["GET"]),
            Route("/api/tables/{id}/review/marks", api_review_marks, methods=["GET"]),
            Route("/api/tables/{id}/branch", api_branch, methods=["POST"]),
            Route("/api/uploads", api_upload, methods=["POST"]),
            Route("/api/replays", api_new_replay, methods=["POST"]),
            Route("/api/replays/{id}/{number:int}", api_replay_frame, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
    handlers = {TableError: on_table_error, BodyError: on_table_error, ValueError: on_table_error,
                404: on_not_found, 405: on_bad_method}
    middleware = [Middleware(SecurityHeaders)]
    if hosts:  # a page elsewhere that points a name of its own at this address (DNS rebinding) is refused
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts)))
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=middleware, lifespan=_lifespan)
    app.state.web = WebState(allow_local, limits, sandbox, max_think) if web else None
    app.state.bot = BotSessions(bot) if bot is not None else None
    return app


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette):
    yield
    if app.state.bot is not None:  # the served bots go with the server (its cmd: programs quit)
        await anyio.to_thread.run_sync(app.state.bot.close)
