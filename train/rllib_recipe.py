"""RLlib recipe: any tavernzoo game trained multi-agent with PPO and action masks (a starting point).

    tavernzoo rllib GAME [--iterations N] [--batch STEPS] [--seed S] [--set KEY=VALUE] [--out DIR]
                         [--checkpoint-every N] [--eval-games GAMES] [--address ADDR]
    tavernzoo rllib --resume DIR [--iterations N]
    tavernzoo export DIR --out BOT.onnx

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

* the run (:class:`RLlibRun`): checkpoints laid out as ``tavernzoo train``'s, each with the policy as a
  numpy bot (``policy.json`` + ``policy.npz``, from the learner's weights in this process), so the run
  directory is a bot spec and ``tavernzoo export`` makes an ONNX bot of it without reading RLlib's
  pickled files; the run ends with ``tavernzoo train``'s report (train/evaluate.py ``strength_report``).

The rewards are the game's own (zero-sum, paid at the end); RLlib's PettingZoo wrapper notes that its
standard algorithms are made for cooperative games, so expect slower learning than tavernzoo's league.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.policy import MLPPolicy
from ..envs.records import write_json_atomic

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


def _summary(result: dict, previous: int) -> dict[str, Any]:
    """One iteration's summary line from RLlib's result dict."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(POLICY, {})
    return {
        "iteration": int(result.get("training_iteration", previous + 1)),
        "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episodes": int(runners.get("num_episodes_lifetime", runners.get("num_episodes", 0))),
        "episode_length": runners.get("episode_len_mean"),
        "policy_loss": learner.get("policy_loss"),
        "entropy": learner.get("entropy"),
    }


def train(game: str, iterations: int, game_config: dict[str, Any] | None = None, **options: Any) -> list[dict]:
    """Build PPO for ``game`` and run ``iterations`` training iterations; each iteration's summary (nothing
    is saved: :class:`RLlibRun` is the run with checkpoints and a report)."""
    algorithm = make_config(game, game_config, **options).build_algo()
    summaries: list[dict] = []
    try:
        for _ in range(iterations):
            summaries.append(_summary(algorithm.train(), len(summaries)))
    finally:
        algorithm.stop()
    return summaries


def policy_from_weights(state: dict[str, Any], meta: dict[str, Any]) -> MLPPolicy:
    """The policy network of :func:`masked_module_class` (its ``pi`` MLP) as a numpy :class:`MLPPolicy`.

    ``state`` is the module's state dict as numpy arrays (``pi.0.weight``, ``pi.0.bias``, ``pi.2.weight``,
    ...: torch's Linear layers at the even places of the Sequential, tanh between them); the mask is the
    bot's, applied as the module applies it (illegal logits removed before the argmax)."""
    indices = sorted({int(key.split(".")[1]) for key in state if key.startswith("pi.") and key.endswith(".weight")})
    if not indices:
        raise ValueError("the RLlib module state holds no policy network (no pi.N.weight): not the recipe's module")
    weights = [np.asarray(state[f"pi.{i}.weight"], np.float32) for i in indices]
    biases = [np.asarray(state[f"pi.{i}.bias"], np.float32) for i in indices]
    return MLPPolicy(weights, biases, "tanh", dict(meta))


@dataclass
class RLlibOptions:
    """One ``tavernzoo rllib`` run (stored as the run's ``config.json``)."""

    game: str
    """the game's name"""
    game_config: dict[str, Any] = field(default_factory=dict)
    """the game's options (``--set KEY=VALUE``)"""
    iterations: int = 10
    """training iterations in all (a resumed run trains up to this many)"""
    batch: int = 2000
    """env steps per training iteration"""
    seed: int = 0
    """RLlib's seed; the report's deals are drawn from seed + 7, as ``tavernzoo train`` draws them"""
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer widths of the policy and value networks"""
    checkpoint_every: int = 5
    """iterations between checkpoints (the last iteration is always saved)"""
    eval_games: int = 1000
    """games of the final report against each reference bot (0: no report)"""

    def validate(self) -> RLlibOptions:
        from ..envs import get_game

        for name, low in (("iterations", 1), ("batch", 2), ("checkpoint_every", 1), ("eval_games", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                flag = "--" + name.replace("_", "-")  # the command's flag for the field (config.json's key)
                raise ValueError(f"{flag} {value!r} must be a whole number of at least {low}")
        if not self.hidden or not all(isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in self.hidden):
            raise ValueError(f"hidden={self.hidden!r} must list positive layer widths, e.g. [128, 128]")
        game = get_game(self.game)
        self.game = game.name
        game.make_config(self.game_config)  # a bad option fails here, before Ray starts
        return self


class RLlibRun:
    """A ``tavernzoo rllib`` run in ``out``: the recipe's PPO, checkpoints that are bots, the final report.

    The run directory (as ``tavernzoo train``'s, so ``tavernzoo export RUN`` and bot specs take it)::

        config.json                   the RLlibOptions (a resumed run reads them back)
        checkpoints/latest            the name of the newest complete checkpoint
        checkpoints/iter_000005/      rllib/ (RLlib's own checkpoint: for resuming your own run only,
                                      it unpickles), policy.json + policy.npz (the policy as a bot:
                                      numpy, no pickle), metrics.json (every iteration's summary so far)
        report.json                   the final report against random and the heuristic

    The bot files are written from the learner's weights in this process (RLlib's
    ``LearnerGroup.get_weights``, numpy arrays), so nothing ever reads RLlib's pickled checkpoint to make
    a bot: exporting, loading and playing the policy read only JSON and ``.npz`` (``allow_pickle=False``).
    A checkpoint is written into a temporary folder and renamed when complete; ``latest`` is replaced
    atomically, so a run killed at any moment resumes from its last complete checkpoint.
    """

    def __init__(self, options: RLlibOptions | None, out: str | os.PathLike, resume: bool = False,
                 iterations: int | None = None, eval_games: int | None = None):
        self.out = Path(out)
        if resume:
            saved = self.out / "config.json"
            if not saved.is_file() or not (self.out / "checkpoints" / "latest").is_file():
                raise ValueError(f"--resume {self.out}: no config.json and checkpoints/latest there, "
                                 "so it is not an rllib run")
            try:
                stored = json.loads(saved.read_text())
                options = RLlibOptions(**stored)
            except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as error:
                raise ValueError(f"--resume {self.out}: config.json is not an rllib run's ({error})") from None
            latest = self.latest_checkpoint()
            if not (latest / "rllib" / "rllib_checkpoint.json").is_file() or not (latest / "metrics.json").is_file():
                raise ValueError(f"--resume {self.out}: its latest checkpoint {latest.name} is incomplete "
                                 "(rllib/ and metrics.json expected); point checkpoints/latest at a complete one")
            done = len(json.loads((latest / "metrics.json").read_text()).get("iterations", []))
            if iterations is not None and iterations < done:
                raise ValueError(f"--resume {self.out}: the run is at iteration {done}; --iterations {iterations} "
                                 f"is behind it (give {done} or more)")
        elif options is None:
            raise ValueError("a fresh rllib run needs its RLlibOptions")
        elif (self.out / "checkpoints" / "latest").exists():
            raise ValueError(f"{self.out} already holds a training run; use --resume {self.out} or another --out")
        if iterations is not None:
            options.iterations = iterations
        if eval_games is not None:
            options.eval_games = eval_games
        self.options = options.validate()
        self.resume = resume
        from ..envs import get_game

        self.game = get_game(options.game)
        self.game_config = self.game.make_config(options.game_config)
        self.provenance = {
            "game": self.game.name, "env": self.game.env_name, "game_config": options.game_config,
            "action_names": list(self.game.action_names(self.game_config)),
            "trained_with": "tavernzoo.train.rllib_recipe (RLlib PPO, one shared policy)", "seed": options.seed,
        }

    def latest_checkpoint(self) -> Path | None:
        pointer = self.out / "checkpoints" / "latest"
        return self.out / "checkpoints" / pointer.read_text().strip() if pointer.is_file() else None

    def run(self, on_iteration: Callable[[dict], None] | None = None, progress: bool = False) -> dict[str, Any]:
        """Train up to ``options.iterations`` (from the last checkpoint when resuming), save, report."""
        options = self.options
        self.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out / "config.json", asdict(options))
        algorithm = make_config(self.game.name, options.game_config, seed=options.seed, train_batch_size=options.batch,
                                minibatch_size=min(256, options.batch), hidden=tuple(options.hidden)).build_algo()
        summaries: list[dict] = []
        try:
            latest = self.latest_checkpoint() if self.resume else None
            if latest is not None:
                # Our own run: trusted (RLlib's checkpoint is pickled; never resume one you were sent).
                algorithm.restore_from_path(str((latest / "rllib").resolve()))
                summaries = json.loads((latest / "metrics.json").read_text())["iterations"]
            started = time.perf_counter()
            while algorithm.training_iteration < options.iterations:
                summaries.append(_summary(algorithm.train(), len(summaries)))
                if on_iteration is not None:
                    on_iteration(summaries[-1])
                iteration = algorithm.training_iteration
                if iteration % options.checkpoint_every == 0 or iteration == options.iterations:
                    self.save_checkpoint(algorithm, summaries)
            elapsed = time.perf_counter() - started
            final = self.latest_checkpoint()
            if final is None or final.name != checkpoint_name(algorithm.training_iteration):
                final = self.save_checkpoint(algorithm, summaries)
        finally:
            algorithm.stop()
        report: dict[str, Any] = {}
        if options.eval_games:
            from .evaluate import strength_report

            report = strength_report(self.game, MLPPolicy.load(final), str(final), options.eval_games,
                                     seed=options.seed + 7, config=self.game_config, progress=progress)
        report["iterations"] = algorithm.training_iteration
        report["timesteps"] = summaries[-1]["env_steps"] if summaries else 0
        report["train_seconds"] = round(elapsed, 1)
        report["checkpoint"] = str(final)
        write_json_atomic(self.out / "report.json", report)
        return report

    def save_checkpoint(self, algorithm: Any, summaries: list[dict]) -> Path:
        name = checkpoint_name(algorithm.training_iteration)
        checkpoints = self.out / "checkpoints"
        final, temporary = checkpoints / name, checkpoints / f".{name}.tmp"
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir(parents=True)
        algorithm.save_to_path(str((temporary / "rllib").resolve()))
        weights = algorithm.learner_group.get_weights(module_ids=[POLICY])[POLICY]
        provenance = {**self.provenance, "iterations": algorithm.training_iteration,
                      "timesteps": summaries[-1]["env_steps"] if summaries else 0}
        policy_from_weights(weights, provenance).save(temporary)
        write_json_atomic(temporary / "metrics.json", {"iterations": summaries})
        shutil.rmtree(final, ignore_errors=True)
        os.replace(temporary, final)
        pointer = checkpoints / ".latest.tmp"
        pointer.write_text(name + "\n")
        os.replace(pointer, checkpoints / "latest")
        return final


def checkpoint_name(iteration: int) -> str:
    return f"iter_{iteration:06d}"
