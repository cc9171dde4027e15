"""What the program reads from and prints for a person: table files, ``--set`` items, a console.

A leaf module (it imports nothing else of tavernzoo): the library (tournament settings, the training
options, printed tables) and the command line (tavernzoo/commands/) share it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A rich console; when its output is not a terminal (a pipe, a file) lines are never wrapped, so
    that every table row stays one line for grep and friends."""
    out = Console(stderr=stderr)
    if not out.is_terminal:
        out = Console(stderr=stderr, width=10_000)
    return out


MAX_CONFIG_BYTES = 1 << 20


def read_table_file(file: str | Path, what: str, holds: str, hint: str = "") -> dict[str, Any]:
    """The table (dict) in a TOML file (``.toml``) or a JSON file, or a ValueError naming ``file``."""
    path = Path(file)
    try:
        with open(path, "rb") as handle:  # read at most the limit: a device or a pipe has no size
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ValueError(f"{what} {file} is over {MAX_CONFIG_BYTES} bytes: not a file of {holds}")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {file} is not a text file (not UTF-8)") from None
    except OSError as error:
        raise ValueError(f"{what} {file}: cannot read it ({error.strerror or error})") from None
    toml = path.suffix == ".toml"
    try:
        loaded = tomllib.loads(text) if toml else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{what} {file} is not valid {'TOML' if toml else 'JSON'}: {error}") from None
    except RecursionError:
        raise ValueError(f"{what} {file} is nested too deeply to be a table of {holds}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{what} {file} holds a {type(loaded).__name__}; it must hold a table of {holds}{hint}")
    return loaded


def parse_set(items: list[str], lists: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``--set KEY=VALUE`` items as a dict: VALUE is JSON, else a comma list (each item JSON, else a
    string: ``net_arch=256,256`` is ``[256, 256]``), else a string. A plain string for a key in ``lists``
    is a one-item list."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE (VALUE is JSON or a comma list), got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = [_json_or_text(part) for part in raw.split(",")] if "," in raw or key in lists else raw
        if key in lists and not isinstance(value, list):
            value = [value]
        options[key] = value
    return options


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text

