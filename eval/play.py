"""Play a game in the terminal against bots: ``tavernzoo play GAME --vs BOT_SPEC``.

The person plays one seat (``--seat``, default 0) through the game's PettingZoo env; every other seat is a
bot (one ``--vs`` for all of them, or one ``--vs`` per other seat, in seat order). Before each decision the
person sees the table as their seat may see it and picks a legal action by its number or its name (a
unique part of a name will do); ``?`` shows the table again and ``q`` leaves the game.

Only what the seat may see is shown. Three optional encoder hooks make the terminal read well; a game
whose encoder lacks one gets the fallback named:

* ``render(state, seat=None)``: with ``seat``, the table as that seat may see it, with a legend of its
  codes. Fallback: a public game (:data:`PUBLIC_GAMES`) is drawn with ``render(state)``, which shows
  everything; any other game from ``env.unwrapped.view(agent)``, the seat's own view, which leaves out
  other seats' hands.
* ``events(state, seat) -> (steps, lines)``: how many rules steps were played and what the latest one
  showed that seat. Each step's lines are printed once, as they happen (the bots' moves included, and the
  outcome of the person's own), and kept: ``log`` prints the whole history again. Fallback: the events
  the seat's view holds (``last_events``), a line printed once while the next view's list continues it
  (:func:`~tavernzoo.agents.text_views.new_events`; the web page keeps its event log the same way).
* ``action_label(state, action)``: an action as a person reads it, naming its target (``hatchet at
  player_2``). The list shows these; a stable action name is accepted as well. Fallback: the game's
  ``describe_action(action, state)`` (every game has it; with the state it names targets as players).
* ``declinable(state)`` and ``OFFERS``: the action that turns down an offer the person may leave to the
  frontend (MiniSteel's Card Draw windows: keep the tokens), and what such offers are called. At one,
  ``auto`` plays that action and answers every later one the same way, each said in one line; ``ask``
  at any move asks again. Fallback: every decision is asked.

A move that is the only legal one is played for the person, and said so. The bots' moves are announced
only in public turn-based games: in a hidden-information game the events say what the table saw, and in
a simultaneous game the others' choices stay secret until the round is played.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Sequence
from typing import Any

from ..agents.base import as_bot
from ..agents.text_views import NOTHING_SHOWN, event_mark, new_events, view_text
from ..envs import games, get_game

# Games where every seat may see the whole state, so the game's full rendering leaks nothing (Game.public).
PUBLIC_GAMES = frozenset(name for name, game in games().items() if game.public)
QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("", "?", "h", "help")
LOG_WORDS = ("log", "history")
AUTO_WORD, ASK_WORD = "auto", "ask"  # answer the game's declinable offers for me / ask me again


def action_label(game: Any, state: Any, action: int) -> str:
    """An action as a person reads it, naming its target: the encoder's ``action_label`` (``hatchet at
    player_2``), else its ``describe_action(action, state)``."""
    label = getattr(game.encoder, "action_label", None)
    return label(state, action) if label is not None else game.encoder.describe_action(action, state)


def move_label(game: Any, state: Any, action: int) -> str:
    """Another seat's move told to a person (a bot's move, a replay's step), short, from the ``state`` it was
    chosen in: the encoder's ``action_label`` (``react: steel shield``, ``attack player_2``), else the game's
    description of it without its details (``heal``, not ``react:heal`` nor the window's odds)."""
    label = getattr(game.encoder, "action_label", None)
    if label is not None:
        return label(state, action)
    return game.encoder.describe_action(action, state).split(": ")[0]


def declinable(game: Any, state: Any) -> tuple[int, str] | None:
    """The offer the seat to act faces that a person may leave to the frontend: the action that turns it
    down and what such offers are called (the encoder's ``declinable`` and ``OFFERS``); None where the
    game has no such offers or this decision is not one."""
    hook = getattr(game.encoder, "declinable", None)
    if hook is None:
        return None
    action = hook(state)
    return None if action is None else (action, game.encoder.OFFERS)


def offers_of(game: Any) -> str | None:
    """What the game's declinable offers are called (``OFFERS``), or None where it has none."""
    return getattr(game.encoder, "OFFERS", None) if hasattr(game.encoder, "declinable") else None


def return_text(value: float) -> str:
    """A return as a person reads it: signed, to 3 significant digits (``-0.333``, not ``-0.3333333333333333``)."""
    return "0" if value == 0 else f"{value:+.3g}"


class LeftGame(Exception):
    """The person typed ``q`` (or closed the input)."""


def actions_text(names: Sequence[str]) -> str:
    """The legal actions numbered from 1, in columns when there are many."""
    items = [f"{number:>3}) {name}" for number, name in enumerate(names, start=1)]
    if len(items) <= 10:
        return "\n".join(items)
    width = max(map(len, items)) + 2
    per_line = max(1, 100 // width)
    return "\n".join("".join(item.ljust(width) for item in items[i:i + per_line]).rstrip()
                     for i in range(0, len(items), per_line))


def parse_choice(text: str, names: Sequence[str]) -> tuple[int | None, str]:
    """``(position in names, "")`` for a valid choice, else ``(None, hint)``."""
    text = text.strip()
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(names):
            return number - 1, ""
        return None, f"there is no action {number}: type a number from 1 to {len(names)}, or an action's name"
    if text in names:
        return names.index(text), ""
    for matches in ([n for n in names if n.startswith(text)], [n for n in names if text in n]):
        if len(matches) == 1:
            return names.index(matches[0]), ""
        if len(matches) > 1:
            more = ", ..." if len(matches) > 6 else ""
            return None, f"{text!r} could be {', '.join(matches[:6])}{more}: be more exact"
    return None, (f"{text!r} is not a legal action here: type a number from 1 to {len(names)} or a name such as "
                  f"{names[0]!r}; ? shows the table, q quits")


def choose(text: str, labels: Sequence[str], names: Sequence[str]) -> tuple[int | None, str]:
    """:func:`parse_choice` over what the person reads (``labels``), then over the stable action names."""
    position, hint = parse_choice(text, labels)
    if position is None and list(labels) != list(names):
        position = parse_choice(text, names)[0]
    return position, "" if position is not None else hint


class TerminalGame:
    """One game between a person (``read`` / ``write``) at ``seat`` and bots in the other seats."""

    def __init__(self, game: Any, bot_specs: Sequence[str], seat: int = 0, seed: int | None = None,
                 config: Any = None, read: Callable[[str], str] = input, write: Callable[[str], None] = print):
        from ..agents import load_bot

        self.game = get_game(game) if isinstance(game, str) else game
        self.config = self.game.make_config(config)
        seats = self.game.rules.num_seats(self.config)
        if not 0 <= seat < seats:
            raise ValueError(f"--seat {seat} is not a seat of {self.game.name} with {seats} players; "
                             f"valid: 0-{seats - 1}")
        specs = list(bot_specs) or ["heuristic"]
        if len(specs) == 1:
            specs = specs * (seats - 1)
        if len(specs) != seats - 1:
            raise ValueError(f"{self.game.name} with these options has {seats} seats: give one --vs for all the bots "
                             f"or one per other seat ({seats - 1}); got {len(specs)}")
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        seeds = random.Random(self.seed)
        self.seat = seat
        self.specs = specs[:seat] + ["you"] + specs[seat:]
        self.bots = {other: as_bot(load_bot(spec, self.game, self.config, seeds.randrange(2**63)))
                     for other, spec in enumerate(self.specs) if other != seat}
        self.read, self.write = read, write
        self.public = self.game.public
        self.announce = self.public and not self.game.simultaneous
        encoder = self.game.encoder
        self.seat_render = "seat" in inspect.signature(encoder.render).parameters
        self.history: list[str] = []
        self.shown = NOTHING_SHOWN
        self.answering = False  # the person typed "auto": declinable offers are answered for them

    def table(self, env: Any, agent: str) -> str:
        unwrapped = env.unwrapped
        if self.seat_render:
            return self.game.encoder.render(unwrapped.game_state, seat=self.seat)
        if self.public:
            return f"{self.game.encoder.render(unwrapped.game_state)}\n(you are {agent})"
        return view_text(unwrapped.view(agent))

    def report_events(self, env: Any) -> None:
        """Print what the latest rules step showed this seat, once, and keep it in the history."""
        mark = event_mark(self.game, env.unwrapped.game_state, self.seat)
        lines, self.shown = new_events(self.shown, mark), mark
        self.history.extend(lines)
        for line in lines:
            self.write(f"  {line}")

    def labels(self, env: Any, actions: Sequence[int]) -> list[str]:
        """What a person reads for each action: the game's labels, naming players."""
        state = env.unwrapped.game_state
        return [action_label(self.game, state, a) for a in actions]

    def play(self) -> list[float] | None:
        """Play to the end; the returns per seat, or None if the person left."""
        from ..envs.make import make_env
        from .table import Table

        env = make_env(self.game, self.config)
        # The person's seat holds no bot: the table waits there for their move. No bot seeds: each keeps its own.
        table = Table(env, [self.bots.get(seat) for seat in range(len(self.specs))], self.seed)
        try:
            return self._play(table, env)
        finally:
            for bot in self.bots.values():
                bot.close()

    def _play(self, table: Any, env: Any) -> list[float] | None:
        table.begin()  # the bots hear the seat each holds (a cmd: program is told)
        me = env.possible_agents[self.seat]
        opponents = ", ".join(f"player_{s}: {spec}" for s, spec in enumerate(self.specs) if s != self.seat)
        self.write(f"{self.game.title}: you are {me} (seat {self.seat}) against {opponents}; seed {self.seed}")
        self.report_events(env)
        out = False  # the person's seat has left a game that goes on (knocked out)
        while (seat := table.to_move()) is not None:
            if seat == self.seat:
                try:
                    action = self.choose_move(env, me)
                except LeftGame:
                    self.write("you left the game")
                    table.resign(self.seat)
                    table.finish()  # the bots hear the game ended, without returns
                    return None
                table.step(action)
            else:
                action = table.think()
                table.step(action)
                if self.announce:  # the action's name: the labels speak to the seat choosing ("your window")
                    self.write(f"  {env.possible_agents[seat]} ({self.specs[seat]}) plays "
                               f"{env.unwrapped.action_names[action]}")
            self.report_events(env)
            left = me not in env.terminations or env.terminations[me] or env.truncations[me]
            if left and not out and not self.game.rules.is_terminal(env.unwrapped.game_state):
                out = True
                self.write("you are out of the game; the bots play on to the end")
        totals = table.finish().returns
        self.finish(env, me, totals)
        return totals

    def choose_move(self, env: Any, me: str) -> int:
        """The person's move: an offer they left to the table, the only legal move, or what they type."""
        observation = env.observe(me)
        legal = [int(i) for i in observation["action_mask"].nonzero()[0]]
        offer = declinable(self.game, env.unwrapped.game_state) if self.answering else None
        if offer is not None:
            self.write(f"you: {self.labels(env, [offer[0]])[0]} (answered for you: {offer[1]}; '{ASK_WORD}' "
                       "at your next move asks again)")
            return offer[0]
        if len(legal) == 1:
            self.write(f"your only move: {self.labels(env, legal)[0]} (played for you)")
            return legal[0]
        return self.ask(env, me, observation)

    def ask(self, env: Any, me: str, observation: dict[str, Any]) -> int:
        names = env.unwrapped.action_names
        legal = [int(i) for i in observation["action_mask"].nonzero()[0]]
        choices = self.labels(env, legal)
        self.write("")
        self.write(self.table(env, me))
        self.write("your move (a number or a name; ? the table again, log the whole history, q quits):")
        self.write(actions_text(choices))
        offer = declinable(self.game, env.unwrapped.game_state)
        if offer is not None:
            self.write(f"{AUTO_WORD}: {choices[legal.index(offer[0])]} now and at every later one of the {offer[1]}, "
                       f"without being asked ('{ASK_WORD}' at any move asks again)")
        while True:
            try:
                text = self.read(f"{me}> ")
            except EOFError:
                raise LeftGame from None
            word = text.strip().lower()
            if word in QUIT_WORDS:
                raise LeftGame
            if word in HELP_WORDS:
                self.write(self.table(env, me))
                self.write(actions_text(choices))
                continue
            if word in LOG_WORDS:
                self.write("\n".join(["history:", *(f"  {line}" for line in self.history)])
                           if self.history else "history: nothing has happened yet")
                continue
            if word == AUTO_WORD and offer is not None:
                self.answering = True
                return offer[0]
            offers = offers_of(self.game) if word == ASK_WORD else None
            if offers is not None:
                self.write(f"the {offers} are asked again" if self.answering
                           else f"you are asked at every one of the {offers} already")
                self.answering = False
                continue
            position, hint = choose(text, choices, [names[i] for i in legal])
            if position is not None:
                return legal[position]
            self.write(f"hint: {hint}")

    def finish(self, env: Any, me: str, totals: list[float]) -> None:
        from .tally import score_of

        self.write("")
        self.write(self.table(env, me))
        share = score_of(totals, self.seat)
        verdict = "you win" if share == 1.0 else "you lose" if share == 0.0 else "you share the win"
        returns = ", ".join(f"player_{s}: {return_text(value)}" for s, value in enumerate(totals))
        self.write(f"game over: {verdict} (returns {returns})")
