"""How well a network's value head predicts the final return, by stage of the game: the leaf estimate a guided
search scores with (docs/search.md, "Guided search against its own network, on the kernel").

    python bench/value_quality.py ministeel [--bot zoo:ministeel] [--games 100] [--players 4]

The network (``--bot``) plays every seat of ``--games`` seeded games; at every decision its value head is asked
for the seat to act's observation. Printed per quarter of the game (decisions so far over the game's length):
the decisions, the correlation of the estimate with that seat's final return, its mean squared error beside the
returns' variance (an estimate that knows nothing has an error at least the variance) and, where the game
declares one for search (``SEARCH.value``: MiniSteel's lead in HP, Wyvern's lead in level), the correlation of
that hand-written estimate with the return too.
"""

from __future__ import annotations

import argparse

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import as_bot
from tavernzoo.agents.search_hooks import search_hooks
from tavernzoo.envs import get_game
from tavernzoo.envs.make import make_env

QUARTERS = ((0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0001))


def value_quality(game_name: str, bot_spec: str, games: int, players: int, seed: int) -> list[dict[str, float]]:
    game = get_game(game_name)
    config = game.make_config({"num_players": players})
    network = as_bot(load_bot(bot_spec, game, config, seed))
    network.check_value_head()
    written = search_hooks(game_name).value
    rows = []  # (stage, value estimate, hand-written estimate, final return)
    for index in range(games):
        env = make_env(game, config)
        env.reset(seed=seed + index)
        seen, finals = [], {}
        for agent in env.agent_iter():
            observation, reward, termination, truncation, _ = env.last()
            seat = env.possible_agents.index(agent)
            if termination or truncation:
                finals[seat] = reward
                env.step(None)
                continue
            estimate = float(np.asarray(network.value_estimates(observation["observation"][None, :]))[0])
            hand = written(env.unwrapped.game_state)[seat] if written is not None else 0.0
            seen.append((seat, estimate, hand))
            env.step(network.act(observation))
        env.close()
        rows += [(step / len(seen), estimate, hand, finals[seat]) for step, (seat, estimate, hand) in enumerate(seen)]
    table = np.array(rows)
    figures = []
    for low, high in QUARTERS:
        part = table[(table[:, 0] >= low) & (table[:, 0] < high)]
        figures.append({"from": low, "to": min(high, 1.0), "decisions": len(part),
                        "value_corr": float(np.corrcoef(part[:, 1], part[:, 3])[0, 1]),
                        "value_mse": float(np.mean((part[:, 1] - part[:, 3]) ** 2)),
                        "return_var": float(np.var(part[:, 3])),
                        "hand_corr": float(np.corrcoef(part[:, 2], part[:, 3])[0, 1]) if written else float("nan")})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("--bot", help="the network with a value head (default zoo:GAME)")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args()
    bot = args.bot or f"zoo:{args.game}"
    print(f"{args.game}, {args.players} players, {bot} at every seat, {args.games} games:")
    for row in value_quality(args.game, bot, args.games, args.players, args.seed):
        print(f"  decisions {row['from']:.2f}-{row['to']:.2f} of the game: {row['decisions']} decisions; "
              f"corr(value head, return) {row['value_corr']:.3f} (squared error {row['value_mse']:.3f}, returns' "
              f"variance {row['return_var']:.3f}); corr(the game's own estimate, return) {row['hand_corr']:.3f}")


if __name__ == "__main__":
    main()
