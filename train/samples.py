"""Expert iteration's labelled positions: :class:`Samples` and its ``.npz`` file (``expert/samples.npz``).

Plain arrays only: a samples file is read without unpickling anything, each array's declared size is
checked against the file before numpy allocates it, and a file is written whole or not at all.
"""

from __future__ import annotations

import math
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def _declared_bytes(source: Path, names: tuple[str, ...]) -> int:
    """The bytes that the arrays ``names`` of the ``.npz`` at ``source`` would take, by their headers (read
    without reading the arrays: np.load allocates what a header declares before reading the data)."""
    total = 0
    with zipfile.ZipFile(source) as archive:
        members = set(archive.namelist())
        for name in names:
            if f"{name}.npy" not in members:
                continue  # load() names what is missing
            with archive.open(f"{name}.npy") as handle:
                version = np.lib.format.read_magic(handle)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(f"{name}: .npy format version {version}")
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read_header(handle)
                if dtype.hasobject:
                    raise ValueError(f"{name}: Python objects (would need unpickling)")
            total += math.prod(shape) * dtype.itemsize
    return total


@dataclass
class Samples:
    """Labelled positions; row i of every array is one decision.

    observations float32 (n, observation_size); masks bool (n, actions); targets float32 (n, actions),
    each row a distribution over that row's legal actions; values float32 (n,), the deciding seat's final
    return in its game (best-response positions: the oracle's value of the position); weights float32 (n,),
    each row's share of the policy loss, >= 0 (1 for every position a game labelled; best-response positions
    weigh by what a mistake there costs, train/br_positions.py). A file written before weights existed
    loads with every weight 1.
    """

    observations: np.ndarray
    masks: np.ndarray
    targets: np.ndarray
    values: np.ndarray
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.weights is None:
            self.weights = np.ones(len(self.values), np.float32)

    @classmethod
    def empty(cls, observation_size: int, actions: int) -> Samples:
        return cls(np.zeros((0, observation_size), np.float32), np.zeros((0, actions), bool),
                   np.zeros((0, actions), np.float32), np.zeros(0, np.float32), np.zeros(0, np.float32))

    @classmethod
    def concat(cls, parts: list[Samples]) -> Samples:
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in cls.FIELDS))

    def __len__(self) -> int:
        return len(self.values)

    def head(self, rows: int) -> Samples:
        """The first ``rows`` positions (rounds are appended in order: a run's first rounds)."""
        return Samples(*(getattr(self, name)[:rows] for name in self.FIELDS))

    FIELDS = ("observations", "masks", "targets", "values", "weights")
    OPTIONAL = ("weights",)  # files written before it existed load with every weight 1
    # What a samples file may hold, its arrays' sizes as their headers declare them, before anything is read:
    # 4 GiB is over a million Wyvern positions (2.3 kB of observation each).
    MAX_BYTES = 4 << 30

    def save(self, path: Path) -> None:
        """Write the samples as one ``.npz`` of plain arrays, atomically (labelling is the costly part)."""
        partial = path.with_name(path.name + ".partial")
        with open(partial, "wb") as handle:
            np.savez(handle, **{name: getattr(self, name) for name in self.FIELDS})
        os.replace(partial, path)

    @classmethod
    def load(cls, path: str | os.PathLike, observation_size: int, actions: int) -> Samples:
        """Samples saved by :meth:`save` (an expert run's ``expert/samples.npz``) for a game with this
        observation size and action count; ValueError naming what does not fit. Never unpickles."""
        source = Path(path)
        if source.is_dir():
            source = source / "expert" / "samples.npz"
        try:
            # The headers first: np.load allocates what a header declares before it reads any data.
            declared = _declared_bytes(source, cls.FIELDS)
            if declared <= cls.MAX_BYTES:
                with np.load(source, allow_pickle=False) as archive:
                    arrays = {name: archive[name] for name in cls.FIELDS if name in archive.files}
        except FileNotFoundError:
            raise ValueError(f"--samples {path}: no such file (give an expert run directory or its "
                             "expert/samples.npz)") from None
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):  # not a zip of plain arrays (pickle refused)
            raise ValueError(f"--samples {path}: not a samples file of an expert run (an .npz of plain "
                             f"arrays: {', '.join(cls.FIELDS)})") from None
        if declared > cls.MAX_BYTES:
            raise ValueError(f"--samples {path}: its arrays declare {declared / 2**30:.1f} GiB; at most "
                             f"{cls.MAX_BYTES / 2**30:.0f} GiB of samples are read")
        missing = [name for name in cls.FIELDS if name not in arrays and name not in cls.OPTIONAL]
        if missing:
            raise ValueError(f"--samples {path}: no {', '.join(missing)} array in it; an expert run's "
                             f"samples hold {', '.join(n for n in cls.FIELDS if n not in cls.OPTIONAL)}")
        rows = len(arrays["values"])
        if "weights" not in arrays:
            arrays["weights"] = np.ones(rows, np.float32)
        shapes = {"observations": (rows, observation_size), "masks": (rows, actions),
                  "targets": (rows, actions), "values": (rows,), "weights": (rows,)}
        for name, shape in shapes.items():
            if arrays[name].shape != shape:
                raise ValueError(f"--samples {path}: {name} has shape {arrays[name].shape}, this game and "
                                 f"table need {shape} (observation size {observation_size}, {actions} actions)")
        samples = cls(arrays["observations"].astype(np.float32), arrays["masks"].astype(bool),
                      arrays["targets"].astype(np.float32), arrays["values"].astype(np.float32),
                      arrays["weights"].astype(np.float32))
        if not all(np.isfinite(getattr(samples, name)).all()
                   for name in ("observations", "targets", "values", "weights")):
            raise ValueError(f"--samples {path}: holds values that are not finite numbers")
        if (samples.weights < 0).any():
            raise ValueError(f"--samples {path}: holds negative weights (a weight is a row's share of the loss, "
                             ">= 0)")
        return samples
