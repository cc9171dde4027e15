"""What one seat may know, as text and as JSON, for language models (the ``llm:`` bot, ``tavernzoo mcp``).

A :class:`SeatView` holds, for one seat at one decision:

* ``view`` — exactly ``encoder.view(state, seat)`` (the env's ``view(agent)`` minus its own keys); the text
  is built from this dict (:func:`view_text`, the terminal's renderer too), so it cannot
  show more than the view does;
* ``legal`` — the legal actions: number (the position in the list, 1..n: what a number in an answer
  means; the game's action index is kept apart for programs), stable name and a sentence
  (``describe_action``, with ``action_label`` naming a target player where the game has one);
* ``since`` — what happened since the seat's last decision: every line the seat was shown by every rules
  step since then (:func:`event_mark`: the encoder's ``events(state, seat)`` hook, or the new lines of the
  view's ``last_events`` in a game without it), collected step by step by whoever sees every step (the
  table engine for a bot that ``wants_events``, ``tavernzoo mcp`` for its client; :class:`EventTracker`),
  bounded by :func:`bounded_events`. A caller that did not see every step gets the latest step's lines,
  marked as only those (``since_complete`` false);
* ``rules`` — a short rules brief of the game under the table's options (:func:`rules_brief`: the template
  ``agents/briefs/<game>.md``, drawn from docs/rules/, with every option it states filled in, then the
  options that differ from the defaults with their meanings);

Descriptions and events are computed on ``rules.information_state(state, seat)``, the state with every
hidden part replaced by a canonical deal (:mod:`.infoset`): two states the seat cannot tell apart give
the same text and the same JSON (tests/test_llm_views.py checks this on determinized states). The event
lines a host collects step by step are read on the real state for the seat (as the terminal and the web
page show a person); they equal the information state's (checked at every step of random play).

JSON form (:meth:`SeatView.as_json`)::

    {"game": "ministeel", "env": "ministeel_v1", "seat": 1, "agent": "player_1",
     "view": {...}, "legal_actions": [{"number": 1, "name": "attack:2", "description": "...", "index": 3}],
     "since": ["player_0 plays ..."], "rules": "..."}
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from typing import Any

from ..envs import Game
from ..envs.core import config_to_dict, describe_options

# Keys the env's ``view(agent)`` adds to the encoder's view; they are given separately here.
ENV_KEYS = ("game", "env", "agent", "legal_actions")


@dataclass(frozen=True)
class LegalAction:
    number: int
    """Its position in the list shown, from 1: what an answer's number means."""
    index: int
    """The game's action index (the env's action space), for programs; never shown as the number."""
    name: str
    description: str

    def as_json(self) -> dict[str, Any]:
        return {"number": self.number, "name": self.name, "description": self.description, "index": self.index}


@dataclass
class SeatView:
    """One seat's knowledge at one decision (see the module docstring)."""

    game: Game
    seat: int
    view: dict[str, Any]
    legal: list[LegalAction]
    since: list[str] = field(default_factory=list)
    since_complete: bool = True
    """False: ``since`` holds only the latest step's lines (a caller that did not see every step)."""
    config: Any = None
    """The table's options (the rules brief states them)."""

    @property
    def rules(self) -> str:
        return rules_brief(self.game, self.config)

    @cached_property
    def all_cards(self) -> dict[str, str]:
        """What every card of the game does: its ``card_texts`` under the table's options (what the web page
        shows beside a card), only of the cards that can come into play at this table where the encoder says
        which (``table_cards``: Wyvern's decks), and its ``trait_texts`` (Wyvern's races and classes); empty for
        a game without."""
        every: dict[str, str] = {}
        if self.config is None:
            return every
        encoder = self.game.encoder
        if hasattr(encoder, "card_texts"):
            texts = encoder.card_texts(self.config)
            if hasattr(encoder, "table_cards"):
                at_table = encoder.table_cards(self.config)
                texts = {name: text for name, text in texts.items() if name in at_table}
            every.update(texts)
        if hasattr(encoder, "trait_texts"):
            every.update(encoder.trait_texts(self.config))
        return every

    @cached_property  # asked for twice a decision (whether there are any, then the text)
    def cards(self) -> dict[str, str]:
        """What each card named in the view does (:attr:`all_cards`, for the names the view holds)."""
        named: dict[str, None] = {}
        _collect_names(self.view, self.all_cards, named)
        return {name: self.all_cards[name] for name in named}

    @property
    def fields(self) -> dict[str, str]:
        """What the view's less obvious entries mean (the encoder's ``VIEW_FIELDS``): all of them, every
        decision the same, so that with the rules they make a prompt's unchanging opening, which servers
        that cache a prompt's prefix (llama.cpp's, hosted APIs') read once."""
        return dict(getattr(self.game.encoder, "VIEW_FIELDS", {}))

    def table_text(self) -> str:
        """The view as text (:func:`view_text`, compact): every entry of ``view``, nothing else, but for its lists
        of events when :attr:`since` holds every line since the seat's last decision (they stand above it)."""
        shown = {key: value for key, value in self.view.items()
                 if not (self.since_complete and _is_events(key, value))}
        return view_text({"game": self.game.title, **shown}, compact=True)

    def actions_text(self) -> str:
        return "\n".join(f"{action.number}: {action.name} — {action.description}" for action in self.legal)

    def standing_text(self, all_cards: bool = False) -> str:
        """What is the same at every decision of the seat's game: who it plays, the rules brief and what the
        view's entries mean, and with ``all_cards`` what every card of the game does. The ``llm:`` bot sends it
        once per game as its system message, so a server that caches a prompt's prefix reads it once."""
        parts = [f"You play {self.game.title} ({self.game.env_name}) as player_{self.seat} (seat {self.seat}).",
                 "## Rules\n" + self.rules.strip()]
        if self.fields:
            parts.append("## What the view's entries mean\n" + "\n".join(f"{key}: {meaning}"
                                                                         for key, meaning in self.fields.items()))
        if all_cards and self.all_cards:
            parts.append("## What each card, race or class of the game does\n"
                         + "\n".join(f"{name}: {text}" for name, text in self.all_cards.items()))
        return "\n\n".join(parts)

    def since_text(self) -> str:
        """The events since the seat's last decision, under their heading."""
        body = "\n".join(self.since) or "(nothing new)"
        if self.since_complete:
            return "## Since your last decision\n" + body
        return "## The latest events (only the latest step's: earlier ones were not collected)\n" + body

    def decision_text(self, cards: bool = True) -> str:
        """What this decision adds: the events since the last decision, the table, its cards (unless ``cards`` is
        false: a reader told every card's text once), the legal actions."""
        parts = [self.since_text(), "## What you see\n" + self.table_text()]
        if cards and self.cards:
            parts.append("## What each card, race or class named above does\n"
                         + "\n".join(f"{name}: {text}" for name, text in self.cards.items()))
        parts.append("## Legal actions (number: name — what it does)\n" + self.actions_text())
        return "\n\n".join(parts)

    def text(self, all_cards: bool = False) -> str:
        """The whole prompt body: :meth:`standing_text` then :meth:`decision_text` (``all_cards``: every card's
        text in the first, none in the second)."""
        return self.standing_text(all_cards) + "\n\n" + self.decision_text(cards=not all_cards)

    def as_json(self) -> dict[str, Any]:
        return {"game": self.game.name, "env": self.game.env_name, "seat": self.seat, "agent": f"player_{self.seat}",
                "view": self.view, "legal_actions": [action.as_json() for action in self.legal],
                "since": list(self.since), "rules": self.rules, "cards": self.cards, "fields": self.fields}


class ShownSoFar:
    """What one reader that keeps its conversation (an ``llm:`` seat with ``history`` kept, an MCP client) has
    been shown of its seat's views, so the next decision can say only what changed: the view as last shown,
    the cards whose texts were told and each action's description. :meth:`reset` when the reader loses what
    it was shown (a new game, a conversation cut short): the next text is the full one again. ``cards``
    false: the reader was told every card's text once (``standing_text(all_cards=True)``), so no decision
    names any."""

    def __init__(self, cards: bool = True) -> None:
        self.tell_cards = cards
        self.reset()

    def reset(self) -> None:
        self.view: dict[str, Any] | None = None
        self.legal: list[tuple[str, str]] = []
        """The actions last shown: each name with its description, numbers masked (:func:`_masked`)."""
        self.cards: set[str] = set()
        self.described: dict[str, set[str]] = {}
        """Each action's descriptions given so far, numbers masked (:func:`_masked`)."""

    def decision_text(self, seen: SeatView, full: bool = False) -> str:
        """``seen.decision_text()`` when ``full`` or nothing was shown yet; else :meth:`changes_text`. What it
        shows is remembered either way."""
        if full or self.view is None:
            text = seen.decision_text(cards=self.tell_cards)
        else:
            text = self.changes_text(seen)
        self.view = seen.view
        self.legal = [(action.name, _masked(action.description)) for action in seen.legal]
        self.cards.update(seen.cards)
        for action in seen.legal:
            self.described.setdefault(action.name, set()).add(_masked(action.description))
        return text

    def changes_text(self, seen: SeatView) -> str:
        """The events since the last decision, what changed in the view since it was last shown (entries not
        named are as shown then), the texts of cards not described before, and the legal actions
        (:meth:`action_lines`), or one line when they are those of the previous decision."""
        assert self.view is not None, "changes need a view shown before"
        # Short headings (the system message explains them once), and none over an empty part.
        parts = []
        if seen.since:
            parts.append(("## Events\n" if seen.since_complete else seen.since_text().split("\n", 1)[0] + "\n")
                         + "\n".join(seen.since))
        elif not seen.since_complete:
            parts.append(seen.since_text())
        changes = view_changes(self.view, seen.view, quiet=quiet_fields(seen.game))
        if changes:
            parts.append("## Changed\n" + "\n".join(changes))
        cards = {name: text for name, text in seen.cards.items() if name not in self.cards}
        if cards and self.tell_cards:
            parts.append("## New cards\n" + "\n".join(f"{name}: {text}" for name, text in cards.items()))
        # The same actions as at the previous decision mean the same only with the same descriptions (``accept``
        # an offer or an ask), numbers aside.
        listed = [(action.name, _masked(action.description)) for action in seen.legal]
        if listed == self.legal:
            parts.append(f"## Actions\nas at your previous decision ({len(listed)})")
        elif listed == self.legal[:len(listed)]:
            # The last ones went (a card played, a window closed): the rest keep their numbers.
            parts.append(f"## Actions\nthe first {len(listed)} of your previous decision's")
        else:
            parts.append("## Actions\n" + "\n".join(self.action_lines(seen.legal)))
        return "\n\n".join(parts)

    def told(self, action: LegalAction) -> bool:
        """Whether this reader was given the action's description before, its numbers aside (``accept player_1's
        offer of 2 treasures`` tells what ``accept`` does when player_3 offers 0: the events and the view say
        who and how much)."""
        return _masked(action.description) in self.described.get(action.name, ())

    def action_lines(self, legal: list[LegalAction]) -> list[str]:
        """The numbered lines of a list of legal actions that differs from the one shown before. An action is
        described unless it was (:meth:`told`), its description says only its name, or another of its family
        (the same name but for its numbers) in this list is described, now or before. A run of
        :data:`MIN_ACTION_RUN` or more is one line: names that differ only in a last number counting up by one
        as ``N-M: stem{a..b}`` (a fight's ``offer:+1:0`` to ``offer:+1:3``, a card played on each opponent),
        names that share all but their last part and need no description as ``N-M: stem{a,b,c}`` (the cards one
        may discard)."""
        lines, families = [], set()
        at = 0
        while at < len(legal):
            action = legal[at]
            before = self.told(action)
            told = before or _says_only(action) or _family(action.name) in families
            run = _counted_run(legal, at)
            if len(run) >= MIN_ACTION_RUN:
                (stem, first), last = _last_number(action.name), _last_number(run[-1].name)[1]
                name = f"{stem}{{{first}..{last}}}"
            else:
                run = self._told_run(legal, at, families) if told else []
                if len(run) >= MIN_ACTION_RUN:
                    stem = _stem(action.name)
                    name = stem + "{" + ",".join(member.name[len(stem):] for member in run) + "}"
                else:
                    run, name = [action], action.name
            number = f"{action.number}-{run[-1].number}" if len(run) > 1 else str(action.number)
            lines.append(f"{number}: {name}" + ("" if told else f" — {action.description}"))
            families.update(_family(member.name) for member in run if member is action and not told
                            or self.told(member))
            at += len(run)
        return lines

    def _told_run(self, legal: list[LegalAction], at: int, families: set[str]) -> list[LegalAction]:
        """The actions from ``legal[at]`` on that share its :func:`_stem` and need no description."""
        stem = _stem(legal[at].name)
        run = []
        for action in legal[at:]:
            leaf = action.name[len(stem):]
            if (not stem or not action.name.startswith(stem) or not leaf or ":" in leaf or re.search(r"[{},]", leaf)
                    or not (self.told(action) or _says_only(action) or _family(action.name) in families)):
                break
            run.append(action)
        return run


CHANGES_FORMAT = """After your first decision only what is new is shown, under short headings (a part with nothing
new is left out): "## Events" every event line since your previous decision; "## Changed" the entries of what
you see that changed since then, with their new values (for a list of players, each changed player's changed
fields, players apart by ";"; "a.b=v": field b of entry a; a list of names as what joined and left,
"+axe,-rope": one axe more, one rope less; "(none)": the entry is gone, and a new group's entries not listed
are none){quiet}; everything else is as last shown. "## New cards" describes the cards,
races and classes not described before. "## Actions" is the numbered list of legal actions: an action
described before (its numbers aside), or after another of its family just above (the same name but for its
numbers: another player or amount), is listed by number and name only; "N-M: stem{{a..b}}" or "N-M:
stem{{a,b,c}}": the actions numbered N to M, one per value in the braces (offer:+1:{{0..2}} is offer:+1:0,
offer:+1:1, offer:+1:2; discard:{{axe,rope}} is discard:axe, discard:rope), a description after it the
first's; "as at your previous decision (N)": the same N actions, numbered as then; "the first N of your
previous decision's": that list cut after its Nth, numbered as then."""
"""What the :meth:`ShownSoFar.changes_text` headings mean (the ``llm:`` bot's system message says it once)."""


def _family(name: str) -> str:
    """An action name with its numbers masked: ``offer:+2:1`` and ``offer:+3:0`` (another player, another
    amount), ``play:sword>seat+1`` and ``+2`` are one family, which one member's description explains. A name
    without numbers is a family of its own."""
    return re.sub(r"\d+", "#", name)


MIN_ACTION_RUN = 3
"""The fewest actions a list of what changed writes as one ``N-M: stem{a..b}`` line (two read as well apart)."""


def _stem(name: str) -> str:
    """An action name up to its last ``:`` (``discard:`` of ``discard:fire_axe``; empty without one)."""
    return name[:name.rfind(":") + 1]


def _masked(description: str) -> str:
    """A description with its numbers masked, and the plural of the word after a number (``offer of 1 treasure``
    and ``offer of 3 treasures`` read alike)."""
    return re.sub(r"\d+", "#", re.sub(r"\d+( [a-z]+?)s?\b", r"#\1", description))


def _last_number(name: str) -> tuple[str, int | None]:
    """An action name as its stem and its last number, when it ends in one (``offer:+1:`` and 3 of
    ``offer:+1:3``); else the name and None."""
    found = re.fullmatch(r"(.*?)(\d+)", name)
    return (found.group(1), int(found.group(2))) if found else (name, None)


def _counted_run(legal: list[LegalAction], at: int) -> list[LegalAction]:
    """The actions from ``legal[at]`` on whose names share its stem, their last numbers counting up by one."""
    stem, number = _last_number(legal[at].name)
    run = [legal[at]]
    if number is None or str(number) != legal[at].name[len(stem):]:  # 007 is no number to count from
        return run
    for action in legal[at + 1:]:
        if action.name != f"{stem}{number + len(run)}":
            break
        run.append(action)
    return run


def _says_only(action: LegalAction) -> bool:
    """Whether an action's description says no more than its name (``discard Fire Axe`` of
    ``discard:fire_axe``): the same words, case and separators aside."""
    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    return words(action.description) == words(action.name)


def quiet_fields(game: Game) -> tuple[str, ...]:
    """The view's entries a list of what changed leaves out (the whole view shows them): the counts and states the
    game's events tell (its encoder's ``EVENT_COUNTED_FIELDS``) and the numbers a card's text gives
    (``CARD_TEXT_FIELDS``: a fight's monster level, reward and Bad Stuff), ``entry.field`` for a field of one
    entry only."""
    encoder = game.encoder
    return (*getattr(encoder, "EVENT_COUNTED_FIELDS", ()), *getattr(encoder, "CARD_TEXT_FIELDS", ()))


def changes_format(game: Game) -> str:
    """:data:`CHANGES_FORMAT` for ``game``: with the entries its changes leave out, named."""
    counted = getattr(game.encoder, "EVENT_COUNTED_FIELDS", ())
    carded = getattr(game.encoder, "CARD_TEXT_FIELDS", ())
    why = [*([f"{', '.join(counted)}: what the events tell"] if counted else []),
           *([f"{', '.join(carded)}: what the card's text gives"] if carded else [])]
    return CHANGES_FORMAT.format(quiet=(f" except {'; '.join(why)}, which only the whole view shows (answer "
                                        "full_view to see it)") if why else "")


def view_changes(before: dict[str, Any], after: dict[str, Any], quiet: tuple[str, ...] = ()) -> list[str]:
    """Lines naming what differs between two views of a seat: each changed entry with its new value; in a list
    of players (entries with a ``seat``) each player's changed fields; in a dict, its changed keys; a list of
    names by what joined and left (``hand: +axe,-rope``) where that is shorter. Entries named in ``quiet``
    (:func:`quiet_fields`: ``name`` at any depth, ``entry.name`` within one entry) and event lists (the story
    since the last decision tells them) are left out."""
    lines: list[str] = []
    for key, value in after.items():
        if key in HIDDEN_KEYS or key in quiet or _is_events(key, value):
            continue
        old = before.get(key)
        if old == value:
            continue
        within = _quiet_within(quiet, key)
        if _is_seat_list(value) and _is_seat_list(old):
            # One line for the list: each changed player's changed fields, players apart by "; ".
            olds = {entry["seat"]: entry for entry in old}
            players = []
            for entry in value:
                fields = _changed_fields(olds.get(entry["seat"], {}), {k: v for k, v in entry.items() if k != "seat"},
                                         quiet)
                if fields:
                    players.append(f"player_{entry['seat']} " + " ".join(fields))
            if players:
                lines.append(f"{key}: " + "; ".join(players))
        elif isinstance(value, dict) and isinstance(old, dict):
            fields = _changed_fields(old, value, within)
            if fields:
                lines.append(f"{key}: " + ", ".join(fields))
        elif isinstance(value, dict):  # new: its empty entries left out
            lines.append(f"{key}: " + _short({k: v for k, v in value.items()
                                              if v not in (None, [], {}) and k not in within}))
        elif (change := _names_change(old, value)) is not None:
            lines.append(f"{key}: {change}")
        else:
            lines.append(f"{key}: {_short(value) if value is not None else '(none)'}")
    lines += [f"{key}: (none)" for key in before
              if key not in after and key not in quiet and not _is_events(key, before[key])]
    return lines


def _changed_fields(old: dict[str, Any], new: dict[str, Any], quiet: tuple[str, ...] = ()) -> list[str]:
    """``key=value`` for each key of ``new`` whose value differs from ``old``'s, ``key=(none)`` for each it
    dropped. A dict within, changed, is given as its own changed keys (``talks.player_0.asks=2``) where that
    is shorter than its whole new value: the three-line help talks of a fight change one count at a time."""
    fields = []
    for k, v in new.items():
        was = old.get(k)
        if was == v or k in quiet:
            continue
        whole = f"{k}={_short(v)}"
        change = _names_change(was, v)
        if change is not None:
            fields.append(f"{k}={change}")
            continue
        if isinstance(v, dict) and isinstance(was, dict):
            inner = [f"{k}.{field}" for field in _changed_fields(was, v, quiet)]
            if sum(len(field) + 1 for field in inner) < len(whole):
                fields += inner
                continue
        fields.append(whole)
    return fields + [f"{k}=(none)" for k in old if k not in new and k != "seat" and k not in quiet]


def _quiet_within(quiet: tuple[str, ...], key: str) -> tuple[str, ...]:
    """The quiet names that apply within the entry ``key``: those of every depth and its own ``key.name``."""
    return tuple(name for name in quiet if "." not in name) + tuple(
        name.split(".", 1)[1] for name in quiet if name.startswith(key + "."))


def _names_change(old: Any, new: Any) -> str | None:
    """A list of names that changed as what joined and what left, ``+axe,+axe,-rope`` (two axes more, one rope
    less), when both are lists of names and that is shorter than the new list whole (a hand after a card drawn or
    played); else None."""
    if not (isinstance(old, list) and isinstance(new, list) and all(isinstance(v, str) for v in (*old, *new))):
        return None
    before, after = collections.Counter(old), collections.Counter(new)
    joined, left = after - before, before - after
    change = ",".join([*(f"+{name}" for name in joined.elements()), *(f"-{name}" for name in left.elements())])
    return change if change and len(change) < len(_short(new)) else None


def _is_seat_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and "seat" in v for v in value)


def _is_events(key: str, value: Any) -> bool:
    return "event" in key and isinstance(value, list) and all(isinstance(v, str) for v in value)


def _collect_names(value: Any, names: dict[str, str], found: dict[str, None]) -> None:
    """The card names in a view: strings and dict keys that name a card, in the order they appear."""
    if isinstance(value, str):
        if value in names:
            found[value] = None
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in names and item not in (0, None, False):  # a count of 0 is no card held
                found[key] = None
            _collect_names(item, names, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_names(item, names, found)


def legal_actions_of(game: Game, info_state: Any, seat: int, legal: list[int]) -> list[LegalAction]:
    """The legal actions with names and sentences, described on the seat's information state."""
    encoder = game.encoder
    names = game.action_names(info_state.config)
    label = getattr(encoder, "action_label", None)
    actions = []
    for number, index in enumerate(legal, start=1):
        description = encoder.describe_action(index, info_state)
        if label is not None:
            shown = label(info_state, index)
            if shown != names[index] and "player_" in shown and "player_" not in description:
                description = f"{shown}: {description}"
        actions.append(LegalAction(number, index, names[index], description))
    return actions


def seat_legal(game: Game, state: Any, seat: int) -> list[int]:
    """The seat's legal actions now (empty when it is not to act)."""
    rules = game.rules
    if rules.is_terminal(state):
        return []
    if game.simultaneous:
        return list(rules.legal_actions(state, seat)) if seat in rules.acting_seats(state) else []
    return list(rules.legal_actions(state)) if rules.current_seat(state) == seat else []


NOTHING_SHOWN: tuple[Any, list[str]] = (object(), [])  # the events mark before the game's first step


def event_mark(game: Any, state: Any, seat: int) -> tuple[Any, list[str]]:
    """What ``seat`` has been shown of the game's events after this state: the encoder's ``events`` hook's
    ``(steps, lines of the latest step)``, or for a game without one ``(None, the view's last events)``."""
    hook = getattr(game.encoder, "events", None)
    if hook is not None:
        steps, lines = hook(state, seat)
        return steps, list(lines)
    view = game.encoder.view(state, seat)
    for key in ("last_events", "events"):
        if isinstance(view.get(key), list):
            return None, [str(line) for line in view[key]]
    return None, []


def new_events(before: tuple[Any, list[str]], after: tuple[Any, list[str]]) -> list[str]:
    """The lines of ``after`` not yet shown at ``before`` (two :func:`event_mark` results). With the
    ``events`` hook, a step's lines are new when the step count moved (so two identical events in a row
    are two lines); without it, a view's list that continues the one before adds only its tail (one
    decision's events may grow over the next, as a hit and the reaction to it)."""
    (steps_before, lines_before), (steps_after, lines_after) = before, after
    if steps_after is not None:
        return list(lines_after) if steps_after != steps_before else []
    if lines_before and lines_after[:len(lines_before)] == lines_before:
        return lines_after[len(lines_before):]
    return list(lines_after)


class EventTracker:
    """Collects one seat's event lines between its decisions: call :meth:`see` after every rules step (and
    once when the game is dealt), :meth:`take` at a decision (the lines since the last take)."""

    def __init__(self):
        self.shown = NOTHING_SHOWN
        self.pending: list[str] = []

    def see(self, game: Game, state: Any, seat: int) -> list[str]:
        """The lines this state adds for ``seat`` (kept for :meth:`take` too)."""
        mark = event_mark(game, state, seat)
        lines, self.shown = new_events(self.shown, mark), mark
        self.pending.extend(lines)
        return lines

    def take(self) -> list[str]:
        lines, self.pending = self.pending, []
        return lines


MAX_SINCE_CHARS = 4000
"""The most characters of event lines a prompt shows since the seat's previous decision (about 1000 tokens:
a MiniSteel or Wyvern round of several players fits); older lines are summarised, never silently dropped."""
MAX_SUMMARY_CHARS = 600
MAX_TURNS_SUMMARY_CHARS = 300
"""Each of the two lines summarising the turns a kept conversation dropped: it is sent again at every cut."""


def bounded_events(lines: list[str], budget: int = MAX_SINCE_CHARS) -> list[str]:
    """``lines`` whole when they fit in ``budget`` characters; else the newest that fit, after one line
    summarising the older ones (who did what, counted), so the seat knows what it is not shown in full."""
    if sum(len(line) + 1 for line in lines) <= budget:
        return list(lines)
    kept: list[str] = []
    used = MAX_SUMMARY_CHARS
    for line in reversed(lines):
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    older = lines[:len(lines) - len(kept)]
    return [summarise_events(older), *reversed(kept)]


def summarise_events(lines: list[str]) -> str:
    """One line counting ``lines`` by who did what: an event line reads ``player_N verb ...`` in every game,
    so the actor and the verb say what kind of event it was."""
    counts = EventCounts()
    counts.count(lines)
    summary = f"... {len(lines)} earlier event line(s) summarised, counted by who and what: " + counts.events_text()
    return clip_text(summary, MAX_SUMMARY_CHARS)


def clip_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass
class EventCounts:
    """Event lines and a seat's own moves, counted (what a summary of turns no longer shown says)."""

    decisions: int = 0
    lines: int = 0
    events: dict[str, dict[str, int]] = field(default_factory=dict)
    """actor -> verb -> count."""
    moves: dict[str, int] = field(default_factory=dict)

    def count(self, lines: list[str]) -> None:
        for line in lines:
            words = line.split()
            actor, verb = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
            if not actor.startswith("player_"):
                actor, verb = "table", actor.rstrip(":")
            verbs = self.events.setdefault(actor, {})
            verbs[verb] = verbs.get(verb, 0) + 1
            self.lines += 1

    def add(self, lines: list[str], move: str) -> None:
        """One decision: the event lines it told and the move played."""
        self.decisions += 1
        self.count(lines)
        self.moves[move] = self.moves.get(move, 0) + 1

    def events_text(self) -> str:
        return "; ".join("{} {}".format(actor, ", ".join(f"{verb} x{count}" for verb, count in verbs.items()))
                         for actor, verbs in self.events.items())

    def text(self) -> str:
        """The summary of earlier decisions, bounded by :data:`MAX_TURNS_SUMMARY_CHARS` twice over (the moves
        most played first)."""
        moves = ", ".join(f"{name} x{count}" for name, count in sorted(self.moves.items(), key=lambda item: -item[1]))
        return ("## Earlier in this game (no longer shown; summarised)\n"
                + clip_text(f"{self.decisions} earlier decision(s); you played: {moves}", MAX_TURNS_SUMMARY_CHARS)
                + "\n" + clip_text(f"{self.lines} event line(s) told then, counted by who and what: "
                                   f"{self.events_text()}", MAX_TURNS_SUMMARY_CHARS))


def seat_view(game: Game, state: Any, seat: int, since: list[str] | None = None) -> SeatView:
    """The seat's :class:`SeatView` of a real state (host side): the view, legal actions described on the
    information state, ``since`` as given (default: the latest step's lines, marked as only those)."""
    info = game.rules.information_state(state, seat)
    return seat_view_of(game, game.encoder.view(state, seat), info, seat, seat_legal(game, state, seat), since)


def seat_view_of(game: Game, view: dict[str, Any], info_state: Any, seat: int, legal: list[int],
                 since: list[str] | None = None) -> SeatView:
    """The :class:`SeatView` from what a bot is handed: the view, the information state, the legal actions."""
    plain = {key: value for key, value in view.items() if key not in ENV_KEYS}
    complete = since is not None
    if since is None:
        since = event_mark(game, info_state, seat)[1]
    return SeatView(game, seat, plain, legal_actions_of(game, info_state, seat, legal), list(since), complete,
                    info_state.config)


# A brief states every option-dependent fact through a placeholder, so it cannot contradict the table's rules:
# ``{option}`` is the option's value, ``{option|value=text|value=text}`` the text for the value it has.
_PLACEHOLDER = re.compile(r"\{(\w+)(?:\|([^{}]*))?\}")


@cache
def brief_template(game_name: str) -> str:
    """The rules brief of a game as written (package data ``agents/briefs/<game>.md``), placeholders unfilled."""
    try:
        return resources.files(__package__).joinpath("briefs", f"{game_name}.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"(no rules brief for {game_name}; see docs/rules/{game_name}.md)"


def rules_brief(game: Game, config: Any) -> str:
    """The short rules brief of ``game`` under ``config``: every option it states filled in from the config,
    then the options that differ from the defaults, each with its meaning (a house rule the text does not
    state is still told). A placeholder that names no option, or no text for the option's value, is a
    ValueError naming it (the briefs' tests fill every one under every choice)."""
    template = " ".join(line.strip() for line in brief_template(game.name).strip().splitlines())

    def fill(match: re.Match) -> str:
        name, choices = match.groups()
        if not hasattr(config, name):
            raise ValueError(f"the {game.name} rules brief names {{{name}}}, which is no option of {game.env_name}")
        value = getattr(config, name)
        if choices is None:
            return str(value)
        texts = dict(choice.split("=", 1) for choice in choices.split("|"))
        if str(value) not in texts:
            raise ValueError(f"the {game.name} rules brief has no text for {name}={value!r}")
        return texts[str(value)]

    text = _PLACEHOLDER.sub(fill, template)
    stated = brief_options(game.name)
    changed = [option for option in options_changed(config) if option[0] not in stated]
    if changed:
        text += "\nThis table's options that differ from the defaults: " + "; ".join(
            f"{name}={_option_text(value)} ({meaning})" for name, value, meaning in changed) + "."
    return text


def _option_text(value: Any) -> str:
    """An option's value as ``--set`` takes it (``true``, not ``yes``: the meanings say "false: ...")."""
    return ("true" if value else "false") if isinstance(value, bool) else _short(value)


def brief_options(game_name: str) -> set[str]:
    """The names the brief's placeholders state (options, or a config's properties such as ``draw_windows``)."""
    return {match.group(1) for match in _PLACEHOLDER.finditer(brief_template(game_name))}


def options_changed(config: Any) -> list[tuple[str, Any, str]]:
    """``(name, value, meaning)`` of each option of ``config`` that is not its default."""
    values = config_to_dict(config)
    return [(row["name"], values[row["name"]], row["help"]) for row in describe_options(type(config))
            if values[row["name"]] != row["default"]]


__all__ = ["CHANGES_FORMAT", "EventCounts", "EventTracker", "LegalAction", "NOTHING_SHOWN", "SeatView", "ShownSoFar",
           "bounded_events", "brief_options", "brief_template", "changes_format", "event_mark", "new_events",
           "options_changed", "rules_brief", "seat_legal", "seat_view", "seat_view_of", "summarise_events",
           "view_changes"]


HIDDEN_KEYS = ("game", "env", "agent", "legal_actions")
"""A view's keys that :func:`view_text` leaves out (the title says the game; the actions are listed apart)."""


def view_text(view: dict[str, Any], max_events: int | None = None, compact: bool = False) -> str:
    """A readable text of a seat's view (only what that seat may see, since the view holds no more). ``compact``
    (a language model's prompt): a player's fields one space apart, and of its yes/no fields only those that
    are yes, as the list's heading says."""
    you = view.get("you")
    lines = [f"{view.get('game', '?')} — you are player_{you}"]
    tail: list[str] = []
    for key, value in view.items():
        if key in HIDDEN_KEYS or key == "you" or value is None or value == [] or value == {}:
            continue
        if isinstance(value, list) and value and all(isinstance(v, dict) and "seat" in v for v in value):
            flags = compact and any(v is False for entry in value for v in entry.values())
            lines.append(f"{key}{' (of yes/no fields only those that are yes)' if flags else ''}:")
            for entry in value:
                mark = ">" if entry["seat"] == you else " "
                own = " (you)" if entry["seat"] == you else ""
                fields = ("  " if not compact else " ").join(
                    f"{k}={_short(v)}" for k, v in entry.items()
                    if k != "seat" and v not in (None, []) and not (compact and v is False))
                lines.append(f" {mark} player_{entry['seat']}{own}: {fields}")
        elif "event" in key and isinstance(value, list) and all(isinstance(v, str) for v in value):
            shown = value[-max_events:] if max_events else value
            tail.append(f"{key}{' (latest ' + str(len(shown)) + ')' if len(value) > len(shown) else ''}:")
            tail.extend(f"  {event}" for event in shown)
        else:
            lines.append(f"{key}: {_short(value)}")
    return "\n".join(lines + tail)


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
