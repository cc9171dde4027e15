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
  (:func:`move_likelihoods`, one network batch for all particles). A move that takes a card from the hand
  (``rules.cards_played_from_hand``) is conditioned on, not rejected: where the particle's mover lacks the
  card it is swapped in from the cards the seat cannot see, with the proposal's correction
  (:meth:`Belief._condition_on_hand`); a particle is dropped only where no unseen copy is left. A particle
  whose public part left the game's (its own dice) stalls until the next decision (:meth:`Belief._play`).
  A move the seat did not see (which card a MiniSteel pick kept) is drawn from the model on each
  particle, unweighted (the proposal is the model itself).
* **Weights per seat.** A seat's move is weighed on its own observation (its hand and the table), so each
  particle keeps one log-weight per seat; resampling draws each seat's hand by that seat's weights
  (:meth:`Belief._mix`), so one seat's telling move does not spend the pool's diversity on the others.
* **Each decision of the seat**: each particle is dealt again around its other seats' hidden cards
  (``rules.hidden_holdings`` kept, ``rules.determinize_near`` deals the rest, the deck, from the
  information state): the public part of the particle becomes the real one (its dice may have differed),
  and hands that cannot be what the seat now sees (its own draws took a card the particle gave another; a
  stalled particle's moves not played) become the nearest that can. When one seat's weights' effective
  sample size falls under half the particles, they are resampled seat by seat.
* **Sampling**: a simulation draws a particle in proportion to its weight and deals the deck afresh around
  its hands (``determinize_holding``): the hands follow the belief, everything else stays uniform.

When every particle has been dropped, the belief starts again from uniform determinizations (``restarts``
counts it): what the moves before said is lost, not wrong. The weights are a function of the information
state, the seat, the candidate deals and the moves (:func:`move_likelihoods` is the whole of the model's
part), so a compiled search can take the pool (:meth:`Belief.pool`) as it is.

Exact on one move from a uniform deal (tests/test_belief.py enumerates the posterior of a small position:
a common card, where the proposal's correction matters, and a rare one, where nearly every particle swaps).
Beyond it, approximate in three known ways: the swap keeps the particle's weight for the mover's earlier
moves, which the swapped-out card may have explained otherwise; a stalled or mended particle keeps its
hands without the evidence of the moves it missed; resampling seat by seat forgets how the hands are
correlated through the one pool they drew from (weak in a 100-card deck; none in Wyvern, where each seat
draws from its own).
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
        self._log_weights: list[float] = []  # each particle's: the sum of its seats'
        self._seat_log_weights: list[list[float]] = []  # each particle's, each seat's: the likelihood of its moves
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
        live, stalled = list(range(len(self._particles))), []
        for mover, action in moves[self._seen:]:
            live, stalled = self._play(live, stalled, seat, mover, action, dealer)
            if not live:
                break
            if self._effective(live + stalled) < RESAMPLE_BELOW * self.size:
                live, stalled = self._resample(live, stalled, seat, dealer)
        self._seen = len(moves)
        if not live and not stalled:
            self.restarts += 1
            self._start(info, seat, len(moves), dealer)
            return
        rules = self.rules
        # Each particle dealt again around its hands, from the real information state: its public part (dice
        # it rolled otherwise, a stalled particle's moves not played) becomes the game's, and hands that cannot
        # be what the seat now sees (it drew or was shown a card a particle gave another) the nearest that can.
        self._particles = [rules.determinize_near(info, seat, rules.hidden_holdings(self._particles[i], seat),
                                                  dealer) for i in live + stalled]
        self._holdings = [rules.hidden_holdings(state, seat) for state in self._particles]
        self._log_weights = [self._log_weights[i] for i in live + stalled]
        self._seat_log_weights = [self._seat_log_weights[i] for i in live + stalled]
        self._settle(info, seat, dealer)

    def _start(self, info: Any, seat: int, seen: int, dealer: Any) -> None:
        rules = self.rules
        self._seat, self._seen = seat, seen
        self._particles = [rules.determinize(info, seat, dealer) for _ in range(self.size)]
        self._holdings = [rules.hidden_holdings(state, seat) for state in self._particles]
        self._log_weights = [0.0] * self.size
        self._seat_log_weights = [[0.0] * info.n for _ in range(self.size)]
        self._settle(info, seat, dealer)

    def _play(self, live: list[int], stalled: list[int], seat: int, mover: int, action: int,
              dealer: Any) -> tuple[list[int], list[int]]:
        """Play one move on the live particles (a move of another seat weighed); the particles still live and
        those stalled.

        A particle whose public part has left the game's (its own dice rolled otherwise: a Fate, a Bladed
        Shield, a Magnifying Glass; a defender asked to react in the game and not in the particle) cannot
        play the move: it stalls, keeping its hands and its weight until the seat's next decision deals it
        again (:meth:`update`). Its hands say nothing about the moves it missed, so each of them multiplies
        its weight by their mean likelihood among the live particles, which leaves it where it stood. A
        particle is dropped only where no deal holds the cards the move took."""
        rules, particles, log_weights = self.rules, self._particles, self._log_weights
        seat_log_weights = self._seat_log_weights
        current_seat, legal_actions = rules.current_seat, rules.legal_actions
        apply = getattr(rules, "apply_legal", None) or rules.apply  # every move played is checked legal here
        from_hand = rules.cards_played_from_hand(action) if action >= 0 and mover != seat else ()
        playable, legal, stalled = [], [], stalled[:]
        before = {i: log_weights[i] for i in live}
        for i in live:
            state = particles[i]
            if rules.is_terminal(state) or current_seat(state) != mover:
                stalled.append(i)
                continue
            if from_hand:
                log_odds = self._condition_on_hand(state, seat, mover, from_hand, dealer)
                if log_odds is None:
                    continue  # the move was impossible in this deal
            else:
                log_odds = 0.0
            actions = legal_actions(state)
            if action < 0 or action in actions:
                log_weights[i] += log_odds
                seat_log_weights[i][mover] += log_odds
                playable.append(i)
                legal.append(actions)
            else:
                stalled.append(i)
        asked = [k for k, actions in enumerate(legal) if len(actions) > 1 and (action < 0 or mover != seat)]
        chosen = [action] * len(playable)
        if asked:
            states = [particles[playable[k]] for k in asked]
            if action >= 0:  # a move seen: weigh it
                likelihoods = move_likelihoods(self.model, self._observer, states, mover, action,
                                               self._observations, self._masks, [legal[k] for k in asked])
                self.moves_weighed += 1
                for k, p in zip(asked, likelihoods, strict=True):
                    log_p = math.log(p) if p > 0 else -math.inf
                    log_weights[playable[k]] += log_p
                    seat_log_weights[playable[k]][mover] += log_p
            else:  # a move not seen: the particle makes it as the model would
                probabilities = self._probabilities(states, mover, [legal[k] for k in asked])
                for k, row in zip(asked, probabilities, strict=True):
                    chosen[k] = self._random.choices(legal[k], weights=[row[a] for a in legal[k]])[0]
        for k, actions in enumerate(legal):
            if chosen[k] < 0:
                chosen[k] = actions[0]  # a forced move the seat did not see
        if stalled and playable:
            # The move's mean likelihood among the particles that could weigh it (each by its weight before).
            top = max(before.values())
            prior = sum(math.exp(before[i] - top) for i in playable)
            mean = sum(math.exp(log_weights[i] - top) for i in playable) / prior if prior > 0 else 0.0
            if mean > 0:
                for i in stalled:
                    log_weights[i] += math.log(mean)
                    seat_log_weights[i][mover] += math.log(mean)
        survivors = []
        for k, i in enumerate(playable):
            if log_weights[i] == -math.inf:
                continue
            apply(particles[i], chosen[k])
            survivors.append(i)
        return survivors, stalled

    def _effective(self, indices: list[int]) -> float:
        """The effective sample size of these particles' weights."""
        log_weights = [self._log_weights[i] for i in indices]
        top = max(log_weights)
        weights = [math.exp(w - top) for w in log_weights]
        return sum(weights) ** 2 / sum(w * w for w in weights)

    def _resample(self, live: list[int], stalled: list[int], seat: int, dealer: Any) -> tuple[list[int], list[int]]:
        """Mid-way between two decisions: :meth:`_mix` of the live and stalled particles, each new one on the
        state of the particle its first other seat's hand came from (live or stalled as that one was)."""
        indices = live + stalled
        bases, holdings = self._mix(indices, seat, [self.rules.hidden_holdings(self._particles[i], seat)
                                                    for i in indices])
        rules, particles = self.rules, []
        new_live, new_stalled = [], []
        for base, kept in zip(bases, holdings, strict=True):
            (new_live if base < len(live) else new_stalled).append(len(particles))
            particles.append(rules.determinize_near(self._particles[indices[base]], seat, kept, dealer))
        self._particles = particles
        return new_live, new_stalled

    def _mix(self, indices: list[int], seat: int, holdings: list[Any]) -> tuple[list[int], list[Any]]:
        """Resampling seat by seat: ``size`` new deals, each other seat's hand in each drawn from the particles
        ``indices`` (whose hidden holdings are ``holdings``) in proportion to that seat's own weight (the
        likelihood of its own moves), the seats' draws paired at random; the weights then equal. Returns, for
        each new deal, the position in ``indices`` its first other seat's hand came from, and its holdings
        (``rules.merge_holdings``: to be dealt with ``determinize_near``, which mends what the pairing made
        inconsistent, two hands holding the same last copy).

        A seat's moves are weighed on its own observation, which shows its own hand and the table: the
        likelihood is a product over seats of a factor that depends on that seat's hand alone, and the
        uniform deal's prior couples the hands only through the cards they draw from one pool. Resampling the
        joint particles by the product lets one seat's unlikely move (a rare card few particles explained
        well) choose every other seat's hand too; drawing each seat's hand by its own factor keeps each
        seat's share of distinct hands, where the pool of 64 is otherwise spent on one seat's evidence."""
        rules, state = self.rules, self._particles[indices[0]]
        others = [who for who in range(state.n) if who != seat]
        picks = {}
        for who in others:
            log_weights = [self._seat_log_weights[i][who] for i in indices]
            top = max(log_weights)
            weights = [math.exp(w - top) for w in log_weights]
            total = sum(weights)
            drawn = self._systematic([w / total for w in weights], self.size)
            self._random.shuffle(drawn)
            picks[who] = drawn
        mixed = [rules.merge_holdings(state, seat, {who: holdings[picks[who][k]] for who in others})
                 for k in range(self.size)]
        self._log_weights = [0.0] * self.size
        self._seat_log_weights = [[0.0] * state.n for _ in range(self.size)]
        return picks[others[0]] if others else [0] * self.size, mixed

    def _condition_on_hand(self, state: Any, seat: int, mover: int, cards: tuple[int, ...],
                           dealer: Any) -> float | None:
        """Make ``mover``'s hand in the particle ``state`` hold ``cards`` (the move just seen took them from it),
        and return the log of the proposal's correction; None where no deal holds them.

        Rejecting the particles that lack a card (the move was illegal there) conditions on the move exactly,
        but when the card is rare few particles survive, and resampling copies them into a pool that is sure,
        without evidence, of every other card they happen to hold. Instead a particle whose mover lacks the
        card swaps it in (``rules.swap_into_hand``: one of the unseen copies elsewhere changes places with a
        uniformly drawn unseen card of the hand), which also keeps the rest of its deal. The swap proposes a
        hand holding exactly one copy more often than a deal conditioned on holding one would: such a hand
        is reached from itself and from every hand that held, in its copy's place, one of the ``outside -
        outside_card`` other unseen cards (each drawn with odds 1 / (hand * (outside_card + 1))). Weighing
        every particle that holds exactly one unremembered copy by 1 / (1 + K), K = (outside - outside_card)
        / (hand * (outside_card + 1)), makes the weighted particles a deal conditioned on holding the card
        when they were a uniform deal (tests/test_belief.py checks it against the enumerated posterior); after
        moves already weighed it is the same correction applied to a weighted pool, exact where the swap does
        not change how likely the mover's earlier moves were. A card ``seat`` remembers in that hand says
        nothing new: no swap, no correction."""
        rules, log_odds = self.rules, 0.0
        for card in cards:
            remembered, held, hand, outside, outside_card = rules.hand_odds(state, seat, mover, card)
            if remembered:
                continue
            if not held:
                if not hand or not outside_card:
                    return None  # no unseen copy, or no unseen card to give for it: the move was impossible
                rules.swap_into_hand(state, seat, mover, card, dealer)
                held, outside_card = 1, outside_card - 1
            if held == 1:
                log_odds -= math.log1p((outside - outside_card) / (hand * (outside_card + 1)))
        return log_odds

    def _probabilities(self, states: list[Any], mover: int, legal: list[list[int]]) -> np.ndarray:
        rows = len(states)
        for row, state in enumerate(states):
            self._observer.encode(state, mover, self._observations[row])
            self._masks[row][:] = 0
            self._masks[row][legal[row]] = 1
        return np.asarray(self.model.action_probabilities(self._observations[:rows], self._masks[:rows]))

    def _settle(self, info: Any, seat: int, dealer: Any) -> None:
        """Normalise the weights; when one seat's have drifted apart, resample seat by seat (:meth:`_mix`),
        each new deal a state of its own (the particles are played on in place)."""
        rules, size = self.rules, self.size
        drifted = len(self._particles) < size
        for who in range(info.n):
            if who != seat and not drifted:
                log_weights = [row[who] for row in self._seat_log_weights]
                top = max(log_weights)
                weights = [math.exp(w - top) for w in log_weights]
                drifted = sum(weights) ** 2 < RESAMPLE_BELOW * size * sum(w * w for w in weights)
        if drifted:
            _, holdings = self._mix(list(range(len(self._particles))), seat, self._holdings)
            self._particles = [rules.determinize_near(info, seat, kept, dealer) for kept in holdings]
            self._holdings = [rules.hidden_holdings(state, seat) for state in self._particles]
        top = max(self._log_weights)
        weights = [math.exp(w - top) for w in self._log_weights]
        total = sum(weights)
        weights = [w / total for w in weights]
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
