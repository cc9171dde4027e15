"""``tavernzoo train``: self-play training (train/run.py); checkpoints become bots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape

from tavernzoo.userio import console, parse_set

from .common import print_strength_report


def add_parser(commands: Any) -> argparse.ArgumentParser:
    train = commands.add_parser(
        "train",
        help="train a policy by self-play (MaskablePPO against an opponent league)",
        description="Train a policy for GAME by self-play; checkpoints become bots (pass the run directory "
        "or a checkpoint as a bot spec). With no options: the game's default budget (about 10 minutes "
        "on 2 cores), then a report against random and the heuristic.",
    )
    train.add_argument("game", nargs="?", help="game name (default: tiny_minotaur)")
    train.add_argument("--timesteps", type=int, help="learner decisions to train for (default: per game)")
    train.add_argument("--config", metavar="FILE", help="training options from a TOML file ([train] table)")
    train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="one training option (repeatable), e.g. n_envs=8 or game_config={\"num_players\": 3}; "
                       "with --resume only PPO's update options (n_envs and n_steps among them), the league's "
                       "(latest_share, pool_bots, opponent_draw, snapshot_every, snapshot_window), checkpoint_every "
                       "and eval_games, e.g. learning_rate=1e-4 (kept from then on)")
    train.add_argument("--out", metavar="DIR", help="run directory (default: runs/GAME-seedSEED)")
    train.add_argument("--resume", metavar="DIR", help="continue the killed or finished run in DIR, with its stored "
                       "options (--timesteps: train up to this many in all)")
    train.add_argument("--seed", type=int, help="seed of the run (default 0)")
    train.add_argument("--init", metavar="BOT", help="start from this trained bot's network (a checkpoint or run, "
                       "BOT.onnx, zoo:GAME): its actor, and its critic where it has a value head; a wider net_arch "
                       "grows it without changing its play (the same as --set init=BOT)")
    train.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    train.set_defaults(run=run_train)
    return train


def run_train(args: argparse.Namespace) -> int:
    try:
        from tavernzoo.train.config import make_train_config
        from tavernzoo.train.run import Trainer
    except ImportError as error:
        raise ValueError(f"training needs the training extras ({error.name} is missing): "
                         "pip install -c constraints/cpu.txt 'tavernzoo[train]'") from None
    overrides = parse_set(args.set, lists=frozenset({"pool_bots", "net_arch"}))
    if args.resume:
        # --out naming the resumed directory itself changes nothing, however it is written ("run", "./run/",
        # its absolute path): compare where the two point, not how they are spelled.
        moved = None if args.out is None or _same_directory(args.out, args.resume) else args.out
        stored = [flag for flag, given in (("--config", args.config), ("--out", moved), ("--seed", args.seed),
                                           ("--init", args.init)) if given is not None]
        if stored:
            raise ValueError(f"--resume {args.resume} continues the run with the options it stored: "
                             f"{', '.join(stored)} cannot change there (a fresh run takes them; --resume takes "
                             "--timesteps and the --set options that --help lists)")
        trainer = Trainer(None, args.resume, resume=True, timesteps=args.timesteps, changes=overrides)
        if args.game is not None and args.game != trainer.game.name:
            raise ValueError(f"--resume {args.resume} is a {trainer.game.name} run, not {args.game}")
    else:
        config = make_train_config(args.game or "tiny_minotaur", args.config, overrides, timesteps=args.timesteps,
                                   seed=args.seed, init=args.init)
        out = args.out or f"runs/{config.game}-seed{config.seed}"
        trainer = Trainer(config, out)
    out = console()
    out.print(f"training {trainer.game.title} for {trainer.config.timesteps:,} timesteps into {trainer.out}",
                  highlight=False)
    if trainer.init_note():
        out.print(trainer.init_note(), highlight=False)
    out.print(escape(trainer.opponents_note()), highlight=False, soft_wrap=True)
    update_note = trainer.update_note()
    if update_note:
        out.print(escape(update_note), highlight=False, soft_wrap=True)
    report = trainer.run(progress=not args.no_progress and sys.stderr.isatty())
    print_strength_report(out, report, f"{trainer.game.name}: trained policy after {report['timesteps']:,} "
                          f"timesteps ({report['train_seconds']:.0f} s)")
    out.print(f"checkpoint: {report['checkpoint']}  (use it as a bot spec)", highlight=False)
    return 0


def _same_directory(first: str, second: str) -> bool:
    # resolve() makes both absolute, drops "." and "..", a trailing slash and symlinks; it needs neither to exist.
    return Path(first).resolve() == Path(second).resolve()
