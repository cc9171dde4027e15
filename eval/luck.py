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
import dataclasses
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


DEFAULT_PLAYOUTS = 32
"""Playouts of each state that estimate its value with ``--variance-reduction playouts``."""
MAX_PLAYOUTS = 4096
PLAYOUT_GAMES = ("ministeel", "wyvern", "tiny_minotaur")
"""The games whose kernels play playouts out (MiniSteel's and Wyvern's seat networks among them too)."""


class PlayoutMeter(LuckMeter):
    """Luck by playouts (``--variance-reduction playouts[:N[:BOT]]``): a state's value for each seat is its mean return
    over ``playouts`` games played out from the full state in the game's compiled kernel, with fresh chance and
    the piles of unseen order shuffled afresh in each.

    Who plays them out: where the game's kernel has a table of seats (``TableVectorEnv``: MiniSteel, Wyvern),
    the bots that sat at the table, as far as it can seat them: the heuristic in compiled code, ``random`` and
    a network (any bot with ``act_batch``: ``zoo:ministeel``, an ONNX file, a checkpoint) from here, each network
    asked once a kernel call for all the games it decides in; for seats it cannot play (searches, programs,
    language models) ``stand_in`` does (``playouts:N:BOT``; the heuristic by default, and always in Tiny Minotaur,
    which has no table of seats). With bots that name their moves and are all seated, the value is then the
    expectation of the seat's return under the very bots that play, which does not move at their decisions: the
    luck is what the dice did, up to the playouts' noise. A stand-in changes how much luck is found, not its mean
    (any value does).

    One event's states (its actual outcome and its samples) are played out on the same ``playouts`` seeds, so
    that the playouts' own noise largely cancels in their difference (common random numbers: without it, the
    noise of ~50 events a game swamps the luck); the seeds come from the record, apart from the game's chance,
    so a figure is repeatable and the luck keeps mean zero."""

    def __init__(self, game: Game, config: Any, playouts: int = DEFAULT_PLAYOUTS, samples: int = DEFAULT_SAMPLES,
                 seats: dict[str, str] | None = None, stand_in: str = "heuristic"):
        import importlib

        super().__init__(game, config, lambda rows: None, samples)
        if isinstance(playouts, bool) or not isinstance(playouts, int) or not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"playouts={playouts!r} must be a whole number from 1 to {MAX_PLAYOUTS}")
        if game.name not in PLAYOUT_GAMES:
            raise ValueError(f"--variance-reduction playouts is offered for MiniSteel, Wyvern and Tiny Minotaur, "
                             f"not {game.title}; valid there: a bot with a value head (--variance-reduction BOT)")
        self.kernel = importlib.import_module(f"tavernzoo.envs.{game.name}.kernel")
        reason = self.kernel.unsupported(self.config)
        if reason is not None:
            raise ValueError(f"--variance-reduction playouts: {reason}")
        self.compiled = importlib.import_module(f"tavernzoo.agents.{game.name}_kernel")
        self.playouts = playouts
        # Where each pile of unseen order lies in a kernel row: (its first field, the field holding its length).
        self.piles = [self.kernel.UNSEEN_ORDER_ROWS[name] for name in self.unseen]
        try:  # the game's table of seats, where its kernel has one
            self.vector: Any = importlib.import_module(f"tavernzoo.envs.{game.name}.vector")
            self.table = self.vector.TableVectorEnv
        except (ImportError, AttributeError):
            self.vector = self.table = None
        self.options = dataclasses.asdict(self.config) if dataclasses.is_dataclass(self.config) else {}
        self.stand_in = self._seat_bot(stand_in)  # who plays the seats the kernel cannot (None: the heuristic)
        if stand_in != "heuristic" and self.stand_in is None:
            seatable = ("heuristic, random or a network (zoo:" + game.name + ", an ONNX file, a checkpoint)"
                        if self.table else "the heuristic alone (it has no table of seats)")
            raise ValueError(f"--variance-reduction playouts:{playouts}:{stand_in}: a stand-in must be a bot "
                             f"{game.title}'s kernel can seat: {seatable}")
        seated = {label: self._seat_bot(spec) for label, spec in (seats or {}).items()}
        self.seat_bots = {label: self.stand_in if bot is None else bot for label, bot in seated.items()}
        self._seeds = random.Random(0)
        self._labels: list[str] = []

    def _seat_bot(self, spec: str) -> Any:
        """How playouts play a seat of ``spec``: "heuristic" (compiled), "random", a network bot (asked in
        batches), or None (the heuristic stands in)."""
        from ..agents import BotSpec, load_bot
        from ..agents.base import as_bot

        if self.table is None:
            return None
        parsed = BotSpec.parse(spec)
        if parsed.kind == "name" and parsed.mode is None and parsed.name in ("heuristic", "random"):
            return parsed.name
        if parsed.traits.every_game:
            return None
        bot = as_bot(load_bot(spec, self.game, self.config, seed=0))
        return bot if getattr(bot, "act_batch", None) is not None else None

    def luck(self, record: dict[str, Any]) -> list[float]:
        self._seeds = random.Random(f"tavernzoo-playouts:{record.get('seed')}:{record.get('seats')}")
        self._labels = list(record.get("seats") or [])
        return super().luck(record)

    def _values(self, states: Sequence[Any], events: Sequence[int]) -> np.ndarray:
        """Each state written into the kernel once, its row copied for every playout, and each copy given the
        generator of its playout's seed (``Chance(seed)``, the kernel's ``seed_generator``) and its piles of
        unseen order shuffled by that seed's permutation (the same for one event's states)."""
        from ..envs.compiled import seed_generator

        out = np.zeros((len(states), self.seats))
        live, seeds, first = [], [], 0
        for size in events:
            event_seeds = [self._seeds.randrange(2**63) for _ in range(self.playouts)]
            for k in range(first, first + size):
                if self.rules.is_terminal(states[k]):
                    out[k] = self.rules.returns(states[k])
                else:
                    live.append(k)
                    seeds.append(event_seeds)
            first += size
        if not live:
            return out
        unique = []
        for k in live:
            sample = self.rules.clone(states[k])
            sample.chance = Chance(0)  # the kernel takes no scripted chance; each copy is seeded below
            unique.append(sample)
        rows = self.kernel.from_states(unique)
        copies = np.repeat(np.arange(len(live)), self.playouts)
        batch = type(rows)(rows.state[copies], rows.chance[copies], [rows.configs[0]] * len(copies))
        permutations: dict[tuple[int, int], np.ndarray] = {}
        playouts = np.tile(np.arange(self.playouts), len(live))
        for row, (owner, playout) in enumerate(zip(copies.tolist(), playouts.tolist(), strict=True)):
            seed = seeds[owner][playout]
            seed_generator(batch.chance[row], seed)
            for start, length in self.piles:
                size = int(batch.state[row, length])
                key = (seed, size)
                if key not in permutations:
                    permutations[key] = np.random.default_rng(seed).permutation(size)
                batch.state[row, start:start + size] = batch.state[row, start:start + size][permutations[key]]
        returns = self.play_out(batch, self._labels)[:, :self.seats]
        out[live] = returns.reshape(len(live), self.playouts, self.seats).mean(axis=1)
        return out

    def play_out(self, batch: Any, labels: Sequence[str]) -> np.ndarray:
        """Every game of ``batch`` (a kernel batch) played to its end by the bots of the seats labelled ``labels``
        (as the records label them; the class docstring says who plays); each seat's return, ``(games, seats)``."""
        players = [self.seat_bots.get(label, self.stand_in) for label in labels[:self.seats]]
        players += [None] * (self.seats - len(players))
        if any(player is not None and player != "heuristic" for player in players):
            batch = self._play_seated(batch, players)
        returns, _ = self.compiled.rollout_heuristic(batch)  # what is left has only the heuristic to play
        return returns[:, :self.seats]

    def _play_seated(self, batch: Any, players: list[Any]) -> Any:
        """Play ``batch`` on in the game's table of seats until every seat that is not the heuristic's is out
        (the heuristic's seats in compiled code; a network's and random seats from here, each network asked
        once a call for all the games it decides in); the batch as it then stands."""
        V = self.vector
        count = len(batch)
        table = self.table(count, bots=(self.compiled.HEURISTIC,), **self.options)
        python = [seat for seat, player in enumerate(players) if player is not None and player != "heuristic"]
        controls = [V.PYTHON if seat in python else V.FIRST_BOT for seat in range(self.seats)]
        table.load(batch, [python[0]] * count, [controls] * count)
        state = table._games.batch.state
        alive = getattr(self.kernel, "ALIVE", None)  # Wyvern knocks no one out: every seat is in to the end
        picks = np.random.default_rng(self._seeds.randrange(2**63))  # the random seats' moves
        actions = np.full(count, V.NO_ACTION, dtype=np.int64)
        waiting = np.ones(count, dtype=bool)  # games a seat played from here may still decide in
        while waiting.any():
            over = self.kernel.is_terminal(table._games.batch)
            for g in np.flatnonzero(waiting & (actions == V.NO_ACTION)).tolist():
                seat = next((seat for seat in python if alive is None or state[g, alive + seat]), None)
                if seat is None or over[g]:
                    waiting[g], actions[g] = False, V.SKIP
                else:  # the table plays on until its learner is out; then the next seat of ours still in
                    table.learners[g] = seat
            ends = table.play(actions)
            actions.fill(V.SKIP)
            actions[np.flatnonzero(waiting & (ends != 0))] = V.NO_ACTION
            deciding = np.flatnonzero(waiting & (ends == 0))
            to_act = state[deciding, self.kernel.TO_ACT]
            for player in {id(player): player for player in (players[seat] for seat in python)}.values():
                rows = deciding[np.isin(to_act, [seat for seat in python if players[seat] is player])]
                if not rows.size:
                    continue
                if player == "random":
                    masks = table.masks[rows].astype(np.float64)
                    cumulative = np.cumsum(masks / masks.sum(axis=1, keepdims=True), axis=1)
                    chosen = (cumulative < picks.random((rows.size, 1))).sum(axis=1)
                    actions[rows] = np.minimum(chosen, masks.shape[1] - 1)
                else:
                    actions[rows] = player.act_batch(table.observations[rows], table.masks[rows])
        return type(batch)(state.copy(), table._games.batch.chance.copy(), list(batch.configs))


def parse_playouts(spec: str) -> tuple[int, str] | None:
    """The playouts and the stand-in that ``--variance-reduction`` names (``playouts``, ``playouts:N``,
    ``playouts:N:BOT``: BOT plays the seats the kernel cannot, the heuristic by default), or None where it names
    a value bot; ValueError, one line, for a count that is no whole number in range."""
    name, colon, rest = spec.partition(":")
    if name != "playouts":
        return None
    count, _, stand_in = rest.partition(":")
    if not colon:
        return DEFAULT_PLAYOUTS, "heuristic"
    if not count.isdigit() or not 1 <= int(count) <= MAX_PLAYOUTS:
        raise ValueError(f"--variance-reduction {spec}: the playouts are a whole number from 1 to {MAX_PLAYOUTS} "
                         f"(playouts:{DEFAULT_PLAYOUTS}, or playouts:{DEFAULT_PLAYOUTS}:BOT with a stand-in), got "
                         f"{count!r}")
    return int(count), stand_in or "heuristic"


def luck_bots(spec: str) -> list[str]:
    """The bot specs the luck meter of ``spec`` loads beside the table's (files that travel to Ray nodes): the
    value bot, or a playouts' stand-in other than the heuristic."""
    parsed = parse_playouts(spec)
    if parsed is None:
        return [spec]
    return [] if parsed[1] == "heuristic" else [parsed[1]]


def meter_words(spec: str) -> str:
    """What measured the luck, for a table's note: "BOT's value network" or "N playouts of the seated bots"."""
    parsed = parse_playouts(spec)
    if parsed is None:
        return f"{spec}'s value network"
    playouts, stand_in = parsed
    return f"{playouts} playouts of the seated bots ({stand_in} standing in for the seats the kernel cannot play)"


def luck_meter(spec: str, game: Game, config: Any, samples: int = DEFAULT_SAMPLES,
               seats: dict[str, str] | None = None) -> LuckMeter:
    """The meter ``--variance-reduction spec`` names: ``playouts[:N[:BOT]]`` (:class:`PlayoutMeter`) or a bot with a
    value head (:func:`value_bot_meter`). ``seats``: the table's bot specs by their seat label in the records."""
    parsed = parse_playouts(spec)
    if parsed is None:
        return value_bot_meter(spec, game, config, samples, seats)
    return PlayoutMeter(game, config, parsed[0], samples, seats, stand_in=parsed[1])
