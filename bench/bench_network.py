"""The cost of a search's network calls: one leaf's value for every seat in one batch, or seat by seat.

    python bench/bench_network.py [--game ministeel] [--players 4] [--calls 2000]
    python bench/bench_network.py --heads [--bot zoo:ministeel] [--repeats 5]

``mcts:value=BOT`` asks the value head for every seat's estimate at each leaf. This times, for a network
of the zoo's shape (128 x 128, tanh; random weights: the cost does not depend on them) both as an
exported ONNX bot and as a checkpoint (numpy), one call with all the seats' observations against one
call per seat, and one prior call (``action_probabilities`` of one row), in microseconds of CPU time.

``--heads``: an exported bot's moves (``run``) and values (``value_estimates``) from its whole graph against the
graphs a search cuts to each head (``OnnxBot.cut_heads``), in microseconds of CPU time a row at 1, 16, 64 and
256 rows a call; the two forms interleaved, ``--repeats`` rounds, the median and the ratio whole/cut (above 1:
the cut is faster) with its range over the rounds.
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


def heads(spec: str, repeats: int, rows_per_call: tuple[int, ...] = (1, 16, 64, 256)) -> None:
    """``--heads``: the whole graph against the graphs cut to a head (see the module docstring)."""
    game_name = spec.split(":", 1)[1] if spec.startswith("zoo:") else "ministeel"
    game = get_game(game_name.partition("@")[0])
    whole = load_bot(spec, game, seed=0)
    cut = load_bot(spec, game, seed=0)
    cut.cut_heads()
    size, actions = whole.manifest["observation"]["size"], len(whole.manifest["actions"])
    rng = np.random.default_rng(0)
    print(f"{spec}: CPU us a row, whole graph / cut to the head, median of {repeats} interleaved rounds")
    for rows in rows_per_call:
        observations = rng.random((rows, size), dtype=np.float32)
        masks = np.ones((rows, actions), dtype=np.int8)
        calls = max(20, 20000 // rows)
        for what in ("moves", "values") if whole.has_value else ("moves",):
            times: dict[str, list[float]] = {"whole": [], "cut": []}
            for _ in range(repeats):
                for name, bot in (("whole", whole), ("cut", cut)):
                    call = ((lambda bot=bot, o=observations, m=masks: bot.run(o, m)) if what == "moves"
                            else (lambda bot=bot, o=observations: bot.value_estimates(o)))
                    times[name].append(per_call(call, calls) / rows)
            ratios = sorted(w / c for w, c in zip(times["whole"], times["cut"], strict=True))
            print(f"  {rows:>3} rows, {what:<6}: whole {np.median(times['whole']):6.2f}, cut "
                  f"{np.median(times['cut']):6.2f}, ratio {np.median(ratios):.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f})",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="ministeel")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--heads", action="store_true", help="an exported bot's whole graph against its cut heads")
    parser.add_argument("--bot", default="zoo:ministeel", help="with --heads: the exported bot")
    parser.add_argument("--repeats", type=int, default=5, help="with --heads: interleaved rounds")
    args = parser.parse_args()
    if args.heads:
        heads(args.bot, args.repeats)
        return
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
