"""A finished table reviewed at the web page: any step from any seat's view, the decisions marked, and a branch.

Once a table's game is over its page may step back and forth through the whole game (:func:`review_frame`),
from a seat's view or the public one; each decision of a seat is marked with what it cost by the game's
strongest judge (:mod:`tavernzoo.eval.review`, computed once per seat and kept with the table, within the
server's ``review_seconds``); and from any step the game may be played on at a new table
(:class:`BranchTable`): the same options, seed and bots, the game replayed to that step by the rules engine,
the person in their seat.

Who sees what, once the game is over (docs/web.md, "Review"): a person at the table (their seat's token) may
look from every seat, the hands included: the game is over and its record, which holds every hand and die,
is theirs to download already; at a table of bots any seat is shown to anyone, as while it was watched; a
spectator sees the public table alone (:func:`tables.public_view`), as during the game. The table id alone
shows a table with people nothing, as during the game.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ..envs import ReplayError
from ..envs.core import config_to_dict
from ..eval.play import PUBLIC_GAMES, action_label, event_mark, new_events
from .tables import HUMAN, PERSON_SEATS, SPECTATOR, Table, TableError, Timeline, common_lines, public_view, shown


class Review:
    """What a finished table keeps for its review: its record's :class:`Timeline` and each seat's marks."""

    def __init__(self, table: Table):
        self.record = table.record()
        self.timeline = Timeline(self.record, allow_local=True, trusted=True)  # the table's own game
        self.marks: dict[int, dict[str, Any]] = {}
        self.lock = threading.Lock()  # one computation of a seat's marks, however many pages ask at once


_REVIEWS_LOCK = threading.Lock()


def review_of(table: Table) -> Review:
    """The table's :class:`Review` (made at the first request, once the game is over; 409 before)."""
    if table.status != "over":
        raise TableError("the review opens once the game is over", 409)
    with _REVIEWS_LOCK:
        review = getattr(table, "review", None)
        if review is None:
            review = table.review = Review(table)
        return review


def _seen_seat(table: Table, viewer: int | str | None, seat: int | None, what: str) -> int | None:
    """The seat whose view (or marks) ``viewer`` asked for (None: the public table, a spectator's); 403 for a
    viewer who may not, 400 for a seat the game does not have."""
    if viewer == SPECTATOR:
        if seat is not None:
            raise TableError(f"a spectator sees the public table, not a seat's {what}", 403)
        return None
    if table.people and not isinstance(viewer, int):
        raise TableError("this table's review is for its people and spectators: open it with your seat's link or "
                         "the spectator link", 403)
    count = len(table.agents)
    if seat is None:
        return viewer if isinstance(viewer, int) else 0
    if not 0 <= seat < count:
        raise TableError(f"seat {seat} is not a seat of this game (0-{count - 1})")
    return seat


def review_frame(table: Table, viewer: int | str | None, step: int | None, seat: int | None) -> dict[str, Any]:
    """Step ``step`` of the finished game (default: its end) from ``seat``'s view (default: the viewer's own;
    a spectator: the public table), with the move that led there and the events the step showed that seat."""
    review = review_of(table)
    timeline = review.timeline
    seat = _seen_seat(table, viewer, seat, "view")
    last = timeline.steps - 1
    step = last if step is None else step
    if not 0 <= step <= last:
        raise TableError(f"step {step} is not in this game: its steps are 0..{last} (0 is the deal)")
    try:
        if seat is not None:
            frame = timeline.frame(step, seat)
        else:
            frame = _public_frame(table, timeline, step)
    except ReplayError as error:
        raise TableError(str(error)) from None
    state = timeline.state(step)
    rules = timeline.game.rules
    over = rules.is_terminal(state)
    to_act = None if over or timeline.game.simultaneous else rules.current_seat(state)
    frame.pop("text", None)  # the full table as text: every hand, for a terminal; the page draws the view
    return {**frame, "steps": timeline.steps, "seat": seat, "seats": len(table.agents), "to_act": to_act,
            "branch": not over and viewer != SPECTATOR}


def _public_frame(table: Table, timeline: Timeline, step: int) -> dict[str, Any]:
    """The spectators' view of ``step``: what every seat sees alike, the events every seat was shown, and the
    move in words only in a game without hidden information (as during the game)."""
    game, count = timeline.game, timeline.seats
    state = timeline.game.rules.clone(timeline.state(step))
    told: list[list[str]] = [[] for _ in range(count)]
    note = None
    if step > 0:
        before = timeline.state(step - 1)
        marks = [event_mark(game, before, seat) for seat in range(count)]
        told = [new_events(mark, event_mark(game, state, seat)) for seat, mark in enumerate(marks)]
        if game.name in PUBLIC_GAMES:
            note = timeline.frame(step, 0)["note"]
    view = public_view(game, state, count, sample_seed=table.seed + step)
    return {"step": step, "note": note, "view": view, "events": common_lines(told)}


def review_marks(table: Table, viewer: int | str | None, seat: int | None, seconds: float) -> dict[str, Any]:
    """Each decision of ``seat`` (default: the viewer's own) marked with its cost (eval/review.py), computed
    at the first request within ``seconds`` (the server's) and kept with the table."""
    from ..eval.review import review_marks as mark

    review = review_of(table)
    if viewer == SPECTATOR:
        raise TableError("the marks are a player's: a spectator sees the public table", 403)
    seat = _seen_seat(table, viewer, seat, "marks")
    with review.lock:
        if seat not in review.marks:
            review.marks[seat] = mark(review.record, seat, deadline=time.monotonic() + seconds)
        return review.marks[seat]


def branch_request(table: Table, viewer: int | str | None,
                   body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The new table a branch opens: the body :func:`web.app._open_table` takes (the same game, options, seed,
    bots, stand-in and clock; the person at their seat as ``human``, any other person's seat played by the
    stand-in), and the record's steps to replay there. ``body``: ``{"step": K}`` with a seat's token, or
    ``{"step": K, "seat": S}`` at a table of bots (the seat to play)."""
    review = review_of(table)
    if viewer == SPECTATOR:
        raise TableError("a spectator cannot play on from here: a branch is played by a person at the table", 403)
    if table.people and not isinstance(viewer, int):
        raise TableError("playing on from a step of a table people played at needs a seat's link (its token)", 403)
    count = len(table.agents)
    seat = viewer if isinstance(viewer, int) else body.get("seat")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < count:
        raise TableError(f"'seat' must be the seat you play from there, 0-{count - 1}, not {shown(seat)}")
    last = review.timeline.steps - 1  # the end: nothing is left to play there
    step = body.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < last:
        raise TableError(f"step {shown(step)} is not a step to play on from: this game's are 0..{last - 1} (0 is the "
                         f"deal; step {last} is its end, where nothing is left to play)")
    seats = [HUMAN if number == seat else table.fallback if spec in PERSON_SEATS else spec
             for number, spec in enumerate(table.seats)]
    request = {"game": table.game.name, "config": config_to_dict(table.config), "seats": seats, "seed": table.seed,
               "fallback": table.fallback, "clock": table.clock, "answer_offers": seat in table.answering or None}
    return request, {"prefix": review.record["actions"][:step], "chance": review.record["chance"],
                     "origin": table.id}


class BranchTable(Table):
    """A table whose game begins as another's did up to a step: the same seed deals the same game, and the
    record's moves up to the step are played again (the rules engine, the bots told each as any move; they do
    not choose them), then the game goes on with the people and bots of this table. Made with
    :meth:`prepare` called before its page sees it, so the replayed steps are there at once."""

    def __init__(self, *args: Any, prefix: list[Any], chance: list[Any], origin: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.prefix = list(prefix)
        self.chance = list(chance)  # the recorded game's dice, which the replay must roll again
        self.origin = origin
        self.prepared = False

    def prepare(self) -> None:
        """Deal, then play the record's steps of :attr:`prefix` again (TableError if one does not replay)."""
        with self.lock:
            self.engine.begin()
            if self.engine.forfeit is not None:  # a program that did not start
                self._end()
                self.prepared = True
                return
            for seat in self.people:
                self._frame(seat, None)
            self._public_frame(None)
            for entry in self.prefix:
                self._replay(entry)
            # The same seed deals the same game and rolls the same dice for the same moves: checked, not assumed.
            rolled = [list(pair) for pair in self.env.unwrapped.game_state.chance.outcomes]
            if rolled != [list(pair) for pair in self.chance[:len(rolled)]]:
                raise TableError("the game does not replay from its seed here: its dice differ from the record's")
            self.prepared = True

    def _replay(self, entry: dict[str, Any]) -> None:
        """One recorded step played again: a turn's move, or each move of a simultaneous round."""
        moves = ({int(seat): name for seat, name in entry["joint"].items()} if "joint" in entry
                 else {entry["seat"]: entry["action"]})
        while moves:
            seat = self.engine.to_move()
            if seat is None or seat not in moves:
                raise TableError(f"the game does not replay here: {self.agents[seat] if seat is not None else 'nobody'}"
                                 " is to move")
            name = moves.pop(seat)
            if name not in self.env.unwrapped.legal_action_names(self.agents[seat]):
                raise TableError(f"the game does not replay here: {shown(name)} is not legal for {self.agents[seat]}")
            index = self.game.action_index(self.config, name)
            said = None
            if seat in self.tokens:
                said = f"you chose: {action_label(self.game, self.env.unwrapped.game_state, index)} (as in the game)"
            self._step(seat, index, said)

    def start(self) -> None:
        if not self.prepared:
            self.prepare()
        self.advance()

    def summary(self, viewer: int | str | None = None) -> dict[str, Any]:
        return {**super().summary(viewer), "branch": {"from": self.origin, "step": len(self.prefix)}}
