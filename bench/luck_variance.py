"""Where a match's variance is, and how much of it the luck meter takes out (docs/strength.md, "Luck taken out").

    python bench/luck_variance.py RECORDS.jsonl --value zoo:ministeel [--chance-samples 4] [--limit GAMES]

RECORDS: a match's records (``tavernzoo match ... --records RECORDS.jsonl``, whole deals in play order). For every
entry it prints:
  duplicate     the variance of the deal score over a quarter (1/seats) of the variance of one game's share: 1.0
                where a deal's rotations are independent games, below 1 as far as duplicate deals cancel luck;
  corr          the correlation of one game's share with the seat's measured luck (eval/luck.py);
  best, online  the deal score's variance left after the control variate, as a fraction of the plain one (the
                ratio of deals needed for the same interval): with the slope fitted on all deals (an optimistic
                bound) and fitted on earlier deals only (what match and tournament report, unbiased).
The luck is measured here, in this process; no timings are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from tavernzoo.envs import get_game
from tavernzoo.eval.luck import value_bot_meter
from tavernzoo.eval.stats import control_variate_values
from tavernzoo.eval.tally import score_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records")
    parser.add_argument("--value", required=True, help="the bot whose value head measures luck")
    parser.add_argument("--chance-samples", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None, help="the first GAMES records only")
    args = parser.parse_args()
    with open(args.records) as handle:
        records = [json.loads(line) for line in handle][:args.limit]
    game = get_game(records[0]["env"])
    seats = len(records[0]["seats"])
    records = records[:len(records) - len(records) % seats]  # whole deals
    entries = records[0]["seats"]
    meter = value_bot_meter(args.value, game, records[0]["config"], args.chance_samples,
                            {label: label.rpartition(" #")[0] or label for label in entries})
    luck = [meter.luck(record) for record in records]
    print(f"{len(records)} games, {len(records) // seats} deals; luck by {args.value}, {args.chance_samples} samples")
    for entry in entries:
        seat_of = [record["seats"].index(entry) for record in records]
        shares = [score_of(record["returns"], seat) for record, seat in zip(records, seat_of, strict=True)]
        lucks = [values[seat] for values, seat in zip(luck, seat_of, strict=True)]
        deal_scores = [statistics.fmean(shares[k:k + seats]) for k in range(0, len(shares), seats)]
        deal_luck = [statistics.fmean(lucks[k:k + seats]) for k in range(0, len(lucks), seats)]
        plain = statistics.variance(deal_scores)
        duplicate = plain / (statistics.variance(shares) / seats)
        corr = float(np.corrcoef(shares, lucks)[0, 1])
        slope = np.cov(deal_scores, deal_luck)[0, 1] / statistics.variance(deal_luck)
        best = statistics.variance([s - slope * x for s, x in zip(deal_scores, deal_luck, strict=True)]) / plain
        online = statistics.variance(control_variate_values(deal_scores, deal_luck)) / plain
        print(f"{entry:24s} duplicate {duplicate:.2f}  corr {corr:+.3f}  best {best:.3f}  online {online:.3f}")


if __name__ == "__main__":
    main()
