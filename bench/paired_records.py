"""One bot's score in two matches on the same deals, compared deal by deal: the paired difference and its 95%
interval (docs/search.md, "Guided search against its own network, on the kernel").

    python bench/paired_records.py A.jsonl B.jsonl [--bot SPEC_START]

``A.jsonl`` and ``B.jsonl`` are the ``--records`` of two ``tavernzoo match`` runs with the same ``--seed``, game
and table, where the bot under test differs: the lone bot at a table of copies of one other (the one seat whose
spec no other seat has), or the seat whose spec starts with ``--bot``. A game's score is 1 for
a win, a share of a tie for first, else 0 (``match``'s score); a deal's is the mean over its seat rotations.
Printed: each run's score over its complete deals with the interval from the deals' spread (``match``'s), and
the mean over the deals both runs completed of A's deal score less B's, with its interval. The luck of a deal
is the same on both sides, so the paired interval is narrower than the two apart.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import defaultdict

from tavernzoo.eval.tally import score_of


def seat_under_test(seats: list[str], bot: str | None) -> int:
    """The index of the seat compared: the first whose spec starts with ``bot``, or without ``bot`` the one seat
    whose spec no other seat has; SystemExit naming the seats where there is none."""
    if bot is not None:
        found = [i for i, spec in enumerate(seats) if spec.startswith(bot)]
    else:
        specs = [re.sub(r" #\d+$", "", spec) for spec in seats]  # a match numbers the copies of one spec
        found = [i for i, spec in enumerate(specs) if specs.count(spec) == 1]
        found = found if len(found) == 1 else []
    if not found:
        wanted = f"seat whose spec starts with {bot!r}" if bot is not None else "one seat unlike the others"
        raise SystemExit(f"error: no {wanted} among the seats {seats} (name it with --bot)")
    return found[0]


def deal_scores(path: str, bot: str | None) -> dict[int, float]:
    """The bot's mean score per deal (the deal's seed) over the deals every seat rotation of which was played."""
    games: dict[int, list[float]] = defaultdict(list)
    seats = 0
    for line in open(path, encoding="utf-8"):
        record = json.loads(line)
        seats = len(record["seats"])
        games[record["seed"]].append(score_of(record["returns"], seat_under_test(record["seats"], bot)))
    crowded = [deal for deal, scores in games.items() if len(scores) > seats]
    if crowded:  # `match --records` appends: two runs of one seed in one file would count each deal twice
        raise SystemExit(f"error: {path} holds {len(games[crowded[0]])} games of deal {crowded[0]}, more than its "
                         f"{seats} seat rotations: the records of two matches in one file? (--records appends)")
    return {deal: sum(scores) / len(scores) for deal, scores in games.items() if len(scores) == seats}


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    mean = sum(values) / len(values)
    spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    half = 1.96 * spread / math.sqrt(len(values))
    return mean, mean - half, mean + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--bot", default=None, help="the start of the spec of the seat compared (default: the one "
                        "seat whose spec no other seat has)")
    args = parser.parse_args()
    try:
        a, b = deal_scores(args.a, args.bot), deal_scores(args.b, args.bot)
    except (OSError, ValueError, KeyError, TypeError) as error:  # a file missing, unreadable or not records
        raise SystemExit(f"error: {args.a} or {args.b} is not a readable records file of `tavernzoo match "
                         f"--records`: {error}") from None
    for path, scores in ((args.a, a), (args.b, b)):
        if not scores:
            raise SystemExit(f"error: {path} holds no complete deal (every seat rotation of one seed)")
        mean, low, high = mean_interval(list(scores.values()))
        print(f"{path}: {mean:.3f} [{low:.3f}, {high:.3f}] over {len(scores)} deals")
    common = sorted(set(a) & set(b))
    if not common:
        raise SystemExit("error: the two runs share no complete deal (the same --seed, game and table?)")
    mean, low, high = mean_interval([a[deal] - b[deal] for deal in common])
    print(f"paired over {len(common)} deals: A - B = {mean:+.3f} [{low:+.3f}, {high:+.3f}]")


if __name__ == "__main__":
    main()
