"""MaskablePPO whose rollouts on the kernel's tables answer the learner and its latest self in one forward.

SB3's ``collect_rollouts`` steps every game to its learner's next decision before the learner's forward: on
train/kernel_env.py's tables that is one forward of the learner's network over the learner's seats, then
rounds of kernel calls and one forward of its latest self (the same weights, during a rollout) over
shrinking batches of opponent seats, about 9 forwards per step. :class:`SharedForwardPPO` lets each game
run at its own pace instead: every round, each game waits on one Python seat, the learner's or a network
opponent's, and all the seats held by the learner or by the league's ``latest`` member are answered in
one forward (:meth:`~.lean_policy.LeanMaskablePolicy.act_and_evaluate`: the actor for every row, the
critic for the learner's rows), the other network members (snapshots, pool networks) in one batch each,
then one kernel call plays them all. About 3.4 rows per learner decision (the learner's and its latest
self's at a table of four), in a forward over all the games (docs/performance.md).

The rollout buffer is filled as SB3 fills it, a column per game: the learner's decision in game ``g``
goes to row ``filled[g]`` of column ``g`` (observation, action, mask, value, log-probability, and whether
it starts an episode); the reward of a row is written when its outcome is known: 0 when the learner
decides again in the same episode, the game's return for its seat when the episode ends (plus
``gamma * V(final observation)`` when it was cut off, as SB3 bootstraps ``TimeLimit.truncated``). A
column is complete when its last row's outcome is known; a game whose column is complete waits where it is
(at the learner's decision, or mid-way through a fresh deal) for the next rollout. When every column is
complete the last values (the learner's pending decision's, or none where the episode ended) go to the
buffer's ``compute_returns_and_advantage`` as SB3 passes them. Callbacks step once per ``n_envs`` learner
decisions, as SB3 steps them, with the infos of the episodes that ended since.

With no network opponents (a league of compiled bots) every game waits on the learner at every round, so
the rounds are SB3's steps and the buffer is SB3's exactly, draws included; with network opponents the
games and the buffer are SB3's where every choice is deterministic (tests/test_shared_forward.py).
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
        skip = env._vector.SKIP
        filled = np.zeros(n_envs, dtype=np.int64)  # rows written in each game's column
        open_row = np.zeros(n_envs, dtype=bool)  # its last row waits for its outcome
        complete = np.zeros(n_envs, dtype=bool)
        last_dones = np.zeros(n_envs, dtype=bool)
        last_observations = np.zeros((n_envs, *buffer.obs_shape), dtype=np.float32)
        ended_infos: list[dict[str, Any]] = []
        decisions = 0  # learner decisions not yet handed to the callbacks
        latest = env.league.latest
        while not complete.all():
            learner_turn, member_at = env.deciders()
            playing = ~complete
            learners = np.flatnonzero(playing & learner_turn)
            latest_index = env.index_of(latest)  # None until the latest self holds a seat
            shared = playing & (learner_turn | (member_at == latest_index if latest_index is not None else False))
            moves = np.full(n_envs, skip, dtype=np.int64)
            if shared.any():
                games = np.flatnonzero(shared)
                observations, masks = table.observations[games], table.masks[games]
                critic = learner_turn[games]
                actions, log_probs, values = policy.act_and_evaluate(observations, masks, critic)
                moves[games] = actions
                rows = filled[learners]
                buffer.observations[rows, learners] = observations[critic]
                buffer.actions[rows, learners, 0] = actions[critic]
                buffer.action_masks[rows, learners] = masks[critic]
                buffer.values[rows, learners] = values
                buffer.log_probs[rows, learners] = log_probs[critic]
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
            learner_turn, _ = env.deciders()
            decided = open_row & learner_turn  # the learner decides again: its last row's reward was 0
            open_row[decided] = False
            done = decided & (filled == n_steps)
            complete[done] = True
            last_observations[done] = table.observations[done]
            decisions += learners.size
            while decisions >= n_envs:  # the callbacks' steps: one per n_envs decisions, as SB3's
                decisions -= n_envs
                self.num_timesteps += n_envs
                infos, dones = ended_infos, np.ones(len(ended_infos), dtype=bool)  # noqa: F841 (callbacks read them)
                callback.update_locals(locals())
                if not callback.on_step():
                    return False
                self._update_info_buffer(infos, dones)
                ended_infos = []
        with torch.no_grad():
            values = policy.predict_values(obs_as_tensor(last_observations, self.device))
        buffer.pos, buffer.full = buffer.buffer_size, True
        buffer.compute_returns_and_advantage(last_values=values, dones=last_dones)
        callback.update_locals(locals())
        callback.on_rollout_end()
        return True
