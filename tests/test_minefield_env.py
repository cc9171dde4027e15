"""Minefield through the Parallel adapter and its AEC form: conformance, observations, eliminations,
illegal moves, views, records; and the heuristic bot."""

from __future__ import annotations

import json
import os
import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

from tavernzoo.agents import load_bot
from tavernzoo.envs import IllegalActionError, minefield_v0
from tavernzoo.envs.minefield import encode, rules
from tavernzoo.envs.parallel import TavernParallelEnv
from tavernzoo.envs.records import replay

FULL = bool(os.environ.get("TAVERNZOO_FULL"))

VARIANTS = {
    "standard": {},
    "simple": {"variant": "simple"},
    "stacked": {"variant": "stacked"},
    "double_whammy": {"double_whammy": True},
}


@pytest.mark.parametrize("players", [2, 3, 8, 20])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_pettingzoo_parallel_and_aec_conformance(players, variant):
    config = {"num_players": players, **VARIANTS[variant]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on Dict spaces; seed test's illegal samples
        parallel_api_test(minefield_v0.parallel_env(**config), num_cycles=200)
        parallel_seed_test(lambda: minefield_v0.parallel_env(**config), num_cycles=200)
        api_test(minefield_v0.env(**config), num_cycles=200)
        seed_test(lambda: minefield_v0.env(**config), num_cycles=200)


def test_raw_aec_env_passes_the_api_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(minefield_v0.raw_env(num_players=5, attack_order="seat"), num_cycles=200)


def random_actions(env, observations, rng):
    return {agent: int(rng.choice(np.flatnonzero(observations[agent]["action_mask"]))) for agent in env.agents}


def test_masks_are_the_living_opponents_and_observations_are_egocentric():
    env = minefield_v0.parallel_env(num_players=5)
    observations, infos = env.reset(seed=12)
    lay = encode.layout(5)
    for seat, agent in enumerate(env.possible_agents):
        mask = observations[agent]["action_mask"]
        assert mask.dtype == np.int8 and list(np.flatnonzero(mask)) == [s for s in range(5) if s != seat]
        vector = observations[agent]["observation"]
        assert vector.dtype == np.float32 and vector.shape == (lay.size,)
        assert int(np.argmax(vector[lay.seat])) == seat and vector[lay.seat].sum() == 1
        assert vector[lay.mines].sum() == 0 and vector[lay.mines_known] == 0  # nothing rolled yet
    rng = random.Random(0)
    actions = random_actions(env, observations, rng)
    observations, *_ = env.step(actions)
    state = env.game_state
    for agent in observations:
        seat = env.possible_agents.index(agent)
        vector = observations[agent]["observation"]
        assert ((vector >= 0) & (vector <= 1)).all()
        targets = vector[lay.targets].reshape(5, 5)
        for attacker_agent, target in actions.items():
            attacker = env.possible_agents.index(attacker_agent)
            assert targets[(attacker - seat) % 5, (target - seat) % 5] == 1
        assert targets.sum() == len(actions)
        for rel in range(5):
            assert vector[lay.alive.start + rel] == state.alive[(rel + seat) % 5]
        assert list(np.flatnonzero(vector[lay.mines]) + 1) == rules.mines_as_numbers(state.mines)
        outcome = vector[lay.outcome].reshape(5, encode.NUM_OUTCOMES)
        for attacker, _, result, _ in state.last_battles:
            assert outcome[(attacker - seat) % 5, result] == 1


def test_eliminated_agents_terminate_in_their_step_with_their_final_return():
    env = minefield_v0.parallel_env(num_players=8)
    rng = random.Random(3)
    for seed in range(20):
        observations, _ = env.reset(seed=seed)
        paid = {}
        while env.agents:
            before = list(env.agents)
            observations, rewards, terminations, truncations, infos = env.step(random_actions(env, observations, rng))
            assert set(observations) == set(rewards) == set(terminations) == set(infos) == set(before)
            state = env.game_state
            for agent in before:
                seat = env.possible_agents.index(agent)
                if state.alive[seat] and not state.over:
                    assert agent in env.agents and rewards[agent] == 0 and not terminations[agent]
                    assert observations[agent]["action_mask"].sum() == state.num_alive - 1
                else:
                    assert terminations[agent] and agent not in env.agents
                    assert observations[agent]["action_mask"].sum() == 0
                    paid[agent] = rewards[agent]
                    assert rewards[agent] == rules.returns(state)[seat]
                    assert infos[agent]["place"] == (1 if seat == state.winner else
                                                     8 - state.out_order.index(seat))
        assert set(paid) == set(env.possible_agents) and sum(paid.values()) == pytest.approx(0)
        winner = env.possible_agents[state.winner]
        assert paid[winner] == 1.0
        assert infos[winner]["finishing_order"][-1] == winner
        assert infos[winner]["finishing_order"] == [env.possible_agents[s] for s in state.out_order] + [winner]
        assert infos[winner]["end_reason"] == "last_standing"


def test_a_cut_off_game_truncates_the_survivors():
    env = minefield_v0.parallel_env(num_players=6, roll_battle="mines_only", max_rounds=1)
    observations, _ = env.reset(seed=1)
    survivors = set(env.agents)
    _, rewards, terminations, truncations, infos = env.step(random_actions(env, observations, random.Random(1)))
    state = env.game_state
    assert state.over and state.truncated and env.agents == []
    for agent in survivors:
        seat = env.possible_agents.index(agent)
        if state.alive[seat]:
            assert truncations[agent] and not terminations[agent]
        else:
            assert terminations[agent] and not truncations[agent]
        assert rewards[agent] == pytest.approx(rules.returns(state)[seat])


def test_illegal_moves_raise_in_raw_forms_and_lose_in_wrapped_forms():
    raw = TavernParallelEnv(minefield_v0.GAME, num_players=3)
    raw.reset(seed=0)
    with pytest.raises(IllegalActionError, match="target:0"):
        raw.step({"player_0": 0, "player_1": 0, "player_2": 0})
    with pytest.raises(IllegalActionError, match="missing seats \\[2\\]"):
        raw.step({"player_0": 1, "player_1": 0})
    assert raw.game_state.round == 0 and raw.agents == ["player_0", "player_1", "player_2"]
    with pytest.raises(ValueError, match="not in play"):
        raw.step({"player_0": 1, "player_1": 0, "player_2": 0, "player_9": 0})

    wrapped = minefield_v0.parallel_env(num_players=3)
    wrapped.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, rewards, terminations, _, infos = wrapped.step({"player_0": 0, "player_1": np.int64(0), "player_2": 0})
    assert rewards == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0}
    assert all(terminations.values()) and wrapped.agents == []
    assert infos["player_1"]["end_reason"] == "illegal_action"
    assert infos["player_1"]["illegal_action"] == {"player_0": 0}

    aec = minefield_v0.raw_env(num_players=3)
    aec.reset(seed=0)
    aec.step(0)  # player_0 targets itself: seen when the round is played
    aec.step(0)
    with pytest.raises(IllegalActionError, match="target:0"):
        aec.step(0)

    env = minefield_v0.env(num_players=3)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(0)
        env.step(0)
        env.step(0)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        assert termination
        env.step(None)
    assert totals == {"player_0": -1.0, "player_1": 0.0, "player_2": 0.0}


def test_view_is_json_and_names_the_legal_actions_and_render_shows_the_round():
    env = minefield_v0.parallel_env(render_mode="ansi", num_players=4)
    observations, _ = env.reset(seed=5)
    view = env.view("player_2")
    assert json.loads(json.dumps(view)) == view
    assert view["legal_actions"] == ["target:0", "target:1", "target:3"] and view["mines"] == []
    env.step(random_actions(env, observations, random.Random(5)))
    view = env.view("player_2")
    assert json.loads(json.dumps(view)) == view
    assert len(view["last_round"]["attacks"]) == 4 and len(view["mines"]) == 10
    assert view["last_round"]["mine_rolls"][0]["numbers"] == view["mines"]
    text = env.render()
    assert "round 1" in text and "mines:" in text and text.count("attacks player_") == 4
    out = env.game_state.out_order[0]
    assert env.view(f"player_{out}")["legal_actions"] == []
    with pytest.raises(ValueError, match="render_mode"):
        minefield_v0.parallel_env(render_mode="rgb_array")


def test_records_replay_from_the_parallel_and_the_aec_forms_even_without_a_seed():
    env = minefield_v0.parallel_env(num_players=6, variant="stacked", double_whammy=True)
    observations, _ = env.reset()
    assert env.seed_used is not None
    rng = random.Random(2)
    while env.agents:
        observations, *_ = env.step(random_actions(env, observations, rng))
    record = env.record(seats=[f"bot{i}" for i in range(6)])
    assert json.loads(json.dumps(record)) == record
    _, state = replay(record)
    assert state.out_order == env.game_state.out_order and record["returns"] == list(rules.returns(state))
    assert all(set(step) == {"joint"} for step in record["actions"])

    aec = minefield_v0.env(num_players=4)
    aec.reset(seed=9)
    for _agent in aec.agent_iter():
        observation, _, termination, truncation, _ = aec.last()
        if termination or truncation:
            aec.step(None)
            continue
        aec.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    record = aec.unwrapped.record()
    _, state = replay(record)
    assert record["returns"] == list(rules.returns(state)) and state.over


def test_the_match_loop_plays_minefield():
    from tavernzoo.eval.match import play_match

    result = play_match("minefield", ["heuristic", "random", "random", "random"], games=16, seed=1,
                        config={"num_players": 4})
    assert result.games == 16 and sum(row.wins + row.draws for row in result.rows) >= 16


# --- the heuristic -----------------------------------------------------------------------------------


def test_heuristic_plays_only_legal_moves_in_every_setting():
    for config in ({"num_players": 2}, {"num_players": 20, "attack_order": "seat"},
                   {"num_players": 7, "variant": "stacked", "double_whammy": True}):
        env = minefield_v0.parallel_env(**config)
        bots = {agent: load_bot("heuristic", "minefield", config, seed=i)
                for i, agent in enumerate(env.possible_agents)}
        for seed in range(3):
            observations, _ = env.reset(seed=seed)
            while env.agents:
                actions = {agent: bots[agent].act(observations[agent]) for agent in env.agents}
                for agent, action in actions.items():
                    assert observations[agent]["action_mask"][action] == 1
                observations, *_ = env.step(actions)


def test_heuristic_attacks_whoever_attacked_it_when_others_repeat_their_attacks():
    # Last round (mines only) player_3 attacked player_0 and both stayed in; the heuristic (player_0)
    # expects player_3 to attack it again, so attacking player_3 costs it no extra battle.
    config = {"num_players": 6, "attack_order": "seat", "roll_battle": "mines_only"}
    env = minefield_v0.parallel_env(**config)
    env.reset(seed=0)
    state = env.game_state
    state.last_battles = ((3, 0, rules.STANDOFF, ((5, 30),)),)
    state.round = 1
    bot = load_bot("heuristic", "minefield", config, seed=0)
    observation = env._observe(0)
    scores = bot.target_scores(observation["observation"])
    assert max(scores, key=scores.get) == 3


def test_heuristic_under_seat_order_prefers_targets_whose_own_attack_comes_first():
    bot = load_bot("heuristic", "minefield", {"num_players": 8, "attack_order": "seat"}, seed=0)
    env = minefield_v0.parallel_env(num_players=8, attack_order="seat")
    observations, _ = env.reset(seed=0)
    scores = bot.target_scores(observations["player_5"]["observation"])
    assert max(scores, key=scores.get) == 0
    assert all(scores[low] > scores[high] for low in range(5) for high in (6, 7))


@pytest.mark.slow
def test_heuristic_against_random_at_8_player_tables():
    from tavernzoo.eval.match import play_match

    games = 8000 if FULL else 240
    for order, floor in (("seat", 1 / 8), ("random", None)):
        result = play_match("minefield", ["heuristic"] + ["random"] * 7, games=games, seed=0,
                            config={"attack_order": order})
        heuristic = result.rows[0]
        assert heuristic.games == games
        low, high = heuristic.score_ci
        if FULL and floor is not None:
            assert low > floor, (order, heuristic.score, heuristic.score_ci)
        if FULL and floor is None:  # by symmetry no policy beats 1/N here
            assert low < 1 / 8 < high, (order, heuristic.score, heuristic.score_ci)


def test_heuristic_learns_whether_opponents_repeat_their_targets():
    def round_vector(targets: dict[int, int], round_number: int) -> dict:
        env = minefield_v0.parallel_env(num_players=5)
        env.reset(seed=0)
        state = env.game_state
        state.last_battles = tuple((a, t, rules.STANDOFF, ((5, 30),)) for a, t in targets.items())
        state.round = round_number
        return env._observe(0)

    stubborn = load_bot("heuristic", "minefield", {"num_players": 5}, seed=0)
    fickle = load_bot("heuristic", "minefield", {"num_players": 5}, seed=0)
    for round_number in range(1, 6):
        stubborn.act(round_vector({0: 1, 1: 2, 2: 3, 3: 4, 4: 0}, round_number))
        shifted = {a: (a + 1 + round_number % 3) % 5 for a in range(5)}
        fickle.act(round_vector({a: t if t != a else (a + 1) % 5 for a, t in shifted.items()}, round_number))
    assert stubborn.persistence > 0.8
    assert fickle.persistence == 0.0
    stubborn.reset()
    assert stubborn.persistence == 0.5


def test_each_env_encodes_through_its_own_observer_and_the_state_holds_no_cache():
    import dataclasses

    assert not any("cache" in field.name for field in dataclasses.fields(rules.State))
    first, second = minefield_v0.parallel_env(num_players=5), minefield_v0.parallel_env(num_players=5)
    first.reset(seed=3)
    second.reset(seed=4)
    assert isinstance(first._observer, encode.Observer) and first._observer is not second._observer
    for _ in range(3):
        state = first.game_state
        for seat in range(5):  # the observer's vector (built once this round) is the uncached one
            size = encode.observation_size(state.config)
            cached, plain = np.empty(size, np.float32), np.empty(size, np.float32)
            first._observer.encode(state, seat, cached)
            encode.encode(state, seat, plain)
            assert np.array_equal(cached, plain)
        actions = {agent: int(np.flatnonzero(first._observe(first.possible_agents.index(agent))["action_mask"])[0])
                   for agent in first.agents}
        first.step(actions)
        if not first.agents:
            break
