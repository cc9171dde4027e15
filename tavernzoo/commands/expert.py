"""``tavernzoo expert GAME --teacher SPEC``: a policy trained on a teacher's moves (train/expert.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tavernzoo.train.config import make_train_config
from tavernzoo.train.expert import ExpertConfig, run_expert
from tavernzoo.userio import parse_set


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "expert", help="expert iteration: train the network on a teacher's moves (mcts visits, the oracle)",
        description="Play seeded games in which a teacher bot (mcts: its visit counts; the Tiny Minotaur oracle: "
        "its optimal moves; any bot: its moves) labels every decision, train the training network on those "
        "targets, and repeat with the student playing part of the moves (DAgger). The result is an ordinary "
        "training run: export it, use it as a bot, or fine-tune it with `tavernzoo train --resume DIR`.")
    parser.add_argument("game", help="game name")
    parser.add_argument("--teacher", default="mcts", metavar="SPEC", help="the teacher bot spec (default mcts)")
    parser.add_argument("--opponents", metavar="SPEC", help="a bot spec for the unlabelled seats (default: the "
                        "teacher plays every seat); with it, one seat a game, rotating, is the teacher's")
    parser.add_argument("--rounds", type=int, default=1, help="collect/train rounds (default 1)")
    parser.add_argument("--games", type=int, default=100, help="games per round (default 100)")
    parser.add_argument("--epochs", type=int, default=10, help="passes over all samples per round (default 10)")
    parser.add_argument("--dagger", type=float, default=0.5,
                        help="from round 2 (round 1 with --init), the share of labelled moves the student "
                        "plays (default 0.5)")
    parser.add_argument("--prior-student", action="store_true",
                        help="an mcts teacher searches with the latest student as its prior")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (default 1e-3)")
    parser.add_argument("--init", metavar="BOT", help="start the student from this policy's weights: a checkpoint "
                        "or run, BOT.onnx or zoo:GAME (its hidden sizes must match net_arch)")
    parser.add_argument("--samples", metavar="RUN", help="start from the labelled positions of an earlier expert "
                        "run (RUN or RUN/expert/samples.npz; same game and table); with --games 0, only retrain")
    parser.add_argument("--workers", type=int, default=2, help="processes playing games (default 2)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a training option of the student (repeatable), as for `tavernzoo train`")
    parser.add_argument("--seed", type=int, help="seed (default 0)")
    parser.add_argument("--out", metavar="DIR", help="run directory (default: runs/GAME-expert-seedSEED)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    overrides = parse_set(args.set, lists=frozenset({"pool_bots", "net_arch"}))
    train_config = make_train_config(args.game, None, overrides, seed=args.seed)
    expert = ExpertConfig(teacher=args.teacher, opponents=args.opponents, rounds=args.rounds, games=args.games,
                          epochs=args.epochs, dagger=args.dagger, prior_student=args.prior_student,
                          learning_rate=args.lr, workers=args.workers, init=args.init,
                          samples=args.samples)
    out = args.out or f"runs/{train_config.game}-expert-seed{train_config.seed}"
    report = run_expert(train_config, expert, out, progress=not args.no_progress and sys.stderr.isatty())
    print(f"checkpoint: {report['checkpoint']}  (a bot spec; export it, or fine-tune with "
          f"`tavernzoo train --resume {out}`)")
    print(json.dumps(report["rounds"][-1], indent=1))
    return 0

