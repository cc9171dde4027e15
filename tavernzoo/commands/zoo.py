"""``tavernzoo zoo``: the bundled pretrained bots and their measured strength (agents/onnx_bot.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from tavernzoo.agents.onnx_bot import read_manifest, zoo_bots
from tavernzoo.eval.deals import results_seeding
from tavernzoo.userio import console


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo zoo``: the bundled bots."""
    parser = commands.add_parser(
        "zoo", help="list the bundled pretrained bots (bot spec zoo:GAME)",
        description="List the pretrained bots shipped with tavernzoo, one per game, with what they were trained "
        "on and their measured strength. Use one as a bot spec: zoo:GAME (zoo:GAME@sample samples its moves).",
    )
    parser.add_argument("--json", action="store_true", help="print the manifests as JSON")
    parser.set_defaults(run=run_zoo)
    return parser


def run_zoo(args: argparse.Namespace) -> int:
    bots = zoo_bots()
    manifests = {name: read_manifest(path) for name, path in bots.items()}
    if args.json:
        print(json.dumps(manifests, indent=1))
        return 0
    if not bots:
        print("no zoo bots are installed")
        return 0
    table = Table(title="zoo bots (bot spec zoo:GAME)", title_justify="left")
    for column in ("spec", "options", "training", "vs random", "vs heuristic", "fair"):
        table.add_column(column, justify="right" if column in ("vs random", "vs heuristic", "fair") else "left",
                         overflow="fold")
    for name, manifest in manifests.items():
        provenance = manifest.get("provenance", {})
        strength = manifest.get("strength", {})
        options = provenance.get("game_config") or {}
        seats = strength.get("seats")
        table.add_row(
            f"zoo:{name}", " ".join(f"{k}={json.dumps(v)}" for k, v in options.items()) or "defaults",
            _training(provenance),
            _strength(strength.get("random")), _strength(strength.get("heuristic")),
            f"{1 / seats:.3f}" if isinstance(seats, int) else "-",
        )
    console().print(table)
    print("vs X: the bot's score (win share, 95% interval) with X in every other seat; fair: the score of an "
          "equal bot. See docs/zoo.md.")
    old = [f"zoo:{name}" for name, manifest in manifests.items()
           if manifest.get("strength") and results_seeding(manifest["strength"]) == "v1"]
    if old:
        print(f"measured with seeding v1, before 2026-12-05 (`tavernzoo match --seeding v1` reproduces their figures): "
              f"{', '.join(old)}")
    return 0


def _training(provenance: dict[str, Any]) -> str:
    """How the bot was trained, in a few words: its PPO steps, and the teacher a distilled start came from;
    for a bot trained in stages, the ``summary`` its manifest's provenance gives (``lineage`` has each)."""
    if isinstance(provenance.get("summary"), str):
        return provenance["summary"]
    steps = provenance.get("timesteps")
    expert = provenance.get("expert")
    started = provenance.get("started_from")
    parts = []
    if isinstance(expert, dict) and expert.get("games") == 0 and expert.get("sample_sources"):
        samples = expert.get("samples")  # only retrained on earlier runs' positions: their teachers taught it
        parts.append("retrained on earlier runs' positions"
                     + (f" ({samples:,})" if isinstance(samples, int) else ""))
    elif isinstance(expert, dict) and expert.get("teacher"):
        samples = expert.get("samples")
        parts.append(f"distilled from {expert['teacher']}"
                     + (f" ({samples:,} positions)" if isinstance(samples, int) else ""))
    elif started:
        parts.append("warm start")  # provenance.started_from tells which, in a sentence
    if isinstance(steps, int) and (steps or not parts):
        parts.append(f"{steps:,} PPO steps")
    return ", then ".join(parts) or "?"


def _strength(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "-"
    low, high = entry["score_ci"]
    return f"{entry['score']:.3f} ±{(high - low) / 2:.3f}"

