"""RLlib recipe: any tavernzoo game trained multi-agent with PPO and action masks (a starting point).

    tavernzoo rllib GAME [--iterations N] [--batch STEPS] [--seed S] [--set KEY=VALUE] [--address ADDR]

tavernzoo's own trainer (``tavernzoo train``) is the supported path; this recipe is for users of RLlib who
want to start from a working example. What it shows:

* the env: RLlib's ``PettingZooEnv`` steps every tavernzoo game as it is (the one AEC adapter); the only
  change is the observation's keys and the mask's dtype, renamed to what RLlib's action-masking module
  reads (``{"observations": float32[...], "action_mask": float32[...]}``), in :class:`MaskedPettingZooEnv`;
* the masks: RLlib's PPO RLModule does not look at masks, so the recipe carries its own small module
  (:func:`masked_module_class`, on RLlib's public ``TorchRLModule`` and ``ValueFunctionAPI`` only; RLlib's
  example masking module is not an API and changes between releases), which sets the logits of illegal
  actions to the float minimum before sampling, in training and in inference alike: an illegal action is
  never drawn (and the env raises on one, so a broken mask cannot go unnoticed);
* the policies: one shared policy plays every seat (self-play; the games are symmetric), so the
  learner's batch holds every seat's decisions; ``policy_mapping_fn`` is where a league would go.

The rewards are the game's own (zero-sum, paid at the end); RLlib's PettingZoo wrapper notes that its
standard algorithms are made for cooperative games, so expect slower learning than tavernzoo's league.
"""

from __future__ import annotations

from typing import Any

POLICY = "shared"


def env_name(game: str) -> str:
    return f"tavernzoo_{game}"


def _masked_space(space):
    import numpy as np
    from gymnasium import spaces

    return spaces.Dict({
        "observations": space["observation"],
        "action_mask": spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32),
    })


def _masked(observation: dict) -> dict:
    import numpy as np

    return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


def make_masked_env(env_config: dict[str, Any]):
    """RLlib's env creator: ``{"game": NAME, **game options}``."""
    import numpy as np
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from ..envs import get_game
    from ..envs.make import make_env

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
    """The multi-agent module spec: :func:`masked_module_class` for the shared policy."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return MultiRLModuleSpec(rl_module_specs={
        POLICY: RLModuleSpec(module_class=masked_module_class(), model_config={"hidden": list(hidden)}),
    })


def masked_module_class():
    """Our masked PPO module (a class made on first use, so that importing this file needs no Ray).

    Built only on RLlib's public RLModule interfaces (``TorchRLModule`` and ``ValueFunctionAPI``): two tanh
    MLPs on ``observations`` (policy logits and value), and the logits of the actions that
    ``action_mask`` forbids set to the float minimum, in every forward pass (inference, exploration,
    training), so no masked action is ever sampled and the training loss sees the same distribution.
    """
    global _MASKED_MODULE
    if _MASKED_MODULE is not None:
        return _MASKED_MODULE
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule

    def mlp(inputs: int, hidden: list[int], outputs: int) -> torch.nn.Sequential:
        layers: list[torch.nn.Module] = []
        for width in hidden:
            layers += [torch.nn.Linear(inputs, width), torch.nn.Tanh()]
            inputs = width
        return torch.nn.Sequential(*layers, torch.nn.Linear(inputs, outputs))

    class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
        """PPO's policy and value networks over ``observations``, with ``action_mask`` applied to the logits."""

        def __init__(self, *args, **kwargs):
            kwargs["catalog_class"] = None  # the networks are built here, not by a catalog of RLlib's
            super().__init__(*args, **kwargs)

        def setup(self):
            hidden = list((self.model_config or {}).get("hidden", [128, 128]))
            size = int(np.prod(self.observation_space["observations"].shape))
            self.pi = mlp(size, hidden, int(self.action_space.n))
            self.vf = mlp(size, hidden, 1)

        def _forward(self, batch, **kwargs):
            observation = batch[Columns.OBS]
            logits = self.pi(observation["observations"])
            # log(1) = 0 keeps a legal logit; log(0) = -inf, clamped to the float minimum, removes an illegal one.
            floor = torch.finfo(logits.dtype).min
            masked = logits + torch.clamp(torch.log(observation["action_mask"]), min=floor)
            return {Columns.ACTION_DIST_INPUTS: masked}

        def _forward_train(self, batch, **kwargs):
            return self._forward(batch, **kwargs)

        def compute_values(self, batch, embeddings=None):
            return self.vf(batch[Columns.OBS]["observations"]).squeeze(-1)

    _MASKED_MODULE = MaskedPPOModule
    return MaskedPPOModule


_MASKED_MODULE = None


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
