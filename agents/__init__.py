"""Bots: the ``Bot`` protocol, the built-in bots and the one loader of bot specs.

A bot acts on the env's observation dict (``{"observation", "action_mask"}``) and returns an action
index; ``reset()`` is called before each game. The built-in bots subclass :class:`~.base.BotBase`, which
has a default for every other hook hosts call (``begin_game``, ``observe_view``,
``observe_information_state``, ``game_over``, ``close``: the table in agents/base.py); hosts drive any
other object through :func:`~.base.as_bot`. Every command that takes bots takes the same spec
strings, resolved by :func:`load_bot`:

* ``random`` — uniform over the legal actions (every game);
* any built-in bot a game provides — ``heuristic`` for every game, and whatever else its module in
  ``tavernzoo.agents`` lists in ``BOTS`` (a module named after the game: ``agents/tiny_minotaur.py``);
  ``careless`` for every game with a heuristic: the heuristic, but a random legal move half of the time;
* ``level:1`` .. ``level:5`` — the game's ladder of named levels, a beginner to the strongest bot the project
  has (:mod:`.levels`: each level is one of the other specs, declared per game in ``LEVELS``);
* a path to a training checkpoint or a training run directory (its latest checkpoint): the trained
  policy, loaded with numpy alone (:mod:`.policy`); ``PATH@sample`` samples instead of taking the best
  legal action;
* ``BOT.onnx`` — an exported bot (ONNX + JSON manifest, :mod:`.onnx_bot`); ``zoo:GAME`` — the bundled
  pretrained bot of a game;
* ``cmd:PROGRAM ARGS`` — an external program speaking the bot protocol (docs/bot-protocol.md,
  :mod:`.external`); ``sandbox:cmd:...`` or ``sandbox[LIMITS]:cmd:...`` — the same program confined
  (memory, processes, CPU, open files, no network, almost no files; :mod:`.sandbox`, docs/sandbox.md);
* ``mcts`` or ``mcts:OPTIONS`` — information-set Monte Carlo tree search on the rules engine
  (``mcts:400,time=0.5,rollout=heuristic,depth=40``; :mod:`.mcts`, docs/search.md);
* ``llm:MODEL@URL[,options]`` — a language model behind an OpenAI-compatible chat-completions server
  (:mod:`.llm`, docs/llm.md).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..envs import Game, get_game
from ..envs.shipped import local_path
from .base import BotBase, as_bot
from .random_bot import RandomBot
from .spec import BotSpec


@runtime_checkable
class Bot(Protocol):
    """The least a bot has: ``act(observation) -> int`` and ``reset()`` per game (hosts call the other
    hooks through :func:`~.base.as_bot`; :class:`~.base.BotBase` has them all)."""

    name: str

    def reset(self) -> None: ...

    def act(self, observation: dict[str, Any]) -> int: ...


def builtin_bots(game: Game | str) -> dict[str, Any]:
    """The built-in bot factories of a game, by name: ``factory(config, seed) -> Bot``."""
    game = get_game(game) if isinstance(game, str) else game
    bots: dict[str, Any] = {"random": RandomBot}
    try:
        module = importlib.import_module(f"{__name__}.{game.name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{game.name}":
            raise
        return bots
    bots.update(module.BOTS)
    if "heuristic" in module.BOTS:
        from .levels import careless

        bots["careless"] = careless(module.BOTS["heuristic"])
    return bots


def load_bot(spec: str | BotSpec, game: Game | str, config: Any = None, seed: int | None = None) -> Bot:
    """The bot named by ``spec`` (a string, or a :class:`~.spec.BotSpec` parsed from one) for ``game``
    (with its ``config``), seeded with ``seed``: by the loader its kind registers (agents/spec.py ``KINDS``)."""
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    spec = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    return globals()[spec.traits.loader](spec, game, config, seed)


# --- the loaders the kinds register (agents/spec.py KINDS): loader(spec, game, config, seed) -------------------


def load_mcts(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    from .mcts import make_mcts_bot

    return make_mcts_bot(spec, game, config, seed, _load_nested)


def load_program(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    from .external import ExternalBot
    from .sandbox import Limits

    if spec.sandbox is None:
        return ExternalBot(config, seed, spec.name, game)
    if not spec.name:
        raise ValueError(f"bot spec {str(spec)!r}: a sandbox runs programs only; write sandbox:cmd:PROGRAM ARGS "
                         "or sandbox[memory=256,processes=32,cpu=30,files=64]:cmd:PROGRAM ARGS")
    return ExternalBot(config, seed, spec.name, game, sandbox=Limits.parse(spec.sandbox))


def load_llm(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    from .llm import make_llm_bot  # a language model (agents/llm.py parses the rest of the spec)

    return make_llm_bot(spec.format(), game, config, seed, load_bot)


def load_zoo(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    from .onnx_bot import load_zoo_bot

    mode = "" if spec.mode is None else "@" + spec.mode
    return load_zoo_bot(spec.zoo_name(game.name) + mode, game, config, seed)


def load_onnx(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    from .onnx_bot import OnnxBot

    return OnnxBot(config, seed, local_path(spec.name), game)


def load_level(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    """``level:N``: the bot the game's ladder names (agents/levels.py)."""
    from .levels import level_spec

    return load_bot(level_spec(spec, game), game, config, seed)


def load_named(spec: BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    """A game's built-in bot, else a training run or checkpoint path."""
    bots = builtin_bots(game)
    if spec.mode is None and spec.name in bots:
        return bots[spec.name](config, seed)
    mode = spec.mode or ""
    path = local_path(spec.name)  # a copy shipped from a Ray driver (envs/shipped.py), or the path itself
    if Path(path).exists():
        from .policy import PolicyBot

        if mode not in ("", "sample"):
            raise ValueError(f"bot spec {str(spec)!r}: after '@' only 'sample' is valid")
        return PolicyBot(config, seed, path, game, deterministic=mode != "sample")
    raise ValueError(
        f"unknown bot spec {str(spec)!r} for {game.name}; valid: {', '.join(bots)}, level:1..5, a training run or "
        "checkpoint path, BOT.onnx, zoo:GAME, cmd:PROGRAM, mcts[:OPTIONS] or llm:MODEL@URL"
    )


def _load_nested(spec: str | BotSpec, game: Game, config: Any, seed: int | None) -> Bot:
    """A bot spec nested in an mcts spec (``rollout=``, ``prior=``, ...): a level stands for its bot here too, and
    one that stands for a search is refused as a search written out would be (every simulation would search)."""
    spec = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    if spec.kind == "level":
        from .levels import level_spec

        meant = level_spec(spec, game)
        if meant.kind == "mcts":
            raise ValueError(f"{str(spec)!r} in {game.name} is a search ({meant}); an mcts policy cannot itself be "
                             "mcts: name a lower level or a bot")
        spec = meant
    return load_bot(spec, game, config, seed)


__all__ = ["Bot", "BotBase", "BotSpec", "RandomBot", "as_bot", "builtin_bots", "load_bot"]
