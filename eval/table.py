"""The table engine: one game at one table, and the one place that calls a bot's per-game hooks.

Every game a host plays goes through a :class:`Table` (OpenSpiel's ``evaluate_bots``, made steppable), so
each bot hears the same story whichever host seats it::

    begin_game(seat, seed)                      every seat, in seat order, before the first move
    observe_events(lines)                       if it wants_events: once the game is dealt and after every rules
                                                step, the lines that step showed its seat
    [observe_view | observe_information_state]  before each of its moves, what it asked for (agents/infoset.py)
    act(observation)                            its move
    game_over(returns, seat)                    every seat, when the game ends (returns None after a forfeit)
    game_stats()                                read into the record's ``bot_stats``

A bot's ``close`` is not the table's: a bot sits at many tables (a block of a match, a tournament's
process), and whoever loaded it closes it.

A seat without a bot (``None`` in ``bots``) is a person's (the web page's, an MCP client's, the terminal's):
:meth:`Table.to_move` stops there and the host plays the person's move with ``step(action)``, checked
(an illegal one raises :class:`~tavernzoo.envs.core.IllegalActionError` naming the legal ones, the game
unchanged; nothing is replaced). A host that must not wait while a bot thinks (the web page holds a lock
between moves) asks the bot with :meth:`Table.think` and plays its answer with ``step(action)``; a person
who leaves forfeits the game (:meth:`Table.resign`), or, where the host seats a *stand-in* for the person
(``stand_ins``: a bot per person's seat, told the game begins and ends as the bots are), the stand-in plays the
seat's moves the host asks it for (``think(stand_in=True)``: the web's fallback for a person away or out of time);
a table the host closes mid-game tells its bots the game is over without a result (:meth:`Table.abandon`).

A loop that cannot play each game at a Table (the training league's lanes, train/selfplay.py) tells its
bots the same story through :func:`tell_game_begins` and :func:`tell_game_over`, which the Table uses too.

With ``forfeits=True`` (a tournament, a web table) each seat plays behind a
:class:`~tavernzoo.eval.guard.Guard`: a bot that fails or plays an illegal move forfeits the game, which
ends there, and its ``game_over`` still comes (a program that died is told nothing; its failure then is
not the table's business: it is restarted before its next game). Without (a match), a bot's failure ends
the game by raising, as the match reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agents.base import BotBase, as_bot
from ..agents.infoset import feed
from ..agents.text_views import EventTracker
from ..envs.aec import as_action
from ..envs.core import IllegalActionError
from .guard import Forfeit, Guard

__all__ = ["Forfeit", "Table", "TableResult", "bot_stats", "tell_game_begins", "tell_game_over"]


@dataclass
class TableResult:
    """How a game ended: each seat's summed rewards (None after a forfeit), its record, the forfeit."""

    returns: list[float] | None
    record: dict[str, Any]
    forfeit: Forfeit | None = None


class Table:
    """One game of ``env`` with ``bots[seat]`` at each seat (None: a person's seat), dealt by ``seed``.

    ``bot_seeds[seat]`` is the seed each bot's ``begin_game`` gets (None, or no list: the bot keeps its own
    seeds); ``seat_names`` label the seats in the record. :meth:`play` plays a game between bots; a host
    that waits between moves (a person's seat) calls :meth:`begin`, then asks :meth:`to_move` and plays
    that seat's move (``step()`` for a bot, ``step(action)`` for a person) until it returns None, and
    calls :meth:`finish`."""

    def __init__(self, env: Any, bots: Sequence[Any], seed: int, seat_names: Sequence[str] | None = None,
                 bot_seeds: Sequence[int | None] | None = None, forfeits: bool = False,
                 stand_ins: Mapping[int, Any] | None = None):
        self.env, self.seed, self.forfeits = env, seed, forfeits
        self.seat_names = list(seat_names) if seat_names else None
        self.bots = [None if bot is None else as_bot(bot) for bot in bots]
        self.bot_seeds = list(bot_seeds) if bot_seeds is not None else [None] * len(self.bots)
        self._seats: list[Any] = ([None if bot is None else Guard(bot, seat, self.bot_seeds[seat], env)
                                   for seat, bot in enumerate(self.bots)] if forfeits else self.bots)
        self._seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
        # A person's seat may have a bot that plays for them when the host asks (the bot's seed: bot_seeds).
        self.stand_ins = {seat: as_bot(bot) for seat, bot in (stand_ins or {}).items()}
        if any(self.bots[seat] is not None for seat in self.stand_ins):
            raise ValueError("a stand-in sits in for a person: its seat must have no bot")
        self._stand_ins = ({seat: Guard(bot, seat, self.bot_seeds[seat], env) for seat, bot in self.stand_ins.items()}
                           if forfeits else self.stand_ins)
        self.totals = [0.0] * len(self.bots)
        self.forfeit: Forfeit | None = None
        self._to_move: int | None = None  # the seat found to move, its reward counted (cleared by a move)
        self._trackers: dict[int, EventTracker] = {}  # the seats whose bots want every step's events
        self._begun = False  # the bots were told the game begins ...
        self._told_over = False  # ... and that it ended (once: by finish, or by abandon)

    # --- the steps ----------------------------------------------------------------------------------------

    def begin(self) -> None:
        """Deal the game and tell every seat it begins."""
        self.env.reset(seed=self.seed)
        self.totals = [0.0] * len(self.bots)
        self.forfeit = self._to_move = None
        self._trackers = {}
        self._begun, self._told_over = True, False
        try:
            tell_game_begins({**{seat: bot for seat, bot in enumerate(self._seats) if bot is not None},
                              **self._stand_ins}, self.bot_seeds)
        except Forfeit as lost:
            if not self.forfeits:
                raise
            self.forfeit = lost
            return
        self._trackers = {seat: EventTracker() for seat, bot in enumerate(self._seats)
                          if bot is not None and bot.wants_events}
        self._tell_events()  # the deal's (MiniSteel's initiative rolls, Minefield's mines)

    def _tell_events(self) -> None:
        """Hand each bot that wants them the lines the latest step showed its seat (computed on the real
        state for that seat, as the terminal and the web page show a person: nothing hidden from it)."""
        if not self._trackers:
            return
        unwrapped = self.env.unwrapped
        for seat, tracker in self._trackers.items():
            lines = tracker.see(unwrapped.game, unwrapped.game_state, seat)
            tracker.take()  # the bot keeps them; the tracker only marks what was told
            try:
                self._seats[seat].observe_events(lines)
            except Forfeit as lost:
                if not self.forfeits:
                    raise
                self.forfeit = lost
                return

    def to_move(self) -> int | None:
        """The seat whose move the game waits for, or None once it is over (or forfeited)."""
        if self.forfeit is not None:
            return None
        if self._to_move is not None:
            return self._to_move
        env = self.env
        while env.agents:
            agent = env.agent_selection
            _, reward, termination, truncation, _ = env.last(observe=False)  # the observation is step()'s
            seat = self._seat_of[agent]
            self.totals[seat] += reward
            if termination or truncation:
                env.step(None)  # the agent leaves; its reward is counted above
                continue
            self._to_move = seat
            return seat
        return None

    def step(self, action: Any = None) -> bool:
        """The next move: the bot's at a bot's seat, or ``action`` (a person's move, or the answer of a bot
        the host asked with :meth:`think`); False once the game is over (or forfeited). A person's
        ``action`` must be legal: else IllegalActionError names the legal ones and nothing moves."""
        if action is None:
            action = self.think()
            if action is None:
                return False
        else:
            seat = self.to_move()
            if seat is None:
                raise RuntimeError("step(action) after the game is over: finish() it")
            if self.bots[seat] is None:
                action = self._legal(action)
        # The reward an agent gets for its move is read at its next turn (or as it leaves), in to_move().
        self.env.step(action)
        self._to_move = None
        self._tell_events()
        return True

    def think(self, stand_in: bool = False) -> Any:
        """The move the bot at the seat to move chooses, not yet played (:meth:`step` plays it); None once
        the game is over, or when the bot forfeits it (with ``forfeits``; without, its failure raises).
        ``stand_in``: at a person's seat, the move of the stand-in seated for them."""
        seat = self.to_move()
        if seat is None:
            return None
        bot = self._seats[seat]
        if bot is None and stand_in:
            bot = self._stand_ins.get(seat)
        if bot is None:
            raise RuntimeError(f"seat {seat} is a person's: play their move with step(action)")
        agent = self.env.agent_selection
        observation = self.env.observe(agent)
        try:
            if not self.forfeits:
                feed(bot, self.env, agent)  # a Guard feeds its bot itself
            return bot.act(observation)
        except Forfeit as lost:
            if not self.forfeits:
                raise
            self.forfeit = lost
            return None

    def resign(self, seat: int, reason: str = "left the game") -> None:
        """The person at ``seat`` leaves: they forfeit the game, which ends there (:meth:`finish` tells the
        bots, returns None)."""
        if self.bots[seat] is not None:
            raise ValueError(f"seat {seat} is a bot's: only a person resigns")
        self.forfeit = Forfeit(seat, "left", reason)

    def _legal(self, action: Any) -> int:
        """A person's ``action`` as the index of a legal action, else IllegalActionError naming the legal ones
        (checked here: the wrapped env would end the game on an illegal move, not refuse it)."""
        unwrapped = self.env.unwrapped
        legal = unwrapped.legal_action_names(self.env.agent_selection)
        try:
            index = as_action(action, len(unwrapped.action_names))
        except (TypeError, ValueError):
            raise IllegalActionError(action, legal) from None
        if unwrapped.action_names[index] not in legal:
            raise IllegalActionError(unwrapped.action_names[index], legal)
        return index

    def finish(self) -> TableResult:
        """Tell every seat the game ended and give its result."""
        if self.to_move() is not None:
            raise RuntimeError("finish() before the game is over: step() until it returns False")
        returns = None if self.forfeit is not None else [float(value) for value in self.totals]
        self._told_over = True
        # With forfeits, a program that died is told nothing (its game_over returns at once), and one that
        # fails now is restarted before its next game.
        tell_game_over({**{seat: bot for seat, bot in enumerate(self.bots) if bot is not None}, **self.stand_ins},
                       returns, failures_ignored=self.forfeits)
        record = self.env.unwrapped.record(seats=self.seat_names)
        try:
            stats = bot_stats(self.bots)  # counted for a forfeited game too (the llm: bots' requests)
        except Exception:
            if not self.forfeits:
                raise
            stats = None  # a bot's counts are not worth the game's end: the record goes without them
        if stats is not None:
            record["bot_stats"] = stats
        return TableResult(returns, record, self.forfeit)

    def abandon(self) -> None:
        """The host closes the table before the game ended (a web page or MCP client closed it, a server
        stops): every seated bot hears ``game_over`` without a result (returns None), as after a forfeit. Once
        per game, and only to bots told it began; after :meth:`finish` nothing more is said. Call it when no
        bot is thinking (the host's worker has returned)."""
        if not self._begun or self._told_over:
            return
        self._told_over = True
        tell_game_over({seat: bot for seat, bot in enumerate(self.bots) if bot is not None}, None,
                       failures_ignored=True)

    def play(self) -> TableResult:
        """The whole game between bots: :meth:`begin`, every :meth:`step`, :meth:`finish`."""
        self.begin()
        while self.step():
            pass
        return self.finish()


def bot_stats(bots: Sequence[Any | None]) -> list[dict[str, Any] | None] | None:
    """A game record's ``bot_stats``: each seat's ``game_stats()`` of the game just played (the ``llm:``
    bots' counts; None for a bot that counts nothing or a seat no bot holds, e.g. a person's), or None
    when no seat counted anything."""
    stats = [as_bot(bot).game_stats() if bot is not None else None for bot in bots]
    return stats if any(item is not None for item in stats) else None


def takes_game_seed(bot: Any) -> bool:
    """Whether ``bot``'s ``begin_game`` may use the game's seed: any bot but one that keeps ``BotBase``'s, which
    ignores it (the built-in bots are seeded when they are built). A host derives a game's seed (eval/deals.py
    ``DealPlan.game_seed``) only for these: one costs about 2% of a Tiny Minotaur game, so a seed per seat and
    game, made for bots that never read it, slowed a fast match by several percent. Giving None instead
    changes nothing for such a bot (its ``begin_game`` resets it either way)."""
    return type(bot).begin_game is not BotBase.begin_game


def tell_game_begins(bots: Mapping[int, Any],
                     seeds: Mapping[int, int | None] | Sequence[int | None] | None = None) -> None:
    """Tell each bot (``bots``: seat -> a bot with every hook, :func:`~tavernzoo.agents.base.as_bot`) that a
    game begins at its seat; ``seeds[seat]`` is its ``begin_game`` seed (None: it keeps its own)."""
    for seat, bot in bots.items():
        bot.begin_game(seat, None if seeds is None else seeds[seat])


def tell_game_over(bots: Mapping[int, Any], returns: list[float] | None, failures_ignored: bool = False) -> None:
    """Tell each bot (seat -> bot) that its game ended: ``returns`` per seat, or None when it ended without a
    result (a forfeit, a game cut short). ``failures_ignored``: a bot's failure here is not the host's."""
    for seat, bot in bots.items():
        if not failures_ignored:
            bot.game_over(returns, seat)
            continue
        try:
            bot.game_over(returns, seat)
        except Exception:  # noqa: BLE001, S110 - the game is over either way
            pass
