"""Self-play training, top to bottom: league, batched envs, MaskablePPO, checkpoints, the final report.

A run directory holds::

    config.json                     the TrainConfig (a resumed run reads it back)
    checkpoints/latest              the name of the newest complete checkpoint
    checkpoints/step_000100000/     model.zip (SB3, for resuming your own run only: it unpickles),
                                    policy.json + policy.npz (the policy as a bot: numpy only, no pickle),
                                    league/ (pool bookkeeping and snapshot policies), metrics.json
    tb/                             TensorBoard logs: win rate against each pool member, episode
                                    length, entropy and SB3's training statistics
    report.json                     the final evaluation against the reference bots

A checkpoint is written into a temporary folder and renamed when complete, and ``latest`` is replaced
atomically, so a run killed at any moment resumes from its last complete checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from ..agents.policy import MLPPolicy
from ..envs import get_game
from ..envs.records import write_json_atomic
from .config import TrainConfig
from .selfplay import League, SelfPlayVecEnv


def _recorded_networks(out: Path) -> dict[str, str]:
    """The ``networks`` of a run's latest checkpoint (``{}`` where it has none or cannot be read)."""
    from ..agents.policy import find_policy_dir, read_policy_meta

    try:
        networks = read_policy_meta(find_policy_dir(out) / "policy.json").get("networks")
    except (OSError, ValueError):
        return {}
    return {str(spec): str(digest) for spec, digest in networks.items()} if isinstance(networks, dict) else {}


def policy_from_sb3(policy: Any, provenance: dict[str, Any]) -> MLPPolicy:
    """The actor of an SB3 MlpPolicy (hidden layers + action head) as a numpy :class:`MLPPolicy`, with the
    critic (hidden layers + value head) as its value head; without one where the critic is privileged
    (it reads other seats' hidden information, which a bot never has)."""
    import torch

    from .lean_policy import PrivilegedCriticPolicy

    state = {k: v.detach().cpu().numpy().copy() for k, v in policy.state_dict().items()}
    hidden = sorted(
        {int(key.split(".")[2]) for key in state if key.startswith("mlp_extractor.policy_net.")}
    )
    weights = [state[f"mlp_extractor.policy_net.{i}.weight"] for i in hidden] + [state["action_net.weight"]]
    biases = [state[f"mlp_extractor.policy_net.{i}.bias"] for i in hidden] + [state["action_net.bias"]]
    value_hidden = sorted(
        {int(key.split(".")[2]) for key in state if key.startswith("mlp_extractor.value_net.")}
    )
    value_weights = [state[f"mlp_extractor.value_net.{i}.weight"] for i in value_hidden] + [state["value_net.weight"]]
    value_biases = [state[f"mlp_extractor.value_net.{i}.bias"] for i in value_hidden] + [state["value_net.bias"]]
    activation = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu"}[policy.activation_fn]
    if isinstance(policy, PrivilegedCriticPolicy):
        return MLPPolicy(weights, biases, activation, dict(provenance))
    return MLPPolicy(weights, biases, activation, dict(provenance), value_weights, value_biases)


def make_model(config: TrainConfig, env: Any, tensorboard_log: str | None = None, shared_forward: bool = True) -> Any:
    """A fresh MaskablePPO for ``config`` on ``env``, with the lean rollout forward (train/lean_policy.py); on
    the kernel's tables its rollouts answer the learner and its latest self in one forward per round
    (train/shared_forward.py) unless ``shared_forward`` is False (SB3's own loop: the benchmark's baseline)."""
    from .shared_forward import SharedForwardPPO

    policy_class, policy_kwargs = policy_of(config)
    model = SharedForwardPPO(
        policy_class, env, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, ent_coef=config.ent_coef, clip_range=config.clip_range,
        policy_kwargs={"net_arch": list(config.net_arch), **policy_kwargs}, seed=config.seed, device="cpu",
        tensorboard_log=tensorboard_log, verbose=0,
    )
    model.shared_forward = shared_forward
    return model


def policy_of(config: TrainConfig) -> tuple[type, dict[str, Any]]:
    """The SB3 policy class of ``config``'s runs and the keyword arguments it needs beyond ``net_arch``."""
    from .lean_policy import LeanMaskablePolicy, PrivilegedCriticPolicy

    if config.privileged_critic:
        game = get_game(config.game)
        return PrivilegedCriticPolicy, {"own_size": game.encoder.observation_size(game.make_config(config.game_config))}
    return LeanMaskablePolicy, {}


PPO_RESUME_OPTIONS = ("learning_rate", "ent_coef", "clip_range", "gamma", "gae_lambda", "n_epochs", "batch_size",
                      "n_steps")
"""PPO's update hyperparameters a resumed run may change: a resume applies them to the saved model (SB3's load
builds the rollout buffer after them, so ``n_steps`` sizes the next rollouts)."""
RESUME_OPTIONS = PPO_RESUME_OPTIONS + ("n_envs", "latest_share", "pool_bots", "opponent_draw", "snapshot_every",
                                      "snapshot_window", "checkpoint_every", "env_backend", "eval_games")
"""The training options a resumed run may change (``tavernzoo train --resume DIR --set KEY=VALUE``): PPO's update
hyperparameters and the update's size (``n_envs`` games of ``n_steps`` decisions: a fine-tune near a plateau
gains from larger, quieter updates, docs/training.md; the model takes its ``n_envs`` from the env at load), how
many opponent seats the learner's latest self takes and whether a game's opponent seats are drawn one by one or
together (the league reads both at every draw), the bots of its pool (built from the config at every start; a
member kept keeps its record, the snapshots stay), how often a snapshot joins the pool and a checkpoint is
written (the callback counts both from the resumed step; nothing saved depends on them), how many snapshots the
pool keeps (a smaller window drops the oldest at the resume, a larger one keeps more from then on), where the
games run (``env_backend``: the same games either way) and how many games the final report plays
(``eval_games``). The rest is fixed by the checkpoint (the network's shape, the league's seed)."""


class Trainer:
    """One training run (fresh or resumed) in ``out``."""

    def __init__(self, config: TrainConfig | None, out: str | os.PathLike, resume: bool = False,
                 timesteps: int | None = None, changes: dict[str, Any] | None = None):
        """A fresh run of ``config``, or (``resume``) the run in ``out`` with its stored config, trained
        up to ``timesteps`` if given, with ``changes`` (options of :data:`RESUME_OPTIONS`) applied from now
        on. The changed config is stored when the run starts, so a later resume keeps it."""
        self.out = Path(out)
        if changes and not resume:
            raise ValueError("changes apply to a resumed run; a fresh run takes them in its TrainConfig")
        if resume:
            saved = self.out / "config.json"
            if not saved.is_file():
                raise ValueError(f"--resume {self.out}: no config.json there, so it is not a training run")
            config = _saved_config(saved)
            if timesteps is not None:
                config.timesteps = timesteps
            if changes:
                config = _changed_config(config, changes, self.out)
        elif config is None:
            raise ValueError("a fresh training run needs a TrainConfig")
        elif (self.out / "checkpoints" / "latest").exists():
            raise ValueError(f"{self.out} already holds a training run; use --resume {self.out} or another --out")
        self.config = config
        self.resume = resume
        self.game = get_game(config.game)
        self.game_config = self.game.make_config(config.game_config)
        self.provenance = {
            "game": self.game.name, "env": self.game.env_name,
            "game_config": config.game_config, "action_names": list(self.game.action_names(self.game_config)),
            "trained_with": "tavernzoo.train (MaskablePPO self-play)", "seed": config.seed,
        }
        self.init_bot = None
        if config.init:
            self.provenance["started_from"] = config.init
            if not resume:  # read now: a bad spec is refused before anything is written (a resume reads it if needed)
                self.init_bot = self._read_init()
                self._check_init_fits(self.init_bot)
        # Which files the start and the pool's ONNX bots were (agents/export.py ``record_networks``): a resume
        # keeps the digests its first start found, as the games before it were played against those files.
        from ..agents.export import record_networks

        if resume and (earlier := _recorded_networks(self.out)):
            self.provenance["networks"] = earlier
        record_networks(self.provenance, [config.init, *config.pool_bots], self.game.name)
        # The league's bots load here, before anything is written: a pool spec of another game or a missing
        # file is refused with the run directory untouched.
        self.league = League.create(self.game, self.game_config, config)
        if config.env_backend == "kernel":
            from .kernel_env import kernel_refusal

            reason = kernel_refusal(self.game, self.game_config, config)
            if reason is not None:
                raise ValueError(reason)

    def run(self, progress: bool = True) -> dict[str, Any]:
        try:
            return self._run(progress)
        finally:
            self.league.close()  # the league's bots quit with the run (a cmd: program: one per game lane)

    def _run(self, progress: bool) -> dict[str, Any]:
        import torch
        from stable_baselines3.common.utils import set_random_seed

        from .shared_forward import SharedForwardPPO

        config = self.config
        torch.set_num_threads(config.torch_threads)
        set_random_seed(config.seed)
        league = self.league
        env = self.make_env()
        # Again after the env: a compiled kernel's numba threads (its OpenMP layer) share torch's libgomp and set
        # its thread count to the cores' when they start, so the update would run on two spinning OpenMP threads.
        torch.set_num_threads(config.torch_threads)
        latest = self._latest_checkpoint()
        if self.resume and latest is not None:
            # Our own run: trusted. The config's hyperparameters win over the saved ones, so a run whose
            # config.json was changed (a sweep's population-based training) resumes with the new values.
            tuned = {key: getattr(config, key) for key in PPO_RESUME_OPTIONS}
            # The lean rollout forward also for runs saved with SB3's own policy class (same modules). The saved
            # model names the directory it was trained in for its TensorBoard logs: a run copied elsewhere and
            # resumed there logs into its own directory, not into the one it was copied from.
            model = SharedForwardPPO.load(latest / "model.zip", env=env, device="cpu",
                                     custom_objects={"policy_class": policy_of(config)[0]},
                                     tensorboard_log=str(self.out / "tb"), **tuned)
            league.load(latest / "league")
        else:  # a fresh run, or a resumed one killed before its first checkpoint
            model = self.fresh_model(env)
        # Written once the run can start: a model that cannot be built or a bot that does not fit leaves nothing.
        self.out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.out / "config.json", config.to_dict())
        remaining = config.timesteps - model.num_timesteps
        callback = LeagueCallback(self, league)
        started = time.perf_counter()
        if remaining > 0:
            model.learn(total_timesteps=remaining, callback=callback, progress_bar=progress,
                        reset_num_timesteps=not (self.resume and latest is not None), tb_log_name="run")
        elapsed = time.perf_counter() - started
        final = self.save_checkpoint(model, league, callback.metrics(model, elapsed))
        report = self.evaluate(final, progress) if config.eval_games else {}
        report["timesteps"] = int(model.num_timesteps)
        report["train_seconds"] = round(elapsed, 1)
        report["checkpoint"] = str(final)
        write_json_atomic(self.out / "report.json", report)
        return report

    def fresh_model(self, env: Any) -> Any:
        """A new model of the config on ``env``: fresh weights, or with ``init`` the bot's actor, and its critic
        where it has a value head, grown where net_arch is wider (train/warm_start.py); one ValueError line
        where the bot does not fit."""
        from .warm_start import load_actor, load_critic

        model = make_model(self.config, env, tensorboard_log=str(self.out / "tb"))
        if not self.config.init:
            return model
        bot, seed = self.init_bot or self._read_init(), self.config.seed
        try:
            load_actor(model.policy, bot, widen=True, seed=seed)
            if bot.has_value:
                load_critic(model.policy, bot, widen=True, seed=seed)
        except ValueError as error:
            raise ValueError(f"init={self.config.init}: {error}") from None
        return model

    def _read_init(self) -> Any:
        from ..agents.export import read_policy

        try:
            return read_policy(self.config.init, self.game.name)
        except ValueError as error:
            raise ValueError(f"init={self.config.init}: {error}") from None

    def _check_init_fits(self, bot: Any) -> None:
        from .warm_start import check_actor_fits

        try:
            check_actor_fits(bot, self.game.encoder.observation_size(self.game_config), self.config.net_arch,
                             len(self.game.action_names(self.game_config)))
        except ValueError as error:
            raise ValueError(f"init={self.config.init}: {error}") from None

    def init_note(self) -> str:
        """What the run starts from, in a sentence for the console ("" for fresh weights or a resume)."""
        bot = self.init_bot
        if bot is None or (self.resume and self._latest_checkpoint() is not None):
            return ""
        widths = [int(w.shape[0]) for w in bot.weights[:-1]]
        grown = (f", grown from {'x'.join(map(str, widths))} to {'x'.join(map(str, self.config.net_arch))}"
                 if list(self.config.net_arch) != widths else "")
        critic = "its actor and critic" if bot.has_value else "its actor (it has no value head: a fresh critic)"
        return f"starting from {self.config.init}: {critic}{grown}"

    def update_note(self) -> str:
        """A warning for the console where ``batch_size`` is more than one rollout holds ("" otherwise): SB3 then
        takes the whole rollout as one batch, without a word, so the run makes fewer, larger steps than asked."""
        config = self.config
        rollout = config.n_envs * config.n_steps
        if config.batch_size <= rollout:
            return ""
        return (f"updates: batch_size={config.batch_size:,} is more than a rollout holds (n_envs={config.n_envs} x "
                f"n_steps={config.n_steps} = {rollout:,} decisions), so each of the n_epochs={config.n_epochs} passes "
                f"is one batch of {rollout:,}")

    def opponents_note(self) -> str:
        """Who the learner will play, in a sentence for the console: the share of its latest self, the pool, how
        tables are drawn, and whether snapshots of the learner join the pool (the default cadence adds one every
        50,000 steps, so a pool of heuristics alone is mostly the learner's recent selves unless
        ``snapshot_every`` is set past the run's end)."""
        config = self.config
        checkpoint = self._latest_checkpoint() if self.resume else None
        start, saved = 0, 0
        if checkpoint is not None:
            start = int(checkpoint.name.removeprefix("step_"))
            try:
                saved = len(json.loads((checkpoint / "league" / "league.json").read_text())["snapshots"])
            except (OSError, ValueError, KeyError, TypeError):
                saved = 0
        window = config.snapshot_window
        if (start // config.snapshot_every + 1) * config.snapshot_every <= config.timesteps:
            snapshots = f"its last {window} snapshot{'s' * (window > 1)} (one every {config.snapshot_every:,} steps)"
        elif saved:
            snapshots = (f"its {min(saved, window)} saved snapshot{'s' * (min(saved, window) > 1)} (no new one: "
                         f"snapshot_every={config.snapshot_every:,} is past --timesteps)")
        else:
            snapshots = f"no snapshots (snapshot_every={config.snapshot_every:,} is past --timesteps)"
        pool = ", ".join(config.pool_bots) if config.pool_bots else "no bots"
        weights = "weighted by PFSP" if config.pfsp else "each alike"
        draw = "one draw for all of a game's opponent seats" if config.opponent_draw == "table" else "seat by seat"
        return (f"opponents: its latest self in {config.latest_share:.0%} of the draws; the rest from {pool} and "
                f"{snapshots}, {weights}; {draw}")

    def make_env(self) -> Any:
        """The league's VecEnv on ``env_backend``: the PettingZoo envs, or the game's compiled kernel."""
        config = self.config
        if config.env_backend == "kernel":
            from .kernel_env import KernelSelfPlayVecEnv

            return KernelSelfPlayVecEnv(self.game, self.game_config, self.league, config.n_envs, config.seed,
                                        config.game_config)
        return SelfPlayVecEnv(self.game, self.game_config, self.league, config.n_envs, config.seed)

    # -- checkpoints --

    def _latest_checkpoint(self) -> Path | None:
        pointer = self.out / "checkpoints" / "latest"
        if not pointer.is_file():
            return None
        return self.out / "checkpoints" / pointer.read_text().strip()

    def save_checkpoint(self, model: Any, league: League, metrics: dict[str, Any]) -> Path:
        name = f"step_{model.num_timesteps:010d}"
        checkpoints = self.out / "checkpoints"
        final, temporary = checkpoints / name, checkpoints / f".{name}.tmp"
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir(parents=True)
        model.save(temporary / "model.zip")
        provenance = {**self.provenance, "timesteps": int(model.num_timesteps)}
        policy_from_sb3(model.policy, provenance).save(temporary)
        league.save(temporary / "league")
        write_json_atomic(temporary / "metrics.json", metrics)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(temporary, final)
        pointer = checkpoints / ".latest.tmp"
        pointer.write_text(name + "\n")
        os.replace(pointer, checkpoints / "latest")
        return final

    # -- the final report --

    def evaluate(self, checkpoint: Path, progress: bool) -> dict[str, Any]:
        """The trained policy against every reference bot, seats rotated, over ``eval_games`` games: the
        deals and table of ``play_match``, played in lockstep with one batched forward pass per step
        (train/evaluate.py), here or on Ray (``eval_backend``)."""
        from .evaluate import strength_report
        from .lean_policy import TorchActor

        actor = TorchActor(MLPPolicy.load(checkpoint))
        return strength_report(self.game, actor, str(checkpoint), self.config.eval_games, seed=self.config.seed + 7,
                               config=self.game_config, backend=self.config.eval_backend, progress=progress,
                               seeding=self.config.eval_seeding)


class LeagueCallback(BaseCallback):
    """Refreshes the league's copy of the learner, freezes snapshots, logs results, writes checkpoints."""

    def __init__(self, trainer: Trainer, league: League, window: int = 500):
        super().__init__()
        self.trainer = trainer
        self.league = league
        self.results: dict[str, deque] = defaultdict(lambda: deque(maxlen=window))
        self.lengths: deque = deque(maxlen=window)
        self.episodes = 0
        self._next_snapshot = 0
        self._next_checkpoint = 0

    def _on_training_start(self) -> None:
        config = self.trainer.config
        now = self.model.num_timesteps
        self._next_snapshot = (now // config.snapshot_every + 1) * config.snapshot_every
        self._next_checkpoint = (now // config.checkpoint_every + 1) * config.checkpoint_every
        self._refresh_latest()

    def _refresh_latest(self) -> None:
        self.league.set_latest(policy_from_sb3(self.model.policy, self.trainer.provenance))

    def _on_rollout_start(self) -> None:
        self._refresh_latest()

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            result = info.get("episode_result")
            if result is None:
                continue
            self.episodes += 1
            self.lengths.append(result["l"])
            for name in result["opponents"]:
                self.results[name].append(result["score"])
        now = self.model.num_timesteps
        if now >= self._next_snapshot:
            self.league.add_snapshot(policy_from_sb3(self.model.policy, self.trainer.provenance), now)
            self._next_snapshot += self.trainer.config.snapshot_every
        if now >= self._next_checkpoint:
            self.trainer.save_checkpoint(self.model, self.league, self.metrics(self.model))
            self._next_checkpoint += self.trainer.config.checkpoint_every
        return True

    def _on_rollout_end(self) -> None:
        for name, scores in self.results.items():
            if scores:
                self.logger.record(f"league/win_rate_vs_{name.split('@')[0]}", float(np.mean(scores)))
        if self.lengths:
            self.logger.record("league/episode_length", float(np.mean(self.lengths)))
        self.logger.record("league/pool_size", len(self.league.pool))

    def metrics(self, model: Any, elapsed: float | None = None) -> dict[str, Any]:
        return {
            "timesteps": int(model.num_timesteps),
            "episodes": self.episodes,
            "recent_win_rate": {name: float(np.mean(s)) for name, s in self.results.items() if s},
            "league": self.league.stats(),
            **({"train_seconds": round(elapsed, 1)} if elapsed is not None else {}),
        }


def _saved_config(saved: Path) -> TrainConfig:
    """The TrainConfig a run stored in ``saved`` (its config.json); a ValueError naming the file when it holds
    none (another tool's run, a hand-edited or truncated file), never a traceback."""
    import dataclasses

    try:
        stored = json.loads(saved.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"--resume {saved.parent}: its config.json cannot be read ({error})") from None
    if not isinstance(stored, dict):
        raise ValueError(f"--resume {saved.parent}: its config.json holds no table of training options")
    known = {field.name for field in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(stored) - known)
    if unknown:
        hint = (" (it is a tavernzoo rllib run: resume it with tavernzoo rllib --resume)"
                if {"iterations", "batch"} <= set(stored) else "")
        raise ValueError(f"--resume {saved.parent}: not a tavernzoo train run{hint}; its config.json has options "
                         f"train does not know: {', '.join(unknown)}")
    try:
        return TrainConfig(**stored)
    except (TypeError, ValueError) as error:
        raise ValueError(f"--resume {saved.parent}: its config.json is not a valid training config ({error})") from None


def _changed_config(config: TrainConfig, changes: dict[str, Any], out: Path) -> TrainConfig:
    """``config`` with ``changes`` applied, checked as a fresh config is; a ValueError naming what a resumed run
    may change where a change is of another option."""
    fixed = sorted(set(changes) - set(RESUME_OPTIONS))
    if fixed:
        raise ValueError(f"--resume {out}: --set {', '.join(map(str, fixed))} cannot change in a resumed run (its "
                         f"checkpoint fixes it); a resumed run may change {', '.join(RESUME_OPTIONS)}")
    return TrainConfig(**{**config.to_dict(), **changes})

