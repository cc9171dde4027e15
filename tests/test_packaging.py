"""Layout rules: every package folder is installed, and rules engines stay pure."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPING = {"envs": "tavernzoo.envs", "agents": "tavernzoo.agents", "train": "tavernzoo.train",
           "eval": "tavernzoo.eval", "web": "tavernzoo.web", "tavernzoo": "tavernzoo"}
FORBIDDEN_IN_RULES = {"gymnasium", "gym", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib"}


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for folder, package in MAPPING.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    assert found == listed


def test_rules_engines_import_no_rl_libraries():
    for path in (ROOT / "envs").glob("*/rules.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN_IN_RULES, f"{path} imports {name}"
