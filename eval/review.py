"""A finished game reviewed: each decision of one seat marked with what it cost, by the strongest judge the
game has.

A *decision* is a step where the seat chose among two or more legal actions (a forced move is none). Its
*cost* is the value of the best action there less the value of the action chosen, in the game's return units
(its expected final return: +1 a win, -1 a loss in a two-player game), so 0 is a move as good as the judge's
best and a larger cost a worse one. The judge, found from what the game's bots declare (no table keyed by
game names):

* **exact**: the game's strongest bot (the last of its levels, agents/levels.py) answers
  ``action_values(observation)``, each legal action's exact value: Tiny Minotaur's oracle, from the solved
  game (envs/tiny_minotaur/solver.py). Its costs are exact (for the game without its turn cap).
* **network**: the game's zoo bot (``zoo:GAME``) has a value head: an action's value is the mean, over
  ``samples`` draws of what chance does next, of the network's estimate of the seat's final return from its
  own observation after the action (the game's result where it ends). In a game with hidden information
  every draw is a state redealt from the seat's own knowledge (``rules.determinize``), piles of unseen order
  shuffled afresh (``UNSEEN_ORDER_FIELDS``, as eval/luck.py does), so the judge knows what the player knew.
* **rollouts**: neither: the mean return of random play to the end (``rollouts`` games per draw), which is how
  the strongest search of such a game (Minefield's level 5, ``mcts``) values a position.

A simultaneous game's decision is judged with the other seats' choices of that round as they were (they
chose without knowing this one). Everything is computed from the game's record, so the bots and the table are
untouched; a ``deadline`` (the host's: the web's ``Limits.review_seconds``) leaves the decisions it did not
reach unmarked (``cost`` None) rather than let a request decide how much a server computes.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from ..envs import Chance, Game
from ..envs.records import record_game
from .luck import shuffle_pile
from .play import move_label

SAMPLES = 4
"""Draws of what chance does after each candidate action (the network and rollout judges)."""
ROLLOUTS = 16
"""Random games to the end per draw (the rollout judge)."""
WORST = 3
"""How many of the costliest decisions a review names (those that cost anything)."""
EPSILON = 1e-9  # costs below this are 0: ties of the judge's best


class Judge:
    """What values each candidate action of a decision: ``values(state, seat, legal, move) -> {action: value}``
    (``move(state, action)`` plays the action there, the other seats' choices of the round included)."""

    method = ""
    exact = False

    def values(self, state: Any, seat: int, legal: list[int], move: Any) -> dict[int, float]:
        raise NotImplementedError


class ExactJudge(Judge):
    """The strongest bot's exact values of the legal actions (``action_values``: Tiny Minotaur's oracle)."""

    exact = True

    def __init__(self, game: Game, config: Any, bot: Any, spec: str):
        self.game, self.config, self.bot = game, config, bot
        self.method = f"exact: {spec}'s value of every legal action (the solved game)"
        self.observer = game.make_observer()
        self.buffer = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
        self.mask = np.zeros(len(game.action_names(config)), dtype=np.int8)

    def values(self, state: Any, seat: int, legal: list[int], move: Any) -> dict[int, float]:
        self.observer.encode(state, seat, self.buffer)
        self.mask[:] = 0
        self.mask[legal] = 1
        values = self.bot.action_values({"observation": self.buffer, "action_mask": self.mask})
        return {action: float(values[action]) for action in legal}


class SampledJudge(Judge):
    """An action's value: the mean over ``samples`` draws of chance (from the seat's knowledge) of the seat's
    value after it, from a network's value head or random rollouts (the module docstring)."""

    def __init__(self, game: Game, config: Any, samples: int, seed: int, network: Any = None, spec: str = "",
                 rollouts: int = ROLLOUTS):
        self.game, self.config, self.rules = game, config, game.rules
        self.samples, self.network, self.rollouts = samples, network, rollouts
        self.draws = random.Random(f"tavernzoo-review:{seed}")
        self.unseen = getattr(self.rules, "UNSEEN_ORDER_FIELDS", ())
        if network is not None:
            self.method = f"estimated: {spec}'s value head, {samples} draws of chance after each action"
            self.observer = game.make_observer()
            self.width = game.encoder.observation_size(config)
        else:
            self.method = (f"estimated: random play to the end, {samples} draws x {rollouts} games after each action "
                           "(as the game's strongest search values a position)")

    def values(self, state: Any, seat: int, legal: list[int], move: Any) -> dict[int, float]:
        after = {action: [self._after(state, seat, action, move) for _ in range(self.samples)] for action in legal}
        flat = [(action, sample) for action, samples in after.items() for sample in samples]
        values = self._values([sample for _, sample in flat], seat)
        out = {action: 0.0 for action in legal}
        for (action, _), value in zip(flat, values, strict=True):
            out[action] += value / self.samples
        return out

    def _after(self, state: Any, seat: int, action: int, move: Any) -> Any:
        rules, draws = self.rules, self.draws
        if self.game.public:
            sample = rules.clone(state)
        else:  # redealt from the seat's own knowledge: the judge does not see the other hands
            sample = rules.determinize(state, seat, Chance(draws.randrange(2**63)))
        sample.chance = Chance(draws.randrange(2**63))
        for name in self.unseen:
            shuffle_pile(getattr(sample, name), draws)
        move(sample, action)
        return sample

    def _values(self, states: list[Any], seat: int) -> list[float]:
        rules = self.rules
        out = [float(rules.returns(s)[seat]) if rules.is_terminal(s) else None for s in states]
        open_rows = [k for k, value in enumerate(out) if value is None]
        if not open_rows:
            return out  # type: ignore[return-value]
        if self.network is not None:
            batch = np.zeros((len(open_rows), self.width), dtype=np.float32)
            for row, k in enumerate(open_rows):
                self.observer.encode(states[k], seat, batch[row])
            estimates = np.asarray(self.network.value_estimates(batch), dtype=np.float64).reshape(-1)
            for row, k in enumerate(open_rows):
                out[k] = float(estimates[row])
        else:
            for k in open_rows:
                out[k] = sum(self._rollout(states[k], seat) for _ in range(self.rollouts)) / self.rollouts
        return out  # type: ignore[return-value]

    def _rollout(self, state: Any, seat: int) -> float:
        rules, draws = self.rules, self.draws
        state = rules.clone(state)
        state.chance = Chance(draws.randrange(2**63))
        while not rules.is_terminal(state):
            if self.game.simultaneous:
                joint = {}
                for mover in rules.acting_seats(state):
                    legal = rules.legal_actions(state, mover)
                    joint[mover] = legal[draws.randrange(len(legal))]
                rules.apply_joint(state, joint)
            else:
                legal = rules.legal_actions(state)
                rules.apply(state, legal[draws.randrange(len(legal))])
        return float(rules.returns(state)[seat])


def judge_for(game: Game, config: Any, seed: int = 0, samples: int = SAMPLES) -> Judge:
    """The strongest judge ``game``'s bots offer (the module docstring): exact values, a value head, rollouts."""
    from ..agents import builtin_bots, load_bot
    from ..agents.levels import levels
    from ..agents.onnx_bot import zoo_bots

    try:
        strongest = levels(game)[-1]
    except ValueError:
        strongest = None
    if strongest in builtin_bots(game):  # a built-in bot is cheap to ask whether it knows exact values
        bot = load_bot(strongest, game, config, seed)
        if getattr(bot, "action_values", None) is not None:
            return ExactJudge(game, config, bot, strongest)
    if game.name in zoo_bots():
        spec = f"zoo:{game.name}"
        try:
            network = load_bot(spec, game, config, seed)
        except ValueError:  # trained for other options (another number of players): not a judge of this game
            network = None
        if getattr(network, "has_value", False):
            return SampledJudge(game, config, samples, seed, network=network, spec=spec)
    return SampledJudge(game, config, samples, seed)


def decisions(record: dict[str, Any], seat: int) -> list[tuple[int, Any, list[int], int, Any]]:
    """The decisions of ``seat`` in ``record``'s game: ``(number, state, legal, chosen, entry)`` for each step
    ``number`` (the state before it: the replay's step ``number``) where the seat chose among two or more
    legal actions; ``entry`` is the record's step (a simultaneous round's other choices in it)."""
    game = record_game(record)
    config = game.make_config(record["config"])
    rules = game.rules
    state = rules.new_game(config, Chance.scripted(record["chance"]))
    found = []
    for number, entry in enumerate(record["actions"]):
        if game.simultaneous:
            joint = {int(s): game.action_index(config, name) for s, name in entry["joint"].items()}
            if seat in joint:
                legal = list(rules.legal_actions(state, seat))
                if len(legal) > 1:
                    found.append((number, rules.clone(state), legal, joint[seat], joint))
            rules.apply_joint(state, joint)
        else:
            action = game.action_index(config, entry["action"])
            if entry["seat"] == seat:
                legal = list(rules.legal_actions(state))
                if len(legal) > 1:
                    found.append((number, rules.clone(state), legal, action, entry))
            rules.apply(state, action)
    return found


def review_marks(record: dict[str, Any], seat: int, deadline: float | None = None,
                 judge: Judge | None = None) -> dict[str, Any]:
    """Each decision of ``seat`` in ``record``'s finished game with its cost (the module docstring), and the
    costliest ones; ``deadline`` (a ``time.monotonic()`` instant) leaves the decisions not reached by then
    unmarked. ValueError, one line, for a seat the game does not have."""
    game = record_game(record)
    config = game.make_config(record["config"])
    count = game.rules.num_seats(config)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < count:
        raise ValueError(f"seat {seat!r} is not a seat of this game (0-{count - 1})")
    judge = judge or judge_for(game, config, seed=int(record.get("seed") or 0))
    names = game.action_names(config)
    marks = []
    reached = True
    for number, state, legal, chosen, entry in decisions(record, seat):
        mark: dict[str, Any] = {"step": number, "action": names[chosen],
                                "said": move_label(game, state, chosen), "cost": None}
        marks.append(mark)
        if not reached or (deadline is not None and time.monotonic() > deadline):
            reached = False
            continue
        values = judge.values(state, seat, legal, _mover(game, seat, entry))
        best = max(values, key=lambda action: (values[action], -action))  # the first of equals
        cost = values[best] - values[chosen]
        mark.update({"cost": 0.0 if cost < EPSILON else round(cost, 6), "best": names[best],
                     "best_said": move_label(game, state, best), "best_value": round(values[best], 6),
                     "chosen_value": round(values[chosen], 6)})
    costly = sorted((m for m in marks if m["cost"]), key=lambda m: -m["cost"])[:WORST]
    return {"seat": seat, "method": judge.method, "exact": judge.exact, "decisions": marks,
            "worst": [m["step"] for m in costly], "complete": reached,
            "units": "expected final return (the game's returns: a win +1, a loss -1 in a game of two)"}


def _mover(game: Game, seat: int, entry: Any) -> Any:
    """How a candidate action is played on a sampled state: alone, or with the round's other choices."""
    if not game.simultaneous:
        return game.rules.apply
    joint = dict(entry)

    def move(state: Any, action: int) -> None:
        game.rules.apply_joint(state, {**joint, seat: action})

    return move
