"""How often a search guided by a network plays another move than the network itself, and how sure the
network was: a search that never leaves its prior's move cannot add to it (docs/search.md, "Neural guidance").

    python bench/search_departures.py wyvern [--spec mcts:prior=zoo:wyvern,value=zoo:wyvern] [--games 3]
    python bench/search_departures.py ministeel --spec mcts:prior=zoo:ministeel,value=zoo:ministeel,root_temp=4

The network (``--bot``, default ``zoo:GAME``) plays every seat of ``--games`` seeded games at the game's
training table; at each decision of seat 0 with a choice the search (``--spec``, default the network as
prior and value) is asked for its move from the same information state. Printed: the decisions, the
network's probability of its own move (median; the share above 0.95 and 0.99), the share of decisions
at which the search's move differs, and the CPU seconds per search.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import as_bot
from tavernzoo.agents.infoset import feed
from tavernzoo.envs import get_game
from tavernzoo.envs.make import make_env
from tavernzoo.train.config import game_defaults


def departures(game_name: str, spec: str, bot_spec: str, games: int, seed: int) -> dict[str, float]:
    game = get_game(game_name)
    config = game.make_config(game_defaults(game_name).get("game_config", {}))
    network = as_bot(load_bot(bot_spec, game, config, seed))
    search = as_bot(load_bot(spec, game, config, seed + 1))
    sure, differ, seconds = [], 0, 0.0
    for index in range(games):
        env = make_env(game, config)
        env.reset(seed=seed + index)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            move = network.act(observation)
            if agent == env.possible_agents[0] and np.count_nonzero(observation["action_mask"]) > 1:
                probabilities = network.action_probabilities(observation["observation"][None, :],
                                                             observation["action_mask"][None, :])
                if probabilities is None:
                    raise SystemExit(f"error: {bot_spec} gives no probabilities (a trained policy does)")
                sure.append(float(probabilities[0][move]))
                feed(search, env, agent)
                started = time.process_time()
                differ += search.act(observation) != move
                seconds += time.process_time() - started
            env.step(move)
        env.close()
    if not sure:
        raise SystemExit(f"error: seat 0 had no decision with a choice in {games} game(s); give more --games")
    sure_array = np.array(sure)
    return {"decisions": len(sure), "median_p": float(np.median(sure_array)),
            "above_095": float(np.mean(sure_array > 0.95)), "above_099": float(np.mean(sure_array > 0.99)),
            "differs": differ / len(sure), "cpu_s_per_search": seconds / len(sure)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("--spec", action="append", help="the search (repeatable; default: the network as prior "
                                                        "and value)")
    parser.add_argument("--bot", help="the network (default zoo:GAME)")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=100)
    args = parser.parse_args()
    bot = args.bot or f"zoo:{args.game}"
    for spec in args.spec or [f"mcts:prior={bot},value={bot}"]:
        figures = departures(args.game, spec, bot, args.games, args.seed)
        print(f"{args.game} {spec}: {figures['decisions']} decisions of seat 0 with a choice; the network's "
              f"probability of its move: median {figures['median_p']:.3f}, above 0.95 at {figures['above_095']:.2f},"
              f" above 0.99 at {figures['above_099']:.2f}; the search plays another move at "
              f"{figures['differs']:.3f} of them ({figures['cpu_s_per_search']:.3f} CPU s a search)")


if __name__ == "__main__":
    main()
