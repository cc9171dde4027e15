"""MiniSteel as batched envs on the compiled kernel: many games stepped per call, observations and masks written
in compiled code. The PettingZoo env (``ministeel_v2``) stays the public API beside them, and the reference:
the same options, the same observation (``{"observation", "action_mask"}``, :mod:`.encode`'s layout, written
by :mod:`.kernel_encode`), the same rewards.

Two forms
---------
* :func:`vector_env` -> :class:`LearnerVectorEnv`, a Gymnasium 1.x ``VectorEnv``: in each of ``num_envs``
  games one seat (``seat``) is the learner's and every other seat is an opponent played inside compiled
  code (``opponent``: ``"random"``, or an :class:`Opponent` such as the heuristic bot's compiled form,
  ``tavernzoo.agents.ministeel_kernel.HEURISTIC``) until the learner owes a decision (its turn, a
  reaction, a Card Draw window) or its game is over for it. ``step(actions)`` returns the learner's
  observations ``{"observation": float32 (G, 293), "action_mask": int8 (G, 141)}``, rewards (its return
  when its episode ends: -1/(N-1) when it is knocked out, +1 for a win, 0 otherwise; nothing before),
  terminations and truncations (a game cut off by ``max_turns`` / ``max_decisions``), as the PettingZoo
  env pays that seat.
* :func:`self_play_vector_env` -> :class:`SelfPlayVectorEnv`, the multi-agent batched form: every seat is
  the caller's. Each game hands over the observation and mask of the seat that decides now and that
  seat's number; ``step`` returns rewards, terminations and truncations per game and seat (``(G, N)``:
  a seat's episode ends when it is knocked out or the game ends).

Both autoreset: a game that ends is dealt afresh in the same call. The learner form follows Gymnasium's
``AutoresetMode.SAME_STEP`` by default (the new game's first observation comes back at once, the final one
in ``infos["final_obs"]``, so a masked policy never sees an all-zero mask) and takes ``NEXT_STEP`` too
(the final observation comes back, and the next ``step`` deals, ignoring that game's action). A game in
which the learner is out before its first decision is dealt again (it gives nothing to learn), as
train/selfplay.py's ``LearnerEnv`` does.

An illegal action (one the mask forbids) loses and ends that game, as in PettingZoo classic: reward -1
for the seat that played it (``infos["illegal_action"]``); an action outside the action space is refused
before any game moves (ValueError).

Seeds: ``reset(seed=s)`` deals game ``g`` from ``Chance(s + g)``, the game the PettingZoo env deals on
``reset(seed=s + g)``; every later deal of that slot, and the random opponents' picks, come from splitmix64
streams seeded from ``s + g`` (:func:`slot_streams`). The same seed and actions give the same games, on one
thread or many: with ``parallel=True`` (the default) the games of a call are spread over every core
(numba's ``prange``); each game touches only its own rows, so the results are those of the serial loop.

Options: every option of ``ministeel_v2`` (``tavernzoo games``), checked as the env checks them. Without
numba the vector envs refuse with one line (the PettingZoo env runs without it).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..compiled import Kernel, numba, policy_random, seed_generator
from ..core import make_config, plain_int
from . import encode as E
from . import kernel as K
from . import kernel_encode as KE
from .rules import GAME_OVER, NUM_ACTIONS, Config

prange = numba.prange if numba is not None else range


def _opponent_type():
    """The numba type of an opponent's compiled decision: ``(row, legal, count, policy_state) -> action``."""
    from numba import types

    return types.FunctionType(types.int64(types.int64[::1], types.int64[::1], types.int64, types.uint64[::1]))


def _argument_types() -> dict:
    from numba import types

    return {**KE._argument_types(), "opponent": _opponent_type(), "streams": types.uint64[:, ::1],
            "legal_rows": types.int64[:, ::1], "first_seeds": types.int64[::1], "resets": types.int64[::1],
            "final_observations": types.float32[:, ::1], "final_masks": types.int8[:, ::1],
            "final_observation": types.float32[::1], "final_mask": types.int8[::1],
            "rewards": types.float64[::1], "ends": types.int64[::1], "seat_ends": types.int64[:, ::1],
            "seat_ends_row": types.int64[::1], "befores": types.float64[:, ::1], "before_row": types.float64[::1],
            "first_bot": _opponent_type(), "second_bot": _opponent_type(), "controllers": types.int64[::1],
            "controller_rows": types.int64[:, ::1], "learners": types.int64[::1]}


VECTOR = Kernel(_argument_types, includes=(KE.ENCODER,))

# What happened to a game in a call (bits of ``ends``).
ENDED, TRUNCATED, ILLEGAL, DEALT, NO_DECISION, OPPONENT_ILLEGAL = 1, 2, 4, 8, 16, 32
REDEALS = 1000  # deals in a row without a decision for the learner before the options are blamed
DEAL_STREAM = 0xD1B54A32D192ED03  # sets a slot's stream of deals apart from its opponents' picks


# --- opponents ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Opponent:
    """A policy the learner's opponents play inside compiled code: ``decide(row, legal, count, policy_state)``
    returns one of ``legal[:count]`` (the legal actions, ascending) for the seat to act of the kernel row;
    ``legal`` has room for ``legal_room`` int64 (the actions, then working space the policy may use);
    ``policy_state`` is the game's uint64 stream state (``[0]``: the opponents' picks) for random policies.
    ``decide`` is compiled with the kernel's decorators (parameter names ``s, legal, count, policy_state``)."""

    name: str
    decide: Any
    legal_room: int = NUM_ACTIONS


@VECTOR.compiled
def random_opponent(s, legal, count, policy_state):
    """A uniform pick among the legal actions (``kernel.rollout_random``'s, from the slot's own stream)."""
    u, policy_state[0] = policy_random(policy_state[0])
    return legal[np.int64(u * count)]


RANDOM = Opponent("random", random_opponent)


# --- one game of a slot -------------------------------------------------------------------------------------


@VECTOR.inlined
def next_deal_seed(policy_state):
    """The slot's next game seed (63 bits of splitmix64 over ``policy_state[1]``)."""
    state = policy_state[1] + np.uint64(0x9E3779B97F4A7C15)
    policy_state[1] = state
    z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@VECTOR.compiled
def deal(s, mt, seed):
    """``rules.new_game(config, Chance(seed))`` into a used row (its options and ``track_known`` kept)."""
    for i in range(K.HP, s.shape[0]):  # every State field starts at 0, as in a fresh row
        s[i] = 0
    seed_generator(mt, seed)
    K.new_game(s, mt)


@VECTOR.compiled
def observe(s, seat, legal, observation, mask):
    """``seat``'s observation and mask; its legal actions stay in ``legal``, their number in its last slot
    (what :func:`was_legal` checks the next action against, instead of listing them again)."""
    KE.encode_row(s, seat, observation)
    legal[legal.shape[0] - 1] = KE.mask_row(s, seat, legal, mask)


@VECTOR.inlined
def was_legal(legal, action):
    """``action`` is among the legal actions :func:`observe` left in ``legal``."""
    for i in range(legal[legal.shape[0] - 1]):
        if legal[i] == action:
            return True
    return False


@VECTOR.inlined
def learner_out(s, seat):
    return s[K.PHASE] == GAME_OVER or not s[K.ALIVE + seat]


@VECTOR.compiled
def advance(s, mt, seat, opponent, legal, policy_state):
    """Play the opponents until the learner decides or is out; False if an opponent chose an illegal action."""
    while not learner_out(s, seat) and s[K.TO_ACT] != seat:
        count = K.legal_actions(s, legal)
        action = opponent(s, legal, count, policy_state)
        found = False
        for i in range(count):
            if legal[i] == action:
                found = True
                break
        if not found:
            return False
        K.apply_legal(s, mt, action)
    return True


@VECTOR.compiled
def start(s, mt, seat, opponent, legal, policy_state, seed):
    """Deal (from ``seed``, or the slot's next seed when it is -1) and play to the learner's first decision,
    dealing again while the learner is out before it; 0, or NO_DECISION / OPPONENT_ILLEGAL."""
    if seed < 0:
        seed = next_deal_seed(policy_state)
    for _ in range(REDEALS):
        deal(s, mt, seed)
        if not advance(s, mt, seat, opponent, legal, policy_state):
            return OPPONENT_ILLEGAL
        if not learner_out(s, seat):
            return 0
        seed = next_deal_seed(policy_state)
    return NO_DECISION


@VECTOR.inlined
def end_bits(s):
    """ENDED, with TRUNCATED when the game was cut off (``rules.is_truncated``)."""
    reason = s[K.END_REASON]
    cut = s[K.PHASE] == GAME_OVER and (reason == K.TURN_LIMIT or reason == K.DECISION_LIMIT)
    return ENDED | (TRUNCATED if cut else 0)


@VECTOR.compiled
def learner_game(s, mt, policy_state, legal, seat, action, opponent, same_step, reset, seed, observation, mask,
                 final_observation, final_mask, values_row):
    """One slot of :class:`LearnerVectorEnv` for one call: deal (``reset``) or play the learner's ``action`` and
    the opponents after it; write the learner's observation and mask. Returns ``(ends bits, reward)``;
    ``values_row`` gets the game's returns when the learner's episode ends."""
    if reset:
        code = start(s, mt, seat, opponent, legal, policy_state, seed)
        if code:
            return code, 0.0
        observe(s, seat, legal, observation, mask)
        return DEALT, 0.0
    if not was_legal(legal, action):
        code, reward = ENDED | ILLEGAL, -1.0
    else:
        K.apply_legal(s, mt, action)
        if not advance(s, mt, seat, opponent, legal, policy_state):
            return OPPONENT_ILLEGAL, 0.0
        if not learner_out(s, seat):
            observe(s, seat, legal, observation, mask)
            return 0, 0.0
        code = end_bits(s)
    K.game_returns(s, values_row)
    if not code & ILLEGAL:
        reward = values_row[seat]
    if not same_step:  # NEXT_STEP: the final observation now, the deal on the next call
        observe(s, seat, legal, observation, mask)
        return code, reward
    observe(s, seat, legal, final_observation, final_mask)
    dealt = start(s, mt, seat, opponent, legal, policy_state, -1)
    if dealt:
        return dealt, reward
    observe(s, seat, legal, observation, mask)
    return code | DEALT, reward


@VECTOR.compiled_allocating
def _learner_calls_serial(states, chances, streams, legal_rows, seat, actions, opponent, same_step, resets,
                          first_seeds, observations, action_masks, final_observations, final_masks, values,
                          rewards, ends):
    for g in range(states.shape[0]):
        ends[g], rewards[g] = learner_game(states[g], chances[g], streams[g], legal_rows[g], seat, actions[g],
                                           opponent, same_step, resets[g], first_seeds[g], observations[g],
                                           action_masks[g], final_observations[g], final_masks[g], values[g])


@VECTOR.compiled_parallel
def _learner_calls_parallel(states, chances, streams, legal_rows, seat, actions, opponent, same_step, resets,
                            first_seeds, observations, action_masks, final_observations, final_masks, values,
                            rewards, ends):
    for g in prange(states.shape[0]):
        ends[g], rewards[g] = learner_game(states[g], chances[g], streams[g], legal_rows[g], seat, actions[g],
                                           opponent, same_step, resets[g], first_seeds[g], observations[g],
                                           action_masks[g], final_observations[g], final_masks[g], values[g])


@VECTOR.compiled
def self_play_game(s, mt, policy_state, legal, action, reset, seed, observation, mask, values_row, before_row,
                   seat_ends_row):
    """One slot of :class:`SelfPlayVectorEnv` for one call: deal (``reset``) or play ``action`` for the seat to
    act; on an end deal afresh. ``values_row`` gets each seat's reward (its return's change: -1/(N-1) as it
    is knocked out, +1 to the winner), ``seat_ends_row`` 1 for each seat whose episode ends now (2: cut
    off). Returns the ends bits; the new seat to act is the row's TO_ACT."""
    n = s[K.N]
    for seat in range(n):
        values_row[seat] = 0.0
        seat_ends_row[seat] = 0
    if reset:
        deal(s, mt, seed if seed >= 0 else next_deal_seed(policy_state))
        observe(s, s[K.TO_ACT], legal, observation, mask)
        return DEALT
    actor = s[K.TO_ACT]
    code = 0
    if not was_legal(legal, action):
        code = ENDED | ILLEGAL
        values_row[actor] = -1.0
        for seat in range(n):
            if s[K.ALIVE + seat]:
                seat_ends_row[seat] = 1
    else:
        K.game_returns(s, before_row)
        K.apply_legal(s, mt, action)
        K.game_returns(s, values_row)
        over = s[K.PHASE] == GAME_OVER
        if over:
            code = end_bits(s)
        for seat in range(n):
            values_row[seat] -= before_row[seat]
            if s[K.OUT_AT + seat] == s[K.DECISIONS] and not s[K.ALIVE + seat]:
                seat_ends_row[seat] = 1  # knocked out by this decision
            elif over and s[K.ALIVE + seat]:
                seat_ends_row[seat] = 2 if code & TRUNCATED else 1
    if code:
        deal(s, mt, next_deal_seed(policy_state))
        code |= DEALT
    observe(s, s[K.TO_ACT], legal, observation, mask)
    return code


@VECTOR.compiled_allocating
def _self_play_calls_serial(states, chances, streams, legal_rows, actions, resets, first_seeds, observations,
                            action_masks, values, befores, seat_ends, ends):
    for g in range(states.shape[0]):
        ends[g] = self_play_game(states[g], chances[g], streams[g], legal_rows[g], actions[g], resets[g],
                                 first_seeds[g], observations[g], action_masks[g], values[g], befores[g],
                                 seat_ends[g])


@VECTOR.compiled_parallel
def _self_play_calls_parallel(states, chances, streams, legal_rows, actions, resets, first_seeds, observations,
                              action_masks, values, befores, seat_ends, ends):
    for g in prange(states.shape[0]):
        ends[g] = self_play_game(states[g], chances[g], streams[g], legal_rows[g], actions[g], resets[g],
                                 first_seeds[g], observations[g], action_masks[g], values[g], befores[g],
                                 seat_ends[g])


# --- tables whose seats Python plays too (training against a league) -----------------------------------------
# Each seat of a game is played by a controller: Python (the learner, a network opponent: the call stops when
# such a seat owes a decision, so that the network answers every game's seat in one batched forward), or one
# of two compiled bots. An action of SKIP leaves the game untouched; NO_ACTION plays on without one (a game
# just dealt, or one whose seat waits for an action another call brings).

PYTHON, FIRST_BOT, SECOND_BOT = 0, 1, 2
SKIP, NO_ACTION = -2, -1


@VECTOR.compiled
def play_compiled_seats(s, mt, seat, controllers, first_bot, second_bot, legal, policy_state):
    """Play the compiled bots' seats until a Python seat owes a decision or ``seat`` (the learner) is out;
    False if a bot chose an illegal action."""
    while not learner_out(s, seat):
        kind = controllers[s[K.TO_ACT]]
        if kind == PYTHON:
            return True
        count = K.legal_actions(s, legal)
        if kind == FIRST_BOT:
            action = first_bot(s, legal, count, policy_state)
        else:
            action = second_bot(s, legal, count, policy_state)
        found = False
        for i in range(count):
            if legal[i] == action:
                found = True
                break
        if not found:
            return False
        K.apply_legal(s, mt, action)
    return True


@VECTOR.compiled
def table_game(s, mt, policy_state, legal, seat, controllers, action, first_bot, second_bot, observation, mask,
               values_row):
    """One game of :class:`TableVectorEnv` for one call: play ``action`` (if not NO_ACTION) for the Python seat
    that owes it, then the compiled seats. Returns 0 when a Python seat decides now (the row's TO_ACT; its
    observation and mask written), ENDED (with TRUNCATED when the game was cut off with the learner still in)
    when the learner's episode is over (the learner's final observation written, ``values_row`` the game's
    returns), ENDED | ILLEGAL for an action the mask forbade, OPPONENT_ILLEGAL for a bot's."""
    if action >= 0:
        if not was_legal(legal, action):
            K.game_returns(s, values_row)
            observe(s, seat, legal, observation, mask)
            return ENDED | ILLEGAL
        K.apply_legal(s, mt, action)
    if not play_compiled_seats(s, mt, seat, controllers, first_bot, second_bot, legal, policy_state):
        return OPPONENT_ILLEGAL
    if learner_out(s, seat):
        K.game_returns(s, values_row)
        code = end_bits(s) if s[K.ALIVE + seat] else ENDED
        observe(s, seat, legal, observation, mask)
        return code
    observe(s, s[K.TO_ACT], legal, observation, mask)
    return 0


_TABLE_CALLS: dict = {}


def table_calls(first: Opponent, second: Opponent, parallel: bool) -> Any:
    """The batch loop of :class:`TableVectorEnv` with its two bots built in: handing numba a compiled
    function as an argument costs it a lookup per function and call (about a millisecond a call, more than
    the games' step), so each pair of bots gets its own loop, compiled once per process (a few seconds)."""
    key = (first.decide, second.decide, parallel)
    if key not in _TABLE_CALLS:
        first_bot, second_bot = first.decide, second.decide
        loop = prange if parallel else range

        def calls(states, chances, streams, legal_rows, learners, controller_rows, actions, observations,
                  action_masks, values, ends):
            for g in loop(states.shape[0]):
                if actions[g] != SKIP:
                    ends[g] = table_game(states[g], chances[g], streams[g], legal_rows[g], learners[g],
                                         controller_rows[g], actions[g], first_bot, second_bot, observations[g],
                                         action_masks[g], values[g])

        _TABLE_CALLS[key] = numba.njit(parallel=parallel)(calls)
    return _TABLE_CALLS[key]


@VECTOR.compiled_allocating
def _table_deals(states, chances, resets, first_seeds):
    for g in range(states.shape[0]):
        if resets[g]:
            deal(states[g], chances[g], first_seeds[g])


# --- the Python side ----------------------------------------------------------------------------------------

SEED_LIMIT = 2**63


def slot_streams(seed: int) -> tuple[int, int]:
    """A slot's two stream states after ``reset(seed=...)`` dealt it from ``Chance(seed)``: the opponents'
    picks (``kernel.rollout_random``'s splitmix64 from ``seed``) and its later deals."""
    return seed, seed ^ DEAL_STREAM


class _Games:
    """What both forms hold: ``G`` kernel rows that keep the seats' memory, their generators and streams,
    and working space per game (no allocation in a step)."""

    def __init__(self, num_envs: Any, options: dict[str, Any], legal_room: int, form: str):
        count = plain_int(num_envs)
        if count is None or not 1 <= count <= 1_000_000:
            raise ValueError(f"num_envs must be an integer from 1 to 1000000, got {num_envs!r}")
        self.config = make_config(Config, None, **options)
        reason = K.unsupported(self.config)
        if reason is not None:
            raise ValueError(f"the MiniSteel {form} runs on the compiled kernel: {reason}; the PettingZoo env "
                             "(tavernzoo.envs.ministeel_v2) runs without it")
        _passive_openmp()
        VECTOR.compile()
        self.count = count
        self.players = self.config.num_players
        self.batch = K.new_games(self.config, [0] * count, track_known=True)
        self.streams = np.zeros((count, 2), dtype=np.uint64)
        self.legal = np.zeros((count, max(legal_room, NUM_ACTIONS) + 1), dtype=np.int64)  # + the count
        self.observation_size = E.observation_size(self.config)
        self.num_actions = len(E.action_names(self.config))
        self.observations = np.zeros((count, self.observation_size), dtype=np.float32)
        self.masks = np.zeros((count, self.num_actions), dtype=np.int8)
        self.ends = np.zeros(count, dtype=np.int64)
        self.values = np.zeros((count, K.P), dtype=np.float64)
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
    """``num_envs`` MiniSteel games, one learner seat each, opponents played in compiled code (module docstring).

    ``observation_space`` is the PettingZoo env's ``Dict({"observation", "action_mask"})`` batched;
    ``action_space`` ``MultiDiscrete([141] * num_envs)``. ``infos`` at the end of an episode hold
    ``returns`` (``(G, 6)``: the game's returns then, every seat's; 0 beyond the table) and, after an
    illegal action, ``illegal_action``; with SAME_STEP they are in ``final_info``, beside ``final_obs``.
    ``copy=False`` returns the env's own observation arrays (overwritten by the next call) instead of copies."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, opponent: str | Opponent = "random", seat: int = 0,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP, parallel: bool = True,
                 copy: bool = True, **options: Any):
        self.opponent = _opponent(opponent)
        self._games = games = _Games(num_envs, options, self.opponent.legal_room, "vector env")
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
        run = _learner_calls_parallel if self.parallel else _learner_calls_serial
        run(games.batch.state, games.batch.chance, games.streams, games.legal, self.seat, actions,
            self.opponent.decide, int(self.autoreset_mode is AutoresetMode.SAME_STEP), resets, seeds,
            games.observations, games.masks, self._final_observations, self._final_masks, games.values,
            self._rewards, games.ends)
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
        return f"LearnerVectorEnv(ministeel_v2, num_envs={self.num_envs}, opponent={self.opponent.name!r})"


class SelfPlayVectorEnv:
    """``num_envs`` MiniSteel games in which every seat is the caller's (module docstring).

    ``reset(seed=...)`` -> ``(observations, seats, infos)``; ``step(actions)`` -> ``(observations, seats,
    rewards, terminations, truncations, infos)``. ``observations`` is the PettingZoo env's
    ``{"observation", "action_mask"}`` of the seat that decides now in each game, batched (``(G, 293)``
    float32, ``(G, 141)`` int8); ``seats`` (``(G,)`` int64) says whose it is. ``rewards`` (float64),
    ``terminations`` and ``truncations`` (bool) are ``(G, N)``, by seat: what each seat is paid for this
    step (-1/(N-1) as it is knocked out, +1 to the winner at the end; the PettingZoo env's rewards), and
    whether its episode ends now. A game that ends is dealt afresh in the same call (its first decider's
    observation comes back); ``infos["game_over"]`` (``(G,)`` bool) marks them, ``infos["returns"]``
    (``(G, N)``) holds their final returns, ``infos["illegal_action"]`` the illegal actions that ended a game."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, parallel: bool = True, copy: bool = True, **options: Any):
        self._games = games = _Games(num_envs, options, NUM_ACTIONS, "self-play vector env")
        self.config = games.config
        self.num_envs = games.count
        self.num_players = games.players
        self.parallel = _check_parallel(parallel)
        self.copy = bool(copy)
        self.single_observation_space = games.observation_space()
        self.single_action_space = spaces.Discrete(games.num_actions)
        self._befores = np.zeros((self.num_envs, K.P), dtype=np.float64)
        self._seat_ends = np.zeros((self.num_envs, K.P), dtype=np.int64)
        self._resets = np.zeros(self.num_envs, dtype=np.int64)
        self._no_seeds = np.full(self.num_envs, -1, dtype=np.int64)
        self._no_actions = np.zeros(self.num_envs, dtype=np.int64)
        self._has_reset = False

    def _call(self, actions: np.ndarray, resets: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        games = self._games
        run = _self_play_calls_parallel if self.parallel else _self_play_calls_serial
        run(games.batch.state, games.batch.chance, games.streams, games.legal, actions, resets, seeds,
            games.observations, games.masks, games.values, self._befores, self._seat_ends, games.ends)
        return games.ends

    def seats(self) -> np.ndarray:
        """The seat that decides now in each game."""
        return self._games.batch.state[:, K.TO_ACT].copy()

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
        return f"SelfPlayVectorEnv(ministeel_v2, num_envs={self.num_envs})"


class TableVectorEnv:
    """``num_envs`` MiniSteel games whose seats are played from Python (the learner, network opponents) or by
    up to two compiled bots (``bots``: ``"random"`` or :class:`Opponent` values, controllers FIRST_BOT and
    SECOND_BOT), for the learner's episodes: train/kernel_env.py's tables against a league.

    ``deal(games, seeds, learners, controllers)`` deals those games (game ``g`` from ``Chance(seeds[i])``, the
    game the PettingZoo env deals on ``reset(seed=...)``) with the learner's seat and every seat's controller
    (``PYTHON``, ``FIRST_BOT``, ``SECOND_BOT``; the learner's is PYTHON); a random bot's picks come from a
    splitmix64 stream seeded from the deal's seed. ``play(actions)`` takes one entry per game (an action for
    the Python seat that owes one, ``NO_ACTION`` to play on without one, ``SKIP``), plays the compiled seats
    until a Python seat decides or the learner is out, and returns the ends bits of each game: 0 where
    ``to_act()`` decides now (``observations`` / ``masks`` hold its view), ENDED (| TRUNCATED: cut off with
    the learner still in; | ILLEGAL: the action was not legal) where the learner's episode is over
    (``observations`` / ``masks`` hold the learner's final view, ``values`` the game's returns). The arrays
    are the env's own, overwritten by the next call. ``parallel`` as in :func:`vector_env` (off by default:
    the caller's network runs between the calls on the same cores)."""

    def __init__(self, num_envs: int, bots: tuple = (), parallel: bool = False, **options: Any):
        self.bots = tuple(_opponent(bot) for bot in bots)
        if len(self.bots) > 2:
            raise ValueError(f"a table vector env plays at most two compiled bots, got {len(self.bots)}: "
                             f"{', '.join(bot.name for bot in self.bots)}")
        room = max([bot.legal_room for bot in self.bots], default=NUM_ACTIONS)
        self._games = games = _Games(num_envs, options, room, "table vector env")
        self.config = games.config
        self.num_envs = games.count
        self.num_players = games.players
        self.parallel = _check_parallel(parallel)
        self._calls = table_calls(*(*self.bots, RANDOM, RANDOM)[:2], self.parallel)
        self.learners = np.zeros(self.num_envs, dtype=np.int64)
        self.controllers = np.zeros((self.num_envs, K.P), dtype=np.int64)
        self.observations, self.masks, self.values = games.observations, games.masks, games.values
        self._resets = np.zeros(self.num_envs, dtype=np.int64)
        self._seeds = np.zeros(self.num_envs, dtype=np.int64)

    def deal(self, games: Any, seeds: Any, learners: Any, controllers: Any) -> None:
        """Deal ``games`` afresh (module docstring of the class); nothing is played yet."""
        games = np.asarray(games, dtype=np.int64)
        self._resets.fill(0)
        self._resets[games] = 1
        self._seeds[games] = seeds
        self.learners[games] = learners
        self.controllers[games, :self.num_players] = controllers
        if (self.controllers[games, self.learners[games]] != PYTHON).any():
            raise ValueError("the learner's seat must be played from Python (controller PYTHON)")
        for g, seed in zip(games.tolist(), np.asarray(seeds).tolist(), strict=True):
            self._games.streams[g] = slot_streams(int(seed))
        _table_deals(self._games.batch.state, self._games.batch.chance, self._resets, self._seeds)

    def play(self, actions: np.ndarray) -> np.ndarray:
        """Play every game not SKIPped (class docstring); the ends bits per game (SKIPped games keep theirs)."""
        games = self._games
        self._calls(games.batch.state, games.batch.chance, games.streams, games.legal, self.learners,
                    self.controllers, np.ascontiguousarray(actions, dtype=np.int64), games.observations,
                    games.masks, games.values, games.ends)
        games.raise_failures(games.ends, "bot")
        return games.ends

    def to_act(self) -> np.ndarray:
        """The seat that decides now in each game."""
        return self._games.batch.state[:, K.TO_ACT].copy()

    def __repr__(self) -> str:
        return f"TableVectorEnv(ministeel_v2, num_envs={self.num_envs}, bots={[bot.name for bot in self.bots]})"


def _opponent(opponent: Any) -> Opponent:
    if isinstance(opponent, Opponent):
        return opponent
    if opponent == "random":
        return RANDOM
    raise ValueError(f"opponent={opponent!r} is not valid: 'random', or an Opponent such as the heuristic bot's "
                     "compiled form, tavernzoo.agents.ministeel_kernel.HEURISTIC")


def _autoreset_mode(mode: Any) -> AutoresetMode:
    valid = (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP)
    for choice in valid:
        if mode is choice or mode == choice.value:
            return choice
    raise ValueError(f"autoreset_mode={mode!r} is not supported; choose one of: "
                     f"{', '.join(repr(choice.value) for choice in valid)}")


def vector_env(num_envs: int, *, opponent: str | Opponent = "random", seat: int = 0,
               autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP, parallel: bool = True,
               copy: bool = True, **options: Any) -> LearnerVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` MiniSteel games: the learner plays ``seat``, ``opponent``
    every other seat inside compiled code; ``options`` are ``ministeel_v2``'s (module docstring)."""
    return LearnerVectorEnv(num_envs, opponent=opponent, seat=seat, autoreset_mode=autoreset_mode,
                            parallel=parallel, copy=copy, **options)


def self_play_vector_env(num_envs: int, *, parallel: bool = True, copy: bool = True,
                         **options: Any) -> SelfPlayVectorEnv:
    """``num_envs`` MiniSteel games, every seat the caller's: each game's deciding seat's observation, mask and
    number per call, rewards per seat (module docstring); ``options`` are ``ministeel_v2``'s."""
    return SelfPlayVectorEnv(num_envs, parallel=parallel, copy=copy, **options)
