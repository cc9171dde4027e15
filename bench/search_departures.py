"""How often a search guided by a network plays another move than the network itself, and how sure the
network was: a search that never leaves its prior's move cannot add to it (docs/search.md, "Neural guidance").

    python bench/search_departures.py wyvern [--spec mcts:prior=zoo:wyvern,value=zoo:wyvern] [--games 3]
    python bench/search_departures.py ministeel --spec mcts:prior=zoo:ministeel,value=zoo:ministeel,root_temp=4

    python bench/search_departures.py wyvern --bot heuristic --spec mcts:sims=1000 --kinds

The network (``--bot``, default ``zoo:GAME``; any bot, a rule bot too) plays every seat of ``--games`` seeded
games at the game's training table; at each decision of seat 0 with a choice the search (``--spec``, default
the network as prior and value) is asked for its move from the same information state. Printed: the
decisions, the network's probability of its own move (median; the share above 0.95 and 0.99; left out for a
bot that gives no probabilities), the share of decisions at which the search's move differs, and the CPU
seconds per search. With ``--kinds``, where the search departs, by the kind of move (an action name's part
before its first colon): the bot's kind and the search's, the commonest pairs first.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import as_bot
from tavernzoo.agents.infoset import feed
from tavernzoo.envs import get_game
from tavernzoo.envs.make import make_env
from tavernzoo.train.config import game_defaults


def departures(game_name: str, spec: str, bot_spec: str, games: int, seed: int) -> dict[str, Any]:
    game = get_game(game_name)
    config = game.make_config(game_defaults(game_name).get("game_config", {}))
    network = as_bot(load_bot(bot_spec, game, config, seed))
    search = as_bot(load_bot(spec, game, config, seed + 1))
    names = game.action_names(config)

    def kind(action: int) -> str:
        return names[action].split(":")[0]

    sure, decisions, seconds = [], 0, 0.0
    kinds: Counter = Counter()  # (the bot's kind of move, the search's) where they differ
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
                if probabilities is not None:  # a rule bot gives none: its moves are compared all the same
                    sure.append(float(probabilities[0][move]))
                decisions += 1
                feed(search, env, agent)
                started = time.process_time()
                searched = search.act(observation)
                seconds += time.process_time() - started
                if searched != move:
                    kinds[kind(move), kind(searched)] += 1
            env.step(move)
        env.close()
    if not decisions:
        raise SystemExit(f"error: seat 0 had no decision with a choice in {games} game(s); give more --games")
    figures: dict[str, Any] = {"decisions": decisions, "differs": sum(kinds.values()) / decisions,
                               "cpu_s_per_search": seconds / decisions, "kinds": kinds.most_common()}
    if sure:
        sure_array = np.array(sure)
        figures.update(median_p=float(np.median(sure_array)), above_095=float(np.mean(sure_array > 0.95)),
                       above_099=float(np.mean(sure_array > 0.99)))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("--spec", action="append", help="the search (repeatable; default: the network as prior "
                                                        "and value)")
    parser.add_argument("--bot", help="the network (default zoo:GAME)")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--kinds", action="store_true", help="where the search departs, by kind of move")
    args = parser.parse_args()
    bot = args.bot or f"zoo:{args.game}"
    for spec in args.spec or [f"mcts:prior={bot},value={bot}"]:
        try:
            figures = departures(args.game, spec, bot, args.games, args.seed)
        except ValueError as error:  # an unknown game or bot spec: its one line, naming what is valid
            raise SystemExit(f"error: {error}") from None
        sure = (f"the network's probability of its move: median {figures['median_p']:.3f}, above 0.95 at "
                f"{figures['above_095']:.2f}, above 0.99 at {figures['above_099']:.2f}; " if "median_p" in figures
                else f"{bot} gives no probabilities; ")
        print(f"{args.game} {spec}: {figures['decisions']} decisions of seat 0 with a choice; {sure}the search "
              f"plays another move at {figures['differs']:.3f} of them ({figures['cpu_s_per_search']:.3f} CPU s a "
              "search)")
        if args.kinds:
            print("  departures by kind of move (the bot's -> the search's): " + (", ".join(
                f"{ours} -> {its} {count}" for (ours, its), count in figures["kinds"][:12]) or "none"))


if __name__ == "__main__":
    main()
