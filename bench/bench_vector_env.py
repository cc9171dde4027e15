"""Agent-steps a second of a game's vector envs (envs/<game>/vector.py) next to its PettingZoo env.

    python bench/bench_vector_env.py [--game ministeel|wyvern] [--seconds 4] [--repeats 4] [--players 4]
                                     [--envs 1024]

``--game``: MiniSteel (the default: ``ministeel_v2``, the game of issue 48's target) or Wyvern
(``wyvern_v1``, envs/wyvern/vector.py); the same entries for either.

Random play with observations and masks, an agent-step being one decision for which the env handed over
the deciding seat's observation and action mask:
  (a) the PettingZoo env (``ministeel_v2.env()`` / ``wyvern_v1.env()``): agent_iter / last / a uniform legal
      pick / step (bench/common.py's loop, what issue 48's "37,000 today" counts for MiniSteel),
  (b) gymnasium's ``SyncVectorEnv`` over 8 single-learner ``gymnasium.Env``s built on that env (the learner
      in seat 0, random opponents picking from their masks in Python): learner-steps,
  (c) ``self_play_vector_env(--envs)``, serial loop: every decision of every seat,
  (d) the same with ``parallel=True`` (numba's prange over games, every core),
  (e) ``vector_env(--envs)`` (the learner in seat 0, random opponents inside compiled code), serial:
      learner-steps (the opponents' decisions come without observations and are not counted),
  (f) the same with ``parallel=True``.
The vector envs' learner picks uniformly among each game's legal actions in a small numba loop (what a
policy's sampling would do; numpy's per-row picks would cost more than the env). Rates per wall-second
(the target's unit: the parallel loops use both cores) and per CPU-second of the process, medians over
rounds taken in turns; ratios within each round. The kernel is compiled (or loaded from numba's cache)
before timing. Not a test: the figures go to docs/performance.md. On a shared machine the wall-clock rate
of the parallel loops depends on how much of the second core the other users leave.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import gymnasium
import numba
import numpy as np
from common import machine_line, pettingzoo_loop
from gymnasium import spaces
from gymnasium.vector import SyncVectorEnv

from tavernzoo.envs import ministeel_v2, wyvern_v1
from tavernzoo.envs.ministeel import kernel as ministeel_kernel
from tavernzoo.envs.ministeel import rules as ministeel_rules
from tavernzoo.envs.ministeel import vector as ministeel_vector
from tavernzoo.envs.wyvern import kernel as wyvern_kernel
from tavernzoo.envs.wyvern import rules as wyvern_rules
from tavernzoo.envs.wyvern import vector as wyvern_vector

Run = Callable[[float], int]

# ``--game``: its title, PettingZoo module, kernel, rules and vector envs.
GAMES = {"ministeel": ("MiniSteel", ministeel_v2, ministeel_kernel, ministeel_rules, ministeel_vector),
         "wyvern": ("Wyvern", wyvern_v1, wyvern_kernel, wyvern_rules, wyvern_vector)}


@numba.njit(cache=True)
def uniform_legal(masks, state, out):
    """A uniform legal action per row of ``masks`` into ``out`` (a 64-bit LCG stream); the next state."""
    for g in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[g, a]
        state = state * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        k = np.int64((state >> np.uint64(33)) % np.uint64(max(count, 1)))
        out[g] = 0
        for a in range(masks.shape[1]):
            if masks[g, a]:
                if k == 0:
                    out[g] = a
                    break
                k -= 1
    return state


class LearnerOverPettingZoo(gymnasium.Env):
    """(b): seat 0 of the PettingZoo env as a gymnasium env, the other seats random (picked in Python)."""

    def __init__(self, make_env: Callable[[], object]):
        self.env = make_env()
        self.learner = self.env.possible_agents[0]
        self.observation_space = self.env.observation_space(self.learner)
        self.action_space = spaces.Discrete(self.env.action_space(self.learner).n)
        self.picker = random.Random(0)

    def _advance(self):
        env = self.env
        while env.agents:
            agent = env.agent_selection
            observation, reward, termination, truncation, _ = env.last()
            if agent == self.learner:
                return observation, reward, termination, truncation
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[int(self.picker.random() * len(legal))]))
        return self.env.observe(self.learner), self.env._cumulative_rewards.get(self.learner, 0.0), True, False

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        while True:
            self.env.reset(seed=seed)
            observation, _, termination, truncation = self._advance()
            if not (termination or truncation):
                return observation, {}
            seed = None

    def step(self, action):
        self.env.step(int(action))
        observation, reward, termination, truncation = self._advance()
        return observation, reward, termination, truncation, {}  # once over, SyncVectorEnv resets it


def sync_vector_loop(make_env: Callable[[], object], envs: int = 8) -> Run:
    vec = SyncVectorEnv([lambda: LearnerOverPettingZoo(make_env) for _ in range(envs)])
    observations, _ = vec.reset(seed=0)
    state = {"observations": observations}
    picker = random.Random(0)

    def run(deadline: float) -> int:
        steps, observations = 0, state["observations"]
        while time.perf_counter() < deadline:
            actions = []
            for mask in observations["action_mask"]:
                legal = np.flatnonzero(mask)
                actions.append(int(legal[int(picker.random() * len(legal))]) if len(legal) else 0)
            observations = vec.step(np.array(actions))[0]
            steps += envs
        state["observations"] = observations
        return steps

    return run


def self_play_loop(vector, players: int, envs: int, parallel: bool) -> Run:
    env = vector.self_play_vector_env(envs, parallel=parallel, num_players=players)
    observations, _, _ = env.reset(seed=0)
    actions = np.zeros(envs, dtype=np.int64)
    state = {"observations": observations, "stream": np.uint64(1)}

    def run(deadline: float) -> int:
        steps, observations, stream = 0, state["observations"], state["stream"]
        while time.perf_counter() < deadline:
            stream = uniform_legal(observations["action_mask"], stream, actions)
            observations = env.step(actions)[0]
            steps += envs
        state["observations"], state["stream"] = observations, stream
        return steps

    return run


def learner_loop(vector, players: int, envs: int, parallel: bool) -> Run:
    env = vector.vector_env(envs, parallel=parallel, num_players=players)
    observations, _ = env.reset(seed=0)
    actions = np.zeros(envs, dtype=np.int64)
    state = {"observations": observations, "stream": np.uint64(1)}

    def run(deadline: float) -> int:
        steps, observations, stream = 0, state["observations"], state["stream"]
        while time.perf_counter() < deadline:
            stream = uniform_legal(observations["action_mask"], stream, actions)
            observations = env.step(actions)[0]
            steps += envs
        state["observations"], state["stream"] = observations, stream
        return steps

    return run


def interleaved(entries: dict[str, Run], seconds: float, repeats: int) -> dict[str, list[tuple[float, float]]]:
    """``(steps per wall-second, steps per CPU-second)`` of every entry in each round; the entries run in turns
    for ``seconds / repeats`` each, after a short untimed warm-up."""
    for run in entries.values():
        run(time.perf_counter() + min(0.3, seconds / repeats / 3))
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in entries}
    for _ in range(repeats):
        for name, run in entries.items():
            wall, cpu = time.perf_counter(), time.process_time()
            steps = run(wall + seconds / repeats)
            rates[name].append((steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="ministeel",
                        help="the game (default ministeel)")
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=4, help="rounds, entries taken in turns (default 4)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    parser.add_argument("--envs", type=int, default=1024, help="games per vector env (default 1024)")
    args = parser.parse_args()
    title, pettingzoo_module, kernel, rules, vector = GAMES[args.game]
    reason = kernel.unsupported()
    if reason is not None:
        parser.exit(1, f"bench_vector_env: {reason}\n")
    if not rules.MIN_PLAYERS <= args.players <= rules.MAX_PLAYERS or args.envs < 1 or args.repeats < 1:
        parser.exit(2, f"bench_vector_env: --players must be {rules.MIN_PLAYERS}-{rules.MAX_PLAYERS}, --envs and "
                       "--repeats at least 1\n")
    players, envs = args.players, args.envs

    def make_env():
        return pettingzoo_module.env(num_players=players)

    entries = {
        "(a) PettingZoo env()": pettingzoo_loop(make_env),
        "(b) SyncVectorEnv, 8 learner envs": sync_vector_loop(make_env),
        f"(c) self_play_vector_env({envs}) serial": self_play_loop(vector, players, envs, False),
        f"(d) self_play_vector_env({envs}) parallel": self_play_loop(vector, players, envs, True),
        f"(e) vector_env({envs}) serial": learner_loop(vector, players, envs, False),
        f"(f) vector_env({envs}) parallel": learner_loop(vector, players, envs, True),
    }
    rates = interleaved(entries, args.seconds, args.repeats)
    print(f"\n{title} random play at {players} players, agent-steps with observations and masks "
          f"({machine_line(args.seconds, args.repeats)}; numba threads {numba.get_num_threads()}, "
          f"layer {numba.threading_layer()})")
    print(f"  {'entry':<44} {'per wall-second':>16} {'per CPU-second':>16}")
    for name, values in rates.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        print(f"  {name:<44} {wall:>16,.0f} {cpu:>16,.0f}")
    print("ratios, per wall-second (median of per-round ratios, range)")
    names = list(entries)
    for top, bottom in ((names[2], names[0]), (names[3], names[0]), (names[3], names[2]), (names[4], names[1]),
                        (names[5], names[1]), (names[5], names[4])):
        per_round = [a[0] / b[0] for a, b in zip(rates[top], rates[bottom], strict=True)]
        print(f"  {top} / {bottom}: {statistics.median(per_round):.1f}x "
              f"({min(per_round):.1f}-{max(per_round):.1f})")
    if args.game != "ministeel":
        return  # issue 48's target is MiniSteel's
    best = statistics.median(v[0] for v in rates[names[3]])
    print(f"target: >= 1,000,000 agent-steps a second with observations and masks (MiniSteel {players}p, both cores):"
          f" {'met' if best >= 1_000_000 else 'NOT met'} by (d) in this run")


if __name__ == "__main__":
    main()
