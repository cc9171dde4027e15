"""Bot guarding: a bot's failure or illegal move turned into a forfeit of its game, never a crash.

A tournament's deals (eval/runner.py) and the web page's tables (web/tables.py) seat every bot behind a
:class:`Guard`; :class:`Forfeit` says who forfeited and why (see eval/runner.py, "Forfeits").
"""

from __future__ import annotations

from typing import Any

from ..agents.base import BotBase, as_bot
from ..agents.external import clip
from ..agents.infoset import feed
from ..envs.aec import as_action


class Forfeit(Exception):  # noqa: N818 - a game outcome, not an error of the runner
    """Raised inside a game when the bot at ``seat`` forfeits it."""

    def __init__(self, seat: int, kind: str, reason: str):
        super().__init__(f"seat {seat} forfeits ({kind}): {reason}")
        self.seat, self.kind, self.reason = seat, kind, reason


class Guard(BotBase):
    """Wraps a bot for one game: turns its failures and illegal actions into a :class:`Forfeit`.

    ``seed`` is the game's seed for the bot: its ``begin_game`` gets it (a program's ``new_game`` seeds)."""

    def __init__(self, bot: Any, seat: int, seed: int, env: Any):
        self.bot, self.seat, self.seed, self.env = as_bot(bot), seat, seed, env
        self.name = self.bot.name

    def begin_game(self, seat: int, seed: int | None = None) -> None:
        try:
            self.bot.begin_game(self.seat, self.seed)
        except Exception as error:  # noqa: BLE001 - any failure of a bot forfeits its game
            raise _forfeit(self.seat, error) from None

    def reset(self) -> None:
        self.begin_game(self.seat, self.seed)

    @property
    def wants_events(self) -> bool:
        return self.bot.wants_events

    def observe_events(self, lines: list[str]) -> None:
        try:
            self.bot.observe_events(lines)
        except Exception as error:  # noqa: BLE001 - any failure of a bot forfeits its game
            raise _forfeit(self.seat, error) from None

    def act(self, observation: dict[str, Any]) -> int:
        mask = observation["action_mask"]
        try:
            feed(self.bot, self.env, f"player_{self.seat}")  # the view / information state it takes
            action = self.bot.act(observation)
        except Exception as error:  # noqa: BLE001 - any failure of a bot forfeits its game
            raise _forfeit(self.seat, error) from None
        try:  # an integer only: a bot's True or 1.7 is no move (as the envs hold it)
            index = as_action(action, len(mask))
            legal = bool(mask[index])
        except (TypeError, ValueError):
            legal = False
        if not legal:
            raise Forfeit(self.seat, "illegal", f"action {clip(repr(action), 100)} is not legal now")
        return index


def _forfeit(seat: int, error: Exception) -> Forfeit:
    kind = getattr(error, "kind", None) or "error"
    reason = getattr(error, "reason", None) or f"{type(error).__name__}: {error}"
    return Forfeit(seat, clip(str(kind), 40), clip(str(reason)))

