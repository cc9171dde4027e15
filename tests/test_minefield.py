"""Minefield's rules: the mine table, the host's procedure in scripted scenarios, variants, finals,
illegal moves, records, and the statistics docs/rules/minefield.md derives."""

from __future__ import annotations

import math
import os
import random
from fractions import Fraction

import pytest

from tavernzoo.envs import Chance, IllegalActionError, ReplayError
from tavernzoo.envs.minefield import GAME, rules
from tavernzoo.envs.minefield.rules import (
    ATTACKER_MINE,
    ATTACKER_WON,
    BEGINNING,
    DEFENDER_MINE,
    DEFENDER_WON,
    END,
    STANDOFF,
    VOID,
    Config,
    apply_joint,
    mine_numbers,
    mines_as_numbers,
    new_game,
    resolve_battle,
)
from tavernzoo.envs.records import make_record, replay

FULL = bool(os.environ.get("TAVERNZOO_FULL"))


def host(*draws: tuple[int, int]) -> Chance:
    """Scripted dice: ``(10, d)`` a d10, ``(2, 1)`` beginning / ``(2, 2)`` end, ``(100, r)`` a d100,
    ``(k, i)`` the i-th of k for a shuffle draw."""
    return Chance.dice(*draws)


def mines(d: int, side: int) -> list[tuple[int, int]]:
    return [(10, d), (2, side + 1)]


def play(config: Config, chance: Chance, *rounds: dict[int, int]) -> rules.State:
    state = new_game(config, chance)
    for joint in rounds:
        apply_joint(state, joint)
    assert chance.exhausted, "the scenario left dice unused"
    return state


SEAT_ORDER = dict(attack_order="seat")


# --- the mine table ----------------------------------------------------------------------------------

MINE_TABLE = {
    (1, BEGINNING): range(10, 20), (2, BEGINNING): range(20, 30), (3, BEGINNING): range(30, 40),
    (4, BEGINNING): range(40, 50), (5, BEGINNING): range(50, 60), (6, BEGINNING): range(60, 70),
    (7, BEGINNING): range(70, 80), (8, BEGINNING): range(80, 90), (9, BEGINNING): range(90, 100),
    (10, BEGINNING): [1, 2, 3, 4, 5, 6, 7, 8, 9, 100],
    (1, END): [1, 11, 21, 31, 41, 51, 61, 71, 81, 91], (2, END): [2, 12, 22, 32, 42, 52, 62, 72, 82, 92],
    (3, END): [3, 13, 23, 33, 43, 53, 63, 73, 83, 93], (4, END): [4, 14, 24, 34, 44, 54, 64, 74, 84, 94],
    (5, END): [5, 15, 25, 35, 45, 55, 65, 75, 85, 95], (6, END): [6, 16, 26, 36, 46, 56, 66, 76, 86, 96],
    (7, END): [7, 17, 27, 37, 47, 57, 67, 77, 87, 97], (8, END): [8, 18, 28, 38, 48, 58, 68, 78, 88, 98],
    (9, END): [9, 19, 29, 39, 49, 59, 69, 79, 89, 99],
    (10, END): [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
}


@pytest.mark.parametrize(("d", "side"), sorted(MINE_TABLE))
def test_every_mine_set_matches_the_rulebook(d, side):
    numbers = mine_numbers(d, side)
    assert list(numbers) == list(MINE_TABLE[d, side])
    assert len(numbers) == 10 and all(1 <= k <= 100 for k in numbers)
    assert mines_as_numbers(rules.MINE_BITS[d, side]) == list(numbers)


def test_the_beginnings_and_the_ends_each_cover_1_to_100_once():
    for side in (BEGINNING, END):
        covered = sorted(k for d in range(1, 11) for k in mine_numbers(d, side))
        assert covered == list(range(1, 101))
    with pytest.raises(ValueError):
        mine_numbers(11, END)


def test_the_rulebook_examples_6_beginning_and_4_end():
    assert mine_numbers(6, BEGINNING) == tuple(range(60, 70))
    assert mine_numbers(4, END) == (4, 14, 24, 34, 44, 54, 64, 74, 84, 94)


# --- configuration -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("num_players", 1, "num_players"), ("num_players", 21, "num_players"), ("num_players", 2.5, "num_players"),
        ("variant", "hard", "simple"), ("attack_order", "alphabetical", "seat"),
        ("roll_battle", "dice", "mines_only"), ("finals_mines", "old", "keep"), ("rewards", "money", "placement"),
        ("double_whammy", 2, "double_whammy"), ("max_rounds", 0, "max_rounds"),
    ],
)
def test_bad_options_raise_naming_the_option(option, value, message):
    with pytest.raises(ValueError, match=message):
        GAME.make_config(**{option: value})


def test_unknown_options_are_rejected():
    with pytest.raises(ValueError, match="unknown option"):
        GAME.make_config(players=4)


# --- one round, scripted -----------------------------------------------------------------------------


def test_an_attack_on_a_player_already_out_is_void():
    # 0 -> 1, 1 -> 2, 2 -> 0 in seat order; mines 60-69.
    chance = host(*mines(6, BEGINNING), (100, 50), (100, 30), (100, 70), (100, 20))
    state = play(Config(num_players=3, **SEAT_ORDER), chance, {0: 1, 1: 2, 2: 0})
    assert state.last_battles == (
        (0, 1, ATTACKER_WON, ((50, 30),)),
        (1, 2, VOID, ()),
        (2, 0, ATTACKER_WON, ((70, 20),)),
    )
    assert state.out_order == [1, 0] and state.winner == 2 and state.over
    assert rules.returns(state) == (-0.5, -0.5, 1.0)
    assert state.end_reason == rules.LAST_STANDING and not rules.is_truncated(state)


def test_an_attacker_who_was_knocked_out_earlier_does_not_attack():
    # 0 -> 1 and 2 -> 1 and 1 -> 2: 1's attack comes after 0 eliminated 1, and 2's attack on 1 is void too.
    chance = host(*mines(6, BEGINNING), (100, 80), (100, 10), (100, 5), (100, 4))
    state = play(Config(num_players=4, **SEAT_ORDER), chance, {0: 1, 1: 2, 2: 1, 3: 0})
    assert [battle[2] for battle in state.last_battles] == [ATTACKER_WON, VOID, VOID, ATTACKER_WON]
    assert state.out_order == [1, 0] and state.num_alive == 2 and not state.over


def test_an_attacker_on_a_mine_is_out_and_the_defender_does_not_roll():
    chance = host(*mines(6, BEGINNING), (100, 65), (100, 1), (100, 99))
    state = play(Config(num_players=3, **SEAT_ORDER), chance, {0: 1, 1: 2, 2: 1})
    assert state.last_battles[0] == (0, 1, ATTACKER_MINE, ((65, 0),))
    assert state.last_battles[1] == (1, 2, DEFENDER_WON, ((1, 99),))
    assert state.last_battles[2] == (2, 1, VOID, ())
    assert state.winner == 2


def test_a_defender_on_a_mine_is_out_even_with_the_higher_roll():
    chance = host(*mines(4, END), (100, 3), (100, 94), (100, 50), (100, 49))
    state = play(Config(num_players=3, **SEAT_ORDER), chance, {0: 1, 1: 0, 2: 0})
    assert state.last_battles[0] == (0, 1, DEFENDER_MINE, ((3, 94),))
    assert state.last_battles[1] == (1, 0, VOID, ())
    assert state.last_battles[2] == (2, 0, ATTACKER_WON, ((50, 49),))
    assert state.out_order == [1, 0]


def test_a_tie_is_rerolled_by_both_and_the_lower_roll_then_goes_out():
    chance = host(*mines(10, END), (100, 55), (100, 55), (100, 41), (100, 42), (100, 7), (100, 8))
    state = play(Config(num_players=3, **SEAT_ORDER), chance, {0: 1, 1: 0, 2: 1})
    assert state.last_battles[0] == (0, 1, DEFENDER_WON, ((55, 55), (41, 42)))
    assert state.last_battles[2] == (2, 1, DEFENDER_WON, ((7, 8),))
    assert state.out_order == [0, 2] and state.winner == 1


def test_mines_apply_to_rerolls():
    chance = host(*mines(10, END), (100, 55), (100, 55), (100, 30), (100, 1), (100, 2))
    state = play(Config(num_players=3, **SEAT_ORDER), chance, {0: 1, 1: 2, 2: 1})
    assert state.last_battles[0] == (0, 1, ATTACKER_MINE, ((55, 55), (30, 0)))
    assert state.last_battles[1] == (1, 2, DEFENDER_WON, ((1, 2),))
    assert state.winner == 2


def test_random_attack_order_is_a_shuffle_of_the_living_seats():
    # Fisher-Yates on [0, 1, 2]: swap position 2 with draw 0 -> [2, 1, 0]; position 1 with draw 1 -> same.
    chance = host(*mines(6, BEGINNING), (3, 1), (2, 2), (100, 90), (100, 10))
    state = play(Config(num_players=3), chance, {0: 1, 1: 0, 2: 1})
    assert state.last_order == (2, 1, 0)
    assert [battle[:3] for battle in state.last_battles] == [(2, 1, ATTACKER_WON), (1, 0, VOID),
                                                             (0, 1, VOID)]
    assert state.num_alive == 2


# --- finals ------------------------------------------------------------------------------------------


def test_two_players_battle_once_in_the_finals_and_the_second_attack_is_void():
    chance = host(*mines(1, END), (100, 20), (100, 30))
    state = play(Config(num_players=2, **SEAT_ORDER), chance, {0: 1, 1: 0})
    assert state.last_battles == ((0, 1, DEFENDER_WON, ((20, 30),)), (1, 0, VOID, ()))
    assert state.winner == 1 and rules.returns(state) == (-1.0, 1.0)


def _to_the_finals(config: Config, *extra: tuple[int, int]) -> rules.State:
    """Round 1 at 3 players: 0 knocks 1 out; 2's attack on 1 is void, 1's attack is void."""
    chance = host(*mines(6, BEGINNING), (100, 50), (100, 30), *extra)
    state = new_game(config, chance)
    apply_joint(state, {0: 1, 1: 0, 2: 1})
    assert state.out_order == [1] and state.num_alive == 2
    return state


def test_finals_can_keep_the_last_rounds_mines():
    state = _to_the_finals(Config(num_players=3, finals_mines="keep", **SEAT_ORDER), (100, 64))
    apply_joint(state, {0: 2, 2: 0})
    assert mines_as_numbers(state.mines) == list(range(60, 70))
    assert state.last_mine_rolls == ()
    assert state.last_battles[0] == (0, 2, ATTACKER_MINE, ((64, 0),)) and state.winner == 2
    assert state.chance.exhausted


def test_finals_can_roll_new_mines():
    state = _to_the_finals(Config(num_players=3, finals_mines="new", variant="stacked", **SEAT_ORDER),
                           *mines(2, END), (100, 64), (100, 5))
    apply_joint(state, {0: 2, 2: 0})
    assert mines_as_numbers(state.mines) == list(mine_numbers(2, END))  # replaced, not stacked
    assert state.last_battles[0] == (0, 2, ATTACKER_WON, ((64, 5),)) and state.winner == 0


def test_finals_under_finals_mines_round_follow_the_variant():
    state = _to_the_finals(Config(num_players=3, variant="stacked", **SEAT_ORDER),
                           *mines(2, END), (100, 62), (100, 5))
    apply_joint(state, {0: 2, 2: 0})
    assert len(mines_as_numbers(state.mines)) == 19  # 60-69 plus the 2s, 62 counted once
    assert state.last_battles[0] == (0, 2, ATTACKER_MINE, ((62, 0),))


def test_a_two_player_game_with_finals_mines_keep_still_rolls_its_first_mines():
    chance = host(*mines(1, END), (100, 20), (100, 30))
    state = play(Config(num_players=2, finals_mines="keep", **SEAT_ORDER), chance, {0: 1, 1: 0})
    assert state.winner == 1


def test_finals_under_mines_only_go_on_until_a_mine():
    chance = host(*mines(1, END), (100, 20), (100, 30), (100, 50), (100, 50), (100, 90), (100, 81))
    state = play(Config(num_players=2, roll_battle="mines_only", **SEAT_ORDER), chance, {0: 1, 1: 0})
    assert state.last_battles[0] == (0, 1, DEFENDER_MINE, ((20, 30), (50, 50), (90, 81)))
    assert state.winner == 0


# --- variants ----------------------------------------------------------------------------------------


def test_simple_rolls_the_mines_once_at_game_start():
    chance = host(*mines(6, BEGINNING), (100, 50), (100, 30), (100, 61))
    state = new_game(Config(num_players=3, variant="simple", **SEAT_ORDER), chance)
    assert mines_as_numbers(state.mines) == list(range(60, 70))  # known before the first round
    apply_joint(state, {0: 1, 1: 0, 2: 1})
    apply_joint(state, {0: 2, 2: 0})
    assert mines_as_numbers(state.mines) == list(range(60, 70))
    assert state.last_battles[0] == (0, 2, ATTACKER_MINE, ((61, 0),))
    assert state.last_mine_rolls == ((6, BEGINNING),) and chance.exhausted


def test_stacked_adds_each_rounds_mines_to_the_ones_already_there():
    chance = host(*mines(6, BEGINNING), (100, 1), (100, 2), (100, 1), (100, 2),
                  *mines(4, END), (100, 1), (100, 2))
    state = new_game(Config(num_players=4, variant="stacked", **SEAT_ORDER), chance)
    apply_joint(state, {0: 1, 1: 0, 2: 3, 3: 2})
    assert len(mines_as_numbers(state.mines)) == 10
    apply_joint(state, {1: 3, 3: 1})
    numbers = mines_as_numbers(state.mines)
    assert len(numbers) == 19 and 64 in numbers and 4 in numbers and 69 in numbers
    assert chance.exhausted


@pytest.mark.parametrize(
    ("first", "second", "count"),
    [((6, BEGINNING), (4, END), 19), ((6, BEGINNING), (3, BEGINNING), 20), ((6, BEGINNING), (6, BEGINNING), 10),
     ((10, BEGINNING), (10, END), 19), ((2, END), (7, END), 20)],
)
def test_double_whammy_rolls_twice_and_overlaps_count_once(first, second, count):
    chance = host(*mines(*first), *mines(*second), (100, 99), (100, 98))
    state = play(Config(num_players=2, double_whammy=True, **SEAT_ORDER), chance, {0: 1, 1: 0})
    assert len(mines_as_numbers(state.mines)) == count
    assert state.last_mine_rolls == (first, second)


def test_double_whammy_with_simple_rolls_twice_at_game_start_only():
    chance = host(*mines(6, BEGINNING), *mines(4, END), (100, 1), (100, 2), (100, 1), (100, 2))
    state = new_game(Config(num_players=3, variant="simple", double_whammy=True, **SEAT_ORDER), chance)
    assert len(mines_as_numbers(state.mines)) == 19
    apply_joint(state, {0: 1, 1: 0, 2: 0})
    apply_joint(state, {1: 2, 2: 1})
    assert chance.exhausted and len(mines_as_numbers(state.mines)) == 19 and state.winner == 2


def test_mines_only_battles_without_a_mine_end_in_a_standoff_and_the_round_limit_truncates():
    chance = host(*mines(1, END), (100, 20), (100, 30), (100, 40), (100, 30), (100, 2), (100, 3),
                  *mines(1, END), (100, 20), (100, 30), (100, 40), (100, 30), (100, 2), (100, 3))
    config = Config(num_players=3, roll_battle="mines_only", max_rounds=2, **SEAT_ORDER)
    state = play(config, chance, {0: 1, 1: 2, 2: 0}, {0: 1, 1: 2, 2: 0})
    assert [battle[2] for battle in state.last_battles] == [STANDOFF] * 3
    assert state.over and rules.is_truncated(state) and state.end_reason == rules.ROUND_LIMIT
    assert state.winner == -1 and rules.returns(state) == (0.0, 0.0, 0.0)
    assert rules.max_game_length(config) == 6


def test_survivors_of_a_cut_off_game_share_the_open_places():
    # 4 players, placement rewards; seat 3 rolls a mine, then the round limit: 3 survivors share places 1-3.
    chance = host(*mines(1, END), (100, 20), (100, 30), (100, 40), (100, 30), (100, 2), (100, 3), (100, 1))
    config = Config(num_players=4, roll_battle="mines_only", max_rounds=1, rewards="placement", **SEAT_ORDER)
    state = play(config, chance, {0: 1, 1: 2, 2: 0, 3: 0})
    values = rules.returns(state)
    assert values[3] == -1.0 and values[:3] == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert sum(values) == pytest.approx(0.0)


def test_placement_rewards_run_from_plus_one_to_minus_one():
    chance = host(*mines(6, BEGINNING), (100, 50), (100, 30), (100, 70), (100, 20))
    state = play(Config(num_players=3, rewards="placement", **SEAT_ORDER), chance, {0: 1, 1: 2, 2: 0})
    assert rules.returns(state) == (0.0, -1.0, 1.0)


# --- illegal moves -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("joint", "message"),
    [({0: 0, 1: 2, 2: 0}, "target:0"), ({0: 1, 1: 2}, "missing seats \\[2\\]"),
     ({0: 1, 1: 2, 2: 0, 3: 1}, "extra seats \\[3\\]"), ({0: 1, 1: 2, 2: 7}, "7"),
     ({0: 1, 1: 2, 2: "0"}, "'0'"), ({0: 1, 1: 2, 2: True}, "True")],
)
def test_illegal_joint_moves_raise_and_change_nothing(joint, message):
    state = new_game(Config(num_players=3), Chance(4))
    before = (list(state.alive), state.round, len(state.chance.outcomes), state.mines)
    with pytest.raises(IllegalActionError, match=message):
        apply_joint(state, joint)
    assert (list(state.alive), state.round, len(state.chance.outcomes), state.mines) == before


def test_a_player_who_is_out_cannot_be_targeted_nor_act():
    chance = host(*mines(6, BEGINNING), (100, 50), (100, 30), (100, 1), (100, 2), (100, 1), (100, 2))
    state = new_game(Config(num_players=4, **SEAT_ORDER), chance)
    apply_joint(state, {0: 1, 1: 0, 2: 3, 3: 0})
    assert state.out_order == [1, 2, 3]  # rolls 1 vs 2 twice: the attackers lose
    assert rules.acting_seats(state) == () and state.winner == 0
    state = new_game(Config(num_players=4, **SEAT_ORDER), host(*mines(6, BEGINNING), (100, 50), (100, 30),
                                                               (100, 60)))
    with pytest.raises(IllegalActionError):
        apply_joint(state, {0: 1, 1: 0, 2: 3, 3: 0, 4: 1})
    apply_joint(state, {0: 1, 1: 0, 2: 3, 3: 2})
    assert state.out_order == [1, 2] and rules.acting_seats(state) == (0, 3)
    assert rules.legal_actions(state, 1) == []
    with pytest.raises(IllegalActionError, match="target:1"):
        apply_joint(state, {0: 1, 3: 0})
    with pytest.raises(IllegalActionError, match="extra seats \\[1\\]"):
        apply_joint(state, {0: 3, 1: 0, 3: 0})


# --- seeded random play ------------------------------------------------------------------------------

CONFIGS = [
    Config(num_players=n, variant=variant, double_whammy=whammy, attack_order=order)
    for n in (2, 3, 8, 20)
    for variant, whammy, order in (("standard", False, "random"), ("simple", False, "seat"),
                                   ("stacked", False, "random"), ("standard", True, "random"),
                                   ("simple", True, "seat"))
] + [Config(num_players=6, roll_battle="mines_only", max_rounds=5, rewards="placement"),
     Config(num_players=5, finals_mines="keep"), Config(num_players=5, finals_mines="new", variant="stacked")]


def random_game(config: Config, seed: int) -> tuple[rules.State, list[dict[int, int]]]:
    rng = random.Random(seed)
    state = new_game(config, Chance(seed))
    joints = []
    while not rules.is_terminal(state):
        acting = rules.acting_seats(state)
        assert acting and all(rules.legal_actions(state, seat) for seat in acting)
        joint = {seat: rng.choice(rules.legal_actions(state, seat)) for seat in acting}
        joints.append(joint)
        apply_joint(state, joint)
    return state, joints


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.num_players}-{c.variant}-{c.double_whammy}-"
                         f"{c.roll_battle}-{c.finals_mines}")
def test_seeded_random_games_keep_the_invariants_and_replay_exactly(config):
    for seed in range(6):
        state, joints = random_game(config, seed)
        decisions = sum(len(joint) for joint in joints)
        assert decisions <= rules.max_game_length(config)
        values = rules.returns(state)
        assert sum(values) == pytest.approx(0.0)
        assert max(values) <= 1.0 and min(values) >= -1.0
        if not state.truncated:
            assert state.num_alive == 1 and len(state.out_order) == config.num_players - 1
            assert values[state.winner] == 1.0
        record = make_record(GAME, state, seed, joints)
        _, again = replay(record)
        assert again.out_order == state.out_order and rules.returns(again) == values
        assert again.last_battles == state.last_battles


def test_a_tampered_record_does_not_replay():
    state, joints = random_game(Config(num_players=4), 3)
    record = make_record(GAME, state, 3, joints)
    short = {**record, "chance": record["chance"][:-1]}
    with pytest.raises(ReplayError):
        replay(short)
    extra = {**record, "chance": [*record["chance"], [100, 5]]}
    with pytest.raises(ReplayError, match="never used"):
        replay(extra)


def test_every_loser_out_round_knocks_someone_out():
    for seed in range(30):
        state = new_game(Config(num_players=8), Chance(seed))
        rng = random.Random(seed)
        while not state.over:
            before = state.num_alive
            apply_joint(state, {s: rng.choice(rules.legal_actions(state, s)) for s in rules.acting_seats(state)})
            assert state.num_alive < before
        assert state.round <= rules.round_limit(state.config)


# --- statistics (docs/rules/minefield.md, "Probabilities") ----------------------------------------------


def battle_probabilities(k: int) -> dict[int, Fraction]:
    """Exact outcome probabilities of one loser_out battle under k mine numbers (the docs' derivation)."""
    m = Fraction(k, 100)
    tie = Fraction(1, 100 - k)  # both rolls missed the mines: each is uniform on the 100 - k others
    miss_both = (1 - m) ** 2
    decided = 1 - miss_both * tie  # one attempt ends the battle
    lower = miss_both * (1 - tie) / 2
    return {ATTACKER_MINE: m / decided, DEFENDER_MINE: (1 - m) * m / decided,
            DEFENDER_WON: lower / decided, ATTACKER_WON: lower / decided}


def test_the_exact_attacker_elimination_chance_is_1001_over_1982():
    p = battle_probabilities(10)
    assert p[ATTACKER_MINE] + p[DEFENDER_WON] == Fraction(1001, 1982)
    assert sum(p.values()) == 1


@pytest.mark.slow
@pytest.mark.parametrize(("sets", "k"), [(((6, BEGINNING),), 10), (((6, BEGINNING), (4, END)), 19),
                                          (((6, BEGINNING), (2, BEGINNING)), 20)])
def test_battle_outcomes_match_the_derived_probabilities(sets, k):
    trials = 200_000 if FULL else 20_000
    mask = 0
    for d, side in sets:
        mask |= rules.MINE_BITS[d, side]
    assert len(mines_as_numbers(mask)) == k
    chance = Chance(2024 + k)
    counts = dict.fromkeys((ATTACKER_MINE, DEFENDER_MINE, ATTACKER_WON, DEFENDER_WON), 0)
    for _ in range(trials):
        outcome, _ = resolve_battle(chance, mask)
        counts[outcome] += 1
    expected = battle_probabilities(k)
    for outcome, count in counts.items():
        p = float(expected[outcome])
        assert abs(count / trials - p) < 4.5 * math.sqrt(p * (1 - p) / trials), (outcome, count / trials, p)
    attacker_out = (counts[ATTACKER_MINE] + counts[DEFENDER_WON]) / trials
    p = float(expected[ATTACKER_MINE] + expected[DEFENDER_WON])
    assert abs(attacker_out - p) < 4.5 * math.sqrt(p * (1 - p) / trials)


@pytest.mark.slow
def test_in_standard_games_a_tenth_of_all_rolls_are_mines_and_attackers_lose_1001_of_1982():
    games = 3000 if FULL else 400
    rolls = mine_rolls = battles = attackers_out = 0
    rng = random.Random(7)
    for seed in range(games):
        state = new_game(Config(num_players=8), Chance(seed))
        while not state.over:
            apply_joint(state, {s: rng.choice(rules.legal_actions(state, s)) for s in rules.acting_seats(state)})
            assert state.mines.bit_count() == 10
            for _, _, outcome, pairs in state.last_battles:
                if outcome == VOID:
                    continue
                battles += 1
                attackers_out += outcome in (ATTACKER_MINE, DEFENDER_WON)
                for attack, defence in pairs:
                    for roll in (attack, defence) if defence else (attack,):
                        rolls += 1
                        mine_rolls += state.mines >> roll & 1
    rate = mine_rolls / rolls
    assert abs(rate - 0.1) < 4.5 * math.sqrt(0.09 / rolls), rate
    p = 1001 / 1982
    assert abs(attackers_out / battles - p) < 4.5 * math.sqrt(p * (1 - p) / battles)
