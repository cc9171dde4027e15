"""What every benchmark here shares: the timing harness and the random-play loops measured with it.

Scripts in bench/ import this as ``from common import ...`` (a script's own folder is on sys.path).

Every entry of a benchmark is a ``run(deadline) -> steps`` function. :func:`interleaved` times the
entries (in steps per CPU-second of the process) in turns, ``repeats`` rounds of short runs, so that a
shared machine's drifting load falls on every entry alike; ratios are taken within each round (entries
measured side by side) and their median is reported with the range over rounds.

The PettingZoo loops come in the two forms users write:

* ``plain``: ``reset()`` without a seed when a game ends (after one seeded reset at the start);
* ``seeded``: ``reset(seed=k)`` for every game, as reproducible evaluations do. PettingZoo's RLCard
  games (leduc, texas) rebuild their RLCard env on a seeded reset, so they are much slower in this loop.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

Run = Callable[[float], int]
LOOPS = ("plain", "seeded")


def engine_game(rules: Any, config: Any, seed: int, picker: random.Random) -> int:
    """Deal game ``seed`` on a turn-based rules engine and play it to its end (legal_actions, a uniform pick,
    apply); the decisions taken."""
    from tavernzoo.envs.core import Chance

    steps = 0
    state = rules.new_game(config, Chance(seed))
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        rules.apply(state, legal[int(picker.random() * len(legal))])
        steps += 1
    return steps


def engine_loop(rules: Any, config: Any) -> Run:
    """Random play straight on a turn-based rules engine: :func:`engine_game` after engine_game."""
    picker = random.Random(0)
    seeds = iter(range(2**62))

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            steps += engine_game(rules, config, next(seeds), picker)
        return steps

    return run


def random_game(env: Any, picker: random.Random) -> int:
    """Play the reset ``env`` to its end, each agent picking uniformly among its legal actions, in the loop
    PettingZoo's documentation writes (``agent_iter`` / ``last`` / ``step``); the agent-steps taken with
    an action (not the None steps of finished agents)."""
    steps = 0
    for _agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[int(picker.random() * len(legal))]))
        steps += 1
    return steps


def pettingzoo_loop(make_env: Callable[[], Any], loop: str = "plain") -> Run:
    """The loop every PettingZoo user writes: ``agent_iter()``, ``last()``, a random legal action from the
    mask, ``step()``; a finished agent is stepped with None. The env is made once; ``loop`` says how a
    new game starts (``plain``: ``reset()``, ``seeded``: ``reset(seed=k)``). Counts decisions (steps
    with an action), not the None steps of finished agents."""
    if loop not in LOOPS:
        raise ValueError(f"loop={loop!r}; valid: {', '.join(LOOPS)}")
    env = make_env()
    picker = random.Random(0)
    seeds = iter(range(2**62))
    env.reset(seed=next(seeds))
    seeded = loop == "seeded"

    def run(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            steps += random_game(env, picker)
            if seeded:
                env.reset(seed=next(seeds))
            else:
                env.reset()
        return steps

    return run


def parallel_loop(make_env: Callable[[], Any], loop: str = "plain") -> Run:
    """Random play through a PettingZoo ParallelEnv: every agent in ``agents`` picks uniformly among the
    legal actions of its mask (or of its action space when there is no mask). Counts agent-steps (one
    agent's action in one joint step)."""
    if loop not in LOOPS:
        raise ValueError(f"loop={loop!r}; valid: {', '.join(LOOPS)}")
    env = make_env()
    picker = random.Random(0)
    seeds = iter(range(2**62))
    state = {"observations": env.reset(seed=next(seeds))[0]}
    seeded = loop == "seeded"

    def run(deadline: float) -> int:
        steps = 0
        observations = state["observations"]
        while time.perf_counter() < deadline:
            while env.agents:
                actions = {}
                for agent in env.agents:
                    observation = observations[agent]
                    if isinstance(observation, dict) and "action_mask" in observation:
                        legal = np.flatnonzero(observation["action_mask"])
                        actions[agent] = int(legal[int(picker.random() * len(legal))])
                    else:
                        actions[agent] = int(picker.random() * env.action_space(agent).n)
                steps += len(actions)
                observations = env.step(actions)[0]
            observations = env.reset(seed=next(seeds))[0] if seeded else env.reset()[0]
        state["observations"] = observations
        return steps

    return run


def same_games_ratio(make_numerator: Callable[[], Any], make_denominator: Callable[[], Any], games: int,
                     rounds: int) -> list[float]:
    """Speed of one env over another on the very same work: both play seeded games ``0..games-1`` with the
    same random picks (the games are identical when the envs are the same game), in turns, ``rounds``
    times; each round's ratio is the denominator's CPU time over the numerator's. Steadier than the
    timed loops for a ratio near 1 (``env()`` / ``raw_env()``), where game-length variety is noise."""

    def play(env: Any) -> float:
        picker = random.Random(0)
        start = time.process_time()
        for seed in range(games):
            env.reset(seed=seed)
            random_game(env, picker)
        return time.process_time() - start

    numerator, denominator = make_numerator(), make_denominator()
    play(numerator), play(denominator)  # warm-up
    ratios = []
    for _ in range(rounds):
        top = play(numerator)
        ratios.append(play(denominator) / top)
    return ratios


def engine_same_games_ratio(rules: Any, config: Any, make_env: Callable[[], Any], games: int,
                            rounds: int) -> list[float]:
    """Speed of an env over its own rules engine on the same work: seeded games ``0..games-1``, each played
    by the engine (:func:`engine_game`) and by the env loop (:func:`random_game`, after ``reset(seed=k)``)
    with the same random picks, game by game in turns (which goes first alternates), so that a drifting
    load falls on both alike; each round's ratio is the engine's CPU time per decision over the env's.
    Steadier than the timed loops, which run each entry for a stretch of its own."""
    env = make_env()

    def on_engine(seed: int) -> int:
        return engine_game(rules, config, seed, random.Random(seed))

    def on_env(seed: int) -> int:
        env.reset(seed=seed)
        return random_game(env, random.Random(seed))

    on_engine(games), on_env(games)  # warm-up, on a game not measured
    ratios = []
    for _ in range(rounds):
        totals = {on_engine: [0.0, 0], on_env: [0.0, 0]}
        for seed in range(games):
            for play in (on_engine, on_env) if seed % 2 else (on_env, on_engine):
                start = time.process_time()
                steps = play(seed)
                totals[play][0] += time.process_time() - start
                totals[play][1] += steps
        engine, env_ = (seconds / steps for seconds, steps in totals.values())
        ratios.append(engine / env_)
    return ratios


def report_same_games(name: str, ratios: list[float], target: float | None) -> None:
    middle = statistics.median(ratios)
    verdict = "" if target is None else f"  ({'meets' if middle >= target else 'MISSES'} the {target:g}x target)"
    print(f"  {name}, same seeded games: {middle:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}){verdict}")


def interleaved(entries: dict[str, Run | None], seconds: float, repeats: int) -> dict[str, list[float]]:
    """Steps per CPU-second of every entry in each of ``repeats`` rounds; within a round the entries run in
    turns for ``seconds / repeats`` of wall time each, after one short untimed warm-up each. ``None``
    entries (a peer not installed) are left out.

    The rate is over the process's CPU time, not wall time: on a shared machine the wall clock also
    counts the time other processes held the core, which varies from run to run by tens of percent;
    every entry here is single-threaded Python, so its CPU time is the work it did."""
    runs = {name: run for name, run in entries.items() if run is not None}
    for run in runs.values():
        run(time.perf_counter() + min(0.3, seconds / repeats / 3))
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            cpu = time.process_time()
            steps = run(time.perf_counter() + seconds / repeats)
            rates[name].append(steps / (time.process_time() - cpu))
    return rates


def report(title: str, rates: dict[str, list[float]], ratios: list[tuple[str, str, float | None]]) -> None:
    """Print each entry's median steps per CPU-second (range over rounds) and each ratio ``numerator / denominator``:
    the median of the per-round ratios, their range, and whether it meets ``target``."""
    print(f"\n{title}")
    print(f"  {'entry':<40} {'median':>12}   range over rounds")
    for name, values in rates.items():
        print(f"  {name:<40} {statistics.median(values):>12,.0f}   {min(values):,.0f}-{max(values):,.0f}")
    print("ratios (median of per-round ratios, range)")
    for numerator, denominator, target in ratios:
        if numerator not in rates or denominator not in rates:
            continue
        per_round = [a / b for a, b in zip(rates[numerator], rates[denominator], strict=True)]
        middle = statistics.median(per_round)
        verdict = "" if target is None else f"  ({'meets' if middle >= target else 'MISSES'} the {target:g}x target)"
        print(f"  {numerator} / {denominator}: {middle:.2f}x ({min(per_round):.2f}-{max(per_round):.2f}){verdict}")


def machine_line(seconds: float, repeats: int) -> str:
    import os
    import platform

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} CPUs, load average {load:.1f}; {seconds:g} s per entry in {repeats} rounds")


def against_texas_holdem(name: str, title: str, env_module: Any, rules: Any, args: Any, *, same_games: int,
                         texas_target: float | None, engine_target: float | None = None) -> None:
    """The card games' benchmark (MiniSteel, Wyvern): engine, ``env()`` and ``raw_env()`` of ``env_module``
    at ``args.players`` next to PettingZoo's ``texas_holdem_v4`` at the same table, in both loops, with the
    ratios their targets are stated in, then ``env()`` / ``raw_env()`` on ``same_games`` seeded games."""
    players = args.players
    try:
        from pettingzoo.classic import texas_holdem_v4
    except ImportError as error:
        print(f"(PettingZoo classic envs unavailable: {error}; pip install '.[bench]')")
        texas_holdem_v4 = None
    entries: dict[str, Run | None] = {f"{name} engine": engine_loop(rules, rules.Config(num_players=players))}
    for loop in LOOPS:
        entries[f"{name} env() {loop}"] = pettingzoo_loop(lambda: env_module.env(num_players=players), loop)
        entries[f"{name} raw_env() {loop}"] = pettingzoo_loop(lambda: env_module.raw_env(num_players=players), loop)
        entries[f"pettingzoo texas_holdem_v4 {loop}"] = pettingzoo_loop(
            lambda: texas_holdem_v4.env(num_players=players), loop) if texas_holdem_v4 else None

    rates = interleaved(entries, args.seconds, args.repeats)
    ratios: list[tuple[str, str, float | None]] = []
    for loop in LOOPS:
        ratios += [(f"{name} env() {loop}", f"pettingzoo texas_holdem_v4 {loop}", texas_target),
                   (f"{name} env() {loop}", f"{name} raw_env() {loop}", 0.91)]
    ratios.append((f"{name} env() plain", f"{name} engine", engine_target))
    report(f"{title} random play at {players} players, agent-steps per CPU-second "
           f"({machine_line(args.seconds, args.repeats)})", rates, ratios)

    same = same_games_ratio(lambda: env_module.env(num_players=players),
                            lambda: env_module.raw_env(num_players=players), games=same_games, rounds=args.repeats)
    report_same_games(f"{name} env() / raw_env()", same, 0.91)
    by_game = engine_same_games_ratio(rules, rules.Config(num_players=players),
                                      lambda: env_module.env(num_players=players), games=10, rounds=args.repeats)
    report_same_games(f"{name} env() / engine, game by game in turns", by_game, engine_target)
