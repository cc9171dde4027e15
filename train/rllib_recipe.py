"""RLlib recipe: any tavernzoo game trained multi-agent with PPO and action masks (a starting point).

    python -m tavernzoo.train.rllib_recipe GAME [--iterations N] [--set KEY=VALUE] [--address ADDR]

tavernzoo's own trainer (``tavernzoo train``) is the supported path; this recipe is for users of RLlib who
want to start from a working example. What it shows:

* the env: RLlib's ``PettingZooEnv`` steps every tavernzoo game as it is (the one AEC adapter); the only
  change is the observation's keys and the mask's dtype, renamed to what RLlib's action-masking module
  reads (``{"observations": float32[...], "action_mask": float32[...]}``), in :class:`MaskedPettingZooEnv`;
* the masks: RLlib's PPO RLModule does not look at masks, so :func:`masked_module_spec` uses RLlib's
  own action-masking module (``ActionMaskingTorchRLModule``), which sets the logits of illegal actions to
  the float minimum before sampling, in training and in inference alike: an illegal action is never drawn
  (and the env raises on one, so a broken mask cannot go unnoticed);
* the policies: one shared policy plays every seat (self-play; the games are symmetric), so the
  learner's batch holds every seat's decisions; ``policy_mapping_fn`` is where a league would go.

The rewards are the game's own (zero-sum, paid at the end); RLlib's PettingZoo wrapper notes that its
standard algorithms are made for cooperative games, so expect slower learning than tavernzoo's league.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

POLICY = "shared"


def env_name(game: str) -> str:
    return f"tavernzoo_{game}"


def _masked_space(space):
    from gymnasium import spaces

    return spaces.Dict({
        "observations": space["observation"],
        "action_mask": spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32),
    })


def _masked(observation: dict) -> dict:
    return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


def make_masked_env(env_config: dict[str, Any]):
    """RLlib's env creator: ``{"game": NAME, **game options}``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from ..envs import get_game
    from ..eval.match import make_env

    class MaskedPettingZooEnv(PettingZooEnv):
        """RLlib's PettingZooEnv with the observation keys its action-masking module expects."""

        def __init__(self, env):
            super().__init__(env)
            self.observation_spaces = {agent: _masked_space(space) for agent, space in self.observation_spaces.items()}
            from gymnasium import spaces

            self.observation_space = spaces.Dict(self.observation_spaces)

        def reset(self, *, seed=None, options=None):
            observations, infos = super().reset(seed=seed, options=options)
            return {agent: _masked(obs) for agent, obs in observations.items()}, infos

        def step(self, action):
            # The module masks every sampled action, so an illegal one is a bug here, not a lost game.
            agent = self.env.agent_selection
            mask = self.env.observe(agent)["action_mask"]
            chosen = action[agent]
            if not 0 <= int(chosen) < len(mask) or not mask[int(chosen)]:
                raise ValueError(f"{agent} chose action {chosen}, which its mask forbids "
                                 f"(legal: {np.flatnonzero(mask).tolist()})")
            observations, *rest = super().step(action)
            return {agent: _masked(obs) for agent, obs in observations.items()}, *rest

    options = dict(env_config)
    game = get_game(options.pop("game"))
    return MaskedPettingZooEnv(make_env(game, options))


def make_config(game: str, game_config: dict[str, Any] | None = None, *, seed: int = 0, num_env_runners: int = 0,
                train_batch_size: int = 2000, minibatch_size: int = 256, num_epochs: int = 4,
                hidden: tuple[int, ...] = (128, 128), lr: float = 3e-4):
    """A ready PPOConfig for ``game`` (new API stack): masked PPO RLModule, one shared policy."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from ..envs import get_game

    name = get_game(game).name  # a clear error for an unknown game, before RLlib builds anything
    register_env(env_name(name), make_masked_env)
    return (
        PPOConfig()
        # RLlib's env checker steps with unmasked random actions, which this env refuses by design (an
        # illegal action here would be a bug of the masking module): the masked training itself is the check.
        .environment(env_name(name), env_config={"game": name, **(game_config or {})}, disable_env_checking=True)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY)
        .rl_module(rl_module_spec=masked_module_spec(hidden))
        .env_runners(num_env_runners=num_env_runners)
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr)
        .debugging(seed=seed)
        .reporting(metrics_num_episodes_for_smoothing=20)
    )


def masked_module_spec(hidden: tuple[int, ...]):
    """The multi-agent module spec: RLlib's action-masking PPO module for the shared policy."""
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return MultiRLModuleSpec(rl_module_specs={
        POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                           model_config=DefaultModelConfig(fcnet_hiddens=list(hidden), fcnet_activation="tanh")),
    })


def train(game: str, iterations: int, game_config: dict[str, Any] | None = None, **options: Any) -> list[dict]:
    """Build PPO for ``game`` and run ``iterations`` training iterations; each iteration's summary."""
    algorithm = make_config(game, game_config, **options).build_algo()
    summaries = []
    try:
        for _ in range(iterations):
            result = algorithm.train()
            runners = result.get("env_runners", {})
            learner = result.get("learners", {}).get(POLICY, {})
            summaries.append({
                "iteration": int(result.get("training_iteration", len(summaries) + 1)),
                "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                "episodes": int(runners.get("num_episodes_lifetime", runners.get("num_episodes", 0))),
                "episode_length": runners.get("episode_len_mean"),
                "policy_loss": learner.get("policy_loss"),
                "entropy": learner.get("entropy"),
            })
    finally:
        algorithm.stop()
    return summaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train a tavernzoo game with RLlib PPO and action masks.")
    parser.add_argument("game", help="game name")
    parser.add_argument("--iterations", type=int, default=10, help="training iterations (default 10)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a game option")
    parser.add_argument("--address", help="Ray cluster to join (default: start one here)")
    args = parser.parse_args(argv)
    from ..eval.ray_backend import connect

    options = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep:
            parser.error(f"--set expects KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    connect(args.address)
    for summary in train(args.game, args.iterations, options):
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
