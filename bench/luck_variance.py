"""Where a match's variance is, and how much of it the luck meter takes out (docs/strength.md, "Luck taken out").

    python bench/luck_variance.py RECORDS.jsonl --value zoo:ministeel [--chance-samples 4] [--limit GAMES]
    python bench/luck_variance.py RECORDS.jsonl --rollouts 32 [--chance-samples 4] [--limit GAMES]

RECORDS: a match's records (``tavernzoo match ... --records RECORDS.jsonl``, whole deals in play order). For every
entry it prints:
  duplicate     the variance of the deal score over a quarter (1/seats) of the variance of one game's share: 1.0
                where a deal's rotations are independent games, below 1 as far as duplicate deals cancel luck;
  corr          the correlation of one game's share with the seat's measured luck (eval/luck.py);
  best, online  the deal score's variance left after the control variate, as a fraction of the plain one (the
                ratio of deals needed for the same interval): with the slope fitted on all deals (an optimistic
                bound) and fitted on earlier deals only (what match and tournament report, unbiased).
The luck is measured here, in this process; no timings are printed.

``--rollouts N`` measures luck with another value instead of a value head: each seat's mean return over N games
played out from the full state by the heuristic in every seat, in the game's compiled kernel (MiniSteel, Wyvern,
Tiny Minotaur), with fresh chance and the piles of unseen order shuffled afresh in each. One event's states (its
actual outcome and its samples) are played out with the same N seeds, so the noise of the playouts cancels in
their difference (common random numbers); the seeds are drawn apart from the game, so the luck keeps mean zero.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance
from tavernzoo.eval.luck import LuckMeter, shuffle_pile, value_bot_meter
from tavernzoo.eval.stats import control_variate_values
from tavernzoo.eval.tally import score_of


class PlayoutMeter(LuckMeter):
    """Luck by the heuristic's compiled playouts from the full state (``--rollouts``), the same seeds for one
    event's states."""

    def __init__(self, game: Any, config: Any, rollouts: int, samples: int):
        super().__init__(game, config, lambda rows: None, samples)
        self.kernel = importlib.import_module(f"tavernzoo.envs.{game.name}.kernel")
        self.playout = importlib.import_module(f"tavernzoo.agents.{game.name}_kernel").rollout_heuristic
        self.rollouts, self.seeds = rollouts, random.Random(f"playouts:{game.env_name}")

    def _values(self, states: Sequence[Any], events: Sequence[int]) -> np.ndarray:
        out = np.zeros((len(states), self.seats))
        copies, owners, first = [], [], 0
        for size in events:
            seeds = [self.seeds.randrange(2**63) for _ in range(self.rollouts)]
            for k in range(first, first + size):
                if self.rules.is_terminal(states[k]):
                    out[k] = self.rules.returns(states[k])
                    continue
                for seed in seeds:
                    copy = self.rules.clone(states[k])
                    copy.chance = Chance(seed)
                    shuffler = random.Random(seed)
                    for name in self.unseen:
                        shuffle_pile(getattr(copy, name), shuffler)
                    copies.append(copy)
                    owners.append(k)
            first += size
        if copies:
            returns, _ = self.playout(self.kernel.from_states(copies))
            sums = np.zeros_like(out)
            np.add.at(sums, np.array(owners), returns[:, :self.seats])
            live = sorted(set(owners))
            out[live] = sums[live] / self.rollouts
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--value", help="the bot whose value head measures luck")
    source.add_argument("--rollouts", type=int, help="measure luck by this many heuristic playouts instead")
    parser.add_argument("--chance-samples", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None, help="the first GAMES records only")
    args = parser.parse_args()
    try:
        with open(args.records) as handle:
            records = [json.loads(line) for line in handle][:args.limit]
    except (OSError, ValueError) as error:
        raise SystemExit(f"error: {args.records} is no readable match records file (one JSON game a line): "
                         f"{error}") from None
    game = get_game(records[0]["env"])
    seats = len(records[0]["seats"])
    records = records[:len(records) - len(records) % seats]  # whole deals
    entries = records[0]["seats"]
    if args.rollouts is not None:
        if args.rollouts < 1 or game.name not in ("ministeel", "wyvern", "tiny_minotaur"):
            raise SystemExit("error: --rollouts takes a whole number of at least 1, for a MiniSteel, Wyvern or "
                             f"Tiny Minotaur match (got {args.rollouts} for {game.name})")
        meter = PlayoutMeter(game, records[0]["config"], args.rollouts, args.chance_samples)
        source = f"{args.rollouts} heuristic playouts"
    else:
        meter = value_bot_meter(args.value, game, records[0]["config"], args.chance_samples,
                                {label: label.rpartition(" #")[0] or label for label in entries})
        source = args.value
    luck = [meter.luck(record) for record in records]
    print(f"{len(records)} games, {len(records) // seats} deals; luck by {source}, {args.chance_samples} samples")
    for entry in entries:
        seat_of = [record["seats"].index(entry) for record in records]
        shares = [score_of(record["returns"], seat) for record, seat in zip(records, seat_of, strict=True)]
        lucks = [values[seat] for values, seat in zip(luck, seat_of, strict=True)]
        deal_scores = [statistics.fmean(shares[k:k + seats]) for k in range(0, len(shares), seats)]
        deal_luck = [statistics.fmean(lucks[k:k + seats]) for k in range(0, len(lucks), seats)]
        plain = statistics.variance(deal_scores)
        if plain == 0.0 or statistics.variance(deal_luck) == 0.0:
            print(f"{entry:24s} its deal scores or luck do not vary over these {len(deal_scores)} deals: no ratio")
            continue
        duplicate = plain / (statistics.variance(shares) / seats)
        corr = float(np.corrcoef(shares, lucks)[0, 1])
        slope = np.cov(deal_scores, deal_luck)[0, 1] / statistics.variance(deal_luck)
        best = statistics.variance([s - slope * x for s, x in zip(deal_scores, deal_luck, strict=True)]) / plain
        online = statistics.variance(control_variate_values(deal_scores, deal_luck)) / plain
        print(f"{entry:24s} duplicate {duplicate:.2f}  corr {corr:+.3f}  best {best:.3f}  online {online:.3f}")


if __name__ == "__main__":
    main()
