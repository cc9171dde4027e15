"""What every game's vector envs share (``envs/<game>/vector.py``): the Python side of the two forms, the
opponents' type, the slots' seed streams and the compiled helpers that read nothing of a game.

A game's vector module compiles its own per-slot functions (deal, play the opponents, observe: they read
its kernel's row layout, which numba freezes into the machine code) and hands them to the classes here
through a :class:`VectorGame`; :class:`LearnerVectorEnv` (a Gymnasium 1.x ``VectorEnv``) and
:class:`SelfPlayVectorEnv` do the rest the same way for every game: argument checks with one-line errors,
seeds, autoreset bookkeeping, infos laid out as gymnasium's ``SyncVectorEnv`` lays them out. What the two
forms give is documented in each game's vector module (envs/ministeel/vector.py, envs/wyvern/vector.py).
:class:`TableVectorEnv`, the tables whose seats Python plays beside compiled bots (training against a league),
is shared the same way.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .compiled import Kernel, numba, policy_random
from .core import make_config, plain_int

prange = numba.prange if numba is not None else range


def opponent_type():
    """The numba type of an opponent's compiled decision: ``(row, legal, count, policy_state) -> action``."""
    from numba import types

    return types.FunctionType(types.int64(types.int64[::1], types.int64[::1], types.int64, types.uint64[::1]))


def _argument_types() -> dict:
    from numba import types

    return {"s": types.int64[::1], "legal": types.int64[::1]}


SHARED = Kernel(_argument_types)  # every game's VECTOR kernel includes it

# What happened to a game in a call (bits of ``ends``).
ENDED, TRUNCATED, ILLEGAL, DEALT, NO_DECISION, OPPONENT_ILLEGAL = 1, 2, 4, 8, 16, 32
REDEALS = 1000  # deals in a row without a decision for the learner before the options are blamed
DEAL_STREAM = 0xD1B54A32D192ED03  # sets a slot's stream of deals apart from its opponents' picks


@dataclass(frozen=True)
class Opponent:
    """A policy the learner's opponents play inside compiled code: ``decide(row, legal, count, policy_state)``
    returns one of ``legal[:count]`` (the legal actions, ascending) for the seat to act of the kernel row;
    ``legal`` has room for ``legal_room`` int64 (the actions, then working space the policy may use; at
    least the game's action count whatever is given); ``policy_state`` is the game's uint64 stream state
    (``[0]``: the opponents' picks) for random policies. ``decide`` is compiled with the game kernel's
    decorators (parameter names ``s, legal, count, policy_state``)."""

    name: str
    decide: Any
    legal_room: int = 0


@SHARED.compiled
def random_opponent(s, legal, count, policy_state):
    """A uniform pick among the legal actions (the kernels' ``rollout_random``'s, from the slot's own stream)."""
    u, policy_state[0] = policy_random(policy_state[0])
    return legal[np.int64(u * count)]


RANDOM = Opponent("random", random_opponent)


@SHARED.inlined
def next_deal_seed(policy_state):
    """The slot's next game seed (63 bits of splitmix64 over ``policy_state[1]``)."""
    state = policy_state[1] + np.uint64(0x9E3779B97F4A7C15)
    policy_state[1] = state
    z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@SHARED.inlined
def listed(legal, count, action):
    """``action`` is among ``legal[:count]`` (a bot's pick checked against the legal actions it was given)."""
    for i in range(count):
        if legal[i] == action:
            return True
    return False


@SHARED.inlined
def was_legal(legal, action):
    """``action`` is among the legal actions a game's ``observe`` left in ``legal`` (their number in its
    last slot)."""
    return listed(legal, legal[legal.shape[0] - 1], action)


@dataclass(frozen=True)
class VectorGame:
    """One game's part of the vector envs: names for messages, its kernel module (``unsupported``, ``P``,
    ``TO_ACT``), sizes, and the calls into its compiled per-slot loops.

    ``learner_calls(games, parallel, seat, actions, decide, same_step, resets, seeds, final_observations,
    final_masks, rewards)`` and ``self_play_calls(games, parallel, actions, resets, seeds, befores,
    seat_ends)`` run one call of every game of ``games`` (a :class:`_Games`), writing its observations,
    masks, values and ends."""

    title: str
    env_name: str
    heuristic: str
    config_class: type
    kernel: Any
    observation_size: Callable[[Any], int]  # of a config
    num_actions: Callable[[Any], int]
    compile: Callable[[], None]
    new_batch: Callable[[Any, int], Any]
    tables: Callable[[], tuple]
    learner_calls: Callable[..., None]
    self_play_calls: Callable[..., None]
    # :class:`TableVectorEnv`'s calls: ``table_calls(first, second, parallel)`` -> the batch loop with those two
    # bots built in, called ``(states, chances, streams, legal_rows, learners, controller_rows, actions,
    # *tables, observations, action_masks, values, ends)``; ``table_deals(states, chances, resets, first_seeds,
    # *tables)``; ``options_end``: where a row's options end (the fields a deal keeps, a loaded row must match).
    table_calls: Callable[[Opponent, Opponent, bool], Any] | None = None
    table_deals: Callable[..., None] | None = None
    options_end: int = 0
    # ``observe(batch, seats)`` -> ``(observations, masks)`` of seat ``seats[g]`` in every game of a kernel batch
    # (the game's kernel_encode.observe): :meth:`TableVectorEnv.observe_seats`, any seat, not only the deciding one.
    observe: Callable[[Any, Any], tuple] | None = None


# --- the Python side ----------------------------------------------------------------------------------------


SEED_LIMIT = 2**63


def slot_streams(seed: int) -> tuple[int, int]:
    """A slot's two stream states after ``reset(seed=...)`` dealt it from ``Chance(seed)``: the opponents'
    picks (``kernel.rollout_random``'s splitmix64 from ``seed``) and its later deals."""
    return seed, seed ^ DEAL_STREAM


class _Games:
    """What both forms hold: ``G`` kernel rows that keep the seats' memory, their generators and streams,
    and working space per game (no allocation in a step)."""

    def __init__(self, game: VectorGame, num_envs: Any, options: dict[str, Any], legal_room: int, form: str):
        count = plain_int(num_envs)
        if count is None or not 1 <= count <= 1_000_000:
            raise ValueError(f"num_envs must be an integer from 1 to 1000000, got {num_envs!r}")
        self.game = game
        self.config = make_config(game.config_class, None, **options)
        reason = game.kernel.unsupported(self.config)
        if reason is not None:
            raise ValueError(f"the {game.title} {form} runs on the compiled kernel: {reason}; the PettingZoo env "
                             f"(tavernzoo.envs.{game.env_name}) runs without it")
        _passive_openmp()
        game.compile()
        self.count = count
        self.players = self.config.num_players
        self.batch = game.new_batch(self.config, count)
        self.tables = game.tables()  # what the compiled calls read beside the rows (a game's deck tables)
        self.streams = np.zeros((count, 2), dtype=np.uint64)
        self.observation_size = game.observation_size(self.config)
        self.num_actions = game.num_actions(self.config)
        self.legal = np.zeros((count, max(legal_room, self.num_actions) + 1), dtype=np.int64)  # + the count
        self.observations = np.zeros((count, self.observation_size), dtype=np.float32)
        self.masks = np.zeros((count, self.num_actions), dtype=np.int8)
        self.ends = np.zeros(count, dtype=np.int64)
        self.values = np.zeros((count, game.kernel.P), dtype=np.float64)
        self.seed_used: int | None = None

    def seeds_for(self, seed: Any) -> np.ndarray:
        """Each slot's first deal: ``seed + g`` (a fresh seed from the OS when None); the streams set."""
        if seed is None:
            seed = random.SystemRandom().randrange(SEED_LIMIT // 2)
        first = plain_int(seed)
        if first is None or not 0 <= first <= SEED_LIMIT - 1 - self.count:
            raise ValueError(f"seed must be None or an integer from 0 to 2**63 - 1 - num_envs, got {seed!r}")
        self.seed_used = first
        seeds = np.arange(first, first + self.count, dtype=np.int64)
        for g, slot_seed in enumerate(seeds.tolist()):
            self.streams[g] = slot_streams(slot_seed)
        return seeds

    def actions_of(self, actions: Any) -> np.ndarray:
        """``actions`` as int64, one per game and each in the action space; one line naming what is wrong."""
        array = np.asarray(actions)
        if array.shape != (self.count,) or array.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.count} integers, one per game, got shape {array.shape} of "
                             f"{array.dtype}")
        if array.size and (array.min() < 0 or array.max() >= self.num_actions):
            bad = int(array[(array < 0) | (array >= self.num_actions)][0])
            raise ValueError(f"action {bad} is outside the action space: valid actions are 0..{self.num_actions - 1}")
        return np.ascontiguousarray(array, dtype=np.int64)

    def observation_space(self) -> spaces.Dict:
        """The PettingZoo env's observation space of one agent."""
        return spaces.Dict({"observation": spaces.Box(0.0, 1.0, (self.observation_size,), np.float32),
                            "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8)})

    def returned(self, copy: bool) -> dict[str, np.ndarray]:
        if copy:
            return {"observation": self.observations.copy(), "action_mask": self.masks.copy()}
        return {"observation": self.observations, "action_mask": self.masks}

    def raise_failures(self, ends: np.ndarray, who: str) -> None:
        """The one-line error for a game that could not go on (an opponent's illegal move, no decision)."""
        if (ends & OPPONENT_ILLEGAL).any():
            game = int(np.flatnonzero(ends & OPPONENT_ILLEGAL)[0])
            raise ValueError(f"the opponent {who} chose an illegal action in game {game}; its decide() must "
                             "return one of legal[:count]")
        if (ends & NO_DECISION).any():
            raise ValueError(f"the learner's seat got no decision in {REDEALS} deals in a row: these options "
                             f"({self.config}) end games before it decides")


def _check_parallel(parallel: Any) -> bool:
    if not isinstance(parallel, bool):
        raise ValueError(f"parallel must be True or False, got {parallel!r}")
    return parallel


def _passive_openmp() -> None:
    """OpenMP's threads spin while they wait for each other by default: on a machine whose cores other
    processes also use, a parallel step then took five times as long as the serial loop's (bench/
    bench_vector_env.py, load average 9 on 2 cores); waiting passively keeps it level with the serial loop
    there. OpenMP reads this as numba loads the parallel loops (the first vector env compiles or loads
    them), so it is set then, unless the caller set it or something in the process started OpenMP first."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class LearnerVectorEnv(VectorEnv):
    """``num_envs`` games, one learner seat each, opponents played in compiled code (each game's vector module
    docstring).

    ``observation_space`` is the PettingZoo env's ``Dict({"observation", "action_mask"})`` batched;
    ``action_space`` ``MultiDiscrete([actions] * num_envs)``. ``infos`` at the end of an episode hold
    ``returns`` (``(G, 6)``: the game's returns then, every seat's; 0 beyond the table) and, after an
    illegal action, ``illegal_action``; with SAME_STEP they are in ``final_info``, beside ``final_obs``.
    ``copy=False`` returns the env's own observation arrays (overwritten by the next call) instead of copies."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, game: VectorGame, num_envs: int, opponent: str | Opponent = "random", seat: int = 0,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP, parallel: bool = True,
                 copy: bool = True, **options: Any):
        self.opponent = _opponent(opponent, game)
        self._games = games = _Games(game, num_envs, options, self.opponent.legal_room, "vector env")
        self.config = games.config
        number = plain_int(seat)
        if number is None or not 0 <= number < games.players:
            raise ValueError(f"seat must be a seat of the table, 0..{games.players - 1}, got {seat!r}")
        self.seat = number
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.parallel = _check_parallel(parallel)
        self.copy = bool(copy)
        self.num_envs = games.count
        self.single_observation_space = games.observation_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(games.num_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._final_observations = np.zeros_like(games.observations)
        self._final_masks = np.zeros_like(games.masks)
        self._rewards = np.zeros(self.num_envs, dtype=np.float64)
        self._resets = np.zeros(self.num_envs, dtype=np.int64)
        self._no_seeds = np.full(self.num_envs, -1, dtype=np.int64)
        self._no_actions = np.zeros(self.num_envs, dtype=np.int64)
        self._has_reset = False

    def _call(self, actions: np.ndarray, resets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        games = self._games
        games.game.learner_calls(games, self.parallel, self.seat, actions, self.opponent.decide,
                                 int(self.autoreset_mode is AutoresetMode.SAME_STEP), resets, seeds,
                                 self._final_observations, self._final_masks, self._rewards)
        games.raise_failures(games.ends, repr(self.opponent.name))
        return games.ends

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal every game (game ``g`` from ``Chance(seed + g)``) and play to the learner's first decision."""
        if options:
            raise ValueError(f"reset takes no options, got {options!r}")
        seeds = self._games.seeds_for(seed)
        super().reset(seed=self._games.seed_used)
        self._resets.fill(1)
        self._call(self._no_actions, self._resets, seeds)
        self._resets.fill(0)
        self._has_reset = True
        return self._games.returned(self.copy), {}

    def step(self, actions: Any):
        if not self._has_reset:
            raise RuntimeError("step() before reset(): call reset() first")
        games = self._games
        moves = games.actions_of(actions)
        ends = self._call(moves, self._resets, self._no_seeds)
        ended = (ends & ENDED) != 0
        truncated = (ends & TRUNCATED) != 0
        rewards = self._rewards.copy()
        infos: dict[str, Any] = {}
        if self.autoreset_mode is AutoresetMode.NEXT_STEP:
            self._resets = ended.astype(np.int64)  # the next call deals these games and ignores their actions
        if ended.any():  # laid out as gymnasium's SyncVectorEnv lays out its envs' infos (0 where absent)
            episode = {"returns": np.where(ended[:, None], games.values, 0.0), "_returns": ended}
            illegal = (ends & ILLEGAL) != 0
            if illegal.any():
                episode["illegal_action"] = np.where(illegal, moves, 0)
                episode["_illegal_action"] = illegal
            if self.autoreset_mode is AutoresetMode.SAME_STEP:
                final = np.full(self.num_envs, None, dtype=object)
                for g in np.flatnonzero(ended).tolist():
                    final[g] = {"observation": self._final_observations[g].copy(),
                                "action_mask": self._final_masks[g].copy()}
                infos = {"final_obs": final, "_final_obs": ended, "final_info": episode, "_final_info": ended}
            else:
                infos = episode
        return games.returned(self.copy), rewards, ended & ~truncated, truncated, infos

    @property
    def seed_used(self) -> int | None:
        """The seed of the last ``reset`` (drawn from the OS when none was given): game ``g`` was ``seed + g``."""
        return self._games.seed_used

    def __repr__(self) -> str:
        return (f"LearnerVectorEnv({self._games.game.env_name}, num_envs={self.num_envs}, "
                f"opponent={self.opponent.name!r})")


class SelfPlayVectorEnv:
    """``num_envs`` games in which every seat is the caller's (each game's vector module docstring).

    ``reset(seed=...)`` -> ``(observations, seats, infos)``; ``step(actions)`` -> ``(observations, seats,
    rewards, terminations, truncations, infos)``. ``observations`` is the PettingZoo env's
    ``{"observation", "action_mask"}`` of the seat that decides now in each game, batched (``(G, observation
    size)`` float32, ``(G, actions)`` int8); ``seats`` (``(G,)`` int64) says whose it is. ``rewards`` (float64),
    ``terminations`` and ``truncations`` (bool) are ``(G, N)``, by seat: what each seat is paid for this
    step (-1/(N-1) as it is knocked out, +1 to the winner at the end; the PettingZoo env's rewards), and
    whether its episode ends now. A game that ends is dealt afresh in the same call (its first decider's
    observation comes back); ``infos["game_over"]`` (``(G,)`` bool) marks them, ``infos["returns"]``
    (``(G, N)``) holds their final returns, ``infos["illegal_action"]`` the illegal actions that ended a game."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, game: VectorGame, num_envs: int, parallel: bool = True, copy: bool = True, **options: Any):
        self._games = games = _Games(game, num_envs, options, 0, "self-play vector env")
        self.config = games.config
        self.num_envs = games.count
        self.num_players = games.players
        self.parallel = _check_parallel(parallel)
        self.copy = bool(copy)
        self.single_observation_space = games.observation_space()
        self.single_action_space = spaces.Discrete(games.num_actions)
        self._befores = np.zeros((self.num_envs, game.kernel.P), dtype=np.float64)
        self._seat_ends = np.zeros((self.num_envs, game.kernel.P), dtype=np.int64)
        self._resets = np.zeros(self.num_envs, dtype=np.int64)
        self._no_seeds = np.full(self.num_envs, -1, dtype=np.int64)
        self._no_actions = np.zeros(self.num_envs, dtype=np.int64)
        self._has_reset = False

    def _call(self, actions: np.ndarray, resets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        games = self._games
        games.game.self_play_calls(games, self.parallel, actions, resets, seeds, self._befores, self._seat_ends)
        return games.ends

    def seats(self) -> np.ndarray:
        """The seat that decides now in each game."""
        return self._games.batch.state[:, self._games.game.kernel.TO_ACT].copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal every game (game ``g`` from ``Chance(seed + g)``)."""
        if options:
            raise ValueError(f"reset takes no options, got {options!r}")
        seeds = self._games.seeds_for(seed)
        self._resets.fill(1)
        self._call(self._no_actions, self._resets, seeds)
        self._resets.fill(0)
        self._has_reset = True
        return self._games.returned(self.copy), self.seats(), {}

    def step(self, actions: Any):
        if not self._has_reset:
            raise RuntimeError("step() before reset(): call reset() first")
        games = self._games
        moves = games.actions_of(actions)
        ends = self._call(moves, self._resets, self._no_seeds)
        n = self.num_players
        rewards = games.values[:, :n].copy()
        seat_ends = self._seat_ends[:, :n]
        infos: dict[str, Any] = {}
        over = (ends & ENDED) != 0
        if over.any():
            infos = {"game_over": over}
            illegal = (ends & ILLEGAL) != 0
            if illegal.any():
                infos["illegal_action"] = np.where(illegal, moves, -1)
        return games.returned(self.copy), self.seats(), rewards, seat_ends == 1, seat_ends == 2, infos

    @property
    def seed_used(self) -> int | None:
        return self._games.seed_used

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"SelfPlayVectorEnv({self._games.game.env_name}, num_envs={self.num_envs})"


# --- tables whose seats Python plays too (training against a league) -----------------------------------------
# Each seat of a game is played by a controller: Python (the learner, a network opponent: the call stops when
# such a seat owes a decision, so that the network answers every game's seat in one batched forward), or one
# of two compiled bots. An action of SKIP leaves the game untouched; NO_ACTION plays on without one (a game
# just dealt or loaded, or one whose seat waits for an action another call brings).

PYTHON, FIRST_BOT, SECOND_BOT = 0, 1, 2
SKIP, NO_ACTION = -2, -1


class TableVectorEnv:
    """``num_envs`` games whose seats are played from Python or by up to two compiled bots: the Python side of
    each game's ``TableVectorEnv`` (its vector module says what the calls give), with that game's compiled
    calls (``VectorGame.table_calls``, ``table_deals``)."""

    def __init__(self, game: VectorGame, num_envs: int, bots: tuple = (), parallel: bool = False, **options: Any):
        self.bots = tuple(_opponent(bot, game) for bot in bots)
        if len(self.bots) > 2:
            raise ValueError(f"a table vector env plays at most two compiled bots, got {len(self.bots)}: "
                             f"{', '.join(bot.name for bot in self.bots)}")
        room = max([bot.legal_room for bot in self.bots], default=0)
        self._games = games = _Games(game, num_envs, options, room, "table vector env")
        self.config = games.config
        self.num_envs = games.count
        self.num_players = games.players
        self.parallel = _check_parallel(parallel)
        self._calls = game.table_calls(*(*self.bots, RANDOM, RANDOM)[:2], self.parallel)
        self.learners = np.zeros(self.num_envs, dtype=np.int64)
        self.controllers = np.zeros((self.num_envs, game.kernel.P), dtype=np.int64)
        self.observations, self.masks, self.values = games.observations, games.masks, games.values
        self._resets = np.zeros(self.num_envs, dtype=np.int64)
        self._seeds = np.zeros(self.num_envs, dtype=np.int64)

    def _seating(self, learners: Any, controllers: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The learners' seats (``(count,)``) and every seat's controller (``(count, N)``) as int64, checked:
        one ValueError line naming what is wrong."""
        n = self.num_players
        try:
            seats = np.broadcast_to(np.asarray(learners, dtype=np.int64), (count,))
            kinds = np.broadcast_to(np.asarray(controllers, dtype=np.int64), (count, n))
        except (TypeError, ValueError):
            raise ValueError(f"learners must be {count} seats and controllers {count} rows of {n} controllers, got "
                             f"shapes {np.shape(learners)} and {np.shape(controllers)}") from None
        if ((seats < 0) | (seats >= n)).any():
            bad = int(seats[(seats < 0) | (seats >= n)][0])
            raise ValueError(f"a learner's seat must be a seat of the table, 0..{n - 1}, got {bad}")
        if not np.isin(kinds, (PYTHON, FIRST_BOT, SECOND_BOT)).all():
            bad = int(kinds[~np.isin(kinds, (PYTHON, FIRST_BOT, SECOND_BOT))][0])
            raise ValueError(f"a controller is PYTHON ({PYTHON}), FIRST_BOT ({FIRST_BOT}) or SECOND_BOT "
                             f"({SECOND_BOT}), got {bad}")
        if (kinds[np.arange(count), seats] != PYTHON).any():
            raise ValueError("the learner's seat must be played from Python (controller PYTHON)")
        return seats, kinds

    def deal(self, games: Any, seeds: Any, learners: Any, controllers: Any) -> None:
        """Deal ``games`` afresh (the game's class docstring); nothing is played yet."""
        games = np.asarray(games, dtype=np.int64)
        seats, kinds = self._seating(learners, controllers, len(games))
        self._resets.fill(0)
        self._resets[games] = 1
        self._seeds[games] = seeds
        self.learners[games] = seats
        self.controllers[games, :self.num_players] = kinds
        for g, seed in zip(games.tolist(), np.asarray(seeds).tolist(), strict=True):
            self._games.streams[g] = slot_streams(int(seed))
        self._games.game.table_deals(self._games.batch.state, self._games.batch.chance, self._resets, self._seeds,
                                     *self._games.tables)

    def load(self, batch: Any, learners: Any, controllers: Any) -> None:
        """Take games from a kernel batch (``kernel.from_states(...)``: their rows and generators) in place of
        dealing: slot g holds batch game g (len(batch) must equal num_envs), with the learner's seat and
        every seat's controller as ``deal`` takes them; nothing is played yet. The batch's games must have
        this env's options (MiniSteel's rows tracking what each seat knows, ``from_states``' default); slot
        g's streams (a random bot's picks) start from ``slot_streams(g)``. Play on with ``NO_ACTION``."""
        games = self._games
        rows, chances = games.batch.state, games.batch.chance
        if len(batch) != self.num_envs:
            raise ValueError(f"load takes one game per slot: a batch of {self.num_envs} games (num_envs), got "
                             f"{len(batch)}")
        if batch.state.shape[1:] != rows.shape[1:] or batch.chance.shape[1:] != chances.shape[1:]:
            raise ValueError(f"the batch's rows are {batch.state.shape[1:]} and {batch.chance.shape[1:]} wide, this "
                             f"env's {rows.shape[1:]} and {chances.shape[1:]}: load a batch of the "
                             f"{games.game.title} kernel (kernel.from_states)")
        end = games.game.options_end
        differs = batch.state[:, :end] != rows[0, :end]
        if differs.any():
            g, at = (int(i) for i in np.argwhere(differs)[0])
            raise ValueError(f"batch game {g} was made with other options than this env's: "
                             f"{games.game.kernel.LAYOUT.describe(at)} is {int(batch.state[g, at])}, the env's "
                             f"{int(rows[0, at])}")
        seats, kinds = self._seating(learners, controllers, self.num_envs)
        rows[:] = batch.state
        chances[:] = batch.chance
        self.learners[:] = seats
        self.controllers[:, :self.num_players] = kinds
        for g in range(self.num_envs):
            games.streams[g] = slot_streams(g)
        games.legal[:, -1] = 0  # no legal action listed until a call observes: only NO_ACTION (or SKIP) plays
        games.ends.fill(0)
        games.tables = games.game.tables()  # the decks a loaded game names (a deck file met since the env was made)

    def play(self, actions: np.ndarray) -> np.ndarray:
        """Play every game not SKIPped (the game's class docstring); the ends bits per game (SKIPped games keep
        theirs)."""
        games = self._games
        self._calls(games.batch.state, games.batch.chance, games.streams, games.legal, self.learners,
                    self.controllers, np.ascontiguousarray(actions, dtype=np.int64), *games.tables,
                    games.observations, games.masks, games.values, games.ends)
        games.raise_failures(games.ends, "bot")
        return games.ends

    def to_act(self) -> np.ndarray:
        """The seat that decides now in each game."""
        return self._games.batch.state[:, self._games.game.kernel.TO_ACT].copy()

    def observe_seats(self, games: Any, seats: Any) -> np.ndarray:
        """The observation of seat ``seats[i]`` in game ``games[i]`` as the game stands, whoever decides there:
        float32 ``(len(games), observation_size)``, as the PettingZoo env's ``observe`` gives it (a privileged
        critic's view of the other seats: train/kernel_env.py)."""
        batch = self._games.batch
        games = np.asarray(games, dtype=np.int64)
        if not games.size:
            return np.zeros((0, self._games.observation_size), dtype=np.float32)
        rows = type(batch)(batch.state[games], batch.chance[games], [batch.configs[g] for g in games.tolist()])
        return self._games.game.observe(rows, seats)[0]

    def __repr__(self) -> str:
        return (f"TableVectorEnv({self._games.game.env_name}, num_envs={self.num_envs}, "
                f"bots={[bot.name for bot in self.bots]})")


def _opponent(opponent: Any, game: VectorGame) -> Opponent:
    if isinstance(opponent, Opponent):
        return opponent
    if opponent == "random":
        return RANDOM
    raise ValueError(f"opponent={opponent!r} is not valid: 'random', or an Opponent such as the heuristic bot's "
                     f"compiled form, {game.heuristic}")


def _autoreset_mode(mode: Any) -> AutoresetMode:
    valid = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
    for choice in valid:
        if mode is choice or mode == choice.value:
            return choice
    raise ValueError(f"autoreset_mode={mode!r} is not supported; choose one of: "
                     f"{', '.join(repr(choice.value) for choice in valid)}")
