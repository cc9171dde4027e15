"""The ``tavernzoo`` command: one entry point, one subcommand per job.

    tavernzoo games                          list the games, their options and defaults
    tavernzoo match [GAME] --bots A B ...    seat-rotated games between bots, with a result table
                                             (--workers K, or --backend ray [--address ADDR])
    tavernzoo train [GAME]                   self-play training; checkpoints become bots
    tavernzoo tournament GAME --bots A B ... round-robin or gauntlet with ratings, forfeits and resume
    tavernzoo sweep GAME --grid KEY=V1,V2    hyperparameter sweep on Ray Tune (grid/random, ASHA, PBT)
    tavernzoo expert GAME --teacher SPEC     a policy trained on a teacher's moves (oracle, mcts visits; DAgger)
    tavernzoo exploit BOT                    a best response trained against BOT (Tiny Minotaur: also exact)
    tavernzoo rllib GAME                     the RLlib recipe: multi-agent PPO with action masks, on Ray
    tavernzoo wyvern validate DECK_FILE      check a Wyvern deck against the deck-building rules
    tavernzoo export CHECKPOINT --out BOT    a trained policy as ONNX + a JSON manifest (numpy/onnxruntime to load)
    tavernzoo zoo                            the bundled pretrained bots and their measured strength
    tavernzoo bot SPEC / serve --bot SPEC    any bot over the bot protocol (stdin/stdout, or HTTP on loopback)
    tavernzoo play GAME --vs SPEC            play against bots in the terminal
    tavernzoo web                            play, watch and replay games in a browser (on loopback)
    tavernzoo bot check CMD                  a bot-protocol compliance run of an external program
    tavernzoo replay FILE                    replay a game record (JSON, or JSON lines) and check it
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 0
    return run_guarded(args.run, args)


def run_guarded(run, args: argparse.Namespace) -> int:
    """``run(args)``, with a user's mistake (ValueError, OSError), a failed external bot or Ctrl-C reported
    as one line on stderr and an exit status instead of a traceback."""
    from tavernzoo.agents.external import BotFailure

    try:
        return run(args)
    except BrokenPipeError:
        # The reader left (`tavernzoo zoo | head -3`): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (ValueError, OSError) as error:
        return fail(_describe(error))
    except BotFailure as failure:
        return fail(f"an external bot failed ({failure.kind}): {failure.reason}", status=1)
    except KeyboardInterrupt:
        return fail("interrupted", status=130)


def fail(message: str, status: int = 2) -> int:
    """Print ``error: message`` on stderr as one line; return the exit status."""
    console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False)
    return status


def _describe(error: Exception) -> str:
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def console(stderr: bool = False) -> Console:
    """A rich console; when its output is not a terminal (a pipe, a file) lines are never wrapped, so
    that every table row stays one line for grep and friends."""
    out = Console(stderr=stderr)
    if not out.is_terminal:
        out = Console(stderr=stderr, width=10_000)
    return out


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line. Subcommands defined in other modules (``COMMAND_MODULES``) are built only
    for the command in ``argv`` (default ``sys.argv[1:]``): see :func:`add_commands_from_modules`."""
    parser = argparse.ArgumentParser(
        prog="tavernzoo",
        description="PettingZoo environments, bots and matches for tabletop and chat games.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    games = commands.add_parser("games", help="list the games with their options and defaults",
                                description="List every game, its env name, player counts and options.")
    games.add_argument("--json", action="store_true", help="print machine-readable JSON instead of tables")
    games.set_defaults(run=run_games)

    match = commands.add_parser(
        "match",
        help="play seat-rotated games between bots and print the result table",
        description="Play deals between bots, each deal once per seat rotation (seats swapped in a duel), "
        "and print wins, draws, losses and the score with its 95%% interval.",
    )
    match.add_argument("game", nargs="?", default="tiny_minotaur", help="game name (default: tiny_minotaur)")
    match.add_argument("--bots", nargs="+", default=["heuristic", "random"], metavar="SPEC",
                       help="one bot spec per seat: random, heuristic, ... (default: heuristic random)")
    match.add_argument("--games", type=int, default=1000,
                       help="games to play, rounded up to whole deals (default 1000)")
    match.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    _add_config_arguments(match)
    match.add_argument("--records", metavar="FILE", help="append every finished game's record to FILE (JSON lines)")
    match.add_argument("--no-progress", action="store_true", help="hide the progress bar (hidden anyway when "
                       "stderr is not a terminal)")
    match.add_argument("--json", action="store_true", help="print the result as one JSON document")
    from tavernzoo.eval.ray_backend import add_backend_arguments  # tourney: --workers, --backend, --address

    add_backend_arguments(match)
    match.set_defaults(run=run_match)

    train = commands.add_parser(
        "train",
        help="train a policy by self-play (MaskablePPO against an opponent league)",
        description="Train a policy for GAME by self-play; checkpoints become bots (pass the run directory "
        "or a checkpoint as a bot spec). With no options: the game's default budget (about 10 minutes "
        "on 2 cores), then a report against random and the heuristic.",
    )
    train.add_argument("game", nargs="?", default="tiny_minotaur", help="game name (default: tiny_minotaur)")
    train.add_argument("--timesteps", type=int, help="learner decisions to train for (default: per game)")
    train.add_argument("--config", metavar="FILE", help="training options from a TOML file ([train] table)")
    train.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="one training option (repeatable), e.g. n_envs=8 or game_config={\"num_players\": 3}")
    train.add_argument("--out", metavar="DIR", help="run directory (default: runs/GAME-seedSEED)")
    train.add_argument("--resume", metavar="DIR", help="continue the killed or finished run in DIR")
    train.add_argument("--seed", type=int, help="seed of the run (default 0)")
    train.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    train.set_defaults(run=run_train)

    # `tavernzoo exploit`: the parser and a call into train/exploit.py (docs/strength.md).
    exploit = commands.add_parser(
        "exploit", help="how exploitable a bot is: train a best response to it, measure it (Tiny Minotaur: exactly)",
        description="Train an exploiter by MaskablePPO against frozen copies of BOT in every other seat (from "
        "BOT's own weights where BOT is a trained policy), then play duplicate deals with seats rotated and "
        "print the exploiter's share of the wins (its score in a duel) with its 95% interval and the gain over "
        "the fair share. For Tiny Minotaur also the exact best response to BOT's policy, in milli-points.")
    exploit.add_argument("bot", metavar="BOT", help="the bot spec to exploit (zoo:GAME, BOT.onnx, a checkpoint or "
                         "run, or with --from-scratch any bot)")
    exploit.add_argument("--game", help="the game (default: the one a trained BOT was made for)")
    exploit.add_argument("--timesteps", type=int, default=200_000,
                         help="the exploiter's training budget in learner decisions (default 200000)")
    exploit.add_argument("--games", type=int, default=1000, help="games of the measurement (default 1000)")
    exploit.add_argument("--from-scratch", action="store_true",
                         help="a fresh learner (required for bots without weights: rule bots, mcts, cmd:)")
    exploit.add_argument("--no-exact", action="store_true", help="Tiny Minotaur: skip the exact best response")
    exploit.add_argument("--exact-only", action="store_true",
                         help="Tiny Minotaur: only the exact best response (no training, nothing written)")
    exploit.add_argument("--sample", type=int, default=0, metavar="N",
                         help="Tiny Minotaur: solve N deals drawn by their odds instead of all (an estimate with "
                         "its 95%% interval; each deal exact)")
    exploit.add_argument("--out", metavar="DIR", help="run directory (default: runs/GAME-exploit-seedSEED)")
    exploit.add_argument("--resume", action="store_true", help="continue the interrupted exploit run in --out "
                         "(trained on to --timesteps), then measure")
    exploit.add_argument("--seed", type=int, default=0, help="seed of the training and the deals (default 0)")
    exploit.add_argument("--train-set", action="append", default=[], metavar="KEY=VALUE",
                         help="one training option (repeatable), e.g. n_envs=16")
    _add_config_arguments(exploit)
    exploit.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    exploit.add_argument("--json", action="store_true", help="print the report as one JSON document")
    exploit.set_defaults(run=run_exploit_command)

    wyvern = commands.add_parser("wyvern", help="Wyvern TCG tools (deck validation)",
                                 description="Tools for Wyvern TCG's own decks.")
    wyvern_tools = wyvern.add_subparsers(title="tools", metavar="TOOL")
    validate = wyvern_tools.add_parser(
        "validate", help="check a deck file against the deck-building rules (exit 1 if illegal)",
        description="Check a Wyvern deck (a TOML file, or a bundled deck name) against every deck-building "
        "rule; print each broken rule; exit status 1 for an illegal deck.")
    validate.add_argument("deck_file", help="deck TOML file or bundled deck name")
    validate.set_defaults(run=run_wyvern_validate)

    add_commands_from_modules(commands, argv)

    replay = commands.add_parser("replay", help="replay game records and check they reproduce their results",
                                 description="Replay a record (JSON) or every record in a JSON-lines file.")
    replay.add_argument("file", help="a record .json or a .jsonl of records (as written by match --records)")
    replay.add_argument("--show", action="store_true", help="print the final table of each replayed game")
    replay.set_defaults(run=run_replay)
    return parser


# Subcommands defined next to their code, by name: (module, the help line ``tavernzoo --help`` shows).
# The module has ``add_parser(commands)``, which adds the real parser (it may add several commands);
# it is imported only when its command runs, so ``tavernzoo games`` never loads the tournament runner,
# the web server or Ray. To add a command: one line here, ``add_parser`` in its module.
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "tournament": ("tavernzoo.eval.tournament",
                   "a tournament between bots: duplicate deals, every seat, ratings, forfeits, resume"),
    "sweep": ("tavernzoo.train.sweep", "hyperparameter sweep on Ray Tune (grid/random search, ASHA, PBT)"),
    "expert": ("tavernzoo.train.expert", "train a policy on a teacher's moves: oracle distillation, expert iteration"),
    "rllib": ("tavernzoo.train.rllib_recipe", "train a game multi-agent on RLlib with action masks (a recipe)"),
    "export": ("tavernzoo.agents.export", "export a trained checkpoint as an ONNX bot with a JSON manifest"),
    "zoo": ("tavernzoo.agents.onnx_bot", "list the bundled pretrained bots (bot spec zoo:GAME)"),
    "bot": ("tavernzoo.agents.bot_server", "serve a bot over the bot protocol on stdin/stdout (JSON lines)"),
    "serve": ("tavernzoo.agents.bot_server", "serve a bot over the bot protocol on HTTP (for web frontends)"),
    "play": ("tavernzoo.agents.play", "play a game in the terminal against bots"),
    "web": ("tavernzoo.web", "play, watch and replay games in a browser (a page served on loopback)"),
}


def add_commands_from_modules(commands: Any, argv: list[str] | None) -> None:
    """Add the ``COMMAND_MODULES`` commands: the one named in ``argv`` (its first word that is not an
    option) from its module, every other one as a help line only (never parsed: argparse dispatches on
    that first word)."""
    import importlib

    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    chosen = COMMAND_MODULES.get(words[0]) if words else None
    if chosen is not None:
        importlib.import_module(chosen[0]).add_parser(commands)
    registered = set(commands.choices)
    for name, (_, help_line) in COMMAND_MODULES.items():
        if name not in registered:
            commands.add_parser(name, help=help_line, add_help=False)


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="game options from a TOML or JSON file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="one game option (repeatable); VALUE is JSON or a comma list: classes=sword,magic")


MAX_CONFIG_BYTES = 1 << 20


def parse_config(args: argparse.Namespace) -> dict[str, Any]:
    """Game options from ``--config FILE`` then ``--set KEY=VALUE`` (later wins)."""
    options: dict[str, Any] = {}
    if args.config:
        options.update(read_table_file(args.config, "--config", "game options",
                                       ' (JSON: {"num_players": 3}, or a .toml file)'))
    options.update(parse_set(args.set))
    return options


def read_table_file(file: str | Path, what: str, holds: str, hint: str = "") -> dict[str, Any]:
    """The table (dict) in a TOML file (``.toml``) or a JSON file, or a ValueError naming ``file``."""
    path = Path(file)
    try:
        with open(path, "rb") as handle:  # read at most the limit: a device or a pipe has no size
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ValueError(f"{what} {file} is over {MAX_CONFIG_BYTES} bytes: not a file of {holds}")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {file} is not a text file (not UTF-8)") from None
    except OSError as error:
        raise ValueError(f"{what} {file}: cannot read it ({error.strerror or error})") from None
    toml = path.suffix == ".toml"
    try:
        loaded = tomllib.loads(text) if toml else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{what} {file} is not valid {'TOML' if toml else 'JSON'}: {error}") from None
    except RecursionError:
        raise ValueError(f"{what} {file} is nested too deeply to be a table of {holds}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{what} {file} holds a {type(loaded).__name__}; it must hold a table of {holds}{hint}")
    return loaded


def parse_set(items: list[str], lists: frozenset[str] = frozenset()) -> dict[str, Any]:
    """``--set KEY=VALUE`` items as a dict: VALUE is JSON, else a comma list (each item JSON, else a
    string: ``net_arch=256,256`` is ``[256, 256]``), else a string. A plain string for a key in ``lists``
    is a one-item list."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE (VALUE is JSON or a comma list), got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = [_json_or_text(part) for part in raw.split(",")] if "," in raw or key in lists else raw
        if key in lists and not isinstance(value, list):
            value = [value]
        options[key] = value
    return options


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def run_games(args: argparse.Namespace) -> int:
    from tavernzoo.envs import games
    from tavernzoo.envs.core import describe_options

    listing = []
    for game in games().values():
        listing.append({
            "name": game.name,
            "env": game.env_name,
            "title": game.title,
            "players": [game.rules.MIN_PLAYERS, game.rules.MAX_PLAYERS],
            "simultaneous": game.simultaneous,
            "options": describe_options(game.rules.Config),
        })
    if args.json:
        print(json.dumps(listing, indent=1))
        return 0
    out = console()
    for entry in listing:
        low, high = entry["players"]
        players = f"{low} players" if low == high else f"{low}-{high} players"
        table = Table(title=f"{entry['title']}  ({entry['name']}, env {entry['env']}, {players})",
                      title_justify="left")
        table.add_column("option")
        table.add_column("default")
        table.add_column("meaning")
        for row in entry["options"]:
            meaning = row["help"] + (f" (one of: {', '.join(map(str, row['choices']))})" if row["choices"] else "")
            table.add_row(row["name"], json.dumps(row["default"]), meaning)
        out.print(table)
    return 0


def run_match(args: argparse.Namespace) -> int:
    from tavernzoo.eval.match import play_match
    from tavernzoo.eval.ray_backend import backend_options

    config = parse_config(args)
    result = play_match(args.game, args.bots, args.games, seed=args.seed, config=config,
                        progress=not args.no_progress, records_path=args.records, **backend_options(args))
    if args.json:
        rows = [{"bot": row.bot, "games": row.games, "wins": row.wins, "draws": row.draws, "losses": row.losses,
                 "score": row.score, "score_ci": list(row.score_ci), "mean_return": row.mean_return}
                for row in result.rows]
        print(json.dumps({"game": result.game, "games": result.games, "deals": result.deals, "seats": result.seats,
                          "seed": result.seed, "config": config, "rows": rows}, indent=1))
        return 0
    table = Table(title=f"{result.game}: {result.games} games ({result.deals} deals x {result.seats} seatings), "
                  f"seed {result.seed}", title_justify="left")
    for column in ("bot", "games", "wins", "draws", "losses", "score", "95% interval", "mean return"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in result.rows:
        table.add_row(row.bot, str(row.games), str(row.wins), str(row.draws), str(row.losses),
                      f"{row.score:.3f}", f"{row.score_ci[0]:.3f} - {row.score_ci[1]:.3f}", f"{row.mean_return:+.3f}")
    console().print(table)
    return 0


def run_train(args: argparse.Namespace) -> int:
    try:
        from tavernzoo.train.config import make_train_config
        from tavernzoo.train.run import Trainer
    except ImportError as error:
        raise ValueError(f"training needs the training extras ({error.name} is missing): "
                         "pip install -c constraints/cpu.txt 'tavernzoo[train]'") from None
    if args.resume:
        trainer = Trainer(None, args.resume, resume=True, timesteps=args.timesteps)
    else:
        overrides = parse_set(args.set, lists=frozenset({"pool_bots", "net_arch"}))
        config = make_train_config(args.game, args.config, overrides, timesteps=args.timesteps, seed=args.seed)
        out = args.out or f"runs/{config.game}-seed{config.seed}"
        trainer = Trainer(config, out)
    out = console()
    out.print(f"training {trainer.game.title} for {trainer.config.timesteps:,} timesteps into {trainer.out}",
                  highlight=False)
    report = trainer.run(progress=not args.no_progress and sys.stderr.isatty())
    table = Table(title=f"{trainer.game.name}: trained policy after {report['timesteps']:,} timesteps "
                  f"({report['train_seconds']:.0f} s)", title_justify="left")
    for column in ("opponents", "games", "wins", "draws", "losses", "score", "95% interval", "their score"):
        table.add_column(column, justify="left" if column == "opponents" else "right")
    for name, row in report.get("against", {}).items():
        table.add_row(f"{name} x{row['seats'] - 1}", str(row["games"]), str(row["wins"]), str(row["draws"]),
                      str(row["losses"]), f"{row['score']:.3f}",
                      f"{row['score_ci'][0]:.3f} - {row['score_ci'][1]:.3f}", f"{row['reference_score']:.3f}")
    out.print(table)
    out.print(f"checkpoint: {report['checkpoint']}  (use it as a bot spec)", highlight=False)
    return 0


def run_exploit_command(args: argparse.Namespace) -> int:
    from tavernzoo.train.exploit import exact_exploitability, plan_exploit, run_exploit

    progress = not args.no_progress and sys.stderr.isatty()
    if args.exact_only:
        if (args.game or "tiny_minotaur") != "tiny_minotaur":
            raise ValueError(f"--exact-only is for tiny_minotaur (perfect information), not {args.game}")
        report = {"bot": args.bot, "game": "tiny_minotaur",
                  "exact": exact_exploitability(args.bot, parse_config(args) or None, args.seed, progress,
                                                sample=args.sample)}
    else:
        plan = plan_exploit(args.bot, args.game, parse_config(args), timesteps=args.timesteps, games=args.games,
                            seed=args.seed, out=args.out, from_scratch=args.from_scratch,
                            exact=not args.no_exact, resume=args.resume,
                            train_options=parse_set(args.train_set, lists=frozenset({"net_arch"})))

        def log(line: str) -> None:
            if not args.json:
                console().print(line, highlight=False)

        report = run_exploit(plan, progress=progress, log=log)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    out = console()
    if not args.exact_only:
        role = "score" if report["seats"] == 2 else "share of the wins"
        out.print(f"{report['bot']} exploited after {report['timesteps']:,} timesteps "
                  f"({'warm-started' if report['warm_start'] else 'from scratch'}): exploiter's {role} "
                  f"{report['score']:.3f} (95% {report['score_ci'][0]:.3f} - {report['score_ci'][1]:.3f}) over "
                  f"{report['games']} games, gain {report['gain']:+.3f} over the fair {report['fair_share']:.3f}",
                  highlight=False)
    if "exact" in report:
        exact = report["exact"]
        if "milli_points_ci" in exact:
            low, high = exact["milli_points_ci"]
            out.print(f"estimated from {exact['deals']} of {exact['sampled_from']} deals: 95% {low:.2f} - {high:.2f}",
                      highlight=False)
        out.print(f"exact best response (Tiny Minotaur): {exact['milli_points']:.2f} milli-points per game "
                  f"(bot in seat 0: {1000 * exact['per_seat'][0]:+.2f}, seat 1: {1000 * exact['per_seat'][1]:+.2f}; "
                  f"{exact['decisions']:,} decisions of the bot, {exact['seconds']:.0f} s)", highlight=False)
    if not args.exact_only:
        out.print(f"exploiter: {report['checkpoint']}", highlight=False)
    return 0


def run_wyvern_validate(args: argparse.Namespace) -> int:
    from tavernzoo.envs.wyvern.decks import validate_main

    return validate_main([args.deck_file])


def run_replay(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from tavernzoo.envs.core import ReplayError
    from tavernzoo.envs.records import read_records, replay

    path = Path(args.file)
    console = Console()
    replayed = 0
    try:
        for line, record in read_records(path):
            try:
                game, state = replay(record)
            except ReplayError as error:
                where = f"{path}:{line}" if path.suffix == ".jsonl" else str(path)
                console.print(f"[bold red]{escape(where)}: record does not replay:[/] {escape(str(error))}",
                              highlight=False, soft_wrap=True)
                return 1
            replayed += 1
            if args.show:
                console.print(game.encoder.render(state), highlight=False)
    except ReplayError as error:  # the file itself: no records, a line that is not JSON or is too long
        Console(stderr=True).print(f"[bold red]error:[/] {escape(str(error))}", highlight=False, soft_wrap=True)
        return 2
    console.print(f"{replayed} record(s) replayed to their recorded results.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
