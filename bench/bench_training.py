"""Training throughput on Tiny Minotaur: tavernzoo's self-play setup next to the PettingZoo SB3 tutorial's.

    python bench/bench_training.py [--timesteps 40000] [--repeats 3]

(a) ``tutorial``: the PettingZoo SB3 action-masking tutorial's setup, applied to Tiny Minotaur: its
    ``SB3ActionMaskWrapper`` turns the AEC env into one gymnasium env (both seats are the learner),
    ``ActionMasker`` supplies the masks, one MaskablePPO with the tutorial's default hyperparameters;
(b) ``before``: tavernzoo's setup as it was before issue 15 — ``SelfPlayVecEnv`` with 16 games x 128
    steps per rollout and SB3's stock ``MlpPolicy`` forward;
(c) ``tavernzoo``: today's setup — the default ``TrainConfig`` (64 games x 32 steps, the same 2,048
    decisions per update) and the model ``tavernzoo train`` builds (``make_model``: the lean rollout
    forward of train/lean_policy.py).

Every setup learns the same number of timesteps; the setups run interleaved, ``--repeats`` times, and
each round's ratio to the tutorial run of the same round is printed, then the median (target: at least
10x). Not a test: the figures go to docs/performance.md ("Training throughput").
"""

from __future__ import annotations

import argparse
import statistics
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
from tavernzoo.train.run import make_model, policy_from_sb3
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


def selfplay_setup(timesteps: int, stock: bool) -> float:
    """Steps/s of tavernzoo's self-play learning; ``stock``: the pre-issue-15 vectorisation and policy."""
    game = get_game("tiny_minotaur")
    config = TrainConfig(timesteps=timesteps, **({"n_envs": 16, "n_steps": 128} if stock else {}))
    game_config = game.make_config()
    league = League.create(game, game_config, config)
    env = SelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed)
    if stock:
        model = MaskablePPO(
            "MlpPolicy", env, learning_rate=config.learning_rate, n_steps=config.n_steps,
            batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma, ent_coef=config.ent_coef,
            policy_kwargs={"net_arch": list(config.net_arch)}, seed=0, device="cpu", verbose=0,
        )
    else:
        model = make_model(config, env)
    league.set_latest(policy_from_sb3(model.policy, {}))  # the learner plays itself, batched
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


SETUPS = {
    "tutorial": ("PettingZoo SB3 tutorial (1 env, default MaskablePPO)", tutorial_setup),
    "before": ("tavernzoo before issue 15 (16 x 128, SB3 forward)", lambda t: selfplay_setup(t, stock=True)),
    "tavernzoo": ("tavernzoo train (64 x 32, lean forward)", lambda t: selfplay_setup(t, stock=False)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=40_000, help="timesteps each setup learns (default 40000)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    np.random.seed(0)
    rates: dict[str, list[float]] = {name: [] for name in SETUPS}
    for round_ in range(args.repeats):
        for name, (_, setup) in SETUPS.items():
            rates[name].append(setup(args.timesteps))
        line = ", ".join(f"{name} {rates[name][-1]:,.0f}/s ({rates[name][-1] / rates['tutorial'][-1]:.1f}x)"
                         for name in SETUPS)
        print(f"round {round_ + 1}: {line}", flush=True)
    print(f"\ntraining env-steps/s on tiny_minotaur ({args.timesteps:,} timesteps per run, {args.repeats} "
          "interleaved rounds, torch threads 1; ratio = median of each round's ratio to that round's tutorial run)")
    for name, (label, _) in SETUPS.items():
        ratio = statistics.median(r / t for r, t in zip(rates[name], rates["tutorial"], strict=True))
        print(f"  {label:<55} {statistics.median(rates[name]):>8,.0f}/s  {ratio:5.2f}x")
    ours = statistics.median(r / t for r, t in zip(rates["tavernzoo"], rates["tutorial"], strict=True))
    print(f"  tavernzoo train vs tutorial: {ours:.2f}x ({'meets' if ours >= 10 else 'MISSES'} the 10x target)")


if __name__ == "__main__":
    main()
