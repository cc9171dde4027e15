"""The layers, as an import graph: what may import what (docs/architecture.md, "Layers").

The graph is read from the source with ``ast``: every ``import`` and ``from ... import`` in every module of
the package, at the top of a module or inside a function, relative imports resolved, folders mapped to
module names through pyproject's ``package-dir`` (``envs/`` is ``tavernzoo.envs``). An import inside a
function is an edge like any other: it only moves the circle from import time to call time.

The rules:
    * nothing in the library imports the command line (``tavernzoo/cli.py``, ``tavernzoo/commands/``);
    * ``envs/`` imports nothing from another folder of the package;
    * a game's rules never import its encoder (action names belong to the rules);
    * ``train/`` and ``web/`` are top floors: nothing but the command line (and the folder itself)
      imports them;
    * ``agents/`` (the bots) imports nothing from ``eval/`` (the hosts that seat them: the table engine, the
      match, the tournament, the terminal, the bot server, ``bot check``);
    * the package has no import cycles (its strongly connected components are single modules).

``ALLOWED`` lists today's exceptions, one edge each with its reason. It only shrinks: an allowed edge
that no longer exists fails the test, so that its entry is deleted with the import.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CLI = ("tavernzoo.cli", "tavernzoo.commands")
TOP_FLOORS = ("train", "web")

ALLOWED: dict[tuple[str, str], str] = {}


def _modules(root: Path) -> dict[str, Path]:
    """Every module of the package by its import name, through pyproject's package-dir."""
    package_dir = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    modules: dict[str, Path] = {}
    for package, folder in package_dir.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The package module that ``import name`` loads last (``a.b.c`` where it is a module, else ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """``{module: modules it imports}`` within the package, each import counted wherever it is written."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1])
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                # `from pkg import mod` imports the module pkg.mod; `from mod import name` the module mod.
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            for target in targets:
                owner = _owner(target, modules) if target.split(".")[0] == "tavernzoo" else None
                if owner is not None and owner != name:
                    graph[name].add(owner)
    return graph


def _is_cli(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in CLI)


def _folder(name: str) -> str:
    """``tavernzoo.eval.match`` -> ``eval``; the top package's own modules -> ``tavernzoo``."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("envs", "agents", "train", "eval", "web") else "tavernzoo"


def rule_violations(graph: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """Every edge that breaks one of the edge rules, with the rule it breaks."""
    broken = {}
    for source, targets in graph.items():
        for target in targets:
            if not _is_cli(source) and _is_cli(target):
                broken[source, target] = "the library imports the command line"
            elif _folder(source) == "envs" and _folder(target) != "envs":
                broken[source, target] = "envs/ imports another folder"
            elif _folder(source) == "agents" and _folder(target) == "eval":
                broken[source, target] = "agents/ imports eval/: a bot never imports its hosts"
            elif source.endswith(".rules") and target.endswith(".encode"):
                broken[source, target] = "a game's rules import an encoder"
            elif (_folder(target) in TOP_FLOORS and _folder(source) != _folder(target)
                  and not _is_cli(source)):
                broken[source, target] = f"the library imports {_folder(target)}/, a top floor"
    return broken


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def without(graph: dict[str, set[str]], edges) -> dict[str, set[str]]:
    edges = set(edges)
    return {source: {target for target in targets if (source, target) not in edges}
            for source, targets in graph.items()}


def problems(graph: dict[str, set[str]], allowed=ALLOWED) -> list[str]:
    """Everything wrong with ``graph``: broken rules and cycles outside ``allowed``, allowed edges gone."""
    found = [f"{source} -> {target}: {rule}" for (source, target), rule in sorted(rule_violations(graph).items())
             if (source, target) not in allowed]
    found += [f"import cycle: {' <-> '.join(component)}" for component in cycles(without(graph, allowed))]
    found += [f"{source} -> {target} is allowed ({reason}) but no longer imported: delete its ALLOWED entry"
              for (source, target), reason in sorted(allowed.items()) if target not in graph.get(source, ())]
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_import_graph_keeps_the_layers(graph):
    assert problems(graph) == []


def test_the_graph_is_read_through_the_package_dir(graph):
    # A few edges written in each form: absolute, relative, from a package, inside a function.
    assert "tavernzoo.envs.core" in graph["tavernzoo.envs.registry"]  # from .core import Game
    assert "tavernzoo.envs.core" in graph["tavernzoo.envs.tiny_minotaur.rules"]
    assert "tavernzoo.envs" in graph["tavernzoo.agents"]  # from ..envs import Game, get_game
    assert len(graph) > 60 and all(name.startswith("tavernzoo") for name in graph)


def _copy_with(tmp_path: Path, relative: str, extra: str) -> Path:
    """The package's sources copied under ``tmp_path``, with ``extra`` appended to one module."""
    for folder in ("tavernzoo", "envs", "agents", "train", "eval", "web"):
        for path in (ROOT / folder).rglob("*.py"):
            target = tmp_path / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(path.read_text())
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    module = tmp_path / relative
    module.write_text(module.read_text() + extra)
    return tmp_path


@pytest.mark.parametrize("relative, extra, expected", [
    ("eval/stats.py", "\ndef f():\n    from tavernzoo.cli import main\n", "the library imports the command line"),
    ("envs/records.py", "\nfrom ..agents import load_bot\n", "envs/ imports another folder"),
    ("envs/wyvern/rules.py", "\ndef f():\n    from . import encode\n", "a game's rules import an encoder"),
    ("eval/stats.py", "\ndef f():\n    from .match import play_match\n", "import cycle"),
    ("agents/random_bot.py", "\ndef f():\n    from ..train.config import TrainConfig\n", "train/, a top floor"),
    ("eval/match.py", "\nfrom tavernzoo.web import tables\n", "web/, a top floor"),
    ("agents/random_bot.py", "\nimport tavernzoo.agents\n", "import cycle"),
    ("agents/random_bot.py", "\ndef f():\n    from ..eval.table import Table\n", "agents/ imports eval/"),
])
def test_an_added_bad_import_is_caught(tmp_path, relative, extra, expected):
    assert not any(expected in problem for problem in problems(import_graph()))
    copy = _copy_with(tmp_path, relative, extra)
    assert any(expected in problem for problem in problems(import_graph(copy)))


def test_an_allowed_edge_that_is_gone_fails(graph):
    gone = ("tavernzoo.eval.stats", "tavernzoo.web.app")
    assert problems(graph, {**ALLOWED, gone: "an example"})[-1].startswith(f"{gone[0]} -> {gone[1]} is allowed")


# --- who tells a bot a game begins and ends -------------------------------------------------------------

LIFECYCLE_HOOKS = ("begin_game", "game_over", "game_stats")
TABLE_ENGINE = "tavernzoo.eval.table"
HOOK_CALLERS_ALLOWED: dict[str, str] = {
    "tavernzoo.eval.compliance": "bot check plays raw protocol games to test the program itself, not a bot",
}
"""Modules that still call a bot's per-game hooks themselves. Only the table engine should (eval/table.py):
every other host that writes the lifecycle again leaves parts out (a match once never sent ``game_over``).
A host plays each game at a ``Table`` (a person's seat is one without a bot), or, where it steps many games in
lockstep, tells its bots through the engine's ``tell_game_begins`` and ``tell_game_over``. The list only
shrinks."""


def hook_callers(root: Path = ROOT) -> set[str]:
    """Modules that call ``begin_game``, ``game_over`` or ``game_stats`` on something other than themselves,
    outside a method of the same name (a wrapper that passes the hook on, such as a Guard, is no host)."""
    callers = set()
    for name, path in _modules(root).items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for function in [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]:
            for node in ast.walk(function):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr in LIFECYCLE_HOOKS and node.func.attr != function.name
                        and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self")):
                    callers.add(name)
    return callers


def test_only_the_table_engine_calls_a_bots_per_game_hooks():
    callers = hook_callers() - {TABLE_ENGINE}
    new = callers - set(HOOK_CALLERS_ALLOWED)
    assert not new, f"hosts that call the hooks themselves (play the game at a Table instead): {new}"
    gone = set(HOOK_CALLERS_ALLOWED) - callers
    assert not gone, f"no longer call the hooks (delete their HOOK_CALLERS_ALLOWED entries): {gone}"
    assert TABLE_ENGINE in hook_callers()
