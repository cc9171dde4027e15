"""Random-play speed of MiniSteel next to PettingZoo's texas_holdem_v4 at the same table size, one run,
and what v2's Card Draw windows cost against v1's timing.

    python bench/bench_ministeel.py [--seconds 4] [--repeats 8] [--players 4] [--games 200]
    python bench/bench_ministeel.py --token-use 200     # only (g), how zoo:ministeel spends its tokens

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
      (steps per second over decisions per random game);
  (f) whether the heuristic's window rule helps it: two heuristics against two that always pass in a
      window, seats alternating, ``--games`` x 10 games; each side's win share per seat (0.25: no effect);
  (g) with ``--token-use N``, instead of all the above: zoo:ministeel in one seat (rotating) and three
      heuristics, N games at 4 players: how often each draws when a Card Draw window asks it, and how many
      tokens the bot uses on its own turn.
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


def window_rule_check(games: int) -> None:
    from tavernzoo.agents.ministeel import HeuristicBot
    from tavernzoo.envs import ministeel_v2
    from tavernzoo.eval.stats import mean_interval

    class NeverInWindows(HeuristicBot):
        def _window(self, obs):
            return rules.TOKEN_PASS

    env = ministeel_v2.raw_env(num_players=4)
    shares = []  # per game: the win share per seat of the two heuristics that draw in windows
    for game in range(games):
        drawing = (0, 2) if game % 2 == 0 else (1, 3)
        bots = [(HeuristicBot if seat in drawing else NeverInWindows)(env.config, seat) for seat in range(4)]
        env.reset(seed=game // 2)  # each deal twice, the sides swapped
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else bots[env.possible_agents.index(agent)].act(observation))
        shares.append(0.5 if env.game_state.winner in drawing else 0.0)
    deals = [(a + b) / 2 for a, b in zip(shares[::2], shares[1::2], strict=True)]
    mean, low, high = mean_interval(deals)
    print(f"\nheuristic (its window rule) vs heuristic that never draws in a window, 2 + 2 seats, {games} games:"
          f"\n  win share per seat of the window rule {mean:.3f} ({low:.3f}-{high:.3f}); the other side "
          f"{0.5 - mean:.3f}; 0.250 is no effect")


def token_use(games: int) -> None:
    from tavernzoo.agents import load_bot
    from tavernzoo.envs import ministeel_v2

    env = ministeel_v2.raw_env(num_players=4)
    zoo = load_bot("zoo:ministeel", env.game, env.config, seed=0)
    heuristics = [load_bot("heuristic", env.game, env.config, seed=seat) for seat in range(4)]
    asked, drew, own_turn = {"zoo:ministeel": 0, "heuristic": 0}, {"zoo:ministeel": 0, "heuristic": 0}, 0
    for game in range(games):
        bot_seat = game % 4
        env.reset(seed=game)
        for agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            action = (zoo if seat == bot_seat else heuristics[seat]).act(observation)
            who = "zoo:ministeel" if seat == bot_seat else "heuristic"
            if observation["action_mask"][rules.TOKEN_PASS]:
                asked[who] += 1
                drew[who] += action == rules.TOKEN_DRAW
            elif action == rules.TOKEN_DRAW and who == "zoo:ministeel":
                own_turn += 1
            env.step(action)
    print(f"zoo:ministeel and three heuristics, {games} games at 4 players:")
    for who in asked:
        print(f"  {who}: asked in {asked[who]} Card Draw windows, drew in {drew[who]}")
    print(f"  zoo:ministeel used {own_turn} tokens on its own turn")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measuring time per entry, all rounds (default 4)")
    parser.add_argument("--repeats", type=int, default=8, help="rounds, entries taken in turns (default 8)")
    parser.add_argument("--players", type=int, default=4, help="players at both tables (default 4)")
    parser.add_argument("--games", type=int, default=200, help="games per count of decisions (default 200)")
    parser.add_argument("--token-use", type=int, default=0, metavar="N",
                        help="only measure how zoo:ministeel spends its tokens, over N games")
    args = parser.parse_args()
    if args.token_use:
        token_use(args.token_use)
        return
    from tavernzoo.envs import ministeel_v2

    against_texas_holdem("ministeel", "MiniSteel", ministeel_v2, rules, args, same_games=40,
                         texas_target=2.5, engine_target=None)
    token_timing_cost(args)
    window_rule_check(10 * args.games)


if __name__ == "__main__":
    main()
