"""Game records: one JSON document per game that replays to the identical final state.

A record holds the game and env version, the validated config, the seed, who sat where, every action
by name, every chance outcome (as ``[n, value]``: a uniform draw from ``0..n-1``; a d20 showing 14 is
``[20, 13]``) and the final returns. Replaying feeds the recorded outcomes back instead of re-running
a random generator, so a record stays valid across Python and library versions, and a record written
by another frontend that rolled physical dice replays the same way. A record that carries its seed
must also hold exactly the outcomes that seed draws: :func:`replay` re-draws them and names the first
that differs, so an edited die does not pass. A frontend whose dice come from elsewhere writes
``"seed": null``.

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

from .core import Chance, Game, ReplayError, config_to_dict, plain_int
from .registry import earlier_versions, get_game

FORMAT = "tavernzoo-record"
FORMAT_VERSION = 1
# The longest record read, in characters: a record is a few kilobytes; a long Wyvern game about a megabyte.
MAX_RECORD_CHARS = 64 * 1024 * 1024


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


def replay(record: Any) -> tuple[Game, Any]:
    """Rebuild a game from its record and check that it ends where the record says.

    Returns ``(game, final_state)``; raises ReplayError naming the first disagreement: a record of the
    wrong shape, chance outcomes its seed does not draw, an action the rules refuse, or different returns.
    """
    check_record(record)
    game = record_game(record)
    try:
        config = game.make_config(record["config"])
    except ValueError as error:
        raise ReplayError(f"config: {error}") from None
    # Dice that differ from the seed's are named as the cause of whatever goes wrong after them; outcomes
    # past the game's last draw are the replay's to name ("never used").
    mismatch = seed_mismatch(record["seed"], record["chance"]) if record["seed"] is not None else None
    chance = Chance.scripted(record["chance"])
    try:
        state = _replay_actions(game, config, chance, record)
    except ReplayError:
        if mismatch is not None and mismatch[0] < len(chance.outcomes):
            raise ReplayError(mismatch[1]) from None
        raise
    if mismatch is not None:
        raise ReplayError(mismatch[1])
    return game, state


def record_game(record: dict[str, Any]) -> Game:
    """The game (and version) a checked record was played in: its ``game`` at the record's ``env``, which
    may be an earlier version the game still plays (``ministeel_v1``); ReplayError for any other."""
    try:
        game = get_game(record["game"])
    except ValueError as error:
        raise ReplayError(str(error)) from None
    if record["env"] != game.env_name:
        earlier = earlier_versions().get(record["env"])
        if earlier is None or earlier.name != game.name:
            raise ReplayError(f"record is for {record['env']!r}; this tavernzoo has {game.env_name!r}")
        game = earlier
    return game


def _replay_actions(game: Game, config: Any, chance: Chance, record: dict[str, Any]) -> Any:
    rules = game.rules
    state = rules.new_game(config, chance)
    for number, step in enumerate(record["actions"]):
        if rules.is_terminal(state):
            raise ReplayError(f"the game ended before action #{number}")
        try:
            if game.simultaneous:
                play_joint(game, config, state, number, step)
            else:
                play_turn(game, config, state, number, step)
        except ReplayError:
            raise
        except ValueError as error:  # IllegalActionError: an action the rules refuse here
            raise ReplayError(f"action #{number}: {error}") from None
    if not state.chance.exhausted:
        raise ReplayError("the record holds chance outcomes that the game never used")
    if record["returns"] is not None:
        if not rules.is_terminal(state):
            raise ReplayError("the record has final returns but its actions do not end the game")
        if [float(r) for r in rules.returns(state)] != [float(r) for r in record["returns"]]:
            raise ReplayError(
                f"replayed returns {list(rules.returns(state))} differ from the record's {record['returns']}"
            )
    return state


def play_turn(game: Game, config: Any, state: Any, number: int, step: Any) -> None:
    """Play a record's step ``number`` (``{"seat", "action"}``) on ``state``; ReplayError for a bad step."""
    if not isinstance(step, dict) or plain_int(step.get("seat")) is None or not isinstance(step.get("action"), str):
        raise ReplayError(f'action #{number} must be {{"seat": <int>, "action": <name>}}, got {_short(step)}')
    seat = game.rules.current_seat(state)
    if step["seat"] != seat:
        raise ReplayError(f"action #{number} is by seat {step['seat']}, but seat {seat} is to act")
    game.rules.apply(state, game.action_index(config, step["action"]))


def play_joint(game: Game, config: Any, state: Any, number: int, step: Any) -> None:
    """Play a simultaneous game's step ``number`` (``{"joint": {seat: action}}``); ReplayError for a bad one."""
    moves = step.get("joint") if isinstance(step, dict) else None
    if not isinstance(moves, dict) or not all(
        isinstance(seat, str) and seat.isdigit() and isinstance(name, str) for seat, name in moves.items()
    ):
        raise ReplayError(f'action #{number} must be {{"joint": {{"<seat>": <name>, ...}}}}, got {_short(step)}')
    joint = {int(seat): game.action_index(config, name) for seat, name in moves.items()}
    expected = set(game.rules.acting_seats(state))
    if set(joint) != expected:
        raise ReplayError(f"action #{number} has moves for seats {sorted(joint)}, expected {sorted(expected)}")
    game.rules.apply_joint(state, joint)


def check_record(record: Any) -> None:
    """Raise ReplayError unless ``record`` has a record's shape: the fields :func:`make_record` writes,
    each of its type. The steps in ``actions`` are checked as they are played (their shape depends on
    the game)."""
    if not isinstance(record, dict):
        raise ReplayError(f"a record is a JSON object, got {_kind(record)}")
    if record.get("format") != FORMAT:
        raise ReplayError(f"not a tavernzoo game record (format={_short(record.get('format'))})")
    if record.get("format_version") != FORMAT_VERSION:
        raise ReplayError(
            f"record format version {_short(record.get('format_version'))}; this tavernzoo reads {FORMAT_VERSION}"
        )
    fields = {
        "game": (str, "a game name"),
        "env": (str, "an env name"),
        "config": (dict, "an object of options"),
        "actions": (list, "a list of steps"),
        "chance": (list, "a list of [n, value] pairs"),
    }
    for name, (kind, what) in fields.items():
        if name not in record:
            raise ReplayError(f"the record has no {name!r}")
        if not isinstance(record[name], kind):
            raise ReplayError(f"{name!r} must be {what}, got {_kind(record[name])}")
    seed = record.get("seed")
    if seed is not None and plain_int(seed) is None:
        raise ReplayError(f"'seed' must be an integer or null, got {_short(seed)}")
    returns = record.get("returns")
    if returns is not None and not (
        isinstance(returns, list) and all(isinstance(r, int | float) and not isinstance(r, bool) for r in returns)
    ):
        raise ReplayError(f"'returns' must be a list of numbers or null, got {_short(returns)}")
    for number, outcome in enumerate(record["chance"]):
        if not (isinstance(outcome, list) and len(outcome) == 2 and all(plain_int(v) is not None for v in outcome)
                and 0 <= outcome[1] < outcome[0]):
            raise ReplayError(f"chance outcome #{number} must be [n, value] with 0 <= value < n, got {_short(outcome)}")


def seed_mismatch(seed: int, outcomes: list[list[int]]) -> tuple[int, str] | None:
    """The index of the first of ``outcomes`` that ``Chance(seed)``, asked the same ``n``s, does not draw,
    with a message naming it; None when all agree."""
    chance = Chance(seed)
    for number, (n, value) in enumerate(outcomes):
        drawn = chance.below(n)
        if drawn != value:
            return number, (f"chance outcome #{number} is [{n}, {value}], but seed {seed} draws [{n}, {drawn}]: "
                            "the record's dice differ from its seed's")
    return None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value) if isinstance(value, dict | list | str | int | float | bool | type(None)) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """A temporary file beside ``path`` that replaces ``path`` whole when the block succeeds and vanishes
    when it fails: a reader sees the old file or the new one, never half of it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file private (0600); the file it becomes gets the mode open() would give it (or
        # keeps the one it replaces), so an exported bot or a results file is as readable as any other.
        os.fchmod(handle, _mode_for(path))
        with os.fdopen(handle, mode) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The permission bits of the file replacing ``path``: the old file's, or a new file's under the umask."""
    try:
        return path.stat().st_mode & 0o777  # never a set-id or sticky bit on a file written here
    except FileNotFoundError:
        umask = os.umask(0o022)  # the only way to read it: set, then put back at once
        os.umask(umask)
        return 0o666 & ~umask


def write_json_atomic(path: str | os.PathLike, document: Any) -> None:
    """Write JSON through :func:`atomic_file`."""
    with atomic_file(path) as file:
        json.dump(document, file, indent=1)
        file.write("\n")


def save_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    write_json_atomic(path, record)


def load_record(path: str | os.PathLike) -> dict[str, Any]:
    """One record from a JSON file, checked to be an object (its fields are checked by :func:`replay`)."""
    records = list(read_records(path))
    if len(records) != 1:
        raise ReplayError(f"{path} holds {len(records)} records; one was expected")
    return records[0][1]


def read_records(path: str | os.PathLike, left_out: list[str] | None = None) -> Iterator[tuple[int, Any]]:
    """``(line, record)`` for each record in ``path``: a ``.jsonl`` file holds one record per line (blank
    lines skipped), any other file one JSON document. Raises ReplayError naming the line for text that is
    not JSON or longer than ``MAX_RECORD_CHARS``, and for a file that holds no record at all. Records
    are read one at a time, so a large file is never held whole.

    A ``.jsonl`` file's last line that has no line end and is not JSON is a record cut off by a kill in the
    middle of its write (a long match stopped by force): with ``left_out`` given, it is left out and a
    sentence saying so is appended to that list; without, it is an error like any other bad line."""
    path = Path(path)
    found, torn_here = 0, False
    with open(path, encoding="utf-8", errors="replace") as file:
        if path.suffix == ".jsonl":
            lines = enumerate(iter(lambda: file.readline(MAX_RECORD_CHARS + 1), ""), start=1)
        else:
            lines = iter([(1, file.read(MAX_RECORD_CHARS + 1))])
        for number, text in lines:
            if len(text) > MAX_RECORD_CHARS:
                raise ReplayError(f"{path}:{number}: a record longer than {MAX_RECORD_CHARS} characters")
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                if path.suffix == ".jsonl" and not text.endswith("\n"):  # readline: only the last line
                    torn = (f"{path}:{number}: the last line is cut off ({len(text):,} characters, no line end, "
                            "not JSON: a record whose write was stopped by a kill)")
                    if left_out is not None:
                        left_out.append(torn)
                        torn_here = True
                        continue
                    raise ReplayError(f"{torn}: {error}") from None
                raise ReplayError(f"{path}:{number}: not valid JSON: {error}") from None
            found += 1
            yield number, record
    if not found:
        raise ReplayError(f"{path} holds no records ({'its only line is cut off' if torn_here else 'it is empty'})")


def end_torn_tail(path: str | os.PathLike) -> str | None:
    """Make a JSON-lines records file safe to append to: a last line without its line end would run into the
    next record. A last line that is a whole record gets its line end; one that is not JSON (a record cut
    off by a kill in the middle of its write, which no reader can use) is removed. Returns a sentence saying
    what was done, or None where the file is missing, empty or ends with a line end (nothing to do)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    if size == 0:
        return None
    with open(path, "r+b") as file:
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return None
        start = _last_line_start(file, size)
        file.seek(start)
        tail = file.read(min(size - start, 4 * MAX_RECORD_CHARS + 1))  # UTF-8: at most 4 bytes a character
        try:
            json.loads(tail.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            file.truncate(start)
            return (f"{path}: its last line was cut off ({size - start:,} bytes from byte {start:,}, no line end, "
                    "not JSON: a record whose write was stopped by a kill): removed before appending")
        file.seek(size)
        file.write(b"\n")
        return f"{path}: its last record had no line end: one was added before appending"


def _last_line_start(file: IO[bytes], size: int) -> int:
    """Where the last line of an open binary file of ``size`` bytes begins (read backwards a chunk at a time)."""
    end = size
    while end > 0:
        begin = max(0, end - (1 << 16))
        file.seek(begin)
        newline = file.read(end - begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0
