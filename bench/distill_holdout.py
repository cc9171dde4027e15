"""Does a student learn its teacher's corrections, or only its training positions? Expert iteration's
fit (train/expert.py) measured on labelled positions it was not trained on (docs/search.md, "The
improved policy as the target").

    python bench/distill_holdout.py runs/ms-api --init runs/ms-exit --net-arch 256,256
    python bench/distill_holdout.py runs/ms-imp --init runs/ms-exit --net-arch 256,256 --fit 1e-3:5 --fit 1e-4:10

The run's samples (RUN/expert/samples.npz, or a samples file) are split in order: the first
``--train`` share (default 0.8) trains, the rest (later games) is held out. For each ``--fit LR:EPOCHS``
a fresh student starts from ``--init`` (actor and critic) and is fitted as an expert round fits it
(``train_student``, value weight and batch as there). A *departure* is a position where the target's most
likely move is not the starting student's. Printed per fit, on the held-out positions: the
cross-entropy to the targets (before: the starting student's), the share of departures where the
student now plays the target's move ("learnt"), and the share of the other positions where it still
plays its own ("kept"); and the same two on the training positions.
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import numpy as np

from tavernzoo.agents.export import read_policy
from tavernzoo.train import expert
from tavernzoo.train.config import make_train_config
from tavernzoo.train.run import Trainer
from tavernzoo.train.samples import Samples
from tavernzoo.train.warm_start import load_actor, load_critic


def _rows(samples: Samples, rows: np.ndarray) -> Samples:
    return Samples(samples.observations[rows], samples.masks[rows], samples.targets[rows], samples.values[rows],
                   samples.weights[rows])


def _moves_and_loss(policy, samples: Samples) -> tuple[np.ndarray, float]:
    import torch

    with torch.no_grad():
        logits, _ = expert._forward(policy, torch.as_tensor(samples.observations))
        logits = logits.masked_fill(~torch.as_tensor(samples.masks), -1e9)
        loss = -(torch.as_tensor(samples.targets) * torch.log_softmax(logits, -1)).sum(-1).mean()
    return logits.argmax(-1).numpy(), float(loss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("samples", help="an expert run (its expert/samples.npz) or a samples file")
    parser.add_argument("--game", default="ministeel")
    parser.add_argument("--init", required=True, help="the starting student (a checkpoint or run, BOT.onnx, zoo:GAME)")
    parser.add_argument("--net-arch", default=None, metavar="SIZES",
                        help="the student's hidden sizes (those of --init), e.g. 256,256 for MiniSteel's zoo bot")
    parser.add_argument("--fit", action="append", default=[], metavar="LR:EPOCHS",
                        help="a fit to try (repeatable; default 1e-3:5, the expert round's)")
    parser.add_argument("--train", type=float, default=0.8, help="the share of positions trained on (the first)")
    args = parser.parse_args()

    import torch

    path = Path(args.samples)
    path = path / "expert" / "samples.npz" if path.is_dir() else path
    hidden = {"net_arch": tuple(int(x) for x in args.net_arch.split(","))} if args.net_arch else {}
    config = make_train_config(args.game, overrides=hidden)
    trainer = Trainer(config, Path(tempfile.mkdtemp()) / "student")
    game, game_config = trainer.game, trainer.game_config
    data = Samples.load(path, game.encoder.observation_size(game_config), len(game.action_names(game_config)))
    cut = int(len(data) * args.train)
    train, held = _rows(data, np.arange(cut)), _rows(data, np.arange(cut, len(data)))
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, _ = expert.make_model(trainer)
    start = read_policy(args.init)
    load_actor(model.policy, start)
    if start.has_value:
        load_critic(model.policy, start)
    initial = copy.deepcopy(model.policy.state_dict())
    own_train, _ = _moves_and_loss(model.policy, train)
    own_held, loss_before = _moves_and_loss(model.policy, held)
    want_train, want_held = train.targets.argmax(-1), held.targets.argmax(-1)
    away_train, away_held = own_train != want_train, own_held != want_held
    print(f"{path}: {len(train)} positions trained on ({away_train.sum()} departures), {len(held)} held out "
          f"({away_held.sum()} departures); held-out cross-entropy of the starting student {loss_before:.3f}")
    print(f"{'fit (lr:epochs)':>16} | {'held-out loss':>13} {'learnt':>7} {'kept':>6} | "
          f"{'train learnt':>12} {'kept':>6}")
    for fit in args.fit or ["1e-3:5"]:
        rate, _, epochs = fit.partition(":")
        model.policy.load_state_dict(initial)
        expert.train_student(model.policy, train, int(epochs), learning_rate=float(rate), seed=1)
        moves_train, _ = _moves_and_loss(model.policy, train)
        moves_held, loss = _moves_and_loss(model.policy, held)

        def share(moves, wanted, rows):
            return float(np.mean(moves[rows] == wanted[rows])) if rows.any() else float("nan")

        print(f"{fit:>16} | {loss:13.3f} {share(moves_held, want_held, away_held):7.3f} "
              f"{share(moves_held, own_held, ~away_held):6.3f} | {share(moves_train, want_train, away_train):12.3f} "
              f"{share(moves_train, own_train, ~away_train):6.3f}", flush=True)


if __name__ == "__main__":
    main()
