"""The one PettingZoo AEC adapter, for every turn-based tavernzoo game.

It turns a :class:`~tavernzoo.envs.core.Game` (pure rules + encoder) into a PettingZoo ``AECEnv``:

* agents ``player_0 .. player_{n-1}`` in seat order. A seat the rules knock out while the game goes on
  (``rules.seats_out(state)``, for elimination games) is terminated and paid its final return at once,
  stepped once with ``None`` and removed from ``agents``, as PettingZoo expects; the rest are paid when
  the game ends;
* observations ``{"observation": float32[obs_size], "action_mask": int8[num_actions]}``, the mask
  all zero for every agent that is not to act (PettingZoo classic);
* ``terminations`` when the rules end the game, ``truncations`` when the game's declared turn limit
  cut it off; ``infos[agent]`` then holds ``returns`` and ``end_reason``;
* ``render_mode="ansi"``: ``render()`` returns the game's text rendering; ``render_mode="human"``
  prints it to the terminal after every ``reset()`` and ``step()`` (and on ``render()``, which then
  returns None), as PettingZoo's classic games do;
* actions are Python or numpy integers (a 0-d integer array too); a bool, a float, a string or None
  for an agent that must act raises TypeError: nothing is silently turned into a move. Seeds likewise;
* envs pickle and deepcopy at any point of a game (the :class:`Game` travels by module name, the
  ``Chance`` with its generator's state), and the copy plays on exactly as the original would;
* ``view(agent)``: a JSON-serialisable dict of what that agent may see plus its legal action names;
* ``record()``: the game so far as a replayable record (:mod:`tavernzoo.envs.records`);
* ``observe()`` before the first ``reset()`` is a RuntimeError (under ``env()``: PettingZoo's own
  AssertionError, as ``OrderEnforcingWrapper`` raises it).

The raw env raises :class:`~tavernzoo.envs.core.IllegalActionError`. ``env()`` is
:class:`CheckedTavernAECEnv`: the raw env with the checks of PettingZoo's standard wrapper stack
(``TerminateIllegalWrapper(illegal_reward=-1)``, :class:`ActionCheckWrapper`, ``OrderEnforcingWrapper``)
built into one class, with the same behaviour: an illegal move loses and ends the game, an action
outside the action space is refused (ValueError; a bool, float, string or None a TypeError, also under
``python -O``), and calls out of order get PettingZoo's own errors. Three wrappers cost 2-4x a raw step,
mostly ``BaseWrapper.__getattr__`` forwarding every attribute read; one subclass costs a few percent.
``env().unwrapped`` is the env itself, so ``unwrapped.view()``, ``.record()`` and ``.game_state`` work
on every form.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.base import BaseWrapper

from .core import Chance, Game, IllegalActionError, plain_int
from .records import make_record

_FLOAT32, _INT8 = np.dtype(np.float32), np.dtype(np.int8)  # dtype objects: numpy parses a dtype= keyword per call


def set_table(env: Any, game: Game, render_mode: str | None, config: dict[str, Any]) -> None:
    """What both adapters (this one and :mod:`.parallel`) set up alike: the validated config, the agents,
    their spaces and the action names."""
    if render_mode is not None and render_mode not in env.metadata["render_modes"]:
        valid = ", ".join(repr(mode) for mode in env.metadata["render_modes"])
        raise ValueError(f"render_mode={render_mode!r} is not supported; valid: None, {valid}")
    env.game = game
    env.config = game.make_config(**config)
    env.render_mode = render_mode
    env.metadata = {**env.metadata, "name": game.env_name}
    env._rules = game.rules
    env._encoder = game.encoder
    env._observer = game.make_observer()  # this env's own: an encoder's cache is per env, never global
    env.possible_agents = [f"player_{seat}" for seat in range(game.rules.num_seats(env.config))]
    env._seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
    env.action_names = game.action_names(env.config)
    env._num_actions = len(env.action_names)
    env._obs_size = game.encoder.observation_size(env.config)
    env.observation_spaces = {
        agent: spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (env._obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (env._num_actions,), np.int8),
            }
        )
        for agent in env.possible_agents
    }
    env.action_spaces = {agent: spaces.Discrete(env._num_actions) for agent in env.possible_agents}
    env.game_state = None
    env.seed_used = None


def recordable_seed(seed: int | None) -> int:
    """The seed to play: the one given, or a fresh one drawn from the OS, still recorded so that any game
    can be replayed and reported. A seed is a Python or numpy integer; ``1.5`` or ``True`` is a TypeError."""
    if seed is None:
        return random.SystemRandom().randrange(2**63)
    number = plain_int(seed)
    if number is None:
        raise TypeError(f"seed must be an integer or None, got {seed!r} ({type(seed).__name__})")
    return number


def as_action(action: Any, num_actions: int | None = None) -> int:
    """``action`` as a plain int: a Python or numpy integer, or a 0-d integer array (what PettingZoo's
    ``Discrete`` spaces accept). A bool, float, string or None is a TypeError; with ``num_actions``, an
    integer outside ``0..num_actions-1`` is a ValueError (it is not in the action space at all)."""
    if action.__class__ is int:  # what a step gets most: a plain int
        index = action
    elif isinstance(action, np.integer):  # before plain_int's slower abstract-class check
        index = int(action)
    else:
        index = plain_int(action)
        if index is None and isinstance(action, np.ndarray) and action.shape == () \
                and np.issubdtype(action.dtype, np.integer):
            index = int(action)
    if index is None:
        kind = type(action).__name__
        raise TypeError(f"an action must be an integer (a Python or numpy int), got {action!r} ({kind})")
    if num_actions is not None and not 0 <= index < num_actions:
        raise ValueError(f"action {index} is outside the action space: valid actions are 0..{num_actions - 1}")
    return index


class TableMethods:
    """What both adapters offer alike beyond PettingZoo: spaces by agent, views for frontends, records.
    Each adapter provides ``legal_action_names(agent)`` and keeps ``_history`` in its record's form."""

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        text = "(no game yet: call reset())" if self.game_state is None else self._encoder.render(self.game_state)
        if self.render_mode == "human":
            print(text, flush=True)
            return None
        return text

    def close(self) -> None:
        pass

    # The rules and encoder modules are kept on the env for speed but do not pickle: they travel in
    # ``game`` (which pickles by module name) and are bound again on arrival.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_rules"], state["_encoder"], state["_observer"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._rules, self._encoder = self.game.rules, self.game.encoder
        self._observer = self.game.make_observer()  # a fresh one: it keeps nothing the game needs

    def view(self, agent: str) -> dict[str, Any]:
        """Everything ``agent`` may see, JSON-serialisable, with its legal action names."""
        seat = self._seat_of[agent]
        return {
            "game": self.game.name,
            "env": self.game.env_name,
            "agent": agent,
            **self._encoder.view(self.game_state, seat),
            "legal_actions": self.legal_action_names(agent),
        }

    def history(self) -> list[Any]:
        """The moves so far, in the record's form: ``(seat, action)`` pairs (a turn-based game) or
        ``{seat: action}`` joint steps (a simultaneous one). Everything is in it: a host hands a bot only
        what its seat saw (agents/infoset.py ``public_history``)."""
        return self._history

    def record(self, seats: list[str] | None = None) -> dict[str, Any]:
        """The game so far as a replayable record; ``seats`` names who played each seat."""
        return make_record(self.game, self.game_state, self.seed_used, self._history, seats)


class TavernAECEnv(TableMethods, AECEnv):
    """A turn-based tavernzoo game as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "tavernzoo", "is_parallelizable": False}

    def __init__(self, game: Game, render_mode: str | None = None, **config: Any):
        super().__init__()
        set_table(self, game, render_mode, config)
        # Optional rule: seats knocked out while the game goes on (multi-player elimination games).
        self._seats_out = getattr(self._rules, "seats_out", None)
        # Optional rule: ``apply_legal(state, action)``, ``apply`` without its legality check. observe()
        # computes the legal list of the agent to act for its mask and keeps it with the state it belongs
        # to (``_legal_now``: (state, list), or None); step() then checks the action against that list
        # and skips the rules' own check, which would compute the list again. The list is dropped at every
        # move, so it is only ever used for the state it was computed on; code that changes
        # ``game_state`` in place other than through step() is not supported (the record would be wrong).
        self._apply_legal = hasattr(self._rules, "apply_legal")
        self._legal_now: tuple[Any, list[int]] | None = None
        self._scratch = np.zeros(self._obs_size, _FLOAT32)  # what observe() has the encoder fill
        self._history: list[tuple[int, int]] = []

    # --- the PettingZoo API --------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.seed_used = recordable_seed(seed)
        self.game_state = self._rules.new_game(self.config, Chance(self.seed_used))
        self._legal_now = None
        self._history = []
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._paid = False
        self.agent_selection = self.possible_agents[0]
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._play(agent, as_action(action))

    def _play(self, agent: str, action: int) -> None:
        """``agent`` (alive, to act) plays ``action`` (a plain int); IllegalActionError changes nothing."""
        state, legal_now = self.game_state, self._legal_now
        if legal_now is not None and legal_now[0] is state and self._apply_legal and action in legal_now[1]:
            self._rules.apply_legal(state, action)  # checked just now against this state's legal list
        else:
            self._rules.apply(state, action)  # raises IllegalActionError, changing nothing
        self._legal_now = None
        self._history.append((self._seat_of[agent], action))
        if self._paid:
            self._clear_rewards()
            self._paid = False
        self._cumulative_rewards[agent] = 0.0
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def _after_move(self) -> None:
        state, rules = self.game_state, self._rules
        terminal = rules.is_terminal(state)
        if not terminal and self._seats_out is None:  # the common case: play goes on, nobody leaves
            self.agent_selection = self.possible_agents[rules.current_seat(state)]
            return
        # Seats knocked out of a multi-player game leave now, paid their final return (PettingZoo's
        # convention: a terminated agent is stepped once with None, then removed from `agents`).
        leaving = [seat for seat in self._seats_out(state) if self.possible_agents[seat] in self.agents
                   and not self.terminations[self.possible_agents[seat]]] if self._seats_out else []
        if not terminal and not leaving:
            self.agent_selection = self.possible_agents[rules.current_seat(state)]
            return
        final = rules.returns(state)
        truncated = terminal and rules.is_truncated(state)
        if terminal:
            leaving = [self._seat_of[agent] for agent in self.agents if not self.terminations[agent]]
        for seat in leaving:
            agent = self.possible_agents[seat]
            self.rewards[agent] = float(final[seat])
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
            self.infos[agent] = {"returns": list(final) if terminal else None,
                                 "end_reason": getattr(state, "end_reason", None) or "eliminated",
                                 "finishing_order": list(getattr(state, "finishing_order", None) or []) or None}
        self._paid = True
        self._accumulate_rewards()
        if terminal:
            if self.agent_selection not in self.agents:
                self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[rules.current_seat(state)]
            self._deads_step_first()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self.game_state
        if state is None:
            self._observed_before_reset()
        seat = self._seat_of[agent]
        # The encoder fills the same scratch array every time (an encoder may keep what it needs to write
        # into it fast); the caller gets a copy of its own.
        self._observer.encode(state, seat, self._scratch)
        observation = self._scratch.copy()
        # The mask is set byte by byte in a bytearray, then viewed as int8 (a writable array that owns
        # its bytearray alone): cheaper than fancy-indexing a zero array with a list.
        mask = bytearray(self._num_actions)
        rules = self._rules
        if not rules.is_terminal(state) and rules.current_seat(state) == seat:
            legal_now = self._legal_now
            if legal_now is None or legal_now[0] is not state:
                legal_now = self._legal_now = (state, rules.legal_actions(state))
            for action in legal_now[1]:
                mask[action] = 1
        return {"observation": observation, "action_mask": np.frombuffer(mask, _INT8)}

    def _observed_before_reset(self) -> None:
        # The checked env (env()) raises PettingZoo's own error here instead.
        raise RuntimeError("observe() before reset(): call reset() first")

    # --- beyond PettingZoo (with TableMethods' view and record) -----------------------------------------

    def legal_action_names(self, agent: str | None = None) -> list[str]:
        """Names of the legal actions of ``agent`` (default: the agent to act); empty if it is not to act."""
        state, rules = self.game_state, self._rules
        agent = agent or self.agent_selection
        if rules.is_terminal(state) or rules.current_seat(state) != self._seat_of[agent]:
            return []
        return [self.action_names[a] for a in rules.legal_actions(state)]


class BeforeReset:
    """A class attribute standing for a per-game attribute (``agents``, ``rewards``...) until ``reset()``
    sets the real one on the instance, which then shadows it: reading it before that is an
    AttributeError saying so, as ``OrderEnforcingWrapper`` says it. A non-data descriptor rather than a
    ``__getattr__``: a class with ``__getattr__`` gives up CPython's fast attribute reads on every
    ``self.x``, a few percent of a whole step."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        raise AttributeError(f"{self.name} cannot be accessed before reset")


class OrderChecks:
    """``OrderEnforcingWrapper``'s checks, for an AEC env class to inherit instead of being wrapped: the
    same errors (PettingZoo's ``EnvLogger``) for ``render``, ``state`` and ``agent_iter`` before
    ``reset``, for reading the per-game attributes before ``reset``, and the same warning for ``step``
    when no agent is left. The class sets ``_has_reset`` and ``_has_updated`` to False in ``__init__``;
    ``reset`` here sets them True; its ``step`` and ``observe`` check order themselves (written out in each
    class: they run on every step, where one more call would cost a few percent)."""

    agents = BeforeReset()
    agent_selection = BeforeReset()
    rewards = BeforeReset()
    terminations = BeforeReset()
    truncations = BeforeReset()
    infos = BeforeReset()

    @property
    def num_agents(self) -> int:
        try:
            return len(self.agents)
        except AttributeError:
            raise AttributeError("num_agents cannot be accessed before reset") from None

    def render(self) -> Any:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return super().state()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return OrderCheckedIterable(self, max_iter)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._has_reset = True
        self._has_updated = True
        super().reset(seed=seed, options=options)


class OrderCheckedIterable(AECIterable):
    def __iter__(self) -> AECIterator:
        return OrderCheckedIterator(self.env, self.max_iter)


class OrderCheckedIterator(AECIterator):
    """PettingZoo's ``AECOrderEnforcingIterator``, which accepts only an ``OrderEnforcingWrapper``."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return env.agent_selection


class CheckedTavernAECEnv(OrderChecks, TavernAECEnv):
    """What ``env()`` returns: the raw env with PettingZoo's standard wrapper stack built in, behaving as
    ``OrderEnforcingWrapper(ActionCheckWrapper(TerminateIllegalWrapper(raw_env, illegal_reward=-1)))``
    did (tests/test_env_wrapper_equivalence.py plays both side by side):

    * order: :class:`OrderChecks`;
    * action: a non-integer is a TypeError, an integer outside the action space a ValueError
      (:func:`as_action`), before anything moves; None only for an agent that is done;
    * legality: an action the mask forbids (the rules raise IllegalActionError, changing nothing) loses:
      a warning is logged, every agent is terminated and truncated, the offender is paid
      ``illegal_reward`` and everyone else 0, exactly as ``TerminateIllegalWrapper`` edits its
      ``unwrapped`` env.
    """

    illegal_reward = -1.0

    def __init__(self, game: Game, render_mode: str | None = None, **config: Any):
        super().__init__(game, render_mode=render_mode, **config)
        self._has_reset = False
        self._has_updated = False

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        done = self.terminations[agent] or self.truncations[agent]
        if action is None and done:
            self._was_dead_step(None)
            return
        if action.__class__ is not int or not 0 <= action < self._num_actions:  # a plain int in range passes
            action = as_action(action, self._num_actions)
        if done:
            self._was_dead_step(action)  # ValueError: only None steps a done agent
            return
        try:
            self._play(agent, action)
        except IllegalActionError:
            self._lose_by_illegal_move(agent)

    def _observed_before_reset(self) -> None:
        EnvLogger.error_observe_before_reset()

    def _lose_by_illegal_move(self, agent: str) -> None:
        # TerminateIllegalWrapper's edits, in its order and with its types (rewards of 0 stay ints).
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0)
        self.rewards[agent] = float(self.illegal_reward)
        self._accumulate_rewards()
        self._deads_step_first()


class ActionCheckWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with real errors: a non-integer action (a bool
    included, which ``Discrete.contains`` lets through) is a TypeError and an integer outside the action
    space a ValueError, also under ``python -O``. The action goes on as a plain int.

    ``env()`` no longer stacks it (:class:`CheckedTavernAECEnv` does its checks in one class); it stays
    for code that wraps an env of its own, and as the reference the equivalence tests play against."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if action is None and (self.terminations[agent] or self.truncations[agent]):
            BaseWrapper.step(self, action)
            return
        BaseWrapper.step(self, as_action(action, self.action_space(agent).n))


def make_env_factories(game: Game):
    """The ``env`` and ``raw_env`` functions of a versioned env module (``tiny_minotaur_v1``)."""

    def raw_env(render_mode: str | None = None, **config: Any) -> TavernAECEnv:
        return TavernAECEnv(game, render_mode=render_mode, **config)

    def env(render_mode: str | None = None, **config: Any) -> CheckedTavernAECEnv:
        return CheckedTavernAECEnv(game, render_mode=render_mode, **config)

    raw_env.__doc__ = f"{game.title} as a raw AEC env: illegal actions raise IllegalActionError."
    env.__doc__ = f"{game.title} as a checked AEC env: an illegal move loses and ends the game."
    return env, raw_env
