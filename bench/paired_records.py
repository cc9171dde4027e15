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
import math
import re

from tavernzoo.eval.match import tally_records


def entry_under_test(labels: list[str], bot: str | None) -> int:
    """The index of the entry compared: the first whose spec starts with ``bot``, or without ``bot`` the one entry
    whose spec no other entry has; SystemExit naming the entries where there is none."""
    if bot is not None:
        found = [i for i, label in enumerate(labels) if label.startswith(bot)]
    else:
        specs = [re.sub(r" #\d+$", "", label) for label in labels]  # a match numbers the copies of one spec
        found = [i for i, spec in enumerate(specs) if specs.count(spec) == 1]
        found = found if len(found) == 1 else []
    if not found:
        wanted = f"seat whose spec starts with {bot!r}" if bot is not None else "one seat unlike the others"
        raise SystemExit(f"error: no {wanted} among the seats {labels} (name it with --bot)")
    return found[0]


def deal_scores(path: str, bot: str | None) -> dict[int, float]:
    """The bot's mean score per deal (the deal's seed) over the deals every seat rotation of which was played,
    counted as `tavernzoo replay --table` counts them (eval/match.py ``tally_records``): a deal cut short by a
    stopped match and begun again by ``--resume`` counts once, whole; a file holding one deal twice (two runs of
    one seed: ``--records`` appends) is refused."""
    from tavernzoo.envs.records import read_records

    try:
        recorded = tally_records((f"{path}:{line}", record) for line, record in read_records(path, left_out=[]))
    except ValueError as error:  # not records, another match's beside them, a deal twice, or no whole deal
        message = str(error)  # the records' own errors name the file and line already
        raise SystemExit(f"error: {message if message.startswith(path) else f'{path}: {message}'}") from None
    rows = recorded.result.rows
    row = rows[entry_under_test([row.bot for row in rows], bot)]
    return dict(zip(recorded.deal_seeds, row.per_deal_scores, strict=True))


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
        mean, low, high = mean_interval(list(scores.values()))
        print(f"{path}: {mean:.3f} [{low:.3f}, {high:.3f}] over {len(scores)} deals")
    common = sorted(set(a) & set(b))
    if not common:
        raise SystemExit("error: the two runs share no complete deal (the same --seed, game and table?)")
    mean, low, high = mean_interval([a[deal] - b[deal] for deal in common])
    print(f"paired over {len(common)} deals: A - B = {mean:+.3f} [{low:+.3f}, {high:+.3f}]")


if __name__ == "__main__":
    main()
