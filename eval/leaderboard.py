"""A tournament's results printed: the leaderboard (and SPRT, forfeits) as a rich table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .stats import sequential_line


def print_results(results: dict[str, Any], file=None) -> None:
    """The leaderboard (and SPRT, forfeits) as a rich table."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from tavernzoo.userio import console as make_console

    console = Console(file=file) if file is not None else make_console()
    duel = results["seats"] == 2
    title = (f"{results['game']} {results['format']}: {results['games']} games, {results['deals']} deals x "
             f"{results['seats']} seatings, seed {results['seed']}")
    table = Table(title=title, title_justify="left")
    columns = ["#", "bot", "games", "W-D-L", "forfeits", "score [95%]", "deal score [95%]"]
    corrected = results.get("variance_reduction") is not None
    columns += ["luck-corrected [95%]"] if corrected else []
    columns += ["Elo", "LOS"] if duel else ["avg place", "mu", "sigma", "ordinal"]
    stats = [row.get("bot_stats") for row in results["leaderboard"]]
    llm = llm_columns(stats) if any(stats) else ()
    columns += list(llm)
    for column in columns:
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in results["leaderboard"]:
        # A spec as plain text: rich markup would eat its brackets (sandbox[memory=64]:cmd:...).
        cells = [str(row["rank"]), Text(row["bot"]), str(row["games"]), f"{row['wins']}-{row['draws']}-{row['losses']}",
                 str(row["forfeits"]), _with_ci(row["score"], row["score_ci"]),
                 _with_ci(row["deal_score"], row["deal_score_ci"])]
        if corrected:
            cells.append(_with_ci(row.get("corrected_score"), row.get("corrected_ci") or (None, None)))
        if duel:
            elo, error = row.get("elo"), row.get("elo_error")
            cells += [("-" if elo is None else f"{elo:+.0f}") + ("" if error is None else f" ± {error:.0f}"),
                      f"{100 * row['los']:.1f}%"]
        else:
            cells += [_fmt(row["avg_place"], ".2f"), f"{row['mu']:.2f}", f"{row['sigma']:.2f}", f"{row['ordinal']:.2f}"]
        if llm:
            cells += llm_cells(row.get("bot_stats"), llm)
        table.add_row(*cells)
    console.print(table)
    if not results["cycle"]["complete"]:
        console.print(f"[yellow]note:[/] the schedule covers every pair in every seat after "
                      f"{results['cycle']['deals']} deals; this run has {results['deals']}", highlight=False)
    if corrected:
        from .luck import meter_words

        console.print(f"luck-corrected: the deal score less each game's luck at its chance events, measured by "
                      f"{meter_words(results['variance_reduction']['bot'])} (docs/strength.md, 'Luck taken out'); "
                      "the ratings count the plain outcomes", highlight=False, markup=False, soft_wrap=True)
    sequential = results.get("sequential")
    if sequential:
        line = sequential_line(sequential, results["seats"])
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    sprt = results.get("sprt")
    if sprt:
        verdict = {"H1": "H1 accepted (the first bot is better)", "H0": "H0 accepted (not better)"}.get(
            sprt["decision"], "no decision yet")
        console.print(f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] alpha {sprt['alpha']:g} beta {sprt['beta']:g}: "
                      f"LLR {sprt['llr']:.2f} ({sprt['lower']:.2f}, {sprt['upper']:.2f}) after {sprt['games']} "
                      f"games: {verdict}", highlight=False)
    if results["forfeits"]:
        console.print(f"{len(results['forfeits'])} forfeit(s); the first:", highlight=False)
        for item in results["forfeits"][:5]:
            console.print(f"  deal {item['deal']} rotation {item['rotation']}: {item['bot']} ({item['kind']}) "
                          f"{item['reason']}", highlight=False, markup=False)


def _with_ci(value: float | None, interval: Sequence[float | None]) -> str:
    if value is None:
        return "-"
    if None in interval:  # a corrected score of fewer than two deals
        return f"{value:.3f}"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


LLM_COLUMNS = ("requests", "forced", "illegal", "LLM forfeits", "tokens in/out", "s/move")
"""Columns for bots that count their requests (``llm:`` bots' ``bot_stats``; ``forced``: moves with one legal
action, played without a request); '-' for the others."""

LLM_COUNTED_COLUMNS = {"fallbacks": "fallbacks", "retries": "retries", "reasoning tokens": "reasoning_tokens"}
"""Columns shown after ``LLM forfeits`` where any row's stats count them (:func:`llm_columns`; stats written
before these counts existed have none): moves the ``fallback`` bot played, requests tried again, reasoning tokens."""


def llm_columns(stats: Iterable[dict[str, Any] | None]) -> tuple[str, ...]:
    """:data:`LLM_COLUMNS` with the :data:`LLM_COUNTED_COLUMNS` that any of the rows' ``stats`` hold."""
    held = {key for row in stats if row for key in row}
    counted = tuple(column for column, key in LLM_COUNTED_COLUMNS.items() if key in held)
    return LLM_COLUMNS[:4] + counted + LLM_COLUMNS[4:]


def llm_cells(stats: dict[str, Any] | None, columns: Sequence[str] = LLM_COLUMNS) -> list[str]:
    """The ``columns`` cells (:data:`LLM_COLUMNS`, or :func:`llm_columns`) of one row's summed ``bot_stats``."""
    if not stats:
        return ["-"] * len(columns)
    moves = stats.get("moves", 0)
    cells = {"requests": str(stats.get("requests", 0)), "forced": str(stats.get("forced", 0)),
             "illegal": str(stats.get("illegal", 0)), "LLM forfeits": str(stats.get("forfeits", 0)),
             "tokens in/out": f"{stats.get('tokens_in', 0)}/{stats.get('tokens_out', 0)}",
             "s/move": f"{stats.get('latency_s', 0) / moves:.2f}" if moves else "-"}
    cells.update((column, str(stats.get(key, 0))) for column, key in LLM_COUNTED_COLUMNS.items())
    return [cells[column] for column in columns]
