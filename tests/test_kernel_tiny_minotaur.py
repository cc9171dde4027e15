"""Differential replay of the Tiny Minotaur kernel (envs/tiny_minotaur/kernel.py) against the Python rules, the
reference.

Seeded games are played move by move in both engines, the same action in each, each drawing from the same
chance stream (the kernel runs the very Mersenne Twister of ``Chance(seed)``): at every step the legal sets,
every State field (the kernel's row against the row the rules' State converts to), the generator's state and
the number of draws, and at the end the returns, must be equal. A mismatch names the option set, game, seed,
step and the first differing field.

Games are played with uniformly random moves and with the heuristic bot (longer games, more reactions),
whose compiled form (agents/tiny_minotaur_kernel.py) must make each of its decisions.
Short form in CI (1,500 random games at the defaults, 100 per other option set and of heuristic play);
``TAVERNZOO_FULL=1`` runs the long form (100,000 random games at the defaults, 2,000 per option set).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import kernel_checks
import numpy as np
import pytest

from tavernzoo.agents import tiny_minotaur_kernel as heuristic_kernel
from tavernzoo.agents.tiny_minotaur import HeuristicBot
from tavernzoo.envs.core import Chance
from tavernzoo.envs.tiny_minotaur import encode, kernel, rules

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
DEFAULT_GAMES = 100_000 if FULL else 1_500
GAMES_PER_OPTION_SET = 2_000 if FULL else 100

# Every option away from its default, one at a time (and a few together).
OPTION_SETS = {
    "fighter_vs_cleric": {"classes": ("sword", "magic"), "archetypes": ("fighter", "cleric")},
    "paladin_vs_ranger": {"classes": ("sword", "cloak"), "archetypes": ("paladin", "ranger")},
    "sorcerer_vs_rogue": {"classes": ("magic", "cloak"), "archetypes": ("sorcerer", "rogue")},
    "magic_random_archetype_vs_random": {"classes": ("magic", "random")},
    "cloak_mirror": {"classes": ("cloak", "cloak")},
    "bosses_gore_brawl": {"bosses": ("minotaur_gore", "tavern_brawl")},
    "bosses_breath_haymaker_on_stronk": {"bosses": ("wyvern_breath", "bouncer_haymaker"),
                                         "boss_replaces": ("stronk", "middling")},
    "boss_one_seat_on_middling": {"bosses": ("none", "minotaur_gore"), "boss_replaces": ("regular", "middling")},
    "house_narrowing": {"ruleset": "house_narrowing"},
    "house_narrowing_bosses": {"ruleset": "house_narrowing", "bosses": ("bouncer_haymaker", "wyvern_breath")},
    "starting_hp_30": {"starting_hp": 30},
    "hp_cap_140_heal_45": {"hp_cap": 140, "heal_amount": 45},
    "heal_amount_0": {"heal_amount": 0, "classes": ("magic", "magic")},
    "max_turns_6": {"max_turns": 6},
    "max_turns_1": {"max_turns": 1},
    "everything": {"classes": ("magic", "sword"), "archetypes": ("cleric", "random"), "bosses": ("tavern_brawl",
                   "minotaur_gore"), "boss_replaces": ("middling", "stronk"), "starting_hp": 60, "hp_cap": 80,
                   "heal_amount": 35, "max_turns": 40, "ruleset": "house_narrowing"},
}

# A house ruleset given by path: other damage, tiers and windows, a deck of regular attacks only, a boss of its own.
HOUSE_RULES = """
[damage]
regular = 15
middling = 25
stronk = 60
[initiative]
tier_1 = [1, 9]
tier_2 = [10, 15]
tier_3 = [16, 20]
[ranges.tier_1]
middling = [5, 12]
stronk = [10, 12]
dodge = [17, 20]
heal = [10, 20]
[ranges.tier_2]
middling = [4, 14]
stronk = [9, 14]
dodge = [12, 20]
heal = [9, 20]
[ranges.tier_3]
middling = [1, 16]
stronk = [5, 16]
dodge = [10, 20]
heal = [8, 20]
[classes.sword]
regular = { fighter = 3, paladin = 7 }
middling = 2
stronk = 0
dodge = 2
heal = 1
[classes.magic]
regular = { sorcerer = 4, cleric = 0 }
middling = 3
stronk = 3
dodge = 0
heal = 4
[classes.cloak]
regular = { rogue = 6, ranger = 2 }
middling = 0
stronk = 0
dodge = 4
heal = 0
[bosses.cellar_rat]
damage = 5
tier_1 = [1, 19]
tier_2 = [1, 20]
tier_3 = [2, 20]
"""


def replay(config: rules.Config, seed: int, label: str, bots: list | None = None) -> tuple[float, ...]:
    """Play game ``seed`` in both engines with the same moves (uniformly random, or ``bots[seat]``); fail at
    the first difference."""
    observation = np.zeros(encode.observation_size(config), dtype=np.float32)

    def choose(state: rules.State, seat: int, legal: list[int]) -> int:
        encode.encode(state, seat, observation)
        mask = np.zeros(rules.NUM_ACTIONS, dtype=np.int8)
        mask[legal] = 1
        return bots[seat].act({"observation": observation, "action_mask": mask})

    return kernel_checks.replay_in_both(
        kernel, rules, config, seed, label, kernel.new_games(config, [seed]), choose=None if bots is None else choose,
        compiled_move=lambda batch: heuristic_kernel.heuristic_move(batch, 0))


@pytest.mark.slow
def test_default_games_replay_identically():
    config = rules.Config()
    for seed in range(DEFAULT_GAMES):
        replay(config, seed, "defaults")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_option_sets_replay_identically(name):
    config = rules.Config(**OPTION_SETS[name])
    for seed in range(GAMES_PER_OPTION_SET):
        replay(config, seed, name)


HEURISTIC_OPTION_SETS = [{}, {"bosses": ("minotaur_gore", "wyvern_breath")},
                         {"bosses": ("bouncer_haymaker", "tavern_brawl"), "ruleset": "house_narrowing"},
                         {"classes": ("magic", "magic"), "heal_amount": 45, "hp_cap": 120},
                         {"starting_hp": 45, "hp_cap": 45, "classes": ("cloak", "magic")},
                         {"starting_hp": 33, "hp_cap": 77, "heal_amount": 5}]


@pytest.mark.slow
@pytest.mark.parametrize("options", HEURISTIC_OPTION_SETS)
def test_heuristic_games_replay_identically(options):
    """The heuristic bot's games (more reactions, longer games), and the bot's compiled form
    (agents/tiny_minotaur_kernel.py) makes its every decision."""
    config = rules.Config(**options)
    bots = [HeuristicBot(config, seat) for seat in range(2)]
    for seed in range(GAMES_PER_OPTION_SET):
        replay(config, seed, f"heuristic play {options}", bots)


def _house_ruleset(tmp_path: Path) -> str:
    path = tmp_path / "house.toml"
    path.write_text(HOUSE_RULES)
    return str(path)


def test_a_house_ruleset_by_path_replays_identically(tmp_path):
    """The ruleset's tables travel in the row: a house ruleset given by path plays in the kernel too."""
    ruleset = _house_ruleset(tmp_path)
    for options in ({}, {"bosses": ("cellar_rat", "cellar_rat"), "boss_replaces": ("regular", "regular")}):
        config = rules.Config(ruleset=ruleset, **options)
        for seed in range(GAMES_PER_OPTION_SET):
            try:
                rules.new_game(config, Chance(seed))
            except ValueError:  # the cleric deck of this house ruleset has no regular card for a boss
                continue
            replay(config, seed, f"house ruleset {options}")


def test_a_deal_the_rules_refuse_is_refused_alike(tmp_path):
    """A boss whose dealt deck has no card to replace: the rules raise at the deal, and so does the kernel."""
    config = rules.Config(ruleset=_house_ruleset(tmp_path), classes=("sword", "magic"),
                          bosses=("none", "cellar_rat"), boss_replaces=("regular", "regular"))
    dealt, refused = None, None
    for seed in range(50):
        try:
            rules.new_game(config, Chance(seed))
        except ValueError as error:
            refused = refused or (seed, str(error))
            continue
        kernel.new_games(config, [seed])  # the kernel deals the games the rules deal
        dealt = seed if dealt is None else dealt
    assert refused is not None and dealt is not None, "the test needs a seed dealing a cleric and one not"
    seed, message = refused
    with pytest.raises(ValueError, match=re.escape(f"game 1 (seed {seed}): {message}")):
        kernel.new_games(config, [dealt, seed])


def test_states_convert_both_ways_mid_game():
    """A Python State taken into the kernel mid-game, and the kernel's game back out, are the same game (every
    seat observes and views them alike), and both engines play on identically from there."""
    config = rules.Config(bosses=("tavern_brawl", "none"))
    observed = np.zeros(encode.observation_size(config), dtype=np.float32)
    expected = np.zeros_like(observed)
    for seed in range(30):
        state = rules.new_game(config, Chance(seed))
        picker = random.Random(seed)
        for _ in range(seed):
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(picker.random() * len(legal))])
        batch = kernel.from_states([state])
        assert kernel.first_difference(batch, 0, state) is None
        back = kernel.to_state(batch, 0)
        for name in rules.State.__slots__:
            if name != "chance":
                assert getattr(back, name) == getattr(state, name), f"seed {seed}: {name}"
        assert back.chance._random.getstate() == state.chance._random.getstate()
        for seat in range(2):
            encode.encode(back, seat, observed)
            encode.encode(state, seat, expected)
            assert observed.tolist() == expected.tolist(), f"seed {seed}"
            assert encode.view(back, seat) == encode.view(state, seat), f"seed {seed}"
        assert encode.render(back) == encode.render(state)
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            action = legal[int(picker.random() * len(legal))]
            rules.apply(state, action)
            rules.apply(back, action)
            kernel.step_batch(batch, [action])
        assert kernel.first_difference(batch, 0, state) is None
        assert rules.returns(back) == rules.returns(state)


@pytest.mark.parametrize("options", [{}, {"ruleset": "house_narrowing", "bosses": ("wyvern_breath", "none")}])
def test_whole_rollouts_are_the_games_the_rules_play(options):
    """rollout_random plays, inside one call, the games the rules play with the same picks and chance."""
    config = rules.Config(**options)
    seeds = list(range(60))
    batch = kernel.new_games(config, seeds)
    kernel_checks.check_rollouts_replay(kernel, rules, config, batch, seeds, kernel_checks.play_randomly(rules))


@pytest.mark.parametrize("options", HEURISTIC_OPTION_SETS)
def test_heuristic_rollouts_are_the_games_the_bot_plays(options):
    config = rules.Config(**options)
    seeds = list(range(40))
    values, steps = heuristic_kernel.rollout_heuristic(kernel.new_games(config, seeds))
    bots = [HeuristicBot(config, seat) for seat in range(2)]
    observation = np.zeros(encode.observation_size(config), dtype=np.float32)
    for g, seed in enumerate(seeds):
        state, taken = rules.new_game(config, Chance(seed)), 0
        while not rules.is_terminal(state):
            seat, legal = state.to_act, rules.legal_actions(state)
            encode.encode(state, seat, observation)
            mask = np.zeros(rules.NUM_ACTIONS, dtype=np.int8)
            mask[legal] = 1
            rules.apply(state, bots[seat].act({"observation": observation, "action_mask": mask}))
            taken += 1
        assert steps[g] == taken, f"seed {seed}"
        assert tuple(values[g]) == rules.returns(state), f"seed {seed}"


def test_rollouts_stop_after_max_steps():
    batch = kernel.new_games(rules.Config(), [5, 6])
    _, steps = kernel.rollout_random(batch, [1, 2], max_steps=3)
    assert list(steps) == [3, 3]


def test_step_batch_steps_many_games_and_leaves_minus_one_alone():
    config = rules.Config()
    batch = kernel.new_games(config, [0, 1, 2])
    kernel_checks.check_step_batch(kernel, rules, config, batch)


def test_an_illegal_action_names_game_and_action_and_changes_nothing():
    kernel_checks.check_bad_input(kernel, rules, rules.Config())


def test_what_the_kernel_cannot_take_is_named_and_played_on_python(capsys):
    config = rules.Config()
    scripted = rules.new_game(config, Chance.scripted(rules.new_game(config, Chance(4)).chance.outcomes))
    kernel_checks.check_what_it_cannot_take(kernel, rules, config, "Tiny Minotaur", capsys, scripted,
                                            {"max_steps": 2}, 2, kernel_checks.play_randomly(rules))


def test_without_numba_rollouts_play_on_python_and_say_why(monkeypatch, capsys):
    monkeypatch.setattr(kernel, "numba", None)
    config = rules.Config()
    kernel_checks.check_without_numba(kernel, rules, config, "Tiny Minotaur", capsys,
                                      kernel_checks.play_randomly(rules))
    with pytest.raises(ValueError, match="the Tiny Minotaur kernel is unavailable: numba is not installed"):
        heuristic_kernel.rollout_heuristic(kernel.Batch(*kernel._empty(1), [config]))
