"""Differential replay of the Minefield kernel (envs/minefield/kernel.py) against the Python rules, the reference.

Seeded games are played round by round in both engines, the same joint move in each (every living seat's
target; the kernel takes it as a row of targets, -1 for seats that do not act), each drawing from the same
chance stream (the kernel runs the very Mersenne Twister of ``Chance(seed)``): after every round the acting
seats and every seat's legal targets, every State field (the kernel's row against the row the rules' State
converts to; the values the rules set against the kernel's returns), the generator's state and the number of
draws must be equal. A mismatch names the option set, game, seed, round and the first differing field.

Games are played with uniformly random targets and with the heuristic bot (predictable targets, more
mutual attacks and void battles), whose compiled form (agents/minefield_kernel.py) must choose every
target. Short form in CI (1,500 random games at the defaults, 150 per player count and per other option
set, 50 of heuristic play per option set); ``TAVERNZOO_FULL=1`` runs the long form (100,000 random games
at the defaults, 2,000 per player count and per option set, 666 of heuristic play per option set).
"""

from __future__ import annotations

import os
import random
import re

import kernel_checks
import numpy as np
import pytest

from tavernzoo.agents import minefield_kernel as heuristic_kernel
from tavernzoo.agents.minefield import HeuristicBot
from tavernzoo.envs.core import Chance, IllegalActionError
from tavernzoo.envs.minefield import encode, kernel, rules

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
DEFAULT_GAMES = 100_000 if FULL else 1_500
GAMES_PER_OPTION_SET = 2_000 if FULL else 150

# Every option away from its default, one at a time (and a few together), at 8 players unless set.
OPTION_SETS = {
    "simple": {"variant": "simple"},
    "stacked": {"variant": "stacked"},
    "double_whammy": {"double_whammy": True},
    "simple_double_whammy": {"variant": "simple", "double_whammy": True},
    "stacked_double_whammy_5p": {"variant": "stacked", "double_whammy": True, "num_players": 5},
    "seat_order": {"attack_order": "seat"},
    "mines_only": {"roll_battle": "mines_only"},
    "mines_only_4p_keep": {"roll_battle": "mines_only", "finals_mines": "keep", "num_players": 4},
    "mines_only_simple_3p": {"roll_battle": "mines_only", "variant": "simple", "num_players": 3},
    "mines_only_max_rounds_6": {"roll_battle": "mines_only", "max_rounds": 6},
    "finals_new": {"finals_mines": "new"},
    "finals_keep": {"finals_mines": "keep"},
    "finals_keep_2p": {"finals_mines": "keep", "num_players": 2},
    "finals_keep_stacked": {"finals_mines": "keep", "variant": "stacked"},
    "placement": {"rewards": "placement"},
    "placement_max_rounds_2": {"rewards": "placement", "max_rounds": 2},
    "max_rounds_1_20p": {"max_rounds": 1, "num_players": 20},
    "everything_12p": {"num_players": 12, "variant": "stacked", "double_whammy": True, "attack_order": "seat",
                       "roll_battle": "mines_only", "finals_mines": "new", "rewards": "placement", "max_rounds": 30},
}


def _joint_row(state: rules.State, joint: dict[int, int]) -> np.ndarray:
    row = np.full(state.config.num_players, -1, dtype=np.int64)
    for seat, target in joint.items():
        row[seat] = target
    return row


def replay(config: rules.Config, seed: int, label: str, bot_seeds: list | None = None) -> tuple[float, ...]:
    """Play game ``seed`` in both engines with the same joint moves (uniformly random targets, or heuristic
    bots seeded ``bot_seeds[seat]``, whose compiled form must choose every target alike); fail at the first
    difference."""
    bots = None if bot_seeds is None else [HeuristicBot(config, seed) for seed in bot_seeds]
    compiled = None if bot_seeds is None else heuristic_kernel.Heuristics(bot_seeds)
    state = rules.new_game(config, Chance(seed))
    batch = kernel.new_games(config, [seed])
    picker = random.Random(seed)
    played = 0

    def check(what: str) -> None:
        difference = kernel.first_difference(batch, 0, state)
        assert difference is None, f"{label}, seed {seed}, round {played} ({what}): {difference}"

    check("the deal")
    observation = np.zeros(encode.observation_size(config), dtype=np.float32)
    observer = encode.Observer()
    while not rules.is_terminal(state):
        acting = rules.acting_seats(state)
        assert tuple(np.flatnonzero(kernel.acting_seats(batch)[0])) == acting, (
            f"{label}, seed {seed}, round {played}: acting seats")
        masks = kernel.legal_mask(batch)[0]
        joint = {}
        for seat in range(config.num_players):
            legal = rules.legal_actions(state, seat)
            assert list(np.flatnonzero(masks[seat])) == legal, (
                f"{label}, seed {seed}, round {played}, seat {seat}: legal targets: kernel "
                f"{list(np.flatnonzero(masks[seat]))}, rules {legal}")
            if seat not in acting:
                continue
            if bots is None:
                joint[seat] = legal[int(picker.random() * len(legal))]
            else:
                observer.encode(state, seat, observation)
                mask = np.zeros(config.num_players, dtype=np.int8)
                mask[legal] = 1
                joint[seat] = bots[seat].act({"observation": observation, "action_mask": mask})
        if compiled is not None:
            chosen = compiled.joint(batch, 0)
            assert list(chosen) == list(_joint_row(state, joint)), (
                f"{label}, seed {seed}, round {played}: the heuristic plays {joint}, its compiled form {list(chosen)}")
        rules.apply_joint(state, joint)
        kernel.step_batch(batch, _joint_row(state, joint)[None, :])
        played += 1
        check(str(joint))
    assert not kernel.acting_seats(batch)[0].any() and not kernel.legal_mask(batch).any(), (
        f"{label}, seed {seed}: the kernel has moves after the end")
    assert bool(kernel.is_terminal(batch)[0])
    expected = rules.returns(state)
    got = tuple(kernel.returns(batch)[0])
    assert got == expected, f"{label}, seed {seed}, round {played}: returns: kernel {got}, rules {expected}"
    return expected


@pytest.mark.slow
def test_default_games_replay_identically():
    config = rules.Config()
    for seed in range(DEFAULT_GAMES):
        replay(config, seed, "defaults")


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 6, 11, 16, 20])
def test_every_table_size_replays_identically(players):
    config = rules.Config(num_players=players)
    for seed in range(GAMES_PER_OPTION_SET):
        replay(config, seed, f"defaults at {players} players")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_option_sets_replay_identically(name):
    config = rules.Config(**OPTION_SETS[name])
    for seed in range(GAMES_PER_OPTION_SET):
        replay(config, seed, name)


HEURISTIC_OPTION_SETS = [{"num_players": 6}, {"num_players": 6, "attack_order": "seat"}, {},
                         {"num_players": 3, "roll_battle": "mines_only"},
                         {"num_players": 13, "variant": "stacked", "double_whammy": True},
                         {"num_players": 5, "attack_order": "seat", "finals_mines": "keep", "rewards": "placement"}]


@pytest.mark.slow
@pytest.mark.parametrize("options", HEURISTIC_OPTION_SETS)
def test_heuristic_games_replay_identically(options):
    """The heuristic bot's games (predictable targets, mutual attacks, void battles), and the bot's compiled
    form (agents/minefield_kernel.py) chooses every seat's every target alike."""
    config = rules.Config(**options)
    for seed in range(GAMES_PER_OPTION_SET // 3):
        replay(config, seed, f"heuristic play {options}", [seed * 100 + seat for seat in range(config.num_players)])


@pytest.mark.parametrize("options", HEURISTIC_OPTION_SETS[:3])
def test_heuristic_rollouts_are_the_games_the_bots_play(options):
    config = rules.Config(**options)
    seeds = list(range(12))
    bot_seeds = [[seed * 100 + seat for seat in range(config.num_players)] for seed in seeds]
    batch = kernel.new_games(config, seeds)
    before = batch.state.copy()
    values, steps = heuristic_kernel.rollout_heuristic(batch, bot_seeds)
    assert np.array_equal(batch.state, before), "a rollout changed the batch it started from"
    observation = np.zeros(encode.observation_size(config), dtype=np.float32)
    for g, seed in enumerate(seeds):
        state, taken = rules.new_game(config, Chance(seed)), 0
        bots = [HeuristicBot(config, bot_seed) for bot_seed in bot_seeds[g]]
        while not rules.is_terminal(state):
            joint = {}
            for seat in rules.acting_seats(state):
                encode.encode(state, seat, observation)
                mask = np.zeros(config.num_players, dtype=np.int8)
                mask[rules.legal_actions(state, seat)] = 1
                joint[seat] = bots[seat].act({"observation": observation, "action_mask": mask})
            rules.apply_joint(state, joint)
            taken += len(joint)
        assert steps[g] == taken, f"seed {seed}"
        assert tuple(values[g]) == rules.returns(state), f"seed {seed}"
    with pytest.raises(ValueError, match=f"bot_seeds must be 12 rows of {config.num_players} non-negative integers"):
        heuristic_kernel.rollout_heuristic(batch, [[1]])


def test_states_convert_both_ways_mid_game():
    """A Python State taken into the kernel mid-game, and the kernel's game back out, are the same game (every
    seat observes and views them alike), and both engines play on identically from there."""
    config = rules.Config(num_players=7, variant="stacked", double_whammy=True)
    observed = np.zeros(encode.observation_size(config), dtype=np.float32)
    expected = np.zeros_like(observed)

    def random_joint(state: rules.State, picker: random.Random) -> dict[int, int]:
        joint = {}
        for seat in rules.acting_seats(state):
            legal = rules.legal_actions(state, seat)
            joint[seat] = legal[int(picker.random() * len(legal))]
        return joint

    for seed in range(30):
        state = rules.new_game(config, Chance(seed))
        picker = random.Random(seed)
        for _ in range(seed % 5):
            if not rules.is_terminal(state):
                rules.apply_joint(state, random_joint(state, picker))
        batch = kernel.from_states([state])
        assert kernel.first_difference(batch, 0, state) is None
        back = kernel.to_state(batch, 0)
        for name in rules.State.__slots__:
            if name != "chance":
                assert getattr(back, name) == getattr(state, name), f"seed {seed}: {name}"
        assert back.chance._random.getstate() == state.chance._random.getstate()
        for seat in range(config.num_players):
            encode.encode(back, seat, observed)
            encode.encode(state, seat, expected)
            assert observed.tolist() == expected.tolist(), f"seed {seed}"
            assert encode.view(back, seat) == encode.view(state, seat), f"seed {seed}"
        assert encode.render(back) == encode.render(state)
        while not rules.is_terminal(state):
            joint = random_joint(state, picker)
            rules.apply_joint(state, joint)
            rules.apply_joint(back, joint)
            kernel.step_batch(batch, _joint_row(state, joint)[None, :])
        assert kernel.first_difference(batch, 0, state) is None
        assert rules.returns(back) == rules.returns(state)


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 8}, {"num_players": 20},
                                     {"num_players": 5, "roll_battle": "mines_only", "rewards": "placement",
                                      "max_rounds": 12}])
def test_whole_rollouts_are_the_games_the_rules_play(options):
    """rollout_random plays, inside one call, the games the rules play with the same picks (living seats in
    ascending order, one pick each) and chance."""
    config = rules.Config(**options)
    seeds = list(range(40))
    batch = kernel.new_games(config, seeds)
    kernel_checks.check_rollouts_replay(kernel, rules, config, batch, seeds, kernel_checks.play_joint_randomly(rules))


def test_rollouts_stop_after_max_rounds():
    batch = kernel.new_games(rules.Config(num_players=10), [5, 6])
    _, steps = kernel.rollout_random(batch, [1, 2], max_rounds=1)
    assert list(steps) == [10, 10]


def test_step_batch_plays_a_round_in_many_games_and_leaves_rows_of_minus_one_alone():
    config = rules.Config(num_players=3)
    batch = kernel.new_games(config, [0, 1, 2])
    states = [rules.new_game(config, Chance(seed)) for seed in range(3)]
    joints = [{0: 1, 1: 2, 2: 0}, None, {0: 2, 1: 0, 2: 1}]
    actions = np.full((3, 3), -1)
    for g, joint in enumerate(joints):
        if joint is not None:
            actions[g] = _joint_row(states[g], joint)
            rules.apply_joint(states[g], joint)
    kernel.step_batch(batch, actions)
    for g in range(3):
        assert kernel.first_difference(batch, g, states[g]) is None


def test_a_batch_of_several_table_sizes_is_as_wide_as_its_largest():
    small, large = rules.new_game(rules.Config(num_players=2), Chance(1)), rules.new_game(rules.Config(), Chance(2))
    batch = kernel.from_states([small, large])
    assert batch.width == 8 and kernel.legal_mask(batch).shape == (2, 8, 8)
    assert kernel.returns(batch).shape == (2, 8)
    assert kernel.acting_seats(batch)[0].tolist() == [True, True] + [False] * 6
    kernel.step_batch(batch, [[1, 0] + [-1] * 6, [-1] * 8])
    rules.apply_joint(small, {0: 1, 1: 0})
    assert kernel.first_difference(batch, 0, small) is None
    assert kernel.first_difference(batch, 1, large) is None


def test_a_wrong_joint_move_names_game_seat_and_what_was_wrong_and_changes_nothing():
    config = rules.Config(num_players=3)
    batch = kernel.new_games(config, [0, 1])
    before = batch.state.copy()
    with pytest.raises(IllegalActionError, match=re.escape("'target:1'") + ".*game 1 of the batch, seat 1"):
        kernel.step_batch(batch, [[1, 2, 0], [1, 1, 0]])
    with pytest.raises(IllegalActionError, match=re.escape("game 0 of the batch: a round needs one target from each "
                                                           "living seat; missing seats [2], extra seats []")):
        kernel.step_batch(batch, [[1, 2, -1], [-1, -1, -1]])
    assert np.array_equal(batch.state, before)
    # the rules' own message for the same joint move
    with pytest.raises(IllegalActionError, match=re.escape("missing seats [2], extra seats []")):
        rules.apply_joint(rules.new_game(config, Chance(0)), {0: 1, 1: 2})
    with pytest.raises(ValueError, match="actions must be 2 rows of 3 integers"):
        kernel.step_batch(batch, [1, 2])
    kernel_checks.check_bad_seeds(kernel, rules, batch)


def test_what_the_kernel_cannot_take_is_named_and_played_on_python(capsys):
    config = rules.Config(num_players=4)
    scripted = rules.new_game(config, Chance.scripted([]))
    kernel_checks.check_what_it_cannot_take(kernel, rules, config, "Minefield", capsys, scripted,
                                            {"max_rounds": 1}, 4, kernel_checks.play_joint_randomly(rules))


def test_without_numba_rollouts_play_on_python_and_say_why(monkeypatch, capsys):
    monkeypatch.setattr(kernel, "numba", None)
    config = rules.Config(num_players=3)
    kernel_checks.check_without_numba(kernel, rules, config, "Minefield", capsys,
                                      kernel_checks.play_joint_randomly(rules))
    with pytest.raises(ValueError, match="the Minefield kernel is unavailable: numba is not installed"):
        heuristic_kernel.rollout_heuristic(kernel.Batch(*kernel._empty(1), [config]), [[0, 1, 2]])
