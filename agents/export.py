"""Export a trained policy as an ONNX bot: ``BOT.onnx`` plus its manifest ``BOT.json``.

``tavernzoo export CHECKPOINT --out BOT.onnx`` reads a checkpoint's numpy policy (``policy.json`` +
``policy.npz``, see :mod:`.policy`; a training run directory means its latest checkpoint) and writes the
network as an ONNX graph built node by node with ``onnx.helper``, so nothing of torch or SB3 is involved
and the file holds only tensors and standard operators:

=================  ====================  ==================================================================
name               type                  meaning
=================  ====================  ==================================================================
``observation``    float32[batch, obs]   the env's ``observation`` vectors (input)
``action_mask``    int8[batch, actions]  the env's ``action_mask`` rows; nonzero = legal (input)
``logits``         float32[batch, act.]  the policy's logits with every illegal action set to ``-inf``
``action``         int64[batch]          ``ArgMax(logits)``: the best legal action (first on ties)
``value``          float32[batch]        the critic's estimate of the final return of the seat whose
                                         observation the row is (the seat to act, in training); only in
                                         bots exported from a checkpoint that holds the value head
=================  ====================  ==================================================================

The mask is applied inside the graph (``Where(mask, logits, -inf)``), so a frontend that only runs the
graph can never pick an illegal action; sampling frontends draw from ``softmax(logits)``. An all-zero
mask row has no legal action and its ``action`` is meaningless: callers must not ask.

The manifest (JSON, next to the ONNX file with the same stem) says what the bot plays and how to feed it:
game, env version and options, the observation size and where its layout is documented (the game's
``encode`` module), the action names in index order, the mask rule, the network shape, the training
provenance from ``policy.json`` and the SHA-256 of the ONNX file, which the loader checks. Its
``outputs`` list ``value`` where the graph has it, and ``value`` says what it estimates (``"per":
"observation_seat"``: one number per row, for the seat the observation belongs to; a search asks it
for every seat's observation in one batch). Bots exported before the value head have no ``value``
output and still load and play; ``mcts:value=`` refuses them with the command that re-exports. Loading needs
only numpy and onnxruntime (:mod:`.onnx_bot`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..envs import get_game
from ..envs.core import config_to_dict
from ..envs.records import write_json_atomic
from .policy import MLPPolicy, find_policy_dir

MANIFEST_FORMAT = "tavernzoo-onnx-bot"
MANIFEST_VERSION = 1
OPSET = 17
# onnxruntime reads IR versions up to its own; 8 is the one that introduced opset 17 and every
# runtime of the last years reads it.
IR_VERSION = 8
MASK_RULE = ("action_mask[i] != 0 marks action i legal; the graph sets the logit of every illegal action to "
             "-inf and outputs action = argmax(logits) (the first index on ties)")
OPERATORS = {"tanh": "Tanh", "relu": "Relu"}


def build_model(policy: MLPPolicy, doc: str = "") -> Any:
    """The ONNX model of ``policy`` with the action mask applied inside the graph (see the module doc)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    if policy.activation not in OPERATORS:
        raise ValueError(f"activation {policy.activation!r} cannot be exported; valid: {', '.join(OPERATORS)}")
    obs, actions = policy.observation_size, policy.num_actions
    initializers = [numpy_helper.from_array(np.array(-np.inf, dtype=np.float32), "minus_inf")]
    nodes = [helper.make_node("Cast", ["action_mask"], ["legal"], to=TensorProto.BOOL, name="mask_to_bool")]
    def layers(weights: list, biases: list, prefix: str, output: str) -> None:
        """Gemm + activation nodes of one MLP from the observation to ``output``. Weights are stored (out,
        in) as in torch's Linear: y = x W^T + b, i.e. Gemm with transB."""
        x, last = "observation", len(weights) - 1
        for i, (weight, bias) in enumerate(zip(weights, biases, strict=True)):
            initializers.append(numpy_helper.from_array(np.asarray(weight, np.float32), f"{prefix}w{i}"))
            initializers.append(numpy_helper.from_array(np.asarray(bias, np.float32), f"{prefix}b{i}"))
            out = output if i == last else f"{prefix}linear{i}"
            nodes.append(helper.make_node("Gemm", [x, f"{prefix}w{i}", f"{prefix}b{i}"], [out], transB=1,
                                          name=f"{prefix}gemm{i}"))
            if i < last:
                x = f"{prefix}hidden{i}"
                nodes.append(helper.make_node(OPERATORS[policy.activation], [out], [x], name=f"{prefix}act{i}"))

    layers(policy.weights, policy.biases, "", "raw_logits")
    nodes.append(helper.make_node("Where", ["legal", "raw_logits", "minus_inf"], ["logits"], name="mask"))
    nodes.append(helper.make_node("ArgMax", ["logits"], ["action"], axis=1, keepdims=0, name="best"))
    outputs = [helper.make_tensor_value_info("action", TensorProto.INT64, ["batch"]),
               helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", actions])]
    if policy.has_value:
        # The critic reads the observation alone (the mask does not enter it), as in training.
        layers(policy.value_weights, policy.value_biases, "v", "value_column")
        initializers.append(numpy_helper.from_array(np.array([1], dtype=np.int64), "value_axis"))
        nodes.append(helper.make_node("Squeeze", ["value_column", "value_axis"], ["value"], name="value_squeeze"))
        outputs.append(helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"]))
    graph = helper.make_graph(
        nodes, "tavernzoo_policy",
        inputs=[helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", obs]),
                helper.make_tensor_value_info("action_mask", TensorProto.INT8, ["batch", actions])],
        outputs=outputs, initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tavernzoo",
                              doc_string=doc)
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def _layout_summary(encoder: Any) -> str:
    """The encode module's docstring up to its first section: what a seat sees, what is hidden."""
    paragraphs = []
    for paragraph in (encoder.__doc__ or "").strip().split("\n\n"):
        if "\n===" in paragraph or "\n---" in paragraph:
            break
        paragraphs.append(" ".join(paragraph.split()))
    return "\n\n".join(paragraphs)


def make_manifest(policy: MLPPolicy, checkpoint: Path) -> dict[str, Any]:
    """The manifest of an exported ``policy`` (everything but the ONNX file's hash)."""
    meta = policy.meta
    env = meta.get("env")
    if not env:
        raise ValueError(f"{checkpoint}/policy.json names no env, so the bot's game is unknown")
    game = get_game(env)
    if game.env_name != env:
        raise ValueError(f"{checkpoint} was trained on {env}, but this tavernzoo has {game.env_name}; "
                         "retrain, or export with the tavernzoo version it was trained with")
    config = game.make_config(meta.get("game_config") or None)
    names = list(game.action_names(config))
    if policy.observation_size != game.encoder.observation_size(config) or policy.num_actions != len(names):
        raise ValueError(
            f"{checkpoint} expects observations of {policy.observation_size} and {policy.num_actions} actions; "
            f"{env} with its options has {game.encoder.observation_size(config)} and {len(names)}"
        )
    if meta.get("action_names") not in (None, names):
        raise ValueError(f"{checkpoint} was trained with other action names than {env} has now")
    provenance = {k: v for k, v in meta.items()
                  if k not in ("format", "format_version", "layers", "activation", "observation_size", "action_names")}
    provenance["checkpoint"] = checkpoint.name
    # An expert run's student (train/expert.py) played no PPO step: its run's config.json and league are the
    # unused defaults of the trainer it borrowed, and its recipe and games are in its provenance's ``expert``.
    if not isinstance(meta.get("expert"), dict):
        recipe = checkpoint.parent.parent / "config.json"  # the training run's options, when it is a run's checkpoint
        if checkpoint.parent.name == "checkpoints" and recipe.is_file():
            provenance["training_options"] = json.loads(recipe.read_text())
        league = league_record(checkpoint)
        if league:  # every bot its league held at any resume, with its games: training_options names only the last pool
            provenance["training_league"] = league
    # The whole lineage's record, as it reads from here: the runs it follows (the start, an expert student's
    # teacher and samples' runs) stay behind on this machine, and the bot must say the same wherever it goes.
    # With the digests of the networks it names, it follows their files into the zoo's dated names later.
    record = {name: games for name, games in training_opponents(str(checkpoint), game.name).items()
              if games is None or games > 0}  # an expert run's unused league lists its pool at 0 games
    if record:
        provenance["training_opponents"] = record
        record_networks(provenance, list(record), game.name)
    provenance["exported_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    outputs = {"action": "int64[batch], the best legal action",
               "logits": "float32[batch, actions], -inf where illegal; softmax of it is the policy"}
    network: dict[str, Any] = {"layers": [int(w.shape[0]) for w in policy.weights], "activation": policy.activation}
    extra: dict[str, Any] = {}
    if policy.has_value:
        outputs["value"] = ("float32[batch], the critic's estimate of the final return of the seat whose "
                            "observation the row is")
        network["value_layers"] = [int(w.shape[0]) for w in policy.value_weights]
        extra["value"] = {"output": "value", "per": "observation_seat",
                          "estimates": "the final return (the game's returns, in its range) of the seat the "
                                       "observation belongs to; ask with each seat's observation for every seat's"}
    return {
        "format": MANIFEST_FORMAT,
        "format_version": MANIFEST_VERSION,
        "game": game.name,
        "env": game.env_name,
        "game_config": config_to_dict(config),
        "observation": {
            "input": "observation", "dtype": "float32", "size": policy.observation_size, "range": [0.0, 1.0],
            "layout": game.encoder.__name__, "summary": _layout_summary(game.encoder),
        },
        "actions": names,
        "action_mask": {"input": "action_mask", "dtype": "int8", "rule": MASK_RULE},
        "outputs": outputs,
        **extra,
        "network": network,
        "onnx": {"opset": OPSET, "ir_version": IR_VERSION},
        "provenance": provenance,
    }


def manifest_path(onnx_path: str | os.PathLike) -> Path:
    """``BOT.json`` for ``BOT.onnx``."""
    return Path(onnx_path).with_suffix(".json")


MAX_STORY_CHARS = 1000
"""The longest ``--summary`` or ``--lineage`` stage (a sentence or two, not a document)."""
MAX_LINEAGE_STAGES = 32


def check_story(summary: str | None, lineage: Sequence[str]) -> None:
    """A ValueError naming what is wrong with a bot's ``summary`` or ``lineage`` (the words a manifest's
    provenance carries about how the bot was made, stage by stage, for ``tavernzoo zoo`` and readers)."""
    texts = ([("--summary", summary)] if summary is not None else []) + [("--lineage", s) for s in lineage]
    for option, text in texts:
        if not text.strip():
            raise ValueError(f"{option} is empty: give a few words on how the bot was made")
        if len(text) > MAX_STORY_CHARS:
            raise ValueError(f"{option} is {len(text):,} characters; at most {MAX_STORY_CHARS:,}")
        if any(not character.isprintable() for character in text):
            raise ValueError(f"{option} {text[:40]!r}...: only printable characters (no newlines or control codes)")
    if len(lineage) > MAX_LINEAGE_STAGES:
        raise ValueError(f"--lineage given {len(lineage)} times; at most {MAX_LINEAGE_STAGES} stages")


def export(checkpoint: str | os.PathLike, out: str | os.PathLike, summary: str | None = None,
           lineage: Sequence[str] = ()) -> tuple[Path, Path]:
    """Export the policy of ``checkpoint`` (a checkpoint or run dir) to ``out`` (.onnx) and its manifest.

    ``summary`` (a line) and ``lineage`` (one entry per stage, oldest first) go into the manifest's provenance
    for a bot made in several stages (a warm start, expert rounds, a blend): ``tavernzoo zoo`` shows the summary.
    """
    out = Path(out)
    if out.suffix != ".onnx":
        raise ValueError(f"--out {out}: the bot file must end in .onnx (its manifest goes next to it as .json)")
    check_story(summary, lineage)
    source = find_policy_dir(checkpoint)
    policy = MLPPolicy.load(source)
    manifest = make_manifest(policy, source)
    if summary is not None:
        manifest["provenance"]["summary"] = summary
    if lineage:
        manifest["provenance"]["lineage"] = list(lineage)
    model = build_model(policy, doc=f"tavernzoo bot for {manifest['env']}; manifest: {manifest_path(out).name}")
    for key in ("game", "env"):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, manifest[key]
    data = model.SerializeToString()
    manifest["onnx"]["file"] = out.name
    manifest["onnx"]["sha256"] = hashlib.sha256(data).hexdigest()
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, out)
    write_json_atomic(manifest_path(out), manifest)
    return out, manifest_path(out)


def read_policy(spec: str, game_name: str = "") -> MLPPolicy:
    """The network of an existing bot as an :class:`MLPPolicy`, with what its game needs to know: a
    checkpoint or training run directory (its ``policy.json``), or an exported ``BOT.onnx`` or ``zoo:GAME``
    (its ``w{i}``/``b{i}`` initializers, the critic's ``vw{i}``/``vb{i}`` where the graph has a ``value``
    output, and from its manifest the game, env, options, action names and provenance). ``tavernzoo expert
    --init``, ``exploit``'s warm start and ``blend`` read their bots with it. A spec's ``@sample`` is the same
    network; ``zoo:`` names the zoo bot of ``game_name``."""
    from .spec import BotSpec

    parsed = BotSpec.parse(spec)
    if parsed.traits.network is False:
        raise ValueError(f"{spec} is a {parsed.kind} bot, which has no network: name a checkpoint, a training run, "
                         "BOT.onnx or zoo:GAME")
    if parsed.traits.network is None:
        return MLPPolicy.load(find_policy_dir(parsed.name))
    import onnx
    from onnx import numpy_helper

    from .onnx_bot import read_manifest

    path = _onnx_path(parsed, game_name)
    if not path.is_file():
        raise ValueError(f"{spec}: no ONNX bot at {path}")
    manifest = read_manifest(path)
    arrays = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    count = sum(1 for name in arrays if name.startswith("w") and name[1:].isdigit())
    critic = sum(1 for name in arrays if name.startswith("vw") and name[2:].isdigit())  # the `value` output's
    network = manifest.get("network") or {}
    activation = network.get("activation", "tanh") if isinstance(network, dict) else "tanh"
    provenance = manifest.get("provenance") if isinstance(manifest.get("provenance"), dict) else {}
    meta = {**provenance, "game": manifest.get("game"), "env": manifest.get("env"),
            "game_config": manifest.get("game_config"), "action_names": manifest.get("actions"),
            "exported_as": path.name}
    return MLPPolicy([arrays[f"w{i}"] for i in range(count)], [arrays[f"b{i}"] for i in range(count)],
                     activation, meta,
                     [arrays[f"vw{i}"] for i in range(critic)] if critic else None,
                     [arrays[f"vb{i}"] for i in range(critic)] if critic else None)


def league_record(checkpoint: Path) -> dict[str, int]:
    """The games a checkpoint's training league gave each bot besides the learner and its snapshots, every
    bot its pool held at any resume included (``league/league.json``'s pool and ``retired`` members); ``{}``
    where the checkpoint has no readable league. A spec the pool names twice (``pool_bots=heuristic,heuristic,
    zoo:ministeel`` weights the draws) is one bot: its members' games are summed."""
    try:
        state = json.loads((checkpoint / "league" / "league.json").read_text())
        record: dict[str, int] = {}
        for member in state.get("builtins", []) + state.get("retired", []):
            record[str(member["name"])] = record.get(str(member["name"]), 0) + int(member["games"])
        return record
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


# How many bots ``training_opponents`` reads in a lineage (``--init`` starts, teachers, samples' runs); a guard
# against files that name each other, far above any lineage trained here (the MiniSteel file of 2026-12-07: 9).
LINEAGE_DEPTH = 16


def training_opponents(spec: str, game_name: str = "") -> dict[str, int | None]:
    """The bots besides itself that the training leagues of a trained bot and of the bots it learned from
    held, by spec as their ``pool_bots`` wrote them, with the games the leagues gave each (summed over the
    lineage; None where a league's count is not known).

    A checkpoint (or a run's latest checkpoint) answers from its ``league/league.json``, every bot its pool held
    at any resume included (``retired`` members); an exported bot from its manifest's ``training_league``, or,
    for a bot exported before that was written, its last pool (``training_options.pool_bots``, no counts).
    An expert run's student (train/expert.py) answers with the bot its games seated at the other seats
    (``opponents``, or the teacher), with their count. The bots it learned from are followed too: the bot a
    run started from (``--init``: ``started_from``), and an expert run's teacher and the runs its ``--samples``
    came from, and a blend's two ends (``tavernzoo blend``), where the specs they name can still be found from
    here.
    A bot, league member or start recorded by an ONNX spec whose file has changed since (``networks`` in the
    provenance: the digests found when the run started) is named by the zoo bot that holds its file now, or
    left out where none does: after a zoo update, ``zoo:GAME`` is no longer the bot a run of the week before
    met. ``{}`` where the spec names no network or its files say nothing: the answer feeds a note (``match``,
    ``tournament``), never a refusal."""
    found: dict[str, int | None] = {}
    seen: set[str] = set()
    waiting = [spec]
    while waiting and len(seen) < LINEAGE_DEPTH:
        start = waiting.pop(0)
        try:  # a run and its latest checkpoint are one network
            key = str(_network_key(start, game_name) or start)
        except ValueError:  # a spec a file names that does not parse: read (and found wanting) as written
            key = start
        if key in seen:
            continue
        seen.add(key)
        own, starts = _own_league(start, game_name)
        for name, games in own.items():
            _add_games(found, name, games)
        waiting += starts
    return found


def _add_games(record: dict[str, int | None], name: str, games: int | None) -> None:
    """``games`` more against ``name`` in ``record``; None (a count not known) stays None."""
    before = record.get(name, 0)
    record[name] = None if games is None or before is None else before + games


def network_digest(spec: str, game_name: str = "") -> str | None:
    """The SHA-256 (hex) of the ONNX file a bot spec names (``zoo:`` included), or None where it names none
    or the file cannot be read. Provenance records it beside the specs a bot learned from (``networks``):
    a spec names a file by where it lies, and the next export to that path, a zoo update above all, puts
    another network there. A checkpoint is left out: a run writes each checkpoint to a new directory, and
    a run named by its directory means its latest, which moves on as the run does."""
    from .spec import BotSpec

    try:
        parsed = BotSpec.parse(spec)
        if parsed.kind in ("zoo", "onnx"):
            return _file_digest(_onnx_path(parsed, game_name))
    except (ValueError, OSError):
        pass
    return None


def record_networks(provenance: dict[str, Any], specs: Sequence[str | None], game_name: str) -> None:
    """Add to ``provenance["networks"]`` the digest of each spec of ``specs`` that names an ONNX file, where
    that spec has none recorded yet (a resumed run keeps what its start found)."""
    networks = dict(provenance.get("networks") or {})
    for spec in specs:
        if spec and spec not in networks and (digest := network_digest(spec, game_name)) is not None:
            networks[spec] = digest
    if networks:
        provenance["networks"] = networks


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _current_spec(spec: str, recorded: Any, game_name: str) -> str | None:
    """The spec that names today the network ``spec`` named when its digest ``recorded`` was taken: ``spec``
    itself while its file is unchanged (or where nothing was recorded: a bot from before digests were), else
    the zoo bot that holds that file now (a zoo file replaced stays in the zoo under a dated name), else None:
    that network is nowhere to be found."""
    if not isinstance(recorded, str) or network_digest(spec, game_name) == recorded:
        return spec
    from .onnx_bot import zoo_bots
    from .spec import BotSpec

    for name, path in zoo_bots().items():
        try:
            if _file_digest(path) == recorded:
                mode = BotSpec.parse(spec).mode
                return f"zoo:{name}" + ("" if mode is None else f"@{mode}")
        except (OSError, ValueError):
            continue
    return None


def _own_league(spec: str, game_name: str) -> tuple[dict[str, int | None], list[str]]:
    """One trained bot's own league record (as :func:`training_opponents` says) and the specs it learned from,
    each under the spec that names its network today (:func:`_current_spec`)."""
    from .onnx_bot import read_manifest
    from .spec import BotSpec

    try:
        parsed = BotSpec.parse(spec)
        if parsed.traits.network is None:
            directory = find_policy_dir(parsed.name)
            meta = json.loads((directory / "policy.json").read_text())
            own: dict[str, int | None] = dict(league_record(directory))
            provenance, whole = meta, None
        elif parsed.traits.network:
            provenance = read_manifest(_onnx_path(parsed, game_name)).get("provenance") or {}
            whole = provenance.get("training_opponents")  # the whole lineage's record, written at export
            league = provenance.get("training_league")
            if isinstance(league, dict):
                own = {str(name): int(games) for name, games in league.items()}
            else:
                options = provenance.get("training_options") or {}
                own = {str(name): None for name in options.get("pool_bots", [])}
        else:
            return {}, []
        networks = provenance.get("networks") if isinstance(provenance.get("networks"), dict) else {}
        if isinstance(whole, dict):  # nothing left to follow
            return _named_now({str(name): None if games is None else int(games) for name, games in whole.items()},
                              networks, game_name), []
        expert_own, expert_starts = _expert_lineage(provenance.get("expert"))
        for name, games in expert_own.items():
            own[name] = own.get(name, 0) + games
        current = _named_now(own, networks, game_name)
        blended = provenance.get("blend") if isinstance(provenance.get("blend"), dict) else {}
        parents = [blended.get(end) for end in ("first", "second") if isinstance(blended.get(end), str)]
        starts = [_current_spec(start, networks.get(start), game_name)
                  for start in [_start_of(provenance), *expert_starts, *parents] if start]
        return current, [start for start in starts if start]
    except (ValueError, OSError, KeyError, TypeError, AttributeError):
        pass  # a file that is missing or says nothing else: nothing known
    return {}, []


def _named_now(own: dict[str, int | None], networks: dict[str, Any], game_name: str) -> dict[str, int | None]:
    """``own`` (games by spec) under the specs that name those networks today (:func:`_current_spec`), those
    found nowhere left out."""
    current: dict[str, int | None] = {}
    for name, games in own.items():
        if (now := _current_spec(name, networks.get(name), game_name)) is not None:
            _add_games(current, now, games)
    return current


def _expert_lineage(expert: Any) -> tuple[dict[str, int], list[str]]:
    """An expert run's student (its provenance's ``expert``): the bot at the other seats of its games with
    their count, and what it learned from (its ``init``, its teacher where the teacher played, its samples'
    runs). A student from before ``against`` was recorded says nothing of its games (``{}``)."""
    if not isinstance(expert, dict):
        return {}, []
    against = expert.get("against")
    own = ({str(name): int(games) for name, games in against.items() if int(games) > 0}
           if isinstance(against, dict) else {})
    starts = [expert.get("init")] + ([expert.get("teacher")] if own else [])
    for source in expert.get("sample_sources") or []:
        path = Path(str(source))
        # a run's samples file (RUN/expert/samples.npz) stands for its run, whose student knows its games
        starts.append(str(path.parent.parent) if path.name == "samples.npz" and path.parent.name == "expert"
                      else str(path))
    return own, [start for start in starts if isinstance(start, str) and start]


def _start_of(provenance: Any) -> str | None:
    start = provenance.get("started_from") if isinstance(provenance, dict) else None
    return start if isinstance(start, str) and start else None


def same_network(first: str, second: str, game_name: str = "") -> bool:
    """Whether two bot specs load the same network file (``@sample`` and a run beside its latest checkpoint
    alike); False where either names none."""
    return (key := _network_key(first, game_name)) is not None and key == _network_key(second, game_name)


def _onnx_path(parsed: Any, game_name: str) -> Path:
    """The ONNX file of a ``zoo:`` spec (the bundled bot of ``game_name`` for ``zoo:``) or an ONNX spec."""
    from .onnx_bot import ZOO_DIR

    return ZOO_DIR / f"{parsed.zoo_name(game_name)}.onnx" if parsed.kind == "zoo" else Path(parsed.name)


def _network_key(spec: str, game_name: str) -> Path | None:
    from .spec import BotSpec

    parsed = BotSpec.parse(spec)
    try:
        if parsed.kind in ("zoo", "onnx"):
            return _onnx_path(parsed, game_name).resolve()
        if parsed.traits.network is None and Path(parsed.name).exists():
            return find_policy_dir(parsed.name).resolve()
    except (ValueError, OSError):
        pass
    return None
