"""Random-play speed of MiniSteel next to PettingZoo's texas_holdem_v4 at the same table size, one run,
and what v2's Card Draw windows cost against v1's timing.

    python bench/bench_ministeel.py [--seconds 4] [--repeats 8] [--players 4] [--games 200]

Prints agent-steps per CPU-second (medians over rounds taken in turns, see bench/common.py) for
  (a) the MiniSteel rules engine alone (legal_actions / apply),
  (b) the MiniSteel AEC env (ministeel_v2), wrapped (env()) and raw (raw_env()), through agent_iter /
      last() / step(), in both loops: reset() without a seed when a game ends (plain) and reset(seed=k)
      every game (seeded),
  (c) PettingZoo's texas_holdem_v4 with the same num_players through the same loops (pip install '.[bench]'),
and the ratios the targets are stated in: env() / texas_holdem_v4 >= 2.5 in both loops and
env() / raw_env() >= 0.91 (also on the same seeded games, played by both in turns: the steadier measure of
a ratio near 1); then env() / engine, timed and on the same seeded games game by game (no target here).

Then the cost of the Card Draw windows (issue 28), v2 (``token_timing=any_time``) against v1's timing
(``own_turn``, the rules of ministeel_v1):
  (d) decisions per game, of which window decisions, over ``--games`` seeded games with every seat random
      and with every seat the heuristic (the heuristic keeps its tokens in most windows: the case that
      asks most);
  (e) env() agent-steps per CPU-second, seeded loop, both timings in turns, and games per CPU-second
      (steps per second over decisions per random game).
Not a test: the figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import random
import statistics

from common import against_texas_holdem, interleaved, pettingzoo_loop, report

from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import rules

TIMINGS = (rules.ANY_TIME, rules.OWN_TURN)


def decisions_per_game(players: int, timing: str, games: int, bot: str) -> tuple[float, float, int]:
    """(mean decisions, mean window decisions, most decisions) over seeded games ``0..games-1``."""
    from tavernzoo.agents import load_bot
    from tavernzoo.envs import ministeel_v2
    from tavernzoo.envs.ministeel import encode

    config = rules.Config(num_players=players, token_timing=timing)
    totals, windows = [], []
    if bot == "random":
        for seed in range(games):
            state, picker, asked = rules.new_game(config, Chance(seed)), random.Random(seed), 0
            while not rules.is_terminal(state):
                asked += state.phase == rules.DRAW_PHASE
                legal = rules.legal_actions(state)
                rules.apply(state, legal[int(picker.random() * len(legal))])
            totals.append(state.decisions)
            windows.append(asked)
    else:
        env = ministeel_v2.raw_env(num_players=players, token_timing=timing)
        bots = [load_bot(bot, env.game, env.config, seed=s) for s in range(players)]
        for seed in range(games):
            env.reset(seed=seed)
            asked = 0
            for agent in env.agent_iter():
                observation, _, termination, truncation, _ = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                asked += bool(len(observation["observation"]) > encode.DRAW_WINDOW
                              and observation["observation"][encode.DRAW_WINDOW])
                env.step(bots[env.possible_agents.index(agent)].act(observation))
            totals.append(env.game_state.decisions)
            windows.append(asked)
    return statistics.mean(totals), statistics.mean(windows), max(totals)


def token_timing_cost(args: argparse.Namespace) -> None:
    from tavernzoo.envs import ministeel_v2

    players = args.players
    print(f"\nCard Draw windows: decisions per game at {players} players, {args.games} seeded games each")
    random_decisions = {}
    for bot in ("random", "heuristic"):
        for timing in TIMINGS:
            mean, asked, most = decisions_per_game(players, timing, args.games, bot)
            if bot == "random":
                random_decisions[timing] = mean
            print(f"  {bot:>9} play, token_timing={timing:<8}: {mean:6.1f} decisions per game "
                  f"({asked:5.1f} in Card Draw windows), longest {most}")
    entries = {f"ministeel_v2 env() seeded, {timing}": pettingzoo_loop(
        lambda timing=timing: ministeel_v2.env(num_players=players, token_timing=timing), "seeded")
        for timing in TIMINGS}
    rates = interleaved(entries, args.seconds, args.repeats)
    names = list(entries)
    report(f"Card Draw windows: env() agent-steps per CPU-second at {players} players", rates,
           [(names[0], names[1], None)])
    for name, timing in zip(names, TIMINGS, strict=True):
        per_second = statistics.median(rates[name]) / random_decisions[timing]
        print(f"  {name}: {per_second:,.0f} random games per CPU-second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    parser.add_argument("--games", type=int, default=200, help="games per count of decisions (default 200)")
    args = parser.parse_args()
    from tavernzoo.envs import ministeel_v2

    against_texas_holdem("ministeel", "MiniSteel", ministeel_v2, rules, args, same_games=40,
                         texas_target=2.5, engine_target=None)
    token_timing_cost(args)


if __name__ == "__main__":
    main()
