"""Files that came from another machine: a file or folder named in a bot spec or a game option, as the
spec or option writes it, mapped to the copy of it on this machine.

A Ray driver ships the files its bots and options name to the cluster's nodes through Ray's object store
(:mod:`tavernzoo.eval.shipping`); a node writes each under its own cache folder and records here where.
Every loader of such a file asks :func:`local_path` first, so the spec, the option, the labels and the
game records keep the path as the user wrote it (the records equal the local backend's) while the bytes
read are the driver's. A process that received nothing maps every path to itself.

A leaf module: it imports nothing else of tavernzoo (rules modules may use it).
"""

from __future__ import annotations

_LOCAL: dict[str, str] = {}


def local_path(path: str) -> str:
    """Where the file or folder ``path`` (as written in a spec or option) is on this machine."""
    return _LOCAL.get(path, path)


def install(mapping: dict[str, str]) -> None:
    """Record the local copies of shipped files (``{path as written: local path}``)."""
    _LOCAL.update(mapping)
