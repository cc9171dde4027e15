"""Tiny Minotaur solver benchmark and report numbers (not a test; nothing here asserts a time).

    python bench/bench_oracle.py solve [--archetypes cleric rogue] [--tiers 2 1]  # time one uncached solve
    python bench/bench_oracle.py table [--ruleset standard] [--out table.json] [--ray]  # every deck/tier matchup
    python bench/bench_oracle.py play [--games 1000] [--opponents random heuristic]

``solve`` times one matchup from scratch (no cache) and prints positions solved and seconds: the issue's
target is under a minute on a 2-core CPU. ``table`` solves every deck x tier matchup of a ruleset
(through the disk cache, ``$TAVERNZOO_CACHE``), prints the first mover's value and winning chance per
tier pair, each deck's chances against each deck over the initiative roll, and whether a higher
initiative roll is ever worse (``solver.initiative_violations``), and writes them as JSON. ``play``
plays the oracle against other bots with seats swapped per deal and prints scores with 95% intervals
and how often the turn cap ended a game. docs/oracle.md holds the numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from tavernzoo.agents import load_bot
from tavernzoo.agents.tiny_minotaur_oracle import OracleBot
from tavernzoo.envs import get_game
from tavernzoo.envs.tiny_minotaur import rules, solver
from tavernzoo.eval.match import make_env, play_game
from tavernzoo.eval.stats import mean_interval
from tavernzoo.eval.tally import score_of

GAME = get_game("tiny_minotaur")


def first_mover(config, first: tuple[str, int], second: tuple[str, int]) -> tuple[float, float]:
    """(value, win chance) of the seat moving first with archetype/tier ``first`` against ``second``."""
    return solver.first_mover(config, first, second)


def label(config, archetype: str) -> str:
    """A deck's name in the tables: the class, or the archetype where the class's two decks differ."""
    class_name = rules.CLASS_OF[archetype]
    decks = rules.load_ruleset(config.ruleset).decks
    return class_name if len({decks[a] for a in rules.ARCHETYPES[class_name]}) == 1 else archetype


def command_solve(args) -> None:
    config = GAME.make_config(ruleset=args.ruleset)
    matchup = solver.matchup_of(config, tuple(args.archetypes), tuple(args.tiers))
    start = time.perf_counter()
    solution = solver.solve(matchup, use_cache=False)
    seconds = time.perf_counter() - start
    print(f"{args.archetypes[0]} (tier {args.tiers[0]}) vs {args.archetypes[1]} (tier {args.tiers[1]}), "
          f"{args.ruleset} rules: {len(solution):,} positions (x2 attack states) solved in {seconds:.1f} s "
          f"({len(solution) / seconds:,.0f} positions/s)")
    for seat in (0, 1):
        value, win = solution.start_value(seat)
        print(f"  seat {seat} first: value {value:+.4f}, win {win:.4f}, draw {1 - win - (win - value):.4f}")


def command_table(args) -> None:
    config = GAME.make_config(ruleset=args.ruleset)
    start = time.perf_counter()
    archetypes = solver.distinct_archetypes(config)
    sides = [(a, t) for a in archetypes for t in (1, 2, 3)]
    first = {}
    pairs = list(itertools.product(sides, sides))
    todo = [(a, b) for a, b in (reversed(pairs) if args.reverse else pairs) if a[1] >= b[1]]  # lower tier: second
    if args.ray:  # one Ray task per matchup (seconds each), on this machine or --address's cluster
        from tavernzoo.eval.backends import map_tasks

        solved = map_tasks(lambda pair: first_mover(config, *pair), todo, address=args.address, batch=1)
    else:
        solved = (((a, b), first_mover(config, a, b)) for a, b in todo)
    for (a, b), value in solved:
        first[a, b] = value
        print(f"  solved {a} first vs {b}: {first[a, b][0]:+.4f}", file=sys.stderr, flush=True)
    # Each deck against each, over the initiative roll: all 380 ordered pairs of different faces.
    overall = {}
    for ca, cb in itertools.product(archetypes, archetypes):
        value = win = 0.0
        for opponent_roll in range(1, 21):
            for _, v, w in solver.by_roll(config, ca, cb, opponent_roll, first):
                value += v / 380
                win += w / 380
        overall[ca, cb] = (value, win)
    violations = solver.initiative_violations(config, archetypes)
    seconds = time.perf_counter() - start
    names = {a: label(config, a) for a in archetypes}
    print(f"\nfirst mover's value / win chance ({args.ruleset} rules, optimal play; {seconds:.0f} s)\n")
    print("| first \\ second | " + " | ".join(f"{names[c]} t{t}" for c, t in sides) + " |")
    print("|---" * (len(sides) + 1) + "|")
    for a in sides:
        cells = []
        for b in sides:
            cells.append(f"{first[a, b][0]:+.3f} / {first[a, b][1]:.3f}" if (a, b) in first else "—")
        print(f"| {names[a[0]]} t{a[1]} | " + " | ".join(cells) + " |")
    print("\nrow deck against column deck over the initiative roll: value / win chance\n")
    print("| | " + " | ".join(names[c] for c in archetypes) + " |\n" + "|---" * (len(archetypes) + 1) + "|")
    for ca in archetypes:
        print(f"| {names[ca]} | " + " | ".join(f"{overall[ca, cb][0]:+.3f} / {overall[ca, cb][1]:.3f}"
                                               for cb in archetypes) + " |")
    print(f"\na higher initiative roll is never worse (value and win chance non-decreasing in my roll, for "
          f"every pair of decks and every opponent roll): {'yes' if not violations else 'NO'}; "
          f"{len(violations)} violations")
    for line in violations[:20]:
        print("  " + line)
    if args.out:
        document = {
            "ruleset": args.ruleset,
            "first_mover": [
                {"first": list(a), "second": list(b), "value": v, "win": w} for (a, b), (v, w) in first.items()
            ],
            "deck_vs_deck": [
                {"deck": ca, "against": cb, "value": v, "win": w} for (ca, cb), (v, w) in overall.items()
            ],
            "initiative_violations": violations,
            "seconds": seconds,
        }
        Path(args.out).write_text(json.dumps(document, indent=1) + "\n")


def command_play(args) -> None:
    config = GAME.make_config(**json.loads(args.config))
    env = make_env(GAME, config)
    solver.MEMORY_SLOTS = max(solver.MEMORY_SLOTS, 64)  # random classes and tiers meet up to 45 matchups
    for opponent in args.opponents:
        oracle = OracleBot(config, 0)
        other = load_bot(opponent, GAME, config, seed=1)
        scores, returns, capped, games, longest = [], [], 0, 0, 0
        start = time.perf_counter()
        for deal in range(args.games // 2):
            deal_score = deal_return = 0.0
            for seat in (0, 1):
                bots = [oracle, other] if seat == 0 else [other, oracle]
                result, record = play_game(env, bots, seed=args.seed * 1_000_003 + deal)
                deal_score += score_of(result, seat) / 2
                deal_return += result[seat] / 2
                capped += record["end_reason"] == rules.TURN_LIMIT
                longest = max(longest, env.unwrapped.game_state.turn)
                games += 1
            scores.append(deal_score)
            returns.append(deal_return)
        mean, low, high = mean_interval(scores)
        rmean, rlow, rhigh = mean_interval(returns)
        print(f"oracle vs {opponent}: {games} games ({games // 2} deals, seats swapped) in "
              f"{time.perf_counter() - start:.0f} s; oracle score {mean:.3f} [{low:.3f}, {high:.3f}], "
              f"{opponent} score {1 - mean:.3f} [{1 - high:.3f}, {1 - low:.3f}]; oracle mean return "
              f"{rmean:+.3f} [{rlow:+.3f}, {rhigh:+.3f}]; turn cap ({config.max_turns}) reached in {capped} games, "
              f"longest game {longest} turns", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser("solve", help="time one uncached solve")
    solve.add_argument("--archetypes", nargs=2, default=["cleric", "rogue"], choices=rules.ALL_ARCHETYPES)
    solve.add_argument("--tiers", nargs=2, type=int, default=[2, 1], choices=(1, 2, 3))
    solve.add_argument("--ruleset", default="standard", help="bundled ruleset name or TOML path")
    table = commands.add_parser("table", help="every deck x tier matchup of a ruleset (default: standard)")
    table.add_argument("--ruleset", default="standard", help="bundled ruleset name or TOML path")
    table.add_argument("--out", help="write the numbers as JSON here")
    table.add_argument("--reverse", action="store_true",
                       help="solve in reverse order (a second process fills the shared disk cache from the end)")
    table.add_argument("--ray", action="store_true", help="solve the matchups as Ray tasks (needs the ray extra)")
    table.add_argument("--address", help="with --ray: the Ray cluster to join (default: start one here)")
    play = commands.add_parser("play", help="the oracle against other bots, seats swapped")
    play.add_argument("--games", type=int, default=1000)
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--opponents", nargs="+", default=["random", "heuristic"])
    play.add_argument("--config", default="{}", help='config overrides as JSON, e.g. \'{"starting_hp": 60}\'')
    args = parser.parse_args(argv)
    {"solve": command_solve, "table": command_table, "play": command_play}[args.command](args)


if __name__ == "__main__":
    main()
