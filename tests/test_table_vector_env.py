"""The table vector envs (envs/ministeel/vector.py's and envs/wyvern/vector.py's ``TableVectorEnv``, the Python
side envs/batched.py's) against the Python rules, for both games at four seats.

Seat 0 is the learner's (controller PYTHON), answered with the lowest legal action of its mask; the other seats
are the compiled heuristic (FIRST_BOT). The same deals are played on the rules with the Python heuristic
(``HeuristicBot.act_state``, the bot the compiled one follows) in those seats: every observation and mask at
the learner's decisions must be equal, and the returns when its episode ends (the cut-off options make some
games end truncated). Positions taken from those Python games after ``k`` moves (``rules.clone``: their
Chance copied) are loaded with ``load`` and played on; the returns must be those of playing on the clones on
the rules. Bad input to ``load`` is one ValueError line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pytest

from tavernzoo.envs.core import Chance
from tavernzoo.envs.ministeel import kernel as ministeel_kernel

pytestmark = pytest.mark.skipif(ministeel_kernel.numba is None, reason="numba is not installed")

GAMES, SEED, PLAYERS, LEARNER = 20, 400, 4, 0


@dataclass
class Game:
    name: str
    rules: ModuleType
    kernel: ModuleType
    vector: ModuleType
    encode: ModuleType
    heuristic: object  # the compiled bot
    bots: list  # the Python bots, one per seat
    options: dict
    config: object


@dataclass
class PythonGame:
    """One deal played on the rules: the learner's views at its decisions, the returns, where it ended, and a
    copy of the position after ``snap_at`` moves (or the first position, when the learner was out before)."""

    views: list = field(default_factory=list)
    returns: tuple = ()
    truncated: bool = False
    final: tuple = ()
    snapshot: object = None


def make_game(name: str) -> Game:
    if name == "ministeel":
        from tavernzoo.agents.ministeel import HeuristicBot
        from tavernzoo.agents.ministeel_kernel import HEURISTIC
        from tavernzoo.envs.ministeel import encode, rules, vector

        options = {"num_players": PLAYERS, "max_decisions": 100}
        config = rules.Config(**options)
        return Game(name, rules, ministeel_kernel, vector, encode, HEURISTIC,
                    [HeuristicBot(config, seat) for seat in range(PLAYERS)], options, config)
    from tavernzoo.agents.wyvern import HeuristicBot
    from tavernzoo.agents.wyvern_kernel import HEURISTIC
    from tavernzoo.envs.wyvern import encode, kernel, rules, vector

    options = {"num_players": PLAYERS, "max_steps": 300}
    config = rules.Config(**options)
    return Game(name, rules, kernel, vector, encode, HEURISTIC, [HeuristicBot(config) for _ in range(PLAYERS)],
                options, config)


def observe(game: Game, state, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The PettingZoo env's observation and mask of ``seat``."""
    observation = np.zeros(game.encode.observation_size(game.config), dtype=np.float32)
    game.encode.encode(state, seat, observation)
    mask = np.zeros(len(game.encode.action_names(game.config)), dtype=np.int8)
    if not game.rules.is_terminal(state) and game.rules.current_seat(state) == seat:
        mask[game.rules.legal_actions(state)] = 1
    return observation, mask


def learner_out(game: Game, state) -> bool:
    """The learner's episode is over: the game ended, or (MiniSteel) the learner was knocked out."""
    return game.rules.is_terminal(state) or (game.name == "ministeel" and not state.alive[LEARNER])


def play_on(game: Game, state, snap_at: int = -1) -> PythonGame:
    """Play ``state`` on the rules to the end of the learner's episode: the learner the lowest legal action,
    the other seats the Python heuristic."""
    rules = game.rules
    played = PythonGame(snapshot=rules.clone(state))
    moves = 0
    while not learner_out(game, state):
        seat = rules.current_seat(state)
        legal = rules.legal_actions(state)
        if seat == LEARNER:
            played.views.append(observe(game, state, LEARNER))
            action = min(legal)
        else:
            action = game.bots[seat].act_state(state, seat, legal)
        rules.apply(state, action)
        moves += 1
        if moves == snap_at:
            played.snapshot = rules.clone(state)
    played.returns = tuple(rules.returns(state))
    played.truncated = rules.is_terminal(state) and rules.is_truncated(state) and state.alive[LEARNER] \
        if game.name == "ministeel" else rules.is_truncated(state)
    played.final = observe(game, state, LEARNER)
    return played


def play_table(game: Game, env) -> tuple[list[list], np.ndarray, np.ndarray, list]:
    """Play every game of ``env`` (dealt or loaded) to the end of the learner's episode, answering the learner
    with the lowest legal action of its mask: its views per game, the ends bits and returns at the end, and
    the final views."""
    vector = game.vector
    views: list[list] = [[] for _ in range(GAMES)]
    finals: list = [None] * GAMES
    done_ends = np.zeros(GAMES, dtype=np.int64)
    values = np.zeros((GAMES, PLAYERS))
    done = np.zeros(GAMES, dtype=bool)
    ends = env.play(np.full(GAMES, vector.NO_ACTION, dtype=np.int64))
    for _ in range(10_000):
        newly = ~done & ((ends & vector.ENDED) != 0)
        for g in np.flatnonzero(newly).tolist():
            done_ends[g] = ends[g]
            values[g] = env.values[g, :PLAYERS]
            finals[g] = (env.observations[g].copy(), env.masks[g].copy())
        done |= newly
        if done.all():
            return views, done_ends, values, finals
        deciding = np.flatnonzero(~done)
        assert (env.to_act()[deciding] == LEARNER).all(), "only the learner's seat is played from Python"
        for g in deciding.tolist():
            views[g].append((env.observations[g].copy(), env.masks[g].copy()))
        actions = np.full(GAMES, vector.SKIP, dtype=np.int64)
        actions[deciding] = [int(np.flatnonzero(env.masks[g])[0]) for g in deciding.tolist()]
        ends = env.play(actions)
    raise AssertionError("the table's games did not end in 10000 calls")


def assert_same_episode(name: str, g: int, played: PythonGame, views: list, ends: int, values: np.ndarray,
                        final: tuple, vector: ModuleType, check_views: bool = True) -> None:
    where = f"{name} game {g}"
    if check_views:
        assert len(views) == len(played.views), f"{where}: the learner's number of decisions"
        for k, ((observation, mask), (expected_observation, expected_mask)) in enumerate(
                zip(views, played.views, strict=True)):
            assert np.array_equal(mask, expected_mask), f"{where}, learner decision {k}: mask"
            assert np.array_equal(observation, expected_observation), f"{where}, learner decision {k}: observation"
        assert np.array_equal(final[0], played.final[0]), f"{where}: the learner's final observation"
        assert np.array_equal(final[1], played.final[1]), f"{where}: the learner's final mask"
    assert ends & vector.ENDED and not ends & (vector.ILLEGAL | vector.OPPONENT_ILLEGAL), f"{where}: ends {ends}"
    truncated, returns = played.truncated, played.returns
    assert bool(ends & vector.TRUNCATED) == truncated, f"{where}: truncated"
    assert np.allclose(values, returns, rtol=0, atol=1e-12), f"{where}: returns {values} != {returns}"


@pytest.fixture(scope="module", params=["ministeel", "wyvern"])
def dealt(request):
    """Each game's table: ``GAMES`` deals played on the env and on the rules."""
    game = make_game(request.param)
    vector = game.vector
    env = vector.TableVectorEnv(GAMES, bots=(game.heuristic,), **game.options)
    controllers = [vector.PYTHON] + [vector.FIRST_BOT] * (PLAYERS - 1)
    seeds = SEED + np.arange(GAMES)
    env.deal(np.arange(GAMES), seeds, np.full(GAMES, LEARNER), np.tile(controllers, (GAMES, 1)))
    table = play_table(game, env)
    snap_at = [3 + (17 * g) % 90 for g in range(GAMES)]  # after k moves: some at a bot's turn, some the learner's
    played = [play_on(game, game.rules.new_game(game.config, Chance(int(seed))), snap_at[g])
              for g, seed in enumerate(seeds.tolist())]
    return game, env, controllers, table, played


def test_dealt_games_are_the_rules_games(dealt):
    game, env, _, (views, ends, values, finals), played = dealt
    for g in range(GAMES):
        assert_same_episode(game.name, g, played[g], views[g], int(ends[g]), values[g], finals[g], game.vector)
    assert sum(len(p.views) for p in played) > 5 * GAMES, "the learner should decide many times"
    assert any(p.truncated for p in played) and not all(p.truncated for p in played), \
        "the options should cut some games off and let others end"
    assert repr(env).startswith(f"TableVectorEnv({game.vector.GAME.env_name}, num_envs={GAMES}")


def test_loaded_positions_play_on_as_the_rules(dealt):
    game, env, controllers, _, played = dealt
    snapshots = [p.snapshot for p in played]
    to_act = [game.rules.current_seat(state) for state in snapshots]
    assert LEARNER in to_act and any(seat != LEARNER for seat in to_act), "positions at both kinds of seat"
    batch = game.kernel.from_states([game.rules.clone(state) for state in snapshots])
    env.load(batch, np.full(GAMES, LEARNER), np.tile(controllers, (GAMES, 1)))
    views, ends, values, finals = play_table(game, env)
    for g, snapshot in enumerate(snapshots):
        expected = play_on(game, game.rules.clone(snapshot))
        assert expected.returns == played[g].returns, "a clone plays on as the game it was taken from"
        assert_same_episode(game.name, g, expected, views[g], int(ends[g]), values[g], finals[g], game.vector)


def test_bad_loads_are_one_line_errors(dealt):
    game, env, controllers, _, played = dealt
    vector, rules = game.vector, game.rules
    states = [rules.clone(p.snapshot) for p in played]
    seats = np.tile(controllers, (GAMES, 1))
    before = (env.learners.copy(), env.controllers.copy())

    def refused(batch, learners, kinds, match):
        with pytest.raises(ValueError, match=match) as error:
            env.load(batch, learners, kinds)
        assert "\n" not in str(error.value)
        assert np.array_equal(env.learners, before[0]) and np.array_equal(env.controllers, before[1])

    refused(game.kernel.from_states(states[:GAMES - 1]), np.zeros(GAMES), seats, "batch of 20 games")
    bot_learner = seats.copy()
    bot_learner[3, LEARNER] = vector.FIRST_BOT
    refused(game.kernel.from_states(states), np.zeros(GAMES), bot_learner, "learner's seat must be played from Python")
    refused(game.kernel.from_states(states), np.full(GAMES, PLAYERS), seats, "seat of the table")
    refused(game.kernel.from_states(states), np.zeros(GAMES), seats[:, :2], "controllers")
    other = rules.new_game(type(game.config)(num_players=3), Chance(1))
    refused(game.kernel.from_states([other] * GAMES), np.zeros(GAMES), seats, "other options")
    if game.name == "ministeel":  # the observations read what each seat knows
        refused(game.kernel.from_states(states, track_known=False), np.zeros(GAMES), seats, "track_known")
