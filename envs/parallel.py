"""The one PettingZoo Parallel adapter, for every tavernzoo game whose moves are simultaneous.

It turns a :class:`~tavernzoo.envs.core.Game` with ``simultaneous=True`` (rules providing
``acting_seats``, ``legal_actions(state, seat)`` and ``apply_joint``) into a PettingZoo ``ParallelEnv``:

* agents ``player_0 .. player_{n-1}`` in seat order; ``step(actions)`` takes one action from every
  agent in ``agents`` and plays them as one joint move;
* observations ``{"observation": float32[obs_size], "action_mask": int8[num_actions]}`` per agent,
  each built once per step; the mask is all zero for an agent with nothing to decide;
* an agent the rules knock out (``rules.seats_out(state)``) is terminated in the step it goes out, paid
  its final return (``returns(state)[seat]``) in that step, and leaves ``agents``; when the game ends
  every remaining agent is terminated (or truncated, when the game's declared limit cut it off) and
  paid. ``infos[agent]`` holds ``round``, ``place`` (1 = winner, once known) and ``finishing_order``
  (agents, first out first, the winner last), plus ``returns`` and ``end_reason`` at the end;
* ``render_mode="ansi"``: ``render()`` returns the game's text rendering; ``render_mode="human"``
  prints it after every ``reset()`` and ``step()``;
* every action is a Python or numpy integer in the action space: anything else is refused before the
  rules see it (TypeError for a bool, float, string or None; ValueError for an integer outside
  ``0..num_actions-1``), whatever ``illegal_reward`` says: an action outside the space is a caller's
  bug, not a move;
* the env pickles and deepcopies at any point of a game, as the AEC adapter does;
* ``view(agent)``: a JSON-serialisable dict of what that agent may see plus its legal action names;
* ``record()``: the game so far as a replayable record (:mod:`tavernzoo.envs.records`).

Illegal actions: with ``illegal_reward=None`` (the class default) an illegal joint move raises
:class:`~tavernzoo.envs.core.IllegalActionError` and changes nothing. With a number (the
``parallel_env()`` and ``env()`` factories use -1) the game ends at once, every offender is paid that
number and everyone else 0, as PettingZoo's ``TerminateIllegalWrapper`` does for turn-based games;
that wrapper itself cannot serve an AEC env converted from a Parallel one, since it edits the
``unwrapped`` env, which is then this Parallel env.

:func:`make_parallel_factories` builds a versioned module's ``parallel_env``, ``env`` and ``raw_env``;
the AEC forms are :class:`CheckedParallelToAEC`: PettingZoo's ``parallel_to_aec`` conversion with the
checks of ``OrderEnforcingWrapper`` and :class:`~tavernzoo.envs.aec.ActionCheckWrapper` built in (one
class instead of two more wrappers forwarding every attribute read).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils import conversions
from pettingzoo.utils.env_logger import EnvLogger

from .aec import OrderChecks, TableMethods, as_action, recordable_seed, set_table
from .core import Chance, Game, IllegalActionError


class TavernParallelEnv(TableMethods, ParallelEnv):
    """A simultaneous-move tavernzoo game as a PettingZoo Parallel environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "name": "tavernzoo", "is_parallelizable": True}

    def __init__(self, game: Game, render_mode: str | None = None, illegal_reward: float | None = None,
                 **config: Any):
        if not game.simultaneous:
            raise ValueError(f"{game.name} is turn-based: use tavernzoo.envs.aec.TavernAECEnv")
        set_table(self, game, render_mode, config)
        self.illegal_reward = None if illegal_reward is None else float(illegal_reward)
        self._seats_out = getattr(self._rules, "seats_out", None)
        self.agents: list[str] = []
        self.end_reason: str | None = None
        self._history: list[dict[int, int]] = []

    # --- the PettingZoo API --------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.seed_used = recordable_seed(seed)
        self.game_state = self._rules.new_game(self.config, Chance(self.seed_used))
        self._history = []
        self.end_reason = None
        out = set(self._seats_out(self.game_state)) if self._seats_out else set()
        self.agents = [agent for seat, agent in enumerate(self.possible_agents) if seat not in out]
        observations = {agent: self._observe(self._seat_of[agent]) for agent in self.agents}
        common = self._common_info()
        infos = {agent: self._info(self._seat_of[agent], common) for agent in self.agents}
        if self.render_mode == "human":
            self.render()
        return observations, infos

    def step(self, actions: dict[str, Any]):
        if self.game_state is None:
            raise RuntimeError("step() before reset()")
        if not self.agents:
            raise RuntimeError("the game is over: call reset()")
        seat_of = self._seat_of
        stray = [agent for agent in actions if agent not in seat_of or agent not in self.agents]
        if stray:
            raise ValueError(f"actions for agents not in play: {stray}; in play: {self.agents}")
        joint = {seat_of[agent]: self._checked_action(agent, action) for agent, action in actions.items()}
        state, rules = self.game_state, self._rules
        try:
            rules.apply_joint(state, joint)  # raises IllegalActionError, changing nothing
        except IllegalActionError:
            if self.illegal_reward is None:
                raise
            return self._end_by_illegal_move(joint)
        self._history.append(joint)

        terminal = rules.is_terminal(state)
        truncated = terminal and rules.is_truncated(state)
        final = rules.returns(state)
        out = set(self._seats_out(state)) if self._seats_out else set()
        common = self._common_info()
        if terminal:
            common["returns"] = list(final)
            common["end_reason"] = getattr(state, "end_reason", None) or None
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        remaining = []
        for agent in self.agents:
            seat = seat_of[agent]
            gone = seat in out
            if gone or terminal:
                rewards[agent] = float(final[seat])
                terminations[agent] = gone or not truncated
                truncations[agent] = truncated and not gone
            else:
                rewards[agent] = 0.0
                terminations[agent] = False
                truncations[agent] = False
                remaining.append(agent)
            observations[agent] = self._observe(seat)
            infos[agent] = self._info(seat, common)
        self.agents = remaining
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def _checked_action(self, agent: str, action: Any) -> int:
        try:
            return as_action(action, self._num_actions)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{agent}: {error}") from None

    def _end_by_illegal_move(self, joint: dict[int, Any]):
        state, rules = self.game_state, self._rules
        offenders = {seat for seat in rules.acting_seats(state)
                     if seat not in joint or joint[seat] not in rules.legal_actions(state, seat)}
        EnvLogger.warn_on_illegal_move()
        self.end_reason = "illegal_action"
        common = self._common_info()
        common["end_reason"] = "illegal_action"
        common["illegal_action"] = {self.possible_agents[seat]: joint.get(seat) for seat in sorted(offenders)}
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        mask = np.zeros(self._num_actions, dtype=np.int8)
        for agent in self.agents:
            seat = self._seat_of[agent]
            rewards[agent] = self.illegal_reward if seat in offenders else 0.0
            terminations[agent] = True
            truncations[agent] = False
            observations[agent] = {"observation": self._encode(seat), "action_mask": mask.copy()}
            infos[agent] = self._info(seat, common)
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _encode(self, seat: int) -> np.ndarray:
        observation = np.empty(self._obs_size, dtype=np.float32)
        self._observer.encode(self.game_state, seat, observation)
        return observation

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        state = self.game_state
        observation = np.empty(self._obs_size, dtype=np.float32)
        self._observer.encode(state, seat, observation)
        mask = np.zeros(self._num_actions, dtype=np.int8)
        for action in self._rules.legal_actions(state, seat):  # item by item: faster than a fancy index here
            mask[action] = 1
        return {"observation": observation, "action_mask": mask}

    def _common_info(self) -> dict[str, Any]:
        order = list(self._seats_out(self.game_state)) if self._seats_out else []
        state = self.game_state
        winner = getattr(state, "winner", -1)
        if winner is not None and winner >= 0:
            order.append(winner)
        return {"round": getattr(state, "round", len(self._history)),
                "finishing_order": [self.possible_agents[seat] for seat in order]}

    def _info(self, seat: int, common: dict[str, Any]) -> dict[str, Any]:
        agent = self.possible_agents[seat]
        order = common["finishing_order"]
        place = len(self.possible_agents) - order.index(agent) if agent in order else None
        return {**common, "place": place}

    # --- beyond PettingZoo: views for frontends, records for replays -----------------------------------

    def legal_action_names(self, agent: str) -> list[str]:
        """Names of ``agent``'s legal actions this round; empty if it has nothing to decide."""
        if self.game_state is None or agent not in self.agents:
            return []
        return [self.action_names[a] for a in self._rules.legal_actions(self.game_state, self._seat_of[agent])]



class CheckedParallelToAEC(OrderChecks, conversions.parallel_to_aec_wrapper):
    """A :class:`TavernParallelEnv` as an AEC env: PettingZoo's ``parallel_to_aec`` conversion with the
    checks of ``OrderEnforcingWrapper(ActionCheckWrapper(...))`` built in, behaving as that stack did:
    order errors from :class:`~tavernzoo.envs.aec.OrderChecks`, and every action checked when it is given
    (the conversion only hands the round's actions to the Parallel env when the last agent has chosen,
    too late to name a bad one): TypeError for a non-integer, ValueError outside the action space."""

    def __init__(self, parallel_env: TavernParallelEnv):
        super().__init__(parallel_env)
        self._has_reset = False
        self._has_updated = False
        self._num_actions = parallel_env._num_actions

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if action is None and (self.terminations[agent] or self.truncations[agent]):
            super().step(None)
            return
        super().step(as_action(action, self._num_actions))

    def observe(self, agent: str) -> Any:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._observations[agent]


def make_parallel_factories(game: Game):
    """The ``parallel_env``, ``env`` and ``raw_env`` functions of a simultaneous game's versioned module."""

    def parallel_env(render_mode: str | None = None, illegal_reward: float | None = -1.0,
                     **config: Any) -> TavernParallelEnv:
        return TavernParallelEnv(game, render_mode=render_mode, illegal_reward=illegal_reward, **config)

    def raw_env(render_mode: str | None = None, **config: Any) -> CheckedParallelToAEC:
        return CheckedParallelToAEC(TavernParallelEnv(game, render_mode=render_mode, **config))

    def env(render_mode: str | None = None, **config: Any) -> CheckedParallelToAEC:
        return CheckedParallelToAEC(TavernParallelEnv(game, render_mode=render_mode, illegal_reward=-1.0, **config))

    parallel_env.__doc__ = (f"{game.title} as a PettingZoo ParallelEnv (the native API): an illegal move "
                            "loses (illegal_reward) and ends the game; illegal_reward=None raises instead.")
    raw_env.__doc__ = f"{game.title} as an AEC env (parallel_to_aec): illegal actions raise IllegalActionError."
    env.__doc__ = f"{game.title} as a checked AEC env (parallel_to_aec): an illegal move loses and ends the game."
    return parallel_env, env, raw_env
