"""MaskablePPO whose rollouts on the kernel's tables answer the learner and its latest self in one forward.

SB3's ``collect_rollouts`` steps every game to its learner's next decision before the learner's forward: on
train/kernel_env.py's tables that is one forward of the learner's network over the learner's seats, then
rounds of kernel calls and one forward of its latest self (the same weights, during a rollout) over
shrinking batches of opponent seats, about 9 forwards per step. :class:`SharedForwardPPO` lets each game
run at its own pace instead: every round, each game waits on one Python seat, the learner's or a network
opponent's, and all the seats held by the learner or by the league's ``latest`` member are answered in
one forward of the actor (:meth:`~.lean_policy.LeanMaskablePolicy.act`), the other network members
(snapshots, pool networks) in one batch each, then one kernel call plays them all: about 135 rounds of
45 rows a rollout (2,048 decisions, 3 rows each at a table of four against the defaults' league) instead of
about 290 forwards (docs/performance.md). The critic, which only the update reads, runs once per rollout
over all its decisions.

The rollout buffer is filled as SB3 fills it, a column per game: the learner's decision in game ``g``
goes to row ``filled[g]`` of column ``g`` (observation, action, mask, log-probability, and whether it
starts an episode; its value at the end); the reward of a row is written when its outcome is known: 0
when the learner decides again in the same episode, the game's return for its seat when the episode ends
(plus ``gamma * V(final observation)`` when it was cut off, as SB3 bootstraps ``TimeLimit.truncated``). A
column is complete when its last row's outcome is known; a game whose column is complete waits where it is
(at the learner's decision, or mid-way through a fresh deal) for the next rollout. When every column is
complete the last values (the learner's pending decision's, or none where the episode ended) go to the
buffer's ``compute_returns_and_advantage`` as SB3 passes them. Callbacks step once per ``n_envs`` learner
decisions, as SB3 steps them, with the infos of the episodes that ended since.

With no network opponents (a league of compiled bots) every game waits on the learner at every round, so
the rounds are SB3's steps and the buffer is SB3's, draws included; with network opponents the games and
the buffer are SB3's where every choice is deterministic (tests/test_kernel_training.py; the values to
float rounding, the critic's batches being others). The actor reads each seat's own view (the table's); the
buffer keeps what the learner's network reads (``KernelSelfPlayVecEnv.learner_views``: with a privileged critic,
every seat's view after its own).
On any other env (the Python backend) it is MaskablePPO.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import obs_as_tensor

from .kernel_env import KernelSelfPlayVecEnv


class SharedForwardPPO(MaskablePPO):
    """MaskablePPO collecting rollouts in rounds on :class:`~.kernel_env.KernelSelfPlayVecEnv` (module
    docstring); ``shared_forward = False`` keeps SB3's own loop there too (the benchmark's baseline)."""

    shared_forward = True

    def collect_rollouts(self, env: Any, callback: Any, rollout_buffer: Any, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        if not (self.shared_forward and use_masking and isinstance(env, KernelSelfPlayVecEnv)):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        return self._collect_rounds(env, callback, rollout_buffer, n_rollout_steps)

    def _collect_rounds(self, env: KernelSelfPlayVecEnv, callback: Any, buffer: Any, n_steps: int) -> bool:
        policy, table, n_envs = self.policy, env.table, env.num_envs
        policy.set_training_mode(False)
        buffer.reset()
        callback.on_rollout_start()
        skip = env.SKIP
        filled = np.zeros(n_envs, dtype=np.int64)  # rows written in each game's column
        open_row = np.zeros(n_envs, dtype=bool)  # its last row waits for its outcome
        complete = np.zeros(n_envs, dtype=bool)
        last_dones = np.zeros(n_envs, dtype=bool)
        last_observations = np.zeros((n_envs, *buffer.obs_shape), dtype=np.float32)
        ended_infos: list[dict[str, Any]] = []
        decisions, steps = 0, 0  # learner decisions not yet handed to the callbacks; the callbacks' steps
        latest = env.league.latest
        learner_turn, member_at = env.deciders()
        while not complete.all():
            playing = ~complete
            learners = np.flatnonzero(playing & learner_turn)
            latest_index = env.index_of(latest)  # None until the latest self holds a seat
            shared = playing & (learner_turn | (member_at == latest_index if latest_index is not None else False))
            moves = np.full(n_envs, skip, dtype=np.int64)
            if shared.any():
                games = np.flatnonzero(shared)
                actions, log_probs = policy.act(table.observations[games], table.masks[games])
                moves[games] = actions
                mine = learner_turn[games]
                rows = filled[learners]
                buffer.observations[rows, learners] = env.learner_views(learners)
                buffer.actions[rows, learners, 0] = actions[mine]
                buffer.action_masks[rows, learners] = table.masks[learners]
                buffer.log_probs[rows, learners] = log_probs[mine]
                buffer.episode_starts[rows, learners] = self._last_episode_starts[learners]
                self._last_episode_starts[learners] = False
                filled[learners] += 1
                open_row[learners] = True
            others = np.flatnonzero(playing & ~shared)
            if others.size:
                env.answer(others, member_at[others], moves)
            for g, reward, info in env.play_round(moves):
                buffer.rewards[filled[g] - 1, g] = reward
                if info["TimeLimit.truncated"]:  # cut off, not lost: bootstrap from its final view, as SB3 does
                    final = policy.obs_to_tensor(info["terminal_observation"])[0]
                    with torch.no_grad():
                        buffer.rewards[filled[g] - 1, g] += self.gamma * policy.predict_values(final)[0]
                self._last_episode_starts[g] = True
                open_row[g] = False
                if filled[g] == n_steps:
                    complete[g] = last_dones[g] = True
                ended_infos.append(info)
            learner_turn, member_at = env.deciders()
            decided = open_row & learner_turn  # the learner decides again: its last row's reward was 0
            open_row[decided] = False
            done = decided & (filled == n_steps)
            if done.any():
                complete[done] = True
                last_observations[done] = env.learner_views(np.flatnonzero(done))
            decisions += learners.size
            # The callbacks' steps, one per n_envs decisions as SB3's; the rollout's last once every column's
            # outcome is known, so that it hands over every episode that ended in the rollout.
            while decisions >= n_envs and (steps < n_steps - 1 or complete.all()):
                decisions -= n_envs
                steps += 1
                if not self._callback_step(callback, n_envs, ended_infos):
                    return False
                ended_infos = []
        # The critic once over the rollout's decisions and the pending ones: one wide batch (only the update
        # reads the values) instead of a narrow one per round.
        evaluated = np.concatenate([buffer.observations.reshape(-1, *buffer.obs_shape), last_observations])
        with torch.no_grad():
            values = policy.predict_values(obs_as_tensor(evaluated, self.device)).numpy()[:, 0]
        buffer.values[:] = values[:-n_envs].reshape(buffer.values.shape)
        buffer.pos, buffer.full = buffer.buffer_size, True
        buffer.compute_returns_and_advantage(last_values=torch.as_tensor(values[-n_envs:]), dones=last_dones)
        callback.update_locals(locals())
        callback.on_rollout_end()
        return True

    def _callback_step(self, callback: Any, n_envs: int, infos: list[dict[str, Any]]) -> bool:
        """One step for the callbacks, as SB3's loop makes it after each env step: ``n_envs`` more timesteps,
        the infos of the episodes that ended (``locals()["infos"]``, ``["dones"]``); False to stop."""
        self.num_timesteps += n_envs
        dones = np.ones(len(infos), dtype=bool)
        callback.update_locals(locals())
        if not callback.on_step():
            return False
        self._update_info_buffer(infos, dones)
        return True
