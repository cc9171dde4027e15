"""Bots: the ``Bot`` protocol, the built-in bots and the one loader of bot specs.

A bot acts on the env's observation dict (``{"observation", "action_mask"}``) and returns an action
index; ``reset()`` is called before each game. Every command that takes bots takes the same spec
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
  :mod:`.external`);
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
from .random_bot import RandomBot


@runtime_checkable
class Bot(Protocol):
    """Something that picks legal actions: ``act(observation) -> int`` and ``reset()`` per game."""

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


def load_bot(spec: str, game: Game | str, config: Any = None, seed: int | None = None) -> Bot:
    """The bot named by ``spec`` for ``game`` (with its ``config``), seeded with ``seed``."""
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    bots = builtin_bots(game)
    if spec in bots:
        return bots[spec](config, seed)
    if spec == "mcts" or spec.startswith("mcts:"):
        from .mcts import make_mcts_bot

        return make_mcts_bot(spec, game, config, seed)
    if spec.startswith("cmd:"):
        from .external import ExternalBot

        return ExternalBot(config, seed, spec[len("cmd:"):], game)
    if spec.startswith("llm:"):  # a language model (agents/llm.py; its parse_llm_spec parses the spec)
        from .llm import make_llm_bot

        return make_llm_bot(spec, game, config, seed)
    if spec.startswith("zoo:"):
        from .onnx_bot import load_zoo_bot

        return load_zoo_bot(spec[len("zoo:"):] or game.name, game, config, seed)
    if spec.endswith(".onnx"):
        from .onnx_bot import OnnxBot

        return OnnxBot(config, seed, spec, game)
    path, _, mode = spec.partition("@")
    if Path(path).exists():
        from .policy import PolicyBot

        if mode not in ("", "sample"):
            raise ValueError(f"bot spec {spec!r}: after '@' only 'sample' is valid")
        return PolicyBot(config, seed, path, game, deterministic=mode != "sample")
    raise ValueError(
        f"unknown bot spec {spec!r} for {game.name}; valid: {', '.join(bots)}, a training run or checkpoint "
        "path, BOT.onnx, zoo:GAME, cmd:PROGRAM, mcts[:OPTIONS] or llm:MODEL@URL"
    )


__all__ = ["Bot", "RandomBot", "builtin_bots", "load_bot"]
