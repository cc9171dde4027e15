"""The cost of a search's network calls: one leaf's value for every seat in one batch, or seat by seat.

    python bench/bench_network.py [--game ministeel] [--players 4] [--calls 2000]

``mcts:value=BOT`` asks the value head for every seat's estimate at each leaf. This times, for a network
of the zoo's shape (128 x 128, tanh; random weights: the cost does not depend on them) both as an
exported ONNX bot and as a checkpoint (numpy), one call with all the seats' observations against one
call per seat, and one prior call (``action_probabilities`` of one row), in microseconds of CPU time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.export import export
from tavernzoo.agents.policy import MLPPolicy
from tavernzoo.envs import get_game


def network(game, config, hidden=(128, 128), seed=0) -> MLPPolicy:
    rng = np.random.default_rng(seed)
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))

    def layers(out):
        sizes = [size, *hidden, out]
        pairs = list(zip(sizes[:-1], sizes[1:], strict=True))
        return ([rng.standard_normal((b, a)).astype(np.float32) / np.sqrt(a) for a, b in pairs],
                [np.zeros(b, np.float32) for _, b in pairs])

    weights, biases = layers(actions)
    value_weights, value_biases = layers(1)
    meta = {"env": game.env_name, "game_config": {"num_players": game.rules.num_seats(config)}}
    return MLPPolicy(weights, biases, "tanh", meta, value_weights, value_biases)


def per_call(function, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="ministeel")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    game = get_game(args.game)
    config = game.make_config(num_players=args.players) if args.players else game.make_config()
    seats = game.rules.num_seats(config)
    with tempfile.TemporaryDirectory() as directory:
        checkpoint = Path(directory) / "checkpoint"
        network(game, config).save(checkpoint)
        onnx_path, _ = export(checkpoint, Path(directory) / "bot.onnx")
        rows = np.random.default_rng(1).random((seats, game.encoder.observation_size(config)), dtype=np.float32)
        mask = np.ones((1, len(game.action_names(config))), dtype=np.int8)
        for kind, spec in (("onnx", str(onnx_path)), ("numpy", str(checkpoint))):
            bot = load_bot(spec, game, config)
            batched = per_call(lambda bot=bot: bot.value_estimates(rows), args.calls)
            one_by_one = per_call(lambda bot=bot: [bot.value_estimates(rows[s:s + 1]) for s in range(seats)],
                                  args.calls)
            prior = per_call(lambda bot=bot: bot.action_probabilities(rows[:1], mask), args.calls)
            print(f"{args.game} {seats} seats, {kind}: values of all seats in one call {batched:.0f} us, seat by "
                  f"seat {one_by_one:.0f} us ({one_by_one / batched:.1f}x); one prior {prior:.0f} us", flush=True)


if __name__ == "__main__":
    main()
