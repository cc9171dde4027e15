"""Wyvern TCG as batched envs on the compiled kernel: many games stepped per call, observations and masks written
in compiled code. The PettingZoo env (``wyvern_v1``) stays the public API beside them, and the reference: the
same options, the same observation (``{"observation", "action_mask"}``, :mod:`.encode`'s layout, written by
:mod:`.kernel_encode`), the same rewards.

Two forms, of the same API as MiniSteel's (envs/ministeel/vector.py; the Python side is envs/batched.py's)
--------------------------------------------------------------------------------------------------------
* :func:`vector_env` -> :class:`LearnerVectorEnv`, a Gymnasium 1.x ``VectorEnv``: in each of ``num_envs``
  games one seat (``seat``) is the learner's and every other seat is an opponent played inside compiled
  code (``opponent``: ``"random"``, or an :class:`~tavernzoo.envs.batched.Opponent` compiled with this
  game's kernel decorators, such as the heuristic bot's compiled form,
  ``tavernzoo.agents.wyvern_kernel.HEURISTIC``) until the learner owes a decision or its game is over. ``step(actions)``
  returns the learner's observations ``{"observation": float32 (G, 587), "action_mask": int8 (G, 295)}``,
  rewards (its return when the game ends: +1 for a win, -1/(N-1) for a loss, 0 when cut off, plus the
  optional ``level_reward``; nothing before: no one leaves a Wyvern game early, the dead re-enter),
  terminations and truncations (a game cut off by ``max_turns`` / ``max_steps``), as the PettingZoo env
  pays that seat.
* :func:`self_play_vector_env` -> :class:`SelfPlayVectorEnv`, the multi-agent batched form: every seat is
  the caller's. Each game hands over the observation and mask of the seat that decides now and that
  seat's number; ``step`` returns rewards, terminations and truncations per game and seat (``(G, N)``:
  every seat's episode ends with the game).

Both autoreset (``SAME_STEP`` by default, ``NEXT_STEP`` too, as MiniSteel's); an illegal action loses and
ends that game (reward -1 for the seat that played it, ``infos["illegal_action"]``); an action outside the
action space is refused before any game moves. Seeds: ``reset(seed=s)`` deals game ``g`` from
``Chance(s + g)``, the game the PettingZoo env deals on ``reset(seed=s + g)``; later deals and the random
opponents' picks come from the slot's splitmix64 streams (``batched.slot_streams``). ``parallel=True``
spreads a call's games over every core; the results are those of the serial loop.

Beside the two forms, :class:`TableVectorEnv` (MiniSteel's too): tables whose seats are played from Python (the
learner, network opponents, answered in batches between calls) or by up to two compiled bots, for training
against a league; ``load`` starts its games from positions (``kernel.from_states``) instead of deals.

Options: every option of ``wyvern_v1`` (``tavernzoo games``), deck files included, checked as the env checks
them. Without numba the vector envs refuse with one line (the PettingZoo env runs without it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from .. import batched
from ..batched import (  # noqa: F401  (PYTHON .. NO_ACTION re-exported: the table form's controllers and actions)
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
    SKIP,
    TRUNCATED,
    Opponent,
    prange,
)
from ..compiled import Kernel, numba, seed_generator
from . import encode as E
from . import kernel as K
from . import kernel_encode as KE
from .rules import OVER, Config


def _argument_types() -> dict:
    from numba import types

    return {**KE._argument_types(), "opponent": batched.opponent_type(), "streams": types.uint64[:, ::1],
            "legal_rows": types.int64[:, ::1], "first_seeds": types.int64[::1], "resets": types.int64[::1],
            "final_observations": types.float32[:, ::1], "final_masks": types.int8[:, ::1],
            "final_observation": types.float32[::1], "final_mask": types.int8[::1],
            "rewards": types.float64[::1], "ends": types.int64[::1], "seat_ends": types.int64[:, ::1],
            "seat_ends_row": types.int64[::1], "first_bot": batched.opponent_type(),
            "second_bot": batched.opponent_type(), "controllers": types.int64[::1],
            "controller_rows": types.int64[:, ::1], "learners": types.int64[::1]}


VECTOR = Kernel(_argument_types, includes=(KE.ENCODER, batched.SHARED))


# --- one game of a slot -------------------------------------------------------------------------------------


@VECTOR.compiled
def deal(s, mt, seed, deck_cards, deck_facts):
    """``rules.new_game(config, Chance(seed))`` into a used row (its options kept)."""
    for i in range(K.RACES, s.shape[0]):  # every State field and the working space start at 0, as in a fresh row
        s[i] = 0
    seed_generator(mt, seed)
    K.new_game(s, mt, deck_cards, deck_facts)


@VECTOR.compiled
def observe(s, seat, legal, deck_specialties, observation, mask):
    """``seat``'s observation and mask; its legal actions stay in ``legal``, their number in its last slot
    (what ``batched.was_legal`` checks the next action against)."""
    KE.encode_row(s, seat, deck_specialties, observation)
    legal[legal.shape[0] - 1] = KE.mask_row(s, seat, legal, mask)


@VECTOR.compiled
def advance(s, mt, seat, opponent, legal, policy_state):
    """Play the opponents until the learner decides or the game ends; False if an opponent chose an illegal
    action."""
    while s[K.PHASE] != OVER and s[K.TO_ACT] != seat:
        count = K.legal_actions(s, legal)
        action = opponent(s, legal, count, policy_state)
        if not batched.listed(legal, count, action):
            return False
        K.apply_legal(s, mt, action)
    return True


@VECTOR.compiled
def start(s, mt, seat, opponent, legal, policy_state, seed, deck_cards, deck_facts):
    """Deal (from ``seed``, or the slot's next seed when it is -1) and play to the learner's first decision,
    dealing again while the game ends before it; 0, or NO_DECISION / OPPONENT_ILLEGAL."""
    if seed < 0:
        seed = batched.next_deal_seed(policy_state)
    for _ in range(REDEALS):
        deal(s, mt, seed, deck_cards, deck_facts)
        if not advance(s, mt, seat, opponent, legal, policy_state):
            return OPPONENT_ILLEGAL
        if s[K.PHASE] != OVER:
            return 0
        seed = batched.next_deal_seed(policy_state)
    return NO_DECISION


@VECTOR.inlined
def end_bits(s):
    """ENDED, with TRUNCATED when the game was cut off (``rules.is_truncated``)."""
    reason = s[K.END_REASON]
    return ENDED | (TRUNCATED if reason == K.TURN_LIMIT or reason == K.STEP_LIMIT else 0)


@VECTOR.compiled
def learner_game(s, mt, policy_state, legal, seat, action, opponent, same_step, reset, seed, deck_cards, deck_facts,
                 deck_specialties, observation, mask, final_observation, final_mask, values_row):
    """One slot of :class:`LearnerVectorEnv` for one call (envs/ministeel/vector.py's, for Wyvern's row)."""
    if reset:
        code = start(s, mt, seat, opponent, legal, policy_state, seed, deck_cards, deck_facts)
        if code:
            return code, 0.0
        observe(s, seat, legal, deck_specialties, observation, mask)
        return DEALT, 0.0
    if not batched.was_legal(legal, action):
        code, reward = ENDED | ILLEGAL, -1.0
    else:
        K.apply_legal(s, mt, action)
        if not advance(s, mt, seat, opponent, legal, policy_state):
            return OPPONENT_ILLEGAL, 0.0
        if s[K.PHASE] != OVER:
            observe(s, seat, legal, deck_specialties, observation, mask)
            return 0, 0.0
        code = end_bits(s)
    K.game_returns(s, values_row)
    if not code & ILLEGAL:
        reward = values_row[seat]
    if not same_step:  # NEXT_STEP: the final observation now, the deal on the next call
        observe(s, seat, legal, deck_specialties, observation, mask)
        return code, reward
    observe(s, seat, legal, deck_specialties, final_observation, final_mask)
    dealt = start(s, mt, seat, opponent, legal, policy_state, -1, deck_cards, deck_facts)
    if dealt:
        return dealt, reward
    observe(s, seat, legal, deck_specialties, observation, mask)
    return code | DEALT, reward


@VECTOR.compiled_allocating
def _learner_calls_serial(states, chances, streams, legal_rows, seat, actions, opponent, same_step, resets,
                          first_seeds, deck_cards, deck_facts, deck_specialties, observations, action_masks,
                          final_observations, final_masks, values, rewards, ends):
    for g in range(states.shape[0]):
        ends[g], rewards[g] = learner_game(states[g], chances[g], streams[g], legal_rows[g], seat, actions[g],
                                           opponent, same_step, resets[g], first_seeds[g], deck_cards, deck_facts,
                                           deck_specialties, observations[g], action_masks[g], final_observations[g],
                                           final_masks[g], values[g])


@VECTOR.compiled_parallel
def _learner_calls_parallel(states, chances, streams, legal_rows, seat, actions, opponent, same_step, resets,
                            first_seeds, deck_cards, deck_facts, deck_specialties, observations, action_masks,
                            final_observations, final_masks, values, rewards, ends):
    for g in prange(states.shape[0]):
        ends[g], rewards[g] = learner_game(states[g], chances[g], streams[g], legal_rows[g], seat, actions[g],
                                           opponent, same_step, resets[g], first_seeds[g], deck_cards, deck_facts,
                                           deck_specialties, observations[g], action_masks[g], final_observations[g],
                                           final_masks[g], values[g])


@VECTOR.compiled
def self_play_game(s, mt, policy_state, legal, action, reset, seed, deck_cards, deck_facts, deck_specialties,
                   observation, mask, values_row, seat_ends_row):
    """One slot of :class:`SelfPlayVectorEnv` for one call: deal (``reset``) or play ``action`` for the seat to
    act; on an end deal afresh. ``values_row`` gets each seat's reward (its return, paid as the game ends),
    ``seat_ends_row`` 1 for every seat when the game ends (2: cut off). Returns the ends bits; the new seat
    to act is the row's TO_ACT."""
    n = s[K.N]
    for seat in range(n):
        values_row[seat] = 0.0
        seat_ends_row[seat] = 0
    if reset:
        deal(s, mt, seed if seed >= 0 else batched.next_deal_seed(policy_state), deck_cards, deck_facts)
        observe(s, s[K.TO_ACT], legal, deck_specialties, observation, mask)
        return DEALT
    actor = s[K.TO_ACT]
    code = 0
    if not batched.was_legal(legal, action):
        code = ENDED | ILLEGAL
        values_row[actor] = -1.0
        for seat in range(n):
            seat_ends_row[seat] = 1
    else:
        K.apply_legal(s, mt, action)
        if s[K.PHASE] == OVER:
            code = end_bits(s)
            K.game_returns(s, values_row)
            for seat in range(n):
                seat_ends_row[seat] = 2 if code & TRUNCATED else 1
    if code:
        deal(s, mt, batched.next_deal_seed(policy_state), deck_cards, deck_facts)
        code |= DEALT
    observe(s, s[K.TO_ACT], legal, deck_specialties, observation, mask)
    return code


@VECTOR.compiled_allocating
def _self_play_calls_serial(states, chances, streams, legal_rows, actions, resets, first_seeds, deck_cards,
                            deck_facts, deck_specialties, observations, action_masks, values, seat_ends, ends):
    for g in range(states.shape[0]):
        ends[g] = self_play_game(states[g], chances[g], streams[g], legal_rows[g], actions[g], resets[g],
                                 first_seeds[g], deck_cards, deck_facts, deck_specialties, observations[g],
                                 action_masks[g], values[g], seat_ends[g])


@VECTOR.compiled_parallel
def _self_play_calls_parallel(states, chances, streams, legal_rows, actions, resets, first_seeds, deck_cards,
                              deck_facts, deck_specialties, observations, action_masks, values, seat_ends, ends):
    for g in prange(states.shape[0]):
        ends[g] = self_play_game(states[g], chances[g], streams[g], legal_rows[g], actions[g], resets[g],
                                 first_seeds[g], deck_cards, deck_facts, deck_specialties, observations[g],
                                 action_masks[g], values[g], seat_ends[g])


# --- tables whose seats Python plays too (training against a league) -----------------------------------------
# Each seat of a game is played by a controller (batched.PYTHON, FIRST_BOT, SECOND_BOT): Python (the learner, a
# network opponent: the call stops when such a seat owes a decision, so that the network answers every game's
# seat in one batched forward), or one of two compiled bots. An action of SKIP leaves the game untouched;
# NO_ACTION plays on without one (a game just dealt or loaded, or one whose seat waits for an action another
# call brings). No one leaves a Wyvern game early: the learner's episode is the game.


@VECTOR.compiled
def play_compiled_seats(s, mt, controllers, first_bot, second_bot, legal, policy_state):
    """Play the compiled bots' seats until a Python seat owes a decision or the game ends; False if a bot chose
    an illegal action."""
    while s[K.PHASE] != OVER:
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
def table_game(s, mt, policy_state, legal, seat, controllers, action, first_bot, second_bot, deck_specialties,
               observation, mask, values_row):
    """One game of :class:`TableVectorEnv` for one call: play ``action`` (if not NO_ACTION) for the Python seat
    that owes it, then the compiled seats. Returns 0 when a Python seat decides now (the row's TO_ACT; its
    observation and mask written), ENDED (with TRUNCATED when the game was cut off) when the game is over
    (the learner's final observation written, ``values_row`` the game's returns), ENDED | ILLEGAL for an
    action the mask forbade, OPPONENT_ILLEGAL for a bot's."""
    if action >= 0:
        if not batched.was_legal(legal, action):
            K.game_returns(s, values_row)
            observe(s, seat, legal, deck_specialties, observation, mask)
            return ENDED | ILLEGAL
        K.apply_legal(s, mt, action)
    if not play_compiled_seats(s, mt, controllers, first_bot, second_bot, legal, policy_state):
        return OPPONENT_ILLEGAL
    if s[K.PHASE] == OVER:
        K.game_returns(s, values_row)
        observe(s, seat, legal, deck_specialties, observation, mask)
        return end_bits(s)
    observe(s, s[K.TO_ACT], legal, deck_specialties, observation, mask)
    return 0


_TABLE_CALLS: dict = {}


def table_calls(first: Opponent, second: Opponent, parallel: bool) -> Any:
    """The batch loop of :class:`TableVectorEnv` with its two bots built in (envs/ministeel/vector.py's
    ``table_calls`` says why), compiled once per pair of bots and process."""
    key = (first.decide, second.decide, parallel)
    if key not in _TABLE_CALLS:
        first_bot, second_bot = first.decide, second.decide
        loop = prange if parallel else range

        def calls(states, chances, streams, legal_rows, learners, controller_rows, actions, deck_cards, deck_facts,
                  deck_specialties, observations, action_masks, values, ends):
            for g in loop(states.shape[0]):
                if actions[g] != SKIP:
                    ends[g] = table_game(states[g], chances[g], streams[g], legal_rows[g], learners[g],
                                         controller_rows[g], actions[g], first_bot, second_bot, deck_specialties,
                                         observations[g], action_masks[g], values[g])

        _TABLE_CALLS[key] = numba.njit(parallel=parallel)(calls)
    return _TABLE_CALLS[key]


@VECTOR.compiled_allocating
def _table_deals(states, chances, resets, first_seeds, deck_cards, deck_facts, deck_specialties):
    for g in range(states.shape[0]):
        if resets[g]:
            deal(states[g], chances[g], first_seeds[g], deck_cards, deck_facts)


# --- the Python side: the shared classes (envs/batched.py) with this game's calls ------------------------------


def _learner_calls(games, parallel, seat, actions, decide, same_step, resets, seeds, final_observations, final_masks,
                   rewards) -> None:
    run = _learner_calls_parallel if parallel else _learner_calls_serial
    run(games.batch.state, games.batch.chance, games.streams, games.legal, seat, actions, decide, same_step, resets,
        seeds, *games.tables, games.observations, games.masks, final_observations, final_masks, games.values, rewards,
        games.ends)


def _self_play_calls(games, parallel, actions, resets, seeds, befores, seat_ends) -> None:
    run = _self_play_calls_parallel if parallel else _self_play_calls_serial
    run(games.batch.state, games.batch.chance, games.streams, games.legal, actions, resets, seeds, *games.tables,
        games.observations, games.masks, games.values, seat_ends, games.ends)


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The decks' cards and facts (the deal's) and their declared specialties (the encoder's), for every deck
    named so far (the config's deck files are named as it is checked, before this is called)."""
    return (*K._deck_tables(), KE.specialty_table())


GAME = batched.VectorGame(
    title="Wyvern", env_name="wyvern_v1", heuristic="tavernzoo.agents.wyvern_kernel.HEURISTIC",
    config_class=Config, kernel=K, observation_size=E.observation_size,
    num_actions=lambda config: len(E.action_names(config)),
    compile=VECTOR.compile, new_batch=lambda config, count: K.new_games(config, [0] * count), tables=_tables,
    learner_calls=_learner_calls, self_play_calls=_self_play_calls, table_calls=table_calls,
    table_deals=_table_deals, options_end=K.RACES, observe=KE.observe)


class LearnerVectorEnv(batched.LearnerVectorEnv):
    """``num_envs`` Wyvern games, one learner seat each, opponents played in compiled code (module docstring;
    the class: envs/batched.py)."""

    def __init__(self, num_envs: int, **kwargs: Any):
        super().__init__(GAME, num_envs, **kwargs)


class SelfPlayVectorEnv(batched.SelfPlayVectorEnv):
    """``num_envs`` Wyvern games in which every seat is the caller's (module docstring; the class:
    envs/batched.py)."""

    def __init__(self, num_envs: int, **kwargs: Any):
        super().__init__(GAME, num_envs, **kwargs)


class TableVectorEnv(batched.TableVectorEnv):
    """``num_envs`` Wyvern games whose seats are played from Python (the learner, network opponents) or by up
    to two compiled bots (``bots``: ``"random"`` or :class:`~tavernzoo.envs.batched.Opponent` values such as
    ``tavernzoo.agents.wyvern_kernel.HEURISTIC``, controllers FIRST_BOT and SECOND_BOT), for the learner's
    episodes: envs/ministeel/vector.py's tables, for Wyvern.

    ``deal(games, seeds, learners, controllers)`` deals those games (game ``g`` from ``Chance(seeds[i])``, the
    game the PettingZoo env deals on ``reset(seed=...)``) with the learner's seat and every seat's controller
    (``PYTHON``, ``FIRST_BOT``, ``SECOND_BOT``; the learner's is PYTHON); a random bot's picks come from a
    splitmix64 stream seeded from the deal's seed. ``play(actions)`` takes one entry per game (an action for
    the Python seat that owes one, ``NO_ACTION`` to play on without one, ``SKIP``), plays the compiled seats
    until a Python seat decides or the game ends, and returns the ends bits of each game: 0 where
    ``to_act()`` decides now (``observations`` / ``masks`` hold its view), ENDED (| TRUNCATED: cut off by
    ``max_turns`` / ``max_steps``; | ILLEGAL: the action was not legal) where the game is over (no one leaves
    a Wyvern game early; ``observations`` / ``masks`` hold the learner's final view, ``values`` the game's
    returns). The arrays are the env's own, overwritten by the next call. ``parallel`` as in
    :func:`vector_env` (off by default: the caller's network runs between the calls on the same cores).

    ``load(batch, learners, controllers)`` takes games from a kernel batch (``kernel.from_states(...)``) in
    place of dealing, slot ``g`` batch game ``g``; play on with ``NO_ACTION`` (envs/batched.py's
    ``TableVectorEnv.load``)."""

    def __init__(self, num_envs: int, bots: tuple = (), parallel: bool = False, **options: Any):
        super().__init__(GAME, num_envs, bots=bots, parallel=parallel, **options)


def vector_env(num_envs: int, *, opponent: str | Opponent = "random", seat: int = 0,
               autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP, parallel: bool = True,
               copy: bool = True, **options: Any) -> LearnerVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` Wyvern games: the learner plays ``seat``, ``opponent`` every
    other seat inside compiled code; ``options`` are ``wyvern_v1``'s (module docstring)."""
    return LearnerVectorEnv(num_envs, opponent=opponent, seat=seat, autoreset_mode=autoreset_mode,
                            parallel=parallel, copy=copy, **options)


def self_play_vector_env(num_envs: int, *, parallel: bool = True, copy: bool = True,
                         **options: Any) -> SelfPlayVectorEnv:
    """``num_envs`` Wyvern games, every seat the caller's: each game's deciding seat's observation, mask and
    number per call, rewards per seat (module docstring); ``options`` are ``wyvern_v1``'s."""
    return SelfPlayVectorEnv(num_envs, parallel=parallel, copy=copy, **options)
