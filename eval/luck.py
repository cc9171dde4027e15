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

Measured and proved in docs/strength.md ("Luck taken out"); tests/test_luck.py checks by simulation that the
luck has mean zero and the corrected score the plain one's expectation.
"""

from __future__ import annotations

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
    row's estimate of that seat's final return (a bot's ``value_estimates``, :func:`value_bot_meter`)."""

    def __init__(self, game: Game, config: Any, value_of: Callable[[np.ndarray], Any],
                 samples: int = DEFAULT_SAMPLES):
        if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
            raise ValueError(f"chance samples={samples!r} must be a whole number from 1 to {MAX_SAMPLES}")
        self.game, self.config, self.rules = game, game.make_config(config), game.rules
        self.value_of, self.samples = value_of, samples
        self.seats = self.rules.num_seats(self.config)
        self.observer = game.make_observer()
        self.width = game.encoder.observation_size(self.config)

    def luck(self, record: dict[str, Any]) -> list[float]:
        """Each seat's luck over the game of ``record`` (a finished game's record, as the match writes it):
        the sum over its chance events of the seat's value after the event less its expected value there."""
        if record_game(record).env_name != self.game.env_name:
            raise ValueError(f"a record of {record['env']} cannot be measured with {self.game.env_name}'s values")
        rules, config, steps = self.rules, self.config, record["actions"]
        draws = random.Random(f"tavernzoo-luck:{record.get('seed')}:{record.get('seats')}")
        moves = [self._move(step) for step in steps]
        unseen = getattr(rules, "UNSEEN_ORDER_FIELDS", ())
        drawing = self._drawing_moves(record, moves)
        # The deal: the actual one against fresh deals.
        state = rules.new_game(config, Chance.scripted(record["chance"]))
        events = [[rules.clone(state)]
                  + [rules.new_game(config, Chance(draws.randrange(2**63))) for _ in range(self.samples)]]
        for number, move in enumerate(moves):
            if number not in drawing:
                self._apply(state, move)
                continue
            before = rules.clone(state)
            self._apply(state, move)
            outcomes = [rules.clone(state)]
            for _ in range(self.samples):
                sample = rules.clone(before)
                sample.chance = Chance(draws.randrange(2**63))
                for name in unseen:
                    _shuffle(getattr(sample, name), draws)
                self._apply(sample, move)
                outcomes.append(sample)
            events.append(outcomes)
        values = self._values([s for event in events for s in event])
        group = self.samples + 1
        luck = np.zeros(self.seats)
        for k in range(len(events)):
            block = values[k * group:(k + 1) * group]
            luck += block[0] - block[1:].mean(axis=0)
        return [float(v) for v in luck]

    def _move(self, step: dict[str, Any]) -> Any:
        if self.game.simultaneous:
            return {int(seat): self.game.action_index(self.config, name) for seat, name in step["joint"].items()}
        return self.game.action_index(self.config, step["action"])

    def _apply(self, state: Any, move: Any) -> None:
        if self.game.simultaneous:
            self.rules.apply_joint(state, move)
        else:
            self.rules.apply(state, move)

    def _drawing_moves(self, record: dict[str, Any], moves: Sequence[Any]) -> set[int]:
        """The numbers of the moves that drew chance or changed a pile of unseen order (a first replay, so that
        states are copied only before those)."""
        state = self.rules.new_game(self.config, Chance.scripted(record["chance"]))
        unseen = getattr(self.rules, "UNSEEN_ORDER_FIELDS", ())
        drawing = set()
        for number, move in enumerate(moves):
            drawn = len(state.chance.outcomes)
            piles = [list(getattr(state, name)) for name in unseen]
            self._apply(state, move)
            if len(state.chance.outcomes) > drawn or piles != [getattr(state, name) for name in unseen]:
                drawing.add(number)
        return drawing

    def _values(self, states: Sequence[Any]) -> np.ndarray:
        """Every seat's value in each state, ``(states, seats)``: the returns where the game is over, else the
        value estimate of the seat's observation (all of them in one batch)."""
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


def _shuffle(pile: list, draws: random.Random) -> None:
    """Shuffle a pile of unseen order in place (each list of a list of piles)."""
    if pile and isinstance(pile[0], list):
        for inner in pile:
            draws.shuffle(inner)
    else:
        draws.shuffle(pile)


def value_bot_meter(spec: str, game: Game, config: Any, samples: int = DEFAULT_SAMPLES) -> LuckMeter:
    """A :class:`LuckMeter` whose values are the value head of the bot ``spec`` (``zoo:ministeel``, an ONNX file or
    a checkpoint); ValueError, one line, for a bot without one."""
    from ..agents import load_bot
    from ..agents.base import as_bot

    bot = as_bot(load_bot(spec, game, config, seed=0))
    try:
        bot.check_value_head()
    except (ValueError, NotImplementedError) as error:
        raise ValueError(f"--variance-reduction {spec}: {error}") from None
    return LuckMeter(game, config, bot.value_estimates, samples)
