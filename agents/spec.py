"""Bot specs parsed once: the grammar every command, the web page and the bot server take.

    ==========================  ======  ==========================================================
    spec                        kind    fields
    ==========================  ======  ==========================================================
    ``mcts``, ``mcts:OPTIONS``  mcts    ``options``: the comma-separated items (``400``,
                                        ``rollout=heuristic``), as written
    ``cmd:PROGRAM ARGS``        cmd     ``name``: the command line
    ``sandbox:cmd:...``,        cmd     as ``cmd:``, and ``sandbox``: the limits as written
    ``sandbox[LIMITS]:cmd:...``         (``''`` for the defaults; agents/sandbox.py, docs/sandbox.md)
    ``llm:MODEL@URL,OPTIONS``   llm     ``name``: all after ``llm:`` (agents/llm.py parses it)
    ``zoo:GAME[@MODE]``         zoo     ``name``: the game ('' for the game played), ``mode``
    ``PATH.onnx``               onnx    ``name``: the path
    ``NAME[@MODE]``             name    ``name``: a game's built-in bot (without ``@``) or else a
                                        training run or checkpoint path; ``mode``
    ==========================  ======  ==========================================================

``mode`` is None without an ``@``, else the text after it (only ``sample`` is valid where it is used).
:meth:`BotSpec.parse` never fails: what a spec names (a built-in of which game, a file that exists, valid
options) is decided where it is loaded (:func:`tavernzoo.agents.load_bot`). :meth:`BotSpec.format`
writes the spec back (``BotSpec.parse(spec.format()) == spec``). :meth:`BotSpec.local` decides, for every
place that must, whether a spec may run a program or read a file on this machine (from the text alone).

A leaf module: it imports nothing else of tavernzoo.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

KINDS = ("mcts", "cmd", "llm", "zoo", "onnx", "name")
NESTED_OPTIONS = ("rollout", "others", "prior", "value", "belief")
"""The mcts options whose value is itself a bot spec (agents/mcts.py reads this list: one list for the search,
the web's check of what a spec may load and the files a Ray cluster is sent)."""


@dataclass(frozen=True)
class BotSpec:
    """A parsed bot spec (the table in the module docstring)."""

    kind: str
    name: str = ""
    mode: str | None = None
    options: tuple[str, ...] = ()
    sandbox: str | None = None
    """A ``cmd:`` spec's sandbox limits (``memory=256,cpu=5``; ``''`` the defaults), None when unconfined."""
    text: str = field(default="", compare=False)
    """The spec as written (error messages quote it)."""

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        if not isinstance(text, str):
            raise TypeError(f"a bot spec is a string, not {type(text).__name__}")
        if text == "mcts" or text.startswith("mcts:"):
            items = tuple(part.strip() for part in text.partition(":")[2].split(",") if part.strip())
            return cls("mcts", options=items, text=text)
        if text.startswith("sandbox:") or text.startswith("sandbox["):
            limits, inner = "", text[len("sandbox:"):]
            if text.startswith("sandbox["):
                limits, _, inner = text[len("sandbox["):].partition("]:")
            inner_spec = cls.parse(inner)
            if inner_spec.kind != "cmd" or inner_spec.sandbox is not None:
                # Only programs run in a sandbox; a typo must not load a bot unconfined.
                return cls("cmd", "", sandbox=limits, text=text)
            return cls("cmd", inner_spec.name, sandbox=limits, text=text)
        if text.startswith("cmd:"):
            return cls("cmd", text[len("cmd:"):], text=text)
        if text.startswith("llm:"):
            return cls("llm", text[len("llm:"):], text=text)
        if text.startswith("zoo:"):
            name, at, mode = text[len("zoo:"):].partition("@")
            return cls("zoo", name, mode if at else None, text=text)
        if text.endswith(".onnx"):
            return cls("onnx", text, text=text)
        name, at, mode = text.partition("@")
        return cls("name", name, mode if at else None, text=text)

    def format(self) -> str:
        if self.kind == "mcts":
            return "mcts" + (":" + ",".join(self.options) if self.options else "")
        mode = "" if self.mode is None else "@" + self.mode
        if self.kind == "cmd" and self.sandbox is not None:
            return ("sandbox:" if not self.sandbox else f"sandbox[{self.sandbox}]:") + "cmd:" + self.name
        return {"cmd": "cmd:", "llm": "llm:", "zoo": "zoo:", "onnx": "", "name": ""}[self.kind] + self.name + mode

    def __str__(self) -> str:
        return self.text or self.format()

    def option(self, key: str) -> str | None:
        """The value of an mcts option written as ``key=value`` (the last one written), or None."""
        found = None
        for item in self.options:
            name, sep, value = item.partition("=")
            if sep and name.strip() == key:
                found = value.strip()
        return found

    def with_option(self, key: str, value: str) -> BotSpec:
        """This mcts spec with ``key=value`` added after its options (a later item wins)."""
        if self.kind != "mcts":
            raise ValueError(f"bot spec {str(self)!r} is no mcts spec: it takes no option {key}=")
        if "," in value or "=" in value:
            raise ValueError(f"{key}={value!r}: an mcts option's value cannot hold ',' or '='")
        text = str(self)
        return BotSpec("mcts", options=(*self.options, f"{key}={value}"),
                       text=f"{text}{',' if ':' in text else ':'}{key}={value}")

    def sandboxed(self, limits: str) -> BotSpec:
        """This spec with its programs run in a sandbox of ``limits`` (``--sandbox``): a ``cmd:`` spec gets
        them (one already sandboxed keeps its own); other specs run no program and stay as they are."""
        if self.kind != "cmd" or self.sandbox is not None:
            return self
        spec = BotSpec("cmd", self.name, sandbox=limits)
        return BotSpec("cmd", self.name, sandbox=limits, text=spec.format())

    def within(self) -> list[BotSpec]:
        """This spec and the bot specs nested in it (an mcts spec's :data:`NESTED_OPTIONS`)."""
        parts = [self]
        if self.kind == "mcts":
            for item in self.options:
                key, _, value = item.partition("=")
                if key.strip() in NESTED_OPTIONS:
                    parts.append(BotSpec.parse(value.strip()))
        return parts

    def local(self, builtins: Collection[str], zoo: Collection[str]) -> bool:
        """Whether loading this spec, or one nested in it, may run a program or read a file on this machine:
        everything but a built-in bot (one of ``builtins``, or ``none``), a bundled zoo bot (``zoo:NAME``
        with NAME in ``zoo``, or ``zoo:`` for the game played when ``""`` is in ``zoo``) and an mcts spec
        whose nested specs pass the same test. What ``tavernzoo web`` refuses without ``--allow-local``.

        Decided from the text alone: the disk is never asked whether a path exists, so a server's answer
        to a request cannot tell anyone which of its files exist."""
        return any(not part._names_no_file(builtins, zoo) for part in self.within())

    def _names_no_file(self, builtins: Collection[str], zoo: Collection[str]) -> bool:
        if self.kind == "mcts":
            return True  # its nested specs are judged on their own by local()
        if self.kind == "zoo":
            return self.name in zoo and self.mode in (None, "sample")
        return self.kind == "name" and self.mode is None and (self.name in builtins or self.name == "none")
