"""Expert iteration: a teacher bot labels positions, the trainer's own network learns its moves.

One round:

1. **Collect** (``collect``, :mod:`.labelling`): ``games`` seeded games are played through the one game
   loop (``eval.loop.play_game``), over ``workers`` processes. At every labelled seat the *teacher* is asked
   for its move and for a policy target over the actions (below); with probability ``dagger`` the
   *student* (the previous round's network) plays the move instead, while the teacher still labels the
   position (DAgger: the student learns on the positions its own play leads to). The other seats are
   played by ``opponents`` (a bot spec), or by the teacher too when no opponents are given.
2. **Train** (``train_student``): cross-entropy between the network's masked softmax and the targets,
   plus ``value_weight`` times the squared error of the critic against the seat's final return, over
   every sample collected so far (DAgger aggregates rounds).
3. **Save**: an ordinary training checkpoint (``Trainer.save_checkpoint``: ``model.zip`` loadable by
   MaskablePPO, ``policy.json``/``policy.npz`` from ``policy_from_sb3``, ``league/``), so
   ``tavernzoo export``, bot specs and ``tavernzoo train --resume`` (PPO fine-tuning) work on the run.
   Each round's policy is also kept in ``expert/round_K/`` for comparison.
4. With ``prior_student``, an ``mcts`` teacher's next round uses the new network as its prior
   (``prior=expert/round_K``): the search improves on the student, the student learns the improvement.
   With ``init`` (a bot's weights as the starting student, kept as ``expert/round_0``) round 1 already
   has the student's DAgger moves and prior.

Targets, by what the teacher offers:

* ``visit_distribution()`` (``mcts``): the root's visit counts, normalised (AlphaZero/ExIt);
* ``values(observation)`` (the Tiny Minotaur ``oracle``): uniform over the actions of optimal value;
* otherwise: the teacher's move, one-hot (behaviour cloning of any bot).

Forced moves (one legal action) teach nothing and are not recorded.

A run directory (``out``) is a training run: ``config.json`` (the student's TrainConfig),
``checkpoints/step_0000000000/`` (the latest round; PPO resumes from 0 timesteps), and::

    expert.json          the recipe and, per round: samples, games, loss before/after, agreement
    expert/round_K/      policy.json + policy.npz of round K's student
    expert/samples.npz   every labelled position so far (plain arrays): ``--samples RUN`` starts another
                         run from them, e.g. to retrain with other epochs without labelling again
                         (:mod:`.samples` reads and writes it)
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.spec import BotSpec
from .labelling import CollectJob, Labeller, collect, teacher_target  # noqa: F401 - importable here
from .samples import Samples

VALUE_WEIGHT = 0.5  # the critic's share of the loss: a warm critic keeps PPO fine-tuning from undoing the policy


# --- the student -------------------------------------------------------------------------------------------


def make_model(trainer: Any) -> tuple[Any, Any]:
    """A fresh model of the trainer's config, built by ``Trainer.run``'s own :func:`~.run.make_model` (so
    it resumes there), and its league."""
    from .run import make_model as make_ppo_model
    from .selfplay import League, SelfPlayVecEnv

    config = trainer.config
    league = League.create(trainer.game, trainer.game_config, config)
    env = SelfPlayVecEnv(trainer.game, trainer.game_config, league, config.n_envs, config.seed)
    return make_ppo_model(config, env, tensorboard_log=str(trainer.out / "tb")), league


def read_actor(spec: str) -> Any:
    """The actor weights of an existing bot as an :class:`MLPPolicy`: a checkpoint or run directory, an
    exported ``BOT.onnx`` or ``zoo:GAME`` (its ``w{i}``/``b{i}`` initializers and manifest)."""
    from ..agents.policy import MLPPolicy, find_policy_dir

    parsed = BotSpec.parse(spec)
    if parsed.kind in ("zoo", "onnx"):
        import onnx
        from onnx import numpy_helper

        from ..agents.onnx_bot import ZOO_DIR, read_manifest

        path = ZOO_DIR / f"{parsed.format()[len('zoo:'):]}.onnx" if parsed.kind == "zoo" else Path(parsed.name)
        if not path.is_file():
            raise ValueError(f"--init {spec}: no ONNX bot at {path}")
        manifest = read_manifest(path)
        arrays = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
        count = sum(1 for name in arrays if name.startswith("w") and name[1:].isdigit())
        network = manifest.get("network") or {}
        activation = network.get("activation", "tanh") if isinstance(network, dict) else "tanh"
        return MLPPolicy([arrays[f"w{i}"] for i in range(count)], [arrays[f"b{i}"] for i in range(count)],
                         activation, {"env": manifest.get("env")})
    return MLPPolicy.load(find_policy_dir(spec))


def load_actor(policy: Any, actor: Any) -> None:
    """Copy ``actor`` (an MLPPolicy) into the actor of an SB3 policy of the same shape; the critic stays."""
    import torch

    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    shapes = [tuple(layer.weight.shape) for layer in layers]
    wanted = [tuple(w.shape) for w in actor.weights]
    if actor.activation != "tanh":  # the trainer's MlpPolicy is tanh
        raise ValueError(f"--init: the policy's activation is {actor.activation!r}; the student's is tanh")
    if shapes != wanted:
        raise ValueError(f"--init: the policy's layers {wanted} do not match the student's {shapes}; set net_arch "
                         "to the policy's hidden sizes")
    with torch.no_grad():
        for layer, weight, bias in zip(layers, actor.weights, actor.biases, strict=True):
            layer.weight.copy_(torch.as_tensor(np.array(weight, np.float32)))
            layer.bias.copy_(torch.as_tensor(np.array(bias, np.float32)))


def _forward(policy: Any, observations: Any) -> tuple[Any, Any]:
    """The actor's logits and the critic's values of an SB3 ActorCriticPolicy, for a batch."""
    features = policy.extract_features(observations)
    actor_features, critic_features = features if isinstance(features, tuple) else (features, features)
    logits = policy.action_net(policy.mlp_extractor.forward_actor(actor_features))
    values = policy.value_net(policy.mlp_extractor.forward_critic(critic_features)).squeeze(-1)
    return logits, values


def evaluate_student(policy: Any, samples: Samples) -> dict[str, float]:
    """Cross-entropy against the targets, and agreement: the share of positions where the student's best
    legal action is one of the teacher's best."""
    import torch

    with torch.no_grad():
        obs = torch.as_tensor(samples.observations)
        masks = torch.as_tensor(samples.masks)
        targets = torch.as_tensor(samples.targets)
        logits, _ = _forward(policy, obs)
        logits = logits.masked_fill(~masks, -1e9)
        loss = -(targets * torch.log_softmax(logits, -1)).sum(-1).mean()
        chosen = logits.argmax(-1)
        best = targets.max(-1).values
        agree = (targets.gather(1, chosen[:, None]).squeeze(1) >= best - 1e-6).float().mean()
    return {"loss": float(loss), "agreement": float(agree)}


def train_student(policy: Any, samples: Samples, epochs: int, batch_size: int = 256, learning_rate: float = 1e-3,
                  value_weight: float = VALUE_WEIGHT, seed: int = 0) -> dict[str, float]:
    """Fit ``policy`` (an SB3 ActorCriticPolicy) to the samples; the loss and agreement before and after."""
    import torch

    before = evaluate_student(policy, samples)
    if len(samples) == 0:
        return {"loss_before": before["loss"], "loss_after": before["loss"],
                "agreement_before": before["agreement"], "agreement_after": before["agreement"]}
    generator = torch.Generator().manual_seed(seed)
    obs = torch.as_tensor(samples.observations)
    masks = torch.as_tensor(samples.masks)
    targets = torch.as_tensor(samples.targets)
    values = torch.as_tensor(samples.values)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = torch.randperm(len(samples), generator=generator)
        for start in range(0, len(samples), batch_size):
            batch = order[start:start + batch_size]
            logits, predicted = _forward(policy, obs[batch])
            log_probs = torch.log_softmax(logits.masked_fill(~masks[batch], -1e9), -1)
            loss = -(targets[batch] * log_probs).sum(-1).mean()
            if value_weight:
                loss = loss + value_weight * torch.nn.functional.mse_loss(predicted, values[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    after = evaluate_student(policy, samples)
    return {"loss_before": before["loss"], "loss_after": after["loss"],
            "agreement_before": before["agreement"], "agreement_after": after["agreement"]}


# --- the loop ------------------------------------------------------------------------------------------------


@dataclass
class ExpertConfig:
    """The expert-iteration recipe (the student's network and game options come from its TrainConfig)."""

    teacher: str = "mcts"
    opponents: str | None = None
    rounds: int = 1
    games: int = 100
    epochs: int = 10
    dagger: float = 0.5  # from round 2 (1 with init): the student plays a labelled seat's move with this probability
    prior_student: bool = False
    learning_rate: float = 1e-3
    batch_size: int = 256
    value_weight: float = VALUE_WEIGHT
    workers: int = 2
    init: str | None = None  # start the student's actor from this bot's weights (checkpoint, BOT.onnx, zoo:GAME)
    samples: str | None = None  # start from another expert run's labelled positions (its expert/samples.npz)

    def __post_init__(self) -> None:
        for name in ("rounds", "games", "epochs", "batch_size", "workers"):
            value = getattr(self, name)
            # games=0 retrains on saved samples without labelling more
            least = 0 if name == "games" and self.samples else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"expert option {name}={value!r} must be a whole number of at least {least}"
                                 + (" (0 only with samples from an earlier run)" if name == "games" else ""))
        if not 0.0 <= self.dagger <= 1.0:
            raise ValueError(f"expert option dagger={self.dagger!r} must lie between 0 and 1")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"expert option learning_rate={self.learning_rate!r} must be a positive number")
        if self.prior_student and BotSpec.parse(self.teacher).kind != "mcts":
            raise ValueError(f"prior_student needs an mcts teacher, not {self.teacher!r}")


def teacher_spec(teacher: str, student_dir: Path | None, prior_student: bool) -> str:
    """The teacher's spec for a round: with ``prior_student``, an mcts spec with the student as prior."""
    if not prior_student or student_dir is None:
        return teacher
    if "," in str(student_dir) or "=" in str(student_dir):
        raise ValueError(f"the run directory {student_dir} holds ',' or '=', which an mcts spec cannot carry")
    return str(BotSpec.parse(teacher).with_option("prior", str(student_dir)))


def run_expert(train_config: Any, expert: ExpertConfig, out: str | os.PathLike, progress: bool = False,
               log: Any = print) -> dict[str, Any]:
    """Rounds of collect -> train -> checkpoint into the new run directory ``out``; the per-round report."""
    import torch

    from ..agents import load_bot
    from ..envs.records import write_json_atomic
    from .run import Trainer, policy_from_sb3

    trainer = Trainer(train_config, out)  # refuses a directory that already holds a run
    game, config = trainer.game, trainer.game_config
    sizes = game.encoder.observation_size(config), len(game.action_names(config))
    # bad samples fail now, before the run directory is written
    data = Samples.load(expert.samples, *sizes) if expert.samples else Samples.empty(*sizes)
    for spec in filter(None, (expert.teacher, expert.opponents)):
        load_bot(spec, game, config, seed=0)  # a bad spec fails now, not in a worker
    torch.set_num_threads(train_config.torch_threads)
    torch.manual_seed(train_config.seed)
    model, league = make_model(trainer)
    if expert.init:
        load_actor(model.policy, read_actor(expert.init))  # a bad or mismatched bot fails before any write
    trainer.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(trainer.out / "config.json", train_config.to_dict())
    trainer.provenance["trained_with"] = f"tavernzoo.train.expert (expert iteration, teacher {expert.teacher})"
    student_dir: Path | None = None
    if expert.init:
        # round 0: the starting student, so that round 1 already has DAgger and the student as prior
        student_dir = trainer.out / "expert" / "round_0"
        policy_from_sb3(model.policy, {**trainer.provenance, "timesteps": 0, "expert_round": 0}).save(student_dir)
    recipe = {k: getattr(expert, k) for k in ExpertConfig.__dataclass_fields__}
    report: dict[str, Any] = {"recipe": recipe, "rounds": []}
    for round_index in range(1, expert.rounds + 1):
        started = time.perf_counter()
        spec = teacher_spec(expert.teacher, student_dir, expert.prior_student)
        job = CollectJob(game.name, train_config.game_config, spec, expert.opponents,
                         str(student_dir) if student_dir else None,
                         expert.dagger if student_dir else 0.0, train_config.seed * 1000 + round_index)
        fresh = collect(job, expert.games, expert.workers, progress) if expert.games else Samples.empty(*sizes)
        collected = time.perf_counter() - started
        data = Samples.concat([data, fresh])
        (trainer.out / "expert").mkdir(exist_ok=True)
        data.save(trainer.out / "expert" / "samples.npz")
        # how the previous student does on the new positions (none when only retraining on saved samples)
        on_fresh = evaluate_student(model.policy, fresh) if len(fresh) else {}
        fit = train_student(model.policy, data, expert.epochs, expert.batch_size, expert.learning_rate,
                            expert.value_weight, seed=train_config.seed + round_index)
        student_dir = trainer.out / "expert" / f"round_{round_index}"
        provenance = {**trainer.provenance, "timesteps": 0, "expert_round": round_index}
        policy_from_sb3(model.policy, provenance).save(student_dir)
        entry = {"round": round_index, "teacher": spec, "games": expert.games, "new_samples": len(fresh),
                 "samples": len(data), "dagger": job.dagger, "previous_student_on_new": on_fresh, **fit,
                 "collect_seconds": round(collected, 1), "seconds": round(time.perf_counter() - started, 1)}
        report["rounds"].append(entry)
        # the checkpoint's policy.json (and so an exported bot's manifest) names the recipe and the round
        trainer.provenance["expert"] = {**recipe, "round": round_index, "samples": len(data)}
        trainer.save_checkpoint(model, league, {"timesteps": 0, "expert": entry})
        write_json_atomic(trainer.out / "expert.json", report)
        log(f"round {round_index}: {len(fresh)} new samples ({len(data)} in all) from {expert.games} games in "
            f"{collected:.0f} s; loss {fit['loss_before']:.3f} -> {fit['loss_after']:.3f}, agreement "
            f"{fit['agreement_before']:.3f} -> {fit['agreement_after']:.3f}")
    report["checkpoint"] = str(trainer._latest_checkpoint())
    write_json_atomic(trainer.out / "expert.json", report)
    return report
