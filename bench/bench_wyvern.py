"""Random-play speed of Wyvern TCG next to PettingZoo's texas_holdem_v4 at the same table size, one run.

    python bench/bench_wyvern.py [--seconds 6] [--repeats 6] [--players 4]
    python bench/bench_wyvern.py --encoder [MODULE ...] [--players 6] [--repeats 11]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the Wyvern rules engine alone (legal_actions / apply),
  (b) the Wyvern AEC env, wrapped (env()) and raw (raw_env()), through agent_iter / last() / step(),
      in both loops: reset() without a seed when a game ends (plain) and reset(seed=k) every game (seeded),
  (c) PettingZoo's texas_holdem_v4 with the same num_players through the same loops (pip install '.[bench]'),
and the ratios the targets are stated in: env() / texas_holdem_v4 >= 2.5 at 4 players in both loops,
env() / raw_env() >= 0.91 (also on the same seeded games, played by both in turns: the steadier
measure of a ratio near 1), and env() / engine >= 0.3 at 6 players (the encoder's share; also on the same
seeded games, engine and env() taking turns game by game, which a drifting load cannot favour: the timed
loops' ratio moves by +-0.03 between runs on a shared box, this one by about 0.01). A random Wyvern game
lasts about 1,700 decisions at 6 players, so the two loops differ little here.
Not a test: the figures go to docs/performance.md.

``--encoder``: the encoder alone. Seeded random games are recorded, then replayed move by move, encoding
the seat to act after each move, and once without encoding; the difference per decision is printed
(median and minimum over ``--repeats`` replays), for the installed encoder and for each MODULE given
(another copy of encode.py importable by name, e.g. an older version saved as
envs/wyvern/encode_before.py and named tavernzoo.envs.wyvern.encode_before), replayed in turns.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import time

import numpy as np
from common import against_texas_holdem

from tavernzoo.envs.core import Chance
from tavernzoo.envs.wyvern import rules


def encoder_only(players: int, repeats: int, modules: list[str], games: int = 12) -> None:
    config = rules.Config(num_players=players)
    recorded = []
    for seed in range(games):
        state, pick, moves = rules.new_game(config, Chance(seed)), random.Random(seed), []
        while not rules.is_terminal(state):
            moves.append(pick.choice(rules.legal_actions(state)))
            rules.apply(state, moves[-1])
        recorded.append((seed, moves))
    encoders = {name: importlib.import_module(name) for name in ["tavernzoo.envs.wyvern.encode", *modules]}
    out = np.empty(next(iter(encoders.values())).OBSERVATION_SIZE, np.float32)

    def replay(module) -> float:
        # an encoder with an Observer is timed through one, as an env holds one
        encoder = None if module is None else (module.Observer() if hasattr(module, "Observer") else module)
        start, decisions = time.process_time(), 0
        for seed, moves in recorded:
            state = rules.new_game(config, Chance(seed))
            for move in moves:
                if encoder is not None:
                    encoder.encode(state, state.to_act, out)
                rules.apply_legal(state, move)
                decisions += 1
        return (time.process_time() - start) / decisions

    costs: dict[str, list[float]] = {name: [] for name in encoders}
    for _ in range(repeats):
        bare = replay(None)
        for name, encoder in encoders.items():
            costs[name].append(replay(encoder) - bare)
    print(f"Wyvern encoder alone at {players} players, CPU µs per decision ({games} recorded games, "
          f"{repeats} replays in turns)")
    for name, values in costs.items():
        print(f"  {name:<45} median {statistics.median(values) * 1e6:6.2f}   min {min(values) * 1e6:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per entry, all rounds (default 6)")
    parser.add_argument("--repeats", type=int, default=6, help="rounds, entries taken in turns (default 6)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    parser.add_argument("--encoder", nargs="*", metavar="MODULE",
                        help="time the encoder alone (and these other encoder modules) on replayed games")
    args = parser.parse_args()
    if args.encoder is not None:
        encoder_only(args.players, args.repeats, args.encoder)
        return
    from tavernzoo.envs import wyvern_v1

    against_texas_holdem("wyvern", "Wyvern", wyvern_v1, rules, args, same_games=3,
                         texas_target=2.5 if args.players == 4 else None,
                         engine_target=0.3 if args.players == 6 else None)


if __name__ == "__main__":
    main()
