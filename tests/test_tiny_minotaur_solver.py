"""The Tiny Minotaur solver and oracle bot.

* On hand-sized games (a house ruleset with two attack cards per deck, 30-40 HP) the solver's values
  equal an independent brute force: value iteration to convergence over the game graph that the
  *engine itself* generates (``rules.apply`` with every d20 face scripted), which meets the miss/miss
  loop by iterating rather than by the solver's exact 2x2 solve.
* The oracle's values agree with the engine by simulation, within an interval.
* Over seeded games with seats swapped the oracle scores at least 50% (within the interval) against
  every opponent in ``OPPONENTS``: random, the heuristic and a policy trained by self-play on the same
  config.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.tiny_minotaur_oracle import OracleBot
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance, ReplayError
from tavernzoo.envs.records import replay
from tavernzoo.envs.tiny_minotaur import rules, solver
from tavernzoo.eval.match import make_env, play_game
from tavernzoo.eval.stats import mean_interval
from tavernzoo.eval.tally import score_of

GAME = get_game("tiny_minotaur")
FULL = bool(os.environ.get("TAVERNZOO_FULL"))

# Opponents the oracle must not lose to; "trained" is a policy trained by self-play in the test itself.
OPPONENTS = ["random", "heuristic", "trained"]

# The rulebook's tiers and windows, with tiny decks (two attack cards each) and a cheap boss card.
HOUSE_DECKS = """
[damage]
regular = 10
middling = 20
stronk = 30

[initiative]
tier_1 = [1, 6]
tier_2 = [7, 13]
tier_3 = [14, 20]

[ranges.tier_1]
middling = [4, 13]
stronk = [7, 13]
dodge = [14, 20]
heal = [11, 20]

[ranges.tier_2]
middling = [5, 13]
stronk = [8, 13]
dodge = [15, 20]
heal = [12, 20]

[ranges.tier_3]
middling = [6, 13]
stronk = [9, 13]
dodge = [16, 20]
heal = [13, 20]

[classes.sword]
regular = { fighter = 1, paladin = 1 }
middling = 0
stronk = 1
dodge = 1
heal = 0

[classes.magic]
regular = { sorcerer = 1, cleric = 2 }
middling = 1
stronk = 0
dodge = 0
heal = 2

[classes.cloak]
regular = { rogue = 0, ranger = 0 }
middling = 1
stronk = 1
dodge = 1
heal = 1

[bosses.gore]
damage = 25
tier_1 = [5, 13]
tier_2 = [6, 13]
tier_3 = [7, 13]
"""

# (archetypes, tiers, bosses, config overrides): every card kind, heals against the cap, boss cards (each
# seat replacing its own choice of card), a deck with no regular card (so it can miss forever) and a
# one-card deck that soon can only pass.
HAND_SIZED = [
    (("fighter", "sorcerer"), (2, 1), (None, None), {"starting_hp": 30, "hp_cap": 30}),
    (("rogue", "paladin"), (3, 3), (None, None), {"starting_hp": 40, "hp_cap": 50, "heal_amount": 20}),
    (("cleric", "ranger"), (1, 3), ("gore", None), {"starting_hp": 40, "hp_cap": 40, "heal_amount": 30}),
    (("rogue", "ranger"), (2, 2), ("gore", "gore"),
     {"starting_hp": 30, "hp_cap": 40, "boss_replaces": ("middling", "stronk")}),
]


def config_for(archetypes, **options) -> rules.Config:
    """A config with these archetypes (and their classes), so that no chance is drawn before initiative."""
    return rules.Config(classes=tuple(rules.CLASS_OF[a] for a in archetypes), archetypes=tuple(archetypes), **options)


pytestmark = pytest.mark.usefixtures("private_solver_cache")  # tests/conftest.py




def start_state(config: rules.Config, tiers: tuple[int, int], first: int) -> rules.State:
    """The start of a game with these tiers and this first seat. Different tiers fix the first seat
    (the higher roll is in the higher tier); for the other one the engine's start is handed over."""
    table = rules.load_ruleset(config.ruleset).tiers
    faces = [range(table[t - 1][0], table[t - 1][1] + 1) for t in tiers]
    rolls = next((a, b) for a in faces[0] for b in faces[1] if a != b and ((a > b) == (first == 0) or
                                                                        tiers[0] != tiers[1]))
    state = rules.new_game(config, Chance.dice((20, rolls[0]), (20, rolls[1])))
    if state.first_seat != first:
        state = dataclasses.replace(state, first_seat=first, to_act=first)
    return state


# --- the independent brute force: value iteration over the engine's own game graph -----------------------


def _copy(state: rules.State, chance: Chance) -> rules.State:
    return dataclasses.replace(state, chance=chance, hp=list(state.hp), cards=[list(c) for c in state.cards],
                               last_events=[])


def _key(state: rules.State):
    """The state apart from the turn counter (the solve ignores the cap; it is set out of reach)."""
    return (tuple(state.hp), tuple(map(tuple, state.cards)), state.phase, state.pending_card, state.to_act,
            state.winner)


def _successors(state: rules.State, action: int) -> list[tuple[float, rules.State]]:
    """Every outcome of ``action`` with its probability, by scripting the engine's dice."""
    try:
        after = _copy(state, Chance.scripted([]))
        rules.apply(after, action)
        return [(1.0, after)]
    except ReplayError:  # it rolls a d20: play every face
        outcomes = []
        for face in range(1, 21):
            after = _copy(state, Chance.dice((20, face)))
            rules.apply(after, action)
            outcomes.append((1 / 20, after))
        return outcomes


def brute_force(starts: list[rules.State], tolerance: float = 1e-14):
    """Seat 0's expected return at every state reachable from ``starts`` (value iteration)."""
    graph, terminal, frontier = {}, {}, list(starts)
    while frontier:
        state = frontier.pop()
        key = _key(state)
        if key in graph or key in terminal:
            continue
        if rules.is_terminal(state):
            assert state.end_reason != rules.TURN_LIMIT
            terminal[key] = rules.returns(state)[0]
            continue
        moves = {}
        for action in rules.legal_actions(state):
            outcomes = _successors(state, action)
            moves[action] = [(p, _key(after)) for p, after in outcomes]
            frontier.extend(after for _, after in outcomes)
        graph[key] = (state.to_act, moves)
    values = dict.fromkeys(graph, 0.0) | terminal
    for _ in range(100_000):
        change = 0.0
        for key, (seat, moves) in graph.items():
            totals = [sum(p * values[k] for p, k in outcomes) for outcomes in moves.values()]
            new = max(totals) if seat == 0 else min(totals)
            change = max(change, abs(new - values[key]))
            values[key] = new
        if change < tolerance:
            break
    else:
        raise AssertionError("value iteration did not converge")
    return graph, values


@pytest.mark.parametrize("archetypes, tiers, bosses, overrides", HAND_SIZED)
def test_solver_equals_brute_force(house_ruleset, archetypes, tiers, bosses, overrides):
    config = config_for(archetypes, bosses=tuple(b or "none" for b in bosses), ruleset=house_ruleset,
                        max_turns=10**9, **overrides)
    starts = [start_state(config, tiers, first) for first in (0, 1)]
    graph, values = brute_force(starts)
    solution = solver.solve(solver.matchup_of_state(starts[0]), use_cache=False)
    checked = {"attack": 0, "react": 0}
    for key, (seat, moves) in graph.items():
        hp, cards, phase, pending, to_act, _ = key
        sign = 1.0 if seat == 0 else -1.0
        if phase == rules.ATTACK_PHASE:
            assert solution.attack_value(hp, cards, seat)[0] == pytest.approx(sign * values[key], abs=1e-9)
            action_values = solution.attack_values(hp, cards, seat)
            checked["attack"] += 1
        else:
            action_values = {a: v for a, (v, _) in solution.reaction_values(hp, cards, seat, pending).items()}
            checked["react"] += 1
        # every legal action's value, not only the best one's
        assert sorted(action_values) == sorted(moves)
        for action, outcomes in moves.items():
            brute = sign * sum(p * values[k] for p, k in outcomes)
            assert action_values[action] == pytest.approx(brute, abs=1e-9), (key, action)
    assert checked["attack"] > 20 and checked["react"] > 5
    for first, start in zip((0, 1), starts, strict=True):
        value, win = solution.start_value(first)
        assert value == pytest.approx((1 if first == 0 else -1) * values[_key(start)], abs=1e-9)
        assert 0.0 <= win <= 1.0 and -1e-12 <= win - value <= 1.0 + 1e-12


def test_pass_loop_and_no_attack_draw(house_ruleset):
    """A seat left with no attack card can only pass; with none on either side the game is a draw."""
    config = rules.Config(ruleset=house_ruleset, starting_hp=30, hp_cap=30)
    solution = solver.solve(solver.matchup_of(config, ("fighter", "sorcerer"), (1, 1)), use_cache=False)
    # Seat 0 has nothing left to attack with, seat 1 a middling card: seat 1 attacks until it hits.
    hp, cards = (10, 30), ((0, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 0))
    assert solution.attack_values(hp, cards, 0) == {rules.PASS: pytest.approx(-1.0)}
    assert solution.attack_value(hp, cards, 1) == pytest.approx((1.0, 1.0))
    assert solution.attack_value(hp, ((0,) * 6, (0, 0, 0, 0, 0, 2)), 0) == (0.0, 0.0)


# --- the cache -------------------------------------------------------------------------------------------


def test_cache_round_trip_is_reproducible(house_ruleset):
    config = rules.Config(ruleset=house_ruleset, starting_hp=40, hp_cap=40)
    matchup = solver.matchup_of(config, ("rogue", "cleric"), (2, 3))
    fresh = solver.solve(matchup)
    path = solver.cache_path(matchup)
    first_bytes = path.read_bytes()
    solver.clear_memory()
    loaded = solver.solve(matchup)
    assert loaded is not fresh and len(loaded) == len(fresh)
    for seat in (0, 1):
        assert loaded.start_value(seat) == fresh.start_value(seat)
    path.unlink()
    solver.clear_memory()
    solver.solve(matchup)
    assert hashlib.sha256(path.read_bytes()).digest() == hashlib.sha256(first_bytes).digest()
    # the key covers every rule the result depends on
    assert solver.matchup_of(config, ("rogue", "cleric"), (2, 2)).digest() != matchup.digest()
    assert solver.matchup_of(config, ("rogue", "sorcerer"), (2, 3)).digest() != matchup.digest()
    other = dataclasses.replace(config, heal_amount=10)
    assert solver.matchup_of(other, ("rogue", "cleric"), (2, 3)).digest() != matchup.digest()
    bosses = ("gore", "gore")
    by_seat = {solver.matchup_of(config, ("rogue", "cleric"), (2, 3), bosses, replaces).digest()
               for replaces in (("middling", "regular"), ("stronk", "regular"), ("middling", "middling"))}
    assert len(by_seat) == 3  # each seat's boss_replaces is part of the key


def test_cache_rejects_a_foreign_file(house_ruleset):
    config = rules.Config(ruleset=house_ruleset, starting_hp=30, hp_cap=30)
    a = solver.matchup_of(config, ("rogue", "cleric"), (2, 3))
    b = solver.matchup_of(config, ("fighter", "cleric"), (2, 3))
    solver.save(solver.cache_path(b), solver.solve(a, use_cache=False))  # a's table under b's name
    solved = solver.solve(b)
    assert solved.start_value(0) == solver.solve(b, use_cache=False).start_value(0)


def test_mirrored_matchup_has_mirrored_values(house_ruleset):
    config = rules.Config(ruleset=house_ruleset, starting_hp=40, hp_cap=40)
    matchup = solver.matchup_of(config, ("rogue", "sorcerer"), (1, 3))
    a, b = solver.solve(matchup, use_cache=False), solver.solve(matchup.swapped(), use_cache=False)
    for seat in (0, 1):
        assert a.start_value(seat) == pytest.approx(b.start_value(1 - seat), abs=1e-12)
    canonical, swapped = solver.canonical(matchup)
    assert solver.canonical(matchup.swapped()) == (canonical, not swapped)


def test_sides_match_the_engine():
    """The solver lays out decks, windows and damages exactly as ``rules.new_game`` does."""
    for classes in (("sword", "magic"), ("cloak", "sword"), ("magic", "magic")):
        for bosses in (("none", "none"), ("wyvern_breath", "tavern_brawl")):
            for replaces in (("regular", "regular"), ("stronk", "middling")):
                config = rules.Config(classes=classes, bosses=bosses, boss_replaces=replaces)
                for seed in range(12):
                    state = rules.new_game(config, Chance(seed))
                    for seat in (0, 1):
                        side = solver.side_of_state(state, seat)
                        assert list(side.deck) == state.cards[seat]
                        windows = state.windows[seat]
                        faces = [max(0, min(hi, 20) - lo + 1) for lo, hi in windows]
                        has_boss = state.bosses[seat] is not None
                        assert side.attack_faces == (20, faces[1], faces[2], faces[3] if has_boss else 0)
                        assert side.reaction_faces == (faces[4], faces[5])
                        assert side.damage == state.damage[seat]


# --- the oracle against the engine -----------------------------------------------------------------------


def _play(config, bots, games: int, seed: int = 0):
    """Seeded games with seats swapped per deal. Per deal: ``bots[0]``'s mean score, and its mean return
    minus the game's value for its seat at the start; and the share of games the turn cap cut off."""
    env = make_env(GAME, config)
    scores, excess, capped = [], [], 0
    for deal in range(games // 2):
        deal_score = deal_excess = 0.0
        for seat in (0, 1):
            seated = [bots[0], bots[1]] if seat == 0 else [bots[1], bots[0]]
            result, record = play_game(env, seated, seed=seed * 100_003 + deal)
            state = env.unwrapped.game_state
            value, _ = solver.solve(solver.matchup_of_state(state)).start_value(state.first_seat)
            deal_score += score_of(result, seat) / 2
            deal_excess += (result[seat] - (value if seat == state.first_seat else -value)) / 2
            capped += record["end_reason"] == rules.TURN_LIMIT
        scores.append(deal_score)
        excess.append(deal_excess)
    return scores, excess, capped / (2 * (games // 2))


def test_oracle_values_agree_with_the_engine(house_ruleset):
    """Oracle against oracle from a fixed start: the mean return of the first seat is the solver's value."""
    config = GAME.make_config(classes=("cloak", "magic"), archetypes=("rogue", "cleric"), ruleset=house_ruleset,
                              starting_hp=40, hp_cap=40)
    n = 4000 if FULL else 800
    oracle = OracleBot(config, 0)
    for seed in range(4):  # a start where the first seat's tier is the lower one's, for variety
        state = rules.new_game(config, Chance(seed))
        if state.tiers[state.first_seat] != 3:
            break
    first = state.first_seat
    value, win = solver.solve(solver.matchup_of_state(state)).start_value(first)
    outcomes = []
    observation = {"observation": np.empty(GAME.encoder.OBSERVATION_SIZE, np.float32),
                   "action_mask": np.zeros(rules.NUM_ACTIONS, np.int8)}
    for game in range(n):  # the same start, fresh dice each game
        sim = _copy(state, Chance(1_000 + game))
        while not rules.is_terminal(sim):
            seat = rules.current_seat(sim)
            GAME.encoder.encode(sim, seat, observation["observation"])
            observation["action_mask"][:] = 0
            observation["action_mask"][rules.legal_actions(sim)] = 1
            rules.apply(sim, oracle.act(observation))
        outcomes.append(rules.returns(sim)[first])
    mean, low, high = mean_interval(outcomes, 0.99)
    assert low <= value <= high, (value, mean, low, high)
    wins = sum(o > 0 for o in outcomes) / n
    half = 2.6 * math.sqrt(win * (1 - win) / n) + 1e-9
    assert abs(wins - win) <= half, (wins, win)


@pytest.mark.slow
@pytest.mark.parametrize("opponent", OPPONENTS)
def test_oracle_scores_at_least_half(house_ruleset, opponent, tmp_path):
    """Seeded games, seats swapped each deal: the oracle's score is >= 50% within the interval, and its
    mean return is at least the game's value for it (a weaker opponent only gives it more)."""
    config = GAME.make_config(classes=("cloak", "sword"), ruleset=house_ruleset, starting_hp=40, hp_cap=40)
    games = 2000 if FULL else 300
    oracle = OracleBot(config, 0)
    if opponent == "trained":
        opponent = _train_briefly(config, tmp_path)
    other = load_bot(opponent, GAME, config, seed=1)
    scores, excess, capped = _play(config, [oracle, other], games)
    mean, low, high = mean_interval(scores)
    assert high >= 0.5, f"oracle vs {opponent}: score {mean:.3f} [{low:.3f}, {high:.3f}]"
    mean, low, high = mean_interval(excess)
    assert high >= 0.0, f"oracle vs {opponent}: return - value {mean:.3f} [{low:.3f}, {high:.3f}]"
    assert capped < 0.01


def _train_briefly(config, tmp_path) -> str:
    """A policy trained by self-play on this very config (a small budget: the test is about the oracle)."""
    pytest.importorskip("sb3_contrib")
    from tavernzoo.envs.core import config_to_dict
    from tavernzoo.train.config import TrainConfig
    from tavernzoo.train.run import Trainer

    train_config = TrainConfig(game_config=config_to_dict(config), timesteps=8192, n_envs=8, n_steps=128,
                               batch_size=256, net_arch=(32, 32), eval_games=0, checkpoint_every=10**9)
    Trainer(train_config, tmp_path / "run").run(progress=False)
    return str(tmp_path / "run")


def test_oracle_decodes_every_observation_and_stays_legal():
    """Standard rules at a smaller HP (fast solves): every decision is legal and records replay."""
    config = GAME.make_config(starting_hp=30, hp_cap=30, classes=("magic", "cloak"),
                              bosses=("minotaur_gore", "none"), boss_replaces=("stronk", "regular"))
    env = make_env(GAME, config)
    oracle = OracleBot(config, 0)
    for seed in range(3):
        _, record = play_game(env, [oracle, load_bot("random", GAME, config, seed)], seed=seed)
        replay(record)
        _, record = play_game(env, [load_bot("heuristic", GAME, config, seed), oracle], seed=seed)
        replay(record)


def test_oracle_prefers_the_lethal_sure_hit():
    """Opponent at 10 HP with no reactions: a regular card (always hits, 10 damage) wins at once."""
    config = GAME.make_config(starting_hp=30, hp_cap=30, classes=("sword", "sword"))
    solution = solver.solve(solver.matchup_of(config, ("fighter", "fighter"), (1, 1)), use_cache=False)
    hp, cards = (30, 10), ((1, 1, 1, 0, 0, 0), (1, 1, 1, 0, 0, 0))
    assert solution.best_attack(hp, cards, 0) == rules.ATTACK_REGULAR
    assert solution.attack_values(hp, cards, 0)[rules.ATTACK_REGULAR] == pytest.approx(1.0)


def test_oracle_decodes_the_exact_state():
    """Every decision of seeded random games: the decoded position is the engine's state."""
    config = GAME.make_config(starting_hp=30, hp_cap=40, bosses=("wyvern_breath", "tavern_brawl"),
                              boss_replaces=("stronk", "middling"))
    oracle = OracleBot(config, 0)
    rng = np.random.default_rng(0)
    observation = np.empty(GAME.encoder.OBSERVATION_SIZE, np.float32)
    decisions = 0
    for seed in range(25):
        state = rules.new_game(config, Chance(seed))
        while not rules.is_terminal(state):
            seat = rules.current_seat(state)
            GAME.encoder.encode(state, seat, observation)
            position = oracle.decode(observation)
            order = (seat, 1 - seat) if position["me"] == 0 else (1 - seat, seat)
            assert position["hp"] == tuple(state.hp[s] for s in order)
            assert position["cards"] == tuple(tuple(state.cards[s]) for s in order)
            assert position["phase"] == ("react" if state.phase == rules.REACT_PHASE else "attack")
            assert position["pending_card"] == state.pending_card
            matchup = solver.canonical(solver.matchup_of_state(state))[0]
            assert position["matchup"] == matchup
            decisions += 1
            rules.apply(state, int(rng.choice(rules.legal_actions(state))))
    assert decisions > 100


def test_solver_imports_no_rl_library():
    code = ("import sys, tavernzoo.envs.tiny_minotaur.solver; "
            "sys.exit(sorted(m for m in ('gymnasium', 'pettingzoo', 'torch') if m in sys.modules) != [])")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# --- the initiative roll: a higher roll is never worse -----------------------------------------------------


@pytest.mark.slow
def test_a_higher_initiative_roll_is_never_worse():
    """For every pair of decks and every roll of the opponent, my exact value and win chance under optimal
    play never fall as my own roll rises (``solver.initiative_violations``), on the standard rules: at
    100 HP as played with TAVERNZOO_FULL=1 (78 matchups, minutes of solving), at 30 HP otherwise."""
    hp = 100 if FULL else 30
    assert solver.initiative_violations(GAME.make_config(starting_hp=hp, hp_cap=hp)) == []


def test_the_first_release_table_makes_a_higher_roll_worse():
    """The same check fails on ``house_narrowing`` (it can fail): rolling into tier 3 costs."""
    narrowing = GAME.make_config(starting_hp=30, hp_cap=30, ruleset="house_narrowing")
    found = solver.initiative_violations(narrowing, ("fighter",))
    assert any("rolling 14 instead of 13" in line for line in found), found[:3]


def test_by_roll_moves_first_above_the_opponent_roll_and_mirrors_the_first_mover():
    config = GAME.make_config(starting_hp=20, hp_cap=20)
    rows = solver.by_roll(config, "rogue", "cleric", 9)
    assert [roll for roll, _, _ in rows] == [r for r in range(1, 21) if r != 9]
    value, win = solver.first_mover(config, ("cleric", 2), ("rogue", 1))
    assert rows[0][1:] == pytest.approx((-value, win - value))  # I rolled 1: tier 1, the cleric moved first
    assert rows[-1][1:] == pytest.approx(solver.first_mover(config, ("rogue", 3), ("cleric", 2)))
