"""The tournament's deals as Ray tasks (``--backend ray``): :func:`run_deals`, beside the local runners of
:mod:`tavernzoo.eval.runner`, with the same contract.

Ray itself (``connect``, ``map_tasks``, batch sizes) is :mod:`tavernzoo.eval.backends`; its names stay
importable from here. Deals go out in batches (one deal of a fast game is about the ~10 ms Ray's guidance
asks of a task) and the driver writes each batch's games the moment it comes back.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict
from typing import Any

from .backends import (  # noqa: F401 - importable from here, as before
    BATCHES_PER_CPU,
    CONNECT_TIMEOUT_S,
    INSTALL_HINT,
    batch_size,
    check_reachable,
    cluster_cpus,
    connect,
    import_ray,
    map_tasks,
)

log = logging.getLogger("tavernzoo.tournament")


def _play_deals(settings: dict[str, Any], tasks: list, files=None) -> tuple[str, list[tuple[list[dict], str]]]:
    """A Ray task: plays a batch of deals with one :class:`DealPlayer`, the bot and option files ``files``
    (a :class:`~.shipping.Shipment`) installed first; the node it ran on, and for each deal its games'
    summaries and their lines already encoded as JSON lines (the driver writes the text as it is, without
    decoding or encoding any record)."""
    import ray

    from .game_files import encode_lines, game_summary
    from .runner import DealPlayer, deal_lines
    from .schedule import Settings

    if files is not None:
        files.install()
    player = DealPlayer.for_tournament(Settings(**settings))
    done = []
    try:
        for deal, _, skip in tasks:
            lines = deal_lines(player, deal, skip)
            done.append(([game_summary(line) for line in lines], encode_lines(lines)))
        return ray.get_runtime_context().get_node_id(), done
    finally:
        player.close()


def node_turns(ray) -> Iterator:
    """Scheduling strategies that deal batches to the cluster's nodes in turn, each as often as it has CPUs
    (soft: a node that is gone or full passes its turn to Ray's choice). Ray's default, and even SPREAD,
    keeps a fast game's batches on the driver's node while it has room: they finish there before another
    node's first worker has imported tavernzoo, and a second machine would play nothing."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [(node["NodeID"], int(node["Resources"].get("CPU", 0))) for node in ray.nodes() if node["Alive"]]
    order = [node for round_ in range(max((cpus for _, cpus in nodes), default=0))
             for node, cpus in nodes if cpus > round_]
    if not order:
        return itertools.repeat("DEFAULT")
    return itertools.cycle([NodeAffinitySchedulingStrategy(node, soft=True) for node in order])


def run_deals(settings, tasks: Iterable, games_path, record: Callable[[list[dict]], None], tally, *, deals: int,
              address: str | None = None, batch: int | None = None) -> dict[str, int]:
    """The tournament's Ray backend (same contract as its local runners): plays ``tasks`` (deal, table,
    skip; ``deals`` of them, taken lazily) in batches of deals, appends each deal's games to
    ``games_path`` and hands their summaries to ``record`` as its batch returns; once the SPRT of
    ``tally`` decides, no more batches are handed out and those in flight are cancelled.

    At most two batches per CPU are in flight, so memory stays bounded however many deals there are.
    Every game is a pure function of (seed, deal, rotation), so the lines equal the local backend's.
    A killed driver loses only the batches in flight: ``--resume`` replays the games missing from
    the game files, the same way as after a local run.

    The files that the bot specs and game options name travel with the tasks (:mod:`.shipping`), so the
    nodes need no copies. Returns the games played on each Ray node (by node id), also logged."""
    from ..envs import get_game
    from .game_files import GamesFile
    from .luck import luck_bots
    from .shipping import gather

    # the luck is measured on the nodes too: its value bot, or its playouts' stand-in, travels with the tasks
    luck = luck_bots(settings.luck) if settings.luck else []
    shipment = gather(get_game(settings.game), [*settings.bots, *luck], settings.config)
    ray = connect(address)
    files = ray.put(shipment) if shipment else None  # once: every task gets the reference
    cpus = cluster_cpus(ray)
    size = batch_size(deals, cpus, batch)
    remote = ray.remote(_play_deals)
    turns = node_turns(ray)
    plain = asdict(settings)
    source = iter(tasks)
    pending: list = []

    def submit() -> bool:
        chunk = list(itertools.islice(source, size))
        if chunk:
            pending.append(remote.options(max_retries=2, scheduling_strategy=next(turns)).remote(plain, chunk, files))
        return bool(chunk)

    per_node: dict[str, int] = {}
    games = GamesFile(games_path)
    try:
        while len(pending) < 2 * cpus and submit():
            pass
        while pending:
            done, pending[:] = ray.wait(pending, num_returns=1)
            node, played = ray.get(done[0])
            for summaries, text in played:
                games.write_text(text)  # on disk before it is counted
                record(summaries)
                per_node[node] = per_node.get(node, 0) + len(summaries)
            if tally.decided_at is not None:
                break
            submit()
    finally:
        games.close()
        for ref in pending:
            ray.cancel(ref, force=True)
    log.info("games per Ray node: %s", ", ".join(f"{node[:12]} {count}" for node, count in per_node.items()))
    return per_node
