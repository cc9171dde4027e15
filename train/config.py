"""Training hyperparameters: one dataclass, per-game defaults, overridable from TOML and the command line."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..eval.deals import SEEDINGS

OPPONENT_DRAWS = ("seat", "table")
"""``TrainConfig.opponent_draw``'s values."""


@dataclass
class TrainConfig:
    """Everything a training run needs; ``tavernzoo train --help`` and docs/training.md list the fields."""

    game: str = "tiny_minotaur"
    """Game to train on (a name from ``tavernzoo games``)."""
    game_config: dict[str, Any] = field(default_factory=dict)
    """Game options (as ``tavernzoo games`` lists them); the learned policy is only valid for these."""
    timesteps: int = 600_000
    """Learner decisions to train for (SB3 ``total_timesteps``)."""
    seed: int = 0
    """Seeds the games, the league's sampling, torch and the evaluation: same seed, same run."""
    n_envs: int = 64
    """Games stepped together in one process; the learner and the policy opponents each act in one batched
    forward pass per step, so more games mean fewer, wider passes (docs/performance.md)."""
    n_steps: int = 32
    """Rollout length per env before each PPO update (rollout = n_envs * n_steps decisions: 2,048 by
    default, as 16 x 128 before; shorter per-env rollouts, same update)."""
    batch_size: int = 512
    """PPO minibatch size."""
    n_epochs: int = 4
    """PPO epochs per update."""
    learning_rate: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.995
    """Discount: rewards come only at the end of a game, so close to 1."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    ent_coef: float = 0.01
    """Entropy bonus: keeps the policy exploring while the league moves."""
    clip_range: float = 0.2
    """PPO clip range."""
    shaping: float = 0.0
    """Weight of potential-based reward shaping from the game's ``rules.potential(state, seat)`` (if it has
    one): adds ``shaping * (gamma * phi(s') - phi(s))`` per decision, which keeps the optimal policy and
    gives earlier credit. 0 turns it off; reported win rates always use the unshaped result."""
    net_arch: tuple[int, ...] = (128, 128)
    """Hidden layers of the actor and of the critic (tanh)."""
    snapshot_every: int = 50_000
    """Freeze a copy of the learner into the opponent pool every this many timesteps."""
    snapshot_window: int = 5
    """Keep the last W snapshots in the pool (the built-in bots always stay)."""
    latest_share: float = 0.8
    """Share of opponent seats played by the current learner itself; the rest come from the pool."""
    pool_bots: tuple[str, ...] = ("random", "heuristic")
    """Built-in bots in the opponent pool (bot specs)."""
    pfsp: bool = False
    """Prioritised fictitious self-play: draw pool opponents weighted by (1 - learner's win rate)^2."""
    opponent_draw: str = "seat"
    """How a game's opponents are drawn from the league: ``seat``, each opponent seat on its own (a table of
    four mixes members); ``table``, one draw for every opponent seat of the game, so the learner plays the
    tables bots are measured at (three heuristics, three of a file, three of its latest self)."""
    checkpoint_every: int = 100_000
    """Save model, league and metrics every this many timesteps (and at the end)."""
    eval_games: int = 1000
    """Seeded games, seats rotated, in the final report against each reference bot."""
    eval_backend: str = "local"
    """Where the final report's games run: ``local`` (this process, in lockstep) or ``ray`` (Ray tasks of
    64 games each, joining ``$RAY_ADDRESS`` when it is set); the report is the same either way."""
    eval_seeding: str = "v2"
    """The seed scheme of the final report's games (docs/tournaments.md, "Deals and seeds"): ``v2``, every host's;
    ``v1`` deprecated, for the reports published before 2026-12-05."""
    torch_threads: int = 1
    """Torch threads for the PPO update (small MLPs: 1 is fastest on 2 cores)."""
    privileged_critic: bool = False
    """The critic also reads every other seat's observation (their hidden hands) while training; the policy
    reads only its own seat's view, and the saved bot keeps only the policy, so it needs nothing hidden."""
    env_backend: str = "python"
    """Where the training games run: ``python`` (the PettingZoo envs, any game and pool bot) or ``kernel``
    (MiniSteel or Wyvern on its compiled kernel: the pool bots random and heuristic inside it, network
    opponents batched; needs numba; train/kernel_env.py)."""
    init: str = ""
    """A trained bot to start from (a checkpoint or run, BOT.onnx, zoo:GAME): its actor, and its critic where it
    has a value head; a wider net_arch grows it without changing its play (train/warm_start.py). Empty: fresh."""

    def __post_init__(self) -> None:
        if isinstance(self.net_arch, list):
            self.net_arch = tuple(self.net_arch)
        if isinstance(self.pool_bots, list):
            self.pool_bots = tuple(self.pool_bots)
        for item in dataclasses.fields(self):
            _check_type(item.name, getattr(self, item.name), str(item.type))
        positive = ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "snapshot_every",
                    "checkpoint_every", "snapshot_window", "torch_threads")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        if self.eval_games < 0:
            raise ValueError(f"eval_games={self.eval_games} must be 0 (no final report) or more")
        if self.opponent_draw not in OPPONENT_DRAWS:
            raise ValueError(f"opponent_draw={self.opponent_draw!r} is not a way to draw opponents; valid: "
                             f"{', '.join(OPPONENT_DRAWS)}")
        if self.env_backend not in ("python", "kernel"):
            raise ValueError(f"env_backend={self.env_backend!r} is not a backend; valid: python, kernel")
        if self.eval_backend not in ("local", "ray"):
            raise ValueError(f"eval_backend={self.eval_backend!r} is not a backend; valid: local, ray")
        if self.eval_seeding not in SEEDINGS:
            raise ValueError(f"eval_seeding={self.eval_seeding!r} is not a seed scheme; valid: {', '.join(SEEDINGS)} "
                             "(v1 deprecated)")
        for name in ("learning_rate", "clip_range"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}={getattr(self, name)!r} must be above 0")
        if self.ent_coef < 0:
            raise ValueError(f"ent_coef={self.ent_coef!r} must be 0 or more")
        for name in ("latest_share", "gamma", "gae_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name}={getattr(self, name)!r} must lie between 0 and 1")
        if not self.net_arch or any(width < 1 for width in self.net_arch):
            raise ValueError(f"net_arch={self.net_arch!r} needs at least one positive layer width")

    def to_dict(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def _check_type(name: str, value: Any, kind: str) -> None:
    """Refuse (ValueError) a value of the wrong type for a field annotated ``kind``; an int is a float."""
    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    def whole(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    checks = {
        "float": (number, "a finite number"),
        "int": (whole, "a whole number"),
        "bool": (lambda v: isinstance(v, bool), "true or false"),
        "str": (lambda v: isinstance(v, str), "a string"),
        "tuple[int, ...]": (lambda v: isinstance(v, tuple) and all(map(whole, v)), "a list of whole numbers"),
        "tuple[str, ...]": (lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v),
                            "a list of strings (comma-separated on the command line)"),
        "dict[str, Any]": (lambda v: isinstance(v, dict), 'a table of options (JSON: {"num_players": 4})'),
    }
    if kind in checks and not checks[kind][0](value):
        raise ValueError(f"training option {name}={value!r} is not valid: it must be {checks[kind][1]}")


RECIPES = Path(__file__).parent / "recipes"
"""Each game's default run, ``recipes/<game>.toml`` (a ``[train]`` table in a --config file's shape): a game
without one trains with the general defaults. Each fits the default run in about ten minutes on 2 cores."""


def game_defaults(game: str) -> dict[str, Any]:
    """The training options of ``game``'s default run (:data:`RECIPES`; empty where it has none)."""
    path = RECIPES / f"{game}.toml"
    return _training_table(path, f"recipe {path.name}") if path.is_file() else {}


def _training_table(path: Path, where: str) -> dict[str, Any]:
    """The ``[train]`` table of a TOML file (or its top level where it has no such table)."""
    try:
        loaded = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{where} is not a TOML file: {error}") from None
    table = loaded.get("train", loaded)
    if not isinstance(table, dict):
        raise ValueError(f"{where}: [train] must be a table of training options, not {table!r}")
    return table


def field_docs() -> dict[str, str]:
    """The one-line docstring of every field, read from this module's source (for --help and the docs)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(TrainConfig))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, following in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr):
            docs[node.target.id] = following.value.value  # type: ignore[attr-defined, union-attr]
    return docs


def _game_option_hint(game: str, unknown: list[str]) -> str:
    """Where an unknown training option is one of the game's own, how to give it (a common slip:
    ``--set num_players=3`` where ``--set game_config={"num_players": 3}`` is meant)."""
    from ..envs.registry import games

    known_game = games().get(game)
    if known_game is None:
        return ""
    game_options = {f.name for f in dataclasses.fields(known_game.rules.Config)}
    named = [name for name in unknown if name in game_options]
    if not named:
        return ""
    example = ", ".join(f'"{name}": ...' for name in named)
    return f" ({', '.join(named)} {'is a game option' if len(named) == 1 else 'are game options'} of {game}: " \
           f"--set game_config={{{example}}})"


def make_train_config(game: str, file: str | Path | None = None, overrides: dict[str, Any] | None = None,
                      **explicit: Any) -> TrainConfig:
    """Defaults for ``game``, then a TOML file, then ``overrides`` (``--set``), then explicit arguments."""
    values: dict[str, Any] = {"game": game, **game_defaults(game)}
    if file is not None:
        values.update(_training_table(Path(file), f"--config {file}"))
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    for source, given in ((f"--config {file}: " if file is not None else f"recipe {game}.toml: ", values),
                          ("", overrides or {})):
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValueError(f"{source}unknown training option(s) {', '.join(map(str, unknown))}; valid: "
                             f"{', '.join(sorted(known))}{_game_option_hint(game, unknown)}")
    values.update(overrides or {})
    values.update({k: v for k, v in explicit.items() if v is not None})
    return TrainConfig(**values)
