"""A tournament's game files: reading, repairing and merging them, and appending game lines.

Game files (in the tournament's ``--out``)
    ``games.jsonl`` holds one line per finished game (deal, rotation, seed, entries by seat, bots,
    returns, scores, places, forfeit, the full replayable record). A run with worker processes has each
    worker append its games to its own part, ``games/part-K.jsonl``; when the run ends the parts are
    appended to ``games.jsonl`` and removed, so a finished tournament is one file, as before. A run that
    was killed leaves its parts; ``--resume`` reads ``games.jsonl`` and every part (:func:`scan_games`),
    so it finds every game that was written, by any layout. A line that is not a game line is reported
    with its file and line number and left out (its game is played again on ``--resume``); of two copies
    of a game (a kill between appending a part and removing it), the first counts.

Writing
    :class:`GamesFile` appends lines to one file, of which it is the only writer; :func:`encode_lines`
    writes them byte for byte as ``json.dumps`` does.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .schedule import Settings

log = logging.getLogger("tavernzoo.tournament")


GAMES_FILE = "games.jsonl"


PARTS_DIR = "games"


def part_path(out: str | Path, worker: int) -> Path:
    """The part that worker ``worker`` of a run appends its games to."""
    return Path(out) / PARTS_DIR / f"part-{worker}.jsonl"


def game_files(out: str | Path) -> list[Path]:
    """``games.jsonl`` (if there) and then the parts a killed run left, in the order they are read."""
    out = Path(out)
    files = [out / GAMES_FILE] if (out / GAMES_FILE).exists() else []
    parts = out / PARTS_DIR
    if parts.is_dir():
        files += sorted(parts.glob("part-*.jsonl"), key=lambda path: (len(path.name), path.name))
    return files


def scan_games(out: str | Path, settings: Settings | None = None, *, repair: bool = False,
               quiet: bool = False, records: bool = False) -> Iterator[dict]:
    """Every game line of the tournament in ``out``, once each (the first copy of each (deal, rotation)),
    from all its :func:`game_files`, streamed. Without ``records`` each line comes without its record
    (what the tally needs), so memory holds one record at a time. ``repair``, ``settings`` and ``quiet``
    as in :func:`read_games`."""
    seen: set[tuple[int, int]] = set()
    for path in game_files(out):
        for line in _scan_file(path, settings, repair=repair, quiet=quiet, records=records):
            key = game_key(line)
            if key not in seen:
                seen.add(key)
                yield line


def read_games(path: str | Path, repair: bool = False, settings: Settings | None = None,
               quiet: bool = False) -> list[dict]:
    """The game lines of one file, such as ``games.jsonl`` (first copy of each (deal, rotation)). With
    ``repair``, a last line cut short by a killed run is removed from the file. A line that is not a game
    line (of a tournament with ``settings``, when given) is left out with a warning naming its line
    number: its game counts as not played, so ``--resume`` plays it again (``quiet``: no warnings)."""
    lines, seen = [], set()
    for line in _scan_file(Path(path), settings, repair=repair, quiet=quiet, records=True):
        key = game_key(line)
        if key not in seen:
            seen.add(key)
            lines.append(line)
    return lines


def _scan_file(path: Path, settings: Settings | None, *, repair: bool, quiet: bool,
               records: bool) -> Iterator[dict]:
    if not path.exists():
        return
    if repair:
        _drop_cut_line(path)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
                problem = _game_line_problem(line, settings)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                problem = f"not JSON ({error})"
            except RecursionError:
                problem = "nested too deeply"
            if problem:
                if not quiet:
                    log.warning("%s line %d skipped: %s", path, number, problem)
                continue
            if not records:
                line.pop("record", None)
            yield line


def _drop_cut_line(path: Path) -> None:
    """Cut a last line that a kill left without its newline (its game is played again)."""
    size = path.stat().st_size
    if not size:
        return
    with open(path, "r+b") as handle:
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        # Look back in blocks for the last complete line; a record is bounded, so this ends quickly.
        end = size
        while end > 0:
            start = max(0, end - (1 << 16))
            handle.seek(start)
            block = handle.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                handle.truncate(start + cut + 1)
                return
            end = start
        handle.truncate(0)


def merge_parts(out: str | Path) -> int:
    """Append every part of ``out`` to its ``games.jsonl`` and remove the part (then the folder); the
    number of parts merged. A kill between the append and the removal leaves a game twice, of which
    :func:`scan_games` counts the first."""
    out = Path(out)
    parts = [path for path in game_files(out) if path.parent.name == PARTS_DIR]
    if not parts:
        return 0
    target = out / GAMES_FILE
    _drop_cut_line(target) if target.exists() else None
    with open(target, "ab") as sink:
        for part in parts:
            _drop_cut_line(part)
            with open(part, "rb") as source:
                shutil.copyfileobj(source, sink, 1 << 20)
            sink.flush()
            part.unlink()
    try:
        (out / PARTS_DIR).rmdir()
    except OSError:  # something else lives there: leave it
        pass
    return len(parts)


def _game_line_problem(line: Any, settings: Settings | None) -> str | None:
    """What makes ``line`` unfit to count as a game (None if nothing)."""
    if not isinstance(line, dict):
        return f"a {type(line).__name__}, not a game object"
    for key in ("deal", "rotation"):
        value = line.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key}={value!r} is not a whole number >= 0"
    fields = {key: line.get(key) for key in ("entries", "scores", "places")}
    if not all(isinstance(value, list) for value in fields.values()):
        return "entries, scores and places must be lists"
    if len({len(value) for value in fields.values()}) != 1 or not fields["entries"]:
        return "entries, scores and places must have one item per seat"
    seats = len(fields["entries"])
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in fields["entries"] + fields["places"]):
        return "entries and places must hold whole numbers"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in fields["scores"]):
        return "scores must hold numbers"
    returns = line.get("returns")
    if returns is not None and (not isinstance(returns, list) or len(returns) != seats
                                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in returns)):
        return "returns must be null or one number per seat"
    forfeit = line.get("forfeit")
    if forfeit is not None and not (isinstance(forfeit, dict) and forfeit.get("seat") in range(seats)):
        return "forfeit must be null or name the forfeiting seat"
    if settings is not None:
        if seats != settings.seats or line["rotation"] >= seats:
            return f"it seats {seats} players in rotation {line['rotation']}; this tournament seats {settings.seats}"
        if any(entry >= len(settings.bots) for entry in fields["entries"]):
            return f"entries {fields['entries']} name bots beyond the {len(settings.bots)} of this tournament"
        if len(set(fields["entries"])) != seats:
            return f"entries {fields['entries']} seat one bot twice"
    return None


def game_key(line: dict) -> tuple[int, int]:
    """A game line's place in the run: (deal, rotation)."""
    return (line["deal"], line["rotation"])


def game_summary(line: dict) -> dict:
    """A game line without its record: what the tally needs, and what a worker sends its parent."""
    return {key: value for key, value in line.items() if key != "record"}


# --- writing -------------------------------------------------------------------------------------------


def encode_lines(lines: Iterable[dict]) -> str:
    """Game lines as JSON lines, byte for byte what ``json.dumps`` writes (game lines are trees, so the
    encoder's check for circular references is only cost)."""
    return "".join(_ENCODER.encode(line) + "\n" for line in lines)


_ENCODER = json.JSONEncoder(check_circular=False)


class GamesFile:
    """Appends game lines to one file, of which it is the only writer (a line is whole or, after a kill,
    the cut last one that :func:`scan_games` drops on resume)."""

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, lines: Iterable[dict]) -> None:
        self.write_text(encode_lines(lines))

    def write_text(self, text: str) -> None:
        """Lines already encoded (one JSON object and a newline each)."""
        self._handle.write(text)
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()
