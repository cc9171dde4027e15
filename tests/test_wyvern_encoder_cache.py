"""Wyvern's encoder (an :class:`~tavernzoo.envs.wyvern.encode.Observer`, one per env or search) keeps each
game's player blocks between calls and rewrites only what changed (envs/wyvern/encode.py). These tests
hold it to ``encode_uncached``, which computes every slot from the state alone, bit for bit: on every
decision of seeded random games at 2-6 players, for every seat, with games played in turns, on clones,
determinizations and information states, after changes made by hand, and with a table left by another
game. A stale cache shows up here as a mismatch."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tavernzoo.envs.core import Chance
from tavernzoo.envs.wyvern import encode, rules

CONFIGS = [
    {"num_players": 2},
    {"num_players": 3, "decks": ("paladins_oath", "dark_pact", "frost_blade"), "summons": True, "win_level": 10},
    {"num_players": 4, "help_rounds": 1, "paladin_helper_wins_ties": True},
    {"num_players": 5, "decks": ("random",) * 5, "hand_limit_always": False},
    {"num_players": 6, "decks": ("random",) * 6, "summons": True},
]


OBSERVER = encode.Observer()  # the tests' own, as an env has its own


def assert_encodes_as_uncached(state: rules.State, seats=None, where: str = "", observer=None) -> None:
    observer = observer or OBSERVER
    cached = np.empty(encode.OBSERVATION_SIZE, np.float32)
    fresh = np.empty(encode.OBSERVATION_SIZE, np.float32)
    for seat in range(state.n) if seats is None else seats:
        cached.fill(np.nan)  # a slot the encoder forgot to write shows up as NaN
        observer.encode(state, seat, cached)
        encode.encode_uncached(state, seat, fresh)
        if not np.array_equal(cached, fresh):
            wrong = np.flatnonzero(cached != fresh)
            raise AssertionError(f"{where} step {state.steps} seat {seat}: slots {wrong.tolist()} are "
                                 f"{cached[wrong].tolist()}, from scratch {fresh[wrong].tolist()}")


def _new(config: dict, seed: int) -> rules.State:
    return rules.new_game(rules.Config(**config), Chance(seed))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c['num_players']}p")
def test_every_decision_of_random_games_encodes_as_from_scratch(config):
    """Two games played in turns (each keeps its own table), every seat observed after every decision;
    every tenth decision only the seat to act, as the env observes."""
    games = [_new(config, seed) for seed in (11, 12)]
    picks = [random.Random(seed) for seed in (11, 12)]
    decisions = 0
    while any(not rules.is_terminal(state) for state in games) and decisions < 1500:
        for state, pick in zip(games, picks, strict=True):
            if rules.is_terminal(state):
                continue
            seats = [state.to_act] if state.steps % 10 else None
            assert_encodes_as_uncached(state, seats, where=f"{config}")
            rules.apply(state, pick.choice(rules.legal_actions(state)))
            decisions += 1
    for state in games:
        assert_encodes_as_uncached(state, where=f"{config}, at the end")
    assert decisions >= 300


def test_whole_games_to_the_end_at_six_players():
    for seed in range(2):
        state = _new({"num_players": 6}, seed)
        pick = random.Random(seed)
        while not rules.is_terminal(state):
            assert_encodes_as_uncached(state, [state.to_act, (state.to_act + 1) % 6], where=f"seed {seed}")
            rules.apply(state, pick.choice(rules.legal_actions(state)))
        assert_encodes_as_uncached(state, where=f"seed {seed}, game over")


def test_clones_determinizations_and_information_states_encode_as_from_scratch():
    for config in CONFIGS[1::2]:
        state = _new(config, 5)
        pick = random.Random(5)
        for step in range(600):
            if rules.is_terminal(state):
                break
            if step % 40 == 0:
                seat = state.to_act
                copies = [rules.clone(state), rules.determinize(state, seat, Chance(step)),
                          rules.information_state(state, seat)]
                for copy in copies:
                    assert_encodes_as_uncached(copy, where="a copy")
                # The copies play on (the clone and the determinization) apart from the original.
                for copy in copies[:2]:
                    side = random.Random(step)
                    for _ in range(15):
                        if rules.is_terminal(copy):
                            break
                        rules.apply(copy, side.choice(rules.legal_actions(copy)))
                        assert_encodes_as_uncached(copy, [step % copy.n], where="a copy playing on")
                assert_encodes_as_uncached(state, where="the original after its copies")
            rules.apply(state, pick.choice(rules.legal_actions(state)))
            assert_encodes_as_uncached(state, [state.steps % state.n])


def test_a_state_changed_by_hand_is_encoded_as_it_is_now():
    state = _new({"num_players": 4, "summons": True}, 3)
    assert_encodes_as_uncached(state)
    changes = [
        lambda s: s.level.__setitem__(1, 7),
        lambda s: s.equipped[2].append(encode.EQUIPMENT[0]),
        lambda s: s.dead.__setitem__(3, True),
        lambda s: s.paralyzed.__setitem__(0, True),
        lambda s: s.slow_turn.__setitem__(1, 0),
        lambda s: s.confused_turn.__setitem__(2, 0),
        lambda s: s.summon.__setitem__(0, -1),
        lambda s: s.races.__setitem__(1, rules.NO_RACE),
        lambda s: s.classes.__setitem__(3, (s.classes[3] + 1) % len(rules.CLASSES)),
        lambda s: s.static_bonus.__setitem__(2, 4),
        lambda s: s.hand[1].pop(),
        lambda s: s.deck[3].pop(),
        lambda s: s.discard[0].append(5),
        lambda s: s.hand[0].extend([7, 7, 7, 7, 7]),
    ]
    for change in changes:
        change(state)
        assert_encodes_as_uncached(state, where="after a change by hand")
    for change in (lambda s: s.hand[2].pop(), lambda s: s.deck[1].append(3), lambda s: s.discard[3].clear()):
        change(state)
        assert_encodes_as_uncached(state, where="after a pile changed by hand")


def test_a_fight_changed_by_hand_is_encoded_as_it_is_now():
    """The fight's slots and the help talks are kept as written while their inputs stay equal: a change to
    any of them by hand, in the middle of a fight, shows at once."""
    state = _new({"num_players": 5, "summons": True}, 4)
    pick = random.Random(4)
    while not (state.monster >= 0 and state.phase in encode.IN_COMBAT_PHASES):
        rules.apply(state, pick.choice(rules.legal_actions(state)))
    assert_encodes_as_uncached(state, where="in a fight")
    other = (state.fighter + 1) % state.n
    changes = [
        lambda s: setattr(s, "monster_bonus", s.monster_bonus + 3),
        lambda s: setattr(s, "party_bonus", s.party_bonus + 2),
        lambda s: setattr(s, "run_bonus", s.run_bonus + 1),
        lambda s: s.level.__setitem__(s.fighter, s.level[s.fighter] + 1),  # the party's strength
        lambda s: s.offers_to.__setitem__(other, 1),
        lambda s: s.best_offer.__setitem__(other, 2),
        lambda s: s.asks_from.__setitem__(other, 1),
        lambda s: s.last_ask.__setitem__(other, 3),
        lambda s: setattr(s, "helper", other),
        lambda s: setattr(s, "split", 2),
        lambda s: setattr(s, "turn", s.turn + 5),
        lambda s: setattr(s, "gold", 300),
        lambda s: setattr(s, "door_card", -1),
        lambda s: setattr(s, "to_act", other),
    ]
    for change in changes:
        change(state)
        assert_encodes_as_uncached(state, where="after a change by hand in a fight")


def test_public_changes_random_games_seldom_reach_are_encoded_as_from_scratch():
    """Changes random games seldom reach, each played through the rules on an encoded table: a curse that
    takes a dwarf's race (and nothing else), an elf helper's level for a won fight."""
    from tavernzoo.envs.wyvern.decks import BY_KEY

    config = rules.Config(num_players=2, races=("dwarf", "dwarf"), classes=("cleric", "cleric"))
    state = rules.new_game(config, Chance(0))
    state.phase, state.active, state.to_act, state.turn = rules.FREE, 0, 0, 1
    state.hand[0].append(BY_KEY["lose_your_race"].cid)
    assert_encodes_as_uncached(state, where="before the curse")
    rules.apply(state, rules.ACTION_INDEX["curse:lose_your_race:+1"])
    assert state.races[1] == rules.NO_RACE
    assert_encodes_as_uncached(state, where="after the curse")

    config = rules.Config(num_players=2, races=("dwarf", "elf"), classes=("cleric", "cleric"))
    state = rules.new_game(config, Chance(0))
    state.phase, state.active, state.to_act, state.turn = rules.FREE, 0, 0, 1
    state.hand[0].append(BY_KEY["goblin"].cid)
    state.level[0] = 5  # beats the goblin alone: the elf's level is what changes besides
    for name in ("fight:goblin", "offer:+1:0", "accept"):
        rules.apply(state, rules.ACTION_INDEX[name])
        assert_encodes_as_uncached(state, where=f"after {name}")
    levels = list(state.level)
    while state.level == levels:
        rules.apply(state, rules.ACTION_INDEX["pass"])
    assert state.level[1] == 2  # the elf's level for helping
    assert_encodes_as_uncached(state, where="after the won fight")


def test_a_table_left_by_another_game_is_rewritten_not_trusted():
    # Tables are found by the id of the State; an id can be reused once a State is gone. Hand one game's
    # table to another game of the same config: its observations must still be its own.
    first, second = _new({"num_players": 4}, 1), _new({"num_players": 4}, 2)
    pick = random.Random(0)
    for _ in range(200):
        rules.apply(first, pick.choice(rules.legal_actions(first)))
    assert_encodes_as_uncached(first)
    OBSERVER.tables[id(second)] = OBSERVER.tables[id(first)]
    assert_encodes_as_uncached(second, where="the second game on the first one's table")
    assert_encodes_as_uncached(first, where="the first game after the second")


def test_a_new_state_never_starts_from_another_observers_table():
    """Every consumer has its own Observer (the web server plays each table, with its own env, in a thread
    of its own). A new state's table starts as a copy of the table its observer used last, trusted
    wherever its saved inputs equal the new state's; another observer's table (perhaps half rewritten at
    that moment in another thread) is never copied. Here the other observer's table is spoilt on purpose,
    inputs intact: a copy of it would show."""
    import threading

    state = _new({"num_players": 6}, 41)
    pick = random.Random(41)
    for _ in range(50):
        rules.apply(state, pick.choice(rules.legal_actions(state)))
    theirs, mine = encode.Observer(), encode.Observer()
    worker = threading.Thread(target=theirs.encode, args=(state, state.to_act,
                                                          np.empty(encode.OBSERVATION_SIZE, np.float32)))
    worker.start()
    worker.join()
    theirs.tables[id(state)].array[:] = 0.5  # "half rewritten": every slot wrong, every saved input right
    assert_encodes_as_uncached(rules.clone(state), where="a copy, encoded after another observer's game",
                               observer=mine)


def test_the_module_encode_keeps_nothing_and_envs_have_their_own_observers():
    from tavernzoo.envs import wyvern_v1

    state = _new({"num_players": 3}, 5)
    before = np.empty(encode.OBSERVATION_SIZE, np.float32)
    encode.encode(state, 0, before)
    fresh = np.empty(encode.OBSERVATION_SIZE, np.float32)
    encode.encode_uncached(state, 0, fresh)
    assert np.array_equal(before, fresh)
    first, second = wyvern_v1.raw_env(), wyvern_v1.raw_env()
    assert isinstance(first._observer, encode.Observer) and first._observer is not second._observer


def test_out_must_be_a_float32_vector_of_the_observation_size_and_the_seat_at_the_table():
    state = _new({"num_players": 2}, 0)
    for seat in (-1, 2):
        with pytest.raises(ValueError, match=r"seat .* valid seats are 0\.\.1"):
            encode.encode(state, seat, np.empty(encode.OBSERVATION_SIZE, np.float32))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode.encode(state, 0, np.empty(encode.OBSERVATION_SIZE, np.float64))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode.encode(state, 0, np.empty(encode.OBSERVATION_SIZE + 1, np.float32))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode.encode(state, 0, np.empty((encode.OBSERVATION_SIZE, 1), np.float32))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode.encode(state, 0, np.float32(0.0))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode.encode(state, 0, [0.0] * encode.OBSERVATION_SIZE)
