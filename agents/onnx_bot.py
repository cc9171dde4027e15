"""Exported bots (``BOT.onnx`` + manifest ``BOT.json``) and the bundled zoo, loaded with numpy and onnxruntime.

A bot file from someone else must be safe to load, so this module never unpickles anything and imports
neither torch nor stable-baselines3: the manifest is JSON, the network is an ONNX graph of standard
operators run by onnxruntime. Before a bot plays, its manifest must name the game and env version being
played, with the same observation size and action names, and the ONNX file must have the hash the
manifest records; anything else is refused with a ValueError saying what differs.

The zoo: ``agents/zoo/<game>.onnx`` + ``<game>.json``, one pretrained bot per game, shipped as package
data (and ``<env>.onnx`` for an earlier version a game still plays, ``zoo:ministeel_v1``);
``zoo:GAME`` loads it (``zoo:GAME@sample`` samples from the policy instead of taking its best action)
and ``tavernzoo zoo`` lists them with their measured strength (docs/zoo.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .base import BotBase, masked_softmax

MANIFEST_FORMAT = "tavernzoo-onnx-bot"  # the same as export.MANIFEST_FORMAT (export imports onnx; we must not)
ZOO_DIR = Path(__file__).resolve().parent / "zoo"


def read_manifest(onnx_path: str | os.PathLike) -> dict[str, Any]:
    """The manifest ``BOT.json`` of ``BOT.onnx``, checked to be a tavernzoo bot manifest."""
    onnx_path = Path(onnx_path)
    path = onnx_path.with_suffix(".json")
    if not onnx_path.is_file():
        raise ValueError(f"bot file {onnx_path} does not exist")
    if not path.is_file():
        raise ValueError(f"{onnx_path} has no manifest: {path.name} is expected next to it "
                         "(tavernzoo export writes it)")
    try:
        manifest = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"manifest {path} is not valid JSON: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"{path} is not a tavernzoo bot manifest (format={_get(manifest, 'format')!r})")
    if manifest.get("format_version") != 1:
        raise ValueError(f"{path} has manifest format_version {manifest.get('format_version')!r}; this tavernzoo "
                         "reads version 1")
    for key in ("game", "env", "actions", "observation", "onnx"):
        if key not in manifest:
            raise ValueError(f"manifest {path} lacks {key!r}")
    observation, onnx = manifest["observation"], manifest["onnx"]
    problems = {
        "game": not isinstance(manifest["game"], str),
        "env": not isinstance(manifest["env"], str),
        "actions": not (isinstance(manifest["actions"], list) and manifest["actions"]
                        and all(isinstance(name, str) for name in manifest["actions"])),
        "observation": not (isinstance(observation, dict) and isinstance(observation.get("size"), int)
                            and not isinstance(observation.get("size"), bool) and observation["size"] > 0),
        "onnx": not (isinstance(onnx, dict) and isinstance(onnx.get("sha256"), str)),
    }
    expected = {"game": "a game name", "env": "an env name", "actions": "a list of action names",
                "observation": 'an object with the observation size ({"size": 47, ...})',
                "onnx": 'an object with the SHA-256 of the ONNX file ({"sha256": "...", ...})'}
    for key, bad in problems.items():
        if bad:
            shown = json.dumps(manifest[key])
            raise ValueError(f"manifest {path}: {key!r} must be {expected[key]}, not {shown[:80]}; "
                             "export the bot again")
    return manifest


def _get(document: Any, key: str) -> Any:
    return document.get(key) if isinstance(document, dict) else None


def check_manifest(manifest: dict[str, Any], game: Any, config: Any, source: str) -> None:
    """Refuse (ValueError) a bot whose manifest does not fit ``game`` with ``config``."""
    if manifest["game"] != game.name or manifest["env"] != game.env_name:
        from ..envs.registry import earlier_versions

        earlier = earlier_versions().get(manifest["env"])
        if earlier is not None and earlier.name == game.name:  # a version the game still plays: say how
            raise ValueError(f"{source} is a bot for {manifest['env']} ({earlier.title}), not for {game.env_name}; "
                             f"play it in {manifest['env']} (the game name {manifest['env']}, e.g. tavernzoo "
                             f"match {manifest['env']} --bots ...)")
        raise ValueError(f"{source} is a bot for {manifest['env']} ({manifest['game']}), not for {game.env_name}; "
                         "use a bot exported for this game and env version")
    names = list(game.action_names(config))
    size = game.encoder.observation_size(config)
    bot_size = _get(manifest["observation"], "size")
    if bot_size != size or len(manifest["actions"]) != len(names):
        raise ValueError(
            f"{source} expects observations of {bot_size} and {len(manifest['actions'])} actions; {game.env_name} "
            f"with these options has {size} and {len(names)}{_option_hint(manifest, config)}"
        )
    if list(manifest["actions"]) != names:
        raise ValueError(f"{source} names its actions differently from {game.env_name}; re-export it")


def _option_hint(manifest: dict[str, Any], config: Any) -> str:
    """``" (it was trained with num_players=4; here 8)"``: the options that differ, if the manifest says."""
    from ..envs.core import config_to_dict

    trained = manifest.get("game_config")
    if not isinstance(trained, dict):
        return ""
    here = config_to_dict(config)
    differ = [key for key in trained if key in here and trained[key] != here[key]]
    if not differ:
        return ""
    return (f" (it was trained with {', '.join(f'{k}={json.dumps(trained[k])}' for k in differ)}; here "
            f"{', '.join(json.dumps(here[k]) for k in differ)}: play with those options, e.g. "
            f"--set {differ[0]}={json.dumps(trained[differ[0]])})")


def _session_options() -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    # A single small MLP per decision: more threads only cost wake-ups.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return options


def open_session(onnx_path: Path, manifest: dict[str, Any]) -> Any:
    """An onnxruntime session of ``onnx_path`` after checking its hash and its inputs and outputs."""
    import onnxruntime

    data = onnx_path.read_bytes()
    expected = _get(manifest["onnx"], "sha256")
    if expected != hashlib.sha256(data).hexdigest():
        raise ValueError(f"{onnx_path} does not match its manifest (SHA-256 differs): the pair was mixed up or "
                         "one was changed; export the bot again")
    try:
        session = onnxruntime.InferenceSession(data, _session_options(), providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types for unreadable graphs
        raise ValueError(f"{onnx_path} is not a loadable ONNX model: {error}") from None
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = {o.name for o in session.get_outputs()}
    size, actions = manifest["observation"]["size"], len(manifest["actions"])
    if (set(inputs) != {"observation", "action_mask"} or not {"action", "logits"} <= outputs
            or inputs["observation"].shape[1:] != [size] or inputs["action_mask"].shape[1:] != [actions]):
        raise ValueError(f"{onnx_path} does not have the tavernzoo bot interface (inputs observation[batch, {size}] "
                         f"and action_mask[batch, {actions}], outputs action and logits)")
    return session


def head_sessions(session: Any, data: bytes) -> tuple[Any, Any | None]:
    """``(policy, value)`` sessions of the graph ``data`` (whose whole-graph session is ``session``): each cut to
    the outputs it gives where the ``onnx`` package is at hand (the train extra). onnxruntime computes every node
    of a graph whatever outputs a call asks for, and an exported bot's value head is a network of its own beside
    the policy's, so a call for moves or values alone does about half the arithmetic (zoo:ministeel at 64 rows a
    call: moves 1.7x, values 2.3x as fast, ``python bench/bench_network.py --heads``; the same numbers to the bit,
    tests/test_export.py). Without ``onnx``, or for a graph that will not cut, both are ``session``; the value is
    None without a value head."""
    outputs = {output.name for output in session.get_outputs()}
    value = session if "value" in outputs else None
    try:
        import onnx
        import onnxruntime
        from onnx import utils
    except ImportError:
        return session, value
    def cut(inputs: list[str], wanted: list[str]) -> Any:
        model = utils.Extractor(onnx.load_from_string(data)).extract_model(inputs, wanted)
        return onnxruntime.InferenceSession(model.SerializeToString(), _session_options(),
                                            providers=["CPUExecutionProvider"])

    try:
        return (cut(["observation", "action_mask"], ["action", "logits"]),
                cut(["observation"], ["value"]) if value is not None else None)
    except Exception:  # onnx raises its own types for a graph it cannot cut: the whole graph still answers
        return session, value


class OnnxBot(BotBase):
    """An exported bot: the best legal action of its ONNX policy (or a sample, if not deterministic)."""

    def __init__(self, config: Any, seed: int | None, path: str | os.PathLike, game: Any,
                 deterministic: bool = True):
        path = Path(path)
        self.manifest = read_manifest(path)
        config = game.make_config(config)
        check_manifest(self.manifest, game, config, str(path))
        self.session = open_session(path, self.manifest)
        self._mask_type = np.bool_ if "bool" in self.session.get_inputs()[1].type else np.int8
        self.name = f"onnx:{path.name}"
        self.path = path
        self.has_value = "value" in {output.name for output in self.session.get_outputs()}
        # The sessions of moves and of values: the whole graph, or each cut to its head (cut_heads).
        self._heads: tuple[Any, Any | None] = (self.session, self.session if self.has_value else None)
        self.deterministic = deterministic
        self._rng = np.random.default_rng(seed)

    def run(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, masked logits)`` of a batch, straight from the graph."""
        masks = np.asarray(masks)
        if not masks.any(axis=1).all():
            raise ValueError("an ONNX bot was asked to act on an all-zero action mask")
        actions, logits = self._heads[0].run(["action", "logits"], {
            "observation": np.asarray(observations, dtype=np.float32),
            "action_mask": masks.astype(self._mask_type, copy=False),
        })
        return actions, logits

    def action_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masked_softmax(self.run(observations, masks)[1], masks)

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray | None:
        return None if self.deterministic else self.action_probabilities(observations, masks)

    def check_value_head(self) -> None:
        if not self.has_value:
            raise ValueError(f"{self.path} has no value output (it was exported before bots carried the value "
                             f"head); export it again from its checkpoint: tavernzoo export CHECKPOINT --out "
                             f"{self.path.name}, or give value= the checkpoint or training run directory itself")

    def value_estimates(self, observations: np.ndarray) -> np.ndarray:
        self.check_value_head()
        observations = np.asarray(observations, dtype=np.float32)
        value = self._heads[1]
        if value is not self.session:
            return value.run(["value"], {"observation": observations})[0]
        # The critic does not read the mask, but the whole graph's inputs must all be fed.
        masks = np.ones((len(observations), len(self.manifest["actions"])), dtype=self._mask_type)
        return value.run(["value"], {"observation": observations, "action_mask": masks})[0]

    def cut_heads(self) -> None:
        """Answer moves and values from graphs cut to their heads (:func:`head_sessions`) from now on: what a
        search asking thousands of rows wants. Not done for play: importing onnx takes about half a second."""
        if self._heads[0] is self.session:
            self._heads = head_sessions(self.session, self.path.read_bytes())

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, logits = self.run(observations, masks)
        if self.deterministic:
            return actions
        # Gumbel-max: argmax(logits + Gumbel noise) samples softmax(logits); illegal ones stay at -inf.
        return (logits + self._rng.gumbel(size=logits.shape)).argmax(axis=1)

    def act(self, observation: dict[str, Any]) -> int:
        return int(self.act_batch(observation["observation"][None, :], observation["action_mask"][None, :])[0])


def zoo_bots(directory: str | os.PathLike | None = None) -> dict[str, Path]:
    """The bundled bots by game name: ``{game: path of its .onnx}`` (those with a manifest next to them)."""
    directory = Path(directory) if directory is not None else ZOO_DIR
    if not directory.is_dir():
        return {}
    return {path.stem: path for path in sorted(directory.glob("*.onnx")) if path.with_suffix(".json").is_file()}


def load_zoo_bot(game_name: str, game: Any, config: Any, seed: int | None) -> OnnxBot:
    """The bundled bot ``zoo:GAME`` (``GAME@sample``: sampling) for ``game``."""
    name, _, mode = game_name.partition("@")
    if mode not in ("", "sample"):
        raise ValueError(f"bot spec zoo:{game_name}: after '@' only 'sample' is valid")
    bots = zoo_bots()
    if name not in bots:
        available = ", ".join(f"zoo:{n}" for n in bots) or "none are installed"
        raise ValueError(f"there is no zoo bot for {name!r}; available: {available}")
    plays = read_manifest(bots[name])["game"]  # zoo:ministeel_v1 plays ministeel (its earlier version)
    if plays != game.name:
        raise ValueError(f"zoo:{name} plays {plays}, not {game.name}; use zoo:{game.name}")
    bot = OnnxBot(config, seed, bots[name], game, deterministic=mode != "sample")
    bot.name = f"zoo:{game_name}"
    return bot
