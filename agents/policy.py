"""Trained policies as bots, loaded with numpy alone: no torch, no stable-baselines3, never pickle.

A checkpoint's policy is two files: ``policy.json`` (game, env version, observation size, action
names, layer sizes, activation, provenance) and ``policy.npz`` (the weights, read with
``allow_pickle=False``). The network is the actor of an SB3 ``MlpPolicy``: hidden layers with the
activation, then a linear layer to one logit per action. Checkpoints written since the value head was
kept also hold the critic (``vw{i}``/``vb{i}``, sizes in ``value_layers``): hidden layers with the same
activation, then one output, the training's estimate of the final return of the seat whose observation
it reads (``mcts:value=CHECKPOINT`` scores search leaves with it, docs/search.md). Illegal actions get
``-inf`` before the argmax or the sampling, so a policy bot never picks a masked action.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .base import BotBase, masked_softmax

POLICY_FORMAT = "tavernzoo-policy"
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


@dataclass
class MLPPolicy:
    """An actor network as numpy arrays: ``weights[i]`` has shape (out, in), as in torch's Linear."""

    weights: list[np.ndarray]
    biases: list[np.ndarray]
    activation: str
    meta: dict[str, Any]
    value_weights: list[np.ndarray] | None = None  # the critic, where the checkpoint holds it
    value_biases: list[np.ndarray] | None = None

    def __post_init__(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation {self.activation!r} is not supported; valid: {', '.join(ACTIVATIONS)}")
        self._activate = ACTIVATIONS[self.activation]
        self._transposed = [w.T.astype(np.float32, copy=True) for w in self.weights]
        if (self.value_weights is None) != (self.value_biases is None):
            raise ValueError("a policy's value head needs both its weights and its biases")
        self._value_transposed = ([w.T.astype(np.float32, copy=True) for w in self.value_weights]
                                  if self.value_weights is not None else None)

    @property
    def has_value(self) -> bool:
        return self.value_weights is not None

    @property
    def observation_size(self) -> int:
        return self.weights[0].shape[1]

    @property
    def num_actions(self) -> int:
        return self.weights[-1].shape[0]

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Logits for a batch of observations, shape (batch, num_actions)."""
        return self._forward(observations, self._transposed, self.biases)

    def values(self, observations: np.ndarray) -> np.ndarray:
        """The critic's value of each observation (shape (batch,)): the estimated final return of its seat."""
        if self._value_transposed is None:
            raise ValueError("this policy has no value head")
        return self._forward(observations, self._value_transposed, self.value_biases)[:, 0]

    def _forward(self, observations: np.ndarray, weights: list[np.ndarray], biases: list[np.ndarray]) -> np.ndarray:
        """One MLP (the actor's or the critic's layers, weights transposed): activations between layers,
        none after the last."""
        x = np.asarray(observations, dtype=np.float32)
        last = len(weights) - 1
        for i, (weight, bias) in enumerate(zip(weights, biases, strict=True)):
            x = x @ weight + bias
            if i < last:
                x = self._activate(x)
        return x

    def act(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
            deterministic: bool = True) -> np.ndarray:
        """One legal action per row: the best logit, or a sample from the masked softmax."""
        return self.choose(self.logits(observations), masks, rng, deterministic)

    @staticmethod
    def choose(logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
               deterministic: bool = True) -> np.ndarray:
        """One legal action per row of ``logits`` (batch, num_actions): the best legal logit, or a sample
        from the masked softmax (shared with training's torch-evaluated actor, train/lean_policy.py)."""
        masks = np.asarray(masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError("a policy was asked to act on an all-zero action mask")
        logits = np.where(masks, logits, -np.inf)
        if deterministic:
            return logits.argmax(axis=1)
        if rng is None:
            raise ValueError("sampling needs a numpy Generator")
        # Gumbel-max: argmax(logits + Gumbel noise) is a sample of softmax(logits); -inf stays -inf.
        return (logits + rng.gumbel(size=logits.shape)).argmax(axis=1)

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``policy.json`` and ``policy.npz`` into ``directory`` (each file atomically)."""
        from ..envs.records import atomic_file, write_json_atomic

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays = {f"w{i}": w for i, w in enumerate(self.weights)} | {f"b{i}": b for i, b in enumerate(self.biases)}
        if self.value_weights is not None:
            arrays |= {f"vw{i}": w for i, w in enumerate(self.value_weights)}
            arrays |= {f"vb{i}": b for i, b in enumerate(self.value_biases)}
        with atomic_file(directory / "policy.npz", "wb") as file:
            np.savez(file, **arrays)
        meta = {**self.meta, "format": POLICY_FORMAT, "format_version": 1, "activation": self.activation,
                "layers": [int(w.shape[0]) for w in self.weights], "observation_size": self.observation_size}
        if self.value_weights is not None:
            meta["value_layers"] = [int(w.shape[0]) for w in self.value_weights]
        else:
            meta.pop("value_layers", None)
        write_json_atomic(directory / "policy.json", meta)

    @classmethod
    def load(cls, directory: str | os.PathLike) -> MLPPolicy:
        directory = Path(directory)
        meta_path, weights_path = directory / "policy.json", directory / "policy.npz"
        if not meta_path.is_file() or not weights_path.is_file():
            raise ValueError(f"{directory} holds no policy (policy.json and policy.npz expected)")
        meta = read_policy_meta(meta_path)
        layers = meta.get("layers")
        if not isinstance(layers, list) or not layers:
            raise ValueError(f"{meta_path} is damaged: 'layers' must list the layer sizes")
        value_layers = meta.get("value_layers")
        if value_layers is not None and (not isinstance(value_layers, list) or not value_layers):
            raise ValueError(f"{meta_path} is damaged: 'value_layers' must list the value head's layer sizes")
        if not zipfile.is_zipfile(weights_path):
            raise ValueError(f"{weights_path} is not a numpy .npz archive; train or export the policy again")
        try:
            with np.load(weights_path, allow_pickle=False) as arrays:
                weights = [arrays[f"w{i}"] for i in range(len(layers))]
                biases = [arrays[f"b{i}"] for i in range(len(layers))]
                value_weights = value_biases = None
                if value_layers:
                    value_weights = [arrays[f"vw{i}"] for i in range(len(value_layers))]
                    value_biases = [arrays[f"vb{i}"] for i in range(len(value_layers))]
        except (ValueError, OSError, KeyError, zipfile.BadZipFile) as error:
            raise ValueError(f"{weights_path} does not hold the weights of {meta_path.name} ({error}); "
                             "train or export the policy again") from None
        return cls(weights, biases, meta.get("activation"), meta, value_weights, value_biases)


def read_policy_meta(meta_path: Path) -> dict[str, Any]:
    """The ``policy.json`` at ``meta_path``, checked to be a tavernzoo policy's (else a ValueError)."""
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise ValueError(f"{meta_path} is not valid JSON: {error}") from None
    if not isinstance(meta, dict) or meta.get("format") != POLICY_FORMAT:
        shown = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ValueError(f"{meta_path} is not a tavernzoo policy (format={shown!r})")
    return meta


def find_policy_dir(path: str | os.PathLike) -> Path:
    """A policy directory from a checkpoint directory or a training run (its latest checkpoint)."""
    path = Path(path)
    if (path / "policy.json").is_file():
        return path
    latest = path / "checkpoints" / "latest"
    if latest.is_file():
        return path / "checkpoints" / latest.read_text().strip()
    if (path / "rllib_checkpoint.json").is_file():
        # RLlib's own checkpoint is pickled (cloudpickle): loading one runs whatever code it names.
        raise ValueError(f"{path} is RLlib's own checkpoint, which tavernzoo never reads to make a bot (it is "
                         "pickled); give the rllib run directory or its checkpoint folder (policy.json + policy.npz)")
    raise ValueError(f"{path} is neither a policy checkpoint (policy.json) nor a training run (checkpoints/latest)")


def blend(first: MLPPolicy, second: MLPPolicy, weight: float, provenance: dict[str, Any] | None = None) -> MLPPolicy:
    """The policy whose every parameter is ``(1 - weight)`` times ``first``'s plus ``weight`` times ``second``'s.

    Weight interpolation between two networks of one lineage (a policy and its fine-tuned descendant, or
    two fine-tunings of one start) often plays better than either end: the "model soups" and WiSE-FT
    results (Wortsman et al., 2022), where the fine-tuned end gains against the opponents it trained on
    and the start keeps what fine-tuning wore away. Networks trained apart from different starts share no
    coordinates, and averaging them gives noise: interpolate within a lineage. The actors are blended and,
    where both carry one, the critics (else the result has none: ``has_value`` says which). ``provenance``
    goes into the result's meta beside ``first``'s game, env, options and action names; raises ValueError
    naming what does not match (game, options, action names, layer shapes, activation) or a weight outside
    0 to 1."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise ValueError(f"the blend weight must be a number from 0 (the first policy) to 1 (the second), "
                         f"not {weight!r}")
    for key in ("env", "game_config", "action_names"):
        mine, theirs = first.meta.get(key), second.meta.get(key)
        if key == "game_config" and first.meta.get("env"):
            # A checkpoint keeps the options as given, an export's manifest all of them: compare the games'.
            from ..envs import get_game

            make_config = get_game(first.meta["env"]).make_config
            mine, theirs = make_config(mine or None), make_config(theirs or None)
        if mine != theirs and (key != "action_names" or None not in (mine, theirs)):
            shown = "other action names" if key == "action_names" else f"{mine!r} and {theirs!r}"
            raise ValueError(f"the two policies differ in {key} ({shown}); only policies of one game and table blend")
    if first.activation != second.activation:
        raise ValueError(f"the two policies use different activations ({first.activation} and {second.activation})")
    shapes = [[w.shape for w in policy.weights] for policy in (first, second)]
    if shapes[0] != shapes[1]:
        raise ValueError(f"the two policies' layers differ ({shapes[0]} and {shapes[1]}); only networks of one "
                         "shape blend")

    def mix(mine: list[np.ndarray], theirs: list[np.ndarray]) -> list[np.ndarray]:
        return [((1.0 - weight) * np.asarray(a, np.float64) + weight * np.asarray(b, np.float64)).astype(np.float32)
                for a, b in zip(mine, theirs, strict=True)]

    both_critics = first.has_value and second.has_value
    if both_critics and [w.shape for w in first.value_weights] != [w.shape for w in second.value_weights]:
        raise ValueError("the two policies' value heads differ in shape; only networks of one shape blend")
    meta = {key: first.meta[key] for key in ("game", "env", "game_config", "action_names") if key in first.meta}
    meta |= provenance or {}
    return MLPPolicy(mix(first.weights, second.weights), mix(first.biases, second.biases), first.activation, meta,
                     mix(first.value_weights, second.value_weights) if both_critics else None,
                     mix(first.value_biases, second.value_biases) if both_critics else None)


class PolicyBot(BotBase):
    """A trained policy as a bot: the best legal action of its network (or a sample, if stochastic)."""

    def __init__(self, config: Any, seed: int | None, path: str | os.PathLike, game: Any,
                 deterministic: bool = True):
        self.policy = MLPPolicy.load(find_policy_dir(path))
        meta = self.policy.meta
        if meta.get("env") != game.env_name:
            raise ValueError(f"{path} is a policy for {meta.get('env')!r}, not {game.env_name!r}")
        expected = game.encoder.observation_size(config)
        if self.policy.observation_size != expected or self.policy.num_actions != len(game.action_names(config)):
            raise ValueError(
                f"{path} expects observations of {self.policy.observation_size} and {self.policy.num_actions} actions; "
                f"{game.env_name} with this config has {expected} and {len(game.action_names(config))}"
            )
        self.name = f"policy:{path}"
        self._path = path
        self.deterministic = deterministic
        self._rng = np.random.default_rng(seed)

    def action_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masked_softmax(self.policy.logits(observations), masks)

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        return None if self.deterministic else self.action_probabilities(observations, masks)

    def check_value_head(self) -> None:
        if not self.policy.has_value:
            raise ValueError(f"{self._path} has no value head (its policy.npz was written before checkpoints kept "
                             "the critic); train or resume the run with this tavernzoo to write a checkpoint with it")

    def value_estimates(self, observations: np.ndarray) -> np.ndarray:
        self.check_value_head()
        return self.policy.values(observations)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.policy.act(observations, masks, self._rng, self.deterministic)

    def act(self, observation: dict[str, Any]) -> int:
        return int(self.act_batch(observation["observation"][None, :], observation["action_mask"][None, :])[0])
