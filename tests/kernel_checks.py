"""Checks every game's kernel tests share (tests/test_kernel_<game>.py): the kernel's rollout policy stream
in Python, a random game replayed on the rules, the one-line errors for bad input, what the kernel refuses
and how ``random_rollouts`` then plays on the Python rules. Imported as ``from kernel_checks import ...``
(pytest puts tests/ on the path, as for tests/llm_fake.py)."""

from __future__ import annotations

import hashlib
import os
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tavernzoo.envs.core import Chance, IllegalActionError

# The long forms (``TAVERNZOO_FULL=1``) take hours: they run in chunks of seeds, and with
# ``TAVERNZOO_REPLAY_LEDGER=FILE`` each chunk that passes is written down there, so a run cut short resumes
# where it stopped (``pytest -n 2`` runs chunks on both cores). An entry counts only for the sources it
# passed on: the key holds a hash of the game's package, the agents' compiled bots and these tests.
LEDGER = os.environ.get("TAVERNZOO_REPLAY_LEDGER")
ROOT = Path(__file__).resolve().parent.parent


def seed_chunks(total: int, size: int) -> list[range]:
    """``range(total)`` in consecutive chunks of at most ``size`` seeds (one chunk in the short form)."""
    return [range(start, min(start + size, total)) for start in range(0, total, size)]


def _sources_hash(game: str) -> str:
    digest = hashlib.sha256()
    files = sorted((ROOT / "envs" / game).glob("*.py")) + sorted((ROOT / "agents").glob(f"{game}*.py"))
    files += [ROOT / "envs" / "kernel_batch.py", ROOT / "envs" / "compiled.py", ROOT / "envs" / "core.py",
              Path(__file__), ROOT / "tests" / f"test_kernel_{game}.py"]
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def replay_chunk(game: str, name: str, seeds: range, play: Callable[[int], object]) -> None:
    """Play ``play(seed)`` for every seed of the chunk; with a ledger, skip a chunk it holds as passed on these
    sources, and write this one down once every game of it has passed."""
    key = f"{game} {_sources_hash(game)} {name} {seeds.start}-{seeds.stop}"
    if LEDGER and os.path.exists(LEDGER) and key in Path(LEDGER).read_text().splitlines():
        pytest.skip(f"passed on these sources before ({LEDGER})")
    for seed in seeds:
        play(seed)
    if LEDGER:
        with open(LEDGER, "a") as ledger:  # one short line an append: whole even with workers side by side
            ledger.write(key + "\n")


def splitmix_floats(seed: int) -> Iterator[float]:
    """The kernel's rollout policy stream (``compiled.policy_random``), in Python."""
    mask = 2**64 - 1
    while True:
        seed = (seed + 0x9E3779B97F4A7C15) & mask
        z = seed
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        yield (z >> 11) * (1.0 / 9007199254740992.0)


def play_randomly(rules: Any) -> Callable[[Any, Iterator[float]], int]:
    """A single-actor game played to its end with ``legal[int(u * len(legal))]`` for each float ``u``; the
    replay gives the decisions taken (what the kernel's rollouts count)."""

    def replay(state: Any, floats: Iterator[float]) -> int:
        taken = 0
        while not rules.is_terminal(state):
            legal = rules.legal_actions(state)
            rules.apply(state, legal[int(next(floats) * len(legal))])
            taken += 1
        return taken

    return replay


def play_joint_randomly(rules: Any) -> Callable[[Any, Iterator[float]], int]:
    """:func:`play_randomly` for a simultaneous game: each acting seat, ascending, picks its target from the
    floats; the replay gives the agent-steps taken (one seat's choice in one round)."""

    def replay(state: Any, floats: Iterator[float]) -> int:
        taken = 0
        while not rules.is_terminal(state):
            joint = {}
            for seat in rules.acting_seats(state):
                legal = rules.legal_actions(state, seat)
                joint[seat] = legal[int(next(floats) * len(legal))]
            rules.apply_joint(state, joint)
            taken += len(joint)
        return taken

    return replay


def check_returns(values: np.ndarray, steps: np.ndarray, taken: int, state: Any, rules: Any) -> None:
    """A rollout's first game took ``taken`` steps and ended with the rules' returns of ``state``."""
    expected = tuple(rules.returns(state))
    assert (int(steps[0]), tuple(values[0, :len(expected)])) == (taken, expected)


def check_bad_input(kernel: Any, rules: Any, config: Any) -> None:
    """A single-actor kernel's errors: an illegal action names the game and the action and plays nothing; bad
    actions, rng_seeds, max_steps and seeds are each one ValueError line."""
    batch = kernel.new_games(config, [0, 1])
    before = batch.state.copy()
    legal = kernel.legal_list(batch, 0)
    illegal = next(a for a in range(rules.NUM_ACTIONS) if a not in kernel.legal_list(batch, 1))
    with pytest.raises(IllegalActionError, match=re.escape(rules.ACTION_NAMES[illegal]) + ".*game 1 of the batch"):
        kernel.step_batch(batch, [legal[0], illegal])
    assert np.array_equal(batch.state, before)
    with pytest.raises(ValueError, match="actions must be 2 integers"):
        kernel.step_batch(batch, [0.5, 1.0])
    check_bad_seeds(kernel, rules, batch)


def check_bad_seeds(kernel: Any, rules: Any, batch: Any) -> None:
    """Bad rng_seeds and max_steps for a batch of two games, and bad seeds for a deal, each one ValueError."""
    for seeds in ([1], [1, 0.5], [1, -1], [1, 2**64]):
        with pytest.raises(ValueError, match="rng_seeds must be 2 integers"):
            kernel.rollout_random(batch, seeds)
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        kernel.rollout_random(batch, [1, 2], -1)
    for seeds in ([0.5], [-1], [2**63], ["7"]):
        with pytest.raises(ValueError, match="seeds must be integers from 0 to 2"):
            kernel.new_games(rules.Config(), seeds)


def check_what_it_cannot_take(kernel: Any, rules: Any, config: Any, game: str, capsys: Any, scripted: Any,
                              limit: dict, limited_steps: int,
                              replay: Callable[[Any, Iterator[float]], int]) -> Any:
    """The kernel refuses a scripted Chance (``scripted``: a State dealt by one) and plays a Chance of another
    class on the Python rules, saying so in one line (``limit``, a rollout's step limit, stops it after
    ``limited_steps``); a Chance it takes rolls out in the kernel, silently, as ``replay`` plays it with the
    kernel's policy stream. Gives the replayed State and the steps it took."""
    assert "scripted" in kernel.unsupported(config, scripted.chance)
    with pytest.raises(ValueError, match="cannot take this game: a scripted Chance"):
        kernel.from_states([scripted])

    class OtherChance(Chance):
        """A dealer of another kind (as a search's): the kernel would not draw what it draws."""

    other = rules.new_game(config, OtherChance(4))
    _, steps = kernel.random_rollouts([other], [0], **limit)
    assert capsys.readouterr().err == (f"{game} kernel unavailable, rolling out on the Python rules: the kernel "
                                       "draws from a Chance's own generator, not from a OtherChance\n")
    assert steps[0] == limited_steps
    values, steps = kernel.random_rollouts([rules.new_game(config, Chance(4))], [9])
    assert capsys.readouterr().err == ""
    state = rules.new_game(config, Chance(4))
    taken = replay(state, splitmix_floats(9))
    check_returns(values, steps, taken, state, rules)
    return state, taken


def check_without_numba(kernel: Any, rules: Any, config: Any, game: str, capsys: Any,
                        replay: Callable[[Any, Iterator[float]], int]) -> Any:
    """With the kernel module's ``numba`` set to None (the caller's monkeypatch): ``random_rollouts`` plays on
    the Python rules with ``random.Random(seed)``'s moves and says why in one line, and a deal is one
    ValueError line. Gives the replayed State and the steps it took."""
    state = rules.new_game(config, Chance(2))
    values, steps = kernel.random_rollouts([state], [5])
    assert capsys.readouterr().err == (f"{game} kernel unavailable, rolling out on the Python rules: numba is "
                                       "not installed (pip install 'tavernzoo[kernel]')\n")
    game_state, picker = rules.clone(state), random.Random(5)
    taken = replay(game_state, iter(picker.random, None))
    check_returns(values, steps, taken, game_state, rules)
    with pytest.raises(ValueError, match=f"the {game} kernel cannot take this game: numba is not installed"):
        kernel.new_games(config, [0])
    return game_state, taken


def check_rollouts_replay(kernel: Any, rules: Any, config: Any, batch: Any, seeds: list[int],
                          replay: Callable[[Any, Iterator[float]], int]) -> list[tuple[Any, int]]:
    """``rollout_random`` over ``batch`` (dealt from ``seeds``, with move seeds ``seed + 1000``) leaves the
    batch alone and plays the games ``replay`` plays on the rules with the same picks and chance: the same
    steps and returns. Gives each replayed State and the steps it took."""
    before = batch.state.copy()
    values, steps = kernel.rollout_random(batch, [seed + 1000 for seed in seeds])
    assert np.array_equal(batch.state, before), "a rollout changed the batch it started from"
    games = []
    for g, seed in enumerate(seeds):
        state = rules.new_game(config, Chance(seed))
        taken = replay(state, splitmix_floats(seed + 1000))
        expected = tuple(rules.returns(state))
        assert steps[g] == taken, f"seed {seed}"
        assert tuple(values[g, :len(expected)]) == expected, f"seed {seed}"
        games.append((state, taken))
    return games


def check_step_batch(kernel: Any, rules: Any, config: Any, batch: Any) -> None:
    """``step_batch`` on three games dealt from seeds 0, 1, 2 plays the first legal action in game 0, the last
    in game 2 and leaves game 1 alone (-1): each then is the rules' game, with its legal actions and seat."""
    states = [rules.new_game(config, Chance(seed)) for seed in range(3)]
    actions = [rules.legal_actions(states[0])[0], -1, rules.legal_actions(states[2])[-1]]
    kernel.step_batch(batch, actions)
    rules.apply(states[0], actions[0])
    rules.apply(states[2], actions[2])
    masks = kernel.legal_mask(batch)
    for g in range(3):
        assert kernel.first_difference(batch, g, states[g]) is None
        assert list(np.flatnonzero(masks[g])) == rules.legal_actions(states[g])
        assert kernel.current_seat(batch)[g] == rules.current_seat(states[g])


def replay_in_both(kernel: Any, rules: Any, config: Any, seed: int, label: str, batch: Any,
                   choose: Callable[[Any, int, list[int]], int] | None = None,
                   compiled_move: Callable[[Any], int] | None = None,
                   check_more: Callable[[Any, Any, str], None] | None = None,
                   seats: bool = True) -> tuple[float, ...]:
    """Play game ``seed`` of a single-actor game in both engines (``batch``: the kernel's deal of it) with the
    same moves: uniformly random from ``random.Random(seed)``, or ``choose(state, seat, legal)``, which the
    compiled bot's ``compiled_move(batch)`` must match; fail at the first difference of the State (and of
    ``check_more(batch, state, where)``), the legal actions, the seat to act (``seats``: the kernel's
    ``current_seat``, -1 once over), the end or the returns. Gives the returns."""
    state = rules.new_game(config, Chance(seed))
    picker = random.Random(seed)
    step = 0

    def check(what: str) -> None:
        where = f"{label}, seed {seed}, step {step} ({what})"
        difference = kernel.first_difference(batch, 0, state)
        assert difference is None, f"{where}: {difference}"
        if check_more is not None:
            check_more(batch, state, where)

    check("the deal")
    while not rules.is_terminal(state):
        legal = rules.legal_actions(state)
        assert kernel.legal_list(batch, 0) == legal, (
            f"{label}, seed {seed}, step {step}: legal actions: kernel {kernel.legal_list(batch, 0)}, rules {legal}")
        seat = rules.current_seat(state)
        if seats:
            assert int(kernel.current_seat(batch)[0]) == seat, f"{label}, seed {seed}, step {step}: seat to act"
        if choose is None:
            action = legal[int(picker.random() * len(legal))]
        else:
            action = choose(state, seat, legal)
            compiled = compiled_move(batch)
            assert compiled == action, (f"{label}, seed {seed}, step {step}: the heuristic plays "
                                        f"{rules.ACTION_NAMES[action]}, its compiled form "
                                        f"{rules.ACTION_NAMES[compiled]}")
        rules.apply(state, action)
        kernel.step_batch(batch, [action])
        step += 1
        check(rules.ACTION_NAMES[action])
    assert kernel.legal_list(batch, 0) == [], f"{label}, seed {seed}: the kernel has moves after the end"
    assert bool(kernel.is_terminal(batch)[0])
    if seats:
        assert int(kernel.current_seat(batch)[0]) == -1, f"{label}, seed {seed}: a seat to act after the end"
    expected = tuple(rules.returns(state))
    got = tuple(kernel.returns(batch)[0, :len(expected)])
    assert got == expected, f"{label}, seed {seed}, step {step}: returns: kernel {got}, rules {expected}"
    return rules.returns(state)


def check_heuristic_rollouts(rules: Any, config: Any, seeds: list[int], rollouts: tuple[np.ndarray, np.ndarray],
                             bot_class: Any, counted: Callable[[Any], int]) -> None:
    """A compiled heuristic's ``rollouts`` (returns, steps) of the games dealt from ``seeds`` are the games
    ``bot_class``'s bots play on the rules (``act_state``): the same returns and ``counted(state)`` steps."""
    values, steps = rollouts
    bots = [bot_class(config, seat) for seat in range(config.num_players)]
    for g, seed in enumerate(seeds):
        state = rules.new_game(config, Chance(seed))
        while not rules.is_terminal(state):
            seat = rules.current_seat(state)
            rules.apply(state, bots[seat].act_state(state, seat, rules.legal_actions(state)))
        assert steps[g] == counted(state), f"seed {seed}"
        assert tuple(values[g, :config.num_players]) == rules.returns(state), f"seed {seed}"
