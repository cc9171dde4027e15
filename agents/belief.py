"""Beliefs over hidden cards for search (``mcts:belief=BOT``): deals weighted by how likely they make the
other seats' moves under a model of those seats.

A plain determinization (``rules.determinize``) deals the cards a seat cannot see uniformly over those
consistent with what it sees: it ignores what the others' own choices said (an opponent who let an attack
through with a shield in hand is unlikely; one who discarded a card rather than attack probably had no
weapon). A :class:`Belief` keeps ``particles`` full states of the game (one hidden deal each, with a weight)
and moves them along with the game, a particle filter (sequential importance resampling):

* **Start**: the particles are uniform determinizations of the first information state the seat sees.
* **Each move since** (the moves the host hands over, ``observe_history``: agents/infoset.py
  ``public_history``) is played on every particle. A move of another seat multiplies the particle's weight
  by the probability the model gives it on that seat's observation *in the particle*
  (:func:`move_likelihoods`, one network batch for all particles); a particle in which the move is not
  legal, or not that seat's to make, is dropped. A move the seat did not see (which card a MiniSteel pick
  kept) is drawn from the model on each particle, unweighted (the proposal is the model itself).
* **Each decision of the seat**: each particle is dealt again around its other seats' hidden cards
  (``rules.hidden_holdings`` kept, ``rules.determinize_holding`` deals the rest, the deck, from the
  information state): the public part of the particle becomes the real one (its dice may have differed),
  and a particle whose hands cannot be what the seat now sees (its own draws took a card the particle gave
  another) is dropped. When the weights' effective sample size falls under half the particles, they are
  resampled in proportion to their weights.
* **Sampling**: a simulation draws a particle in proportion to its weight and deals the deck afresh around
  its hands (``determinize_holding``): the hands follow the belief, everything else stays uniform.

When every particle has been dropped, the belief starts again from uniform determinizations (``restarts``
counts it): what the moves before said is lost, not wrong. The weights are a function of the information
state, the seat, the candidate deals and the moves (:func:`move_likelihoods` is the whole of the model's
part), so a compiled search can take the pool (:meth:`Belief.pool`) as it is.

Exact where the replay is: between two decisions of the seat, each particle plays the moves with its own
dice, so where a die decided something public the particle's replay of the next moves can differ from the
game's (it is then dropped, or weighed on a slightly different table); tests/test_belief.py checks the
sampled hands against the exact posterior, enumerated, on positions without such dice.
"""

from __future__ import annotations

import math
import random
from itertools import accumulate
from typing import Any

import numpy as np

RESAMPLE_BELOW = 0.5  # resample when the effective sample size falls under this share of the particles


def move_likelihoods(model: Any, observer: Any, states: list[Any], mover: int, action: int,
                     observations: np.ndarray, masks: np.ndarray, legal: list[list[int]]) -> np.ndarray:
    """The probability ``model`` (a bot with ``action_probabilities``) gives ``action`` on ``mover``'s
    observation in each of ``states`` (``legal[i]`` its legal actions there, the mover to act), in one batch;
    ``observations`` and ``masks`` are the rows to fill (at least ``len(states)``)."""
    rows = len(states)
    for row, state in enumerate(states):
        observer.encode(state, mover, observations[row])
        mask = masks[row]
        mask[:] = 0
        mask[legal[row]] = 1
    probabilities = model.action_probabilities(observations[:rows], masks[:rows])
    return np.asarray(probabilities, dtype=np.float64)[:, action]


class Belief:
    """A weighted pool of full states for one seat of one game, moved along with it (module docstring)."""

    def __init__(self, game: Any, config: Any, model: Any, particles: int, rng: random.Random):
        self.rules, self.model, self.size, self._random = game.rules, model, particles, rng
        self._observer = game.make_observer()
        width = game.encoder.observation_size(config)
        self._observations = np.zeros((particles, width), dtype=np.float32)
        self._masks = np.zeros((particles, len(game.action_names(config))), dtype=np.int8)
        self.restarts = 0
        self.reset()

    def reset(self) -> None:
        """A new game: nothing believed yet."""
        self._seat = -1
        self._seen = 0  # moves of the history already played on the particles
        self._particles: list[Any] = []
        self._holdings: list[Any] = []
        self._log_weights: list[float] = []
        self._cumulative: list[float] = []
        self.moves_weighed = 0

    # --- moving with the game ------------------------------------------------------------------------

    def update(self, info: Any, seat: int, moves: list[tuple[int, int]], dealer: Any) -> None:
        """Bring the belief to ``info`` (``seat``'s information state now): play the ``moves`` not yet
        played (the game's whole history as the seat saw it), weigh the others', deal each particle again
        around its hands; ``dealer`` (a Chance) deals."""
        if seat != self._seat or len(moves) < self._seen or not self._particles:
            self._start(info, seat, len(moves), dealer)
            return
        alive = list(range(len(self._particles)))
        for mover, action in moves[self._seen:]:
            alive = self._play(alive, seat, mover, action)
            if not alive:
                break
            if len(alive) < RESAMPLE_BELOW * self.size or self._effective(alive) < RESAMPLE_BELOW * self.size:
                alive = self._resample(alive, seat, dealer)
        self._seen = len(moves)
        rules = self.rules
        particles, holdings, log_weights = [], [], []
        for i in alive:
            kept = rules.hidden_holdings(self._particles[i], seat)
            state = rules.determinize_holding(info, seat, kept, dealer)
            if state is not None:
                particles.append(state)
                holdings.append(kept)
                log_weights.append(self._log_weights[i])
        if not particles:
            self.restarts += 1
            self._start(info, seat, len(moves), dealer)
            return
        self._particles, self._holdings, self._log_weights = particles, holdings, log_weights
        self._settle(info, seat, dealer)

    def _start(self, info: Any, seat: int, seen: int, dealer: Any) -> None:
        rules = self.rules
        self._seat, self._seen = seat, seen
        self._particles = [rules.determinize(info, seat, dealer) for _ in range(self.size)]
        self._holdings = [rules.hidden_holdings(state, seat) for state in self._particles]
        self._log_weights = [0.0] * self.size
        self._settle(info, seat, dealer)

    def _play(self, alive: list[int], seat: int, mover: int, action: int) -> list[int]:
        """Play one move on the live particles; the ones still alive (a move of another seat weighed)."""
        rules, particles = self.rules, self._particles
        current_seat, legal_actions = rules.current_seat, rules.legal_actions
        apply = getattr(rules, "apply_legal", None) or rules.apply  # every move played is checked legal here
        playable, legal = [], []
        for i in alive:
            state = particles[i]
            if rules.is_terminal(state) or current_seat(state) != mover:
                continue
            actions = legal_actions(state)
            if action < 0 or action in actions:
                playable.append(i)
                legal.append(actions)
        if not playable:
            return []
        asked = [k for k, actions in enumerate(legal) if len(actions) > 1 and (action < 0 or mover != seat)]
        chosen = [action] * len(playable)
        if asked:
            states = [particles[playable[k]] for k in asked]
            if action >= 0:  # a move seen: weigh it
                likelihoods = move_likelihoods(self.model, self._observer, states, mover, action,
                                               self._observations, self._masks, [legal[k] for k in asked])
                self.moves_weighed += 1
                for k, p in zip(asked, likelihoods, strict=True):
                    self._log_weights[playable[k]] += math.log(p) if p > 0 else -math.inf
            else:  # a move not seen: the particle makes it as the model would
                probabilities = self._probabilities(states, mover, [legal[k] for k in asked])
                for k, row in zip(asked, probabilities, strict=True):
                    chosen[k] = self._random.choices(legal[k], weights=[row[a] for a in legal[k]])[0]
        for k, actions in enumerate(legal):
            if chosen[k] < 0:
                chosen[k] = actions[0]  # a forced move the seat did not see
        survivors = []
        for k, i in enumerate(playable):
            if self._log_weights[i] == -math.inf:
                continue
            apply(particles[i], chosen[k])
            survivors.append(i)
        return survivors

    def _effective(self, alive: list[int]) -> float:
        """The effective sample size of the live particles' weights."""
        log_weights = [self._log_weights[i] for i in alive]
        top = max(log_weights)
        weights = [math.exp(w - top) for w in log_weights]
        return sum(weights) ** 2 / sum(w * w for w in weights)

    def _resample(self, alive: list[int], seat: int, dealer: Any) -> list[int]:
        """Mid-way between two decisions: ``size`` particles drawn from the live ones in proportion to their
        weights, then equal. Each copy is dealt again around its hands (``determinize_holding`` of the
        particle itself: the deck in a fresh order, fresh dice), so the copies of one particle draw different
        cards from here on. That keeps the posterior: no seat's observation so far depended on the order of
        the cards nobody has seen, nor on dice not yet rolled."""
        rules = self.rules
        # A particle whose hands its own memory of them contradicts (the seat's memory was the real one, its
        # hands a guess) cannot be dealt again: it drops out here.
        dealable = [i for i in alive if rules.determinize_holding(
            self._particles[i], seat, rules.hidden_holdings(self._particles[i], seat), dealer) is not None]
        if not dealable:
            return []
        log_weights = [self._log_weights[i] for i in dealable]
        top = max(log_weights)
        weights = [math.exp(w - top) for w in log_weights]
        total = sum(weights)
        picks = self._systematic([w / total for w in weights], self.size)
        particles = []
        for k in picks:
            state = self._particles[dealable[k]]
            particles.append(rules.determinize_holding(state, seat, rules.hidden_holdings(state, seat), dealer))
        self._particles = particles
        self._log_weights = [0.0] * self.size
        return list(range(self.size))

    def _probabilities(self, states: list[Any], mover: int, legal: list[list[int]]) -> np.ndarray:
        rows = len(states)
        for row, state in enumerate(states):
            self._observer.encode(state, mover, self._observations[row])
            self._masks[row][:] = 0
            self._masks[row][legal[row]] = 1
        return np.asarray(self.model.action_probabilities(self._observations[:rows], self._masks[:rows]))

    def _settle(self, info: Any, seat: int, dealer: Any) -> None:
        """Normalise the weights; resample when they have drifted apart (each copy its own state)."""
        top = max(self._log_weights)
        weights = [math.exp(w - top) for w in self._log_weights]
        total = sum(weights)
        weights = [w / total for w in weights]
        if 1.0 / sum(w * w for w in weights) < RESAMPLE_BELOW * self.size or len(weights) < self.size:
            picks = self._systematic(weights, self.size)
            holdings = [self._holdings[i] for i in picks]
            rules = self.rules
            # Each copy a state of its own (the particles are played on in place); dealt again, so copies
            # of one particle share its hands and differ in the deck.
            self._particles = [rules.determinize_holding(info, seat, kept, dealer) for kept in holdings]
            self._holdings = holdings
            weights = [1.0 / self.size] * self.size
        self._log_weights = [math.log(w) if w > 0 else -math.inf for w in weights]
        self._cumulative = list(accumulate(weights))

    def _systematic(self, weights: list[float], count: int) -> list[int]:
        """``count`` indices drawn in proportion to ``weights`` with one uniform draw (systematic resampling:
        unbiased, and less noisy than ``count`` independent draws)."""
        start = self._random.random() / count
        picks, cumulative, i = [], 0.0, 0
        for k in range(count):
            point = start + k / count
            while i < len(weights) - 1 and cumulative + weights[i] < point:
                cumulative += weights[i]
                i += 1
            picks.append(i)
        return picks

    # --- what a search reads -------------------------------------------------------------------------

    def sample(self, info: Any, seat: int, chance: Any) -> Any:
        """A full state for one simulation: a particle's hands drawn in proportion to the weights, the rest
        dealt afresh from ``chance`` (the information state the belief was last brought to)."""
        cumulative = self._cumulative
        point = chance.below(2**31) / 2**31 * cumulative[-1]
        low, high = 0, len(cumulative) - 1
        while low < high:  # the first particle whose cumulative weight passes the point
            middle = (low + high) // 2
            if cumulative[middle] <= point:
                low = middle + 1
            else:
                high = middle
        return self.rules.determinize_holding(info, seat, self._holdings[low], chance)

    def pool(self) -> list[tuple[Any, float]]:
        """The believed hands and their probabilities, equal hands merged: ``[(holdings, probability), ...]``."""
        merged: dict[Any, float] = {}
        previous = 0.0
        for kept, cumulative in zip(self._holdings, self._cumulative, strict=True):
            merged[kept] = merged.get(kept, 0.0) + (cumulative - previous)
            previous = cumulative
        total = previous or 1.0
        return [(kept, weight / total) for kept, weight in merged.items()]

    def effective_size(self) -> float:
        """The effective number of distinct hands (1 / the sum of their squared probabilities): the
        particles' worth in uniform, distinct ones."""
        weights = [w for _, w in self.pool()]
        return 1.0 / sum(w * w for w in weights) if weights else 0.0
