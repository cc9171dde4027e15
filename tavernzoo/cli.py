"""The ``tavernzoo`` command: one entry point, one subcommand per job.

    tavernzoo games                          list the games, their options and defaults
    tavernzoo match [GAME] --bots A B ...    seat-rotated games between bots, with a result table
                                             (--workers K, or --backend ray [--address ADDR])
    tavernzoo train [GAME]                   self-play training; checkpoints become bots
    tavernzoo tournament GAME --bots A B ... round-robin or gauntlet with ratings, forfeits and resume
    tavernzoo leaderboard RUN...             one rating table across tournaments and matches that share bots
    tavernzoo sweep GAME --grid KEY=V1,V2    hyperparameter sweep on Ray Tune (grid/random, ASHA, PBT)
    tavernzoo expert GAME --teacher SPEC     a policy trained on a teacher's moves (oracle, mcts visits; DAgger)
    tavernzoo exploit BOT                    a best response trained against BOT (Tiny Minotaur: also exact)
    tavernzoo rllib GAME                     the RLlib recipe: multi-agent PPO with action masks, on Ray
    tavernzoo wyvern validate DECK_FILE      check a Wyvern deck against the deck-building rules
    tavernzoo export CHECKPOINT --out BOT    a trained policy as ONNX + a JSON manifest (numpy/onnxruntime to load)
    tavernzoo blend A B --weight W --out DIR two policies of one lineage blended by weight interpolation
    tavernzoo zoo                            the bundled pretrained bots and their measured strength
    tavernzoo bot SPEC / serve --bot SPEC    any bot over the bot protocol (stdin/stdout, or HTTP on loopback)
    tavernzoo play GAME --vs SPEC            play against bots in the terminal
    tavernzoo web                            play, watch and replay games in a browser (on loopback)
    tavernzoo mcp                            tavernzoo's tables as an MCP server (stdio), for LLM agents
    tavernzoo bot check CMD                  a bot-protocol compliance run of an external program
    tavernzoo replay FILE                    replay a game record (JSON, or JSON lines) and check it
"""

from __future__ import annotations

import argparse
import importlib
import sys

# The helpers the commands share, importable from here as before (tests, scripts).
from tavernzoo.commands.common import ExactParser, add_config_arguments, fail, parse_config, run_guarded
from tavernzoo.userio import MAX_CONFIG_BYTES, console, parse_set, read_table_file

__all__ = ["COMMANDS", "MAX_CONFIG_BYTES", "add_config_arguments", "build_parser", "console", "fail", "main",
           "parse_config", "parse_set", "read_table_file", "run_guarded"]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 0
    return run_guarded(args.run, args)


# Every command, in the order ``tavernzoo --help`` lists them, with the help line it shows there. Each is
# the module ``tavernzoo.commands.NAME``, with ``add_parser(commands)`` (adding the real parser, whose
# ``run`` default runs it); it is imported only when its command runs, so ``tavernzoo games`` never loads
# the tournament runner, the web server or Ray. To add a command: one line here, one module there.
COMMANDS: dict[str, str] = {
    "games": "list the games with their options and defaults",
    "match": "play seat-rotated games between bots and print the result table",
    "train": "train a policy by self-play (MaskablePPO against an opponent league)",
    "wyvern": "Wyvern TCG tools (deck validation)",
    "tournament": "a tournament between bots: duplicate deals, every seat, ratings, forfeits, resume",
    "leaderboard": "one rating table across tournaments and matches that share bots (LLM seats beside the others)",
    "sweep": "hyperparameter sweep on Ray Tune (grid/random search, ASHA, PBT)",
    "expert": "train a policy on a teacher's moves: oracle distillation, expert iteration",
    "exploit": "how exploitable a bot is: train a best response to it, measure it (Tiny Minotaur: exactly)",
    "rllib": "train a game multi-agent on RLlib with action masks (a recipe)",
    "export": "export a trained checkpoint as an ONNX bot with a JSON manifest",
    "blend": "blend two policies of one lineage by weight interpolation (a new checkpoint)",
    "zoo": "list the bundled pretrained bots (bot spec zoo:GAME)",
    "bot": "serve a bot over the bot protocol on stdin/stdout (JSON lines)",
    "serve": "serve a bot over the bot protocol on HTTP (for web frontends)",
    "play": "play a game in the terminal against bots",
    "web": "play, watch and replay games in a browser (a page served on loopback)",
    "mcp": "serve tavernzoo's tables to MCP clients over stdio (docs/llm.md)",
    "replay": "replay game records and check they reproduce their results",
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line: the command named in ``argv`` (default ``sys.argv[1:]``; its first word
    that is not an option) from its module, every other one as a help line only (never parsed: argparse
    dispatches on that first word)."""
    parser = ExactParser(
        prog="tavernzoo",
        description="PettingZoo environments, bots and matches for tabletop and chat games.",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=ExactParser)
    words = [word for word in (sys.argv[1:] if argv is None else argv) if not word.startswith("-")]
    chosen = words[0] if words else None
    for name, help_line in COMMANDS.items():
        if name == chosen:
            importlib.import_module(f"tavernzoo.commands.{name}").add_parser(commands)
        else:
            commands.add_parser(name, help=help_line, add_help=False)
    return parser


if __name__ == "__main__":
    sys.exit(main())
