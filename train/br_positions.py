"""Training positions where a bot's exploitability comes from (Tiny Minotaur): its decisions on the lines of
the exact best response to it, labelled by the oracle and weighted by what a mistake there costs.

Why these positions. Against a fixed bot, the best response's expected return minus the game's value is
the sum, over the decisions play reaches with the bot on its policy and the best response on its best
moves, of each decision's expected visits times the decider's regret by the oracle's values (the bot's
counted plus, the best response's minus: the performance difference;
:func:`tavernzoo.envs.tiny_minotaur.solver.best_response_decisions`). So the bot's exploitability is made
of its mistakes at the positions its best response steers to, in proportion to how often it gets there:
positions on the oracle's own lines (what ordinary DAgger collects) are only part of them.

What a row is. For each deal and each seat of the bot, every bot decision the best response reaches
(``visits`` > 0) where a mistake is possible (not every legal action optimal) becomes a row in the
:class:`~.samples.Samples` format of ``tavernzoo expert``:

* ``observations``/``masks``: the bot's own observation there (the turn it is shown: the fewest that reach
  the position, as the exact measure asks it);
* ``targets``: the oracle's target, uniform over the optimal actions (``labelling.teacher_target``, the
  target DAgger's oracle rows carry);
* ``values``: the oracle's value of the position for the seat to act;
* ``weights``: ``1 + cost / mean(cost)``, at most ``weight_cap``, with ``cost = reach x gap``: ``reach`` the
  decision's share of the exploitability figure (visits, times the deal's probability, averaged over the
  deals and both seats) and ``gap`` the cheapest mistake there (the best action's value minus the best
  non-optimal one's). Every row counts at least as much as a game position (so the positions where the bot
  is right stay right), and those where a mistake costs the bot most against its best response count up
  to ``weight_cap`` times as much. A position reached in several deals (draws by odds repeat deals) is one
  row, its costs summed.

``tavernzoo exploit BOT --exact-only [--sample N --seed S] --positions FILE`` writes them while it computes
the exact figure (the best response is the same computation); ``tavernzoo expert tiny_minotaur --samples
RUN --samples FILE --games 0 --init BOT`` trains on them beside ordinary DAgger samples (docs/strength.md,
"Training on the best response's positions").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .samples import Samples

WEIGHT_CAP = 20.0
"""The most a best-response row weighs, as a multiple of a game position (1)."""


@dataclass
class PositionSource:
    """Collects best-response positions deal by deal (:meth:`add`), then makes the rows (:meth:`samples`)."""

    game: Any
    config: Any
    weight_cap: float = WEIGHT_CAP
    # observation bytes -> [observation, mask, target, value, cost]
    rows: dict[bytes, list] = field(default_factory=dict)
    bot_regret: float = 0.0  # sum of reach x the bot's regret: its mistakes' cost on the best response's lines
    br_regret: float = 0.0  # the same for the best response's own moves (by the oracle's values)
    visited: int = 0  # bot decisions reached (visits > 0)
    asked: int = 0  # bot decisions the best response asked about
    mistakes: int = 0  # bot decisions reached where its move is not optimal

    def __post_init__(self) -> None:
        from ..agents import load_bot

        if not (self.weight_cap >= 1 and np.isfinite(self.weight_cap)):
            raise ValueError(f"weight cap {self.weight_cap!r} must be a number of at least 1")
        self.oracle = load_bot("oracle", self.game, self.config, seed=0)
        self._buffer = np.zeros(self.game.encoder.observation_size(self.config), dtype=np.float32)
        self._actions = len(self.game.action_names(self.config))

    def add(self, decisions: Iterable[Any], bot: int, weight: float) -> None:
        """The decisions of one deal with the bot in seat ``bot`` (``solver.best_response_decisions``);
        ``weight``: the deal's share of the figure (its probability, over the deals and both seats)."""
        from .labelling import teacher_target

        for decision in decisions:
            if decision.visits <= 0.0:
                if decision.seat == bot:
                    self.asked += 1
                continue
            reach = weight * decision.visits
            observation = self._observe(decision.state, decision.seat)
            values = self.oracle.values(observation)
            best = max(values.values())
            regret = sum(p * (best - values[a]) for a, p in enumerate(decision.probabilities) if p > 0)
            if decision.seat != bot:
                self.br_regret += reach * regret
                continue
            self.asked += 1
            self.visited += 1
            self.bot_regret += reach * regret
            if regret > 1e-9:
                self.mistakes += 1
            mistakes = [v for v in values.values() if v < best - 1e-9]
            if not mistakes:
                continue  # every legal action is optimal: nothing to learn, nothing to lose
            cost = reach * (best - max(mistakes))
            key = observation["observation"].tobytes() + observation["action_mask"].tobytes()
            row = self.rows.get(key)
            if row is None:
                target = teacher_target(self.oracle, observation, int(np.argmax(decision.probabilities)))
                self.rows[key] = [observation["observation"], observation["action_mask"].astype(bool), target,
                                  best, cost]
            else:
                row[4] += cost

    def _observe(self, state: Any, seat: int) -> dict[str, np.ndarray]:
        legal = self.game.rules.legal_actions(state)
        mask = np.zeros(self._actions, dtype=np.int8)
        mask[legal] = 1
        self.game.encoder.encode(state, seat, self._buffer)
        return {"observation": self._buffer.copy(), "action_mask": mask}

    def samples(self) -> Samples:
        """The rows as :class:`Samples`, weighted (the module docstring)."""
        size = self.game.encoder.observation_size(self.config)
        if not self.rows:
            return Samples.empty(size, self._actions)
        rows = list(self.rows.values())
        cost = np.array([r[4] for r in rows], np.float64)
        mean = cost.mean()
        weights = 1.0 + (cost / mean if mean > 0 else 0.0)
        return Samples(np.stack([r[0] for r in rows]).astype(np.float32), np.stack([r[1] for r in rows]),
                       np.stack([r[2] for r in rows]).astype(np.float32), np.array([r[3] for r in rows], np.float32),
                       np.minimum(weights, self.weight_cap).astype(np.float32))

    def report(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "bot_decisions_asked": self.asked, "bot_decisions_reached": self.visited,
                "bot_mistakes_reached": self.mistakes,
                "bot_regret_milli_points": 1000 * self.bot_regret, "br_regret_milli_points": 1000 * self.br_regret,
                "weight_cap": self.weight_cap}


__all__ = ["WEIGHT_CAP", "PositionSource"]
