"""Search speed: ``mcts`` simulations per second per game, from positions of random play.

    python bench/bench_search.py [--positions 6] [--spec mcts] [--game wyvern] [--repeats 3] [--kernel-sims 10000]
    python bench/bench_search.py --game ministeel --spec mcts:prior=zoo:ministeel,value=zoo:ministeel --kernel-batch 16
    python bench/bench_search.py --regret 100 [--spec mcts]
    python bench/bench_search.py --paired 10 --spec mcts --spec mcts:tree=open,c=1,sims=2000
    python bench/bench_search.py --fingerprint

For each game it plays random games to a few random depths and times one search from each position
(the seat to act, its information state); prints simulations per CPU second and CPU seconds per move
(process time, so that other jobs on a shared machine slow the figures less than wall time would).
Where a game has a compiled search (agents/mcts_kernel.py: MiniSteel, Wyvern), the same spec is timed on the
Python rules (``kernel=off``) and in the kernel (``kernel=on``) from the same positions and seeds, one
after the other at each position, ``--repeats`` rounds: each engine's rate, and the kernel's rate as a
multiple of the Python search's (the median round, and the range over rounds); the two searches visit
the same nodes, so the ratio is one of speed alone. ``--kernel-sims N`` times the kernel once more at N
simulations a move (a deeper tree, the per-move overhead spread thinner), in the same rounds. With a network as
prior or value (``prior=zoo:ministeel,value=zoo:ministeel``) the kernel's search asks it between calls, one
simulation at a time as the Python search does (the same visits); ``--kernel-batch B`` times it once more with B
simulations under way and their questions answered in one batch (``batch=B``: agents/mcts_kernel_network.py),
at the spec's simulations and, with ``--kernel-sims``, at N.
A closed-loop search (Tiny Minotaur's default) keeps its table between the moves of one game; here every
position starts afresh (``reset``). In a game a move costs somewhat more (the kept table makes
simulations run deeper): ``--regret`` reports that CPU time per decision.

``--regret GAMES`` measures Tiny Minotaur play against the oracle with far less noise than results do:
it plays GAMES games of the spec against the oracle (seats alternating) and at each of the spec's
decisions reads the oracle's value of every legal action; the regret is the best value minus the value
of the action taken (values are win minus loss probability). The expected score against the oracle is
then 0.5 - (mean regret per game) / 2.

``--fingerprint`` prints, per table and spec, a digest of the moves and root visit counts of seeded
searches from fixed positions: run it on two checkouts to show that a speed-up left every search result
as it was (docs/search.md).

``--paired GAMES`` compares specs on the same positions (the oracle's games, every decision with a
choice, both seats): regret per decision and CPU time per decision of each ``--spec``.
"""

from __future__ import annotations

import argparse
import random
import time

from tavernzoo.agents import load_bot
from tavernzoo.agents.search_hooks import search_hooks
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance

TABLES = [("tiny_minotaur", {}, ""), ("minefield", {"num_players": 8}, ""), ("minefield", {"num_players": 4}, ""),
          ("ministeel", {"num_players": 4}, ""), ("wyvern", {"num_players": 4}, "")]


def positions(game, config, count, rng):
    rules = game.rules
    found = []
    while len(found) < count:
        state = rules.new_game(config, Chance(rng.randrange(2**31)))
        for _ in range(rng.randrange(0, 40)):
            if rules.is_terminal(state):
                break
            if game.simultaneous:
                joint = {s: rng.choice(rules.legal_actions(state, s)) for s in rules.acting_seats(state)}
                rules.apply_joint(state, joint)
            else:
                rules.apply(state, rng.choice(rules.legal_actions(state)))
        if not rules.is_terminal(state):
            found.append(state)
    return found


def regret(spec: str, games: int, seed: int = 0) -> None:
    import numpy as np

    from tavernzoo.eval.stats import mean_interval

    game = get_game("tiny_minotaur")
    rules, encoder = game.rules, game.encoder
    config = game.make_config()
    oracle = load_bot("oracle", game, config)
    bot = load_bot(spec, game, config, seed=seed)
    rng = random.Random(seed)
    buffer = np.zeros(encoder.observation_size(config), dtype=np.float32)
    per_game, decisions, mistakes = [], 0, 0
    start = time.perf_counter()
    bot_seconds = 0.0
    for number in range(games):
        state = rules.new_game(config, Chance(rng.randrange(2**31)))
        mine = number % 2
        total = 0.0
        if hasattr(bot, "reset"):
            bot.reset()  # as the match loop does before every game
        while not rules.is_terminal(state):
            seat = rules.current_seat(state)
            legal, observation = _observation(game, state, seat, buffer)
            if seat == mine and len(legal) > 1:
                values = oracle.values(observation)
                if hasattr(bot, "observe_information_state"):
                    bot.observe_information_state(rules.information_state(state, seat), seat)
                clock = time.process_time()
                action = bot.act(observation)
                bot_seconds += time.process_time() - clock
                loss = max(values.values()) - values[action]
                total += loss
                decisions += 1
                mistakes += loss > 1e-9
            else:
                action = oracle.act(observation)
            rules.apply(state, action)
        per_game.append(total)
        if len(per_game) % 5 == 0 or len(per_game) == games:  # a running summary: long runs may be cut off
            mean, low, high = mean_interval(per_game)
            print(f"{spec} vs oracle, {len(per_game)} games, {decisions} decisions ({mistakes} not optimal), "
                  f"{time.perf_counter() - start:.0f} s; regret per game {mean:.4f} [{low:.4f}, {high:.4f}]; "
                  f"expected score vs oracle {0.5 - mean / 2:.3f} [{0.5 - high / 2:.3f}, {0.5 - low / 2:.3f}]; "
                  f"{bot_seconds / max(decisions, 1):.3f} CPU s per decision", flush=True)


def _observation(game, state, seat: int, buffer) -> tuple[list[int], dict]:
    """The legal actions at ``state`` and ``seat``'s observation of it (a copy of the encoded buffer)."""
    import numpy as np

    legal = game.rules.legal_actions(state)
    mask = np.zeros(game.rules.NUM_ACTIONS, dtype=np.int8)
    mask[legal] = 1
    game.encoder.encode(state, seat, buffer)
    return legal, {"observation": buffer.copy(), "action_mask": mask}


def paired_regret(specs: list[str], games: int, seed: int = 0) -> None:
    """Each spec's regret per decision on the same positions: the oracle plays both seats of GAMES games, and
    at every decision with a choice each spec searches the position (its table reset per game, as in a
    match) while the oracle's move is played. Differences between specs are then paired, not dice."""
    import numpy as np

    from tavernzoo.eval.stats import mean_interval

    game = get_game("tiny_minotaur")
    rules, encoder = game.rules, game.encoder
    config = game.make_config()
    oracle = load_bot("oracle", game, config)
    rng = random.Random(seed)
    buffer = np.zeros(encoder.observation_size(config), dtype=np.float32)
    deals = []  # per game: (information state, seat, oracle's values) at each decision with a choice
    for _ in range(games):
        state = rules.new_game(config, Chance(rng.randrange(2**31)))
        decisions = []
        while not rules.is_terminal(state):
            seat = rules.current_seat(state)
            legal, observation = _observation(game, state, seat, buffer)
            if len(legal) > 1:
                decisions.append((rules.information_state(state, seat), seat, oracle.values(observation)))
            rules.apply(state, oracle.act(observation))
        deals.append(decisions)
    for spec in specs:
        bot = load_bot(spec, game, config, seed=seed)
        losses, sims, cpu = [], 0, 0.0
        for decisions in deals:
            bot.reset()
            for info, seat, values in decisions:
                clock = time.process_time()
                action = bot.search(rules.clone(info), seat)
                cpu += time.process_time() - clock
                sims += bot.last_search["simulations"]
                losses.append(max(values.values()) - values[action])
        mean, low, high = mean_interval(losses)
        print(f"{spec}: {len(losses)} decisions of {games} oracle games ({sum(x > 1e-9 for x in losses)} not "
              f"optimal); regret per decision {mean:.4f} [{low:.4f}, {high:.4f}]; {cpu / len(losses):.3f} CPU s "
              f"per decision, {sims / cpu:.0f} simulations per CPU s", flush=True)


# (game, players, spec, positions): the searches --fingerprint digests (the defaults, random rollouts, both trees)
FINGERPRINTS = [("ministeel", 4, "mcts", 12), ("ministeel", 2, "mcts", 6), ("ministeel", 6, "mcts", 6),
                ("ministeel_v1", 4, "mcts", 6), ("wyvern", 4, "mcts", 12), ("wyvern", 3, "mcts", 6),
                ("wyvern", 6, "mcts", 6), ("ministeel", 4, "mcts:300,rollout=random,prior=none", 4),
                ("wyvern", 4, "mcts:300,rollout=random,prior=none", 4), ("tiny_minotaur", 2, "mcts:300", 6),
                ("tiny_minotaur", 2, "mcts:300,tree=open", 6), ("minefield", 4, "mcts:200", 6)]


def fingerprint() -> None:
    import hashlib
    import json

    for name, players, spec, count in FINGERPRINTS:
        game = get_game(name)
        config = game.make_config({"num_players": players} if name != "tiny_minotaur" else {})
        bot = load_bot(spec, game, config, seed=5)
        found = []
        for state in positions(game, config, count, random.Random(players * 7 + len(name))):
            seat = game.rules.acting_seats(state)[0] if game.simultaneous else game.rules.current_seat(state)
            bot.reset()
            move = bot.search(game.rules.information_state(state, seat), seat)
            found.append([move, sorted(bot.last_search["visits"].items())])
        digest = hashlib.sha256(json.dumps(found).encode()).hexdigest()[:16]
        print(f"{name:<14}{players:>3}  {spec:<40}{count:>3} positions  {digest}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=6)
    parser.add_argument("--game", action="append", help="time only this game (repeatable; default: every table; "
                        "the positions then differ from those of the full run, which draws them in turn)")
    parser.add_argument("--spec", action="append", help="the mcts spec to time (default: mcts, each game's "
                        "defaults); --paired takes it repeated, the other modes once")
    parser.add_argument("--regret", type=int, default=0, metavar="GAMES",
                        help="measure Tiny Minotaur regret against the oracle over GAMES games instead")
    parser.add_argument("--paired", type=int, default=0, metavar="GAMES",
                        help="Tiny Minotaur regret per decision of every --spec (repeat it) on the same positions "
                             "of GAMES oracle games")
    parser.add_argument("--seed", type=int, default=0, help="--regret/--paired: the seed of the deals and the bot")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the Python and the kernel search where a "
                        "game has a kernel (interleaved)")
    parser.add_argument("--kernel-sims", type=int, default=0, metavar="N",
                        help="also time the kernel at N simulations a move (with the spec's other options)")
    parser.add_argument("--kernel-batch", type=int, action="append", default=[], metavar="B",
                        help="also time the kernel with B simulations under way (batch=B: a network's questions "
                             "answered in batches; repeatable)")
    parser.add_argument("--fingerprint", action="store_true",
                        help="print digests of seeded searches' moves and visit counts instead (compare checkouts)")
    args = parser.parse_args()
    if args.fingerprint:
        fingerprint()
        return
    specs = args.spec or ["mcts"]
    if args.paired:
        if not all(spec == "mcts" or spec.startswith("mcts:") for spec in specs):
            parser.error(f"--paired compares mcts specs (it reads each search's result), not {specs}")
        paired_regret(specs, args.paired, args.seed)
        return
    if len(specs) > 1:
        parser.error("--spec is given once except with --paired")
    args.spec = specs[0]
    if args.regret:
        regret(args.spec, args.regret, args.seed)
        return
    rng = random.Random(0)
    print(f"{'game':<16}{'seats':>6}{'sims/s':>10}{'s/move':>9}   (CPU time) spec {args.spec}")
    for name, overrides, _ in TABLES:
        if args.game and name not in args.game:
            continue
        game = get_game(name)
        config = game.make_config(overrides)
        states = positions(game, config, args.positions, rng)
        if search_hooks(game.name).kernel is not None and "kernel=" not in args.spec:
            compare_kernel(game, config, args.spec, states, args.repeats, args.kernel_sims, args.kernel_batch)
            continue
        sims, seconds = time_searches(load_bot(args.spec, game, config, seed=1), game, states)
        print(f"{name:<16}{game.rules.num_seats(config):>6}{sims / seconds:>10.0f}{seconds / len(states):>9.3f}")


def time_searches(bot, game, states) -> tuple[int, float]:
    """Simulations and CPU seconds of one search from each state (the bot reset before each, as per game)."""
    sims = seconds = 0.0
    for state in states:
        seat = game.rules.acting_seats(state)[0] if game.simultaneous else game.rules.current_seat(state)
        info = game.rules.information_state(state, seat)
        bot.reset()
        start = time.process_time()
        bot.search(info, seat)
        seconds += time.process_time() - start
        sims += bot.last_search["simulations"]
    return sims, seconds


def compare_kernel(game, config, spec: str, states, repeats: int, kernel_sims: int, batches: list[int] = ()) -> None:
    """The spec on the Python rules and in the game's compiled search, interleaved position by position over
    ``repeats`` rounds (the bots made afresh each round, so each round searches the same seeds); rates of
    the median round, the kernel's ratios to the Python search with their range over rounds."""
    import statistics

    joined = spec + ("," if ":" in spec else ":")
    engines = {"python": joined + "kernel=off", "kernel": joined + "kernel=on"}
    if kernel_sims:
        engines[f"kernel {kernel_sims} sims"] = f"{joined}kernel=on,sims={kernel_sims}"
    for batch in batches:
        engines[f"kernel batch={batch}"] = f"{joined}kernel=on,batch={batch}"
        if kernel_sims:
            engines[f"kernel {kernel_sims} sims batch={batch}"] = f"{joined}kernel=on,sims={kernel_sims},batch={batch}"
    load_bot(engines["kernel"], game, config, seed=1)  # compiled (or loaded from numba's cache) before timing
    rates: dict[str, list[float]] = {label: [] for label in engines}
    per_move: dict[str, list[float]] = {label: [] for label in engines}
    for _ in range(repeats):
        bots = {label: load_bot(engine, game, config, seed=1) for label, engine in engines.items()}
        totals = {label: [0.0, 0.0] for label in engines}
        for state in states:
            for label, bot in bots.items():
                sims, seconds = time_searches(bot, game, [state])
                totals[label][0] += sims
                totals[label][1] += seconds
        for label, (sims, seconds) in totals.items():
            rates[label].append(sims / seconds)
            per_move[label].append(seconds / len(states))
    seats = game.rules.num_seats(config)
    for label in engines:
        ratios = [rate / python for rate, python in zip(rates[label], rates["python"], strict=True)]
        ratio = "" if label == "python" else (f"   {statistics.median(ratios):.1f}x the Python search "
                                              f"({min(ratios):.1f}-{max(ratios):.1f})")
        print(f"{game.name:<16}{seats:>6}{statistics.median(rates[label]):>10.0f}"
              f"{statistics.median(per_move[label]):>9.4f}   {label}{ratio}", flush=True)


if __name__ == "__main__":
    main()
