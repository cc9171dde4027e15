"""Differential replay of the MiniSteel kernel (envs/ministeel/kernel.py) against the Python rules, the reference.

Seeded random games are played move by move in both engines, the same action in each, each drawing from
the same chance stream (the kernel runs the very Mersenne Twister of ``Chance(seed)``): at every step the
legal sets, every State field (the kernel's row against the row the rules' State converts to), the
generator's state and the number of draws, and at the end the returns, must be equal. A mismatch names
the option set, game, seed, step and the first differing field.

At every step each seat's observation and action mask from the compiled encoder
(envs/ministeel/kernel_encode.py) must equal what ``encode.encode`` and the PettingZoo env give: a mismatch
names the option set, game, seed, step, seat and the first differing index with its field.

Games are played with uniformly random moves and with the heuristic bot (whose compiled form,
agents/ministeel_kernel.py, must make each of its decisions). Short form in CI (250 random games per player
count, 40 per other option set and per player count of heuristic play); ``TAVERNZOO_FULL=1`` runs the long
form (100,000 random games at the default options, 2,000 per option set and per heuristic table) in chunks
of 1,000 seeds (``TAVERNZOO_REPLAY_LEDGER=FILE`` lets a run cut short resume; see tests/kernel_checks.py).
"""

from __future__ import annotations

import os
import random
import re

import kernel_checks
import numpy as np
import pytest

from tavernzoo.agents import ministeel_kernel as heuristic_kernel
from tavernzoo.agents.ministeel import HeuristicBot
from tavernzoo.envs import compiled
from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import encode, kernel, kernel_encode, rules

pytestmark = pytest.mark.skipif(kernel.numba is None, reason="numba is not installed")

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
GAMES_PER_PLAYER_COUNT = 20_000 if FULL else 250
GAMES_PER_OPTION_SET = 2_000 if FULL else 40
CHUNK = 1_000  # the long form's chunks (tests/kernel_checks.py: a ledger lets a cut run resume)

# Every option away from its default, one at a time (and a few together), each at 4 players unless set.
OPTION_SETS = {
    "own_turn": {"token_timing": rules.OWN_TURN},
    "own_turn_3p": {"token_timing": rules.OWN_TURN, "num_players": 3},
    "starting_hp_3": {"starting_hp": 3},
    "hp_cap_14": {"hp_cap": 14},
    "hand_size_2": {"hand_size": 2},
    "hand_size_12_6p": {"hand_size": 12, "num_players": 6},
    "draw_tokens_0": {"draw_tokens": 0},
    "draw_tokens_5_token_cards_6": {"draw_tokens": 5, "token_cards": 6},
    "token_cards_0": {"token_cards": 0},
    "actions_per_turn_1": {"actions_per_turn": 1},
    "actions_per_turn_4": {"actions_per_turn": 4},
    "poison_limit_2": {"poison_limit": 2},
    "no_steal_equipment": {"steal_equipment": False},
    "armor_vs_unblockable": {"armor_vs_unblockable": True},
    "flame_needs_damage": {"flame_needs_damage": True},
    "fate_on_self": {"fate_on_self": True},
    "fate_on_self_2p": {"fate_on_self": True, "num_players": 2},
    "skipped_turn_poison": {"skipped_turn_poison": True},
    "max_turns_8": {"max_turns": 8},
    "max_decisions_40": {"max_decisions": 40},
    "every_switch_5p": {"num_players": 5, "steal_equipment": False, "armor_vs_unblockable": True,
                        "flame_needs_damage": True, "fate_on_self": True, "skipped_turn_poison": True},
}


def replay(config: rules.ConfigV1, seed: int, label: str, bots: list | None = None) -> tuple[float, ...]:
    """Play game ``seed`` in both engines with the same moves (uniformly random, or ``bots[seat].act_state``);
    fail at the first difference (of the observations too)."""
    batch = kernel.new_games(config, [seed], track_known=True)
    return kernel_checks.replay_in_both(
        kernel, rules, config, seed, label, batch,
        choose=None if bots is None else lambda state, seat, legal: bots[seat].act_state(state, seat, legal),
        compiled_move=lambda batch: heuristic_kernel.heuristic_move(batch, 0), check_more=check_observations,
        seats=False)


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_PLAYER_COUNT, CHUNK), ids=str)
@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_default_games_replay_identically(players, seeds):
    config = rules.Config(num_players=players)
    label = f"defaults at {players} players"
    kernel_checks.replay_chunk("ministeel", label, seeds, lambda seed: replay(config, seed, label))


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_OPTION_SET, CHUNK), ids=str)
@pytest.mark.parametrize("players", range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1))
def test_heuristic_games_replay_identically(players, seeds):
    """The heuristic bot's games: more shields, reactions, combos and kept tokens than random play reaches; and
    the bot's compiled form (agents/ministeel_kernel.py) makes its every decision."""
    config = rules.Config(num_players=players)
    bots = [HeuristicBot(config, seat) for seat in range(players)]
    label = f"heuristic play at {players} players"
    kernel_checks.replay_chunk("ministeel", label, seeds, lambda seed: replay(config, seed, label, bots))


@pytest.mark.slow
@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_OPTION_SET, CHUNK), ids=str)
@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_option_sets_replay_identically(name, seeds):
    config = rules.Config(**OPTION_SETS[name])
    kernel_checks.replay_chunk("ministeel", name, seeds, lambda seed: replay(config, seed, name))


@pytest.mark.parametrize("seeds", kernel_checks.seed_chunks(GAMES_PER_OPTION_SET, CHUNK), ids=str)
def test_ministeel_v1_config_replays_identically(seeds):
    from tavernzoo.envs.ministeel import rules_v1

    config = rules_v1.Config(num_players=4)
    kernel_checks.replay_chunk("ministeel", "ministeel_v1", seeds,
                               lambda seed: replay(config, seed, "ministeel_v1"))


def test_without_known_the_rules_fields_still_match():
    """Rollouts leave the hand memory out (the rules never read it); every other field is the same game."""
    config = rules.Config(num_players=5)
    for seed in range(10):
        state = rules.new_game(config, Chance(seed))
        batch = kernel.new_games(config, [seed], track_known=False)
        picker = random.Random(seed)
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            action = legal[int(picker.random() * len(legal))]
            rules.apply(state, action)
            kernel.step_batch(batch, [action])
            state.known = [[[0] * rules.NUM_KINDS for _ in range(state.n)] for _ in range(state.n)]
            assert kernel.first_difference(batch, 0, state) is None, f"seed {seed}, step {state.decisions}"


def test_the_generator_is_random_random():
    """envs/compiled.py's generator, which every kernel draws from, is random.Random word for word."""
    compiled.GENERATOR.compile()
    generator = np.zeros(compiled.MT_SIZE, dtype=np.uint32)
    for seed in (0, 1, 99, 2**31 - 1, 2**32 - 1, 2**32, 2**40 + 3, 2**63 - 1):
        compiled.seed_generator(generator, seed)
        reference = random.Random(seed)
        assert tuple(int(word) for word in generator) == reference.getstate()[1], seed
        # 700 floats: past one regeneration of the 624 words
        assert [compiled.random_float(generator) for _ in range(700)] == [reference.random() for _ in range(700)], seed


def test_states_convert_both_ways_mid_game():
    """A Python State taken into the kernel mid-game, and the kernel's game back out, are the same game, and
    both engines play on identically from there."""
    config = rules.Config(num_players=4)
    for seed in range(20):
        state = rules.new_game(config, Chance(seed))
        picker = random.Random(seed)
        for _ in range(seed * 3):
            if rules.is_terminal(state):
                break
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(picker.random() * len(legal))])
        batch = kernel.from_states([state])
        assert kernel.first_difference(batch, 0, state) is None
        back = kernel.to_state(batch, 0)
        for name in rules.State.__slots__:
            if name not in ("chance", "log"):
                assert getattr(back, name) == getattr(state, name), f"seed {seed}: {name}"
        assert back.chance._random.getstate() == state.chance._random.getstate()
        for seat in range(state.n):  # what every seat observes of the converted State is what it observes now
            assert _observation(back, seat).tolist() == _observation(state, seat).tolist(), f"seed {seed}"
            assert encode.view(back, seat) == {**encode.view(state, seat), "last_events": []}, f"seed {seed}"
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            action = legal[int(picker.random() * len(legal))]
            rules.apply(state, action)
            rules.apply(back, action)
            kernel.step_batch(batch, [action])
        assert kernel.first_difference(batch, 0, state) is None
        assert rules.returns(back) == rules.returns(state)


def check_observations(batch: kernel.Batch, state: rules.State, where: str, game: int = 0) -> None:
    """Every seat's observation and mask from the compiled encoder against encode.encode and the env's mask."""
    to_act = -1 if rules.is_terminal(state) else rules.current_seat(state)
    legal = rules.legal_actions(state) if to_act >= 0 else []
    for seat in range(state.n):
        observation, mask = kernel_encode.observe_seat(batch, game, seat)
        expected = _observation(state, seat)
        if not np.array_equal(observation, expected):
            at = int(np.flatnonzero(observation != expected)[0])
            raise AssertionError(f"{where}, seat {seat}: observation[{at}] ({kernel_encode.observation_field(at)}): "
                                 f"kernel {observation[at]!r}, encode {expected[at]!r}")
        expected_mask = legal if seat == to_act else []
        assert np.flatnonzero(mask).tolist() == expected_mask and len(mask) == len(encode.action_names(state.config)), (
            f"{where}, seat {seat}: action mask: kernel {np.flatnonzero(mask).tolist()}, env {expected_mask}")


def _observation(state: rules.State, seat: int) -> np.ndarray:
    out = np.zeros(encode.observation_size(state.config), dtype=np.float32)
    encode.encode(state, seat, out)
    return out


@pytest.mark.parametrize("players", [2, 4, 6])
def test_whole_rollouts_are_the_games_the_rules_play(players):
    """rollout_random plays, inside one call, the games the rules play with the same picks and chance."""
    config = rules.Config(num_players=players)
    seeds = list(range(30))
    batch = kernel.new_games(config, seeds, track_known=players == 4)  # the rollout leaves the memory out
    for state, taken in kernel_checks.check_rollouts_replay(kernel, rules, config, batch, seeds,
                                                            kernel_checks.play_randomly(rules)):
        assert taken == state.decisions


def test_rollouts_stop_after_max_steps():
    batch = kernel.new_games(rules.Config(num_players=3), [5, 6])
    values, steps = kernel.rollout_random(batch, [1, 2], max_steps=7)
    assert list(steps) == [7, 7]


def test_step_batch_steps_many_games_and_leaves_minus_one_alone():
    config = rules.Config(num_players=3)
    batch = kernel.new_games(config, [0, 1, 2], track_known=True)
    kernel_checks.check_step_batch(kernel, rules, config, batch)


def test_an_illegal_action_names_game_and_action_and_changes_nothing():
    kernel_checks.check_bad_input(kernel, rules, rules.Config(num_players=4))


def test_what_the_kernel_cannot_take_is_named_and_played_on_python(capsys):
    config = rules.Config(num_players=3)
    scripted = rules.new_game(config, Chance.scripted(rules.new_game(config, Chance(4)).chance.outcomes))
    state, taken = kernel_checks.check_what_it_cannot_take(kernel, rules, config, "MiniSteel", capsys, scripted,
                                                           {"max_steps": 5}, 5, kernel_checks.play_randomly(rules))
    assert taken == state.decisions


def test_the_set_order_the_compiled_heuristic_breaks_ties_in_is_cpythons():
    kernel.compile_kernel()
    buffer = np.zeros(heuristic_kernel.LEGAL_BUFFER, dtype=np.int64)
    picker = random.Random(0)
    for _ in range(2000):
        actions = sorted(picker.sample(range(rules.NUM_ACTIONS), picker.randint(1, rules.NUM_ACTIONS)))
        buffer[:len(actions)] = actions
        heuristic_kernel.heuristic_set_order(buffer, len(actions))
        order = heuristic_kernel.ORDER_AT
        assert buffer[order:order + len(actions)].tolist() == list(set(actions)), actions


@pytest.mark.parametrize("options", [{"num_players": 2}, {"num_players": 4}, {"num_players": 6},
                                     {"num_players": 4, "token_timing": rules.OWN_TURN},
                                     {"num_players": 3, "hp_cap": 14, "hand_size": 3, "poison_limit": 2}])
def test_heuristic_rollouts_are_the_games_the_bot_plays(options):
    config = rules.Config(**options)
    seeds = list(range(25))
    kernel_checks.check_heuristic_rollouts(rules, config, seeds, heuristic_kernel.rollout_heuristic(
        kernel.new_games(config, seeds)), HeuristicBot, lambda state: state.decisions)


def test_without_numba_rollouts_play_on_python_and_say_why(monkeypatch, capsys):
    monkeypatch.setattr(kernel, "numba", None)
    config = rules.Config(num_players=3)
    game, taken = kernel_checks.check_without_numba(kernel, rules, config, "MiniSteel", capsys,
                                                    kernel_checks.play_randomly(rules))
    assert taken == game.decisions
    with pytest.raises(ValueError, match="the MiniSteel kernel is unavailable: numba is not installed"):
        heuristic_kernel.rollout_heuristic(kernel.Batch(*kernel._empty(1), [config]))


def test_an_observation_that_departs_is_named_by_seat_index_and_field():
    """The differential check's message: a kernel row whose HP differs shows in every seat's observation, and
    the first seat's names the index and the field (the seat after it: ``seat+1 HP``)."""
    config = rules.Config(num_players=4)
    state = rules.new_game(config, Chance(3))
    batch = kernel.new_games(config, [3], track_known=True)
    check_observations(batch, state, "untouched")
    batch.state[0, kernel.HP + 1] -= 1
    with pytest.raises(AssertionError, match=re.escape("seed 3, seat 0: observation[13] (seat+1 HP): kernel")):
        check_observations(batch, state, "seed 3")
