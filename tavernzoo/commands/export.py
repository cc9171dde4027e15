"""``tavernzoo export CHECKPOINT --out BOT.onnx``: a trained policy as an ONNX bot (agents/export.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tavernzoo.eval.deals import DEFAULT_SEEDING, SEEDING_HELP, SEEDINGS

from .common import add_backend_arguments, backend_options


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """``tavernzoo export CHECKPOINT --out BOT.onnx``."""
    parser = commands.add_parser(
        "export",
        help="export a trained checkpoint as an ONNX bot with a JSON manifest",
        description="Write the policy of CHECKPOINT (a checkpoint directory, or a training run: its latest "
        "checkpoint) as BOT.onnx, the action mask applied inside the graph, and its manifest BOT.json (game, "
        "env version, observation layout, action names, mask rule, provenance). The bot then loads with "
        "numpy and onnxruntime alone: use BOT.onnx as a bot spec.",
    )
    parser.add_argument("checkpoint", help="checkpoint directory (policy.json + policy.npz) or training run")
    parser.add_argument("--out", required=True, metavar="BOT.onnx", help="the ONNX file to write")
    parser.add_argument("--measure", type=int, default=0, metavar="GAMES",
                        help="then play GAMES games against random and against the heuristic (in every other seat) "
                        "and record the bot's score with its 95%% interval in the manifest (default: 0, skip)")
    parser.add_argument("--summary", metavar="TEXT",
                        help="a line on how the bot was made, for the manifest's provenance (tavernzoo zoo shows "
                        "it in place of the PPO step count); e.g. 'zoo:ministeel, then 1,000,000 PPO steps'")
    parser.add_argument("--lineage", action="append", default=[], metavar="STAGE",
                        help="one stage of how the bot was made (the run and the command that made it), oldest "
                        "first; repeat for each stage. Stored as the manifest's provenance.lineage")
    parser.add_argument("--seed", type=int, default=0, help="seed of the measuring games (default 0)")
    parser.add_argument("--seeding", choices=SEEDINGS, default=DEFAULT_SEEDING,
                        help=f"with --measure, {SEEDING_HELP}")
    add_backend_arguments(parser, "the measuring games")
    parser.add_argument("--no-progress", action="store_true", help="hide the measuring games' progress bar "
                        "(hidden anyway when stderr is not a terminal)")
    parser.set_defaults(run=run_export)
    return parser


def run_export(args: argparse.Namespace) -> int:
    try:
        import onnx  # noqa: F401
    except ImportError:
        raise ValueError("exporting needs the onnx package (in the training extras): "
                         "pip install -c constraints/cpu.txt 'tavernzoo[train]'") from None
    where = backend_options(args)  # a bad combination fails before the export
    if args.seeding != DEFAULT_SEEDING and not args.measure:
        raise ValueError(f"--seeding {args.seeding} seeds the measuring games: it needs --measure GAMES")
    from tavernzoo.agents.export import export
    from tavernzoo.eval.match import measure

    onnx_path, manifest = export(args.checkpoint, args.out, summary=args.summary, lineage=args.lineage)
    info = json.loads(manifest.read_text())
    print(f"wrote {onnx_path} ({onnx_path.stat().st_size:,} bytes) and {manifest} for {info['env']}: "
          f"{info['observation']['size']} observations -> {len(info['actions'])} actions")
    if args.measure:
        strength = measure(onnx_path, args.measure, args.seed, progress=not args.no_progress, seeding=args.seeding,
                           **where)
        for reference in ("random", "heuristic"):
            row = strength[reference]
            print(f"vs {reference} x{strength['seats'] - 1}: score {row['score']:.3f} "
                  f"({row['score_ci'][0]:.3f}-{row['score_ci'][1]:.3f}) over {row['games']} games; "
                  f"an equal bot scores {row['fair_share']:.3f}")
    return 0

