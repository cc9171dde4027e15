"""Expert iteration: a teacher bot labels positions, the trainer's own network learns its moves.

One round:

1. **Collect** (``collect``, :mod:`.labelling`): ``games`` seeded games are played through the one game
   loop (``eval.loop.play_game``), over ``workers`` processes. At every labelled seat the *teacher* is asked
   for its move and for a policy target over the actions (below); with probability ``dagger`` the
   *student* (the previous round's network) plays the move instead, while the teacher still labels the
   position (DAgger: the student learns on the positions its own play leads to). The other seats are
   played by ``opponents`` (a bot spec), or by the teacher too when no opponents are given.
2. **Train** (``train_student``): cross-entropy between the network's masked softmax and the targets,
   each row weighted by its sample weight (1 for positions from games; best-response positions from
   :mod:`.br_positions` weigh by what a mistake there costs), plus ``value_weight`` times the squared
   error of the critic against the seat's final return, over every sample collected so far (DAgger
   aggregates rounds; ``samples`` may name several earlier runs or files, all kept).
3. **Save**: an ordinary training checkpoint (``Trainer.save_checkpoint``: ``model.zip`` loadable by
   MaskablePPO, ``policy.json``/``policy.npz`` from ``policy_from_sb3``, ``league/``), so
   ``tavernzoo export``, bot specs and ``tavernzoo train --resume`` (PPO fine-tuning) work on the run.
   Each round's policy is also kept in ``expert/round_K/`` for comparison.
4. With ``prior_student``, an ``mcts`` teacher's next round uses the new network as its prior
   (``prior=expert/round_K``): the search improves on the student, the student learns the improvement.
   With ``init`` (a bot's weights as the starting student, kept as ``expert/round_0``) round 1 already
   has the student's DAgger moves and prior. With ``value_student`` the teacher also scores its leaves
   with a student's value head (``value=expert/round_K``), from round 2 on, or round 1 where the ``init``
   bot carried a trained critic (:func:`value_dir`: otherwise round 0's critic is a fresh network's, never
   a value). With ``rollout_student`` the teacher rolls out with the latest student too
   (``rollout=expert/round_K``): with ``root=paired`` that is approximate policy iteration, each round's
   search improving on the student it models. With ``belief_student`` it weighs the hidden cards it deals
   by the latest student as the model of the other seats' play (``belief=expert/round_K``, agents/belief.py).
   With ``value_target="search"`` the critic learns the teacher's root value at each position (its mean
   over the simulations) instead of the seat's final return in that one game.
5. **Measure** (``eval_games``, :func:`measure_student`): the new student against ``eval_opponents`` in
   every other seat, duplicate deals with seats rotated (``eval.match.play_match`` of ``eval_seeding`` over
   ``workers`` processes, the same deals every round): the round's strength line, kept in expert.json with
   its ``seeding`` and ``results_version`` (eval/deals.py).
6. **Commit**: expert.json, with the round appended, is written last. That is the resume rule
   (:func:`resume_expert`): a round is complete when expert.json lists it, and whatever a killed round
   wrote before (its samples, its ``round_K/``, the checkpoint) is redone and overwritten.

Targets, by what the teacher offers:

* ``visit_distribution()`` (``mcts``): the root's visit counts, normalised (AlphaZero/ExIt);
* ``values(observation)`` (the Tiny Minotaur ``oracle``): uniform over the actions of optimal value;
* otherwise: the teacher's move, one-hot (behaviour cloning of any bot).

Forced moves (one legal action) teach nothing and are not recorded.

A run directory (``out``) is a training run: ``config.json`` (the student's TrainConfig),
``checkpoints/step_0000000000/`` (the latest round; PPO resumes from 0 timesteps), and::

    expert.json          the recipe, the starting samples and, per round: its teacher spec, samples, games,
                         loss before/after, agreement, strength (the commit point of a round)
    expert/round_K/      policy.json + policy.npz of round K's student
    expert/samples.npz   every labelled position so far (plain arrays): ``--samples RUN`` starts another
                         run from them, e.g. to retrain with other epochs without labelling again
                         (:mod:`.samples` reads and writes it)
"""

from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.export import read_policy
from ..agents.spec import BotSpec
from ..eval.deals import SEEDINGS, results_stamp
from .labelling import (  # noqa: F401 - Labeller and teacher_target importable here
    UNFINISHED_ROUND,
    CollectJob,
    Labeller,
    collect,
    keep_labelled,
    labelled_before,
    teacher_target,
)
from .samples import Samples
from .warm_start import load_actor, load_critic

VALUE_TARGETS = ("return", "search")  # ExpertConfig.value_target
EVAL_GAMES = 100  # games of the per-round strength line (0: none); a few seconds a round against heuristics
VALUE_WEIGHT = 0.5  # the critic's share of the loss: a warm critic keeps PPO fine-tuning from undoing the policy


# --- the student -------------------------------------------------------------------------------------------


def make_model(trainer: Any) -> tuple[Any, Any]:
    """A fresh model of the trainer's config, built by ``Trainer.run``'s own :func:`~.run.make_model` (so
    it resumes there), and its league."""
    from .run import make_model as make_ppo_model
    from .selfplay import SelfPlayVecEnv

    config = trainer.config
    if config.privileged_critic:  # its critic reads every seat's observation; the search labels only one
        raise ValueError("privileged_critic=true is for tavernzoo train (self-play PPO); tavernzoo expert trains "
                         "the critic on the seat's own view, so leave it false")
    if config.init:
        raise ValueError(f"init={config.init} is tavernzoo train's option; tavernzoo expert starts its student from "
                         "a bot with --init BOT")
    league = trainer.league
    env = SelfPlayVecEnv(trainer.game, trainer.game_config, league, config.n_envs, config.seed)
    return make_ppo_model(config, env, tensorboard_log=str(trainer.out / "tb")), league


def _forward(policy: Any, observations: Any) -> tuple[Any, Any]:
    """The actor's logits and the critic's values of an SB3 ActorCriticPolicy, for a batch."""
    features = policy.extract_features(observations)
    actor_features, critic_features = features if isinstance(features, tuple) else (features, features)
    logits = policy.action_net(policy.mlp_extractor.forward_actor(actor_features))
    values = policy.value_net(policy.mlp_extractor.forward_critic(critic_features)).squeeze(-1)
    return logits, values


EVALUATE_ROWS = 65536  # positions a slice of evaluate_student


def evaluate_student(policy: Any, samples: Samples) -> dict[str, float]:
    """Cross-entropy against the targets, and agreement: the share of positions where the student's best
    legal action is one of the teacher's best."""
    import torch

    loss = agree = 0.0
    with torch.no_grad():
        # in slices: the activations of millions of positions at once would take gigabytes
        for start in range(0, len(samples), EVALUATE_ROWS):
            rows = slice(start, start + EVALUATE_ROWS)
            masks = torch.as_tensor(samples.masks[rows])
            targets = torch.as_tensor(samples.targets[rows])
            logits, _ = _forward(policy, torch.as_tensor(samples.observations[rows]))
            logits = logits.masked_fill(~masks, -1e9)
            loss += float(-(targets * torch.log_softmax(logits, -1)).sum(-1).sum())
            chosen = logits.argmax(-1)
            best = targets.max(-1).values
            agree += float((targets.gather(1, chosen[:, None]).squeeze(1) >= best - 1e-6).float().sum())
    count = max(len(samples), 1)
    return {"loss": loss / count, "agreement": agree / count}


def train_student(policy: Any, samples: Samples, epochs: int, batch_size: int = 256, learning_rate: float = 1e-3,
                  value_weight: float = VALUE_WEIGHT, seed: int = 0, critic_only: bool = False) -> dict[str, float]:
    """Fit ``policy`` (an SB3 ActorCriticPolicy) to the samples; the loss and agreement before and after. With
    ``critic_only`` only the critic learns (the values' loss alone): the actor's weights stay exactly as they
    are, so the student plays as it did."""
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
    # Each row's share of the policy loss (1 for game positions: the plain mean; best-response positions
    # weigh by what a mistake there costs, train/br_positions.py).
    weights = torch.as_tensor(samples.weights)
    weighted = bool((weights != 1).any())
    learning = ([*policy.mlp_extractor.value_net.parameters(), *policy.value_net.parameters()] if critic_only
                else policy.parameters())
    optimizer = torch.optim.Adam(learning, lr=learning_rate)
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = torch.randperm(len(samples), generator=generator)
        for start in range(0, len(samples), batch_size):
            batch = order[start:start + batch_size]
            logits, predicted = _forward(policy, obs[batch])
            if critic_only:  # the values' loss alone: the actor's targets do not enter
                loss = torch.nn.functional.mse_loss(predicted, values[batch])
            else:
                log_probs = torch.log_softmax(logits.masked_fill(~masks[batch], -1e9), -1)
                cross_entropy = -(targets[batch] * log_probs).sum(-1)
                loss = (weights[batch] * cross_entropy).mean() if weighted else cross_entropy.mean()
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
    rollout_student: bool = False  # an mcts teacher rolls out with the latest student (root=paired: policy iteration)
    # an mcts teacher weighs its determinizations by the latest student as the other seats' model (belief=)
    belief_student: bool = False
    # the critic's target: "return", the seat's final return in its game; "search", the teacher's root value
    # (an mcts teacher's mean over its simulations, the AlphaZero-style search value), less noisy than one game
    value_target: str = "return"
    learning_rate: float = 1e-3
    batch_size: int = 256
    value_weight: float = VALUE_WEIGHT
    workers: int = 2
    init: str | None = None  # start the student's actor from this bot's weights (checkpoint, BOT.onnx, zoo:GAME)
    # start from labelled positions: an expert run (its expert/samples.npz) or a samples file, or a list of them
    # (all kept, in order: e.g. a run's DAgger positions and best-response positions, train/br_positions.py)
    samples: str | list[str] | None = None
    # each samples source the same share of the policy loss, whatever its count of positions (games against
    # networks run longer than against rule bots, so one table's teacher would otherwise outweigh another's)
    balance_samples: bool = False
    # fit the critic alone, the actor left exactly as it is: a value head for a bot that has none (a checkpoint
    # trained with a privileged critic keeps only its actor, docs/training.md) without changing how it plays
    critic_only: bool = False
    value_student: bool = False  # an mcts teacher scores leaves with the latest trained student's value head
    eval_games: int = EVAL_GAMES  # after each round, the student's games against eval_opponents (0: none)
    eval_opponents: str = "heuristic"  # the bot spec in every other seat of those games
    # the seed scheme of those games (eval/deals.py): v2, every host's; v1 deprecated (a recipe written before
    # 2026-12-05 names none and measured with v1: its resumed rounds keep it, so its rounds stay comparable)
    eval_seeding: str = "v2"

    def __post_init__(self) -> None:
        if isinstance(self.samples, (list, tuple)):
            if not self.samples or not all(isinstance(x, str) and x for x in self.samples):
                raise ValueError(f"expert option samples={self.samples!r} must name runs or samples files")
            # one source is kept as a plain string: the recipe of a run that predates several reads the same
            self.samples = self.samples[0] if len(self.samples) == 1 else list(self.samples)
        for name in ("rounds", "games", "epochs", "batch_size", "workers", "eval_games"):
            value = getattr(self, name)
            # games=0 retrains on saved samples without labelling more; eval_games=0 measures nothing
            least = 0 if (name == "games" and self.samples) or name == "eval_games" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"expert option {name}={value!r} must be a whole number of at least {least}"
                                 + (" (0 only with samples from an earlier run)" if name == "games" else "")
                                 + (" (0: no strength line)" if name == "eval_games" else ""))
        if self.balance_samples and not isinstance(self.samples, list):
            raise ValueError("expert option balance_samples weighs two or more samples sources against each other; "
                             f"samples={self.samples!r} names {'one' if self.samples else 'none'}")
        if self.critic_only and not self.init:
            raise ValueError("expert option critic_only fits the critic of the init bot and leaves its actor as it "
                             "is; give init=BOT (--init: a checkpoint or run, BOT.onnx or zoo:GAME)")
        if self.eval_seeding not in SEEDINGS:
            raise ValueError(f"expert option eval_seeding={self.eval_seeding!r} is not a seed scheme; valid: "
                             f"{', '.join(SEEDINGS)} (v1 deprecated)")
        if not 0.0 <= self.dagger <= 1.0:
            raise ValueError(f"expert option dagger={self.dagger!r} must lie between 0 and 1")
        if not (self.learning_rate > 0 and math.isfinite(self.learning_rate)):
            raise ValueError(f"expert option learning_rate={self.learning_rate!r} must be a positive number")
        if self.value_target not in VALUE_TARGETS:
            raise ValueError(f"expert option value_target={self.value_target!r} is not valid; valid: "
                             f"{', '.join(VALUE_TARGETS)}")
        teacher = BotSpec.parse(self.teacher)
        if self.value_target == "search" and (teacher.kind != "mcts" or teacher.option("root") == "paired"):
            raise ValueError(f"value_target=search needs an mcts teacher searching a tree (it gives its root's "
                             f"value; root=paired has none), not {self.teacher!r}")
        for flag, key in (("prior_student", "prior"), ("rollout_student", "rollout"), ("value_student", "value"),
                          ("belief_student", "belief")):
            if not getattr(self, flag):
                continue
            if teacher.kind != "mcts":
                raise ValueError(f"{flag} needs an mcts teacher, not {self.teacher!r}")
            if teacher.option(key) is not None:
                raise ValueError(f"{flag}: the teacher {self.teacher!r} already names {key}=; give one or the other")

    @classmethod
    def from_recipe(cls, recipe: Any, where: str) -> ExpertConfig:
        """The recipe an expert run recorded in its expert.json (options it predates take their defaults, but
        ``eval_seeding``: ``v1``, what a run from before it measured its rounds with)."""
        known = set(cls.__dataclass_fields__)
        if not isinstance(recipe, dict):
            raise ValueError(f"{where}: its expert.json holds no recipe table")
        unknown = sorted(set(recipe) - known)
        if unknown:
            raise ValueError(f"{where}: its expert.json recipe has options this tavernzoo does not know: "
                             f"{', '.join(unknown)}")
        if "eval_seeding" not in recipe:  # a run from before the option measured its rounds with v1
            recipe = {**recipe, "eval_seeding": "v1"}
        try:
            return cls(**recipe)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}: its expert.json recipe is not valid ({error})") from None

    def sample_sources(self) -> list[str]:
        """``samples`` as a list of sources (none, one or several)."""
        return [] if not self.samples else [self.samples] if isinstance(self.samples, str) else list(self.samples)

    def recipe(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ExpertConfig.__dataclass_fields__}


def anchored(expert: ExpertConfig, game: Any) -> ExpertConfig:
    """``expert`` with the files it names (``init``, ``teacher``, ``opponents``, ``samples``; specs nested in an
    mcts spec too) written as absolute paths where they exist from here (:meth:`BotSpec.anchored`). A run records
    its recipe so: ``--resume`` and the lineage a match reads (:func:`tavernzoo.agents.export.training_opponents`)
    then find them from any working directory, where a relative path would name other files or none."""
    from ..agents import builtin_bots

    builtins = builtin_bots(game)

    def spec(text: str | None) -> str | None:
        return None if text is None else str(BotSpec.parse(text).anchored(builtins))

    sources = [os.path.abspath(source) if os.path.exists(source) else source for source in expert.sample_sources()]
    samples = sources if isinstance(expert.samples, list) else (sources[0] if sources else expert.samples)
    return replace(expert, init=spec(expert.init), teacher=spec(expert.teacher), opponents=spec(expert.opponents),
                   samples=samples)


def teacher_spec(teacher: str, student_dir: Path | None, prior_student: bool, value_dir: Path | None = None,
                 rollout_student: bool = False, belief_student: bool = False) -> str:
    """The teacher's spec for a round: with ``prior_student`` (``rollout_student``, ``belief_student``), an
    mcts spec with the student as prior (rollout policy, belief model); with ``value_dir`` (:func:`value_dir`),
    with that student's value head as the leaf value too."""
    spec = BotSpec.parse(teacher)
    for key, directory in (("prior", student_dir if prior_student else None),
                           ("rollout", student_dir if rollout_student else None),
                           ("belief", student_dir if belief_student else None), ("value", value_dir)):
        if directory is None:
            continue
        if "," in str(directory) or "=" in str(directory):
            raise ValueError(f"the run directory {directory} holds ',' or '=', which an mcts spec cannot carry")
        spec = spec.with_option(key, str(directory))
    return str(spec)


def value_dir(expert: ExpertConfig, out: Path, round_index: int) -> Path | None:
    """The student whose value head an mcts teacher uses in round ``round_index`` (``value_student``): the
    previous round's. Round 0's student (``init``) is one only where the bot it started from carried a trained
    critic (a checkpoint or run, or a bot exported with its ``value`` output): otherwise its critic is a fresh
    network's (older ONNX and zoo bots carry none), and scoring the search's leaves with random numbers would
    be worse than rolling out, so the value starts in round 2."""
    if not expert.value_student or round_index < 1:
        return None
    previous = out / "expert" / f"round_{round_index - 1}"
    if round_index == 1 and not critic_trained(previous):
        return None
    return previous


def critic_trained(student_dir: Path) -> bool:
    """Whether a round's saved student has a trained critic: every trained round's has; round 0's (``init``)
    says so in its policy.json (runs that predate the flag: no)."""
    import json

    try:
        meta = json.loads((student_dir / "policy.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("critic_trained", meta.get("expert_round") != 0) is True


def measure_student(game: Any, config: Any, student_dir: Path, expert: ExpertConfig, seed: int,
                    progress: bool = False, backend: str = "local", address: str | None = None) -> dict[str, Any]:
    """A round's strength line: the student against ``eval_opponents`` in every other seat, over
    ``eval_games`` games of duplicate deals, seats rotated (``play_match`` of ``eval_seeding``, on ``workers``
    processes or as Ray tasks; the same deals every round, so the rounds differ only by the student)."""
    from ..eval.match import play_match

    seats = game.rules.num_seats(config)
    result = play_match(game, [str(student_dir)] + [expert.eval_opponents] * (seats - 1), expert.eval_games,
                        seed=seed, config=config, progress=progress, workers=expert.workers,
                        seeding=expert.eval_seeding, backend=backend, address=address)
    row = result.rows[0]
    return {"opponents": expert.eval_opponents, "seats": seats, "games": row.games, "deals": result.deals,
            "seed": seed, **results_stamp(expert.eval_seeding), "wins": row.wins, "draws": row.draws,
            "losses": row.losses, "score": round(row.score, 4), "score_ci": [round(v, 4) for v in row.score_ci],
            "fair_share": round(1 / seats, 4)}


def strength_line(round_index: int, strength: dict[str, Any]) -> str:
    low, high = strength["score_ci"]
    return (f"round {round_index} strength: {strength['score']:.3f} ({low:.3f} - {high:.3f}, 95%) of the wins "
            f"against {strength['seats'] - 1} x {strength['opponents']} over {strength['games']} games; "
            f"fair share {strength['fair_share']:.3f}")


def _check_specs(game: Any, config: Any, expert: ExpertConfig) -> None:
    """A bad teacher, opponents or eval opponents spec fails now, not in a worker after a round's labelling."""
    from ..agents import load_bot
    from ..agents.base import as_bot

    for spec in filter(None, (expert.teacher, expert.opponents,
                              expert.eval_opponents if expert.eval_games else None)):
        as_bot(load_bot(spec, game, config, seed=0)).close()
    if expert.belief_student:  # the student joins the teacher's spec from a round on: refused now, not then
        from ..agents.mcts import belief_refusal

        if (refusal := belief_refusal(game)) is not None:
            raise ValueError(f"belief_student: {refusal}")
    most = 8 * (os.cpu_count() or 1)  # what play_match takes, checked before a round's labelling is spent
    if expert.eval_games and expert.workers > most:
        raise ValueError(f"expert option workers={expert.workers} is more than the strength games take ({most}, "
                         "8 per CPU core); give fewer, or eval_games=0")


def run_expert(train_config: Any, expert: ExpertConfig, out: str | os.PathLike, progress: bool = False,
               log: Any = print, backend: str = "local", address: str | None = None) -> dict[str, Any]:
    """Rounds of collect -> train -> checkpoint into the new run directory ``out``; the per-round report.
    ``backend="ray"`` plays the labelled games and the strength games as Ray tasks (``address``: the cluster
    to join), with the results of the local backend; where games run is no part of the recipe."""
    import torch

    from ..envs.records import write_json_atomic
    from .run import Trainer, policy_from_sb3

    games_backend = _games_backend(backend, address)
    trainer = Trainer(train_config, out)  # refuses a directory that already holds a run
    if (trainer.out / "expert.json").exists():  # one killed before its first checkpoint
        raise ValueError(f"{trainer.out} already holds an expert run; continue it with --resume {trainer.out}, "
                         "or give another --out")
    game, config = trainer.game, trainer.game_config
    expert = anchored(expert, game)
    sizes = game.encoder.observation_size(config), len(game.action_names(config))
    # bad samples fail now, before the run directory is written
    data = (_starting_samples(expert.samples, sizes, expert.balance_samples) if expert.samples
            else Samples.empty(*sizes))
    _check_specs(game, config, expert)
    torch.set_num_threads(train_config.torch_threads)
    torch.manual_seed(train_config.seed)
    model, league = make_model(trainer)
    start_critic = False
    if expert.init:
        try:
            start = read_policy(expert.init)
        except ValueError as error:
            raise ValueError(f"--init {error}") from None
        try:  # a bad or mismatched bot fails before any write
            load_actor(model.policy, start)
            if start.has_value:  # a checkpoint, or a bot exported with its value head: its critic comes along
                load_critic(model.policy, start)
                start_critic = True
        except ValueError as error:
            raise ValueError(f"--init {expert.init}: {error}") from None
    trainer.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(trainer.out / "config.json", train_config.to_dict())
    student_dir: Path | None = None
    if expert.init:
        # round 0: the starting student, so that round 1 already has DAgger and the student as prior
        student_dir = trainer.out / "expert" / "round_0"
        provenance = {**trainer.provenance, "timesteps": 0, "expert_round": 0, "critic_trained": start_critic}
        policy_from_sb3(model.policy, provenance).save(student_dir)
    if len(data):
        # the starting samples go into the run first, so a run killed in round 1 resumes without its source
        (trainer.out / "expert").mkdir(exist_ok=True)
        data.save(trainer.out / "expert" / "samples.npz")
    report: dict[str, Any] = {"recipe": expert.recipe(), "initial_samples": len(data), "rounds": []}
    write_json_atomic(trainer.out / "expert.json", report)  # from now on, --resume continues the run
    return _play_rounds(trainer, expert, model, league, data, student_dir, report, progress, log, games_backend)


def resume_expert(out: str | os.PathLike, rounds: int | None = None, workers: int | None = None,
                  progress: bool = False, log: Any = print, backend: str = "local",
                  address: str | None = None) -> dict[str, Any]:
    """Continue the expert run in ``out`` after its last completed round, up to ``rounds`` rounds in all
    (default: its recipe's), with its recorded recipe and samples; ``workers``, ``backend`` and ``address``
    may differ (the samples do not depend on them).

    The resume rule: a round is complete when expert.json lists it, the last file a round writes (after
    ``expert/samples.npz``, ``expert/round_K/`` and the checkpoint). Whatever a killed round wrote before
    that is redone: the samples are cut back to the count the last listed round recorded, and the student is
    rebuilt, actor and critic, from that round's ``expert/round_K/`` (round 0's with ``init``, else a fresh
    network of the run's seed), so no round is lost or counted twice. The games the killed round labelled
    are not played again: ``expert/unfinished_round.npz`` keeps them as they end (at most a minute's lost,
    train/labelling.py ``KEEP_EVERY_S``), and a game's seeds depend on its index in the round alone.
    """
    import torch

    from ..agents.policy import MLPPolicy
    from .run import Trainer

    games_backend = _games_backend(backend, address)
    where = f"--resume {out}"
    for flag, value in (("--rounds", rounds), ("--workers", workers)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{where}: {flag} {value!r} must be a whole number of at least 1")
    path = Path(out)
    if not path.is_dir():
        raise ValueError(f"{where}: no such directory")
    if not (path / "expert.json").is_file():
        hint = (" (it is a training run: continue PPO with tavernzoo train --resume)"
                if (path / "config.json").is_file() else "")
        raise ValueError(f"{where}: not an expert run, it has no expert.json{hint}")
    report = _read_report(path / "expert.json", where)
    done = len(report["rounds"])
    recipe = report["recipe"]
    changes = {"rounds": rounds, "workers": workers}
    expert = ExpertConfig.from_recipe({**recipe, **{k: v for k, v in changes.items() if v is not None}}, where)
    if expert.rounds <= done:
        if rounds is None:
            raise ValueError(f"{where}: the run has done all {done} rounds of its recipe; give --rounds N with N "
                             f"above {done} to run more")
        raise ValueError(f"{where}: the run has done {done} rounds already; --rounds {rounds} must be more "
                         f"than {done} (the rounds in all, not the rounds to add)")
    trainer = Trainer(None, path, resume=True)
    game, config = trainer.game, trainer.game_config
    sizes = game.encoder.observation_size(config), len(game.action_names(config))
    committed = committed_samples(report)
    saved = path / "expert" / "samples.npz"
    if saved.is_file():
        data = Samples.load(saved, *sizes)
    elif committed:
        raise ValueError(f"{where}: {saved} is missing, but the completed rounds recorded {committed} samples")
    else:
        data = Samples.empty(*sizes)
    if not isinstance(committed, int) or len(data) < committed:
        raise ValueError(f"{where}: {saved} holds {len(data)} samples, fewer than the {committed} its completed "
                         "rounds recorded; it was not written by this run")
    extra = len(data) - committed
    data = data.head(committed)
    student_dir = path / "expert" / f"round_{done}" if done or expert.init else None
    student = None
    if student_dir is not None:
        if not (student_dir / "policy.json").is_file():
            raise ValueError(f"{where}: the student of round {done}, {student_dir}, is missing")
        student = MLPPolicy.load(student_dir)
    _check_specs(game, config, expert)
    torch.set_num_threads(trainer.config.torch_threads)
    torch.manual_seed(trainer.config.seed)
    model, league = make_model(trainer)
    if student is not None:
        load_actor(model.policy, student)
        load_critic(model.policy, student)
    if extra:
        # the killed round's positions go from the run's samples; its games come back from unfinished_round.npz
        data.save(saved)
    log(f"resuming {path} after round {done} of {expert.rounds}" + (
        f" ({extra} samples of the unfinished round {done + 1} dropped; it is trained again)" if extra else ""))
    report["recipe"] = expert.recipe()
    return _play_rounds(trainer, expert, model, league, data, student_dir, report, progress, log, games_backend)


def committed_samples(report: dict[str, Any]) -> int:
    """How many of a run's samples its completed rounds account for (the first rows of samples.npz)."""
    return report["rounds"][-1]["samples"] if report["rounds"] else report.get("initial_samples", 0)


def _starting_samples(source: str | list[str], sizes: tuple[int, int], balance: bool = False) -> Samples:
    """``--samples``: a samples file, or an expert run's samples as far as its completed rounds go (a killed
    run's unfinished round is not taken); several: all of them, in order. With ``balance`` each source's
    weights are scaled so that every source holds the same share of their sum (the policy loss's weights;
    within a source they keep their proportions)."""
    if isinstance(source, list):
        parts = [_starting_samples(one, sizes) for one in source]
        if balance:
            total = sum(float(part.weights.sum()) for part in parts)
            for part in parts:
                own = float(part.weights.sum())
                if own > 0:
                    part.weights = (part.weights * (total / len(parts) / own)).astype(np.float32)
        return Samples.concat(parts)
    data = Samples.load(source, *sizes)
    if Path(source).is_dir() and (Path(source) / "expert.json").is_file():
        committed = committed_samples(_read_report(Path(source) / "expert.json", f"--samples {source}"))
        if isinstance(committed, int) and committed <= len(data):
            data = data.head(committed)
    return data


def _read_report(path: Path, where: str) -> dict[str, Any]:
    """An expert run's expert.json, checked to be one (a ValueError naming what is wrong)."""
    import json

    try:
        if path.stat().st_size > 64 << 20:
            raise ValueError(f"{where}: its expert.json is over 64 MiB; it is not an expert run's report")
        report = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{where}: its expert.json cannot be read ({error})") from None
    rounds = report.get("rounds") if isinstance(report, dict) else None
    if not isinstance(rounds, list) or not isinstance(report.get("recipe"), dict) or any(
            not isinstance(entry, dict) or entry.get("round") != index + 1 or not isinstance(entry.get("samples"), int)
            for index, entry in enumerate(rounds)):
        raise ValueError(f"{where}: its expert.json is not an expert run's report (a recipe and rounds 1, 2, ... "
                         "each with its samples)")
    return report


LOG_KEPT_EVERY_S = 600.0  # without a progress bar, how often a round's kept games are said in the log (seconds)


def _logged_keep(keep: Any, log: Any, round_index: int, games: int) -> Any:
    """``keep`` that also says, at most every :data:`LOG_KEPT_EVERY_S` seconds, how far the round has got."""
    said = time.monotonic()

    def kept(results: dict[int, Samples]) -> None:
        nonlocal said
        keep(results)
        if len(results) < games and time.monotonic() - said >= LOG_KEPT_EVERY_S:
            said = time.monotonic()
            positions = sum(len(samples) for samples in results.values())
            log(f"round {round_index}: {len(results)} of {games} games labelled ({positions} positions), kept "
                f"in expert/{UNFINISHED_ROUND}")
    return kept


def _games_backend(backend: str, address: str | None) -> dict[str, Any]:
    """Where the games run (``collect``'s and ``play_match``'s keywords), refused before anything is written."""
    from ..eval.backends import check_backend, import_ray

    check_backend(backend, address)
    if backend == "ray":
        import_ray()  # the extra to install, named now rather than after a round's training
    return {"backend": backend, "address": address}


def _play_rounds(trainer: Any, expert: ExpertConfig, model: Any, league: Any, data: Samples,
                 student_dir: Path | None, report: dict[str, Any], progress: bool, log: Any,
                 games_backend: dict[str, Any]) -> dict[str, Any]:
    """Rounds ``len(report["rounds"]) + 1 .. expert.rounds``, each ending with expert.json (the commit);
    ``games_backend``: where the games run (:func:`_games_backend`)."""
    import torch

    from ..agents.export import record_networks
    from ..envs.records import write_json_atomic
    from ..eval.backends import progress_bar
    from .run import policy_from_sb3

    game, config, train_config = trainer.game, trainer.game_config, trainer.config
    sizes = game.encoder.observation_size(config), len(game.action_names(config))
    recipe = expert.recipe()
    sources = expert.sample_sources()
    # which files the start, the teacher and the opponents were (a resume keeps what its start recorded)
    record_networks(trainer.provenance, [expert.init, expert.teacher, expert.opponents], game.name)
    trainer.provenance["trained_with"] = (
        f"tavernzoo.train.expert (expert iteration, teacher {expert.teacher})" if expert.games
        else f"tavernzoo.train.expert (retrained on the positions of {', '.join(sources)})")
    first = len(report["rounds"]) + 1
    bar = progress_bar(progress, expert.rounds, "expert rounds", unit="round", initial=first - 1)
    if bar is not None:
        say = log

        def log(text: str) -> None:
            with type(bar).external_write_mode():  # the line above the bar, not through it
                say(text)
    try:
        for round_index in range(first, expert.rounds + 1):
            started = time.perf_counter()
            value = value_dir(expert, trainer.out, round_index)
            spec = teacher_spec(expert.teacher, student_dir, expert.prior_student, value, expert.rollout_student,
                                expert.belief_student)
            if not expert.games:
                log(f"round {round_index}: no new games; retraining on the {len(data)} positions of "
                    f"{', '.join(sources)}")
            elif expert.value_student and value is None:
                why = ("round 0's critic is untrained (the --init bot carries none)" if student_dir is not None
                       else "no student yet")
                log(f"round {round_index}: teacher {spec} (no value= this round: {why}; from round 2 on, the "
                    "previous round's student is the value)")
            else:
                log(f"round {round_index}: teacher {spec}")
            job = CollectJob(game.name, train_config.game_config, spec, expert.opponents,
                             str(student_dir) if student_dir else None,
                             expert.dagger if student_dir else 0.0, train_config.seed * 1000 + round_index,
                             expert.value_target)
            unfinished = trainer.out / "expert" / UNFINISHED_ROUND
            before = labelled_before(unfinished, job, round_index, sizes) if expert.games else {}
            if before:
                log(f"round {round_index}: {len(before)} of its {expert.games} games were labelled before the run "
                    "stopped; labelling the rest")
            keep = functools.partial(keep_labelled, unfinished, job, round_index)
            if not progress:  # a log file sees a long round's progress as it is kept, every ten minutes or so
                keep = _logged_keep(keep, log, round_index, expert.games)
            fresh = (collect(job, expert.games, expert.workers, progress, **games_backend, done=before, keep=keep)
                     if expert.games else Samples.empty(*sizes))
            collected = time.perf_counter() - started
            data = Samples.concat([data, fresh])
            (trainer.out / "expert").mkdir(exist_ok=True)
            data.save(trainer.out / "expert" / "samples.npz")
            # how the previous student does on the new positions (none when only retraining on saved samples)
            on_fresh = evaluate_student(model.policy, fresh) if len(fresh) else {}
            # The teacher's compiled searches may have started numba's OpenMP threads, which set torch's count to
            # the cores' (they share libgomp): the fit keeps the run's own.
            torch.set_num_threads(train_config.torch_threads)
            fit = train_student(model.policy, data, expert.epochs, expert.batch_size, expert.learning_rate,
                                expert.value_weight, seed=train_config.seed + round_index,
                                critic_only=expert.critic_only)
            student_dir = trainer.out / "expert" / f"round_{round_index}"
            provenance = {**trainer.provenance, "timesteps": 0, "expert_round": round_index, "critic_trained": True}
            policy_from_sb3(model.policy, provenance).save(student_dir)
            entry = {"round": round_index, "teacher": spec if expert.games else None, "games": expert.games,
                     "new_samples": len(fresh), "samples": len(data), "dagger": job.dagger,
                     "previous_student_on_new": on_fresh, **fit, "collect_seconds": round(collected, 1)}
            log(f"round {round_index}: {len(fresh)} new samples ({len(data)} in all) from {expert.games} games in "
                f"{collected:.0f} s; loss {fit['loss_before']:.3f} -> {fit['loss_after']:.3f}, agreement "
                f"{fit['agreement_before']:.3f} -> {fit['agreement_after']:.3f}")
            if expert.eval_games:
                # the same deals every round (the training report's seed): rounds differ by the student alone
                entry["strength"] = measure_student(game, config, student_dir, expert, train_config.seed + 7,
                                                    progress, **games_backend)
                log(strength_line(round_index, entry["strength"]))
            entry["seconds"] = round(time.perf_counter() - started, 1)
            # the checkpoint's policy.json (and so an exported bot's manifest) names the recipe and the round
            # ``against``: the bot at the other seats of its games, with their count (train.selfplay's league
            # record for a PPO run), which ``training_opponents`` reads with the samples' sources' own
            played = sum(entry["games"] for entry in report["rounds"]) + expert.games
            trainer.provenance["expert"] = {
                **recipe, "round": round_index, "samples": len(data), "sample_sources": sources,
                "against": {expert.opponents or expert.teacher: played} if played else {}}
            trainer.save_checkpoint(model, league, {"timesteps": 0, "expert": entry})
            report["rounds"].append(entry)
            write_json_atomic(trainer.out / "expert.json", report)  # the round is complete (the resume rule)
            unfinished.unlink(missing_ok=True)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    report["checkpoint"] = str(trainer._latest_checkpoint())
    write_json_atomic(trainer.out / "expert.json", report)
    return report
