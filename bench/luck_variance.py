"""Where a match's variance is, and how much of it the luck meter takes out (docs/strength.md, "Luck taken out").

    python bench/luck_variance.py RECORDS.jsonl --value zoo:ministeel [--chance-samples 4] [--limit GAMES]
    python bench/luck_variance.py RECORDS.jsonl --rollouts 32 [--seated [--stand-in BOT]] [--chance-samples 4]
        [--limit GAMES]

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
Tiny Minotaur), with fresh chance and the piles of unseen order shuffled afresh in each; with ``--seated``, by
the bots that sat at the table where the kernel can seat them (``tavernzoo match --variance-reduction
playouts:N``'s meter, eval/luck.py ``PlayoutMeter``). One event's states (its actual outcome and its samples) are
played out with the same N seeds, so the noise of the playouts cancels in their difference (common random
numbers); the seeds are drawn apart from the game, so the luck keeps mean zero.
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from tavernzoo.envs import get_game
from tavernzoo.eval.luck import PlayoutMeter, value_bot_meter
from tavernzoo.eval.stats import control_variate_values
from tavernzoo.eval.tally import score_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--value", help="the bot whose value head measures luck")
    source.add_argument("--rollouts", type=int, help="measure luck by this many heuristic playouts instead")
    parser.add_argument("--seated", action="store_true",
                        help="with --rollouts: played out by the bots that sat at the table, where the kernel can "
                             "seat them, not by the heuristic in every seat")
    parser.add_argument("--stand-in", default="heuristic",
                        help="with --seated: the bot that plays the seats the kernel cannot (a search's, a "
                             "program's): the heuristic (default), random or a network")
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
        seated = {label: label.rpartition(" #")[0] or label for label in entries} if args.seated else None
        meter = PlayoutMeter(game, records[0]["config"], args.rollouts, args.chance_samples, seated, args.stand_in)
        source = f"{args.rollouts} {'playouts by the seated bots' if args.seated else 'heuristic playouts'}"
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
