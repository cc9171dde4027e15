"""A trained policy's match against bots, many games in lockstep with one batched forward pass per step.

:func:`eval.match.play_match` plays one game at a time through the wrapped env, and a policy bot pays a
forward pass per decision; a training run's final report (``eval_games`` x 2 reference bots) spent up
to half of a short run there. :func:`play_policy_match` plays the same match — the same deals, each
played once per seat rotation, the same result table (:class:`~tavernzoo.eval.match.MatchResult`) — on
the raw env, with up to ``lanes`` games in flight: every step, all games whose player to move is the
policy are answered by one forward pass, and the bots' moves are played in between.
:func:`play_policy_matches` plays several line-ups (the report's "against random" and "against the
heuristic") in one lockstep, on one set of envs.

The deals, seatings and seeds are the match's (eval/deals.py ``DealPlan``, ``seeding`` as in ``play_match``),
returns are summed as its ``play_game`` sums them and the table is tallied in ``play_match``'s game order; the
policy plays its best legal action (as a checkpoint bot spec does in ``play_match``). Each lane plays a whole
deal, its rotations in order, so what depends on that order is kept:

* ``seeding="v2"`` (the one scheme, the default): each entry's bot is built for the deal and reseeded every
  game, as ``play_match`` and the tournament do: the table is ``play_match``'s exactly, random bots included
  (tests/test_train.py);
* ``seeding="v1"`` (deprecated, for the training reports published before 2026-12-05): ``play_match(...,
  seeding="v1")`` shares one bot per entry across a block of games, so a game's draws depend on every game
  before it, which cannot be replayed in lockstep; here every game gets its own bots, seeded from the entry's
  seed and the game's index (``DealPlan.lockstep_bot_seed``). Against deterministic bots (``heuristic``,
  ``oracle``, policies) the table is ``play_match``'s of ``v1`` exactly; against ``random`` it is a different,
  equally distributed sample.

Either way each game's result depends on the seed alone: not on the lanes, the order games finish or the
worker that plays it.

``backend`` names where the games run: ``"local"`` (this process) or ``"ray"``, which maps
:func:`play_games` over shards of ``lanes`` deals as Ray tasks (eval/backends.py). Each deal is
independent and keyed by its index, so the table is the same on either.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..agents import builtin_bots, load_bot
from ..agents.base import as_bot
from ..agents.infoset import feed
from ..envs import Game
from ..eval.backends import BACKENDS, map_tasks, progress_bar
from ..eval.deals import DEFAULT_SEEDING, Deal, DealPlan, check_seeding, entry_labels, results_stamp, seating
from ..eval.match import MatchResult
from ..eval.table import takes_game_seed, tell_game_begins, tell_game_over
from ..eval.tally import BotRow, add_deal, finish_rows
from .selfplay import make_raw_env


class Actor(Protocol):
    """A batched policy: :class:`~tavernzoo.agents.policy.MLPPolicy` or training's ``TorchActor``."""

    def act(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
            deterministic: bool = True) -> np.ndarray: ...


@dataclass(frozen=True)
class DealJob:
    """One deal of match ``match`` (a line-up), its games in rotation order (game ``deal * seats + rotation``
    in ``play_match``'s order)."""

    match: int
    deal: Deal


def play_policy_match(game: Game, actor: Actor, bot_specs: Sequence[str], games: int, seed: int = 0,
                      config: Any = None, policy_entries: Sequence[int] = (0,), lanes: int = 64,
                      backend: str = "local", progress: bool = False, address: str | None = None,
                      seeding: str = DEFAULT_SEEDING) -> MatchResult:
    """``play_match(game, bot_specs, games, seed, config, seeding=seeding)`` with ``actor`` playing the entries
    in ``policy_entries`` (their specs are only labels), ``lanes`` games at a time (see the module docstring
    for what is equal)."""
    return play_policy_matches(game, actor, [bot_specs], games, seed, config, policy_entries, lanes, backend,
                               progress, address, seeding)[0]


def play_policy_matches(game: Game, actor: Actor, lineups: Sequence[Sequence[str]], games: int, seed: int = 0,
                        config: Any = None, policy_entries: Sequence[int] = (0,), lanes: int = 64,
                        backend: str = "local", progress: bool = False,
                        address: str | None = None, seeding: str = DEFAULT_SEEDING) -> list[MatchResult]:
    """One :func:`play_policy_match` per line-up (e.g. the policy against random, then against the
    heuristic), all their games in one lockstep: the envs are built once and the batches are wider.
    ``address`` is the Ray cluster to join with ``backend="ray"`` (default: ``$RAY_ADDRESS`` or an
    embedded instance)."""
    if backend not in BACKENDS:
        raise ValueError(f"evaluation backend {backend!r} is not available; valid: {', '.join(BACKENDS)}")
    if lanes < 1:
        raise ValueError(f"lanes={lanes} must be at least 1")
    if games < 1:
        raise ValueError(f"games={games} must be at least 1")
    config = game.make_config(config)
    seats = game.rules.num_seats(config)
    deals = math.ceil(games / seats)
    plan = DealPlan(seed, seats, deals, check_seeding(seeding))
    jobs: list[DealJob] = []
    makers: list[dict[int, Callable[[int], Any] | None]] = []
    for match, bot_specs in enumerate(lineups):
        if len(bot_specs) != seats:
            raise ValueError(f"{game.name} with this config seats {seats} players; got {len(bot_specs)} bot specs")
        jobs += [DealJob(match, deal) for deal in plan]
        makers.append({entry: None if entry in policy_entries else bot_maker(spec, game, config)
                       for entry, spec in enumerate(bot_specs)})
    opponents = ", ".join(" ".join(lineup[1:]) for lineup in lineups)
    bar = progress_bar(progress, len(jobs) * seats, f"{game.name}: policy vs {opponents}")
    try:
        if backend == "ray":
            from ..envs.core import config_to_dict
            from ..eval.shipping import gather

            # the opponents' bot files and the options' files travel with the tasks (eval/shipping.py)
            files = gather(game, [spec for lineup in lineups for entry, spec in enumerate(lineup)
                                  if entry not in policy_entries], config_to_dict(config))
            returns = _play_on_ray(game, config, actor, makers, plan, jobs, lanes, address, bar, files)
        else:
            returns = play_games(game, config, actor, makers, plan, jobs, lanes,
                                 finished=(lambda: bar.update(1)) if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    return [tally(game.name, bot_specs, plan, {index: result for (m, index), result in returns.items() if m == match})
            for match, bot_specs in enumerate(lineups)]


REFERENCES = ("random", "heuristic")


def strength_report(game: Game, actor: Actor, label: str, games: int, seed: int = 0, config: Any = None,
                    backend: str = "local", progress: bool = False, seeding: str = DEFAULT_SEEDING) -> dict[str, Any]:
    """A trained policy's final report: ``actor`` against each of :data:`REFERENCES` in every other seat,
    seats rotated over duplicate deals, ``games`` games each (``tavernzoo train`` and ``tavernzoo rllib``
    end with it). ``label`` names the policy in the tables (its checkpoint); ``seeding`` as in
    :func:`play_policy_matches`, said in the report with its ``results_version`` (eval/deals.py ``results_stamp``:
    a report without them was played with ``v1``)."""
    config = game.make_config(config)
    seats = game.rules.num_seats(config)
    report: dict[str, Any] = {"games": games, **results_stamp(seeding), "against": {}}
    results = play_policy_matches(game, actor, [[label] + [reference] * (seats - 1) for reference in REFERENCES],
                                  games, seed=seed, config=config, backend=backend, progress=progress,
                                  seeding=seeding)
    for reference, result in zip(REFERENCES, results, strict=True):
        trained, others = result.rows[0], result.rows[1:]
        report["against"][reference] = {
            "games": trained.games, "wins": trained.wins, "draws": trained.draws, "losses": trained.losses,
            "score": trained.score, "score_ci": list(trained.score_ci),
            "reference_score": float(np.mean([row.score for row in others])),
            "seats": seats,
        }
    return report


def _play_on_ray(game: Game, config: Any, actor: Actor, makers: list, plan: DealPlan, jobs: list[DealJob],
                 lanes: int, address: str | None, bar: Any, files: Any = None) -> dict[tuple[int, int], list[float]]:
    """:func:`play_games` over shards of ``lanes`` deals, one Ray task each (the actor, the bot makers and
    the shard travel; each task builds its own envs), results gathered as tasks finish."""
    shards = [jobs[start:start + lanes] for start in range(0, len(jobs), lanes)]
    play_shard = functools.partial(_play_shard, game, config, actor, makers, plan, lanes)
    returns: dict[tuple[int, int], list[float]] = {}
    for _, results in map_tasks(play_shard, shards, address=address, batch=1, files=files):
        returns.update(results)
        if bar is not None:
            bar.update(len(results))
    return returns


def _play_shard(game: Game, config: Any, actor: Actor, makers: list, plan: DealPlan, lanes: int,
                jobs: list[DealJob]) -> dict[tuple[int, int], list[float]]:
    """One Ray task's share: :func:`play_games` with the shard last, for ``functools.partial``."""
    return play_games(game, config, actor, makers, plan, jobs, lanes)


def bot_maker(spec: str, game: Game, config: Any) -> Callable[[int], Any]:
    """``seed -> a fresh bot`` for ``spec``: the built-in factory itself (microseconds), else load_bot."""
    factory = builtin_bots(game).get(spec)
    if factory is not None:
        return lambda seed: factory(config, seed)
    return lambda seed: load_bot(spec, game, config, seed=seed)


@dataclass
class _Lane:
    """One deal in flight: its env, the game's rotation, the bots by seat, the returns by seat, and (``v2``)
    the deal's bots by entry, kept over its rotations."""

    job: DealJob
    env: Any
    rotation: int
    bots: dict[int, Any]
    seat_of: dict[str, int]
    totals: list[float]
    deal_bots: dict[int, Any]


def play_games(game: Game, config: Any, actor: Actor, makers: list[dict[int, Callable[[int], Any] | None]],
               plan: DealPlan, jobs: list[DealJob], lanes: int,
               finished: Callable[[], None] | None = None) -> dict[tuple[int, int], list[float]]:
    """Play ``jobs`` (deals) with ``lanes`` deals in flight, each lane a deal's rotations in order; each game's
    returns (by seat), keyed by ``(job.match, deal * seats + rotation)``. ``makers[match][entry]`` makes that
    entry's bot from a seed (None: the actor plays it), seeded as ``plan`` says (see the module docstring).

    A pure function of its arguments (the unit a parallel backend ships to a worker). Not a Table per game
    (eval/table.py): the actor's seats move in one batch across the games in flight, which a Table's person's
    seat would check one move at a time; the bots hear their games through the table engine's helpers, and
    each is closed with its game (``v1``) or its deal (``v2``).
    """
    seats = plan.seats
    per_deal = plan.seeding != "v1"
    pending = iter(jobs)
    returns: dict[tuple[int, int], list[float]] = {}
    envs = [make_raw_env(game, config) for _ in range(min(lanes, len(jobs)))]

    def close(bots: dict[int, Any]) -> None:
        for bot in bots.values():
            bot.close()

    def start(env: Any, job: DealJob | None, rotation: int, deal_bots: dict[int, Any]) -> _Lane | None:
        if job is None:
            return None
        deal = job.deal
        env.reset(seed=deal.seed)
        bots: dict[int, Any] = {}
        for seat, entry in enumerate(seating(deal.table, rotation)):
            maker = makers[job.match][entry]
            if maker is None:
                continue
            if not per_deal:
                bots[seat] = as_bot(maker(plan.lockstep_bot_seed(entry, deal.index, rotation)))
                continue
            if entry not in deal_bots:
                deal_bots[entry] = as_bot(maker(plan.bot_seed(deal.index, entry)))
            bots[seat] = deal_bots[entry]
        entries = seating(deal.table, rotation)
        tell_game_begins(bots, {seat: plan.game_seed(deal.index, entries[seat], rotation)
                                if takes_game_seed(bot) else None for seat, bot in bots.items()})
        seat_of = {agent: seat for seat, agent in enumerate(env.possible_agents)}
        return _Lane(job, env, rotation, bots, seat_of, [0.0] * seats, deal_bots)

    def next_game(lane: _Lane) -> _Lane | None:
        """The lane's next game: the deal's next rotation, else the next deal's first."""
        if lane.rotation + 1 < seats:
            return start(lane.env, lane.job, lane.rotation + 1, lane.deal_bots)
        close(lane.deal_bots)
        return start(lane.env, next(pending, None), 0, {})

    def advance(lane: _Lane) -> bool:
        """Play the bots' moves (and step finished agents) as ``play_game`` does; True when the actor is
        to move, False when the game is over."""
        env = lane.env
        while env.agents:
            agent = env.agent_selection
            seat = lane.seat_of[agent]
            lane.totals[seat] += env._cumulative_rewards[agent]  # what env.last() reports
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            bot = lane.bots.get(seat)
            if bot is None:
                return True
            feed(bot, env, agent)
            env.step(bot.act(env.observe(agent)))
        return False

    in_flight = [lane for env in envs if (lane := start(env, next(pending, None), 0, {})) is not None]
    while in_flight:
        waiting = []
        for lane in in_flight:
            while not advance(lane):
                returns[lane.job.match, lane.job.deal.index * seats + lane.rotation] = lane.totals
                tell_game_over(lane.bots, [float(value) for value in lane.totals])
                if not per_deal:
                    close(lane.bots)
                if finished is not None:
                    finished()
                lane = next_game(lane)
                if lane is None:
                    break
            if lane is not None:
                waiting.append(lane)
        if not waiting:
            break
        observed = [lane.env.observe(lane.env.agent_selection) for lane in waiting]
        actions = actor.act(np.stack([o["observation"] for o in observed]),
                            np.stack([o["action_mask"] for o in observed]), deterministic=True)
        for lane, action in zip(waiting, actions, strict=True):
            lane.env.step(int(action))
        in_flight = waiting
    return returns


def tally(game_name: str, bot_specs: Sequence[str], plan: DealPlan, returns: dict[int, list[float]]) -> MatchResult:
    """``play_match``'s table from every game's returns (keyed by ``deal * seats + rotation``), counted deal by
    deal in its order by the one tally (eval/tally.py), so equal to the float."""
    seats = plan.seats
    rows = [BotRow(label) for label in entry_labels(list(bot_specs))]
    for deal in plan:
        add_deal(rows, [(returns[deal.index * seats + rotation], seating, None)
                        for rotation, seating in enumerate(deal.seatings())])
    finish_rows(rows)
    return MatchResult(game_name, plan.deals, plan.deals * seats, seats, plan.seed, rows, seeding=plan.seeding)
