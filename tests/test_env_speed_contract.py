"""What the speed work (issue 15) must not change: every observation, mask, reward and record of seeded
random play, pinned as digests recorded before the encoders and engines were made faster; and what
``env()`` hands the user is never mutated by the env afterwards.

The digests were taken on the code before issue 15 (the zoo's ONNX bots were trained on those
observations). A digest that changes means an observation, a legal mask, a reward or a record changed:
that is a new env version, not a speed-up.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import random

import numpy as np
import pytest

from tavernzoo.envs import get_game

# (game, options, games played, digest). Several player counts per game: the encoders' blocks scale
# with the table.
GOLDEN = [
    ("tiny_minotaur", {}, 200, "8e0ad4161d10c3d2"),
    ("tiny_minotaur", {"bosses": ("minotaur_gore", "tavern_brawl"), "classes": ("magic", "random")}, 20,
     "a016577e2ff2f2e8"),
    ("ministeel_v1", {"num_players": 2}, 40, "2a9d5afe0fc754b9"),
    ("ministeel_v1", {"num_players": 4}, 25, "693c929541eeb651"),
    ("ministeel_v1", {"num_players": 6}, 15, "44f42e30333930c4"),
    # ministeel_v2 (Card Draw windows, issue 28): taken when v2 was made; v1's rows above are unchanged.
    ("ministeel", {"num_players": 2}, 40, "0fddb025b1438130"),
    ("ministeel", {"num_players": 4}, 25, "269f39b71f7bf60b"),
    ("ministeel", {"num_players": 6}, 15, "a459ba0d115a556c"),
    ("wyvern", {"num_players": 3}, 3, "b03381d6739e08ae"),
    ("wyvern", {"num_players": 4}, 3, "db43d4c28b014e6d"),
    ("wyvern", {"num_players": 6}, 2, "3bb7bb9991503600"),
    ("minefield", {"num_players": 3}, 100, "7b361aca2f8afe9f"),
    ("minefield", {"num_players": 8}, 60, "a9892a834049cf0e"),
]


def module_of(name: str):
    return importlib.import_module(f"tavernzoo.envs.{get_game(name).env_name}")


def aec_digest(name: str, options: dict, games: int) -> str:
    """Seeded random play on ``raw_env``: every seat's observation and mask after every move, the rewards
    and the records, hashed."""
    digest = hashlib.sha256()
    env = module_of(name).raw_env(**options)
    for seed in range(games):
        picker = random.Random(seed)
        env.reset(seed=seed)
        for agent in env.agent_iter():
            for other in env.agents:
                observed = env.observe(other)
                digest.update(observed["observation"].tobytes())
                digest.update(observed["action_mask"].tobytes())
            _, reward, terminated, truncated, info = env.last(observe=False)
            digest.update(repr((agent, reward, terminated, truncated, sorted(info.items()))).encode())
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            env.step(int(legal[picker.randrange(legal.size)]))
        digest.update(json.dumps(env.record(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


def parallel_digest(name: str, options: dict, games: int) -> str:
    digest = hashlib.sha256()
    env = module_of(name).parallel_env(**options)
    for seed in range(games):
        picker = random.Random(seed)
        observations, infos = env.reset(seed=seed)
        while True:
            for agent in sorted(observations):
                digest.update(observations[agent]["observation"].tobytes())
                digest.update(observations[agent]["action_mask"].tobytes())
            if not env.agents:
                break
            actions = {}
            for agent in env.agents:
                legal = np.flatnonzero(observations[agent]["action_mask"])
                actions[agent] = int(legal[picker.randrange(legal.size)])
            observations, rewards, terminations, truncations, infos = env.step(actions)
            digest.update(repr(sorted((agent, rewards[agent], terminations[agent], truncations[agent],
                                       sorted(infos[agent].items())) for agent in rewards)).encode())
        digest.update(json.dumps(env.record(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize(("name", "options", "games", "expected"), GOLDEN,
                         ids=[f"{g[0]}-{'-'.join(map(str, g[1].values())) or 'default'}" for g in GOLDEN])
def test_seeded_play_is_bit_identical_to_the_recorded_digests(name, options, games, expected):
    play = parallel_digest if get_game(name).simultaneous else aec_digest
    assert play(name, options, games) == expected


@pytest.mark.parametrize("name", ["tiny_minotaur", "ministeel", "wyvern", "minefield"])
@pytest.mark.parametrize("factory", ["env", "raw_env"])
def test_an_observation_kept_from_an_earlier_step_is_never_changed_later(name, factory):
    env = getattr(module_of(name), factory)()
    picker = random.Random(3)
    kept, copies = [], []
    for seed in range(3):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            for other in env.agents:  # every seat's observation, the acting one's twice
                seen = env.observe(other)
                kept.append(seen)
                copies.append(copy.deepcopy(seen))
            kept.append(observation)
            copies.append(copy.deepcopy(observation))
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[picker.randrange(legal.size)]))
    assert len(kept) > 50
    for seen, original in zip(kept, copies, strict=True):
        assert np.array_equal(seen["observation"], original["observation"])
        assert np.array_equal(seen["action_mask"], original["action_mask"])
