"""``tavernzoo tournament``: a round-robin or gauntlet between bots (eval/tournament.py runs it).

    tavernzoo tournament GAME --bots SPEC [SPEC ...] [--games N] [--workers K]
                         [--format round-robin|gauntlet] [--seed S] [--out DIR] [--resume]
                         [--sprt ELO0 ELO1 ALPHA BETA | --sequential [--alpha A]]
                         [--variance-reduction BOT [--chance-samples K]] [--move-timeout SECONDS] [--set KEY=VALUE]
                         [--backend local|ray [--address ADDR]]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tavernzoo.eval.results import GAMES_FILE, RESULTS_FILE, print_results
from tavernzoo.eval.schedule import FORMATS, make_settings, read_settings
from tavernzoo.eval.tournament import BACKENDS, HEATMAP_FILE, run_tournament

from .common import (
    add_config_arguments,
    add_sandbox_argument,
    note_trained_against,
    parse_config,
    run_alone,
    sandboxed,
)


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``tavernzoo tournament`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "tournament",
        help="a tournament between bots: duplicate deals, every seat, ratings, forfeits, resume",
        description="Play a round-robin or gauntlet between bots. Every deal is replayed under every seat "
        "rotation; tables cover every pair of bots in every pair of seats. Prints the leaderboard and writes "
        "games.jsonl, results.json and heatmap.png into --out.",
    )
    parser.add_argument("game", help="game name (tavernzoo games lists them)")
    parser.add_argument("--bots", nargs="+", metavar="SPEC",
                        help="bot specs: random, heuristic, a checkpoint, BOT.onnx, zoo:GAME, 'cmd:PROGRAM ARGS' "
                        "(a spec given twice enters twice; on --resume: default the stored ones)")
    parser.add_argument("--games", type=int, default=None,
                        help="games to play in all, rounded up to whole deals (default 1000; with --sprt the most; "
                        "on --resume: default the stored number)")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1),
                        help="worker processes playing games in parallel (default: up to 4)")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="local: worker processes on this machine (default); ray: deals as Ray tasks "
                        "(pip install 'tavernzoo[ray]'; docs/distributed.md)")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster to join (HOST:PORT or auto; "
                        "default: start one on this machine)")
    parser.add_argument("--format", choices=FORMATS,
                        help="round-robin (every pair, the default) or gauntlet (the first bot against the rest)")
    parser.add_argument("--seed", type=int, help="seed of the schedule, deals and bots (default 0)")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: runs/tournament-GAME-seedS)")
    parser.add_argument("--resume", action="store_true", help="continue the killed or finished tournament in --out")
    parser.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                        help="stop once the first bot is shown ELO1 better (H1) or not ELO0 better (H0)")
    parser.add_argument("--variance-reduction", metavar="BOT|playouts[:N[:STANDIN]]",
                        help="measure each game's luck at every chance event with BOT's value network (a bot with a "
                        "value head: zoo:ministeel, an ONNX file, a checkpoint) or with N playouts of the seated bots "
                        "(default 32; MiniSteel, Wyvern, Tiny Minotaur; STANDIN, the heuristic by default, plays the "
                        "seats the kernel cannot, as a search's), and print each entry's "
                        "luck-corrected deal score and its interval beside the plain ones (unbiased; the ratings stay "
                        "on the plain outcomes; docs/strength.md, 'Luck taken out')")
    parser.add_argument("--chance-samples", type=int, metavar="K",
                        help="with --variance-reduction: draws of each chance event that estimate its expected value "
                        "(default 4)")
    parser.add_argument("--sequential", action="store_true",
                        help="stop at the first deal where an entry's confidence sequence excludes the fair share "
                        "(the luck-corrected one with --variance-reduction); --games is then the most")
    parser.add_argument("--alpha", type=float,
                        help="with --sequential: the chance of stopping between equal bots (default 0.05)")
    parser.add_argument("--move-timeout", type=float, default=10.0, metavar="SECONDS",
                        help="time limit of one decision of an external bot (default 10)")
    add_config_arguments(parser)
    parser.add_argument("--no-progress", action="store_true",
                        help="hide the progress bar (hidden anyway when stderr is not a terminal)")
    parser.add_argument("--no-plot", action="store_true", help="skip heatmap.png")
    parser.add_argument("--json", action="store_true",
                        help="print the results (as in results.json) as one JSON document instead of the table")
    add_sandbox_argument(parser)
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    out = Path(args.out or f"runs/tournament-{args.game}-seed{args.seed or 0}")
    config, bots, fmt, seed, sprt, games = parse_config(args), args.bots, args.format, args.seed, args.sprt, args.games
    if args.alpha is not None and not args.sequential:
        raise ValueError("--alpha needs --sequential")
    luck, samples = args.variance_reduction, args.chance_samples
    alpha = (0.05 if args.alpha is None else args.alpha) if args.sequential else None
    if args.resume:
        # What --resume is not told again comes from the stored settings.
        stored = read_settings(out)
        bots, config = bots or stored["bots"], config or stored["config"]
        fmt = fmt or stored["format"]
        seed = stored["seed"] if seed is None else seed
        sprt = sprt or stored["sprt"]
        luck = luck or stored.get("luck")
        samples = stored.get("chance_samples") if samples is None else samples
        alpha = stored.get("sequential") if alpha is None else alpha
        games = stored["games"] if games is None else games  # a resumed run plays on to its own end
    if not bots:
        raise ValueError("--bots is required: one spec per entry, e.g. --bots heuristic random")
    bots = sandboxed(bots, args.sandbox)
    note_trained_against(args.game, bots)
    games = 1000 if games is None else games
    settings = make_settings(args.game, bots, games, config=config, fmt=fmt or "round-robin", seed=seed or 0,
                             move_timeout=args.move_timeout, sprt=sprt, luck=luck, chance_samples=samples,
                             sequential=alpha)
    if args.address and args.backend != "ray":
        raise ValueError("--address names a Ray cluster: it needs --backend ray")
    results = run_tournament(settings, out, workers=args.workers, resume=args.resume, progress=not args.no_progress,
                             backend=args.backend, address=args.address)
    if not args.json:
        print_results(results)
    plotted = False
    if not args.no_plot and results["games"]:
        from tavernzoo.eval.plots import pairwise_heatmap

        try:
            pairwise_heatmap(results, out / HEATMAP_FILE)
            plotted = True
        except ImportError as error:
            print(f"no heatmap: {error}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"games: {out / GAMES_FILE}  results: {out / RESULTS_FILE}"
          + (f"  heatmap: {out / HEATMAP_FILE}" if plotted else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.commands.tournament ...``: the same as ``tavernzoo tournament ...``."""
    return run_alone("tournament", add_parser, argv)



if __name__ == "__main__":
    sys.exit(main())
