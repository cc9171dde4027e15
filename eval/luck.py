"""Luck taken out of a game's score: control variates from a value estimate at every chance event (AIVAT-style).

A seat's score depends on its play and on the dice. At each chance event (the deal, and every step whose
move drew from the game's ``Chance`` or drew from a pile whose order no seat has seen: cards drawn, dice rolled)
the game goes from the state before the event to one of its possible outcomes. Given that state and the move,
the outcome's draw is the rules' alone, so for any function ``f`` of a state

    luck of the event = f(state after the event) - E[f(state after the event) | state before, move]

has expectation zero whatever the bots do, and so has its sum over a game (a martingale's increments).
``score - beta * luck`` therefore keeps the score's expectation for any fixed ``beta`` (and for a ``beta``
fitted on earlier deals only: eval/stats.py ``control_variate_values``), while a good ``f`` (the seat's
estimated result) takes out of the score the part the dice decided, as AIVAT does for poker (Burch, Schmid,
Moravcik, Morrill, Bowling, 2018).

Here ``f`` is a value network's estimate of each seat's final return from its own observation (a trained
bot with a value head: ``zoo:ministeel``, a checkpoint), and the game's actual returns at its end. The
expectation is estimated without bias by replaying the event from the state before it with ``samples`` fresh
draws of its chance (a new deal from new seeds for the deal itself), the piles that the rules declare unseen in
order (``UNSEEN_ORDER_FIELDS`` in a game's rules: MiniSteel's deck, shuffled at the deal and drawn from its end
later) shuffled afresh too: no seat has seen their order, so given everything the seats have seen and done it is
uniform, and a card drawn from such a pile is chance as much as a die is. the estimate's noise adds variance but
no bias, since the actual outcome and the samples are drawn alike. Everything is computed from a game's
record after the game (its actions and chance log replayed), so the bots and the table engine are untouched.
The samples' seeds come from the record's seed and seats, so a luck figure is repeatable.

The same holds at the decisions of a bot that draws its moves from probabilities it states (agents/base.py
``move_probabilities``: ``random``, a policy played with ``@sample``), AIVAT's decision term: the value after
the drawn move less the probability-weighted value after every move it might have drawn (``movers``). Bots
that name their moves add nothing. The match (eval/match.py) and the tournament (eval/runner.py, one number
per seat in each game line) both measure with :func:`value_bot_meter`.

Measured and proved in docs/strength.md ("Luck taken out"); tests/test_luck.py checks by simulation that the
luck has mean zero and the corrected score the plain one's expectation.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..envs import Game
from ..envs.core import Chance
from ..envs.records import record_game

DEFAULT_SAMPLES = 4
"""Draws of each chance event's outcome that estimate its expected value (more: less noise, slower)."""
MAX_SAMPLES = 256


class LuckMeter:
    """Each seat's luck in a recorded game of ``game`` under ``config`` (:meth:`luck`).

    ``value_of(observations) -> estimates``: a batch of seat observations (rows of the game's encoder) to each
    row's estimate of that seat's final return (a bot's ``value_estimates``, :func:`value_bot_meter`).
    ``movers``: the bots at the table by their seat label in the records (``zoo:ministeel@sample``, ``random``);
    the decisions of a bot whose ``move_probabilities`` are known (agents/base.py) count as luck too."""

    def __init__(self, game: Game, config: Any, value_of: Callable[[np.ndarray], Any],
                 samples: int = DEFAULT_SAMPLES, movers: dict[str, Any] | None = None):
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"chance samples={samples!r} must be a whole number from 1 to {MAX_SAMPLES}")
        self.game, self.config, self.rules = game, game.make_config(config), game.rules
        self.value_of, self.samples = value_of, samples
        self.movers = dict(movers or {})
        self.seats = self.rules.num_seats(self.config)
        self.observer = game.make_observer()
        self.width = game.encoder.observation_size(self.config)
        self.actions = len(game.action_names(self.config))
        self.unseen = getattr(self.rules, "UNSEEN_ORDER_FIELDS", ())

    def luck(self, record: dict[str, Any]) -> list[float]:
        """Each seat's luck over the game of ``record`` (a finished game's record, as the match writes it): the
        sum over its chance events, and the decisions of bots that draw their moves (:attr:`movers`), of the
        seat's value after the event less its expected value there."""
        if record_game(record).env_name != self.game.env_name:
            raise ValueError(f"a record of {record['env']} cannot be measured with {self.game.env_name}'s values")
        rules, config, steps = self.rules, self.config, record["actions"]
        draws = random.Random(f"tavernzoo-luck:{record.get('seed')}:{record.get('seats')}")
        moves = [self._move(step) for step in steps]
        drawing, drawn_from = self._first_pass(record, moves)
        # Each event: the actual state after it, and the states it might have led to with their weights.
        # The deal: the actual one against fresh deals.
        state = rules.new_game(config, Chance.scripted(record["chance"]))
        fresh = [rules.new_game(config, Chance(draws.randrange(2**63))) for _ in range(self.samples)]
        events = [(rules.clone(state), [(deal, 1.0 / self.samples) for deal in fresh])]
        for number, move in enumerate(moves):
            probabilities = drawn_from.get(number)
            if number not in drawing and probabilities is None:
                self._apply(state, move)
                continue
            before = rules.clone(state)
            self._apply(state, move)
            if probabilities is None:  # chance alone: the same move, other draws
                others = self._outcomes(before, move, draws, self.samples)
                events.append((rules.clone(state), [(other, 1.0 / len(others)) for other in others]))
                continue
            # A drawn move (AIVAT's decision term): every move the bot might have drawn, weighted by its
            # probability, each with fresh draws of the chance it takes (one outcome where it takes none).
            weighted = []
            for action in np.flatnonzero(probabilities):
                others = self._outcomes(before, int(action), draws)
                weighted += [(other, float(probabilities[action]) / len(others)) for other in others]
            events.append((rules.clone(state), weighted))
        states = [s for actual, others in events for s in (actual, *(other for other, _ in others))]
        values = self._values(states, [1 + len(others) for _, others in events])
        luck = np.zeros(self.seats)
        row = 0
        for _, others in events:
            weights = np.array([weight for _, weight in others])
            luck += values[row] - weights @ values[row + 1:row + 1 + len(others)]
            row += 1 + len(others)
        return [float(v) for v in luck]

    def _outcomes(self, before: Any, move: Any, draws: random.Random, samples: int | None = None) -> list[Any]:
        """``move`` applied to copies of ``before`` with fresh chance and the unseen piles shuffled afresh:
        ``samples`` of them, or, without ``samples``, one where the move draws nothing (its outcome is
        certain) and :attr:`samples` where it draws."""
        outcomes: list[Any] = []
        wanted = samples or 1
        while len(outcomes) < wanted:
            sample = self.rules.clone(before)
            sample.chance = Chance(draws.randrange(2**63))
            for name in self.unseen:
                shuffle_pile(getattr(sample, name), draws)
            piles = self._piles(sample) if samples is None else None
            self._apply(sample, move)
            outcomes.append(sample)
            if samples is None and (sample.chance.outcomes or piles != self._piles(sample)):
                samples = wanted = self.samples  # it drew: as many outcomes as a chance event gets
        return outcomes

    def _piles(self, state: Any) -> list[Any]:
        """A copy of the state's piles of unseen order (to see whether a move drew from them)."""
        return [copy.deepcopy(getattr(state, name)) for name in self.unseen]

    def _move(self, step: dict[str, Any]) -> Any:
        if self.game.simultaneous:
            return {int(seat): self.game.action_index(self.config, name) for seat, name in step["joint"].items()}
        return self.game.action_index(self.config, step["action"])

    def _apply(self, state: Any, move: Any) -> None:
        if self.game.simultaneous:
            self.rules.apply_joint(state, move)
        else:
            self.rules.apply(state, move)

    def _first_pass(self, record: dict[str, Any], moves: Sequence[Any]) -> tuple[set[int], dict[int, np.ndarray]]:
        """A first replay, so that states are copied only before the events: the numbers of the moves that drew
        chance or changed a pile of unseen order, and the probabilities each move of a bot that draws its moves
        was drawn from (by move number; turn-based games only)."""
        state = self.rules.new_game(self.config, Chance.scripted(record["chance"]))
        labels = record.get("seats") or []
        drawing: set[int] = set()
        asked: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}  # seat -> (move number, observation, mask)
        for number, move in enumerate(moves):
            if self.movers and not self.game.simultaneous:
                seat = self.rules.current_seat(state)
                if seat < len(labels) and labels[seat] in self.movers:
                    observation = np.zeros(self.width, dtype=np.float32)
                    self.observer.encode(state, seat, observation)
                    mask = np.zeros(self.actions, dtype=np.int8)
                    mask[self.rules.legal_actions(state)] = 1
                    asked.setdefault(seat, []).append((number, observation, mask))
            drawn = len(state.chance.outcomes)
            piles = self._piles(state)
            self._apply(state, move)
            if len(state.chance.outcomes) > drawn or piles != self._piles(state):
                drawing.add(number)
        drawn_from: dict[int, np.ndarray] = {}
        for seat, rows in asked.items():  # one batch per seat's bot
            probabilities = self.movers[labels[seat]].move_probabilities(
                np.stack([observation for _, observation, _ in rows]), np.stack([mask for _, _, mask in rows]))
            if probabilities is None:  # a bot that names its moves: its decisions are no luck
                continue
            for (number, _, mask), row in zip(rows, np.asarray(probabilities, dtype=np.float64), strict=True):
                if row.max() < 1.0 - 1e-12:  # a sure move is no event
                    drawn_from[number] = np.where(mask > 0, row, 0.0)
        return drawing, drawn_from

    def _values(self, states: Sequence[Any], events: Sequence[int]) -> np.ndarray:
        """Every seat's value in each state, ``(states, seats)``: the returns where the game is over, else the
        value estimate of the seat's observation (all of them in one batch). ``events``: how many of the states,
        in order, belong to each event (its actual outcome first), for estimates that draw the same samples
        for one event's states (common random numbers: bench/luck_variance.py ``--rollouts``)."""
        out = np.zeros((len(states), self.seats))
        rows = [(k, seat) for k, state in enumerate(states) if not self.rules.is_terminal(state)
                for seat in range(self.seats)]
        for k, state in enumerate(states):
            if self.rules.is_terminal(state):
                out[k] = self.rules.returns(state)
        if rows:
            batch = np.zeros((len(rows), self.width), dtype=np.float32)
            for row, (k, seat) in enumerate(rows):
                self.observer.encode(states[k], seat, batch[row])
            estimates = np.asarray(self.value_of(batch), dtype=np.float64).reshape(-1)
            for row, (k, seat) in enumerate(rows):
                out[k, seat] = estimates[row]
        return out


def shuffle_pile(pile: list, draws: random.Random) -> None:
    """Shuffle a pile of unseen order in place (each list of a list of piles)."""
    if pile and isinstance(pile[0], list):
        for inner in pile:
            draws.shuffle(inner)
    else:
        draws.shuffle(pile)


def value_bot_meter(spec: str, game: Game, config: Any, samples: int = DEFAULT_SAMPLES,
                    seats: dict[str, str] | None = None) -> LuckMeter:
    """A :class:`LuckMeter` whose values are the value head of the bot ``spec`` (``zoo:ministeel``, an ONNX file or
    a checkpoint); ValueError, one line, for a bot without one. ``seats``: the table's bot specs by their seat
    label in the records; the bots that draw their moves from known probabilities among them (``random``,
    ``zoo:GAME@sample``) are the meter's :attr:`~LuckMeter.movers`. Bots that play every game their own way
    (programs, language models, searches) are not loaded for it: their decisions stay in the score."""
    from ..agents import BotSpec, load_bot
    from ..agents.base import as_bot

    bot = as_bot(load_bot(spec, game, config, seed=0))
    try:
        bot.check_value_head()
    except (ValueError, NotImplementedError) as error:
        raise ValueError(f"--variance-reduction {spec}: {error}") from None
    movers = {label: as_bot(load_bot(seat_spec, game, config, seed=0)) for label, seat_spec in (seats or {}).items()
              if not BotSpec.parse(seat_spec).traits.every_game}
    return LuckMeter(game, config, bot.value_estimates, samples, movers)
