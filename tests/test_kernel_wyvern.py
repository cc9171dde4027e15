"""Differential replay of the Wyvern kernel (envs/wyvern/kernel.py) against the Python rules, the reference.

Seeded games are played move by move in both engines, the same action in each, each drawing from the same
chance stream (the kernel runs the very Mersenne Twister of ``Chance(seed)``): at every step the legal sets
(the help talks' offers and asks, the backstabbing curses, the looting order, every index in the rules'
order), every State field (the kernel's row against the row the rules' State converts to: every zone in
its order, the talks' counters, the event count), the generator's state and the number of draws, and at the
end the returns, must be equal. A mismatch names the option set, game, seed, step and the first differing
field.

Games are played with uniformly random moves and with the heuristic bot (whose compiled form,
agents/wyvern_kernel.py, must make each of its decisions). Short form in CI (a few games per player count
and per option set, about 15 s); ``TAVERNZOO_FULL=1`` runs the long form, 100,000 games in all: 12,000 random
games per player count at the default options, 1,000 per option set and 2,000 per heuristic table, in
chunks of 500 seeds (about 4 CPU-hours; with ``TAVERNZOO_REPLAY_LEDGER=FILE`` a run cut short resumes, and
``-n 2`` uses both cores: see tests/kernel_checks.py).
"""

from __future__ import annotations

import os
import random

import kernel_checks
import numpy as np
import pytest

from tavernzoo.agents import wyvern_kernel as heuristic_kernel
from tavernzoo.agents.wyvern import HeuristicBot
from tavernzoo.envs.core import Chance
from tavernzoo.envs.wyvern import decks, encode, kernel, kernel_encode, rules

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
GAMES_PER_PLAYER_COUNT = 12_000 if FULL else 3
GAMES_PER_OPTION_SET = 1_000 if FULL else 1
HEURISTIC_GAMES = 2_000 if FULL else 3
CHUNK = 500

# Every option away from its default (each at 4 players unless set), and the seats' races, classes and decks
# that turn on the rules' special cases (a dwarf's big items and sixth card, a giant's hands, immunities,
# backstabbing thieves, undead-hunting clerics, paladins' ties, opposed alignments, summons).
OPTION_SETS = {
    "dwarves": {"races": ("dwarf",) * 4},
    "giants_humans_pixies": {"races": ("giant", "giant", "human", "pixie")},
    "elves_halflings_nagas_rakshasas": {"races": ("elf", "halfling", "naga", "rakshasa")},
    "classes": {"classes": ("paladin", "warrior", "wizard", "thief")},
    "clerics_5p": {"num_players": 5, "classes": ("cleric",) * 5},
    "random_decks_summons_6p": {"num_players": 6, "decks": ("random",) * 6, "summons": True},
    "opposed_decks_summons": {"decks": ("inferno", "glacier", "paladins_oath", "dark_pact"), "summons": True},
    "dual_decks_3p": {"num_players": 3, "decks": ("whipmaster", "blademaster", "frost_blade")},
    "no_specialty_bonuses": {"decks": ("inferno", "glacier", "paladins_oath", "dark_pact"),
                             "specialty_bonuses": False},
    "hand_limit_at_turn_end": {"hand_limit_always": False},
    "hand_limit_1": {"hand_limit": 1},
    "hand_limit_20_at_turn_end_6p": {"num_players": 6, "hand_limit": 20, "hand_limit_always": False},
    "start_hand_0": {"start_hand": 0},
    "start_hand_10": {"start_hand": 10},
    "run_target_1": {"run_target": 1},
    "run_target_12": {"run_target": 12},
    "gold_per_level_1": {"gold_per_level": 1},
    "gold_per_level_300_2p": {"num_players": 2, "gold_per_level": 300},
    "any_helper": {"one_helper_per_turn": False},
    "help_rounds_1": {"help_rounds": 1},
    "help_rounds_10_5p": {"num_players": 5, "help_rounds": 10},
    "paladin_helper_wins_ties": {"paladin_helper_wins_ties": True, "classes": ("paladin",) * 4},
    "draw_after_monster_door": {"draw_after_monster_door": True},
    "max_turns_7": {"max_turns": 7},
    "max_steps_60": {"max_steps": 60},
    "level_reward": {"level_reward": 0.37},
    "win_level_2": {"win_level": 2},
    "win_level_8_3p": {"num_players": 3, "win_level": 8},
    "win_level_99": {"win_level": 99, "max_turns": 120},
    "every_switch_6p": {"num_players": 6, "decks": ("random",) * 6, "summons": True, "hand_limit_always": False,
                        "one_helper_per_turn": False, "paladin_helper_wins_ties": True,
                        "draw_after_monster_door": True, "specialty_bonuses": False, "level_reward": 1.0},
}


def replay(config: rules.Config, seed: int, label: str, bots: list | None = None) -> tuple[float, ...]:
    """Play game ``seed`` in both engines with the same moves (uniformly random, or ``bots[seat].act_state``);
    fail at the first difference (of the observations and the working space too)."""

    # The env's own encoder, kept for the whole game as an env keeps it (encode.Observer rewrites what changed;
    # tests/test_wyvern_encoder_cache.py holds it to the encoder computed from the state alone).
    observer = encode.Observer()

    def check_more(batch: kernel.Batch, state: rules.State, where: str) -> None:
        assert not batch.state[0, kernel.STATE_SIZE:].any(), f"{where}: working space left"
        check_observations(batch, state, where, observer=observer)

    return kernel_checks.replay_in_both(
        kernel, rules, config, seed, label, kernel.new_games(config, [seed]),
        choose=None if bots is None else lambda state, seat, legal: bots[seat].act_state(state, seat, legal),
        compiled_move=lambda batch: heuristic_kernel.heuristic_move(batch, 0), check_more=check_more)


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_PLAYER_COUNT, CHUNK), ids=str)
@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_default_games_replay_identically(players, seeds):
    config = rules.Config(num_players=players)
    label = f"defaults at {players} players"
    kernel_checks.replay_chunk("wyvern", label, seeds, lambda seed: replay(config, seed, label))


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(HEURISTIC_GAMES, CHUNK), ids=str)
@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_heuristic_games_replay_identically(players, seeds):
    """The heuristic bot's games: bargained help, backstabs of the leader, sales for levels, fights from the
    hand, which random play reaches less often; and the bot's compiled form (agents/wyvern_kernel.py) makes
    its every decision."""
    config = rules.Config(num_players=players, decks=("random",) * players, summons=players % 2 == 0)
    bots = [HeuristicBot(config, seat) for seat in range(players)]
    label = f"heuristic play at {players} players"
    kernel_checks.replay_chunk("wyvern", label, seeds, lambda seed: replay(config, seed, label, bots))


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_OPTION_SET, CHUNK), ids=str)
@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_option_sets_replay_identically(name, seeds):
    config = rules.Config(**OPTION_SETS[name])
    kernel_checks.replay_chunk("wyvern", name, seeds, lambda seed: replay(config, seed, name))


def test_a_deck_file_replays_identically(tmp_path):
    """A deck read from a file (not bundled) joins the kernel's table of decks and plays as the rules play it."""
    bundled = decks.bundled_decks()["whipmaster"]
    lines = ['name = "Whips and a lich"', 'specialty = ["whip"]', 'summon = "lich"', "[cards]"]
    lines += [f"{key} = {count}" for key, count in bundled["cards"].items()]
    path = tmp_path / "whips.toml"
    path.write_text("\n".join(lines) + "\n")
    config = rules.Config(num_players=3, decks=(str(path), "random", "dark_pact"), summons=True)
    for seed in range(2):
        replay(config, seed, "a deck file")
    assert kernel.DECK_NAMES[kernel.deck_index(str(path))] == str(path)


def test_states_convert_both_ways_mid_game():
    """A Python State taken into the kernel mid-game, and the kernel's game back out, are the same game, and
    both engines play on identically from there; every seat observes the converted State as the original."""
    config = rules.Config(num_players=4, decks=("random",) * 4, summons=True)
    for seed in range(6):
        state = rules.new_game(config, Chance(seed))
        picker = random.Random(seed)
        for _ in range(seed * 60):
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(picker.random() * len(legal))])
        batch = kernel.from_states([state])
        assert kernel.first_difference(batch, 0, state) is None
        back = kernel.to_state(batch, 0)
        for name in rules.State.__slots__:
            if name not in ("chance", "events"):
                assert getattr(back, name) == getattr(state, name), f"seed {seed}: {name}"
        assert back.chance._random.getstate() == state.chance._random.getstate()
        assert np.array_equal(_observations(back).copy(), _observations(state)), f"seed {seed}"
        for _ in range(300):
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            action = legal[int(picker.random() * len(legal))]
            rules.apply(state, action)
            rules.apply(back, action)
            kernel.step_batch(batch, [action])
        assert kernel.first_difference(batch, 0, state) is None
        assert rules.returns(back) == rules.returns(state)


def check_observations(batch: kernel.Batch, state: rules.State, where: str, game: int = 0,
                       observer: encode.Observer | None = None) -> None:
    """Every seat's observation and mask from the compiled encoder against the env's encoder (``observer``, or
    encode.encode) and the env's mask: one comparison of the whole table, then the first difference named."""
    n = state.n
    to_act = -1 if rules.is_terminal(state) else rules.current_seat(state)
    observations, masks = kernel_encode.observe(kernel.Batch(batch.state[game:game + 1].repeat(n, axis=0),
                                                             batch.chance[game:game + 1].repeat(n, axis=0),
                                                             batch.configs[game:game + 1] * n),
                                                list(range(n)))
    expected = _observations(state, observer)
    if not np.array_equal(observations, expected):
        seat, at = (int(i) for i in np.argwhere(observations != expected)[0])
        raise AssertionError(f"{where}, seat {seat}: observation[{at}] ({kernel_encode.observation_field(at)}): "
                             f"kernel {observations[seat, at]!r}, encode {expected[seat, at]!r}")
    expected_masks = np.zeros((n, len(encode.action_names(state.config))), dtype=bool)
    if to_act >= 0:
        expected_masks[to_act, rules.legal_actions(state)] = True
    if masks.shape != expected_masks.shape or not np.array_equal(masks, expected_masks):
        seat = next((s for s in range(n) if masks.shape != expected_masks.shape
                     or not np.array_equal(masks[s], expected_masks[s])), 0)
        raise AssertionError(f"{where}, seat {seat}: action mask: kernel {np.flatnonzero(masks[seat]).tolist()} "
                             f"of {masks.shape[-1]}, env {np.flatnonzero(expected_masks[seat]).tolist()} "
                             f"of {expected_masks.shape[-1]}")


_TABLES: dict[tuple[int, int], tuple[np.ndarray, list[np.ndarray]]] = {}


def _observations(state: rules.State, observer: encode.Observer | None = None) -> np.ndarray:
    """Every seat's observation from the env's encoder, one row a seat (a buffer kept per table size, as an
    env keeps its own: the encoder's views of it stay valid)."""
    size = encode.observation_size(state.config)
    if (state.n, size) not in _TABLES:
        table = np.zeros((state.n, size), dtype=np.float32)
        _TABLES[state.n, size] = table, list(table)
    table, rows = _TABLES[state.n, size]
    write = observer.encode if observer is not None else encode.encode
    for seat in range(state.n):
        write(state, seat, rows[seat])
    return table


def _observation(state: rules.State, seat: int) -> np.ndarray:
    out = np.zeros(encode.observation_size(state.config), dtype=np.float32)
    encode.encode(state, seat, out)
    return out


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 4}, {"num_players": 6},
                                     {"num_players": 3, "level_reward": 0.5, "max_steps": 400}])
def test_whole_rollouts_are_the_games_the_rules_play(options):
    """rollout_random plays, inside one call, the games the rules play with the same picks and chance."""
    config = rules.Config(**options)
    seeds = list(range(8))
    batch = kernel.new_games(config, seeds)
    for state, taken in kernel_checks.check_rollouts_replay(kernel, rules, config, batch, seeds,
                                                            kernel_checks.play_randomly(rules)):
        assert taken == state.steps


def test_rollouts_stop_after_max_steps():
    batch = kernel.new_games(rules.Config(num_players=3), [5, 6])
    values, steps = kernel.rollout_random(batch, [1, 2], max_steps=7)
    assert list(steps) == [7, 7]
    assert not values.any(), "a game cut short by max_steps is not over: no returns yet"


def test_step_batch_steps_many_games_and_leaves_minus_one_alone():
    config = rules.Config(num_players=3)
    batch = kernel.new_games(config, [0, 1, 2])
    kernel_checks.check_step_batch(kernel, rules, config, batch)


def test_an_illegal_action_names_game_and_action_and_changes_nothing():
    kernel_checks.check_bad_input(kernel, rules, rules.Config(num_players=4))


def test_what_the_kernel_cannot_take_is_named_and_played_on_python(capsys):
    config = rules.Config(num_players=3)
    scripted = rules.new_game(config, Chance.scripted(rules.new_game(config, Chance(4)).chance.outcomes))
    state, taken = kernel_checks.check_what_it_cannot_take(kernel, rules, config, "Wyvern", capsys, scripted,
                                                           {"max_steps": 5}, 5, kernel_checks.play_randomly(rules))
    assert taken == state.steps


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 4}, {"num_players": 6},
                                     {"num_players": 5, "decks": ("random",) * 5, "summons": True,
                                      "one_helper_per_turn": False, "gold_per_level": 500}])
def test_heuristic_rollouts_are_the_games_the_bot_plays(options):
    config = rules.Config(**options)
    seeds = list(range(6))
    kernel_checks.check_heuristic_rollouts(rules, config, seeds, heuristic_kernel.rollout_heuristic(
        kernel.new_games(config, seeds)), HeuristicBot, lambda state: state.steps)


def test_without_numba_rollouts_play_on_python_and_say_why(monkeypatch, capsys):
    monkeypatch.setattr(kernel, "numba", None)
    config = rules.Config(num_players=3, max_steps=300)
    game, taken = kernel_checks.check_without_numba(kernel, rules, config, "Wyvern", capsys,
                                                    kernel_checks.play_randomly(rules))
    assert taken == game.steps
    with pytest.raises(ValueError, match="the Wyvern kernel is unavailable: numba is not installed"):
        heuristic_kernel.rollout_heuristic(kernel.Batch(*kernel._empty(1), [config]))
