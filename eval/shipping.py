"""Bot files and option files that travel with a Ray job, so that no node needs copies at the same path.

The driver gathers every file that a bot spec or a game option names (:func:`gather`): an exported bot
(``BOT.onnx`` and its manifest ``BOT.json``), a training checkpoint (``policy.json``, ``policy.npz``; a
training run's latest one), the files of specs nested in an mcts spec (``rollout=``, ``others=``, ``prior=``,
``value=``) and the files named in game options (a Wyvern deck, a Tiny Minotaur ruleset: the options a game
declares with ``option(names=...)``). They go into Ray's object store once per run (``ray.put``) and every task gets the
reference; a task first writes them under its node's cache folder (:meth:`Shipment.install`: once per
node, content-addressed, atomically) and maps each path, as the user wrote it, to that copy
(:mod:`tavernzoo.envs.shipped`). Specs, labels, options and records keep the paths as written, so the
games and results equal the local backend's.

Why the object store, not the job's ``runtime_env`` (``working_dir``/``py_modules``): a runtime env
uploads one folder tree and makes the workers run in it, so bots from several folders, absolute paths
and a training run's other checkpoints would all have to be rearranged (or uploaded whole, up to Ray's
package size limit) and the paths would change; the object store carries exactly the files named, as
bytes, to the tasks of this run only, over the connection the driver already has.

``cmd:`` programs are not shipped: a program may need its interpreter, libraries and data around it,
which only the node's own installation can provide; it must exist at the same path on every node.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_SHIPPED_BYTES = 1 << 30
"""The most bytes of files one run ships (1 GiB): an exported bot is a few hundred KB."""

CACHE_DIR = "tavernzoo-shipped"
"""Under the node's temporary folder: one folder per file set, named by its SHA-256."""


@dataclass
class Shipment:
    """The files of one run: for each path as written, the folder of its copy (``{relative name: bytes}``)
    and the relative name the path stands for (``""``: the folder itself)."""

    items: dict[str, tuple[dict[str, bytes], str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.items)

    def size(self) -> int:
        return sum(len(data) for files, _ in self.items.values() for data in files.values())

    def install(self) -> None:
        """Write every file under this node's cache (unless already there) and map the paths to them."""
        from ..envs.shipped import install, local_path

        mapping = {}
        for written, (files, target) in self.items.items():
            digest = hashlib.sha256()
            for name in sorted(files):
                digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
            folder = Path(tempfile.gettempdir()) / CACHE_DIR / digest.hexdigest()
            if not folder.is_dir():
                _write_folder(folder, files)
            mapping[written] = str(folder / target) if target else str(folder)
        if any(local_path(key) != value for key, value in mapping.items()):
            install(mapping)


def _write_folder(folder: Path, files: dict[str, bytes]) -> None:
    """The folder, complete or not at all: written beside it and renamed (a concurrent task's copy wins)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
    try:
        for name, data in files.items():
            path = scratch / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        os.rename(scratch, folder)
    except OSError:
        if not folder.is_dir():
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bot_files(spec: Any) -> tuple[dict[str, Path], str] | None:
    """The files a (non-mcts) bot spec reads (``{name in its folder: path}``, the name the spec stands
    for), or None when it reads none."""
    from ..agents.policy import find_policy_dir

    if spec.kind == "onnx":
        onnx = Path(spec.name)
        if not onnx.is_file():
            return None  # load_bot refuses it, with its own message
        files = {onnx.name: onnx}
        manifest = onnx.with_suffix(".json")
        if manifest.is_file():
            files[manifest.name] = manifest
        return files, onnx.name
    if spec.kind == "name" and Path(spec.name).exists():
        checkpoint = find_policy_dir(spec.name)  # a run directory ships only its latest checkpoint
        return {name: checkpoint / name for name in ("policy.json", "policy.npz")}, ""
    return None


def gather(game: Any, bot_specs: Sequence[str], config: dict[str, Any] | None) -> Shipment:
    """Every file that ``bot_specs`` and the game options ``config`` name, read on this (the driver's)
    machine. A ValueError, before anything is read, when they come to more than :data:`MAX_SHIPPED_BYTES`."""
    from ..agents.spec import BotSpec
    from ..envs.core import file_options

    named: dict[str, tuple[dict[str, Path], str]] = {}
    for text in bot_specs:
        for spec in BotSpec.parse(text).within():
            found = None if spec.traits.nested or spec.traits.program else _bot_files(spec)
            if found is not None:
                named[spec.name] = found
    for _, value, _ in file_options(game.rules.Config, config or {}):
        path = Path(value)
        if path.is_file():
            named[value] = ({path.name: path}, path.name)
    size = sum(path.stat().st_size for files, _ in named.values() for path in files.values())
    if size > MAX_SHIPPED_BYTES:
        raise ValueError(f"the bot and option files come to {size / 2**20:.0f} MiB; the Ray backend ships at most "
                         f"{MAX_SHIPPED_BYTES >> 20} MiB per run")
    return Shipment({written: ({name: path.read_bytes() for name, path in files.items()}, target)
                     for written, (files, target) in named.items()})
