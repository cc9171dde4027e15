"""Games at the web page: tables (a game being played or watched), replays of records, bounded stores.

A :class:`Table` is one game through the game's PettingZoo env (:func:`tavernzoo.envs.make.make_env`),
its seats a person (``"human"``, at most one) or bots loaded with :func:`tavernzoo.agents.load_bot`,
played at the table engine (:class:`tavernzoo.eval.table.Table`, which tells the bots a game begins and
ends). Bots are guarded as in tournaments: one that crashes, times out or answers an illegal action
forfeits the game (it loses, the others share the win).

What a person at a table may receive is only their own seat's view: after every step the table keeps
``env.unwrapped.view(agent)`` of the human seat (a *frame*), and nothing else about the state leaves the
server until the game is over (not the seed, which would give away the deck order, nor the record).
A table without a person is *watched*: any seat's view of any step may be shown, computed by
replaying the record up to that step (:class:`Timeline`), the same way recorded games are replayed.
"""

from __future__ import annotations

import math
import random
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ..agents.base import as_bot
from ..agents.external import clip
from ..envs import Chance, Game, ReplayError
from ..envs.core import file_options
from ..envs.make import make_env
from ..envs.records import check_record, play_joint, play_turn, record_game
from ..eval.play import (
    NOTHING_SHOWN,
    PUBLIC_GAMES,
    action_label,
    declinable,
    event_mark,
    move_label,
    new_events,
    offers_of,
)
from ..eval.table import Table as TableEngine
from ..eval.tally import score_game

HUMAN = "human"
OPEN = "open"
PERSON_SEATS = (HUMAN, OPEN)
"""A person's seat: the table maker's (``human``), or one for someone who takes it with its link (``open``)."""
SPECTATOR = "spectator"
FALLBACK = "level:3"
"""The bot that plays for a person who is away or out of time, unless the table names another."""
ABSENT_SECONDS = 45.0
"""A person whose page has sent nothing with their seat's token this long is away (the page checks in more often)."""
SHOWN_CHARS = 100  # a value a request sent is echoed in an error (or a log line) cut to about this many characters

# What a served search may cost a move (``--max-think`` on ``tavernzoo web`` and ``tavernzoo mcp``): the request
# names the bot, the operator decides the CPU it gets.
THINK_SECONDS = 2.0
SIMS_PER_SECOND = 10_000  # simulations a second of --max-think allows: a cap on sims= consistent with the time
MAX_PAIRED_WIDTH = 8  # root=paired checks the time between rounds of 8 samples x width rollouts: width is bounded


class TableError(ValueError):
    """A request a table cannot honour; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters: what an error may echo of a request's value (a 5 MB
    action string is not sent back, nor logged, whole)."""
    return clip(repr(value), limit)


def check_max_think(seconds: Any) -> float:
    """``--max-think``'s value, refused unless a positive number of seconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < 1e6:
        raise ValueError(f"--max-think {seconds!r}: give the seconds a seat's search may think about one move "
                         f"(> 0, e.g. {THINK_SECONDS:g})")
    return float(seconds)


def within_budget(spec: str, game: Game, max_think: float) -> str:
    """The bot spec a server loads for a seat a request asked for: an ``mcts`` spec is held to ``max_think``
    seconds a move (``--max-think``): ``time=`` above it, ``sims=`` above :data:`SIMS_PER_SECOND` for each of
    those seconds and ``width=`` above :data:`MAX_PAIRED_WIDTH` are refused (ValueError naming the limit and the
    flag), and a spec without ``time=`` gets ``time=max_think``, so a slow rollout or prior cannot stretch a
    move either (the search stops at whichever limit comes first). Nested specs (``prior=``, ``rollout=``, ...)
    cannot be searches themselves (agents/mcts.py refuses them), so each costs one bounded call per step."""
    from ..agents.mcts import parse_options
    from ..agents.spec import BotSpec

    parsed = BotSpec.parse(spec)
    if parsed.kind == "level":
        return _level_within_budget(parsed, game, max_think)
    if parsed.kind != "mcts":
        return spec
    options = parse_options(parsed, game.name)  # a ValueError naming the bad option
    limit = f"this server's --max-think {max_think:g}"
    if options.time and options.time > max_think:
        raise ValueError(f"mcts time={options.time:g} is longer than a move may think here: at most {max_think:g} s "
                         f"({limit}, set by whoever runs the server)")
    most_sims = max(1, int(max_think * SIMS_PER_SECOND))
    if options.sims > most_sims:
        raise ValueError(f"mcts sims={options.sims} is more than a move may search here: at most {most_sims} "
                         f"simulations ({SIMS_PER_SECOND} for each second of {limit})")
    if options.root == "paired" and options.width > MAX_PAIRED_WIDTH:
        raise ValueError(f"mcts width={options.width} is more than a move may compare here: at most "
                         f"{MAX_PAIRED_WIDTH} (the time is checked between rounds of width rollouts; {limit})")
    if not options.time:
        parsed = parsed.with_option("time", f"{max_think:g}")
    return str(parsed)


def _level_within_budget(spec: Any, game: Game, max_think: float) -> str:
    """The bot a ``level:N`` seat loads: the level's own spec (agents/levels.py), a search among them held to
    ``max_think`` by shortening it (its ``time=``, and ``sims=`` to what those seconds allow) rather than refused:
    a level is the project's choice, the CPU the operator's."""
    from ..agents.levels import level_spec
    from ..agents.mcts import parse_options

    meant = level_spec(spec, game)
    if meant.kind != "mcts":
        return str(meant)
    options = parse_options(meant, game.name)
    if not options.time or options.time > max_think:
        meant = meant.with_option("time", f"{max_think:g}")
    most_sims = max(1, int(max_think * SIMS_PER_SECOND))
    if options.sims > most_sims:
        meant = meant.with_option("sims", str(most_sims))
    return within_budget(str(meant), game, max_think)


def refuse_server_files(game: Game, config: Any, allow_local: bool) -> None:
    """Refuse game options that would read a file on the server unless ``allow_local``: the options a
    game's Config declares as paths (:func:`tavernzoo.envs.core.file_options`). Decided from the request
    alone, before anything is read, so no answer tells whether a server file exists or what it holds."""
    if allow_local:
        return
    found = file_options(game.rules.Config, config)
    if found:
        key, value, names = found[0]
        raise TableError(f"option {key}={value!r} would be read as a file on the server, which this server "
                         f"does not do unless started with --allow-local; {key} may be one of: {', '.join(names)}")


def describe(game: Game, config: Any, names: list[str], state: Any = None) -> dict[str, str]:
    """A sentence for each of the action names (for the buttons' titles); given the state of the game, the
    sentences name the players an action targets (``describe_action(action, state)``)."""
    describe_action = getattr(game.encoder, "describe_action", None)
    all_names = game.action_names(config)
    if describe_action is None:
        return {}
    out = {}
    for name in names:
        try:
            out[name] = describe_action(all_names.index(name), state)
        except (ValueError, IndexError, KeyError, StopIteration):
            out[name] = name
    return out


def action_parts(game: Game, config: Any, names: list[str], state: Any) -> dict[str, list[Any]]:
    """For each of the action names, ``[card, seat]``: the card it plays and the seat it aims at (either None),
    from the encoder's ``action_parts(action, state)``, so that the page offers "a card, then its target" on
    its board with no table of the game's action names of its own. Empty for a game without the hook."""
    parts_of = getattr(game.encoder, "action_parts", None)
    if parts_of is None or state is None:
        return {}
    index = {name: i for i, name in enumerate(game.action_names(config))}
    return {name: list(parts_of(index[name], state)) for name in names if name in index}


def _check_answer_offers(game: Game, answer_offers: Any) -> None:
    """Refuse an ``answer_offers`` setting that is not true or false, or for a game without such offers."""
    offers = offers_of(game)
    if offers is None:
        raise TableError(f"answer_offers: {game.name} has no offers the table could answer for you")
    if not isinstance(answer_offers, bool):
        raise TableError(f"answer_offers={shown(answer_offers)}: give true (never ask me: the table answers the "
                         f"{offers} for you) or false (you are asked)")


CLOSE_WAIT_SECONDS = 2.0
"""How long closing a table waits for a bot's move under way before it closes the bots (stopping a search)."""


class Table:
    """One game at the web: people (any number of seats, or none) and bots. Thread-safe: ``advance`` runs in a
    worker.

    A person's seat is ``"human"`` (the person who made the table: at most one) or ``"open"`` (a seat for
    someone else, taken with its link). Each person's seat has its own capability token (:attr:`tokens`,
    unguessable, never derived from the table id): a request acts for a seat, or reads its frames, only with
    that seat's token. A table with people has one spectator token too (:attr:`watch_token`), which reads the
    public frames alone: what every seat sees alike (:func:`public_view`). Every person's seat has a stand-in
    (``fallback``, a bot spec) that plays for them when they are away (no request with their token for
    ``absent_seconds``; an open seat nobody took counts as away from the start) or when the table's ``clock``
    (seconds a move, optional) runs out; back, they play on (:meth:`overdue`, :meth:`stand_in`)."""

    def __init__(self, game: Game, config: Any, seats: list[str], seed: int | None,
                 load: Callable[[str, Game, Any, int], Any], answer_offers: Any = None,
                 fallback: str = FALLBACK, clock: float | None = None, absent_seconds: float = ABSENT_SECONDS,
                 listed: bool = False):
        self.id = secrets.token_urlsafe(16)
        if answer_offers is not None and answer_offers is not False:  # "never ask me", from the first offer on
            _check_answer_offers(game, answer_offers)
            if HUMAN not in seats:
                raise TableError("answer_offers: nobody plays at this table, so nobody is asked")
        self.game = game
        self.config = game.make_config(config)
        count = game.rules.num_seats(self.config)
        if len(seats) != count:
            raise TableError(f"{game.name} with these options has {count} seats; got {len(seats)} seat choices")
        if seats.count(HUMAN) > 1:
            raise TableError("at most one seat may be 'human' (the person at this page); seat others as 'open', "
                             "each taken with its own link")
        self.seats = list(seats)
        self.human = seats.index(HUMAN) if HUMAN in seats else None
        """The seat of the person who made the table (the MCP client's), or None."""
        self.people = [seat for seat, spec in enumerate(seats) if spec in PERSON_SEATS]
        # Capability tokens: a seat's link, and the spectators' (none at a table of bots: any seat may be watched).
        self.tokens = {seat: secrets.token_urlsafe(24) for seat in self.people}
        self.watch_token = secrets.token_urlsafe(24) if self.people else None
        self.clock = clock
        self.absent_seconds = absent_seconds
        self.listed = listed and OPEN in seats
        """In the lobby: anyone may join (:meth:`join`) one of its open seats nobody has taken."""
        self.handed: set[int] = set()  # open seats the lobby gave out
        self.fallback = fallback
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        seeds = random.Random(self.seed)
        self.env = make_env(game, self.config)
        self.env.reset(seed=self.seed)  # the page may read the table before start() seats its bots
        self.agents = list(self.env.possible_agents)
        self.bots: dict[int, Any] = {}
        self.stand_ins: dict[int, Any] = {}
        bot_seeds: list[int | None] = [None] * count  # each bot's seed for its begin_game
        try:
            for seat, spec in enumerate(seats):
                if spec not in PERSON_SEATS:
                    self.bots[seat] = load(spec, game, self.config, seeds.randrange(2**63))
                    bot_seeds[seat] = seeds.randrange(2**63)
            for seat in self.people:  # after the bots: a table of bots and one 'human' deals as it always did
                self.stand_ins[seat] = load(fallback, game, self.config, seeds.randrange(2**63))
                bot_seeds[seat] = seeds.randrange(2**63)
        except BaseException:
            self.close()
            raise
        # The game itself: the bots told it begins and ends, guarded (forfeits), the people's seats empty.
        self.engine = TableEngine(self.env, [self.bots.get(seat) for seat in range(count)], self.seed,
                                  seat_names=self.seats, bot_seeds=bot_seeds, forfeits=True,
                                  stand_ins=self.stand_ins)
        self.lock = threading.RLock()
        self.status = "starting"  # starting, bots, your_turn (a person's: waiting_for), over
        self.waiting_for: int | None = None  # the person's seat the table waits for
        self.turn_began = time.monotonic()  # when it began to wait (the clock's start)
        now = time.monotonic()
        self.seen = {seat: now if seat == self.human else -math.inf for seat in self.people}
        """When each person's seat last made a request with its token (an open seat nobody took: never)."""
        self.frames: dict[int, list[dict[str, Any]]] = {seat: [] for seat in self.people}
        self.public_frames: list[dict[str, Any]] = []  # what spectators see: a frame of public_view per step
        self.forfeit: dict[str, Any] | None = None
        self.bot_stats: list[dict[str, Any] | None] | None = None  # the bots' counts of the game, once it is over
        self.returns: list[float] | None = None
        self.closed = False
        self.touched = time.monotonic()
        self.version = 0  # bumped on every change: the event stream waits on it
        self.recorded = 0  # steps in the record (a watched table's frames are steps 0..recorded)
        # The events each person's frames have told so far (eval.play.event_mark), and the spectators'.
        self.shown = {seat: NOTHING_SHOWN for seat in self.people}
        self.public_shown: list[Any] = [NOTHING_SHOWN] * count
        self.said: dict[int, str | None] = {}  # a person's choice in a simultaneous round not yet played
        # Each person's "never ask me" setting: the table answers the game's declinable offers for them
        # (MiniSteel's Card Draw windows: keep the tokens; eval.play.declinable) until the game ends or
        # they turn it off, as `auto` does in the terminal.
        self.answering = {self.human} if answer_offers is True else set()
        self.spectators = 0  # spectator event streams open now (the web bounds them)
        self.worker: threading.Thread | None = None  # the thread its bots play in now (the host starts it)
        self.owner: str | None = None  # who asked for the table (the web's client address): its quota counts it
        # Whether its player has fetched the end (the last frame once over) and the record: until then a server
        # keeps a finished table rather than lose its result to a new game (see :meth:`released`).
        self.end_fetched = False
        self.record_fetched = False

    # --- who asks ---------------------------------------------------------------------------------------

    def viewer(self, token: Any) -> int | str | None:
        """Whom a request's token makes it: a person's seat, :data:`SPECTATOR`, or None (no token, or a wrong
        one). Compared in constant time: a token is not found out by timing the answers."""
        if not isinstance(token, str) or not token:
            return None
        found: int | str | None = None
        for seat, secret in self.tokens.items():
            if secrets.compare_digest(token.encode(), secret.encode()):
                found = seat
        if self.watch_token is not None and secrets.compare_digest(token.encode(), self.watch_token.encode()):
            found = SPECTATOR
        if isinstance(found, int):
            with self.lock:
                came_back = time.monotonic() - self.seen[found] > self.absent_seconds
                self.seen[found] = time.monotonic()
                if came_back:
                    self._touch()  # the seat shows as taken again
        return found

    def open_seats(self) -> list[int]:
        """The open seats nobody has taken (never seen with their token) nor been given by the lobby."""
        return [seat for seat in self.people if seat != self.human and self.seen[seat] == -math.inf
                and seat not in self.handed]

    def join(self) -> tuple[int, str]:
        """A listed table's first open seat, for whoever asks first: its seat and token."""
        with self.lock:
            if not self.listed:
                raise TableError("this table is not in the lobby: its seats are taken with the links its maker "
                                 "hands on", 403)
            free = self.open_seats() if self.status != "over" else []
            if not free:
                raise TableError("this table has no open seat left", 409)
            self.handed.add(free[0])
            self._touch()
            return free[0], self.tokens[free[0]]

    def lobby_entry(self) -> dict[str, Any]:
        """The table as the lobby lists it (public: the game, who sits where, how many seats are open)."""
        return {"id": self.id, "game": self.game.name, "title": self.game.title, "status": self.status,
                "seats": [self._label(seat) for seat in range(len(self.agents))], "open": len(self.open_seats()),
                "clock": self.clock}

    def present(self, seat: int) -> bool:
        return time.monotonic() - self.seen[seat] <= self.absent_seconds

    # --- playing ----------------------------------------------------------------------------------------

    def start(self) -> None:
        """Seat the bots (external programs start here) and play up to the person's first turn."""
        with self.lock:
            self.engine.begin()
            if self.engine.forfeit is not None:  # a program that did not start
                self._end()
                return
            for seat in self.people:
                self._frame(seat, None)
            self._public_frame(None)
        self.advance()  # outside the lock, which advance takes between the bots' moves (never while one thinks)

    def advance(self) -> None:
        """Let the bots play until it is a person's turn or the game is over (the lock is held between
        the bots' moves, never while one thinks, so that the page can read the table meanwhile)."""
        while True:
            with self.lock:
                if self.closed or self.status == "over":
                    return
                seat = self.engine.to_move()
                if seat is None:
                    self._end()
                    return
                if seat in self.tokens:
                    state = self.env.unwrapped.game_state
                    offer = declinable(self.game, state) if seat in self.answering else None
                    if offer is not None:
                        said = action_label(self.game, state, offer[0])
                        self._step(seat, offer[0], f"you: {said} (answered for you: {offer[1]})")
                        continue
                    if self.waiting_for != seat or self.status != "your_turn":
                        self.turn_began = time.monotonic()
                    self.waiting_for = seat
                    self._set_status("your_turn")
                    return
                self._set_status("bots")
            # The bot thinks outside the lock, so that the page can read the table meanwhile; nothing else
            # steps the env while the status is "bots" (the person's moves are refused until their turn).
            action = self.engine.think()
            with self.lock:
                if self.closed:
                    return
                if action is None:  # the bot forfeited
                    self._end()
                    return
                self._step(seat, action)

    def overdue(self) -> int | None:
        """The person's seat whose move the stand-in should play now: the table waits for it and its person
        is away (or never came), or its clock ran out; None otherwise."""
        with self.lock:
            if self.closed or self.status != "your_turn" or self.waiting_for is None:
                return None
            seat = self.waiting_for
            late = self.clock is not None and time.monotonic() - self.turn_began > self.clock
            return seat if late or not self.present(seat) else None

    def stand_in(self, seat: int) -> None:
        """The stand-in plays ``seat``'s move (see :meth:`overdue`), then the bots play on."""
        with self.lock:
            if self.closed or self.status != "your_turn" or self.waiting_for != seat:
                return
            away = not self.present(seat)
            self._set_status("bots")  # the person's move is refused while the stand-in thinks
        action = self.engine.think(stand_in=True)
        with self.lock:
            if self.closed:
                return
            if action is None:  # the stand-in forfeited for the person
                self._end()
                return
            said = action_label(self.game, self.env.unwrapped.game_state, action)
            why = "you were away" if away else "your time ran out"
            self._step(seat, action, f"played for you ({why}): {said}")
        self.advance()

    def act(self, name: Any, expected_step: Any = None, answer_offers: Any = None, seat: int | None = None) -> None:
        """The person at ``seat`` (default: the table maker's) plays the action called ``name``; the bots then
        play on (call :meth:`advance`). ``answer_offers`` (true or false), with an action or alone at any time:
        whether the table answers the game's declinable offers for that person from now on
        (:func:`eval.play.declinable`)."""
        with self.lock:
            seat = self.human if seat is None else seat
            if seat is None or seat not in self.tokens:
                raise TableError("nobody plays at this table: it is watched" if not self.people else
                                 "only a person's seat plays here: open the table with your seat's link", 403)
            if answer_offers is not None:
                _check_answer_offers(self.game, answer_offers)
                if name is None:
                    self._answer_offers(seat, answer_offers)
                    return
            if self.status != "your_turn" or self.waiting_for != seat:
                status = self.status.replace("_", " ") if self.status != "your_turn" else \
                    f"waiting for {self.agents[self.waiting_for]}"
                raise TableError(f"it is not your turn (the table is {status})", 409)
            if expected_step is not None and expected_step != len(self.frames[seat]) - 1:
                raise TableError("the table has moved on since your page last looked; reload the table", 409)
            legal = self.env.unwrapped.legal_action_names(self.agents[seat])
            if not isinstance(name, str) or name not in legal:
                raise TableError(f"{shown(name)} is not legal now; legal: {', '.join(legal)}")
            # The person's own move echoed as they read it (Minefield's "attack player_2"), as in the terminal.
            index = list(self.env.unwrapped.action_names).index(name)
            said = action_label(self.game, self.env.unwrapped.game_state, index)
            if answer_offers is not None:
                self._set_answering(seat, answer_offers)
            self._step(seat, index, f"you chose: {said}")
            self._set_status("bots")

    def _set_answering(self, seat: int, answering: bool) -> None:
        if answering:
            self.answering.add(seat)
        else:
            self.answering.discard(seat)

    def _answer_offers(self, seat: int, answering: bool) -> None:
        """Turn the answering of declinable offers on or off for ``seat`` (the lock held). An offer the last
        frame left to the table becomes the person's again: a new frame shows it with its choices."""
        self._set_answering(seat, answering)
        last = self.frames[seat][-1] if self.frames[seat] else None
        if not answering and last is not None and last.get("answered") and self.status != "over":
            self._frame(seat, None)
        self._touch()

    def _recorded(self) -> int:
        """Steps in the record so far (both adapters keep their record's steps in ``_history``)."""
        return len(self.env.unwrapped._history)

    def _step(self, seat: int, action: int, said: str | None = None) -> None:
        before = self._recorded()
        announced = bool(self.people) and self.game.name in PUBLIC_GAMES and not self.game.simultaneous
        # A move in words, from the state it was chosen in (its targets are named from there).
        move = move_label(self.game, self.env.unwrapped.game_state, action) if announced else None
        self.engine.step(action)
        self.recorded = self._recorded()
        if not self.people:
            self._touch()
            return
        simultaneous_pending = self.game.simultaneous and self._recorded() == before
        others = f"player_{seat} ({self._label(seat)}): {move}" if announced else None
        for person in self.people:
            note = (said or f"you play {self.env.unwrapped.action_names[action]}") if person == seat else others
            if simultaneous_pending:
                # The round is played once every seat has chosen; until then the person sees no change, and
                # their own choice is told with the round.
                self.said[person] = note or self.said.get(person)
                continue
            note, self.said[person] = note or self.said.get(person), None
            self._frame(person, note)
        if not simultaneous_pending:
            self._public_frame(others)
        else:
            self._touch()

    def _label(self, seat: int) -> str:
        """A seat as others read it: a bot's spec, or 'person' (an open seat nobody took: 'open seat')."""
        spec = self.seats[seat]
        if spec not in PERSON_SEATS:
            return spec
        return "person" if self.seen[seat] > -math.inf else "open seat"

    def _frame(self, seat: int, note: str | None) -> None:
        state = self.env.unwrapped.game_state
        view = self.env.unwrapped.view(self.agents[seat])
        mark = event_mark(self.game, state, seat)
        events, self.shown[seat] = new_events(self.shown[seat], mark), mark
        frames = self.frames[seat]
        frame = {"step": len(frames), "note": note, "view": view, "events": events,
                 "descriptions": describe(self.game, self.config, view.get("legal_actions", []), state),
                 "parts": action_parts(self.game, self.config, view.get("legal_actions", []), state)}
        offer = declinable(self.game, state) if view.get("legal_actions") else None
        if offer is not None and seat in self.answering:
            frame["answered"] = True  # the table plays it (advance): the page offers no choice here
        elif offer is not None:
            frame["offer"] = {"decline": self.env.unwrapped.action_names[offer[0]], "offers": offer[1]}
        frames.append(frame)
        self._touch()

    def _public_frame(self, note: str | None) -> None:
        """The spectators' frame of this step: only what every seat sees alike (:func:`public_view`)."""
        if not self.people:
            return
        state = self.env.unwrapped.game_state
        marks = [event_mark(self.game, state, seat) for seat in range(len(self.agents))]
        told = [new_events(before, after) for before, after in zip(self.public_shown, marks, strict=True)]
        self.public_shown = marks
        view = public_view(self.game, state, len(self.agents), sample_seed=self.seed + len(self.public_frames))
        self.public_frames.append({"step": len(self.public_frames), "note": note, "view": view,
                                   "events": common_lines(told), "descriptions": {}})
        self._touch()

    def _end(self) -> None:
        """The game is over (or forfeited): the engine tells the bots; the result and the last frames kept."""
        result = self.engine.finish()
        lost = result.forfeit
        if lost is not None:
            self.forfeit = {"seat": lost.seat, "bot": self._label(lost.seat), "kind": lost.kind,
                            "reason": lost.reason}
        self.returns = result.returns
        # The llm: bots' counts of this game, kept for the record (the bots are closed below).
        self.bot_stats = result.record.get("bot_stats")
        self.waiting_for = None
        for seat in self.people:
            frames = self.frames[seat]
            if lost is not None:
                self._frame(seat, f"player_{lost.seat} ({self._label(lost.seat)}) forfeits: {lost.kind}")
            elif not frames or frames[-1]["view"].get("legal_actions") or len(frames) < len(self.public_frames):
                self._frame(seat, None)  # the last frame must not offer actions any more
        if self.people:
            self._public_frame(None if lost is None else f"player_{lost.seat} forfeits: {lost.kind}")
        self._set_status("over")
        self.close_bots()

    def _set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self._touch()

    def _touch(self) -> None:
        self.version += 1
        self.touched = time.monotonic()

    # --- what the page may see -----------------------------------------------------------------------------

    def steps_for(self, viewer: int | str | None = None) -> int:
        """Frames so far: a person's own, the spectators', or a watched table's recorded steps."""
        if isinstance(viewer, int):
            return len(self.frames[viewer])
        if self.people:
            return len(self.public_frames)
        return self.recorded + 1

    @property
    def steps(self) -> int:
        """Frames so far of the table maker's seat, or the spectators' (a watched table's recorded steps)."""
        return self.steps_for(self.human)

    def summary(self, viewer: int | str | None = None) -> dict[str, Any]:
        """The table as a page sees it: no seed and no record until the game is over. ``viewer`` (a person's
        seat, :data:`SPECTATOR` or None) decides what is "you" and whose turn it is; nothing in it is hidden
        from anyone at the table (the event stream sends it without a viewer)."""
        over = self.status == "over"
        seats = [{"seat": seat, "agent": self.agents[seat], "player": "you" if seat == viewer else self._label(seat),
                  **({"person": True, "present": self.present(seat)} if seat in self.tokens else {})}
                 for seat in range(len(self.agents))]
        status = self.status
        if status == "your_turn" and viewer != self.waiting_for:
            status = "waiting"  # for another person
        summary: dict[str, Any] = {
            "id": self.id, "game": self.game.name, "env": self.game.env_name, "title": self.game.title,
            "seats": seats, "human": viewer if isinstance(viewer, int) else None, "status": status,
            "to_move": self.waiting_for if self.status == "your_turn" else None,
            "steps": self.steps_for(viewer), "version": self.version, "people": len(self.people),
            "spectator": viewer == SPECTATOR, "clock": self.clock,
        }
        if self.clock is not None and self.status == "your_turn":
            summary["clock_left"] = max(0.0, round(self.clock - (time.monotonic() - self.turn_began), 1))
        offers = offers_of(self.game) if isinstance(viewer, int) else None
        if offers is not None:
            summary["offers"] = offers  # what answer_offers answers, and whether it is on
            summary["answer_offers"] = viewer in self.answering
        if over:
            summary["seed"] = str(self.seed)  # a string: a browser reads a number past 2^53 rounded, another deal
            summary["result"] = self.result(viewer if isinstance(viewer, int) else None)
        return summary

    def links(self) -> dict[str, Any]:
        """The capability tokens, for the person who made the table alone (the answer that made it): each
        person's seat's and the spectators'."""
        return {"seats": {str(seat): token for seat, token in self.tokens.items()}, "watch": self.watch_token}

    def saw_end(self, record: bool = False) -> None:
        """Its player has been sent the end of the game (``record``: and the record)."""
        if self.status == "over":
            self.end_fetched = True
            self.record_fetched = self.record_fetched or record

    def released(self, idle: float, grace: float) -> bool:
        """Whether a new game may take this table's place without its player losing anything: over, the end
        fetched, and then the record fetched too or nothing asked of the table for ``grace`` seconds (a page
        shows the end first; its person may then download the record or ask for a rematch)."""
        return self.status == "over" and self.end_fetched and (self.record_fetched or idle > grace)

    def result(self, viewer: int | None = None) -> dict[str, Any]:
        """The game's returns, each seat's win share and place (eval/tally.py ``score_game``, the one tally: a
        forfeit's seat 0 and last, the others sharing the win), the verdict for ``viewer`` (the table maker's
        seat by default), the forfeit and the game's reason for ending; shares and places None while it runs."""
        state = self.env.unwrapped.game_state
        score = None
        if self.forfeit is not None or self.returns is not None:
            # Places by the game's own order of going out (rules.seats_out) where it has one: Minefield pays
            # every loser alike, but the last one out finished second.
            seats_out = getattr(self.game.rules, "seats_out", None)
            score = score_game(self.returns, len(self.agents), None if self.forfeit is None else self.forfeit["seat"],
                               seats_out(state) if seats_out is not None and self.forfeit is None else ())
        verdict = None
        you = self.human if viewer is None else viewer
        if you is not None and score is not None:
            share = score.scores[you]
            verdict = "you win" if share == 1.0 else "you lose" if share == 0.0 else "you share the win"
        return {"returns": self.returns, "scores": None if score is None else score.scores,
                "places": None if score is None else score.places, "verdict": verdict,
                "forfeit": self.forfeit, "end_reason": getattr(state, "end_reason", None) or None}

    def frames_since(self, since: int, seat: Any = None, limit: int = 64,
                     viewer: int | str | None = HUMAN) -> list[dict[str, Any]]:
        """Frames ``since+1 ..`` for ``viewer``: a person's own (``seat`` must be theirs or absent), the
        spectators' public frames, or any seat's when the table is watched (no people). ``HUMAN``: the
        table maker's seat (the MCP client's, whose process is its token)."""
        if viewer == HUMAN:
            viewer = self.human
        if self.people and viewer is None:
            raise TableError("this table's frames are for its people and spectators: open it with your seat's link "
                             "or the spectator link", 403)
        if isinstance(viewer, int) or viewer == SPECTATOR:
            if seat is not None and seat != viewer:
                raise TableError("a player's page sees only its own seat" if isinstance(viewer, int) else
                                 "a spectator sees the public table, no seat's own view", 403)
            with self.lock:
                frames = self.frames[viewer] if isinstance(viewer, int) else self.public_frames
                return frames[since + 1: since + 1 + limit]
        with self.lock:
            record = self.env.unwrapped.record(seats=self.seats)
        seat = 0 if seat is None else seat
        timeline = Timeline(record, allow_local=True, trusted=True)  # this table's own game, vetted when made
        return [timeline.frame(step, seat) for step in range(max(since + 1, 0), min(timeline.steps, since + 1 + limit))]

    def record(self) -> dict[str, Any]:
        if self.status != "over":
            raise TableError("the record (with every hand and die) is available once the game is over", 409)
        with self.lock:
            record = self.env.unwrapped.record(seats=self.seats)
        if self.forfeit is not None:
            record["forfeit"] = self.forfeit
        if self.bot_stats is not None:
            record["bot_stats"] = self.bot_stats
        return record

    def close_bots(self) -> None:
        for bot in [*self.bots.values(), *self.stand_ins.values()]:
            try:
                as_bot(bot).close()
            except Exception:  # noqa: BLE001, S110 - closing is best effort
                pass

    def close(self, wait: float = CLOSE_WAIT_SECONDS) -> None:
        """Close the table: its worker (a bot's move under way) is waited for, then the bots still in a game hear
        ``game_over`` without a result (eval/table.py ``abandon``) and are closed. A bot that still thinks after
        ``wait`` seconds is closed first, which stops a search (and a program), and then told."""
        with self.lock:
            self.closed = True  # the worker plays no further move
        worker = self.worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(wait)
            if worker.is_alive():
                self.close_bots()
                worker.join(wait)
        engine = getattr(self, "engine", None)  # none yet when a bot failed to load
        if engine is not None:
            with self.lock:
                engine.abandon()
        self.close_bots()


# --- what spectators see ------------------------------------------------------------------------------


def public_view(game: Game, state: Any, count: int, sample_seed: int = 0) -> dict[str, Any]:
    """What a spectator may see of ``state``: the parts of the seats' views that every seat sees alike.

    A value is kept only where it is the same in every seat's view, and (in a game with hidden information)
    also in each seat's view of a state dealt afresh from another seat's knowledge (``rules.determinize``:
    that seat's hand redealt), so that a hand is never shown because it happens to match what others see.
    A list whose items differ is dropped whole; ``you`` (whose view it is) goes."""
    views = [game.encoder.view(state, seat) for seat in range(count)]
    if not game.public:
        determinize = game.rules.determinize
        for seat in range(count):
            other = (seat + 1) % count
            resampled = determinize(state, other, Chance(sample_seed * 64 + seat))
            views.append(game.encoder.view(resampled, seat))
    common = views[0]
    for view in views[1:]:
        common = _common(common, view)
    common.pop("you", None)
    return {"game": game.name, "env": game.env_name, "agent": None, **common, "legal_actions": []}


_DIFFERS = object()


def _common(a: Any, b: Any) -> Any:
    """What ``a`` and ``b`` hold alike (:data:`_DIFFERS` when nothing): dicts key by key, lists item by item."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = {}
        for key, value in a.items():
            if key in b:
                kept = _common(value, b[key])
                if kept is not _DIFFERS:
                    out[key] = kept
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return _DIFFERS
        items = [_common(x, y) for x, y in zip(a, b, strict=True)]
        return _DIFFERS if any(item is _DIFFERS for item in items) else items
    return a if type(a) is type(b) and a == b else _DIFFERS


def common_lines(told: list[list[str]]) -> list[str]:
    """The event lines every seat was shown (each as often as every seat was), in the first seat's order."""
    from collections import Counter

    if not told:
        return []
    counts = Counter(told[0])
    for lines in told[1:]:
        counts &= Counter(lines)
    out = []
    for line in told[0]:
        if counts[line] > 0:
            counts[line] -= 1
            out.append(line)
    return out


# --- replaying records --------------------------------------------------------------------------------


class Timeline:
    """Any step of a recorded game, from any seat: the state after ``step`` actions, by replaying them."""

    def __init__(self, record: dict[str, Any], allow_local: bool = False, trusted: bool = False):
        """``trusted``: the record is a table's own, every step already played by the rules; any other is
        replayed whole here, so a bad step is refused when the file is opened, not when the viewer reaches it."""
        check_record(record)  # the shape of every field; each step is checked as it is played
        self.record = record
        self.game = record_game(record)  # an earlier version the game still plays too (ministeel_v1)
        try:
            refuse_server_files(self.game, record["config"], allow_local)
        except TableError as error:
            raise ReplayError(f"the record's config names {error}") from None
        try:
            self.config = self.game.make_config(record["config"])
        except (TypeError, ValueError) as error:
            raise ReplayError(f"the record's config does not hold: {error}") from None
        self.chance = [(int(n), int(v)) for n, v in record["chance"]]
        self.actions = list(record["actions"])
        self.seats = self.game.rules.num_seats(self.config)
        self.steps = len(self.actions) + 1  # the deal, then after each action
        self._cursor: tuple[int, Any] | None = None
        self._mark: tuple[int, int, Any] | None = None  # (step, seat, event mark) of the last frame made
        self._lock = threading.Lock()  # requests for frames of one replay come on several threads
        if not trusted:
            self.state(self.steps - 1)

    def state(self, step: int) -> Any:
        """The state after ``step`` actions (forward from the last state asked for when possible)."""
        with self._lock:
            return self._state(step)

    def _check_step(self, step: int) -> None:
        if not 0 <= step < self.steps:
            raise ReplayError(f"step {step} is not in this game: its steps are 0..{self.steps - 1} (0 is the deal)")

    def _state(self, step: int) -> Any:
        self._check_step(step)
        if self._cursor is None or self._cursor[0] > step:
            self._cursor = (0, self.game.rules.new_game(self.config, Chance.scripted(self.chance)))
        done, state = self._cursor
        for number in range(done, step):
            self._apply(state, self.actions[number], number)
        self._cursor = (step, state)
        return state

    def _apply(self, state: Any, entry: Any, number: int) -> None:
        play = play_joint if self.game.simultaneous else play_turn
        try:
            play(self.game, self.config, state, number, entry)  # the step's shape and its seat checked too
        except (TypeError, ValueError, IndexError) as error:
            # Step number+1 is the state this action leads to: the numbering the replay's slider shows.
            raise ReplayError(f"step {number + 1} ({_move_text(entry)}) cannot be played: "
                              f"{clip(str(error), 4 * SHOWN_CHARS)}") from None

    def frame(self, step: int, seat: int) -> dict[str, Any]:
        """The view of ``seat`` after ``step`` actions, with the action that led there and the full table."""
        if not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise ReplayError(f"seat {seat!r} is not a seat of this game (0-{self.seats - 1})")
        with self._lock:
            self._check_step(step)  # before the step ahead of it is looked at: the error names the step asked for
            before, note = NOTHING_SHOWN, None
            if step > 0:  # the events of this step are those its state adds to the step before's
                previous = self._state(step - 1)
                note = self._note(previous, self.actions[step - 1])  # before the state moves on to `step`
                cached = self._mark
                before = cached[2] if cached and cached[:2] == (step - 1, seat) else \
                    event_mark(self.game, previous, seat)
            state = self._state(step)
            mark = event_mark(self.game, state, seat)
            self._mark = (step, seat, mark)
            return {**self._frame(state, step, seat, note), "events": new_events(before, mark)}

    def _note(self, state: Any, entry: dict[str, Any]) -> str:
        """The step's moves in words, labelled from the ``state`` they were chosen in (a step that replayed)."""
        def said(name: str) -> str:
            return move_label(self.game, state, self.game.action_index(self.config, name))

        if "joint" in entry:
            return "; ".join(f"player_{seat}: {said(name)}" for seat, name in entry["joint"].items())
        return f"player_{entry['seat']}: {said(entry['action'])}"

    def _frame(self, state: Any, step: int, seat: int, note: str | None) -> dict[str, Any]:
        view = {"game": self.game.name, "env": self.game.env_name, "agent": f"player_{seat}",
                **self.game.encoder.view(state, seat)}
        return {"step": step, "note": note, "view": view, "text": self.game.encoder.render(state)}

    def summary(self) -> dict[str, Any]:
        record = self.record
        return {"game": self.game.name, "title": self.game.title, "steps": self.steps, "seats": record.get("seats"),
                # the seed as a string, as a table's: exact in a browser however large
                "seed": None if record.get("seed") is None else str(record["seed"]),
                "returns": record.get("returns"), "end_reason": record.get("end_reason"),
                "forfeit": record.get("forfeit")}


def _move_text(entry: Any) -> str:
    """A record's step as a person reads it in an error: who played which action (as far as it says)."""
    if isinstance(entry, dict) and isinstance(entry.get("joint"), dict):
        return "; ".join(f"player_{seat} plays {shown(name)}" for seat, name in entry["joint"].items())
    if isinstance(entry, dict) and "action" in entry:
        return f"player_{entry.get('seat', '?')} plays {shown(entry['action'])}"
    return f"the entry {shown(entry)}"


def read_records(text: str, max_records: int) -> list[dict[str, Any]]:
    """The game records in a JSON or JSON-lines text: plain records (``match --records``) or tournament
    lines (``games.jsonl``, the record under ``"record"``)."""
    import json

    stripped = text.strip()
    if not stripped:
        raise ReplayError("the file is empty")
    try:
        whole = json.loads(stripped)  # one record (perhaps pretty-printed), or a list of them
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise ReplayError("the file nests deeper than any record does") from None
    if isinstance(whole, dict | list):
        documents = whole if isinstance(whole, list) else [whole]
    else:
        documents = []
        for number, line in enumerate(stripped.splitlines(), start=1):
            if line.strip():
                try:
                    documents.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ReplayError(f"line {number} is not JSON: {error}") from None
                except RecursionError:
                    raise ReplayError(f"line {number} nests deeper than any record does") from None
    if len(documents) > max_records:
        raise ReplayError(f"the file holds {len(documents)} games; at most {max_records} can be opened at once")
    records = []
    for number, document in enumerate(documents, start=1):
        if isinstance(document, dict) and isinstance(document.get("record"), dict):
            record = dict(document["record"])
            if document.get("forfeit"):
                record["forfeit"] = document["forfeit"]
            document = record
        if not isinstance(document, dict) or document.get("format") != "tavernzoo-record":
            raise ReplayError(f"entry {number} is not a tavernzoo game record (nor a tournament line holding one)")
        records.append(document)
    return records


# --- bounded stores -----------------------------------------------------------------------------------


class Store:
    """At most ``limit`` items, each dropped ``ttl`` seconds after its last use.

    When full, a new item makes room by dropping the least recently used item that ``evictable(item,
    seconds since its last use)`` allows (any item, if no ``evictable`` is given); when none may go, the
    new item is refused (:class:`TableError` 503 with ``full_message``) rather than a game in play lost."""

    def __init__(self, limit: int, ttl: float, on_drop: Callable[[Any], None] | None = None,
                 evictable: Callable[[Any, float], bool] | None = None, full_message: str = "the server is full"):
        self.limit, self.ttl, self.on_drop = limit, ttl, on_drop
        self.evictable, self.full_message = evictable, full_message
        self.items: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self.lock = threading.Lock()

    def add(self, key: str, item: Any, admit: Callable[[list[tuple[Any, float]]], None] | None = None) -> None:
        """Keep ``item`` under ``key``. ``admit`` (given every item held, each with the seconds since its last
        use) may refuse it by raising :class:`TableError`: called under the store's lock, so a quota is
        checked and taken in one step, however many requests arrive at once."""
        refused: TableError | None = None
        full = False
        with self.lock:
            dropped = self._expire()
            now = time.monotonic()
            if admit is not None:
                try:
                    admit([(old, now - used) for used, old in self.items.values()])
                except TableError as error:
                    refused = error
            if refused is None:
                while len(self.items) >= self.limit:
                    victim = next((k for k, (used, old) in self.items.items()
                                   if self.evictable is None or self.evictable(old, now - used)), None)
                    if victim is None:
                        break
                    dropped.append(self.items.pop(victim)[1])
                full = len(self.items) >= self.limit
                if not full:
                    self.items[key] = (now, item)
        self._drop(dropped)
        if refused is not None:
            raise refused
        if full:
            raise TableError(self.full_message, 503)

    def held(self) -> list[tuple[Any, float]]:
        """Every item with the seconds since its last use (for a quota's check before an item is built)."""
        with self.lock:
            now = time.monotonic()
            return [(item, now - used) for used, item in self.items.values()]

    def remove(self, key: str) -> Any:
        """Take ``key``'s item out (None if there is none); the caller closes it."""
        with self.lock:
            entry = self.items.pop(key, None)
        return None if entry is None else entry[1]

    def get(self, key: str) -> Any:
        with self.lock:
            dropped = self._expire()
            entry = self.items.get(key)
            if entry is not None:
                self.items[key] = (time.monotonic(), entry[1])
                self.items.move_to_end(key)
        self._drop(dropped)
        return None if entry is None else entry[1]

    def values(self) -> Iterator[Any]:
        with self.lock:
            return iter([item for _, item in self.items.values()])

    def _expire(self) -> list[Any]:
        now, dropped = time.monotonic(), []
        for key in [k for k, (used, _) in self.items.items() if now - used > self.ttl]:
            dropped.append(self.items.pop(key)[1])
        return dropped

    def _drop(self, items: list[Any]) -> None:
        if self.on_drop is not None:
            for item in items:
                self.on_drop(item)
