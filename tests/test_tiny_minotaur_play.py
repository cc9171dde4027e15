"""Seeded random play and property tests for Tiny Minotaur: invariants, determinism, records."""

from __future__ import annotations

import itertools
import json
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tavernzoo.envs import tiny_minotaur_v1
from tavernzoo.envs.core import Chance, IllegalActionError
from tavernzoo.envs.records import replay
from tavernzoo.envs.tiny_minotaur import encode, rules

FULL = bool(os.environ.get("TAVERNZOO_FULL"))
CLASS_PAIRS = list(itertools.product(rules.CLASSES, repeat=2))
# (bosses, boss_replaces): each seat picks the card its boss card replaces
BOSS_OPTIONS = [(("none", "none"), ("regular", "regular")),
                (("minotaur_gore", "bouncer_haymaker"), ("stronk", "middling"))]


def random_game(config: rules.Config, seed: int):
    """Play one game with uniformly random legal actions, checking invariants at every step."""
    chance = Chance(seed)
    picker = random.Random(seed + 1)
    state = rules.new_game(config, chance)
    start_cards = [list(cards) for cards in state.cards]
    actions, steps = [], 0
    out = np.empty(encode.OBSERVATION_SIZE, np.float32)
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        assert legal, "the mask is never empty while the game runs"
        seat = rules.current_seat(state)
        encode.encode(state, seat, out)
        assert np.all(out >= 0.0) and np.all(out <= 1.0)
        action = picker.choice(legal)
        before = [list(cards) for cards in state.cards]
        hp_before = list(state.hp)
        phase = state.phase
        rules.apply(state, action)
        actions.append(action)
        steps += 1
        # Cards leave a deck only as the rules say: one attack card on a hit, one dodge/heal on a success.
        for who in (0, 1):
            lost = [b - a for b, a in zip(before[who], state.cards[who], strict=True)]
            assert all(x >= 0 for x in lost), "no card ever comes back"
            assert sum(lost) <= 1 or (phase == rules.ATTACK_PHASE and sum(lost) == 2 and who != seat), lost
            assert 0 <= state.hp[who] <= config.hp_cap
        if phase == rules.ATTACK_PHASE and action == rules.PASS:
            assert state.cards == before and state.hp == hp_before
        assert steps <= rules.max_game_length(config)
    for who in (0, 1):
        assert all(0 <= n <= s for n, s in zip(state.cards[who], start_cards[who], strict=True))
    returns = rules.returns(state)
    assert sum(returns) == 0 and set(returns) <= {-1.0, 0.0, 1.0}
    if state.end_reason == rules.KNOCKOUT:
        assert min(state.hp) == 0 and returns[state.winner] == 1.0
    return state, actions


@pytest.mark.parametrize(("classes", "bosses"), [(c, b) for c in CLASS_PAIRS for b in BOSS_OPTIONS])
def test_random_play_keeps_every_invariant(classes, bosses):
    config = rules.Config(classes=classes, bosses=bosses[0], boss_replaces=bosses[1])
    for seed in range(300 if FULL else 120):
        random_game(config, seed)


@pytest.mark.slow
def test_thousands_of_random_games_end_within_the_limit_and_rarely_truncate():
    config = rules.Config()
    games = 20_000 if FULL else 3_000
    reasons = {rules.KNOCKOUT: 0, rules.NO_ATTACKS_LEFT: 0, rules.TURN_LIMIT: 0}
    for seed in range(games):
        state, _ = random_game(config, seed)
        reasons[state.end_reason] += 1
    assert reasons[rules.KNOCKOUT] > 0.9 * games
    assert reasons[rules.TURN_LIMIT] == 0  # the 200-turn cap is far beyond any random game here


def test_same_seed_same_game_and_records_replay_to_the_same_state():
    env = tiny_minotaur_v1.raw_env(classes=("random", "random"), bosses=("tavern_brawl", "none"))
    finals = []
    for _ in range(2):
        env.reset(seed=1234)
        picker = random.Random(5)
        for _agent in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(picker.choice(np.flatnonzero(observation["action_mask"]).tolist()))
        finals.append(env.record(seats=["a", "b"]))
    assert finals[0] == finals[1]
    record = json.loads(json.dumps(finals[0]))  # a record survives JSON
    game, state = replay(record)
    assert game.name == "tiny_minotaur"
    assert state.hp == env.game_state.hp and state.cards == env.game_state.cards
    assert list(rules.returns(state)) == record["returns"]


def test_a_tampered_record_does_not_replay():
    env = tiny_minotaur_v1.raw_env()
    env.reset(seed=3)
    while env.agents and not any(env.terminations.values()):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    record = env.record()
    from tavernzoo.envs.core import ReplayError

    flipped = dict(record, returns=[-r for r in record["returns"]])
    with pytest.raises(ReplayError, match="differ"):
        replay(flipped)
    extra = dict(record, chance=record["chance"] + [[20, 3]])
    with pytest.raises(ReplayError, match="never used"):
        replay(extra)


@settings(max_examples=60 if FULL else 25, deadline=None)
@given(seed=st.integers(0, 2**32), choices=st.lists(st.integers(0, 7), min_size=1, max_size=120),
       classes=st.tuples(st.sampled_from(rules.CLASSES), st.sampled_from(rules.CLASSES)))
def test_any_action_sequence_either_applies_or_is_refused_unchanged(seed, choices, classes):
    """Property: illegal actions raise and change nothing; legal ones keep HP and cards in bounds."""
    state = rules.new_game(rules.Config(classes=classes), Chance(seed))
    for action in choices:
        if rules.is_terminal(state):
            break
        snapshot = (list(state.hp), [list(c) for c in state.cards], state.phase, state.to_act, state.turn)
        if action in rules.legal_actions(state):
            rules.apply(state, action)
        else:
            with pytest.raises(IllegalActionError):
                rules.apply(state, action)
            assert (list(state.hp), [list(c) for c in state.cards], state.phase, state.to_act,
                    state.turn) == snapshot
        assert all(0 <= hp <= 100 for hp in state.hp)
        assert all(min(cards) >= 0 for cards in state.cards)
