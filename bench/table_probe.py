"""Can a network tell which table it sits at from one observation? A lone bot is trained to do well at two tables
(three heuristics, three of a file: issue 49's bar); if single observations tell those tables apart, the
network has what it needs to play each its own way, and a compromise between them is a matter of training,
not of what it sees (docs/zoo.md, "Which table it sits at").

    python bench/table_probe.py ministeel --learner zoo:ministeel [--tables heuristic zoo:ministeel]
        [--games 400] [--players 4]

``--learner`` plays one seat (rotated game by game) of ``--games`` seeded games at each table of three copies of
a ``--tables`` bot; its observations at its own decisions are kept, labelled by table. A classifier (logistic,
then a two-layer tanh MLP of 128) is fitted on four fifths of the games and scored on the rest (whole games held
out). Printed: the held-out accuracy and log loss (chance: 0.5 and 0.693), and the accuracy by quarter of the
game's decisions.
"""

from __future__ import annotations

import argparse

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.envs import get_game
from tavernzoo.envs.make import make_env
from tavernzoo.eval.table import Table


class Recorder:
    """A bot's seat that keeps every observation it is handed, then lets the bot answer."""

    def __init__(self, bot):
        self.bot, self.seen = bot, []

    def act(self, observation):
        self.seen.append(np.array(observation["observation"], dtype=np.float32))
        return self.bot.act(observation)

    def reset(self):
        pass


def collect(game_name: str, learner: str, table: str, games: int, players: int, seed: int):
    """The learner's observations at ``games`` games against three of ``table``, their game and stage (0-1)."""
    game = get_game(game_name)
    config = game.make_config({"num_players": players})
    rows, game_of, stage = [], [], []
    for index in range(games):
        recorder = Recorder(load_bot(learner, game, config, seed=seed + index))
        bots = [load_bot(table, game, config, seed=seed + 1_000_000 + players * index + s) for s in range(players)]
        bots[index % players] = recorder
        Table(make_env(game, config), bots, seed=seed + index).play()
        rows += recorder.seen
        game_of += [index] * len(recorder.seen)
        stage += list(np.arange(len(recorder.seen)) / max(1, len(recorder.seen)))
    return np.array(rows), np.array(game_of), np.array(stage)


def fit_and_score(x, y, held_out, hidden: int, seed: int, epochs: int = 60):
    import torch

    torch.manual_seed(seed)
    width = x.shape[1]
    net = torch.nn.Linear(width, 1) if hidden == 0 else torch.nn.Sequential(
        torch.nn.Linear(width, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
        torch.nn.Linear(hidden, 1))
    optimiser = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-5)
    train_x, train_y = torch.tensor(x[~held_out]), torch.tensor(y[~held_out], dtype=torch.float32)
    for _ in range(epochs):
        order = torch.randperm(len(train_x))
        for start in range(0, len(train_x), 256):
            batch = order[start:start + 256]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(train_x[batch]).squeeze(1), train_y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    with torch.no_grad():
        return torch.sigmoid(net(torch.tensor(x[held_out])).squeeze(1)).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("--learner", default="zoo:ministeel")
    parser.add_argument("--tables", nargs=2, default=["heuristic", "zoo:ministeel"])
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    parts = [collect(args.game, args.learner, table, args.games, args.players, args.seed) for table in args.tables]
    x = np.concatenate([part[0] for part in parts])
    y = np.concatenate([np.full(len(part[0]), label, dtype=np.float64) for label, part in enumerate(parts)])
    game_of = np.concatenate([part[1] for part in parts])
    stage = np.concatenate([part[2] for part in parts])
    held_out = game_of % 5 == 0
    truth = y[held_out]
    print(f"{args.learner} at tables of three {args.tables[0]} ({len(parts[0][0]):,} decisions) and of three "
          f"{args.tables[1]} ({len(parts[1][0]):,}); games {args.games} each, a fifth held out")
    for hidden in (0, 128):
        p = np.clip(fit_and_score(x, y, held_out, hidden, args.seed), 1e-7, 1 - 1e-7)
        right = (p > 0.5) == truth
        loss = -np.mean(truth * np.log(p) + (1 - truth) * np.log(1 - p))
        quarters = np.minimum((stage[held_out] * 4).astype(int), 3)
        by_quarter = ", ".join(f"{right[quarters == q].mean():.3f}" for q in range(4))
        name = "logistic" if hidden == 0 else f"MLP {hidden}x{hidden}"
        print(f"{name:>12}: held-out accuracy {right.mean():.3f}, log loss {loss:.3f} (chance 0.5, 0.693); "
              f"by quarter of the game: {by_quarter}")


if __name__ == "__main__":
    main()
