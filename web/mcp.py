"""``tavernzoo mcp``: tavernzoo's tables as an MCP server (the official ``mcp`` SDK, stdio transport).

Any MCP client (a chat assistant, an agent framework, a test) can sit at a table against tavernzoo's bots:

=================== ===================================================================================
tool                what it does
=================== ===================================================================================
``list_games``      the games, their seat counts, option names and built-in bots
``new_table``       a game with the client in ``seat`` and bots in the others; plays the bots up to the
                    client's first decision (answering after :data:`WAIT_SECONDS` at most, the bots playing
                    on); the table id and the seat's view
``view``            the seat's view as text (rules brief, events since its last decision, the table,
                    the legal actions) or JSON (:mod:`tavernzoo.agents.text_views`)
``legal_actions``   the legal actions: number (1..n, what ``act`` takes), name, description, the game's
                    action index
``act``             play one legal action (its name or number); the bots play on to the client's next
                    decision or the end; what changed since the client's last view (events, changed
                    entries, new cards, the legal actions: :class:`~tavernzoo.agents.text_views.ShownSoFar`),
                    not the whole view with the rules again (``view`` gives that)
``result``          status, returns, win shares, a forfeit, and (once over) the replayable record
``close_table``     drop a table (a bot thinking stops)
=================== ===================================================================================

The library behind ``tavernzoo mcp`` (the command: tavernzoo/commands/mcp.py). A table is
:class:`tavernzoo.web.tables.Table` (the web page's), the client in its ``human`` seat, so it
gets what a person at the page gets: only its own seat's view; bots guarded as in tournaments (a bot that
fails forfeits). One process is one client: it holds up to :data:`MAX_TABLES` tables; when they are all in
use a new one is refused (a finished table whose result the client has read, or one unused for
:data:`EVICT_IDLE_SECONDS`, makes room; each is dropped after :data:`IDLE_SECONDS` unused). Opponent specs that
run a program, read a file or call a network service (``cmd:``, paths, ``.onnx``, ``llm:``) are refused unless
the server was started with ``--allow-local``: the client chooses them, and the client may be a language model.
For the same reason an ``mcts`` opponent thinks at most ``--max-think`` seconds a move
(:func:`tavernzoo.web.tables.within_budget`), and every value the client sent is echoed (in an error, and so
in the SDK's log line) cut to :data:`~tavernzoo.web.tables.SHOWN_CHARS` characters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any

from ..agents.external import clip
from ..agents.text_views import EventTracker, ShownSoFar, changes_format, seat_view
from ..envs import games, get_game
from .tables import (
    HUMAN,
    SHOWN_CHARS,
    THINK_SECONDS,
    Store,
    Table,
    TableError,
    check_max_think,
    refuse_server_files,
    shown,
    within_budget,
)

MAX_TABLES = 16
IDLE_SECONDS = 3600.0
EVICT_IDLE_SECONDS = 600.0  # a table unused this long makes room for a new one when all are taken
SEEN_SECONDS = 60.0  # so does a finished one whose end the client has viewed, unused this long (record read: at once)
MAX_OPTIONS_CHARS = 10_000
MAX_TEXT_CHARS = 1000  # an action or bot spec longer than this is refused before anything reads it (a table id or
# a game name: longer than SHOWN_CHARS)
MAX_ERROR_CHARS = 2000  # an error sent back (and logged by the SDK) is cut to this, whatever it quotes
# new_table and act answer within this many seconds: the bots play on in a thread of their own and a client that
# got "bots" asks view again. A request never waits on a search, a slow program or a hung one.
WAIT_SECONDS = 30.0

ARGUMENT_SCHEMAS: dict[str, dict[str, Any]] = {
    "game": {"type": "string"},
    "seat": {"type": "integer", "minimum": 0, "default": 0},
    "opponents": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
    "options": {"anyOf": [{"type": "object"}, {"type": "null"}], "default": None},
    "seed": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": None},
    "table": {"type": "string"},
    "format": {"type": "string", "enum": ["text", "json"], "default": "text"},
    "action": {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 1}],
               "description": "a legal action's name or its number in the list (1 for the first; legal_actions "
                              "lists them)"},
    "answer_offers": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
}
"""The JSON schema a client is shown for each tool argument (the tables check every value themselves)."""


class SeatTable(Table):
    """A web :class:`~tavernzoo.web.tables.Table` whose ``human`` seat is the MCP client, with the events
    of every step collected for that seat (what happened since its last decision)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.tracker = EventTracker()
        self.client_shown = ShownSoFar()  # what the client was last shown: act answers with the changes since
        super().__init__(*args, **kwargs)
        self._see()

    def _see(self) -> None:
        state = self.env.unwrapped.game_state
        self.tracker.see(self.game, self.game.rules.information_state(state, self.human), self.human)

    def _step(self, seat: int, action: int, said: str | None = None) -> None:
        super()._step(seat, action, said)
        self._see()


class Tables:
    """The tables of one server process (no MCP here: the tools below call these methods)."""

    def __init__(self, allow_local: bool = False, max_think: float = THINK_SECONDS, wait_seconds: float = WAIT_SECONDS):
        self.allow_local = allow_local
        self.max_think = check_max_think(max_think)
        self.wait_seconds = wait_seconds
        # One process serves one client, so its cap on tables is that client's quota: a table in play is never
        # dropped for a new one (the new one is refused), only one finished and read, or left unused.
        self.store = Store(
            MAX_TABLES, IDLE_SECONDS, lambda table: table.close(),
            evictable=lambda table, idle: table.released(idle, SEEN_SECONDS) or idle > EVICT_IDLE_SECONDS,
            full_message=f"this server holds {MAX_TABLES} tables, the most one client may; close_table one you are "
                         "done with (a finished table whose result you have read makes room by itself, and so "
                         f"does one unused for {EVICT_IDLE_SECONDS / 60:g} minutes)")
        self.count = 0
        self.lock = threading.Lock()

    def list_games(self) -> list[dict[str, Any]]:
        from ..agents import builtin_bots
        from ..agents.levels import level_listing
        from ..envs.core import config_to_dict

        found = []
        for game in games().values():
            rules = game.rules
            found.append({"game": game.name, "env": game.env_name, "title": game.title,
                          "players": [rules.MIN_PLAYERS, rules.MAX_PLAYERS],
                          "options": config_to_dict(game.make_config()),
                          "bots": [*builtin_bots(game), "mcts", "zoo:" + game.name],
                          "levels": level_listing(game)})  # level:1..5: name, and the bot each stands for
        return found

    def _resolve(self, spec: Any, game: Any) -> str:
        from .app import _is_local

        if not isinstance(spec, str) or not spec.strip():
            raise TableError("each opponent must be a bot spec (a non-empty string), e.g. 'heuristic'")
        spec = spec.strip()
        if len(spec) > MAX_TEXT_CHARS:
            raise TableError(f"opponent {shown(spec)} is {len(spec)} characters; a bot spec is at most "
                             f"{MAX_TEXT_CHARS}")
        if spec == HUMAN:
            raise TableError("the client is the only player here: opponents are bot specs, not 'human'")
        if not self.allow_local and _is_local(spec, game):
            raise TableError(f"{shown(spec)} runs a program, reads a file or calls a network service; start "
                             "`tavernzoo mcp --allow-local` to allow that")
        return within_budget(spec, game, self.max_think)

    def new_table(self, game: str, seat: int = 0, opponents: list[str] | None = None,
                  options: dict[str, Any] | None = None, seed: int | None = None) -> dict[str, Any]:
        from ..agents import load_bot

        if not isinstance(game, str) or len(game) > SHOWN_CHARS:
            raise TableError(f"unknown game {shown(game)}; list_games lists them")
        found = get_game(game)
        if options is not None and not isinstance(options, dict):
            raise TableError("options must be an object of game options (list_games shows them)")
        if options and len(repr(options)) > MAX_OPTIONS_CHARS:
            raise TableError(f"options are limited to {MAX_OPTIONS_CHARS} characters")
        refuse_server_files(found, options or {}, self.allow_local)  # a deck or ruleset path names a file here
        config = found.make_config(options or {})
        count = found.rules.num_seats(config)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < count:
            raise TableError(f"seat {shown(seat)} is not a seat of {found.name} with these options; "
                             f"valid: 0-{count - 1}")
        if opponents is not None and not isinstance(opponents, list):
            raise TableError(f"opponents {shown(opponents)} must be a list of bot specs (one for all the other seats, "
                             "or one for each)")
        specs = list(opponents or ["heuristic"])
        if len(specs) == 1:
            specs = specs * (count - 1)
        if len(specs) != count - 1:
            raise TableError(f"{found.name} with these options seats {count}: give one opponent for all the "
                             f"other seats or {count - 1} opponents; got {len(specs)}")
        specs = [self._resolve(spec, found) for spec in specs]
        seats = specs[:seat] + [HUMAN] + specs[seat:]
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise TableError(f"seed {shown(seed)} must be a whole number from 0 to 2**63-1 (or left out)")
        table = SeatTable(found, config, seats, seed, load_bot)
        with self.lock:
            self.count += 1
            key = f"t{self.count}"
        table.mcp_id = key
        try:
            self.store.add(key, table)  # kept before the bots play, so that close_table can stop them
        except TableError:
            table.close()
            raise
        self._play(table, table.start)
        return {"table": key, **self.view(key)}

    def _play(self, table: SeatTable, work: Callable[[], None]) -> None:
        """Let the bots play (``work``: the table's start or advance) in a thread of their own, waiting for them
        at most ``wait_seconds``: the answer then says ``bots`` and the client asks again (view)."""
        worker = threading.Thread(target=work, daemon=True, name=f"tavernzoo-mcp-{table.mcp_id}")
        table.worker = worker
        worker.start()
        worker.join(self.wait_seconds)

    def table(self, key: Any) -> SeatTable:
        if not isinstance(key, str) or len(key) > SHOWN_CHARS:
            raise TableError(f"no table {shown(key)}: table ids are short strings such as 't1' (new_table gives them)")
        table = self.store.get(key)
        if table is None:
            raise TableError(f"no table {shown(key)} (new_table makes one; an unused table is dropped after "
                             f"{IDLE_SECONDS / 60:g} minutes, or {EVICT_IDLE_SECONDS / 60:g} when another needs "
                             f"its place, and at most {MAX_TABLES} are kept)")
        return table

    def seat_view(self, key: str):
        table = self.table(key)
        with table.lock:
            state = table.env.unwrapped.game_state
            # The events are taken when the seat is to decide; until then they keep piling up.
            pending = list(table.tracker.pending)
            return table, seat_view(table.game, state, table.human, since=pending)

    def view(self, key: str, form: str = "text", changes: bool = False) -> dict[str, Any]:
        """The seat's whole view (``changes``: only what changed since the client was last shown it)."""
        if form not in ("text", "json"):
            raise TableError(f"format {shown(form)}; valid: text, json")
        table, seen = self.seat_view(key)
        status = table.status
        out: dict[str, Any] = {"table": key, "status": status, "seat": table.human}
        with table.lock:
            text = table.client_shown.decision_text(seen, full=not changes)
        if form == "json":
            out["view"] = seen.as_json()
        elif changes:
            out["text"] = text
        else:
            # How act's answers (what changed) read, said once with the whole view.
            out["text"] = seen.standing_text() + "\n\n" + changes_format(table.game) + "\n\n" + text
        if status in ("starting", "bots"):
            out["note"] = "the bots are still playing; call view again for your next decision"
        if status == "over":
            out["result"] = table.result()
            table.saw_end()
        return out

    def legal_actions(self, key: str) -> list[dict[str, Any]]:
        _, seen = self.seat_view(key)
        return [action.as_json() for action in seen.legal]

    def _numbered(self, key: str, text: str) -> str:
        """The name of the legal action a number stands for: its position in the list the seat is shown
        (1..n, as the text view and legal_actions number them), never the game's action index."""
        if not (text.isdigit() and text.isascii()):
            return text  # not a number: the table names the legal actions in its refusal
        _, seen = self.seat_view(key)
        if not seen.legal:
            return text  # not the seat's turn: the table says so
        number = int(text)
        if not 1 <= number <= len(seen.legal):
            raise TableError(f"action {shown(text)} is not the number of a legal action: legal_actions numbers "
                             f"them 1 to {len(seen.legal)}")
        return seen.legal[number - 1].name

    def act(self, key: str, action: str | int, answer_offers: bool | None = None) -> dict[str, Any]:
        """Play ``action``; ``answer_offers`` true (false) from now on has the table answer the game's
        declinable offers for the client (ask it again): MiniSteel's Card Draw windows, keeping the tokens."""
        table = self.table(key)
        names = table.game.action_names(table.config)
        if isinstance(action, bool) or not isinstance(action, str | int):
            raise TableError(f"action {shown(action)} must be a legal action's name or number (legal_actions lists "
                             "them)")
        if isinstance(action, str) and len(action) > MAX_TEXT_CHARS:
            raise TableError(f"action {shown(action)} is {len(action)} characters, longer than any action's name; "
                             "legal_actions lists them")
        text = str(action).strip()
        name = text if text in names else self._numbered(key, text)
        with table.lock:
            # The lines shown before this decision are done with; what follows (this move's outcome
            # included) is collected for the next one.
            seen = table.tracker.take()
            try:
                table.act(name, None, answer_offers)
            except TableError:
                table.tracker.pending[:0] = seen
                raise
        self._play(table, table.advance)
        return self.view(key, changes=True)

    def result(self, key: str) -> dict[str, Any]:
        table = self.table(key)
        status = table.status
        out = {"table": key, "status": status, "seat": table.human, **table.result()}
        if status == "over":
            out["record"] = table.record()
            table.saw_end(record=True)
        return out

    def close_table(self, key: str) -> dict[str, Any]:
        table = self.table(key)
        self.store.remove(key)
        table.close()  # a bot thinking stops: a search after its current simulation
        return {"table": key, "closed": True}

    def close(self) -> None:
        for table in list(self.store.values()):
            table.close()


def make_server(tables: Tables):
    """The MCP server (``mcp.server.mcpserver.MCPServer``) whose tools call ``tables``."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import WithJsonSchema
    except ImportError as error:
        raise ValueError(f"tavernzoo mcp needs the MCP SDK 2.x ({error}): pip install 'tavernzoo[llm]'") from None

    def as_sent(fn: Callable[..., Any]) -> Callable[..., Any]:
        """The tool's arguments reach the tables as the client sent them, each checked there with one sentence
        back: the SDK's own validation would take ``seat: true`` as seat 1, ``answer_offers: "yes"`` as true, and
        answer an action given as a number with a validation dump. The schemas the client is shown are the
        documented ones (:data:`ARGUMENT_SCHEMAS`)."""
        for name in list(fn.__annotations__):
            if name in ARGUMENT_SCHEMAS:
                fn.__annotations__[name] = Annotated[Any, WithJsonSchema(ARGUMENT_SCHEMAS[name])]
        return fn

    server = MCPServer("tavernzoo", instructions=(
        "Play tavernzoo's tabletop games against its bots: new_table starts one, view shows your seat "
        "(rules, events, the table, the legal actions), act plays one legal action by name or number, "
        "result tells the outcome."))

    def guarded(call, *args):
        try:
            return call(*args)
        except (TableError, ValueError, TypeError) as error:  # bad input: one sentence back to the client
            # Bounded whatever it quotes: the SDK logs it too.
            raise ToolError(clip(str(error), MAX_ERROR_CHARS)) from None

    @server.tool(description="The games: seats, options (with defaults), built-in bots and the bot levels "
                 "(level:1 beginner .. level:5 expert).")
    def list_games() -> list[dict[str, Any]]:
        return guarded(tables.list_games)

    @server.tool(description="Start a game with you in `seat` and bots (`opponents`: one spec for all, or one "
                 "per other seat; default heuristic) in the others. Returns the table id and your view.")
    @as_sent
    def new_table(game: str, seat: int = 0, opponents: list[str] | None = None,
                  options: dict[str, Any] | None = None, seed: int | None = None) -> dict[str, Any]:
        return guarded(tables.new_table, game, seat, opponents, options, seed)

    @server.tool(description="Your seat's view of a table: format 'text' (rules, events since your last "
                 "decision, the table, the legal actions) or 'json'.")
    @as_sent
    def view(table: str, format: str = "text") -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        return guarded(tables.view, table, format)

    @server.tool(description="The legal actions now: number (1..n, what act takes), name, description and the "
                 "game's action index (empty if not your turn).")
    @as_sent
    def legal_actions(table: str) -> list[dict[str, Any]]:
        return guarded(tables.legal_actions, table)

    @server.tool(description="Play one legal action (its name, or its number in the list: 1 for the first); the "
                 "bots play on until your next decision or the end. Returns what changed since your last view "
                 "(the events, the changed entries, new cards, the legal actions); view gives the whole view. "
                 "answer_offers=true: from now on the table answers the offers the game lets you leave to it "
                 "(MiniSteel's Card Draw windows: keep your tokens; you may still draw in your own main phase); "
                 "false: you are asked again.")
    @as_sent
    def act(table: str, action: str | int, answer_offers: bool | None = None) -> dict[str, Any]:
        return guarded(tables.act, table, action, answer_offers)

    @server.tool(description="The table's status and result: returns, win shares, a forfeit, and the "
                 "replayable record once the game is over.")
    @as_sent
    def result(table: str) -> dict[str, Any]:
        return guarded(tables.result, table)

    @server.tool(description="Close a table.")
    @as_sent
    def close_table(table: str) -> dict[str, Any]:
        return guarded(tables.close_table, table)

    return server
