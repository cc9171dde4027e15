"""``tavernzoo blend FIRST SECOND --weight W --out DIR``: weight interpolation of two policies of one lineage
(agents/policy.py ``blend``; docs/training.md, "Blending two policies")."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

# What a blend's provenance keeps of each end: enough to say where it came from, not its whole history.
ANCESTRY_KEYS = ("trained_with", "timesteps", "expert_round", "checkpoint", "exported_as")


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "blend", help="blend two policies of one lineage by weight interpolation (a new checkpoint)",
        description="Write the policy whose every parameter is (1 - W) times FIRST's plus W times SECOND's, "
        "actor and (where both have one) critic, as a checkpoint directory DIR (policy.json + policy.npz): a bot "
        "spec, a start for `expert --init`, a file for `export`. FIRST and SECOND are "
        "checkpoints, training runs (their latest checkpoint), BOT.onnx or zoo:GAME, of one game, options and "
        "network shape. Blend networks of one lineage (a policy and its fine-tuned descendant, two "
        "fine-tunings of one start); networks trained apart share no coordinates.")
    parser.add_argument("first", metavar="FIRST", help="the policy at weight 0")
    parser.add_argument("second", metavar="SECOND", help="the policy at weight 1")
    parser.add_argument("--weight", type=float, required=True, metavar="W",
                        help="SECOND's share of every parameter, from 0 to 1 (0.5: the mean)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the checkpoint directory to write "
                        "(must not exist, or be empty)")
    parser.set_defaults(run=run_blend)
    return parser


def run_blend(args: argparse.Namespace) -> int:
    from tavernzoo.agents.export import read_policy, record_networks
    from tavernzoo.agents.policy import blend

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"--out {out} already exists and is not an empty directory; name a new one")
    first, second = read_policy(args.first), read_policy(args.second)
    provenance = {
        "trained_with": "tavernzoo blend (weight interpolation)",
        "blend": {"first": args.first, "second": args.second, "weight": args.weight,
                  "first_provenance": {k: first.meta[k] for k in ANCESTRY_KEYS if k in first.meta},
                  "second_provenance": {k: second.meta[k] for k in ANCESTRY_KEYS if k in second.meta}},
    }
    # the ends' files, as a run records its start's: what the blend met is what its ends met (agents/export.py)
    record_networks(provenance, [args.first, args.second], str(first.meta.get("game") or ""))
    mixed = blend(first, second, args.weight, provenance)
    # Written beside DIR and renamed into place: an interrupted blend leaves no half-written checkpoint.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        mixed.save(staging)
        if out.exists():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    one_critic = "actor blended; no critic (only one of the two has a value head)"
    critic = ("actor and critic blended" if mixed.has_value else one_critic if first.has_value or second.has_value
              else "actor blended (neither has a value head)")
    layers = "x".join(str(int(w.shape[0])) for w in mixed.weights[:-1])
    print(f"wrote {out} ({mixed.meta.get('env')}, {layers} {mixed.activation}): {1 - args.weight:g} x {args.first} "
          f"+ {args.weight:g} x {args.second}; {critic}")
    return 0
