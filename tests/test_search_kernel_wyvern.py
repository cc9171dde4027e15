"""mcts on Wyvern's compiled kernel (agents/wyvern_kernel.py ``wyvern_simulations``) against the Python search,
the reference, as tests/test_search_kernel.py checks MiniSteel's.

From the same seed the compiled search must visit exactly what the Python search visits: the same move, the
same root visit counts in the same order, the bot's generator left in the same state, over every phase a
search meets, table sizes 2-6 and several option sets. The compiled determinization deals exactly what
``rules.determinize`` deals from the same dealer (``SearchChance``: its own Fisher-Yates for a short pool,
numpy's PCG64 permutation for a long one, both written out in envs/wyvern/kernel.py). Short form in CI;
``TAVERNZOO_FULL=1`` searches three positions per phase at 200 simulations.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents import wyvern_kernel as WK
from tavernzoo.agents.mcts import SearchChance
from tavernzoo.agents.wyvern import _value
from tavernzoo.envs import get_game
from tavernzoo.envs.core import Chance
from tavernzoo.envs.wyvern import kernel as K
from tavernzoo.envs.wyvern import rules as R

pytestmark = pytest.mark.skipif(K.numba is None, reason="numba is not installed")

GAME = get_game("wyvern")
FULL = bool(os.environ.get("TAVERNZOO_FULL"))
PHASES = (R.FREE, R.WINDOW, R.ASK, R.COUNTER, R.LOOT_ORDER, R.LOOT_PICK, R.DISCARD, R.REENTER)


def positions(config: R.Config, seed: int, per_phase: int = 1, games: int = 40) -> list[R.State]:
    """Up to ``per_phase`` states of random play in each phase with a choice, spread over the game (the first
    met after a random stretch of decisions)."""
    rng = random.Random(seed)
    found: dict[int, list[R.State]] = {phase: [] for phase in PHASES}
    for _ in range(games):
        state = R.new_game(config, Chance(rng.randrange(2**31)))
        skip = rng.randrange(3, 40)
        while not R.is_terminal(state):
            legal = R.legal_actions(state)
            if (skip <= 0 and len(legal) > 1 and state.phase in found
                    and len(found[state.phase]) < per_phase):
                found[state.phase].append(R.clone(state))
                skip = rng.randrange(3, 40)
            skip -= 1
            R.apply(state, rng.choice(legal))
        if all(len(states) == per_phase for states in found.values()):
            break
    return [state for states in found.values() for state in states]


def _search(bot, state: R.State, seat: int) -> tuple[int, list, tuple]:
    move = bot.search(R.information_state(state, seat), seat)
    return move, list(bot.last_search["visits"].items()), bot._random.getstate()


# --- the whole search, exactly ------------------------------------------------------------------------------

SIMS = 200 if FULL else 30
SPECS = [f"mcts:{SIMS}", f"mcts:{SIMS},rollout=random,prior=none,depth=0", f"mcts:{SIMS},others=random,depth=8,c=0.5",
         f"mcts:{SIMS},rollout=random,others=heuristic,prior=heuristic,depth=30"]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("options", [{"num_players": 4}, {"num_players": 2}, {"num_players": 6},
                                     {"num_players": 3, "summons": True, "level_reward": 0.5}])
def test_the_compiled_search_visits_what_the_python_search_visits(spec, options):
    config = GAME.make_config(options)
    compiled = load_bot(f"{spec},kernel=on", GAME, config, seed=11)
    python = load_bot(f"{spec},kernel=off", GAME, config, seed=11)
    assert compiled._compiled is not None and python._compiled is None
    states = positions(config, seed=options["num_players"], per_phase=3 if FULL else 1)
    assert len({state.phase for state in states}) >= 5
    # One bot of each searches every position in turn: the generators carry over, as in a game.
    for number, state in enumerate(states):
        seat = R.current_seat(state)
        got, expected = _search(compiled, state, seat), _search(python, state, seat)
        where = f"{spec} {options}, position {number} ({R.PHASE_NAMES[state.phase]})"
        assert got[0] == expected[0], f"{where}: move"
        assert got[1] == expected[1], f"{where}: root visits {got[1]} != {expected[1]}"
        assert got[2] == expected[2], f"{where}: the bot's generator"


def test_the_same_seed_gives_the_same_move_and_a_game_plays_alike():
    """Seeded from the deal, as at a table: whole games with the compiled and the Python bot in two seats."""
    config = GAME.make_config({"num_players": 4})
    records = []
    for kernel in ("on", "off"):
        bots = [load_bot(f"mcts:15,kernel={kernel}", GAME, config, seed=100 + seat) for seat in range(2)]
        heuristic = load_bot("heuristic", GAME, config, seed=0)
        state = R.new_game(config, Chance(7))
        moves = []
        while not R.is_terminal(state) and len(moves) < 150:
            seat = R.current_seat(state)
            if seat < 2 and len(R.legal_actions(state)) > 1:
                action = bots[seat].search(R.information_state(state, seat), seat)
            else:
                action = heuristic.act_state(state, seat, R.legal_actions(state))
            moves.append(action)
            R.apply(state, action)
        records.append(moves)
    assert records[0] == records[1]


# --- the determinization ------------------------------------------------------------------------------------


def test_the_compiled_determinization_deals_what_the_rules_deal():
    """Every phase, every seat's view, table sizes 2-6: sample after sample from one dealer, each state and
    the dealer's generator equal (the first long pool seeds the numpy generator, later ones continue it;
    short pools, a deck near its end, shuffle in the dealer's own stream)."""
    for players in range(2, 7):
        config = GAME.make_config({"num_players": players})
        for number, state in enumerate(positions(config, seed=40 + players)):
            for seat in range(players):
                info = R.information_state(state, seat)
                dealer = SearchChance(number * 10 + seat)
                words = K.new_dealer(number * 10 + seat)
                for sample in range(2):
                    expected = R.determinize(info, seat, dealer)
                    difference = K.first_difference(K.determinize_batch(info, seat, words, 1), 0, expected)
                    assert difference is None, (f"{players} players, position {number} "
                                                f"({R.PHASE_NAMES[state.phase]}), seat {seat}, sample {sample}: "
                                                f"{difference}")


def test_shuffle_deal_is_the_search_dealers():
    """Lists of every length around the switch to numpy, one dealer throughout: the same orders, the same
    generator words after."""
    assert K.NUMPY_SHUFFLE_FROM == SearchChance.NUMPY_SHUFFLE_FROM
    K.DEAL.compile()
    for seed in range(3):
        dealer = SearchChance(seed)
        words = K.new_dealer(seed)
        pool, mixer = np.empty(K.POOL_ROOM, dtype=np.int64), np.empty(K.MIXER_ROOM, dtype=np.int64)
        for size in [*range(0, 40), 80, 200, 479, 3, 120]:
            items = list(range(100, 100 + size))
            pool[:size] = items
            dealer.shuffle_deal(items)
            K.shuffle_deal(words, pool, size, mixer)
            assert pool[:size].tolist() == items, (seed, size)
        assert tuple(words[:K.MT_SIZE].tolist()) == dealer._random.getstate()[1]


# --- the pieces ---------------------------------------------------------------------------------------------


def test_the_compiled_value_is_the_games_value():
    WK.SEARCH_FUNCTIONS.compile()
    rng = random.Random(4)
    values = np.zeros(R.MAX_PLAYERS)
    for players in (2, 4, 6):
        config = GAME.make_config({"num_players": players, "win_level": rng.choice([10, 6])})
        for _ in range(2):
            state = R.new_game(config, Chance(rng.randrange(2**31)))
            while not R.is_terminal(state):
                row = K.information_row(state)
                WK.wyvern_value(row, values)
                assert values[:players].tolist() == _value(state)
                R.apply(state, rng.choice(R.legal_actions(state)))


def test_the_defaults_search_in_the_kernel_and_off_searches_in_python(capsys):
    config = GAME.make_config()
    load_bot("mcts:kernel=on", GAME, config, seed=1)
    capsys.readouterr()  # a first compilation in this checkout says so
    assert load_bot("mcts", GAME, config, seed=1)._compiled is not None
    assert load_bot("mcts:kernel=off", GAME, config, seed=1)._compiled is None
    assert capsys.readouterr().err == ""
