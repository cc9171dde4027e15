"""The game contract every tavernzoo game implements, and the pieces all games share.

A game is two pure modules and one declaration:

* ``rules.py`` — the rulebook as code: a validated ``Config`` dataclass, a ``State`` dataclass and the
  functions ``new_game(config, chance)``, ``current_seat(state)``, ``legal_actions(state)``,
  ``apply(state, action)``, ``is_terminal(state)``, ``is_truncated(state)`` and ``returns(state)``.
  It imports nothing from gymnasium, pettingzoo, torch or stable-baselines3.
* ``encode.py`` — what a seat may see: ``action_names(config)``, ``observation_size(config)``,
  ``encode(state, seat, out)`` (a flat, egocentric float32 vector documented as an index table),
  ``view(state, seat)`` (the same information as a JSON-serialisable dict) and ``render(state)``.
* a :class:`Game` instance that binds both under a name and a version; the PettingZoo adapter in
  :mod:`tavernzoo.envs.aec`, the match loop, records, bots and the command line all work from it.

Randomness: every chance outcome a game needs is drawn from the :class:`Chance` object stored in its
state. ``Chance`` logs each outcome, so a game record holds every die roll and shuffle, and a
record replays by feeding the logged outcomes back (:meth:`Chance.scripted`) rather than by trusting a
particular generator's stream. Tests script the dice the same way to play the rulebooks' examples.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
import random
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state; the message names it and the legal ones."""

    def __init__(self, action: Any, legal_names: Sequence[str], reason: str = ""):
        self.action = action
        self.legal_names = tuple(legal_names)
        detail = f" ({reason})" if reason else ""
        super().__init__(f"illegal action {action!r}{detail}; legal now: {', '.join(self.legal_names) or 'none'}")


class ReplayError(ValueError):
    """A record that does not replay: its chance outcomes or results disagree with the rules."""


class Chance:
    """The single source of randomness of one game: draws uniform integers and logs every outcome.

    ``below(n)`` is the primitive (uniform on ``0..n-1``); dice, shuffles and choices are built on it
    so that the log (``outcomes``, a list of ``(n, value)`` pairs) captures everything. A scripted
    ``Chance`` returns the given outcomes in order and checks that each is asked for with the same
    ``n``: that is how records replay and how tests set the dice.
    """

    __slots__ = ("outcomes", "_random", "_script", "_cursor")

    def __init__(self, seed: int | None = None):
        self.outcomes: list[tuple[int, int]] = []
        self._random = random.Random(seed)
        self._script: list[tuple[int, int]] | None = None
        self._cursor = 0

    @classmethod
    def scripted(cls, outcomes: Sequence[Sequence[int]]) -> Chance:
        """A Chance that replays ``outcomes`` (``(n, value)`` pairs) and fails loudly when they run out."""
        chance = cls(0)
        script = []
        for entry in outcomes:
            n, value = int(entry[0]), int(entry[1])
            if not 0 <= value < n:
                raise ReplayError(f"chance outcome {value} is outside 0..{n - 1}")
            script.append((n, value))
        chance._script = script
        return chance

    @classmethod
    def dice(cls, *rolls: tuple[int, int]) -> Chance:
        """A scripted Chance from die faces: ``Chance.dice((20, 5), (20, 9))`` rolls a 5 then a 9 on d20s."""
        return cls.scripted([(sides, face - 1) for sides, face in rolls])

    @property
    def exhausted(self) -> bool:
        """True when a scripted Chance has handed out every outcome it was given."""
        return self._script is not None and self._cursor == len(self._script)

    def below(self, n: int) -> int:
        """A uniform integer in ``0..n-1``."""
        script = self._script
        if script is None:
            value = int(self._random.random() * n)
        else:
            if self._cursor >= len(script):
                raise ReplayError(f"the game asked for a chance outcome out of {n} after the record's last one")
            expected_n, value = script[self._cursor]
            if expected_n != n:
                raise ReplayError(
                    f"chance outcome #{self._cursor} was recorded out of {expected_n}, the game asked out of {n}"
                )
            self._cursor += 1
        self.outcomes.append((n, value))
        return value

    def roll(self, sides: int) -> int:
        """One die with faces ``1..sides``."""
        return self.below(sides) + 1

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def shuffle(self, items: list[Any]) -> None:
        """Fisher-Yates in place, one logged draw per position."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def shuffle_deal(self, items: list[Any]) -> None:
        """Shuffle the unseen cards of a determinization's deal (``rules.determinize``): :meth:`shuffle` here.
        A search's dealer, whose deals nobody replays (agents/mcts.py, ``SearchChance``), may draw the
        order another way, always uniformly over the orders, so the deals keep their distribution."""
        self.shuffle(items)

    def sample_chance(self) -> Chance:
        """The Chance of a determinized sample this Chance dealt (``rules.determinize``): a fresh one of its
        class seeded from it, as :func:`redealt` gives. A search's dealer may hand over itself instead
        (agents/mcts.py, ``SearchChance``): the samples' dice then continue its one stream."""
        return self.__class__(self.below(2**31))


class Rules(Protocol):
    """The functions a game's ``rules`` module provides (see the module docstring)."""

    Config: type
    MIN_PLAYERS: int
    MAX_PLAYERS: int

    def new_game(self, config: Any, chance: Chance) -> Any: ...
    def num_seats(self, config: Any) -> int: ...
    def current_seat(self, state: Any) -> int: ...
    def legal_actions(self, state: Any) -> list[int]: ...
    def apply(self, state: Any, action: int) -> None: ...
    def is_terminal(self, state: Any) -> bool: ...
    def is_truncated(self, state: Any) -> bool: ...
    def returns(self, state: Any) -> tuple[float, ...]: ...
    def max_game_length(self, config: Any) -> int: ...


class Encoder(Protocol):
    """The functions a game's ``encode`` module provides (see the module docstring)."""

    def action_names(self, config: Any) -> tuple[str, ...]: ...
    def observation_size(self, config: Any) -> int: ...
    def encode(self, state: Any, seat: int, out: Any) -> None: ...
    def view(self, state: Any, seat: int) -> dict[str, Any]: ...
    def render(self, state: Any) -> str: ...


@dataclass(frozen=True)
class Game:
    """One game as the rest of tavernzoo sees it: rules, encoder, name and version.

    ``env_name`` (``tiny_minotaur_v1``) is what PettingZoo, records and exported bots call it; the
    version changes whenever observations, actions or rules change in a way that breaks old bots.
    """

    name: str
    version: int
    title: str
    rules: Rules | types.ModuleType
    encoder: Encoder | types.ModuleType
    simultaneous: bool = False

    @property
    def env_name(self) -> str:
        return f"{self.name}_v{self.version}"

    def make_observer(self) -> Any:
        """What fills observations for one consumer (an env, a search): an object with ``encode(state,
        seat, out)``. An encoder that keeps something between calls (a per-round vector, blocks already
        written) defines ``Observer``, and each consumer gets its own; otherwise the encoder itself."""
        observer = getattr(self.encoder, "Observer", None)
        return observer() if observer is not None else self.encoder

    @property
    def public(self) -> bool:
        """Every seat may see the whole state (the rules declare no ``HIDDEN_FIELDS``; the leak tests
        check the classification): the game's full rendering leaks nothing, so terminal play and the web
        page may show it to anyone."""
        return not getattr(self.rules, "HIDDEN_FIELDS", frozenset())

    # Modules do not pickle: a Game travels as the names of its rules and encoder modules and is rebuilt
    # from them, so that envs, states and bots holding one pickle (process pools, Ray workers) and
    # deepcopy (tree search, snapshots). A Game is immutable, so a copy is the Game itself.
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _rebuild_game, (self.name, self.version, self.title, _module_by_name(self.rules),
                               _module_by_name(self.encoder), self.simultaneous)

    def __copy__(self) -> Game:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        return self

    def make_config(self, config: Any = None, /, **overrides: Any) -> Any:
        """A validated Config from a Config, a dict (as stored in records) and/or keyword overrides."""
        return make_config(self.rules.Config, config, **overrides)

    def action_names(self, config: Any) -> tuple[str, ...]:
        return self.encoder.action_names(config)

    def action_index(self, config: Any, name: str) -> int:
        names = self.action_names(config)
        try:
            return names.index(name)
        except ValueError:
            raise IllegalActionError(name, names, "no such action in this game") from None


def _module_by_name(part: Any) -> Any:
    return part.__name__ if isinstance(part, types.ModuleType) else part


def _rebuild_game(name: str, version: int, title: str, rules: Any, encoder: Any, simultaneous: bool) -> Game:
    """The inverse of :meth:`Game.__reduce__`: a module arrives as its import name."""
    def part(value: Any) -> Any:
        return importlib.import_module(value) if isinstance(value, str) else value

    game = Game(name, version, title, part(rules), part(encoder), simultaneous)
    # The registry's own instance where it is the same game: the GAME its package declares (what the
    # registry collects), found without importing the registry, which imports this module.
    package = game.rules.__name__.rpartition(".")[0]
    known = getattr(importlib.import_module(package), "GAME", None) if package else None
    return known if known == game else game


# --- configuration -----------------------------------------------------------------------------------


def option(default: Any, help: str, choices: Sequence[Any] | None = None,
           names: Callable[[], Iterable[str]] | None = None, **kwargs: Any) -> Any:
    """A Config field with the one-line help that ``tavernzoo games`` prints.

    ``names`` marks an option whose values may be file paths that making the Config reads (a ruleset,
    a deck): it returns the values that are names, not paths (bundled files, ``random``). Whatever
    serves requests from elsewhere asks :func:`file_options` which values would be read from its disk.
    """
    metadata: dict[str, Any] = {"help": help}
    if choices is not None:
        metadata["choices"] = tuple(choices)
    if names is not None:
        metadata["names"] = names
    if isinstance(default, list | dict | set):
        raise TypeError("mutable defaults are not allowed in a Config; use a tuple")
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def make_config(config_type: type, config: Any = None, /, **overrides: Any) -> Any:
    """Build a ``config_type`` from an instance, a mapping and keyword overrides, rejecting unknown keys."""
    if isinstance(config, config_type):
        values = dataclasses.asdict(config)
    elif config is None:
        values = {}
    elif isinstance(config, dict):
        values = dict(config)
    else:
        raise TypeError(f"a {config_type.__name__} must come from a dict or a {config_type.__name__}, not {config!r}")
    values.update(overrides)
    known = {f.name: f for f in dataclasses.fields(config_type)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(unknown)} for {config_type.__module__}; valid: {', '.join(known)}"
        )
    return config_type(**check_option_types(config_type, values))


# Bounds on any option read from outside: a game cut off after 10**18 turns never ends, and a
# per-seat list or a path has no business being longer than these.
OPTION_INT_LIMIT = 1_000_000
OPTION_TEXT_LIMIT = 1_000
OPTION_ITEMS_LIMIT = 100


def check_option_types(config_type: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` checked against the type hints of ``config_type``'s fields, for every game alike.

    An ``int`` option takes a Python or numpy integer (not a bool, not a float such as ``10.5`` or
    ``1e18``) within ``±OPTION_INT_LIMIT``; a ``float`` option a finite number; a ``bool`` option
    ``True`` or ``False`` only; a ``str`` option a string; a ``tuple`` option a list or tuple of items of
    its element type (JSON and the command line hand over lists). Returns the values with numpy
    integers made ints, ints made floats for float options and lists made tuples; raises ValueError
    naming the option, the value and what is valid. The game's own ``__post_init__`` then checks
    ranges and choices.
    """
    hints = typing.get_type_hints(config_type)
    return {key: _checked_option(key, value, hints.get(key)) for key, value in values.items()}


def plain_int(value: Any) -> int | None:
    """``value`` as an int if it is a Python or numpy integer (bools are not), else None."""
    if type(value) is int:  # the common case first: a step function calls this on every action
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def _checked_option(name: str, value: Any, hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        others = [arg for arg in args if arg is not type(None)]
        return _checked_option(name, value, others[0]) if len(others) == 1 else value
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {value!r}")
        return value
    if hint is int:
        number = plain_int(value)
        if number is None:
            raise ValueError(f"{name} must be an integer, got {value!r}")
        if abs(number) > OPTION_INT_LIMIT:
            raise ValueError(f"{name}={number} is out of range; no option goes beyond ±{OPTION_INT_LIMIT}")
        return number
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {value!r}")
        if len(value) > OPTION_TEXT_LIMIT:
            raise ValueError(f"{name} is {len(value)} characters long; at most {OPTION_TEXT_LIMIT}")
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ValueError(f"{name} must be a list, got {value!r}")
        if len(value) > OPTION_ITEMS_LIMIT:
            raise ValueError(f"{name} has {len(value)} entries; at most {OPTION_ITEMS_LIMIT}")
        # The length of a fixed-size tuple (one entry per seat) is the Config's to check, with its own message.
        uniform = (len(args) == 2 and args[1] is Ellipsis) or len(set(args)) == 1
        return tuple(
            _checked_option(f"{name}[{i}]", item, args[0] if uniform else (args[i] if i < len(args) else None))
            for i, item in enumerate(value)
        )
    return value


def file_options(config_type: type, values: Any) -> list[tuple[str, str, tuple[str, ...]]]:
    """The ``(option, value, names)`` of each value in ``values`` (a mapping of options, as from JSON) that making a
    ``config_type`` would read as file paths: a string of an option declared with ``option(names=...)``
    (or an entry of a per-seat list of them) that is not one of its names. Nothing is looked up on disk.
    Values of any other type are not paths: :func:`check_option_types` refuses them before any file is read.
    """
    if not isinstance(values, dict):
        return []
    found = []
    for field in dataclasses.fields(config_type):
        names = field.metadata.get("names")
        if names is None or field.name not in values:
            continue
        value, known = values[field.name], tuple(names())
        per_seat = isinstance(field.default, tuple) and isinstance(value, list | tuple)
        items = enumerate(value) if per_seat else [(None, value)]
        for index, item in items:
            if isinstance(item, str) and item not in known:
                found.append((field.name if index is None else f"{field.name}[{index}]", item, tuple(known)))
    return found


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-serialisable dict of a Config (tuples become lists)."""
    return {f.name: _jsonable(getattr(config, f.name)) for f in dataclasses.fields(config)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


def check_choice(name: str, value: Any, valid: Sequence[Any]) -> None:
    """Raise ValueError naming ``name``, the bad ``value`` and the valid choices."""
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of: {', '.join(map(str, valid))}")


def check_range(name: str, value: Any, low: int | float, high: int | float | None = None) -> None:
    """Raise ValueError unless ``low <= value <= high`` (``high`` None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name}={value!r} is out of range; it must be {bound}")


def describe_options(config_type: type) -> list[dict[str, Any]]:
    """The options of a Config as rows (name, default, help, choices) for ``tavernzoo games``."""
    rows = []
    for f in dataclasses.fields(config_type):
        rows.append(
            {
                "name": f.name,
                "default": _jsonable(f.default),
                "help": f.metadata.get("help", ""),
                "choices": list(f.metadata.get("choices", ())),
            }
        )
    return rows



# --- search support: copying states ------------------------------------------------------------------


def copy_chance(chance: Chance) -> Chance:
    """An independent copy of ``chance``: the same generator state, log and script position."""
    new = Chance.__new__(Chance)
    new.outcomes = list(chance.outcomes)
    new._random = random.Random()
    new._random.setstate(chance._random.getstate())
    new._script = None if chance._script is None else list(chance._script)
    new._cursor = chance._cursor
    return new


def _copy_value(value: Any) -> Any:
    kind = value.__class__
    if kind is list:
        if value and value[0].__class__ in (list, dict, set):
            return [_copy_value(item) for item in value]
        return value[:]
    if kind is int or kind is str or kind is bool or kind is float or value is None:
        return value
    if kind is tuple:
        # Tuples are shared unless they hold something mutable.
        if any(item.__class__ in (list, dict, set) for item in value):
            return tuple(_copy_value(item) for item in value)
        return value
    if kind is dict:
        return {key: _copy_value(item) for key, item in value.items()}
    if kind is set:
        return set(value)
    if kind is Chance:
        return copy_chance(value)
    if dataclasses.is_dataclass(value) and kind.__dataclass_params__.frozen:
        return value  # a Config
    import copy

    return copy.deepcopy(value)


def clone_state(state: Any, chance: Chance | None = None) -> Any:
    """A copy of a rules ``State`` dataclass that shares nothing mutable with it (the Chance included).

    Generic over the fields, so a field added to a State later is copied too: lists (nested ones
    element by element), dicts, sets and the Chance are copied; ints, strings, tuples of immutables and
    the frozen Config are shared. Given a ``chance``, the copy takes it instead of a copy of the state's
    (a determinization replaces the Chance anyway: copying its generator would be wasted).
    """
    kind = state.__class__
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    new = kind.__new__(kind)
    for name in names:
        value = getattr(state, name)
        setattr(new, name, chance if chance is not None and value.__class__ is Chance else _copy_value(value))
    return new


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def redealt(state: Any, seat: int, redeal: Any, chance: Chance | None, copy: Any = clone_state) -> Any:
    """A clone of ``state`` with what ``seat`` cannot see dealt afresh: ``redeal(new, seat, order)`` puts
    the unseen cards back through ``order``. With a ``chance`` that is its shuffle and the copy gets a fresh
    Chance of the same class seeded from it (a determinization); without, ``list.sort`` (the canonical deal of an
    information state) and a blank Chance. ``copy(state, chance)`` is the clone (a game may give its own,
    faster one: MiniSteel)."""
    if chance is None:
        new = copy(state, Chance(0))
        redeal(new, seat, list.sort)
    else:
        new = copy(state, state.chance)  # shared only until replaced below, after the shuffle
        redeal(new, seat, chance.shuffle)
        # Of the dealer's own kind: a search's SearchChance (agents/mcts.py) deals states whose Chance draws
        # the same values without logging them (nobody replays a determinization).
        new.chance = chance.__class__(chance.below(2**31))
    return new
