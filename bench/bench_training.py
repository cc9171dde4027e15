"""Training throughput on Tiny Minotaur: tavernzoo's self-play setup next to the PettingZoo SB3 tutorial's.

    python bench/bench_training.py [--timesteps 40000] [--repeats 3] [--report-games 1000]
                                   [--startup] [--startup-baseline OLD_CLI_PY]
                                   [--backends [--game ministeel|wyvern] [--net-arch 256,256] [--snapshots K]]
                                   [--update]

(a) ``tutorial``: the PettingZoo SB3 action-masking tutorial's setup, applied to Tiny Minotaur: its
    ``SB3ActionMaskWrapper`` turns the AEC env into one gymnasium env (both seats are the learner),
    ``ActionMasker`` supplies the masks, one MaskablePPO with the tutorial's default hyperparameters;
(b) ``before``: tavernzoo's setup as it was before issue 15 — ``SelfPlayVecEnv`` with 16 games x 128
    steps per rollout and SB3's stock ``MlpPolicy`` forward;
(c) ``tavernzoo``: today's setup — the default ``TrainConfig`` (64 games x 32 steps, the same 2,048
    decisions per update) and the model ``tavernzoo train`` builds (``make_model``: the lean rollout
    forward of train/lean_policy.py).

Every setup learns the same number of timesteps; the setups run interleaved, ``--repeats`` times, and
each round's ratio to the tutorial run of the same round is printed, then the median (target: at least
10x). With ``--report-games N`` the final report is timed first: ``play_match`` one game at a time
against train/evaluate.py's lockstep, on Tiny Minotaur and 4-player MiniSteel. Not a test: the figures
go to docs/performance.md ("Training throughput"). ``--startup`` times fresh ``tavernzoo --help``,
``games``, ``match``, ``zoo`` processes and lists the heavy modules each imports.

``--backends`` instead times ``tavernzoo train GAME``'s setup (``--game``: ministeel, the default, or wyvern; the
recipe: 4 players, 64 games x 32 steps; ``--net-arch``, by default the zoo bot's size: 256 x 256 for zoo:ministeel,
128 x 128 for zoo:wyvern) on each ``env_backend`` (python: SelfPlayVecEnv; kernel: train/kernel_env.py, with SB3's
rollout loop and with train/shared_forward.py's, which ``tavernzoo train`` uses, plain and with
``privileged_critic=true``), the league of the defaults (latest self for 80% of the seats, random and heuristic),
interleaved, per wall and per CPU second, and splits each run's wall time: the PPO update, the learner's rollout
forward (on the shared loop: the learner's rows and its latest self's, in one forward), the other opponents'
batched forwards (``TorchActor.act``, the snapshots' ``StackedActors.act``; the network's share: these three), the
env's game code (its calls less the opponents' forwards) and the rollout glue (the rest: SB3's buffer, callbacks
and tensors per step, or the shared loop's bookkeeping). ``--snapshots K`` puts K frozen copies of the learner in
the pool from the start, as a long run's league holds them (each answered in its own batches). ``--update`` times
one PPO update with its arithmetic as it was before issue 48 and with each of its changes added in turn (fused
Adam, numpy's tanh, no exp of masked logits).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np
import pettingzoo.utils
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

from tavernzoo.envs import get_game, tiny_minotaur_v1
from tavernzoo.train.config import TrainConfig
from tavernzoo.train.run import make_model, policy_from_sb3
from tavernzoo.train.selfplay import League, SelfPlayVecEnv


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """The tutorial's wrapper, as published (it returns the *acting* agent's reward after the step); also a
    ``gymnasium.Env``, which current gymnasium's wrappers insist on."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (
            self.observe(next_agent),
            self._cumulative_rewards[current_agent],
            self.terminations[current_agent],
            self.truncations[current_agent],
            self.infos[current_agent],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


def tutorial_setup(timesteps: int) -> float:
    env = SB3ActionMaskWrapper(tiny_minotaur_v1.env())
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, verbose=0, device="cpu")
    model.set_random_seed(0)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def selfplay_setup(timesteps: int, stock: bool) -> float:
    """Steps/s of tavernzoo's self-play learning; ``stock``: the pre-issue-15 vectorisation and policy."""
    game = get_game("tiny_minotaur")
    config = TrainConfig(timesteps=timesteps, **({"n_envs": 16, "n_steps": 128} if stock else {}))
    game_config = game.make_config()
    league = League.create(game, game_config, config)
    env = SelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed)
    if stock:
        model = MaskablePPO(
            "MlpPolicy", env, learning_rate=config.learning_rate, n_steps=config.n_steps,
            batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma, ent_coef=config.ent_coef,
            policy_kwargs={"net_arch": list(config.net_arch)}, seed=0, device="cpu", verbose=0,
        )
    else:
        model = make_model(config, env)
    league.set_latest(policy_from_sb3(model.policy, {}))  # the learner plays itself, batched
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def report_timings(game_name: str, options: dict, games: int, repeats: int, directory: str) -> None:
    """Seconds of a training run's final report (the policy against random, then against the heuristic,
    ``games`` games each) played one game at a time by ``play_match`` and in lockstep by
    ``play_policy_matches``, interleaved, ``repeats`` times. The policy has random weights (speed only)."""
    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.eval.match import play_match
    from tavernzoo.train.evaluate import play_policy_matches
    from tavernzoo.train.lean_policy import TorchActor

    game = get_game(game_name)
    config = game.make_config(options)
    rng = np.random.default_rng(0)
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    shapes = [(128, size), (128, 128), (actions, 128)]
    policy = MLPPolicy([rng.standard_normal(s).astype(np.float32) / np.sqrt(s[1]) for s in shapes],
                       [np.zeros(s[0], np.float32) for s in shapes], "tanh", {"env": game.env_name})
    policy.save(directory)
    seats = game.rules.num_seats(config)
    lineups = [[directory] + [reference] * (seats - 1) for reference in ("random", "heuristic")]
    times: dict[str, list[float]] = {"play_match": [], "lockstep": []}
    for _ in range(repeats):
        start = time.perf_counter()
        for lineup in lineups:
            play_match(game, lineup, games, seed=7, config=config)
        times["play_match"].append(time.perf_counter() - start)
        start = time.perf_counter()
        play_policy_matches(game, TorchActor(policy), lineups, games, seed=7, config=config)
        times["lockstep"].append(time.perf_counter() - start)
    ratio = statistics.median(a / b for a, b in zip(times["play_match"], times["lockstep"], strict=True))
    label = f"{game_name} {options}" if options else game_name
    print(f"  final report on {label} ({games:,} games x 2 line-ups): play_match "
          f"{statistics.median(times['play_match']):.1f} s, lockstep {statistics.median(times['lockstep']):.1f} s "
          f"({ratio:.1f}x)")


BACKENDS = {
    "python": "python",
    "kernel": "kernel (SB3's rollout loop: the learner's forward per step, its latest self's per round)",
    "kernel shared": "kernel, shared forward (train/shared_forward.py: learner and latest self per round)",
    "kernel privileged": "kernel, shared forward, privileged critic (every seat's view in the learner's rows)",
}
"""The setups ``--backends`` times: ``env_backend=python``, and the kernel with SB3's rollout loop and with
today's collector (``tavernzoo train``'s on the kernel), plain and with ``privileged_critic=true``."""


def backend_setup(timesteps: int, backend: str, net_arch: tuple[int, ...], snapshots: int = 0,
                  game_name: str = "ministeel") -> tuple[float, float, dict[str, float]]:
    """Learner-steps per wall second and per CPU second of the game's recipe's training on ``backend`` (a key
    of :data:`BACKENDS`) with hidden layers ``net_arch``, and the shares of its wall time (:data:`SHARES`).
    ``snapshots``: frozen copies of the learner in the pool from the start (as a long run's league holds)."""
    from tavernzoo.train import kernel_env
    from tavernzoo.train.config import make_train_config
    from tavernzoo.train.lean_policy import StackedActors, TorchActor

    game = get_game(game_name)
    config = make_train_config(game_name, timesteps=timesteps, env_backend=backend.split()[0], eval_games=0,
                               net_arch=net_arch, privileged_critic=backend == "kernel privileged")
    game_config = game.make_config(config.game_config)
    league = League.create(game, game_config, config)
    if backend == "python":
        env = SelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed)
    else:
        env = kernel_env.KernelSelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed,
                                              config.game_config)
    model = make_model(config, env, shared_forward=backend in ("kernel shared", "kernel privileged"))
    league.set_latest(policy_from_sb3(model.policy, {}))
    for k in range(snapshots):
        league.add_snapshot(policy_from_sb3(model.policy, {}), k)
    spent = {"env": 0.0, "opponents": 0.0, "learner": 0.0, "update": 0.0}
    depth = dict.fromkeys(spent, 0)

    def timed(function, key):
        def wrapper(*args, **kwargs):  # the outermost call of each kind only (the env's calls nest)
            depth[key] += 1
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                depth[key] -= 1
                if not depth[key]:
                    spent[key] += time.perf_counter() - start
        return wrapper

    for name in ("step_wait", "reset", "play_round", "answer", "deciders"):  # the env's calls on either loop
        if hasattr(env, name):
            setattr(env, name, timed(getattr(env, name), "env"))
    model.train = timed(model.train, "update")
    # The rollout's forwards (the update's are not these): SB3's per step, or the shared one per round (the
    # learner's rows and its latest self's) and the critic's once per rollout.
    for name in ("forward", "act", "predict_values"):
        setattr(model.policy, name, timed(getattr(model.policy, name), "learner"))
    original_act, original_stacked = TorchActor.act, StackedActors.act
    TorchActor.act = timed(original_act, "opponents")
    StackedActors.act = timed(original_stacked, "opponents")
    try:
        start, cpu = time.perf_counter(), time.process_time()
        model.learn(total_timesteps=timesteps)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        TorchActor.act, StackedActors.act = original_act, original_stacked
    shares = {"update": spent["update"], "learner forward": spent["learner"], "opponent forwards": spent["opponents"],
              "game code": spent["env"] - spent["opponents"],
              "rollout glue": wall - spent["env"] - spent["learner"] - spent["update"]}
    return model.num_timesteps / wall, model.num_timesteps / cpu, {name: t / wall for name, t in shares.items()}


ZOO_SIZES = {"ministeel": "256,256", "wyvern": "128,128"}
"""The hidden layers of each game's zoo bot: ``--backends``' default ``--net-arch``."""

NETWORK_SHARES = ("update", "learner forward", "opponent forwards")
"""The parts of a run's wall time that are the network's forward and update (the issue's 85%)."""


def backend_timings(timesteps: int, repeats: int, net_arch: tuple[int, ...], snapshots: int = 0,
                    game_name: str = "ministeel") -> None:
    rates: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
    cpu_rates: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
    shares: dict[str, list[dict[str, float]]] = {backend: [] for backend in BACKENDS}
    backend_setup(2048, "kernel shared", net_arch, game_name=game_name)  # compiles (or loads) the kernel first
    for round_ in range(repeats):
        for backend in BACKENDS:
            rate, cpu_rate, share = backend_setup(timesteps, backend, net_arch, snapshots, game_name)
            rates[backend].append(rate)
            cpu_rates[backend].append(cpu_rate)
            shares[backend].append(share)
        now = {backend: cpu_rates[backend][-1] for backend in BACKENDS}
        line = ", ".join(f"{backend} {rate:,.0f} ({rate / now['python']:.2f}x)" for backend, rate in now.items())
        print(f"round {round_ + 1}, learner-steps per CPU-second: {line}", flush=True)
    arch = " x ".join(map(str, net_arch))
    pool = f", {snapshots} snapshots in the pool" if snapshots else ""
    print(f"\ntavernzoo train {game_name} (4 players, 64 x 32, {arch}{pool}), {timesteps:,} learner-steps per run, "
          f"{repeats} interleaved rounds, torch threads 1:")
    for backend, label in BACKENDS.items():
        median = {name: statistics.median(s[name] for s in shares[backend]) for name in shares[backend][0]}
        split = ", ".join(f"{name} {share:.0%}" for name, share in median.items())
        network = sum(median[name] for name in NETWORK_SHARES)
        print(f"  {label}:\n    {statistics.median(rates[backend]):>7,.0f} learner-steps/s "
              f"({statistics.median(cpu_rates[backend]):,.0f} per CPU-second)  network {network:.0%}: {split}")
    for backend in list(BACKENDS)[1:]:
        for label, table in (("wall", rates), ("CPU", cpu_rates)):
            ratios = [k / p for k, p in zip(table[backend], table["python"], strict=True)]
            print(f"  {backend} vs python per {label} second: {statistics.median(ratios):.2f}x (median of the "
                  f"rounds' ratios; {', '.join(f'{r:.2f}' for r in ratios)})")


def _stock_evaluate_actions(policy, obs, actions, action_masks=None):
    """The lean update's evaluate_actions as it was before the arithmetic of issue 48 (torch's logsumexp and
    softmax over the masked logits: exp of every -1e8): the baseline of :func:`update_timings`."""
    from tavernzoo.train.lean_policy import MASKED_LOGIT

    latent_pi, latent_vf = policy.mlp_extractor(policy.extract_features(obs))
    logits = policy.action_net(latent_pi)
    masks = torch.as_tensor(action_masks, dtype=torch.bool).reshape(logits.shape)
    logits = torch.where(masks, logits, torch.tensor(MASKED_LOGIT, dtype=logits.dtype))
    log_pi = logits - logits.logsumexp(dim=1, keepdim=True)
    log_prob = log_pi.gather(1, actions.long().reshape(-1, 1)).squeeze(1)
    p_log_p = torch.where(masks, log_pi * torch.softmax(log_pi, dim=1), torch.tensor(0.0, dtype=logits.dtype))
    return policy.value_net(latent_vf), log_prob, -p_log_p.sum(dim=1)


UPDATE_VARIANTS = ("before", "+ fused Adam", "+ numpy tanh", "+ no exp of masked logits (now)")
"""The cumulative steps :func:`update_timings` times, each with the ones before it."""


def update_timings(repeats: int, net_arch: tuple[int, ...]) -> None:
    """CPU milliseconds of one PPO update (2,048 MiniSteel decisions from the kernel's rollouts, 4 epochs of
    512-row minibatches) with the update's arithmetic as it was and with each change of issue 48 added in
    turn (:data:`UPDATE_VARIANTS`), interleaved, ``repeats`` rounds, torch threads 1."""
    import copy

    from tavernzoo.train import kernel_env
    from tavernzoo.train.config import make_train_config
    from tavernzoo.train.lean_policy import FastTanh

    game = get_game("ministeel")
    config = make_train_config("ministeel", timesteps=2048, env_backend="kernel", eval_games=0, net_arch=net_arch)
    game_config = game.make_config(config.game_config)
    league = League.create(game, game_config, config)
    env = kernel_env.KernelSelfPlayVecEnv(game, game_config, league, config.n_envs, config.seed, config.game_config)
    model = make_model(config, env)
    league.set_latest(policy_from_sb3(model.policy, {}))
    train = model.train
    model.train = lambda: None
    model.learn(2048)  # one rollout in the buffer, no update
    state = copy.deepcopy(model.policy.state_dict())
    buffer = copy.deepcopy(model.rollout_buffer)

    def variant(level: int):
        policy = model.policy
        policy.load_state_dict(state)
        model.rollout_buffer = copy.deepcopy(buffer)
        for net in (policy.mlp_extractor.policy_net, policy.mlp_extractor.value_net):
            for index, layer in enumerate(net):
                if isinstance(layer, torch.nn.Tanh):
                    net[index] = FastTanh() if level >= 2 else torch.nn.Tanh()
        policy.optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5,
                                            fused=level >= 1)
        policy.evaluate_actions = (type(policy).evaluate_actions.__get__(policy) if level >= 3 else
                                   lambda *args, **kwargs: _stock_evaluate_actions(policy, *args, **kwargs))

    times: dict[str, list[float]] = {name: [] for name in UPDATE_VARIANTS}
    for _ in range(repeats):
        for level, name in enumerate(UPDATE_VARIANTS):
            variant(level)
            start = time.process_time()
            train()
            times[name].append(time.process_time() - start)
    arch = " x ".join(map(str, net_arch))
    print(f"one PPO update ({arch}, 2,048 decisions, 4 epochs of 512), CPU ms, median of {repeats} interleaved rounds:")
    base = statistics.median(times[UPDATE_VARIANTS[0]])
    for name, values in times.items():
        print(f"  {name:<34} {statistics.median(values) * 1e3:6.0f} ms  ({statistics.median(values) / base:.2f})")


STARTUP_COMMANDS = (["--help"], ["games"], ["match", "--games", "10", "--no-progress"], ["zoo"])
HEAVY_MODULES = ("torch", "stable_baselines3", "sb3_contrib", "ray", "onnxruntime", "gymnasium", "pettingzoo",
                 "tavernzoo.eval.tournament", "tavernzoo.web")


def startup_timings(repeats: int, baseline: str | None) -> None:
    """Median wall time of fresh ``tavernzoo`` processes and the heavy modules each imports; with
    ``baseline`` (an old copy of tavernzoo/cli.py, e.g. ``git show 08c652d:tavernzoo/cli.py``) that one
    too, interleaved."""
    import subprocess
    import sys

    variants = {"now": "from tavernzoo.cli import main"}
    if baseline:
        variants = {"baseline": f"import runpy; main = runpy.run_path({baseline!r})['main']", **variants}
    probe = ("import sys, io, contextlib\n{load}\n"
             "try:\n    with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\nexcept SystemExit: pass\n"
             f"print(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules) or '-')")
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(repeats):
        for index, command in enumerate(STARTUP_COMMANDS):
            for name, load in variants.items():
                start = time.perf_counter()
                subprocess.run([sys.executable, "-c", f"import sys\n{load}\nsys.exit(main(sys.argv[1:]))", *command],
                               capture_output=True)
                times.setdefault((name, index), []).append(time.perf_counter() - start)
    print(f"start-up, median of {repeats} fresh processes:")
    for index, command in enumerate(STARTUP_COMMANDS):
        for name, load in variants.items():
            imported = subprocess.run([sys.executable, "-c", probe.format(load=load), *command], capture_output=True,
                                      text=True).stdout.strip()
            print(f"  {name:<9} tavernzoo {' '.join(command):<32} {statistics.median(times[name, index]):.2f} s  "
                  f"imports: {imported}")


SETUPS = {
    "tutorial": ("PettingZoo SB3 tutorial (1 env, default MaskablePPO)", tutorial_setup),
    "before": ("tavernzoo before issue 15 (16 x 128, SB3 forward)", lambda t: selfplay_setup(t, stock=True)),
    "tavernzoo": ("tavernzoo train (64 x 32, lean forward)", lambda t: selfplay_setup(t, stock=False)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=40_000,
                        help="timesteps each setup learns (default 40000; 0: only the report timing)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--report-games", type=int, default=0,
                        help="also time the final report, this many games per reference bot (default 0: skip)")
    parser.add_argument("--startup", action="store_true", help="also time the start-up of non-training commands")
    parser.add_argument("--startup-baseline", metavar="CLI_PY",
                        help="an old tavernzoo/cli.py to time next to today's (implies --startup)")
    parser.add_argument("--backends", action="store_true",
                        help="time MiniSteel 4p training on env_backend python and kernel instead (--timesteps each)")
    parser.add_argument("--update", action="store_true",
                        help="time one PPO update with the update's arithmetic as before issue 48 and with each "
                             "change added (--net-arch, --repeats)")
    parser.add_argument("--snapshots", type=int, default=0,
                        help="for --backends: this many snapshots in the pool from the start (a long run's league "
                             "holds up to snapshot_window = 5; default 0)")
    parser.add_argument("--net-arch", default=None,
                        help="hidden layers for --backends and --update (default: the zoo bot's size, 256,256 for "
                             "ministeel, 128,128 for wyvern; the recipe's is 128,128)")
    parser.add_argument("--game", choices=tuple(ZOO_SIZES), default="ministeel",
                        help="the game --backends trains (default ministeel)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.update:
        net_arch = args.net_arch or ZOO_SIZES["ministeel"]  # the update is timed on MiniSteel's rollouts
        update_timings(args.repeats, tuple(int(n) for n in net_arch.split(",")))
        return
    if args.backends:
        net_arch = args.net_arch or ZOO_SIZES[args.game]
        backend_timings(args.timesteps, args.repeats, tuple(int(n) for n in net_arch.split(",")), args.snapshots,
                        args.game)
        return
    if args.startup or args.startup_baseline:
        startup_timings(5, args.startup_baseline)
    np.random.seed(0)
    if args.report_games:
        import tempfile

        print("final report, median of interleaved rounds (torch threads 1):")
        for game_name, options in (("tiny_minotaur", {}), ("ministeel", {"num_players": 4})):
            with tempfile.TemporaryDirectory() as directory:
                report_timings(game_name, options, args.report_games, args.repeats, directory)
    if args.timesteps == 0:
        return
    rates: dict[str, list[float]] = {name: [] for name in SETUPS}
    for round_ in range(args.repeats):
        for name, (_, setup) in SETUPS.items():
            rates[name].append(setup(args.timesteps))
        line = ", ".join(f"{name} {rates[name][-1]:,.0f}/s ({rates[name][-1] / rates['tutorial'][-1]:.1f}x)"
                         for name in SETUPS)
        print(f"round {round_ + 1}: {line}", flush=True)
    print(f"\ntraining env-steps/s on tiny_minotaur ({args.timesteps:,} timesteps per run, {args.repeats} "
          "interleaved rounds, torch threads 1; ratio = median of each round's ratio to that round's tutorial run)")
    for name, (label, _) in SETUPS.items():
        ratio = statistics.median(r / t for r, t in zip(rates[name], rates["tutorial"], strict=True))
        print(f"  {label:<55} {statistics.median(rates[name]):>8,.0f}/s  {ratio:5.2f}x")
    ours = statistics.median(r / t for r, t in zip(rates["tavernzoo"], rates["tutorial"], strict=True))
    print(f"  tavernzoo train vs tutorial: {ours:.2f}x ({'meets' if ours >= 10 else 'MISSES'} the 10x target)")


if __name__ == "__main__":
    main()
