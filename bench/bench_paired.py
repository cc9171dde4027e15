"""Paired rollouts at the root (``mcts:root=paired``): rollouts per CPU second with a network rollout policy,
batched (the search as it runs: every rollout of a round stepped together, one network call per step for
all of them) against the same search with its rollouts played one by one (one call per decision).

    python bench/bench_paired.py [--positions 4] [--repeats 3] [--sims 240] [--game ministeel]

The two are timed alternately on the same positions (random play to a random depth, 4 players), in
process time, and repeated; the ratio is per repeat. The spec is ``mcts:SIMS,root=paired,prior=zoo:GAME,
rollout=zoo:GAME,depth=0``, the setting that improves on the zoo bot at a table of zoo bots (docs/search.md).
"""

from __future__ import annotations

import argparse
import random
import time

from tavernzoo.agents import load_bot
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance


def positions(game, config, count: int, rng: random.Random) -> list:
    rules, found = game.rules, []
    while len(found) < count:
        state = rules.new_game(config, Chance(rng.randrange(2**31)))
        for _ in range(rng.randrange(0, 40)):
            if rules.is_terminal(state):
                break
            rules.apply(state, rng.choice(rules.legal_actions(state)))
        if not rules.is_terminal(state) and len(rules.legal_actions(state)) > 1:
            found.append(state)
    return found


def rollouts_per_second(bot, game, states, batched: bool) -> float:
    rules = game.rules
    if not batched:  # the same search, each rollout on its own (one network call per decision)
        bot._rollouts = lambda states: [bot._rollout(state) for state in states]
    else:
        bot.__dict__.pop("_rollouts", None)
    done, seconds = 0, 0.0
    for state in states:
        seat = rules.current_seat(state)
        info = rules.information_state(state, seat)
        start = time.process_time()
        bot.search(info, seat)
        seconds += time.process_time() - start
        done += bot.last_search["simulations"]
    return done / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sims", type=int, default=240)
    parser.add_argument("--game", action="append", help="ministeel or wyvern (repeatable; default both)")
    args = parser.parse_args()
    print(f"{'game':<11}{'repeat':>7}{'batched':>10}{'one by one':>12}{'ratio':>7}   rollouts per CPU second")
    for name in args.game or ["ministeel", "wyvern"]:
        game = get_game(name)
        config = game.make_config({"num_players": 4})
        states = positions(game, config, args.positions, random.Random(0))
        spec = f"mcts:{args.sims},root=paired,prior=zoo:{name},rollout=zoo:{name},depth=0"
        for repeat in range(args.repeats):
            figures = {}
            for batched in ((True, False) if repeat % 2 == 0 else (False, True)):  # interleaved, order alternating
                bot = load_bot(spec, game, config, seed=repeat)
                figures[batched] = rollouts_per_second(bot, game, states, batched)
            print(f"{name:<11}{repeat + 1:>7}{figures[True]:>10.0f}{figures[False]:>12.0f}"
                  f"{figures[True] / figures[False]:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
