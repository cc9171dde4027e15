"""Training throughput on Tiny Minotaur: tavernzoo's self-play setup next to the PettingZoo SB3 tutorial's.

    python bench/bench_training.py [--timesteps 40000]

(a) the PettingZoo SB3 action-masking tutorial's setup, applied to Tiny Minotaur: its
    ``SB3ActionMaskWrapper`` turns the AEC env into one gymnasium env (both seats are the learner),
    ``ActionMasker`` supplies the masks, one MaskablePPO with the tutorial's default hyperparameters;
(b) tavernzoo's setup: ``SelfPlayVecEnv`` (16 games per process, the opponent's policy batched) with
    MaskablePPO and the default ``TrainConfig``.

Both learn for the same number of timesteps in this run; the ratio of env-steps per second is printed
(target: at least 5x). Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

from tavernzoo.envs import get_game, tiny_minotaur_v1
from tavernzoo.train.config import TrainConfig
from tavernzoo.train.selfplay import League, SelfPlayVecEnv


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """The tutorial's wrapper, as published (it returns the *acting* agent's reward after the step); also a
    ``gymnasium.Env``, which current gymnasium's wrappers insist on."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (
            self.observe(next_agent),
            self._cumulative_rewards[current_agent],
            self.terminations[current_agent],
            self.truncations[current_agent],
            self.infos[current_agent],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


def tutorial_setup(timesteps: int) -> float:
    env = SB3ActionMaskWrapper(tiny_minotaur_v1.env())
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, verbose=0, device="cpu")
    model.set_random_seed(0)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def tavernzoo_setup(timesteps: int) -> float:
    game = get_game("tiny_minotaur")
    config = TrainConfig(timesteps=timesteps)
    game_config = game.make_config()
    league = League.create(game, game_config, config)
    env = SelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed)
    model = MaskablePPO(
        "MlpPolicy", env, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma, ent_coef=config.ent_coef,
        policy_kwargs={"net_arch": list(config.net_arch)}, seed=0, device="cpu", verbose=0,
    )
    from tavernzoo.train.run import policy_from_sb3

    league.set_latest(policy_from_sb3(model.policy, {}))  # the learner plays itself, batched
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=40_000, help="timesteps each setup learns (default 40000)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    np.random.seed(0)
    tutorial = tutorial_setup(args.timesteps)
    ours = tavernzoo_setup(args.timesteps)
    print(f"\ntraining env-steps/s on tiny_minotaur ({args.timesteps:,} timesteps each, torch threads 1)")
    print(f"  PettingZoo SB3 tutorial setup (1 env, default MaskablePPO) {tutorial:>10,.0f}")
    print(f"  tavernzoo self-play (SelfPlayVecEnv x16, TrainConfig)     {ours:>10,.0f}")
    verdict = "meets" if ours / tutorial >= 5 else "MISSES"
    print(f"  ratio: {ours / tutorial:.2f}x ({verdict} the 5x target)")


if __name__ == "__main__":
    main()
