"""Play speed of a game's compiled kernel (envs/<game>/kernel.py) next to its Python rules engine.

    python bench/bench_kernel.py [--game ministeel|wyvern] [--seconds 4] [--repeats 8] [--players 4] [--batch 256]

Prints decisions per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the Python rules engine alone (legal_actions / apply, one game after another: bench/common.py's
      engine loop, as bench_ministeel.py measures it),
  (b) the kernel's batched step from Python: ``--batch`` games at once, each round trip being one
      ``legal_mask``, a uniform pick per game in numpy and one ``step_batch``; finished games are dealt
      afresh (``new_games``) in the next round trip, and their dealing is counted in the time,
  (c) the kernel's whole rollouts: ``new_games`` then ``rollout_random`` over ``--batch`` fresh games per
      call, every decision made inside compiled code,
  (d) heuristic play on the Python rules: every seat ``HeuristicBot.act_state`` (what ``mcts`` rollouts
      run), game after game,
  (e) the kernel's whole heuristic rollouts: ``new_games`` then ``rollout_heuristic``
      (agents/<game>_kernel.py) over ``--batch`` fresh games per call,
and the ratios of (b) and (c) to (a) and of (e) to (d). Every entry plays the game's default options
(``--game``: MiniSteel, ministeel_v2's, the default; Wyvern, wyvern_v1's), single-threaded; the kernel is
compiled (or loaded from numba's cache) before timing. Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import time
from types import ModuleType

import numpy as np
from common import Run, engine_loop, interleaved, machine_line, report

# --game: the games with a kernel (envs/<game>/kernel.py, agents/<game>_kernel.py), by their titles
GAMES = {"ministeel": "MiniSteel", "wyvern": "Wyvern"}


def batched_step_loop(kernel: ModuleType, config, batch_size: int) -> Run:
    """(b): one batch of games stepped together; a finished game is replaced by a fresh deal."""
    seeds = itertools.count()
    picker = np.random.default_rng(0)
    batch = kernel.new_games(config, [next(seeds) for _ in range(batch_size)])

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            over = np.flatnonzero(kernel.is_terminal(batch))
            if len(over):
                fresh = kernel.new_games(config, [next(seeds) for _ in over])
                batch.state[over], batch.chance[over] = fresh.state, fresh.chance
            masks = kernel.legal_mask(batch)
            counts = masks.sum(axis=1)
            # the k-th legal action of each game, k uniform: the first index where the running count passes k
            chosen = (picker.random(batch_size) * counts).astype(np.int64)
            actions = (masks.cumsum(axis=1) > chosen[:, None]).argmax(axis=1)
            kernel.step_batch(batch, actions)
            steps += batch_size
        return steps

    return run


def rollout_loop(kernel: ModuleType, config, batch_size: int) -> Run:
    """(c): deal ``batch_size`` games and play them all out in one call."""
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            game_seeds = [next(seeds) for _ in range(batch_size)]
            batch = kernel.new_games(config, game_seeds)
            _, taken = kernel.rollout_random(batch, game_seeds)
            steps += int(taken.sum())
        return steps

    return run


def heuristic_engine_loop(rules: ModuleType, bots_module: ModuleType, config) -> Run:
    """(d): the heuristic in every seat on the Python rules, one game after another."""
    from tavernzoo.envs.core import Chance

    bots = [bots_module.HeuristicBot(config, seat) for seat in range(config.num_players)]
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            state = rules.new_game(config, Chance(next(seeds)))
            while not rules.is_terminal(state):
                seat = rules.current_seat(state)
                rules.apply_legal(state, bots[seat].act_state(state, seat, rules.legal_actions(state)))
                steps += 1
        return steps

    return run


def heuristic_rollout_loop(kernel: ModuleType, compiled_bot: ModuleType, config, batch_size: int) -> Run:
    """(e): deal ``batch_size`` games and play them all out with the compiled heuristic in one call."""
    rollout_heuristic = compiled_bot.rollout_heuristic
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            _, taken = rollout_heuristic(kernel.new_games(config, [next(seeds) for _ in range(batch_size)]))
            steps += int(taken.sum())
        return steps

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="ministeel", help="the game (default ministeel)")
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    parser.add_argument("--batch", type=int, default=256, help="games per kernel call (default 256)")
    args = parser.parse_args()
    rules = importlib.import_module(f"tavernzoo.envs.{args.game}.rules")
    kernel = importlib.import_module(f"tavernzoo.envs.{args.game}.kernel")
    bots_module = importlib.import_module(f"tavernzoo.agents.{args.game}")
    compiled_bot = importlib.import_module(f"tavernzoo.agents.{args.game}_kernel")
    reason = kernel.unsupported()
    if reason is not None:
        parser.exit(1, f"bench_kernel: {reason}\n")
    if not rules.MIN_PLAYERS <= args.players <= rules.MAX_PLAYERS or args.batch < 1:
        parser.exit(2, f"bench_kernel: --players must be {rules.MIN_PLAYERS}-{rules.MAX_PLAYERS} and --batch "
                       "at least 1\n")
    config = rules.Config(num_players=args.players)
    kernel.compile_kernel()
    entries = {f"{args.game} rules engine": engine_loop(rules, config),
               f"kernel step_batch ({args.batch} games)": batched_step_loop(kernel, config, args.batch),
               f"kernel rollout_random ({args.batch} games)": rollout_loop(kernel, config, args.batch),
               "heuristic on the rules engine": heuristic_engine_loop(rules, bots_module, config),
               f"kernel rollout_heuristic ({args.batch} games)": heuristic_rollout_loop(kernel, compiled_bot, config,
                                                                                        args.batch)}
    rates = interleaved(entries, args.seconds, args.repeats)
    names = list(entries)
    report(f"{GAMES[args.game]} random and heuristic play at {args.players} players, decisions per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates,
           [(names[1], names[0], None), (names[2], names[0], None), (names[2], names[1], None),
            (names[4], names[3], None)])


if __name__ == "__main__":
    main()
