"""Minefield's built-in bots: ``heuristic``.

The one lever Minefield's rules give a player: an attack is void when its attacker or defender was
eliminated earlier in the round, and a battle costs the attacker about half its life (docs/rules/
minefield.md derives 1001/1982). So a good target is one that will be gone before my attack is carried
out (someone many others attack, or who attacks before me), or one that attacks me (whichever of our
two attacks comes first, the other is void: one battle instead of two).

The heuristic predicts this round's attacks from the last round's: each player repeats its last target,
if still alive, with probability ``persistence`` and otherwise picks uniformly; ``persistence`` starts at
1/2 and is re-estimated during the game from how often opponents did repeat their targets, beyond the
1/(options) that chance alone gives (against random bots it falls towards 0). It then
walks the host's order up to its own attack (seat order: the real one; random order: ``samples``
sampled orders), tracking each opponent's chance of surviving the battles before its own attack
(attacks treated as independent, the attacker losing a battle with probability 1001/1982), and picks
the target maximising ``P(gone before my attack) + P(not gone) * P(it attacks me)``: the chance that my
attack costs me no extra battle. Ties are broken at random.

Against uniform random opponents under random attack order no targeting policy can do better than
1/N (every living opponent is exchangeable); the lever shows under seat order and against opponents
whose attacks can be predicted.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ..envs.minefield.encode import layout
from ..envs.minefield.rules import Config
from .base import BotBase, legal_actions
from .search_hooks import SearchHooks


class HeuristicBot(BotBase):
    """Attacks whoever is most likely to be gone before its attack, or to be attacking it anyway."""

    name = "heuristic"

    def __init__(self, config: Config | None = None, seed: int | None = None, prior_persistence: float = 0.5,
                 prior_weight: float = 4.0, samples: int = 8):
        self.config = config if config is not None else Config()
        self._random = random.Random(seed)
        self.prior_persistence = prior_persistence
        self.prior_weight = prior_weight
        self.samples = samples
        self._layout = layout(self.config.num_players)
        self.reset()

    def reset(self) -> None:
        self._previous: tuple[np.ndarray, list[bool]] | None = None
        self._seen_round = -1.0
        self._opportunities = self._repeats = self._by_chance = 0.0

    @property
    def persistence(self) -> float:
        """Estimated chance that an opponent repeats its last target, beyond what chance alone gives:
        the prior, updated by every repeat (or not) seen this game."""
        weight = self.prior_weight
        repeats = self._repeats + weight * self.prior_persistence
        excess = (repeats - self._by_chance) / (self._opportunities + weight - self._by_chance)
        return min(1.0, max(0.0, excess))

    def act(self, observation: dict[str, Any]) -> int:
        legal = legal_actions(observation, self.name)
        self._learn(observation["observation"])
        if len(legal) == 1:
            return legal[0]
        scores = self.target_scores(observation["observation"])
        best = max(scores[int(t)] for t in legal)
        tied = [int(t) for t in legal if scores[int(t)] >= best - 1e-9]
        return tied[self._random.randrange(len(tied))]

    def _learn(self, vector: np.ndarray) -> None:
        """Count, for every opponent that attacked in the last two rounds, whether it repeated its target."""
        lay = self._layout
        n = lay.n
        round_seen = float(vector[lay.round])
        if round_seen == self._seen_round:
            return
        self._seen_round = round_seen
        targets = vector[lay.targets].reshape(n, n)
        alive = [bool(vector[lay.alive.start + r] > 0.5) for r in range(n)]
        if self._previous is not None:
            before, alive_before = self._previous
            options = sum(alive_before) - 1
            for j in range(1, n):
                if before[j].max() < 0.5 or targets[j].max() < 0.5:
                    continue
                earlier = int(np.argmax(before[j]))
                if not alive_before[earlier] or options < 1:
                    continue
                self._opportunities += 1
                self._by_chance += 1.0 / options
                self._repeats += float(targets[j, earlier] > 0.5)
        self._previous = (targets.copy(), alive)

    def target_scores(self, vector: np.ndarray) -> dict[int, float]:
        """Score of each living opponent, by absolute seat (higher: a better target)."""
        lay = self._layout
        n = lay.n
        me = int(np.argmax(vector[lay.seat]))
        alive = [vector[lay.alive.start + r] > 0.5 for r in range(n)]  # relative seats; I am 0
        living = [r for r in range(n) if alive[r]]
        targets = vector[lay.targets].reshape(n, n)
        persistence = self.persistence
        # predicted[j][t]: chance that relative seat j attacks relative seat t this round.
        predicted: dict[int, dict[int, float]] = {}
        for j in living:
            if j == 0:
                continue
            options = [t for t in living if t != j]
            uniform = 1.0 / len(options)
            row = {t: uniform for t in options}
            last = int(np.argmax(targets[j])) if targets[j].max() > 0.5 else -1
            if last in row:
                row = {t: (1.0 - persistence) * p for t, p in row.items()}
                row[last] += persistence
            predicted[j] = row
        if self.config.attack_order == "seat":
            orders = [sorted(living, key=lambda r: (r + me) % n)]
        else:
            orders = []
            for _ in range(self.samples):
                order = living[:]
                self._random.shuffle(order)
                orders.append(order)
        scores = dict.fromkeys(predicted, 0.0)
        for order in orders:
            gone = _gone_before_me(order, predicted)
            for target in predicted:
                attacks_me = predicted[target].get(0, 0.0)
                scores[target] += gone[target] + (1.0 - gone[target]) * attacks_me
        return {(target + me) % n: score / len(orders) for target, score in scores.items()}


# The chance that the attacker is eliminated in a battle under 10 mines (docs/rules/minefield.md).
ATTACKER_LOSES = 1001 / 1982


def _gone_before_me(order: list[int], predicted: dict[int, dict[int, float]]) -> dict[int, float]:
    """Chance each opponent is eliminated by attacks carried out before mine (relative seat 0) in
    ``order``, leaving out battles that involve me; attacks treated as independent."""
    alive = dict.fromkeys(predicted, 1.0)
    for attacker in order:
        if attacker == 0:
            break
        row = predicted[attacker]
        for target, chance in row.items():
            if target == 0:
                continue
            battle = chance * alive[attacker] * alive[target]
            alive[attacker] -= battle * ATTACKER_LOSES
            alive[target] -= battle * (1.0 - ATTACKER_LOSES)
    return {seat: 1.0 - value for seat, value in alive.items()}


BOTS = {"heuristic": HeuristicBot}

# The levels (agents/levels.py): searches of two budgets (the trained network does no better than the heuristic).
# Labels, not strengths: under the default random attack order no policy beats random play (uniform random is an
# equilibrium: against it every living opponent is exchangeable), and none of these separates from another in a
# tournament or head to head (docs/zoo.md, "Levels").
LEVELS = ("random", "careless", "heuristic", "mcts:time=0.5", "mcts:sims=8000,time=1")


# Search (agents/search_hooks.py): a move takes under a second on one core of the 2-core reference machine
# (docs/search.md); rollouts play to the end (a round is short), open-loop (the rounds are simultaneous).
SEARCH = SearchHooks(defaults={"sims": 1000, "depth": 0})
