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
    ``level:N``                 level   ``name``: N as written (``1`` .. ``5``: the game's ladder of
                                        named levels, agents/levels.py)
    ``PATH.onnx``               onnx    ``name``: the path
    ``NAME[@MODE]``             name    ``name``: a game's built-in bot (without ``@``) or else a
                                        training run or checkpoint path; ``mode``
    ==========================  ======  ==========================================================

``mode`` is None without an ``@``, else the text after it (only ``sample`` is valid where it is used).
:meth:`BotSpec.parse` never fails: what a spec names (a built-in of which game, a file that exists, valid
options) is decided where it is loaded (:func:`tavernzoo.agents.load_bot`). :meth:`BotSpec.format`
writes the spec back (``BotSpec.parse(spec.format()) == spec``). :meth:`BotSpec.local` decides, for every
place that must, whether a spec may run a program or read a file on this machine (from the text alone).
:meth:`BotSpec.anchored`, the one method that asks the disk, writes the paths a spec names as absolute ones
(what a training run records of the bots it names).

The kinds (:data:`KINDS`)
    Each kind is registered once, with what it can do (OpenSpiel's ``BotFactory``): its loader, whether it
    carries a network (weights a best response or an expert run may start from, and the game and options its
    files name), whether it plays every game, whether it runs a program (which hosts keep running over games
    and reseed per game, and which no Ray node is sent), whether it nests other specs. Hosts ask
    ``spec.traits`` instead of comparing kinds or the spec's text; ``load_bot`` dispatches through the loader.

A leaf module: it imports nothing else of tavernzoo (loaders are named, and imported when a spec loads).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Kind:
    """What a bot kind can do (see the module docstring)."""

    name: str
    loader: str
    """The function of ``tavernzoo.agents`` that loads a spec of this kind: ``loader(spec, game, config, seed)``."""
    network: bool | None
    """Carries a trained network (weights, and the game and options it was made for); None: when it names a
    path rather than a built-in bot (a checkpoint or training run)."""
    every_game: bool = False
    """Plays every game (a program, a language model, a search): no file says which."""
    program: bool = False
    """Runs a program: started once by a host and reseeded every game, never shipped to a Ray node."""
    nested: bool = False
    """Holds other bot specs (:data:`NESTED_OPTIONS`), judged and shipped on their own."""


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("mcts", "load_mcts", network=False, every_game=True, nested=True),
    Kind("cmd", "load_program", network=False, every_game=True, program=True),
    Kind("llm", "load_llm", network=False, every_game=True),
    Kind("zoo", "load_zoo", network=True),
    Kind("level", "load_level", network=False),  # the game's ladder says which bot, so which games
    Kind("onnx", "load_onnx", network=True),
    Kind("name", "load_named", network=None),
)}
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
        if text.startswith("level:"):
            return cls("level", text[len("level:"):], text=text)
        if text.endswith(".onnx"):
            return cls("onnx", text, text=text)
        name, at, mode = text.partition("@")
        return cls("name", name, mode if at else None, text=text)

    @property
    def traits(self) -> Kind:
        """What this spec's kind can do (:data:`KINDS`)."""
        return KINDS[self.kind]

    @property
    def plain(self) -> BotSpec:
        """This spec without its ``@mode`` (the same bot choosing otherwise: its network, its files)."""
        if self.mode is None:
            return self
        plain = replace(self, mode=None, text="")
        return replace(plain, text=plain.format())

    def zoo_name(self, game_name: str) -> str:
        """The bundled bot a ``zoo:`` spec names: its name, or ``game_name`` (the game played) for ``zoo:`` and
        ``zoo:@sample``."""
        if self.kind != "zoo":
            raise ValueError(f"bot spec {str(self)!r} is no zoo: spec")
        return self.name or game_name

    def names_network(self, builtins: Collection[str]) -> bool:
        """Whether this spec loads a trained network (zoo, ONNX, a checkpoint or training run; ``builtins``:
        the game's built-in bots, which are none), decided from the text."""
        network = self.traits.network
        if network is None:
            return self.name not in builtins and self.name != "none"
        return network

    def format(self) -> str:
        if self.kind == "mcts":
            return "mcts" + (":" + ",".join(self.options) if self.options else "")
        mode = "" if self.mode is None else "@" + self.mode
        if self.kind == "cmd" and self.sandbox is not None:
            return ("sandbox:" if not self.sandbox else f"sandbox[{self.sandbox}]:") + "cmd:" + self.name
        prefix = {"cmd": "cmd:", "llm": "llm:", "zoo": "zoo:", "level": "level:", "onnx": "", "name": ""}[self.kind]
        return prefix + self.name + mode

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

    def anchored(self, builtins: Collection[str]) -> BotSpec:
        """This spec with every file path it names (a checkpoint or run, ``BOT.onnx``, nested in an mcts spec
        too) that exists from here made absolute, so that it names the same files from any working directory:
        a run records its teacher, opponents, start and samples so (train/expert.py), and reading its lineage
        or resuming it elsewhere finds them. ``builtins`` (the game's built-in bots) are names, not paths; a
        path that does not exist, or whose absolute form holds ``,`` or ``=`` in an mcts option, stays as
        written. Unlike the rest of this module it asks the disk."""
        if self.kind == "mcts":
            options = []
            for item in self.options:
                key, sep, value = item.partition("=")
                if sep and key.strip() in NESTED_OPTIONS:
                    nested = BotSpec.parse(value.strip()).anchored(builtins).format()
                    if "," not in nested and "=" not in nested:
                        item = f"{key.strip()}={nested}"
                options.append(item)
            if tuple(options) == self.options:
                return self
            anchored = BotSpec("mcts", options=tuple(options))
        elif self.kind in ("onnx", "name") and not self._names_no_file(builtins, ()) and os.path.exists(self.name):
            anchored = replace(self, name=os.path.abspath(self.name), text="")
        else:
            return self
        return replace(anchored, text=anchored.format())

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
        with NAME in ``zoo``, or ``zoo:`` for the game played when ``""`` is in ``zoo``), a level
        (``level:N``: the project's own ladder of built-in, bundled and search bots; tests/test_levels.py
        checks each rung passes this test) and an mcts spec whose nested specs pass the same test. What
        ``tavernzoo web`` refuses without ``--allow-local``.

        Decided from the text alone: the disk is never asked whether a path exists, so a server's answer
        to a request cannot tell anyone which of its files exist."""
        return any(not part._names_no_file(builtins, zoo) for part in self.within())

    def _names_no_file(self, builtins: Collection[str], zoo: Collection[str]) -> bool:
        if self.kind == "mcts":
            return True  # its nested specs are judged on their own by local()
        if self.kind == "zoo":
            return self.name in zoo and self.mode in (None, "sample")
        if self.kind == "level":
            return True
        return self.kind == "name" and self.mode is None and (self.name in builtins or self.name == "none")
