"""Bot levels: ``level:1`` .. ``level:5``, a fixed ladder of named bots per game, a beginner to the strongest.

A player (or a frontend offering "easy / medium / hard") picks a level instead of a spec whose strength they
cannot know. Each game's module in agents/ declares its ladder as ``LEVELS``: five bot specs, weakest first,
each an ordinary spec (a built-in, a bundled zoo bot or a search of those: nothing read from the disk
beyond the package, so every server may seat them). ``level:N`` is loaded as the N-th of them.

=====  ============  ========================================================================================
level  name          what it is in MiniSteel, Wyvern and Minefield
=====  ============  ========================================================================================
1      beginner      ``random``: a uniformly random legal move
2      casual        ``careless``: the game's heuristic, but a random legal move half of the time
3      intermediate  ``heuristic``: the game's rule-based bot
4      advanced      the game's next step up: a trained network or a short search (its ``LEVELS``)
5      expert        the strongest bot the project has for the game, within a bounded time a move
=====  ============  ========================================================================================

Tiny Minotaur's dice leave too little room between random and exact play for that ladder (the heuristic and
the network are within 30 Elo of exact play), so its levels are exact play erring less at each level: the
oracle playing its worst move at every decision, at 72%, 50% and 30% of them, then the oracle.

The order was measured on duplicate deals by ``tavernzoo tournament GAME --bots level:1 ... level:5``
(docs/zoo.md, "Levels": the commands and the ratings with their intervals). Minefield's levels are labels
only: no policy can beat random play there (docs/zoo.md).
"""

from __future__ import annotations

import importlib
import random
from typing import Any

from .base import BotBase, legal_actions
from .spec import BotSpec

LEVEL_NAMES = ("beginner", "casual", "intermediate", "advanced", "expert")
CARELESS_SHARE = 0.5
"""How often the ``careless`` bot plays a random legal move instead of the heuristic's."""


def levels(game: Any) -> tuple[str, ...]:
    """The game's ladder: its module's ``LEVELS`` (agents/<game>.py), five bot specs, weakest first."""
    try:
        module = importlib.import_module(f"{__package__}.{game.name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__package__}.{game.name}":
            raise
        module = None
    ladder = getattr(module, "LEVELS", None)
    if ladder is None:
        raise ValueError(f"{game.name} has no bot levels (its agents module declares no LEVELS)")
    return tuple(ladder)


def level_spec(spec: BotSpec, game: Any) -> BotSpec:
    """The bot spec that ``level:N`` stands for in ``game``; a ValueError naming the valid levels otherwise."""
    ladder = levels(game)
    number = spec.name.strip()
    if not (number.isascii() and number.isdigit() and 1 <= int(number) <= len(ladder)):
        named = ", ".join(f"level:{n} ({name})" for n, name in enumerate(LEVEL_NAMES[:len(ladder)], start=1))
        raise ValueError(f"bot spec {str(spec)!r}: the levels of {game.name} are {named}")
    return BotSpec.parse(ladder[int(number) - 1])


def level_listing(game: Any) -> list[dict[str, Any]]:
    """Each level of ``game`` as a frontend lists it: its spec, its name and the bot it stands for."""
    return [{"spec": f"level:{number}", "name": name, "bot": bot}
            for number, (name, bot) in enumerate(zip(LEVEL_NAMES, levels(game), strict=True), start=1)]


class CarelessBot(BotBase):
    """A bot that plays a uniformly random legal move with probability ``share``, else ``inner``'s move.

    The inner bot is asked every move, including those it does not get to play, so that one that keeps
    something between moves (Minefield's heuristic remembers who attacked it) sees the whole game."""

    name = "careless"

    def __init__(self, inner: Any, seed: int | None = None, share: float = CARELESS_SHARE):
        self.inner = inner
        self.share = share
        self._random = random.Random(seed)
        self.wants_view = inner.wants_view
        self.wants_information_state = inner.wants_information_state
        self.wants_events = inner.wants_events

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        if seed is not None:
            self._random.seed(seed)
        self.inner.begin_game(seat, None if seed is None else self._random.randrange(2**63))

    def reset(self) -> None:
        self.inner.reset()

    def observe_view(self, view: dict[str, Any]) -> None:
        self.inner.observe_view(view)

    def observe_information_state(self, state: Any, seat: int) -> None:
        self.inner.observe_information_state(state, seat)

    def observe_events(self, lines: list[str]) -> None:
        self.inner.observe_events(lines)

    def act(self, observation: dict[str, Any]) -> int:
        chosen = self.inner.act(observation)
        if self._random.random() < self.share:
            legal = legal_actions(observation, self.name)
            return legal[self._random.randrange(len(legal))]
        return chosen

    def game_over(self, returns: Any, seat: int) -> None:
        self.inner.game_over(returns, seat)

    def close(self) -> None:
        self.inner.close()


def careless(heuristic: Any) -> Any:
    """The factory ``(config, seed) -> CarelessBot`` around a game's heuristic factory."""

    def make(config: Any, seed: int | None = None) -> CarelessBot:
        seeds = random.Random(seed)
        return CarelessBot(heuristic(config, seeds.randrange(2**63)), seeds.randrange(2**63))

    return make
