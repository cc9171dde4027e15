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

from typing import Any

from gymnasium.vector import AutoresetMode

from .. import batched
from ..batched import (  # noqa: F401  (re-exported: this module's API before the shared part moved out)
    DEAL_STREAM,
    DEALT,
    ENDED,
    FIRST_BOT,
    ILLEGAL,
    NO_ACTION,
    NO_DECISION,
    OPPONENT_ILLEGAL,
    PYTHON,
    RANDOM,
    REDEALS,
    SECOND_BOT,
    SEED_LIMIT,
    SKIP,
    TRUNCATED,
    Opponent,
    next_deal_seed,
    opponent_type,
    prange,
    random_opponent,
    slot_streams,
    was_legal,
)
from ..compiled import Kernel, numba, seed_generator
from . import encode as E
from . import kernel as K
from . import kernel_encode as KE
from .rules import GAME_OVER, Config


def _argument_types() -> dict:
    from numba import types

    return {**KE._argument_types(), "opponent": opponent_type(), "streams": types.uint64[:, ::1],
            "legal_rows": types.int64[:, ::1], "first_seeds": types.int64[::1], "resets": types.int64[::1],
            "final_observations": types.float32[:, ::1], "final_masks": types.int8[:, ::1],
            "final_observation": types.float32[::1], "final_mask": types.int8[::1],
            "rewards": types.float64[::1], "ends": types.int64[::1], "seat_ends": types.int64[:, ::1],
            "seat_ends_row": types.int64[::1], "befores": types.float64[:, ::1], "before_row": types.float64[::1],
            "first_bot": opponent_type(), "second_bot": opponent_type(), "controllers": types.int64[::1],
            "controller_rows": types.int64[:, ::1], "learners": types.int64[::1]}


VECTOR = Kernel(_argument_types, includes=(KE.ENCODER, batched.SHARED))


# --- one game of a slot -------------------------------------------------------------------------------------


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
def learner_out(s, seat):
    return s[K.PHASE] == GAME_OVER or not s[K.ALIVE + seat]


@VECTOR.compiled
def advance(s, mt, seat, opponent, legal, policy_state):
    """Play the opponents until the learner decides or is out; False if an opponent chose an illegal action."""
    while not learner_out(s, seat) and s[K.TO_ACT] != seat:
        count = K.legal_actions(s, legal)
        action = opponent(s, legal, count, policy_state)
        if not batched.listed(legal, count, action):
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
# Each seat of a game is played by a controller (batched.PYTHON, FIRST_BOT, SECOND_BOT): Python (the learner, a
# network opponent: the call stops when such a seat owes a decision, so that the network answers every game's
# seat in one batched forward), or one of two compiled bots. An action of SKIP leaves the game untouched;
# NO_ACTION plays on without one (a game just dealt or loaded, or one whose seat waits for an action another
# call brings).


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
        if not batched.listed(legal, count, action):
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


# --- the Python side: the shared classes (envs/batched.py) with this game's calls ------------------------------


def _learner_calls(games, parallel, seat, actions, decide, same_step, resets, seeds, final_observations, final_masks,
                   rewards) -> None:
    run = _learner_calls_parallel if parallel else _learner_calls_serial
    run(games.batch.state, games.batch.chance, games.streams, games.legal, seat, actions, decide, same_step, resets,
        seeds, games.observations, games.masks, final_observations, final_masks, games.values, rewards, games.ends)


def _self_play_calls(games, parallel, actions, resets, seeds, befores, seat_ends) -> None:
    run = _self_play_calls_parallel if parallel else _self_play_calls_serial
    run(games.batch.state, games.batch.chance, games.streams, games.legal, actions, resets, seeds,
        games.observations, games.masks, games.values, befores, seat_ends, games.ends)


GAME = batched.VectorGame(
    title="MiniSteel", env_name="ministeel_v2", heuristic="tavernzoo.agents.ministeel_kernel.HEURISTIC",
    config_class=Config, kernel=K, observation_size=E.observation_size,
    num_actions=lambda config: len(E.action_names(config)), compile=VECTOR.compile,
    new_batch=lambda config, count: K.new_games(config, [0] * count, track_known=True), tables=tuple,
    learner_calls=_learner_calls, self_play_calls=_self_play_calls, table_calls=table_calls,
    table_deals=_table_deals, options_end=K.HP, observe=KE.observe)


class LearnerVectorEnv(batched.LearnerVectorEnv):
    """``num_envs`` MiniSteel games, one learner seat each, opponents played in compiled code (module docstring;
    the class: envs/batched.py)."""

    def __init__(self, num_envs: int, **kwargs: Any):
        super().__init__(GAME, num_envs, **kwargs)


class SelfPlayVectorEnv(batched.SelfPlayVectorEnv):
    """``num_envs`` MiniSteel games in which every seat is the caller's (module docstring; the class:
    envs/batched.py)."""

    def __init__(self, num_envs: int, **kwargs: Any):
        super().__init__(GAME, num_envs, **kwargs)


class TableVectorEnv(batched.TableVectorEnv):
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
    the caller's network runs between the calls on the same cores).

    ``load(batch, learners, controllers)`` takes games from a kernel batch (``kernel.from_states(...)``, rows
    that track what each seat knows: its default) in place of dealing, slot ``g`` batch game ``g``; play on
    with ``NO_ACTION`` (envs/batched.py's ``TableVectorEnv.load``)."""

    def __init__(self, num_envs: int, bots: tuple = (), parallel: bool = False, **options: Any):
        super().__init__(GAME, num_envs, bots=bots, parallel=parallel, **options)


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
