"""``tavernzoo expert GAME --teacher SPEC``: a policy trained on a teacher's moves (train/expert.py).

``tavernzoo expert --resume RUN [--rounds N]`` continues a run with its recorded recipe; a recipe option given
with it must say what the run recorded (an option that would change the recipe is refused, naming it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tavernzoo.eval.backends import BACKENDS
from tavernzoo.eval.deals import SEEDINGS
from tavernzoo.train.config import make_train_config
from tavernzoo.train.expert import EVAL_GAMES, VALUE_TARGETS, ExpertConfig, resume_expert, run_expert
from tavernzoo.userio import parse_set

DEFAULTS = ExpertConfig()

# Recipe options: the command-line flag of each ExpertConfig field. With --resume, one given with a value other
# than the run's recorded one is refused (--rounds, --workers, --backend and --address may change: they change no
# round's result).
RECIPE_FLAGS = {"teacher": "--teacher", "opponents": "--opponents", "games": "--games", "epochs": "--epochs",
                "dagger": "--dagger", "prior_student": "--prior-student", "rollout_student": "--rollout-student",
                "belief_student": "--belief-student", "value_target": "--value-target",
                "value_student": "--value-student",
                "learning_rate": "--lr", "init": "--init", "samples": "--samples",
                "balance_samples": "--balance-samples", "critic_only": "--critic-only", "eval_games": "--eval-games",
                "eval_opponents": "--eval-opponents", "eval_seeding": "--eval-seeding"}


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "expert", help="expert iteration: train the network on a teacher's moves (mcts visits, the oracle)",
        description="Play seeded games in which a teacher bot (mcts: its visit counts; the Tiny Minotaur oracle: "
        "its optimal moves; any bot: its moves) labels every decision, train the training network on those "
        "targets, and repeat with the student playing part of the moves (DAgger). After each round the student "
        "plays --eval-games seat-rotated duplicate-deal games against --eval-opponents (the strength line). The "
        "result is an ordinary training run: export it, use it as a bot, or fine-tune it with `tavernzoo train "
        "--resume DIR`. A killed or finished run continues with `tavernzoo expert --resume DIR --rounds N`.")
    parser.add_argument("game", nargs="?", help="game name (not needed with --resume)")
    parser.add_argument("--resume", metavar="RUN", help="continue the expert run RUN after its last completed "
                        "round, with its recorded recipe and samples, up to --rounds rounds in all")
    parser.add_argument("--teacher", metavar="SPEC", help=f"the teacher bot spec (default {DEFAULTS.teacher})")
    parser.add_argument("--opponents", metavar="SPEC", help="a bot spec for the unlabelled seats (default: the "
                        "teacher plays every seat); with it, one seat a game, rotating, is the teacher's")
    parser.add_argument("--rounds", type=int, metavar="N", help="collect/train rounds in all (default 1; with "
                        "--resume, the run's recorded number)")
    parser.add_argument("--games", type=int, help=f"games per round (default {DEFAULTS.games})")
    parser.add_argument("--epochs", type=int, help=f"passes over all samples per round (default {DEFAULTS.epochs})")
    parser.add_argument("--dagger", type=float,
                        help="from round 2 (round 1 with --init), the share of labelled moves the student "
                        f"plays (default {DEFAULTS.dagger})")
    parser.add_argument("--prior-student", action="store_true", default=None,
                        help="an mcts teacher searches with the latest student as its prior")
    parser.add_argument("--rollout-student", action="store_true", default=None,
                        help="an mcts teacher rolls out with the latest student (with root=paired and "
                        "--prior-student: approximate policy iteration, each round improving on the student)")
    parser.add_argument("--belief-student", action="store_true", default=None,
                        help="an mcts teacher deals the hidden cards in proportion to how likely the latest "
                        "student makes the other seats' moves (belief=, docs/search.md; from round 2, or round 1 "
                        "with --init)")
    parser.add_argument("--value-target", choices=VALUE_TARGETS,
                        help="what the student's critic learns: return (default), the seat's final return in "
                        "the game; search, an mcts teacher's root value at the position")
    parser.add_argument("--value-student", action="store_true", default=None,
                        help="an mcts teacher scores its leaves with the latest student's value head, from "
                        "round 2 on, or round 1 where --init names a bot with a trained critic (a checkpoint "
                        "or run, a bot exported with its value output); "
                        "the teacher's rollouts keep the game's default depth (MiniSteel 20 decisions, Wyvern 100 "
                        "since 2026-12-06, then the value; Tiny Minotaur, Minefield: 0, the value alone); depth=D "
                        "in the teacher spec sets it")
    parser.add_argument("--lr", type=float, help=f"Adam learning rate (default {DEFAULTS.learning_rate})")
    parser.add_argument("--init", metavar="BOT", help="start the student from this policy's weights: a checkpoint "
                        "or run, BOT.onnx or zoo:GAME (its hidden sizes must match net_arch)")
    parser.add_argument("--samples", metavar="RUN", action="append",
                        help="start from the labelled positions of an earlier expert run (RUN or "
                        "RUN/expert/samples.npz; same game and table) or a samples file (e.g. best-response "
                        "positions, `tavernzoo exploit BOT --exact-only --positions FILE`); repeatable, all are "
                        "kept; with --games 0, only retrain")
    parser.add_argument("--balance-samples", action="store_true", default=None,
                        help="give each --samples source the same share of the policy loss, whatever its count "
                        "of positions (their rows weighted; two or more sources)")
    parser.add_argument("--critic-only", action="store_true", default=None,
                        help="fit only the student's critic (its value head) on the positions' values, the actor's "
                        "weights left exactly as they are: a value head for a bot that has none, such as a "
                        "checkpoint trained with privileged_critic=true, without changing how it plays")
    parser.add_argument("--eval-games", type=int, metavar="N", help="after each round, the student's games against "
                        f"--eval-opponents, duplicate deals, seats rotated (default {EVAL_GAMES}; 0: none)")
    parser.add_argument("--eval-opponents", metavar="SPEC", help="the bot spec in every other seat of those games "
                        f"(default {DEFAULTS.eval_opponents})")
    parser.add_argument("--eval-seeding", choices=SEEDINGS, help="the seed scheme of those games (default "
                        f"{DEFAULTS.eval_seeding}, every host's; v1 deprecated, for figures published before "
                        "2026-12-05; a run resumed keeps its own: one from before then, v1)")
    parser.add_argument("--workers", type=int, help=f"processes playing games (default {DEFAULTS.workers}; "
                        "with --resume it may change: the samples do not depend on it)")
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="local (default: --workers processes) or ray: the labelled games and the strength "
                        "games as Ray tasks, with the same samples and figures (pip install 'tavernzoo[ray]'; "
                        "docs/distributed.md); with --resume it may change")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster to join (HOST:PORT or auto; "
                        "default: start one on this machine)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a training option of the student (repeatable), as for `tavernzoo train`")
    parser.add_argument("--seed", type=int, help="seed (default 0)")
    parser.add_argument("--out", metavar="DIR", help="run directory (default: runs/GAME-expert-seedSEED)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars (they are hidden "
                        "anyway when stderr is not a terminal)")
    parser.set_defaults(run=run_command)
    return parser


def given_recipe(args: argparse.Namespace) -> dict[str, Any]:
    """The recipe options given on the command line, by ExpertConfig field."""
    values = {field: getattr(args, flag[2:].replace("-", "_")) for field, flag in RECIPE_FLAGS.items()
              if field != "learning_rate"}
    values["learning_rate"] = args.lr
    if isinstance(values.get("samples"), list) and len(values["samples"]) == 1:
        values["samples"] = values["samples"][0]  # as ExpertConfig keeps one source
    return {field: value for field, value in values.items() if value is not None}


def run_command(args: argparse.Namespace) -> int:
    progress = not args.no_progress and sys.stderr.isatty()
    if args.resume:
        check_resume(args)
        report = resume_expert(args.resume, rounds=args.rounds, workers=args.workers, progress=progress,
                               backend=args.backend, address=args.address)
        out = args.resume
    else:
        if args.game is None:
            raise ValueError("name the game (tavernzoo expert GAME ...), or continue a run with --resume RUN")
        overrides = parse_set(args.set, lists=frozenset({"pool_bots", "net_arch"}))
        train_config = make_train_config(args.game, None, overrides, seed=args.seed)
        expert = ExpertConfig(**given_recipe(args), **{k: v for k, v in (("rounds", args.rounds),
                                                                        ("workers", args.workers)) if v is not None})
        out = args.out or f"runs/{train_config.game}-expert-seed{train_config.seed}"
        report = run_expert(train_config, expert, out, progress=progress, backend=args.backend,
                            address=args.address)
    print(f"checkpoint: {report['checkpoint']}  (a bot spec; export it, or fine-tune with "
          f"`tavernzoo train --resume {out}`)")
    print(json.dumps(report["rounds"][-1], indent=1))
    return 0


def check_resume(args: argparse.Namespace) -> None:
    """Refuse, in one message naming them, the options given with --resume that differ from the run's record."""
    from pathlib import Path

    from tavernzoo.train.expert import _read_report
    from tavernzoo.train.run import Trainer

    where = f"--resume {args.resume}"
    if args.out is not None and Path(args.out) != Path(args.resume):
        raise ValueError(f"{where} continues the run in place; --out {args.out} names another directory")
    given = given_recipe(args)
    if not given and args.game is None and not args.set and args.seed is None:
        return
    if not (Path(args.resume) / "expert.json").is_file():
        return  # resume_expert names what is wrong with the directory
    recorded = ExpertConfig.from_recipe(_read_report(Path(args.resume) / "expert.json", where)["recipe"], where)
    conflicts = [f"{RECIPE_FLAGS[field]} {value} (the run's: {getattr(recorded, field)})"
                 for field, value in given.items() if value != getattr(recorded, field)]
    saved = Trainer(None, args.resume, resume=True).config
    if args.game is not None and args.game != saved.game:
        conflicts.append(f"the game {args.game} (the run's: {saved.game})")
    if args.seed is not None and args.seed != saved.seed:
        conflicts.append(f"--seed {args.seed} (the run's: {saved.seed})")
    if args.set:
        overrides = parse_set(args.set, lists=frozenset({"pool_bots", "net_arch"}))
        asked = make_train_config(saved.game, None, overrides, seed=saved.seed).to_dict()
        stored = saved.to_dict()
        conflicts += [f"--set {key}={asked[key]!r} (the run's: {stored.get(key)!r})" for key in overrides
                      if asked.get(key) != stored.get(key)]
    if conflicts:
        raise ValueError(f"{where}: the run keeps its recorded recipe; these options differ from it: "
                         f"{'; '.join(conflicts)}. Leave them out, or start a new run with --out")
