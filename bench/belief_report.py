"""How much a belief (``mcts:belief=BOT``, agents/belief.py) knows about the hidden hands that a uniform deal does not.

Plays games with ``--model`` at every seat (so the model of the others is exactly how they play) and, at
every decision of one seat (each game the next seat), brings a :class:`~tavernzoo.agents.belief.Belief` to
that seat's information state with the moves it saw, as ``mcts`` does. For every other seat and every card
kind (MiniSteel) or card (Wyvern, among those the seat could hold) it asks: does that seat hold one? Each
answer is a probability from the belief's pool and, for comparison, from as many uniform determinizations
(``rules.determinize``, what ``mcts`` samples without a belief), both smoothed alike ((n + 1/2) / (N + 1)).
Printed: the mean log-loss of the true answers in bits under each (lower: the truth was more probable), their
difference (the information the others' moves gave, per question), and the particle filter's restarts.

A bot that only names its move (the heuristic) is no model by itself: ``--smooth EPS`` makes it one, EPS of
each move's probability spread evenly over the legal moves and the rest on the move it names, which for
players who play exactly that bot keeps the truth inside the model (without it, a deal that explains a
move imperfectly would have probability zero).

    python bench/belief_report.py --game ministeel --games 8 --particles 64
    python bench/belief_report.py --game ministeel --model heuristic --smooth 0.1 --games 8
"""

from __future__ import annotations

import argparse
import math
import random
import time

import numpy as np

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import gives_probabilities
from tavernzoo.agents.belief import Belief
from tavernzoo.agents.infoset import public_history
from tavernzoo.agents.mcts import SearchChance
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance
from tavernzoo.eval.backends import progress_bar


def held(game_name: str, hand: tuple) -> set:
    """The kinds (MiniSteel: counts by kind) or cards (Wyvern: card ids) a hand holds."""
    return {kind for kind, count in enumerate(hand) if count} if game_name == "ministeel" else set(hand)


def questions(game_name: str, info, other: int) -> list:
    """What may be asked of ``other``'s hand: every kind, or every card in its unseen pool."""
    if game_name == "ministeel":
        return list(range(len(info.hands[other])))
    return sorted(set(info.hand[other] + info.deck[other] + info.discard[other]))


class Smoothed:
    """A bot as a likelihood model: ``eps`` of each move's probability spread over the legal moves, the rest on
    the move the bot names. Asked on observations out of play, so only for a bot whose move is a function of
    the observation alone (MiniSteel's and Wyvern's heuristics, a network playing its best move), not one that
    draws its moves (``random``, ``careless``)."""

    def __init__(self, bot, eps: float):
        self.bot, self.eps = bot, eps

    def action_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape, dtype=np.float64)
        for row, (observation, mask) in enumerate(zip(observations, masks, strict=True)):
            legal = np.flatnonzero(mask)
            out[row, legal] = self.eps / len(legal)
            out[row, self.bot.act({"observation": observation, "action_mask": mask})] += 1 - self.eps
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="ministeel", choices=("ministeel", "wyvern"))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--model", default=None, help="every seat's policy and the belief's model (default zoo:GAME)")
    parser.add_argument("--smooth", type=float, default=None, metavar="EPS",
                        help="the model as EPS spread over the legal moves, the rest on its move (a bot that only "
                             "names its move, such as the heuristic, needs it)")
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--particles", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    game = get_game(args.game)
    rules = game.rules
    config = game.make_config(num_players=args.players)
    model_spec = args.model or f"zoo:{args.game}"
    players = [load_bot(model_spec, game, config, seed=args.seed + seat) for seat in range(args.players)]
    model = load_bot(model_spec, game, config, seed=args.seed + 99)
    if args.smooth is not None:
        if not 0 < args.smooth <= 1:
            parser.error(f"--smooth {args.smooth}: EPS is a share of each move's probability, in (0, 1]")
        model = Smoothed(model, args.smooth)
    elif not gives_probabilities(model, game, config):
        parser.error(f"--model {model_spec} only names its move, so it cannot weigh deals: give it "
                     "--smooth EPS (0.1, say), or a trained policy (zoo:GAME, an .onnx bot, a checkpoint)")
    observer = game.make_observer()
    observation = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    loss = {"uniform": 0.0, "belief": 0.0}
    asked = positions = restarts = 0
    started = time.process_time()
    bar = progress_bar(True, args.games, "games")
    for number in range(args.games):
        seat = number % args.players
        belief = Belief(game, config, model, args.particles, random.Random(args.seed + number))
        state = rules.new_game(config, Chance(args.seed * 1000 + number))
        moves: list[tuple[int, int]] = []
        dealer = SearchChance(number)
        while not rules.is_terminal(state):
            mover = rules.current_seat(state)
            legal = rules.legal_actions(state)
            if mover == seat:
                info = rules.information_state(state, seat)
                belief.update(info, seat, public_history(rules, moves, seat), dealer)
                pool = belief.pool()
                uniform = [rules.hidden_holdings(rules.determinize(info, seat, dealer), seat)
                           for _ in range(args.particles)]
                truth = rules.hidden_holdings(state, seat)
                for other in range(args.players):
                    if other == seat or not sum(map(bool, _hand(args.game, truth, other))):
                        continue
                    real = held(args.game, _hand(args.game, truth, other))
                    believed = [(held(args.game, _hand(args.game, kept, other)), p) for kept, p in pool]
                    dealt = [held(args.game, _hand(args.game, kept, other)) for kept in uniform]
                    for card in questions(args.game, info, other):
                        p_belief = (sum(p for cards, p in believed if card in cards) * args.particles + 0.5) / (
                            args.particles + 1)
                        p_uniform = (sum(card in cards for cards in dealt) + 0.5) / (args.particles + 1)
                        answer = card in real
                        loss["belief"] -= math.log2(p_belief if answer else 1 - p_belief)
                        loss["uniform"] -= math.log2(p_uniform if answer else 1 - p_uniform)
                        asked += 1
                positions += 1
            if len(legal) == 1:
                action = legal[0]
            else:
                observer.encode(state, mover, observation)
                mask[:] = 0
                mask[legal] = 1
                action = int(players[mover].act({"observation": observation, "action_mask": mask}))
            rules.apply(state, action)
            moves.append((mover, action))
        restarts += belief.restarts
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    seconds = time.process_time() - started
    smoothed = "" if args.smooth is None else f" (smoothed, EPS {args.smooth})"
    print(f"{args.game}, {args.players} players, {model_spec} at every seat and as the model{smoothed}, "
          f"{args.particles} particles: {positions} positions, {asked} questions (does seat X hold a Y?)")
    print(f"log-loss of the truth, bits per question: uniform deal {loss['uniform'] / asked:.4f}, "
          f"belief {loss['belief'] / asked:.4f}, gained {(loss['uniform'] - loss['belief']) / asked:.4f} "
          f"({100 * (loss['uniform'] - loss['belief']) / loss['uniform']:.1f}% of the uniform deal's loss)")
    print(f"belief restarts (every particle dropped): {restarts} in {positions} positions; "
          f"{seconds:.0f} CPU s in all")


def _hand(game_name: str, holdings: tuple, seat: int) -> tuple:
    """One seat's hand in a game's ``hidden_holdings`` (MiniSteel's are ``(hands, pick)``, Wyvern's the hands)."""
    return holdings[0][seat] if game_name == "ministeel" else holdings[seat]


if __name__ == "__main__":
    main()
