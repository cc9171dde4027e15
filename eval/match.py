"""The one match loop: bots play a game through its PettingZoo env, deals replayed with seats rotated.

A *deal* is one seed. Every deal is played once per seat rotation (two games for a duel, the seats
swapped; n games for n seats), so each bot meets the same dice from every seat and luck largely cancels.
Scores are win shares (a win 1, a shared top place 1/k, otherwise 0) and their interval is computed over
deals, the independent unit.
"""

from __future__ import annotations

import importlib
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import Bot, load_bot
from ..agents.infoset import feed
from ..envs import Game, get_game
from .stats import mean_interval


def make_env(game: Game, config: Any = None, render_mode: str | None = None, *, raw: bool = False):
    """The wrapped PettingZoo AEC env of ``game`` (an illegal move loses and ends the game); with ``raw``,
    the same env without PettingZoo's wrappers (an illegal move raises), for a caller that checks every
    action itself, as the tournament's :class:`~tavernzoo.eval.runner.Guard` does."""
    module = importlib.import_module(f"tavernzoo.envs.{game.env_name}")
    make = module.raw_env if raw else module.env
    return make(render_mode=render_mode, **_config_kwargs(game, config))


def _config_kwargs(game: Game, config: Any) -> dict[str, Any]:
    from ..envs.core import config_to_dict

    return config_to_dict(game.make_config(config))


def play_game(env: Any, bots: Sequence[Bot], seed: int, seat_names: Sequence[str] | None = None):
    """Play one game: ``bots[seat]`` plays seat ``seat``. Returns ``(returns, record)``.

    ``returns`` are each seat's summed rewards; ``record`` is the replayable game record.
    """
    env.reset(seed=seed)
    for seat, bot in enumerate(bots):
        # Bots that care which seat they hold (external programs) are told; the rest just reset.
        begin = getattr(bot, "begin_game", None)
        if begin is not None:
            begin(seat)
        else:
            bot.reset()
    seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
    totals = [0.0] * len(bots)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        seat = seat_of[agent]
        totals[seat] += reward
        if termination or truncation:
            env.step(None)
            continue
        feed(bots[seat], env, agent)  # search bots get their seat's information state (agents/infoset.py)
        env.step(bots[seat].act(observation))
    record = env.unwrapped.record(seats=list(seat_names) if seat_names else None)
    return totals, record


def score_of(returns: Sequence[float], seat: int) -> float:
    """Win share of ``seat``: 1 for the sole best return, 1/k for a top shared by k seats, else 0."""
    top = max(returns)
    if returns[seat] != top:
        return 0.0
    return 1.0 / sum(1 for value in returns if value == top)


@dataclass
class BotRow:
    """One entry of the match (an entry is a bot spec at a position in ``bot_specs``)."""

    bot: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    total_return: float = 0.0
    score: float = 0.0
    score_ci: tuple[float, float] = (0.0, 1.0)
    per_deal_scores: list[float] = field(default_factory=list, repr=False)

    @property
    def mean_return(self) -> float:
        return self.total_return / self.games if self.games else math.nan


@dataclass
class MatchResult:
    game: str
    deals: int
    games: int
    seats: int
    seed: int
    rows: list[BotRow]


def entry_labels(bot_specs: Sequence[str]) -> list[str]:
    """Display names: a spec entered more than once is numbered (``random #2``)."""
    labels = []
    for i, spec in enumerate(bot_specs):
        if bot_specs.count(spec) > 1:
            labels.append(f"{spec} #{bot_specs[: i + 1].count(spec)}")
        else:
            labels.append(spec)
    return labels


def play_match(
    game: Game | str,
    bot_specs: Sequence[str],
    games: int,
    seed: int = 0,
    config: Any = None,
    progress: bool = False,
    records_path: str | Path | None = None,
) -> MatchResult:
    """Play at least ``games`` games (whole deals: ``ceil(games / seats)`` deals x ``seats`` rotations).

    ``bot_specs`` holds one spec per seat. Each finished game's record is appended to ``records_path``
    (JSON lines) the moment it ends.
    """
    game = get_game(game) if isinstance(game, str) else game
    config = game.make_config(config)
    seats = game.rules.num_seats(config)
    if len(bot_specs) != seats:
        raise ValueError(f"{game.name} with this config seats {seats} players; got {len(bot_specs)} bot specs")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    deals = math.ceil(games / seats)
    seeds = random.Random(seed)
    bots = [load_bot(spec, game, config, seed=seeds.randrange(2**63)) for spec in bot_specs]
    labels = entry_labels(list(bot_specs))
    rows = [BotRow(label) for label in labels]
    env = make_env(game, config)
    records_file = open(records_path, "a") if records_path else None  # noqa: SIM115 - closed below
    bar = _progress(progress, deals * seats, f"{game.name}: {' vs '.join(labels)}")
    try:
        for _ in range(deals):
            deal_seed = seeds.randrange(2**63)
            deal_scores = [0.0] * seats
            for rotation in range(seats):
                # Entry i sits at seat (i + rotation) % seats.
                seating = [(seat - rotation) % seats for seat in range(seats)]
                returns, record = play_game(
                    env, [bots[entry] for entry in seating], deal_seed, [labels[entry] for entry in seating]
                )
                if records_file is not None:
                    records_file.write(json.dumps(record) + "\n")
                    records_file.flush()
                for seat, entry in enumerate(seating):
                    row = rows[entry]
                    share = score_of(returns, seat)
                    row.games += 1
                    row.total_return += returns[seat]
                    row.wins += share == 1.0
                    row.draws += 0.0 < share < 1.0
                    row.losses += share == 0.0
                    deal_scores[entry] += share / seats
                if bar is not None:
                    bar.update(1)
            for entry, row in enumerate(rows):
                row.per_deal_scores.append(deal_scores[entry])
    finally:
        if bar is not None:
            bar.close()
        if records_file is not None:
            records_file.close()
    for row in rows:
        mean, low, high = mean_interval(row.per_deal_scores)
        row.score = mean
        row.score_ci = (max(0.0, low), min(1.0, high))
    return MatchResult(game.name, deals, deals * seats, seats, seed, rows)


def _progress(enabled: bool, total: int, description: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    # disable=None: no bar when stderr is not a terminal (a log file would get one line per update).
    return tqdm(total=total, desc=description, unit="game", dynamic_ncols=True, disable=None)
