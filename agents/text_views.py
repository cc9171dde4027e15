"""What one seat may know, as text and as JSON, for language models (the ``llm:`` bot, ``tavernzoo mcp``).

A :class:`SeatView` holds, for one seat at one decision:

* ``view`` — exactly ``encoder.view(state, seat)`` (the env's ``view(agent)`` minus its own keys); the text
  is built from this dict (:func:`view_text`, the terminal's renderer too), so it cannot
  show more than the view does;
* ``legal`` — the legal actions: number (the action index), stable name and a sentence
  (``describe_action``, with ``action_label`` naming a target player where the game has one);
* ``since`` — what happened since the seat's last decision: the lines of the encoder's ``events(state,
  seat)`` hook (MiniSteel, Minefield, Wyvern) for every rules step since then, as far as the caller saw
  them (a host that sees every step, as ``tavernzoo mcp`` does, passes them all; a bot sees the steps at
  its own decisions, and the view's own event list holds the recent table history); empty for a game
  without the hook (Tiny Minotaur's view carries ``last_events``);
* ``rules`` — a short rules brief of the game (``agents/briefs/<game>.md``, drawn from docs/rules/).

Descriptions and events are computed on ``rules.information_state(state, seat)``, the state with every
hidden part replaced by a canonical deal (:mod:`.infoset`): two states the seat cannot tell apart give
the same text and the same JSON (tests/test_llm_views.py checks this on determinized states).

JSON form (:meth:`SeatView.as_json`)::

    {"game": "ministeel", "env": "ministeel_v1", "seat": 1, "agent": "player_1",
     "view": {...}, "legal_actions": [{"index": 3, "name": "attack:2", "description": "..."}],
     "since": ["player_0 plays ..."], "rules": "..."}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from ..envs import Game

# Keys the env's ``view(agent)`` adds to the encoder's view; they are given separately here.
ENV_KEYS = ("game", "env", "agent", "legal_actions")


@dataclass(frozen=True)
class LegalAction:
    index: int
    name: str
    description: str

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "description": self.description}


@dataclass
class SeatView:
    """One seat's knowledge at one decision (see the module docstring)."""

    game: Game
    seat: int
    view: dict[str, Any]
    legal: list[LegalAction]
    since: list[str] = field(default_factory=list)

    @property
    def rules(self) -> str:
        return rules_brief(self.game.name)

    def table_text(self) -> str:
        """The view as text: every entry of ``view``, nothing else."""
        return view_text({"game": self.game.title, **self.view})

    def actions_text(self) -> str:
        return "\n".join(f"{action.index}: {action.name} — {action.description}" for action in self.legal)

    def text(self, *, rules: bool = True, since: bool = True) -> str:
        """The whole prompt body: rules brief, events since the last decision, the table, the legal actions."""
        parts = [f"You play {self.game.title} ({self.game.env_name}) as player_{self.seat} (seat {self.seat})."]
        if rules:
            parts.append("## Rules\n" + self.rules.strip())
        if since:
            if self.since:
                body = "\n".join(self.since)
            elif getattr(self.game.encoder, "events", None) is None:
                body = "(this game's view below lists its latest events)"
            else:
                body = "(nothing new)"
            parts.append("## Since your last decision\n" + body)
        parts.append("## What you see\n" + self.table_text())
        parts.append("## Legal actions (number: name — what it does)\n" + self.actions_text())
        return "\n\n".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {"game": self.game.name, "env": self.game.env_name, "seat": self.seat, "agent": f"player_{self.seat}",
                "view": self.view, "legal_actions": [action.as_json() for action in self.legal],
                "since": list(self.since), "rules": self.rules}


def legal_actions_of(game: Game, info_state: Any, seat: int, legal: list[int]) -> list[LegalAction]:
    """The legal actions with names and sentences, described on the seat's information state."""
    encoder = game.encoder
    names = game.action_names(info_state.config)
    label = getattr(encoder, "action_label", None)
    actions = []
    for index in legal:
        description = encoder.describe_action(index, info_state)
        if label is not None:
            shown = label(info_state, index)
            if shown != names[index] and "player_" in shown and "player_" not in description:
                description = f"{shown}: {description}"
        actions.append(LegalAction(index, names[index], description))
    return actions


def seat_legal(game: Game, state: Any, seat: int) -> list[int]:
    """The seat's legal actions now (empty when it is not to act)."""
    rules = game.rules
    if rules.is_terminal(state):
        return []
    if game.simultaneous:
        return list(rules.legal_actions(state, seat)) if seat in rules.acting_seats(state) else []
    return list(rules.legal_actions(state)) if rules.current_seat(state) == seat else []


def events_of(game: Game, info_state: Any, seat: int) -> tuple[int, list[str]] | None:
    """``(steps, lines)`` of the game's ``events`` hook on the information state, or None without one."""
    hook = getattr(game.encoder, "events", None)
    return None if hook is None else hook(info_state, seat)


class EventTracker:
    """Collects one seat's event lines between its decisions: call :meth:`see` after steps, :meth:`take`
    at a decision (the lines since the last take)."""

    def __init__(self):
        self.steps: int | None = None
        self.pending: list[str] = []

    def see(self, game: Game, info_state: Any, seat: int) -> None:
        seen = events_of(game, info_state, seat)
        if seen is None:
            return
        steps, lines = seen
        if steps != self.steps:
            self.steps = steps
            self.pending.extend(lines)

    def take(self) -> list[str]:
        lines, self.pending = self.pending, []
        return lines


def seat_view(game: Game, state: Any, seat: int, since: list[str] | None = None) -> SeatView:
    """The seat's :class:`SeatView` of a real state (host side): the view, legal actions described on the
    information state, ``since`` as given (default: the events hook's latest lines)."""
    info = game.rules.information_state(state, seat)
    return seat_view_of(game, game.encoder.view(state, seat), info, seat, seat_legal(game, state, seat), since)


def seat_view_of(game: Game, view: dict[str, Any], info_state: Any, seat: int, legal: list[int],
                 since: list[str] | None = None) -> SeatView:
    """The :class:`SeatView` from what a bot is handed: the view, the information state, the legal actions."""
    plain = {key: value for key, value in view.items() if key not in ENV_KEYS}
    if since is None:
        seen = events_of(game, info_state, seat)
        since = [] if seen is None else list(seen[1])
    return SeatView(game, seat, plain, legal_actions_of(game, info_state, seat, legal), list(since))


@cache
def rules_brief(game_name: str) -> str:
    """The short rules brief of a game (package data ``agents/briefs/<game>.md``)."""
    try:
        return resources.files(__package__).joinpath("briefs", f"{game_name}.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"(no rules brief for {game_name}; see docs/rules/{game_name}.md)"


__all__ = ["EventTracker", "LegalAction", "SeatView", "rules_brief", "seat_legal", "seat_view", "seat_view_of"]


HIDDEN_KEYS = ("game", "env", "agent", "legal_actions")
"""A view's keys that :func:`view_text` leaves out (the title says the game; the actions are listed apart)."""


def view_text(view: dict[str, Any], max_events: int | None = None) -> str:
    """A readable text of a seat's view (only what that seat may see, since the view holds no more)."""
    you = view.get("you")
    lines = [f"{view.get('game', '?')} — you are player_{you}"]
    tail: list[str] = []
    for key, value in view.items():
        if key in HIDDEN_KEYS or key == "you" or value is None or value == [] or value == {}:
            continue
        if isinstance(value, list) and value and all(isinstance(v, dict) and "seat" in v for v in value):
            lines.append(f"{key}:")
            for entry in value:
                mark = ">" if entry["seat"] == you else " "
                own = " (you)" if entry["seat"] == you else ""
                fields = "  ".join(f"{k}={_short(v)}" for k, v in entry.items() if k != "seat" and v not in (None, []))
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
