"""The `tavernzoo` command lines of the README and docs/: each one a reader can copy parses, and a match or
tournament seats its game (a match one bot spec per seat, a tournament at least one entry per seat). Lines
with placeholders (``--seed S``, ``GAME``, ``...``, ``$(...)``, ``[--option]``) and a command named in a
sentence without the arguments it requires are left out; a command with real names and numbers is checked."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from tavernzoo.cli import build_parser
from tavernzoo.commands.common import parse_config
from tavernzoo.envs import games, get_game

ROOT = Path(__file__).resolve().parent.parent
COMMAND = re.compile(r"tavernzoo [a-z]+")


def documented_commands() -> list[tuple[str, str]]:
    """(file, command line) for every ``tavernzoo`` command in a code block or an inline code span."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
            for line in block.splitlines():
                line = line.strip()
                if COMMAND.match(line):
                    found.append((path.name, re.split(r"\s+#\s", line)[0]))  # without a trailing comment
        prose = re.sub(r"```.*?```", "", text, flags=re.S).replace("\n", " ")
        found.extend((path.name, span) for span in re.findall(r"`(tavernzoo [a-z]+[^`]*)`", prose))
    return found


def concrete(line: str) -> list[str] | None:
    """The line's arguments, or None where it holds a placeholder or shell syntax rather than a command."""
    try:
        words = shlex.split(line.split(" | ")[0])[1:]  # a command piped on: the command
    except ValueError:
        return None
    if any("..." in word or "…" in word or "$" in word or "[" in word or word.isupper() for word in words):
        return None
    return words


SKIPPED = "not a concrete command"


def seating_problem(line: str) -> str | None:
    """What is wrong with a documented command line (it does not parse; a match or tournament that seats too
    few or too many bots), None where nothing is, SKIPPED where it is no concrete command (of a real game)."""
    words = concrete(line)
    if words is None:
        return SKIPPED
    with contextlib.redirect_stderr(io.StringIO()) as said:
        try:
            args = build_parser(words).parse_args(words)
        except SystemExit:
            # `tavernzoo export` or `tavernzoo export --measure` in a sentence names the command or its option
            named = "arguments are required" in said.getvalue() or (
                words[-1].startswith("--") and "expected one argument" in said.getvalue())
            return SKIPPED if named else "does not parse"
    if words[0] not in ("match", "tournament") or args.game not in games() or not args.bots:
        return None if words[0] not in ("match", "tournament") else SKIPPED
    game = get_game(args.game)
    seats = game.rules.num_seats(game.make_config(parse_config(args)))
    enough = len(args.bots) == seats if words[0] == "match" else len(args.bots) >= seats
    return None if enough else f"{len(args.bots)} bot specs for {seats} seats"


def test_every_documented_command_parses_and_every_match_and_tournament_seats_its_game():
    problems = {(name, line): seating_problem(line) for name, line in documented_commands()}
    wrong = [f"{name}: {problem}: {line}" for (name, line), problem in problems.items()
             if problem not in (None, SKIPPED)]
    assert not wrong, "\n".join(wrong)
    assert sum(problem is None for problem in problems.values()) >= 30  # a pattern that found none checks nothing


@pytest.mark.parametrize("line, problem", [
    ("tavernzoo match ministeel --bots zoo:ministeel heuristic --games 20", "2 bot specs for 4 seats"),
    ("tavernzoo match ministeel --set num_players=2 --bots zoo:ministeel heuristic --games 20", None),
    ("tavernzoo tournament wyvern --bots heuristic random --games 20", "2 bot specs for 4 seats"),
    ("tavernzoo tournament minefield --set num_players=3 --bots heuristic random random random", None),
    ("tavernzoo match tiny_minotaur --bots heuristic random --games many", "does not parse"),
    ("tavernzoo match GAME --bots BOT mcts --seed S", SKIPPED),
    ("tavernzoo export --measure", SKIPPED),
    ("tavernzoo export runs/x --out x.onnx --measures 100", "does not parse"),
    ("tavernzoo zoo --json", None),
])
def test_the_check_finds_what_a_reader_would_trip_over(line, problem):
    assert seating_problem(line) == problem
