"""Where a compiled search's move goes: the information state's row, the simulations call, the rest.

    python bench/bench_search_move.py [--game wyvern] [--rounds 20] [--cold]

``mcts:kernel=on`` (the defaults) searches the 12 positions of ``bench_search.py --positions 12 --game GAME``
round after round; the game's ``information_row`` and ``simulations`` are wrapped to add up their CPU time
(process time), and the rest of ``MCTSBot.search`` (the bot's generator, the dealer, the tree, the loop
around the calls, the root's visits) is the move's time less those two. Prints the medians over rounds, in
µs a move. ``--cold`` runs the Python search (``kernel=off``) of the same position before each, as
``bench_search.py`` interleaves the two: the caches are then cold, as in that bench. Run it on two
checkouts, alternately, to see what a change to the move's fixed cost bought (docs/search.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time

from bench_search import positions

from tavernzoo.agents import load_bot
from tavernzoo.envs import get_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="wyvern", choices=["ministeel", "wyvern"])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cold", action="store_true", help="a Python search of the position before each move")
    args = parser.parse_args()
    game = get_game(args.game)
    config = game.make_config({"num_players": 4})
    found = []
    for state in positions(game, config, 12, random.Random(0)):  # bench_search.py's positions for one game
        seat = game.rules.current_seat(state)
        found.append((game.rules.information_state(state, seat), seat))
    bot = load_bot("mcts:kernel=on", game, config, seed=1)
    python = load_bot("mcts:kernel=off", game, config, seed=1)
    spent = {"row": 0.0, "simulations": 0.0}

    def timed(piece, function):
        def call(*arguments):
            start = time.process_time()
            result = function(*arguments)
            spent[piece] += time.process_time() - start
            return result
        return call

    kernel = bot._compiled.kernel
    bot._compiled.kernel = dataclasses.replace(kernel, information_row=timed("row", kernel.information_row),
                                               simulations=timed("simulations", kernel.simulations))
    medians: dict[str, list[float]] = {"move": [], "row": [], "simulations": [], "rest": []}
    for _ in range(args.rounds):
        total = spent["row"] = spent["simulations"] = 0.0
        for info, seat in found:
            if args.cold:
                python.reset()
                python.search(info, seat)
            bot.reset()
            start = time.process_time()
            bot.search(info, seat)
            total += time.process_time() - start
        for piece, seconds in (("move", total), ("row", spent["row"]), ("simulations", spent["simulations"]),
                               ("rest", total - spent["row"] - spent["simulations"])):
            medians[piece].append(seconds / len(found) * 1e6)
    print(f"{args.game} 4 players, {'cold' if args.cold else 'warm'} caches, µs a move (CPU time, medians of "
          f"{args.rounds} rounds): " + ", ".join(f"{piece} {statistics.median(values):.1f}"
                                                 for piece, values in medians.items()))


if __name__ == "__main__":
    main()
