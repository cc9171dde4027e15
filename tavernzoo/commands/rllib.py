"""``tavernzoo rllib GAME``: the RLlib recipe, multi-agent PPO with action masks (train/rllib_recipe.py)."""

from __future__ import annotations

import argparse
import json

from .common import add_config_arguments, parse_config, run_alone


def add_parser(commands) -> argparse.ArgumentParser:
    """Register ``tavernzoo rllib`` on the CLI's subparsers."""
    parser = commands.add_parser(
        "rllib", help="train a game with RLlib's PPO and action masks (a recipe for RLlib users; needs Ray)",
        description="Train GAME multi-agent with RLlib PPO (one shared policy, illegal actions masked), printing "
        "one JSON summary per iteration. A starting point for RLlib users; tavernzoo train is the supported "
        "trainer. Needs pip install 'tavernzoo[ray]'.")
    parser.add_argument("game", help="game name (tavernzoo games lists them)")
    parser.add_argument("--iterations", type=int, default=10, help="training iterations (default 10)")
    parser.add_argument("--batch", type=int, default=2000, metavar="STEPS",
                        help="env steps per training iteration (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="RLlib's seed (default 0)")
    parser.add_argument("--address", help="the Ray cluster to join (HOST:PORT or auto; default: start one here)")
    add_config_arguments(parser)
    parser.set_defaults(run=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    from tavernzoo.envs import get_game
    from tavernzoo.eval.backends import connect
    from tavernzoo.train.rllib_recipe import train

    if args.iterations < 1:
        raise ValueError(f"--iterations {args.iterations} must be at least 1")
    if args.batch < 2:
        raise ValueError(f"--batch {args.batch} must be at least 2 env steps")
    game = get_game(args.game)
    options = parse_config(args)
    game.make_config(options)  # a bad option fails here, before Ray starts
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        raise ValueError('the RLlib recipe needs RLlib: pip install -c constraints/cpu.txt "tavernzoo[ray]"') from None
    connect(args.address)
    for summary in train(game.name, args.iterations, options, seed=args.seed, train_batch_size=args.batch,
                         minibatch_size=min(256, args.batch)):
        print(json.dumps(summary), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m tavernzoo.commands.rllib ...``: the same as ``tavernzoo rllib ...``."""
    return run_alone("rllib", add_parser, argv)



if __name__ == "__main__":
    raise SystemExit(main())
