"""``tavernzoo match``: seat-rotated games between bots, with a result table (eval/match.py plays them)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text

from tavernzoo.userio import console

from .common import (
    add_backend_arguments,
    add_config_arguments,
    add_sandbox_argument,
    backend_options,
    note_trained_against,
    parse_config,
    sandboxed,
)


def add_parser(commands: Any) -> argparse.ArgumentParser:
    match = commands.add_parser(
        "match",
        help="play seat-rotated games between bots and print the result table",
        description="Play deals between bots, each deal once per seat rotation (seats swapped in a duel), "
        "and print wins, draws, losses and the score with its 95% interval.",
    )
    match.add_argument("game", nargs="?", default="tiny_minotaur", help="game name (default: tiny_minotaur)")
    match.add_argument("--bots", nargs="+", default=["heuristic", "random"], metavar="SPEC",
                       help="one bot spec per seat: random, heuristic, ... (default: heuristic random)")
    match.add_argument("--games", type=int, default=1000,
                       help="games to play, rounded up to whole deals (default 1000)")
    match.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    add_config_arguments(match)
    match.add_argument("--records", metavar="FILE",
                       help="append every finished game's record to FILE (JSON lines; as each game ends in this "
                       "process, a block at a time from --workers). A FILE that holds games of this very match is "
                       "refused without --resume: its deals would stand there twice")
    match.add_argument("--resume", action="store_true",
                       help="continue a match stopped part way into --records FILE: the deals of this match (the same "
                       "game, options, bots, --seed and --seeding) that FILE holds at every seating are counted from "
                       "it, the rest played and appended; the table counts them all (a larger --games plays on)")
    match.add_argument("--no-progress", action="store_true", help="hide the progress bar (hidden anyway when "
                       "stderr is not a terminal)")
    match.add_argument("--json", action="store_true", help="print the result as one JSON document")
    add_backend_arguments(match)
    match.add_argument("--block-deals", type=int, metavar="N",
                       help="deals per block, the job of one worker (default 64); with --workers, 1 makes each "
                       "deal of a slow match a job of its own, its records written as it ends. The results do "
                       "not depend on N (with --seeding v1, only through bots that draw random numbers)")
    match.add_argument("--seeding", choices=("v1", "v2"), default="v2",
                       help="the seed scheme (docs/tournaments.md, 'Deals and seeds'): v2 (default) the one scheme "
                       "of every host, bots built per deal and seeded per game: a tournament's games of the same "
                       "--seed, the same for any --block-deals; v1 deprecated, for figures published before "
                       "2026-12-05 (bots built per block), kept for one release")
    match.add_argument("--variance-reduction", metavar="BOT|playouts[:N[:STANDIN]]",
                       help="measure each game's luck at every chance event with BOT's value network (a bot with a "
                       "value head: zoo:ministeel, an ONNX file, a checkpoint) or with N playouts of the seated bots "
                       "(default 32; MiniSteel, Wyvern, Tiny Minotaur; STANDIN, the heuristic by default, plays the "
                       "seats the kernel cannot, as a search's), and print the luck-corrected score and its "
                       "interval beside the plain one (unbiased; docs/strength.md, 'Luck taken out')")
    match.add_argument("--chance-samples", type=int, default=4, metavar="K",
                       help="with --variance-reduction: draws of each chance event that estimate its expected value "
                       "(default 4)")
    match.add_argument("--sequential", action="store_true",
                       help="stop at the first deal where an entry's confidence sequence excludes the fair share "
                       "(the luck-corrected one with --variance-reduction); --games is then the most")
    match.add_argument("--alpha", type=float, default=0.05,
                       help="with --sequential: the chance of stopping between equal bots (default 0.05)")
    add_sandbox_argument(match)
    match.set_defaults(run=run_match)
    return match


def run_match(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from tavernzoo.envs.records import end_torn_tail
    from tavernzoo.eval.match import play_match

    config = parse_config(args)
    if (args.chance_samples != 4 and not args.variance_reduction) or (args.alpha != 0.05 and not args.sequential):
        raise ValueError("--chance-samples needs --variance-reduction BOT or playouts, and --alpha needs --sequential")
    bots = sandboxed(args.bots, args.sandbox)
    note_trained_against(args.game, bots)
    if args.seeding == "v1":
        console(stderr=True).print("note: --seeding v1 is deprecated, for figures published before 2026-12-05; "
                                   "v2, the default, is every host's scheme (docs/tournaments.md)", highlight=False)
    if args.records and (mended := end_torn_tail(args.records)):  # play_match would do it too, unsaid
        console(stderr=True).print(f"note: {escape(mended)}", highlight=False, soft_wrap=True)
    result = play_match(args.game, bots, args.games, seed=args.seed, config=config,
                        progress=not args.no_progress, records_path=args.records,
                        **({} if args.block_deals is None else {"block_deals": args.block_deals}),
                        seeding=args.seeding, luck=args.variance_reduction, chance_samples=args.chance_samples,
                        sequential=args.sequential, alpha=args.alpha, resume=args.resume,
                        idle=_idle_workers_note(args), **backend_options(args))
    if args.resume:
        console(stderr=True).print(f"resumed: {result.resumed} of the {result.deals} deals counted from "
                                   f"{escape(args.records)}, {result.deals - result.resumed} played now",
                                   highlight=False, soft_wrap=True)
    print_result(result, config, as_json=args.json)
    return 0


def print_result(result: Any, config: dict[str, Any], as_json: bool = False, title: str | None = None,
                 extra: dict[str, Any] | None = None) -> None:
    """A match's result (eval/match.py ``MatchResult``) as the table ``match`` prints, with the pooled rows of
    alike entries, or as one JSON document (``extra``'s keys added to it); ``title`` replaces the table's
    first line (``replay --table``)."""
    if as_json:
        from tavernzoo.eval.deals import RESULTS_VERSION

        def row_json(row: Any) -> dict[str, Any]:
            return {"bot": row.bot, "games": row.games, "wins": row.wins, "draws": row.draws, "losses": row.losses,
                    "score": row.score, "score_ci": list(row.score_ci), "mean_return": row.mean_return,
                    **({"corrected_score": row.corrected, "corrected_ci": list(row.corrected_ci)}
                       if row.corrected is not None else {}),
                    **({"bot_stats": row.bot_stats} if row.bot_stats else {})}

        rows = [row_json(row) for row in result.rows]
        pooled = [{**row_json(row), "entries": _entries(row, result),
                   "fair_share": _entries(row, result) / result.seats} for row in result.pooled]
        print(json.dumps({"game": result.game, "games": result.games, "deals": result.deals, "seats": result.seats,
                          **({"resumed_deals": result.resumed} if result.resumed else {}),
                          "seed": result.seed, "results_version": RESULTS_VERSION,
                          **({"seeding": result.seeding} if result.seeding else {}),
                          "config": config, **({"variance_reduction": result.luck} if result.luck else {}),
                          **({"sequential": result.sequential} if result.sequential else {}),
                          **(extra or {}), "rows": rows,
                          **({"pooled": pooled} if pooled else {})}, indent=1))
        return
    table = Table(title=title or f"{result.game}: {result.games} games ({result.deals} deals x {result.seats} "
                  f"seatings), seed {result.seed}" + (", seeding v1" if result.seeding == "v1" else ""),
                  title_justify="left")
    from rich.markup import escape

    from tavernzoo.eval.leaderboard import llm_cells, llm_columns  # llm: bots' columns (agents/llm.py)
    from tavernzoo.eval.stats import sequential_line

    llm = llm_columns(row.bot_stats for row in result.rows) if any(row.bot_stats for row in result.rows) else ()
    corrected = any(row.corrected is not None for row in result.rows)
    for column in ("bot", "games", "wins", "draws", "losses", "score", "95% interval", "mean return",
                   *(("luck-corrected", "its 95% interval") if corrected else ()), *llm):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in result.rows:
        table.add_row(Text(row.bot), str(row.games), str(row.wins), str(row.draws), str(row.losses),
                      f"{row.score:.3f}", f"{row.score_ci[0]:.3f} - {row.score_ci[1]:.3f}", f"{row.mean_return:+.3f}",
                      *(_corrected_cells(row) if corrected else ()), *(llm_cells(row.bot_stats, llm) if llm else ()))
    console().print(table)
    if result.luck:
        from tavernzoo.eval.luck import meter_words

        console().print(f"luck-corrected: each game's luck at its chance events measured by "
                        f"{escape(meter_words(result.luck))} and taken out of the score (docs/strength.md, "
                        "'Luck taken out')",
                        highlight=False, soft_wrap=True)
    if result.sequential:
        line = sequential_line(result.sequential, result.seats)
        console().print(escape(line), highlight=False, soft_wrap=True)
    if result.pooled:  # a spec entered more than once: how its entries did together (A B A B: each pair)
        teams = Table(title="pooled by bot spec: the entries' share of the wins together", title_justify="left")
        for column in ("bot", "entries", "wins", "share", "fair share", "95% interval", "mean return"):
            teams.add_column(column, justify="left" if column == "bot" else "right")
        for row in result.pooled:
            entries = _entries(row, result)
            teams.add_row(Text(row.bot), str(entries), str(row.wins), f"{row.score:.3f}",
                          f"{entries / result.seats:.3f}", f"{row.score_ci[0]:.3f} - {row.score_ci[1]:.3f}",
                          f"{row.mean_return:+.3f}")
        console().print(teams)


def _corrected_cells(row: Any) -> tuple[str, str]:
    if row.corrected is None:
        return ("", "")
    return (f"{row.corrected:.3f}", f"{row.corrected_ci[0]:.3f} - {row.corrected_ci[1]:.3f}")


def _idle_workers_note(args: argparse.Namespace) -> Callable[[int, int, bool], None]:
    """What play_match calls where ``--workers`` asks for more processes than the match has blocks of deals
    left to play (with ``--resume``, the deals its records do not hold yet): a note on stderr, since a block is
    played in one process, the rest would sit idle, and a slow match of a few dozen deals runs in one process."""
    from tavernzoo.eval.match import BLOCK_DEALS

    block_deals = BLOCK_DEALS if args.block_deals is None else args.block_deals

    def note(blocks: int, left: int, resumed: bool) -> None:
        deals = f"the {left} deal(s) left to play" if resumed else f"{left} deal(s)"
        console(stderr=True).print(
            f"note: --workers {args.workers}, but {deals} make {blocks} block(s) of up to {block_deals} "
            f"deals, and one process plays a block: {blocks} process(es) will play this match. For parallel "
            "games, play more deals or smaller blocks (--block-deals 1: a block per deal).", highlight=False)

    return note


def _entries(pooled_row: Any, result: Any) -> int:
    """How many entries a pooled row holds: each of them played every game of the match."""
    return pooled_row.games // result.games
