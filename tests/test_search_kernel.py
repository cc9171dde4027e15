"""mcts in compiled code (agents/mcts_kernel.py, MiniSteel's loop in agents/ministeel_kernel.py) against the
Python search, the reference.

The compiled search runs the Python search's own streams (the dealer's Mersenne Twister for the samples'
cards and dice, the bot's ``random.Random`` for untried actions and random rollout moves), so from the same
seed it must visit exactly what the Python search visits: the same move, the same root visit counts in the
same order, the bot's generator left in the same state, over every phase a search meets, several table sizes
and option sets. A statistical check compares the two searches' move distributions over independent
seeds (it holds even where the exact streams could not be kept). The compiled determinization deals
exactly what ``rules.determinize`` deals from the same dealer, only hands the seat cannot tell apart from
what it saw, and the frequencies of the cards dealt to a hand are those of a uniform deal. Short form in
CI; ``TAVERNZOO_FULL=1`` searches six positions per phase at 300 simulations.
"""

from __future__ import annotations

import dataclasses
import os
import random

import numpy as np
import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents import mcts_kernel as T
from tavernzoo.agents import ministeel_kernel as MK
from tavernzoo.agents.mcts import SearchChance
from tavernzoo.agents.ministeel import _value
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import kernel as K
from tavernzoo.envs.ministeel import rules as R

pytestmark = pytest.mark.skipif(K.numba is None, reason="numba is not installed")

GAME = get_game("ministeel")
FULL = bool(os.environ.get("TAVERNZOO_FULL"))  # the long form: more positions per phase, more simulations
PHASES = (R.MAIN, R.REACT_PHASE, R.ANSWER, R.PICK_PHASE, R.DRAW_PHASE)


def positions(config: R.ConfigV1, seed: int, per_phase: int = 2, games: int = 60) -> list[R.State]:
    """Up to ``per_phase`` states of random play in each phase with a choice, the first ones met after the
    game's first few decisions (so hands have changed and seats remember cards)."""
    rng = random.Random(seed)
    found: dict[int, list[R.State]] = {phase: [] for phase in PHASES}
    for _ in range(games):
        state = R.new_game(config, Chance(rng.randrange(2**31)))
        skip = rng.randrange(5, 60)
        while not R.is_terminal(state):
            legal = R.legal_actions(state)
            if skip <= 0 and len(legal) > 1 and len(found[state.phase]) < per_phase:
                found[state.phase].append(R.clone(state))
                skip = rng.randrange(5, 60)
            skip -= 1
            R.apply(state, rng.choice(legal))
        if all(len(states) == per_phase for states in found.values()):
            break
    return [state for states in found.values() for state in states]


def _search(bot, state: R.State, seat: int) -> tuple[int, list, tuple]:
    move = bot.search(R.information_state(state, seat), seat)
    return move, list(bot.last_search["visits"].items()), bot._random.getstate()


# --- the whole search, exactly ------------------------------------------------------------------------------

SIMS = 300 if FULL else 40
SPECS = [f"mcts:{SIMS}", f"mcts:{SIMS},rollout=random,prior=none,depth=0", f"mcts:{SIMS},others=random,depth=8,c=0.5",
         f"mcts:{SIMS},rollout=random,others=heuristic,prior=heuristic,depth=30"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("options", [{"num_players": 4}, {"num_players": 2}, {"num_players": 6},
                                     {"num_players": 3, "token_timing": R.OWN_TURN}])
def test_the_compiled_search_visits_what_the_python_search_visits(spec, options):
    config = GAME.make_config(options)
    compiled = load_bot(f"{spec},kernel=on", GAME, config, seed=11)
    python = load_bot(f"{spec},kernel=off", GAME, config, seed=11)
    assert compiled._compiled is not None and python._compiled is None
    # One bot of each searches every position in turn: the generators carry over, as in a game.
    for number, state in enumerate(positions(config, seed=options["num_players"], per_phase=6 if FULL else 1)):
        seat = R.current_seat(state)
        got, expected = _search(compiled, state, seat), _search(python, state, seat)
        assert got[0] == expected[0], f"{spec} {options}, position {number} ({R.PHASE_NAMES[state.phase]}): move"
        assert got[1] == expected[1], f"{spec} {options}, position {number}: root visits {got[1]} != {expected[1]}"
        assert got[2] == expected[2], f"{spec} {options}, position {number}: the bot's generator"
        # the root's value (expert iteration's value_target=search): the same simulations' mean for the seat
        assert compiled.search_value() == pytest.approx(python.search_value(), rel=1e-9, abs=1e-12), (
            f"{spec} {options}, position {number}: root value")
        assert -1.0 <= compiled.search_value() <= float(config.num_players - 1)


def test_the_generator_carried_in_the_search_words_from_move_to_move_is_the_python_searchs():
    """The bot's generator stays in the compiled search's words between moves (KernelRandom), nothing reading
    it in between: move after move the same searches, and at the end the same generator state."""
    config = GAME.make_config({"num_players": 4})
    compiled = load_bot("mcts:30,kernel=on", GAME, config, seed=12)
    python = load_bot("mcts:30,kernel=off", GAME, config, seed=12)
    assert isinstance(compiled._random, T.KernelRandom)
    for state in positions(config, seed=4, per_phase=2):
        seat = R.current_seat(state)
        for bot in (compiled, python):
            bot.search(R.information_state(state, seat), seat)
        assert compiled._random._ahead  # still in the words: the next search takes them as they are
        for key in ("simulations", "visits"):
            assert compiled.last_search[key] == python.last_search[key], key
        # the root's value, which the compiled search reads from its arrays when asked
        assert compiled.search_value() == pytest.approx(python.search_value(), rel=1e-9, abs=1e-12)
    assert compiled._random.getstate() == python._random.getstate()


def test_a_kernel_random_draws_what_random_random_draws():
    """KernelRandom against random.Random of the same seed, draw by draw, its state handed to a search's
    words (advanced there, in compiled code, across the twist of the 624 words) and back by every way in:
    draws of up to 32 bits served from the words, every other draw, getstate, setstate, seed, copies."""
    import copy
    import pickle

    T.TREE.compile()
    for seed in (0, 7, 2**40 + 3):
        plain, lazy = random.Random(seed), T.CompiledSearch.generator(random.Random(seed))
        choose = random.Random(seed + 1)  # which draws, in which order
        for step in range(2500):
            kind = choose.randrange(9)
            if kind <= 1:  # a search's draws: compiled next_word on the words, as tree_step's randbelow
                words = lazy.search_words()
                for _ in range(choose.randrange(1, 700)):
                    assert T.draw_word(words) == plain.getrandbits(32), step
            elif kind == 2:
                assert lazy.randrange(2**31) == plain.randrange(2**31), step  # the dealer seed of a move
                bound = choose.choice([1, 2, 3, 1000, 2**32 - 1, 2**32, 2**40])
                assert lazy.randrange(bound) == plain.randrange(bound), (step, bound)
                assert lazy.choice("abcdefg") == plain.choice("abcdefg"), step
            elif kind == 3:
                bits = choose.choice([1, 5, 31, 32, 33, 64, 100])
                assert lazy.getrandbits(bits) == plain.getrandbits(bits), (step, bits)
            elif kind == 4:
                assert lazy.random() == plain.random(), step
            elif kind == 5:
                cards = list(range(choose.randrange(2, 90)))
                mine = cards.copy()
                lazy.shuffle(mine)
                plain.shuffle(cards)
                assert mine == cards, step
            elif kind == 6:
                assert lazy.getstate() == plain.getstate(), step
            elif kind == 7:  # copies (pickle, copy) carry the state on, the original unchanged
                twin = pickle.loads(pickle.dumps(lazy)) if step % 2 else copy.deepcopy(lazy)
                assert type(twin) is T.KernelRandom and twin.getstate() == plain.getstate(), step
                reference = random.Random()
                reference.setstate(plain.getstate())
                assert [twin.getrandbits(32) for _ in range(700)] == [reference.getrandbits(32) for _ in range(700)]
            else:  # the state set from outside replaces what the words held
                fresh = choose.randrange(2**31)
                if step % 2:
                    lazy.seed(fresh)
                    plain.seed(fresh)
                else:
                    state = random.Random(fresh).getstate()
                    lazy.setstate(state)
                    plain.setstate(state)
        assert lazy.getstate() == plain.getstate()


def test_a_tree_outgrowing_its_arrays_searches_alike(monkeypatch):
    monkeypatch.setattr(T.CompiledSearch, "FIRST_ROOM", 8)  # every search grows its arrays several times
    config = GAME.make_config({"num_players": 4})
    compiled = load_bot("mcts:150,kernel=on", GAME, config, seed=3)
    python = load_bot("mcts:150,kernel=off", GAME, config, seed=3)
    for state in positions(config, seed=9, per_phase=1)[:3]:
        seat = R.current_seat(state)
        assert _search(compiled, state, seat) == _search(python, state, seat)
    assert len(compiled._compiled.nodes) > 8


def test_the_same_seed_gives_the_same_move_and_a_game_plays_alike():
    """Seeded from the deal, as at a table: whole games with the compiled and the Python bot in two seats."""
    config = GAME.make_config({"num_players": 4})
    records = []
    for kernel in ("on", "off"):
        bots = [load_bot(f"mcts:20,kernel={kernel}", GAME, config, seed=100 + seat) for seat in range(2)]
        heuristic = load_bot("heuristic", GAME, config, seed=0)
        state = R.new_game(config, Chance(7))
        moves = []
        while not R.is_terminal(state) and len(moves) < 120:
            seat = R.current_seat(state)
            if seat < 2 and len(R.legal_actions(state)) > 1:
                action = bots[seat].search(R.information_state(state, seat), seat)
            else:
                action = heuristic.act_state(state, seat, R.legal_actions(state))
            moves.append(action)
            R.apply(state, action)
        records.append(moves)
    assert records[0] == records[1]


# --- the same distribution (a check that holds without the exact streams) ------------------------------------


def _visit_shares(spec: str, config, states: list[R.State], seeds: range) -> list[np.ndarray]:
    shares = []
    for state in states:
        seat = R.current_seat(state)
        total = np.zeros(R.NUM_ACTIONS)
        for seed in seeds:
            bot = load_bot(spec, GAME, config, seed=seed)
            bot.search(R.information_state(state, seat), seat)
            for action, visits in bot.last_search["visits"].items():
                total[action] += visits
        shares.append(total / total.sum())
    return shares


def test_the_compiled_search_picks_moves_as_the_python_search_does_over_independent_seeds():
    """Root visit shares summed over 16 seeds each at three main-phase positions of 8-11 moves, the compiled
    search's seeds apart from the Python search's: their total variation distance averages under 0.085
    (0.054 measured; between two sets of Python seeds it is about as much), while searches that differ in
    what a compiled loop could get wrong (rollouts random, or cut after 2 decisions) are farther (0.10 to
    0.15 measured): the tolerance a real bug breaks."""
    config = GAME.make_config({"num_players": 4})
    states = [s for s in positions(config, seed=21, per_phase=8)
              if s.phase == R.MAIN and len(R.legal_actions(s)) >= 6][:3]
    assert len(states) == 3
    python = _visit_shares("mcts:100,kernel=off", config, states, range(16))

    def distance(spec: str) -> float:
        shares = _visit_shares(spec, config, states, range(1000, 1016))
        return float(np.mean([0.5 * np.abs(p - c).sum() for p, c in zip(python, shares, strict=True)]))

    assert distance("mcts:100,kernel=on") < 0.085
    assert distance("mcts:100,kernel=on,rollout=random") > 0.085
    assert distance("mcts:100,kernel=on,depth=2") > 0.085


# --- the determinization ------------------------------------------------------------------------------------


def test_the_compiled_determinization_deals_what_the_rules_deal():
    """Every phase, every seat's view, table sizes 2-6: sample after sample from one dealer, each state
    (every field but the memory) and the dealer's generator equal; positions where the seat remembers cards
    in another hand and where the seat to act must be dealt a reaction are among them."""
    remembered = rejected = 0
    for players in range(2, 7):
        config = GAME.make_config({"num_players": players})
        for number, state in enumerate(positions(config, seed=players)):
            for seat in range(players):
                info = R.information_state(state, seat)
                remembered += any(map(any, info.known[seat]))
                rejected += bool(R._shown_to_hold(info, seat))
                dealer = SearchChance(number * 10 + seat)
                words = np.array(dealer._random.getstate()[1], dtype=np.uint32)
                for sample in range(3):
                    expected = R.determinize(info, seat, dealer)
                    batch = K.determinize_batch(info, seat, words, 1)
                    difference = K.first_difference(batch, 0, expected)
                    assert difference is None, (f"{players} players, position {number} "
                                                f"({R.PHASE_NAMES[state.phase]}), seat {seat}, sample {sample}: "
                                                f"{difference}")
    assert remembered and rejected  # the memory and the reaction's rejection were both exercised


def _unseen_by_kind(row: np.ndarray, seat: int, n: int, with_pick: bool) -> np.ndarray:
    counts = row[K.DECK:K.DECK + row[K.DECK_LEN]]
    total = np.bincount(counts, minlength=R.NUM_KINDS)
    for who in range(n):
        if who != seat:
            total = total + row[K.HANDS + who * R.NUM_KINDS:K.HANDS + (who + 1) * R.NUM_KINDS]
    if with_pick:
        total = total + row[K.PICK:K.PICK + R.NUM_KINDS]
    return total


def test_a_compiled_sample_is_a_state_the_seat_cannot_tell_from_what_it_saw():
    for players in (2, 4, 6):
        config = GAME.make_config({"num_players": players})
        for state in positions(config, seed=30 + players):
            for seat in range(players):
                info = R.information_state(state, seat)
                row = K.information_row(info)
                batch = K.determinize_batch(info, seat, np.array(Chance(seat)._random.getstate()[1], np.uint32), 40)
                hidden_pick = info.turn_seat != seat and any(info.pick)
                needed = R._shown_to_hold(info, seat)
                hand = slice(K.HANDS + seat * R.NUM_KINDS, K.HANDS + (seat + 1) * R.NUM_KINDS)
                for sample in batch.state:
                    public = np.ones(K.KNOWN, dtype=bool)
                    public[K.HANDS:K.HANDS + players * R.NUM_KINDS] = False
                    public[hand] = True  # its own hand is its own
                    public[K.DECK:K.DECK + K.DECK_ROOM] = False
                    public[K.TRACK_KNOWN] = False
                    if hidden_pick:
                        public[K.PICK:K.PICK + R.NUM_KINDS] = False
                    assert np.array_equal(sample[:K.KNOWN][public], row[:K.KNOWN][public])
                    assert np.array_equal(_unseen_by_kind(sample, seat, players, hidden_pick),
                                          _unseen_by_kind(row, seat, players, hidden_pick))
                    for who in range(players):
                        held = sample[K.HANDS + who * R.NUM_KINDS:K.HANDS + (who + 1) * R.NUM_KINDS]
                        assert held.sum() == sum(info.hands[who])
                        assert (held >= np.array(info.known[seat][who])).all()  # what it remembers is there
                    if needed:
                        actor = info.to_act
                        assert any(sample[K.HANDS + actor * R.NUM_KINDS + kind] for kind in needed)


def test_compiled_and_python_samples_deal_a_hand_as_a_uniform_deal_would():
    """At a main-phase position without memory: how often each kind lands in the next seat's hand, over
    3,000 samples of each engine (independent seeds), against the exact mean of a uniform deal."""
    config = GAME.make_config({"num_players": 3})
    state = next(s for s in positions(config, seed=5, per_phase=4) if s.phase == R.MAIN
                 and not any(map(any, R.information_state(s, s.to_act).known[s.to_act])))
    seat = state.to_act
    other = (seat + 1) % 3
    info = R.information_state(state, seat)
    pool = _unseen_by_kind(K.information_row(info), seat, 3, False)
    size = sum(info.hands[other])
    expected = size * pool / pool.sum()
    samples = 3000
    batch = K.determinize_batch(info, seat, np.array(Chance(1)._random.getstate()[1], np.uint32), samples)
    compiled = batch.state[:, K.HANDS + other * R.NUM_KINDS:K.HANDS + (other + 1) * R.NUM_KINDS].mean(axis=0)
    dealer = SearchChance(2)
    python = np.mean([R.determinize(info, seat, dealer).hands[other] for _ in range(samples)], axis=0)
    # A kind's count in the hand has variance at most size * p; 5 standard errors of the mean.
    tolerance = 5 * np.sqrt(size * pool / pool.sum() / samples) + 1e-9
    assert (np.abs(compiled - expected) < tolerance).all(), (compiled, expected)
    assert (np.abs(python - expected) < tolerance).all(), (python, expected)


# --- the pieces ---------------------------------------------------------------------------------------------


def test_randbelow_is_random_randrange():
    T.TREE.compile()
    for seed in range(3):
        reference = random.Random(seed)
        words = np.array(reference.getstate()[1], dtype=np.uint32)
        for n in [1, 2, 3, 5, 7, 8, 100, 141, 2**31, 2**32 - 1] * 40:
            assert T.randbelow(words, n) == reference.randrange(n), n
        assert tuple(words.tolist()) == reference.getstate()[1]


def test_the_compiled_value_is_the_games_value():
    MK.SEARCH_FUNCTIONS.compile()
    rng = random.Random(4)
    values = np.zeros(R.MAX_PLAYERS)
    for players in (2, 4, 6):
        config = GAME.make_config({"num_players": players})
        for _ in range(6):
            state = R.new_game(config, Chance(rng.randrange(2**31)))
            while not R.is_terminal(state):
                row = K.information_row(state)
                MK.ministeel_value(row, values)
                assert values[:players].tolist() == _value(state)
                R.apply(state, rng.choice(R.legal_actions(state)))


# --- choosing the compiled search, and falling back -----------------------------------------------------------


def test_the_defaults_search_in_the_kernel_and_off_searches_in_python(capsys):
    config = GAME.make_config()
    load_bot("mcts:kernel=on", GAME, config, seed=1)
    capsys.readouterr()  # a first compilation in this checkout says so
    assert load_bot("mcts", GAME, config, seed=1)._compiled is not None
    assert load_bot("mcts:kernel=off", GAME, config, seed=1)._compiled is None
    assert capsys.readouterr().err == ""


def test_a_first_compilation_says_so_once(monkeypatch, capsys):
    monkeypatch.setattr(T, "_SAID", set())
    monkeypatch.setattr(T, "_cached", lambda dispatcher: False)
    for _ in range(2):
        load_bot("mcts", GAME, GAME.make_config(), seed=1)
    err = capsys.readouterr().err
    assert err == "mcts: compiling the MiniSteel search kernel (once: numba keeps it; up to a minute)\n"


def test_options_the_kernel_cannot_take_fall_back_saying_so_once(monkeypatch, capsys):
    monkeypatch.setattr(T, "_SAID", set())
    config = GAME.make_config()
    for _ in range(2):
        bot = load_bot("mcts:root=paired,rollout=random", GAME, config, seed=1)
        assert bot._compiled is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "root=paired" in err and "Python" in err
    with pytest.raises(ValueError, match="kernel=on: the MiniSteel search kernel does not take root=paired"):
        load_bot("mcts:root=paired,kernel=on", GAME, config, seed=1)
    with pytest.raises(ValueError, match="kernel=on: minefield has no compiled search; games with one: "
                                         "ministeel, wyvern"):
        load_bot("mcts:kernel=on", get_game("minefield"), get_game("minefield").make_config(), seed=1)
    with pytest.raises(ValueError, match="kernel='maybe' is not valid"):
        load_bot("mcts:kernel=maybe", GAME, config, seed=1)


def test_without_numba_the_search_runs_on_python_and_says_why(monkeypatch, capsys):
    monkeypatch.setattr(T, "_SAID", set())
    monkeypatch.setattr(MK, "SEARCH_KERNEL", dataclasses.replace(
        MK.SEARCH_KERNEL, unsupported=lambda config: "numba is not installed (pip install 'tavernzoo[kernel]')"))
    config = GAME.make_config()
    bot = load_bot("mcts:20", GAME, config, seed=1)
    assert bot._compiled is None
    assert "numba is not installed" in capsys.readouterr().err
    state = positions(config, seed=1, per_phase=1)[0]
    assert bot.search(R.information_state(state, state.to_act), state.to_act) in R.legal_actions(state)


def test_a_closed_search_stops_early_and_a_time_limit_stops_it():
    config = GAME.make_config()
    state = positions(config, seed=2, per_phase=1)[0]
    info, seat = R.information_state(state, state.to_act), state.to_act
    bot = load_bot("mcts:100000,kernel=on", GAME, config, seed=1)
    bot.close()
    assert bot.search(info, seat) in R.legal_actions(state)
    assert bot.last_search["simulations"] == T.FIRST_CHUNK
    timed = load_bot("mcts:sims=100000000,time=0.05,kernel=on", GAME, config, seed=1)
    timed.search(info, seat)
    assert 0 < timed.last_search["simulations"] < 100_000_000
    assert sum(timed.visit_distribution().values()) == pytest.approx(1.0)
