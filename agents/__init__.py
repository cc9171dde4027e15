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
    return bots


def load_bot(spec: str | BotSpec, game: Game | str, config: Any = None, seed: int | None = None) -> Bot:
    """The bot named by ``spec`` (a string, or a :class:`~.spec.BotSpec` parsed from one) for ``game``
    (with its ``config``), seeded with ``seed``."""
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    bots = builtin_bots(game)
    spec = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    if spec.kind == "name" and spec.mode is None and spec.name in bots:
        return bots[spec.name](config, seed)
    if spec.kind == "mcts":
        from .mcts import make_mcts_bot

        return make_mcts_bot(spec, game, config, seed, load_bot)
    if spec.kind == "cmd":
        from .external import ExternalBot
        from .sandbox import Limits

        if spec.sandbox is None:
            return ExternalBot(config, seed, spec.name, game)
        if not spec.name:
            raise ValueError(f"bot spec {str(spec)!r}: a sandbox runs programs only; write sandbox:cmd:PROGRAM ARGS "
                             "or sandbox[memory=256,processes=32,cpu=30,files=64]:cmd:PROGRAM ARGS")
        return ExternalBot(config, seed, spec.name, game, sandbox=Limits.parse(spec.sandbox))
    if spec.kind == "llm":  # a language model (agents/llm.py parses the rest of the spec)
        from .llm import make_llm_bot

        return make_llm_bot(spec.format(), game, config, seed, load_bot)
    if spec.kind == "zoo":
        from .onnx_bot import load_zoo_bot

        return load_zoo_bot(spec.format()[len("zoo:"):] or game.name, game, config, seed)
    if spec.kind == "onnx":
        from .onnx_bot import OnnxBot

        return OnnxBot(config, seed, local_path(spec.name), game)
    mode = spec.mode or ""
    path = local_path(spec.name)  # a copy shipped from a Ray driver (envs/shipped.py), or the path itself
    if Path(path).exists():
        from .policy import PolicyBot

        if mode not in ("", "sample"):
            raise ValueError(f"bot spec {str(spec)!r}: after '@' only 'sample' is valid")
        return PolicyBot(config, seed, path, game, deterministic=mode != "sample")
    raise ValueError(
        f"unknown bot spec {str(spec)!r} for {game.name}; valid: {', '.join(bots)}, a training run or checkpoint "
        "path, BOT.onnx, zoo:GAME, cmd:PROGRAM, mcts[:OPTIONS] or llm:MODEL@URL"
    )


__all__ = ["Bot", "BotBase", "BotSpec", "RandomBot", "as_bot", "builtin_bots", "load_bot"]
