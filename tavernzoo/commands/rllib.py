"""``tavernzoo rllib GAME``: the RLlib recipe, multi-agent PPO with action masks (train/rllib_recipe.py)."""

from __future__ import annotations

import argparse
import json
import sys

from tavernzoo.userio import console

from .common import add_config_arguments, parse_config, print_strength_report, run_alone


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``tavernzoo rllib`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "rllib", help="train a game with RLlib's PPO and action masks (a recipe for RLlib users; needs Ray)",
        description="Train GAME multi-agent with RLlib PPO (one shared policy, illegal actions masked), printing "
        "one JSON summary per iteration, saving checkpoints into --out (resume with --resume) and ending with the "
        "report tavernzoo train gives (against random and the heuristic). The run directory is a bot spec and "
        "tavernzoo export RUN makes an ONNX bot of it. A starting point for RLlib users; tavernzoo train is the "
        "supported trainer. Needs pip install 'tavernzoo[ray]'.")
    parser.add_argument("game", nargs="?", help="game name (tavernzoo games lists them); not with --resume")
    parser.add_argument("--iterations", type=int, help="training iterations in all (default 10; with --resume: "
                        "the stored number, or train the run up to this many)")
    parser.add_argument("--batch", type=int, metavar="STEPS", help="env steps per training iteration (default 2000)")
    parser.add_argument("--seed", type=int, help="RLlib's seed (default 0)")
    parser.add_argument("--checkpoint-every", type=int, metavar="N",
                        help="iterations between checkpoints (default 5; the last one is always saved)")
    parser.add_argument("--eval-games", type=int, metavar="GAMES",
                        help="games of the final report against each reference bot (default 1000; 0: no report)")
    parser.add_argument("--out", metavar="DIR", help="run directory (default: runs/rllib-GAME-seedSEED)")
    parser.add_argument("--resume", metavar="DIR", help="continue the killed or finished rllib run in DIR")
    parser.add_argument("--address", help="the Ray cluster to join (HOST:PORT or auto; default: start one here)")
    parser.add_argument("--no-progress", action="store_true", help="hide the report's progress bar")
    add_config_arguments(parser)
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    from tavernzoo.eval.backends import connect
    from tavernzoo.train.rllib_recipe import RLlibOptions, RLlibRun

    if args.resume:
        given = [flag for flag, value in (("GAME", args.game), ("--out", args.out), ("--batch", args.batch),
                                          ("--seed", args.seed), ("--checkpoint-every", args.checkpoint_every),
                                          ("--set", args.set or None), ("--config", args.config))
                 if value is not None]
        if given:
            raise ValueError(f"--resume takes the run's stored options; {', '.join(given)} cannot change them "
                             "(valid with --resume: --iterations, --eval-games, --address)")
        run = RLlibRun(None, args.resume, resume=True, iterations=args.iterations, eval_games=args.eval_games)
    else:
        if args.game is None:
            raise ValueError("name the GAME to train (tavernzoo games lists them), or --resume DIR")
        chosen = {key: value for key, value in (("iterations", args.iterations), ("batch", args.batch),
                                                ("seed", args.seed), ("checkpoint_every", args.checkpoint_every),
                                                ("eval_games", args.eval_games)) if value is not None}
        options = RLlibOptions(args.game, parse_config(args), **chosen).validate()
        run = RLlibRun(options, args.out or f"runs/rllib-{options.game}-seed{options.seed}")
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        raise ValueError('the RLlib recipe needs RLlib: pip install -c constraints/cpu.txt "tavernzoo[ray]"') from None
    connect(args.address)
    out = console(stderr=True)
    out.print(f"training {run.game.title} with RLlib PPO up to iteration {run.options.iterations} into {run.out}",
              highlight=False)
    report = run.run(on_iteration=lambda summary: print(json.dumps(summary), flush=True),
                     progress=not args.no_progress and sys.stderr.isatty())
    if "against" in report:
        print_strength_report(out, report, f"{run.game.name}: RLlib policy after {report['iterations']} iterations, "
                              f"{report['timesteps']:,} env steps ({report['train_seconds']:.0f} s)")
    out.print(f"checkpoint: {report['checkpoint']}  (a bot spec; tavernzoo export {run.out} --out BOT.onnx)",
              highlight=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.commands.rllib ...``: the same as ``tavernzoo rllib ...``."""
    return run_alone("rllib", add_parser, argv)


if __name__ == "__main__":
    raise SystemExit(main())
