"""Play speed of the compiled kernels (envs/<game>/kernel.py) next to the Python rules engines.

    python bench/bench_kernel.py [--game ministeel] [--seconds 4] [--repeats 8] [--players N] [--batch 256]

``--game`` is ministeel (the default), wyvern, tiny_minotaur or minefield. Prints decisions per CPU-second
(agent-steps for Minefield: one seat's target in one round), medians over rounds taken in turns (see
bench/common.py), for
  (a) the Python rules engine alone (legal_actions / apply, one game after another: bench/common.py's
      engine loop, as bench_ministeel.py measures it; Minefield: every living seat's legal targets, a pick
      each, ``apply_joint``),
  (b) the kernel's batched step from Python: ``--batch`` games at once, each round trip being one
      ``legal_mask``, a uniform pick per game (per seat in Minefield) in numpy and one ``step_batch``;
      finished games are dealt afresh (``new_games``) in the next round trip, and their dealing is counted
      in the time,
  (c) the kernel's whole rollouts: ``new_games`` then ``rollout_random`` over ``--batch`` fresh games per
      call, every decision made inside compiled code (Tiny Minotaur and Minefield also without the dealing:
      ``rollout_random`` over games dealt before timing, as a search rolls out from a position),
  (d) heuristic play on the Python rules (MiniSteel and Wyvern: every seat ``HeuristicBot.act_state``, what
      ``mcts`` rollouts run; Tiny Minotaur and Minefield: every seat ``HeuristicBot.act`` on the encoded
      observation), game after game,
  (e) the kernel's whole heuristic rollouts: ``new_games`` then ``rollout_heuristic``
      (agents/<game>_kernel.py) over ``--batch`` fresh games per call,
and the ratios of (b) and (c) to (a) and of (e) to (d). Every entry plays the game's default options at
``--players`` (MiniSteel and Wyvern 4, Minefield 8 by default), single-threaded; the kernel is compiled (or
loaded from numba's cache) before timing. Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import random
import time
from typing import Any

import numpy as np
from common import Run, engine_loop, interleaved, machine_line, report

from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import kernel

GAMES = ("ministeel", "wyvern", "tiny_minotaur", "minefield")
TITLES = {"ministeel": "MiniSteel", "wyvern": "Wyvern", "tiny_minotaur": "Tiny Minotaur", "minefield": "Minefield"}


def batched_step_loop(config: Any, batch_size: int, kernel: Any = kernel) -> Run:
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


def rollout_loop(config: Any, batch_size: int, kernel: Any = kernel) -> Run:
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


def heuristic_engine_loop(config: Any, game: str = "ministeel") -> Run:
    """(d): the heuristic in every seat on the Python rules (its ``act_state``), one game after another."""
    rules = importlib.import_module(f"tavernzoo.envs.{game}.rules")
    bots_module = importlib.import_module(f"tavernzoo.agents.{game}")
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


def heuristic_rollout_loop(config: Any, batch_size: int, kernel: Any = kernel, game: str = "ministeel") -> Run:
    """(e): deal ``batch_size`` games and play them all out with the compiled heuristic in one call."""
    rollout_heuristic = importlib.import_module(f"tavernzoo.agents.{game}_kernel").rollout_heuristic

    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            _, taken = rollout_heuristic(kernel.new_games(config, [next(seeds) for _ in range(batch_size)]))
            steps += int(taken.sum())
        return steps

    return run


def dealt_rollout_loop(config: Any, batch_size: int, kernel: Any) -> Run:
    """(c'): ``rollout_random`` over the same ``batch_size`` games dealt once before timing (a rollout leaves
    its batch as it was): the rollouts alone, as a search runs them from a position, without the dealing."""
    batch = kernel.new_games(config, range(batch_size))
    rng_seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            _, taken = kernel.rollout_random(batch, [next(rng_seeds) for _ in range(batch_size)])
            steps += int(taken.sum())
        return steps

    return run


def simultaneous_engine_loop(rules: Any, config: Any) -> Run:
    """(a) for a simultaneous-move game: every acting seat picks uniformly among its legal targets, then
    ``apply_joint``, one game after another; counts agent-steps."""
    picker = random.Random(0)
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            state = rules.new_game(config, Chance(next(seeds)))
            while not rules.is_terminal(state):
                joint = {}
                for seat in rules.acting_seats(state):
                    legal = rules.legal_actions(state, seat)
                    joint[seat] = legal[int(picker.random() * len(legal))]
                rules.apply_joint(state, joint)
                steps += len(joint)
        return steps

    return run


def batched_joint_loop(config: Any, batch_size: int, kernel: Any) -> Run:
    """(b) for a simultaneous-move game: one batch stepped a round at a time, every acting seat of every game
    picking in numpy from its row of ``legal_mask``; a finished game is replaced by a fresh deal."""
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
            masks = kernel.legal_mask(batch)  # (G, W, W)
            counts = masks.sum(axis=2)
            chosen = (picker.random(counts.shape) * counts).astype(np.int64)
            actions = (masks.cumsum(axis=2) > chosen[:, :, None]).argmax(axis=2)
            actions[counts == 0] = -1
            kernel.step_batch(batch, actions)
            steps += int((counts > 0).sum())
        return steps

    return run


def tiny_minotaur_heuristic_loop(config: Any) -> Run:
    """(d) for Tiny Minotaur: the heuristic in both seats on the Python rules, reading the encoded observation
    as it does in a match."""
    from tavernzoo.agents.tiny_minotaur import HeuristicBot
    from tavernzoo.envs.tiny_minotaur import encode
    from tavernzoo.envs.tiny_minotaur import rules as tm_rules

    bots = [HeuristicBot(config, seat) for seat in range(2)]
    observation = np.zeros(encode.observation_size(config), dtype=np.float32)
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            state = tm_rules.new_game(config, Chance(next(seeds)))
            while not tm_rules.is_terminal(state):
                seat = state.to_act
                legal = tm_rules.legal_actions(state)
                encode.encode(state, seat, observation)
                mask = np.zeros(tm_rules.NUM_ACTIONS, dtype=np.int8)
                mask[legal] = 1
                tm_rules.apply(state, bots[seat].act({"observation": observation, "action_mask": mask}))
                steps += 1
        return steps

    return run


def minefield_heuristic_loop(config: Any) -> Run:
    """(d) for Minefield: the heuristic in every seat on the Python rules, each reading its observation (one
    Observer for the table, as the Parallel env encodes), fresh bots every game."""
    from tavernzoo.agents.minefield import HeuristicBot
    from tavernzoo.envs.minefield import encode
    from tavernzoo.envs.minefield import rules as mf_rules

    observation = np.zeros(encode.observation_size(config), dtype=np.float32)
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            seed = next(seeds)
            state = mf_rules.new_game(config, Chance(seed))
            bots = [HeuristicBot(config, seed * 100 + seat) for seat in range(config.num_players)]
            observer = encode.Observer()
            while not mf_rules.is_terminal(state):
                joint = {}
                for seat in mf_rules.acting_seats(state):
                    observer.encode(state, seat, observation)
                    mask = np.zeros(config.num_players, dtype=np.int8)
                    mask[mf_rules.legal_actions(state, seat)] = 1
                    joint[seat] = bots[seat].act({"observation": observation, "action_mask": mask})
                mf_rules.apply_joint(state, joint)
                steps += len(joint)
        return steps

    return run


def minefield_kernel_heuristic_loop(config: Any, batch_size: int, game_kernel: Any) -> Run:
    """(e) for Minefield: deal ``batch_size`` games and play them all out with the compiled heuristic (fresh
    bots, seeded per seat) in one call."""
    from tavernzoo.agents.minefield_kernel import rollout_heuristic

    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            game_seeds = [next(seeds) for _ in range(batch_size)]
            bot_seeds = [[seed * 100 + seat for seat in range(config.num_players)] for seed in game_seeds]
            _, taken = rollout_heuristic(game_kernel.new_games(config, game_seeds), bot_seeds)
            steps += int(taken.sum())
        return steps

    return run


def kernel_heuristic_rollout_loop(config: Any, batch_size: int, game_kernel: Any, rollout_heuristic: Any) -> Run:
    """(e): deal ``batch_size`` games and play them all out with a compiled heuristic in one call."""
    seeds = itertools.count()

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            _, taken = rollout_heuristic(game_kernel.new_games(config, [next(seeds) for _ in range(batch_size)]))
            steps += int(taken.sum())
        return steps

    return run


def entries_for(game: str, players: int | None, batch: int) -> tuple[dict[str, Run], list[tuple[str, str, None]], str]:
    """The entries of ``game``, the ratios to print and the title's table size."""
    game_rules = importlib.import_module(f"tavernzoo.envs.{game}.rules")
    game_kernel = importlib.import_module(f"tavernzoo.envs.{game}.kernel")
    game_kernel.compile_kernel()
    if game in ("ministeel", "wyvern"):
        config = game_rules.Config(num_players=players or 4)
        entries = {f"{game} rules engine": engine_loop(game_rules, config),
                   f"kernel step_batch ({batch} games)": batched_step_loop(config, batch, game_kernel),
                   f"kernel rollout_random ({batch} games)": rollout_loop(config, batch, game_kernel),
                   "heuristic on the rules engine": heuristic_engine_loop(config, game),
                   f"kernel rollout_heuristic ({batch} games)": heuristic_rollout_loop(config, batch, game_kernel,
                                                                                      game)}
    elif game == "tiny_minotaur":
        from tavernzoo.agents.tiny_minotaur_kernel import rollout_heuristic

        config = game_rules.Config()
        entries = {"tiny_minotaur rules engine": engine_loop(game_rules, config),
                   f"kernel step_batch ({batch} games)": batched_step_loop(config, batch, game_kernel),
                   f"kernel rollout_random ({batch} games)": rollout_loop(config, batch, game_kernel),
                   "heuristic on the rules engine": tiny_minotaur_heuristic_loop(config),
                   f"kernel rollout_heuristic ({batch} games)": kernel_heuristic_rollout_loop(
                       config, batch, game_kernel, rollout_heuristic)}
    else:
        config = game_rules.Config(num_players=players or 8)
        entries = {"minefield rules engine (apply_joint)": simultaneous_engine_loop(game_rules, config),
                   f"kernel step_batch ({batch} games)": batched_joint_loop(config, batch, game_kernel),
                   f"kernel rollout_random ({batch} games)": rollout_loop(config, batch, game_kernel),
                   "heuristic on the rules engine": minefield_heuristic_loop(config),
                   f"kernel rollout_heuristic ({batch} games)": minefield_kernel_heuristic_loop(
                       config, batch, game_kernel)}
    names = list(entries)
    ratios = [(names[1], names[0], None), (names[2], names[0], None), (names[2], names[1], None)]
    if len(names) > 3:
        ratios.append((names[4], names[3], None))
    if game not in ("ministeel", "wyvern"):
        dealt = f"kernel rollout_random, dealt before timing ({batch} games)"
        entries[dealt] = dealt_rollout_loop(config, batch, game_kernel)
        ratios.append((dealt, names[0], None))
    return entries, ratios, f"{config.num_players} players"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="ministeel", help=f"which kernel: {', '.join(GAMES)} (default ministeel)")
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=None,
                        help="players at the table (default: MiniSteel and Wyvern 4, Minefield 8; Tiny Minotaur: "
                             "a duel)")
    parser.add_argument("--batch", type=int, default=256, help="games per kernel call (default 256)")
    args = parser.parse_args()
    if args.game not in GAMES:
        parser.exit(2, f"bench_kernel: --game {args.game!r} has no kernel; valid: {', '.join(GAMES)}\n")
    game_rules = importlib.import_module(f"tavernzoo.envs.{args.game}.rules")
    reason = importlib.import_module(f"tavernzoo.envs.{args.game}.kernel").unsupported()
    if reason is not None:
        parser.exit(1, f"bench_kernel: {reason}\n")
    players_ok = args.players is None or game_rules.MIN_PLAYERS <= args.players <= game_rules.MAX_PLAYERS
    if not players_ok or args.batch < 1:
        parser.exit(2, f"bench_kernel: --players must be {game_rules.MIN_PLAYERS}-{game_rules.MAX_PLAYERS} for "
                       f"{args.game} and --batch at least 1\n")
    entries, ratios, table = entries_for(args.game, args.players, args.batch)
    rates = interleaved(entries, args.seconds, args.repeats)
    unit = "agent-steps" if args.game == "minefield" else "decisions"
    play = "random and heuristic play" if any("heuristic" in name for name in entries) else "random play"
    report(f"{TITLES[args.game]} {play} at {table}, {unit} per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates, ratios)


if __name__ == "__main__":
    main()
