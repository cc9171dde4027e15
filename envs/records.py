"""Game records: one JSON document per game that replays to the identical final state.

A record holds the game and env version, the validated config, the seed, who sat where, every action
by name, every chance outcome (as ``[n, value]``: a uniform draw from ``0..n-1``; a d20 showing 14 is
``[20, 13]``) and the final returns. Replaying feeds the recorded outcomes back instead of re-running
a random generator, so a record stays valid across Python and library versions, and a record written
by another frontend that rolled physical dice replays the same way.

Layout::

    {"format": "tavernzoo-record", "format_version": 1, "game": "tiny_minotaur", "env": "tiny_minotaur_v1",
     "config": {...}, "seed": 7, "seats": ["heuristic", "random"],
     "actions": [{"seat": 0, "action": "attack:stronk"}, ...],   # turn-based games
     "actions": [{"joint": {"0": "target:3", "1": "target:0"}}, ...],  # simultaneous games
     "chance": [[20, 13], ...], "returns": [1.0, -1.0], "end_reason": "knockout", "truncated": false}
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .core import Chance, Game, ReplayError, config_to_dict
from .registry import get_game

FORMAT = "tavernzoo-record"
FORMAT_VERSION = 1


def make_record(
    game: Game,
    state: Any,
    seed: int | None,
    actions: list[Any],
    seats: list[str] | None = None,
) -> dict[str, Any]:
    """The record of a game so far. ``actions`` holds ``(seat, index)`` pairs, or ``{seat: index}``
    dicts for simultaneous games."""
    rules, config = game.rules, state.config
    names = game.action_names(config)
    if game.simultaneous:
        steps = [{"joint": {str(seat): names[a] for seat, a in joint.items()}} for joint in actions]
    else:
        steps = [{"seat": seat, "action": names[a]} for seat, a in actions]
    terminal = rules.is_terminal(state)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": game.name,
        "env": game.env_name,
        "config": config_to_dict(config),
        "seed": seed,
        "seats": list(seats) if seats is not None else [f"player_{i}" for i in range(rules.num_seats(config))],
        "actions": steps,
        "chance": [list(outcome) for outcome in state.chance.outcomes],
        "returns": list(rules.returns(state)) if terminal else None,
        "end_reason": getattr(state, "end_reason", None) or None,
        "truncated": bool(rules.is_truncated(state)) if terminal else False,
    }


def replay(record: dict[str, Any]) -> tuple[Game, Any]:
    """Rebuild a game from its record and check that it ends where the record says.

    Returns ``(game, final_state)``; raises ReplayError naming the first disagreement.
    """
    if record.get("format") != FORMAT:
        raise ReplayError(f"not a tavernzoo game record (format={record.get('format')!r})")
    if record.get("format_version") != FORMAT_VERSION:
        raise ReplayError(
            f"record format version {record.get('format_version')!r}; this tavernzoo reads {FORMAT_VERSION}"
        )
    game = get_game(record["game"])
    if record.get("env") != game.env_name:
        raise ReplayError(f"record is for {record.get('env')!r}; this tavernzoo has {game.env_name!r}")
    config = game.make_config(record["config"])
    rules = game.rules
    state = rules.new_game(config, Chance.scripted(record["chance"]))
    for number, step in enumerate(record["actions"]):
        if rules.is_terminal(state):
            raise ReplayError(f"the game ended before action #{number}")
        if game.simultaneous:
            joint = {int(seat): game.action_index(config, name) for seat, name in step["joint"].items()}
            expected = set(rules.acting_seats(state))
            if set(joint) != expected:
                raise ReplayError(f"action #{number} has moves for seats {sorted(joint)}, expected {sorted(expected)}")
            rules.apply_joint(state, joint)
        else:
            seat = rules.current_seat(state)
            if step["seat"] != seat:
                raise ReplayError(f"action #{number} is by seat {step['seat']}, but seat {seat} is to act")
            rules.apply(state, game.action_index(config, step["action"]))
    if not state.chance.exhausted:
        raise ReplayError("the record holds chance outcomes that the game never used")
    if record.get("returns") is not None:
        if not rules.is_terminal(state):
            raise ReplayError("the record has final returns but its actions do not end the game")
        if [float(r) for r in rules.returns(state)] != [float(r) for r in record["returns"]]:
            raise ReplayError(
                f"replayed returns {list(rules.returns(state))} differ from the record's {record['returns']}"
            )
    return game, state


@contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """A temporary file beside ``path`` that replaces ``path`` whole when the block succeeds and vanishes
    when it fails: a reader sees the old file or the new one, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, mode) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | os.PathLike, document: Any) -> None:
    """Write JSON through :func:`atomic_file`."""
    with atomic_file(path) as file:
        json.dump(document, file, indent=1)
        file.write("\n")


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    write_json_atomic(path, record)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    try:
        with open(path) as file:
            return json.load(file)
    except json.JSONDecodeError as error:
        raise ReplayError(f"{path} is not valid JSON: {error}") from None
