"""Self-play training: MaskablePPO against an opponent league (docs/training.md).

* :mod:`.config` — ``TrainConfig``, the hyperparameters with per-game defaults;
* :mod:`.selfplay` — the learner's view of any game (``LearnerEnv``, ``SelfPlayVecEnv``) and the ``League``;
* :mod:`.run` — ``Trainer``: a run with checkpoints, resume and the final report (``tavernzoo train``).

Importing this package needs nothing beyond the core install; the modules need the ``train`` extra.
"""
