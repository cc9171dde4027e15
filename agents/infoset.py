"""Information sets for search bots: what a seat knows, handed to the bot, in-process or over the protocol.

A search bot (``mcts``) needs more than the observation vector: it needs a rules ``State`` to play
forward. It must not get the real one, which holds the other hands. Each rules module therefore provides
``information_state(state, seat)``: a copy of the state in which everything ``seat`` cannot see (other
hands, deck order, cards offered to another seat, private log lines) is replaced by a canonical deal of
the unseen cards (sorted), and the Chance is blank. Two states the seat cannot tell apart give equal
information states, so nothing hidden passes through (docs/search.md names one known exception, after a
Wyvern loot); the bot then samples full states from it with ``rules.determinize(info_state, seat, chance)``.

Hosts hand it over with :func:`feed` just before asking a bot to act (the match loop, the tournament
runner, terminal play): a bot whose ``wants_information_state`` is true gets it through
``observe_information_state(state, seat)``, one whose ``wants_view`` is true gets the seat's view through
``observe_view(view)`` (agents/base.py has the hooks; a bot that is no BotBase is asked through
``as_bot``). Over the bot protocol the host sends the same information state as JSON in the ``act``
message (``"information_state"``, :func:`state_to_json`) when the bot's ``hello`` reply asks for it
(``"wants": ["information_state"]``); :func:`state_from_json` rebuilds it on the bot's side.
docs/search.md explains the design.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..envs.core import Chance
from .base import as_bot

WANTS_INFORMATION_STATE = "information_state"
WANTS_HISTORY = "history"


def feed(bot: Any, env: Any, agent: str) -> None:
    """Before ``bot`` acts as ``agent`` in ``env``: hand it the view and/or the information state it takes."""
    bot = as_bot(bot)
    if bot.wants_view:
        bot.observe_view(env.unwrapped.view(agent))
    # Building one clones and redeals the state: only for a bot that will use it.
    if bot.wants_information_state:
        unwrapped = env.unwrapped
        seat = unwrapped.possible_agents.index(agent)
        bot.observe_information_state(unwrapped.game.rules.information_state(unwrapped.game_state, seat), seat)
    if bot.wants_history:
        unwrapped = env.unwrapped
        seat = unwrapped.possible_agents.index(agent)
        bot.observe_history(public_history(unwrapped.game.rules, unwrapped.history(), seat))


def public_history(rules: Any, moves: list[tuple[int, Any]], seat: int) -> list[tuple[int, int]]:
    """The moves of a game (``(seat, action)`` pairs in order, as an env keeps them) as ``seat`` saw them: a
    move of another seat that the table does not see (the rules' ``PRIVATE_ACTIONS``: which card a MiniSteel
    pick kept) is ``(mover, -1)``. Simultaneous moves (``{seat: action}`` steps) are not shown: none of those
    games hides anything a belief would weigh."""
    private = getattr(rules, "PRIVATE_ACTIONS", frozenset())
    return [(move[0], -1 if move[0] != seat and move[1] in private else move[1]) for move in moves
            if isinstance(move, tuple)]


# --- JSON, for the bot protocol --------------------------------------------------------------------------


def state_to_json(state: Any) -> dict[str, Any]:
    """An information state as JSON: every field but ``config`` and ``chance``; tuples tagged so they
    come back as tuples."""
    return {f.name: _to_json(getattr(state, f.name)) for f in dataclasses.fields(state)
            if f.name not in ("config", "chance")}


def _to_json(value: Any) -> Any:
    if isinstance(value, tuple):
        return {"tuple": [_to_json(v) for v in value]}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"a {type(value).__name__} in a state cannot go over the bot protocol")


def state_from_json(game: Any, config: Any, data: Any) -> Any:
    """The information state ``state_to_json`` wrote, for ``game`` with ``config``; ValueError naming what
    is missing or malformed."""
    state_type = game.rules.State
    if not isinstance(data, dict):
        raise ValueError("'information_state' must be an object of state fields")
    names = [f.name for f in dataclasses.fields(state_type) if f.name not in ("config", "chance")]
    missing = [name for name in names if name not in data]
    extra = sorted(set(data) - set(names))
    if missing or extra:
        raise ValueError(f"'information_state' does not fit {game.env_name}'s State: missing {missing}, "
                         f"unknown {extra}")
    values = {name: _from_json(data[name]) for name in names}
    return state_type(config=config, chance=Chance(0), **values)


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) != {"tuple"} or not isinstance(value["tuple"], list):
            raise ValueError("a state value that is an object must be {\"tuple\": [...]}")
        return tuple(_from_json(v) for v in value["tuple"])
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value
