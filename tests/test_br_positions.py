"""Training positions from the exact best response (Tiny Minotaur): ``solver.best_response_decisions``, the
samples ``tavernzoo exploit --exact-only --positions`` writes (train/br_positions.py), and sample weights.

* The bot decisions it returns are exactly those ``best_response`` asks the policy about, once each.
* Its visits are right: the best response's return minus the game's value equals the sum of visits times
  regret (by the solver's optimal values) over the decisions, the bot's plus and the best response's minus
  (the performance difference), for a deterministic and a stochastic bot, from every start.
* The rows' targets are the oracle's, their weights in [1, cap]; old samples files load with weight 1; a
  heavier row pulls training its way; bad input is one ``error:`` line and writes nothing.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from test_exploit import Stubborn

from tavernzoo.agents import load_bot
from tavernzoo.envs import get_game
from tavernzoo.envs.tiny_minotaur import rules, solver
from tavernzoo.train.exploit import exact_exploitability, policy_of
from tavernzoo.train.samples import Samples

GAME = get_game("tiny_minotaur")

pytestmark = pytest.mark.usefixtures("private_solver_cache")  # tests/conftest.py


def small_config(house_ruleset, **overrides):
    options = {"classes": ("sword", "magic"), "archetypes": ("fighter", "cleric"), "starting_hp": 30,
               "hp_cap": 40, "ruleset": house_ruleset, **overrides}
    return GAME.make_config(**options)


def position_key(state):
    return (tuple(state.hp), tuple(map(tuple, state.cards)), state.phase, state.pending_card, state.to_act,
            state.turn)


def test_the_bot_decisions_are_exactly_those_best_response_asks(house_ruleset):
    config = small_config(house_ruleset)
    policy = policy_of(Stubborn(), GAME, config)
    for _, start in solver.deals(config)[:4]:
        for bot in (0, 1):
            asked = []

            def recording(state, seat, asked=asked):
                asked.append(position_key(state))
                return policy(state, seat)

            count = [0]
            value = solver._best_response_value(start, bot, recording, count)
            again, decisions = solver.best_response_decisions(start, bot, policy)
            mine = [position_key(d.state) for d in decisions if d.seat == bot]
            assert again == pytest.approx(value, abs=1e-12)
            assert len(asked) == len(set(asked)) == count[0] > 0  # each decision asked once
            assert sorted(mine) == sorted(asked)
            assert any(d.visits > 0 for d in decisions if d.seat == bot)
            assert any(d.visits == 0 for d in decisions if d.seat == bot)  # considered, off the lines
            assert all(d.visits > 0 for d in decisions if d.seat != bot)  # the best response's: reached


def _q_values(solution, state, seat):
    hp, cards = tuple(state.hp), (tuple(state.cards[0]), tuple(state.cards[1]))
    if state.phase == rules.REACT_PHASE:
        return {a: v for a, (v, _) in solution.reaction_values(hp, cards, seat, state.pending_card).items()}
    return solution.attack_values(hp, cards, seat)


@pytest.mark.parametrize("bot_spec", ["stubborn", "random"])
def test_visits_times_regret_add_up_to_the_best_responses_gain(house_ruleset, bot_spec):
    config = small_config(house_ruleset)
    bot = Stubborn() if bot_spec == "stubborn" else load_bot("random", GAME, config, seed=0)
    policy = policy_of(bot, GAME, config)
    for _, start in solver.deals(config):
        matchup = solver.matchup_of_state(start)
        solution = solver.solve(matchup)
        for seat in (0, 1):
            br = 1 - seat
            value, decisions = solver.best_response_decisions(start, seat, policy)
            first_value = solution.start_value(start.first_seat)[0]
            equilibrium = first_value if start.first_seat == br else -first_value
            total = 0.0
            for decision in decisions:
                q = _q_values(solution, decision.state, decision.seat)
                best = max(q.values())
                regret = sum(p * (best - q[a]) for a, p in enumerate(decision.probabilities) if p > 0)
                total += decision.visits * regret * (1 if decision.seat == seat else -1)
            assert value - equilibrium == pytest.approx(total, abs=1e-9)


def test_positions_file_holds_the_oracles_labels_and_bounded_weights(house_ruleset, tmp_path):
    config = small_config(house_ruleset)
    target = tmp_path / "positions.npz"
    report = exact_exploitability("random", config, positions=target, weight_cap=5.0)
    made = report["positions"]
    # the performance difference over every deal: the figure is the bot's regret minus the best response's
    assert report["milli_points"] == pytest.approx(made["bot_regret_milli_points"] - made["br_regret_milli_points"],
                                                   abs=1e-6)
    assert made["bot_mistakes_reached"] > 0 and made["bot_regret_milli_points"] > 0
    samples = Samples.load(target, 65, 8)
    assert 0 < len(samples) == made["rows"] <= made["bot_decisions_reached"] <= made["bot_decisions_asked"]
    assert samples.weights.min() >= 1.0 and samples.weights.max() <= 5.0 and samples.weights.max() > 1.0
    oracle = load_bot("oracle", GAME, config, seed=0)
    for row in range(len(samples)):
        observation = {"observation": samples.observations[row], "action_mask": samples.masks[row].astype(np.int8)}
        values = oracle.values(observation)
        best = max(values.values())
        optimal = sorted(a for a, v in values.items() if v >= best - 1e-9)
        assert np.flatnonzero(samples.targets[row]).tolist() == optimal
        assert samples.targets[row][optimal] == pytest.approx(1 / len(optimal))
        assert samples.values[row] == pytest.approx(best, abs=1e-6)
        assert len(optimal) < len(values)  # a row is a position where a mistake is possible


def test_a_samples_file_without_weights_loads_with_weight_one(tmp_path):
    path = tmp_path / "old.npz"
    rows = 3
    np.savez(path, observations=np.zeros((rows, 65), np.float32), masks=np.ones((rows, 8), bool),
             targets=np.full((rows, 8), 1 / 8, np.float32), values=np.zeros(rows, np.float32))
    samples = Samples.load(path, 65, 8)
    assert samples.weights.tolist() == [1.0] * rows
    both = Samples.concat([samples, samples])
    assert len(both.weights) == 2 * rows
    np.savez(path, observations=np.zeros((rows, 65), np.float32), masks=np.ones((rows, 8), bool),
             targets=np.full((rows, 8), 1 / 8, np.float32), values=np.zeros(rows, np.float32),
             weights=np.array([1.0, -1.0, 1.0], np.float32))
    with pytest.raises(ValueError, match="negative weights"):
        Samples.load(path, 65, 8)


def test_a_heavier_row_pulls_training_its_way(tmp_path):
    pytest.importorskip("torch")
    from tavernzoo.train.config import make_train_config
    from tavernzoo.train.expert import make_model, train_student
    from tavernzoo.train.run import Trainer

    config = make_train_config("tiny_minotaur", overrides={"net_arch": [16], "n_envs": 2, "n_steps": 16,
                                                           "batch_size": 32})
    # one observation, two rows that disagree: action 0 with weight 3, action 1 with weight 1
    observations = np.full((2, 65), 0.5, np.float32)
    masks = np.zeros((2, 8), bool)
    masks[:, :2] = True
    targets = np.zeros((2, 8), np.float32)
    targets[0, 0] = targets[1, 1] = 1.0
    chosen = {}
    for weights in ((3.0, 1.0), (1.0, 3.0)):
        model, _ = make_model(Trainer(config, tmp_path / f"run{weights[0]}"))
        train_student(model.policy, Samples(observations, masks, targets, np.zeros(2, np.float32),
                                            np.array(weights, np.float32)), epochs=200, batch_size=2,
                      learning_rate=1e-2, value_weight=0.0)
        import torch

        from tavernzoo.train.expert import _forward

        with torch.no_grad():
            logits, _ = _forward(model.policy, torch.as_tensor(observations[:1]))
        probabilities = torch.softmax(logits[0, :2], -1).numpy()
        chosen[weights] = probabilities
        assert probabilities[0] == pytest.approx(weights[0] / sum(weights), abs=0.05)  # the weighted optimum
    assert chosen[(3.0, 1.0)][0] > 0.7 > 0.3 > chosen[(1.0, 3.0)][0]


@pytest.mark.parametrize("arguments, message", [
    (["--positions", "{tmp}/p.npz"], "--exact-only"),
    (["--exact-only", "--positions", "{tmp}/p.txt"], ".npz"),
    (["--exact-only", "--positions", "{tmp}/nowhere/p.npz"], "no such folder"),
    (["--exact-only", "--weight-cap", "3"], "--positions"),
    (["--exact-only", "--positions", "{tmp}/p.npz", "--weight-cap", "0.5"], "at least 1"),
])
def test_positions_bad_input_is_one_error_line(tmp_path, arguments, message):
    command = [sys.executable, "-m", "tavernzoo.cli", "exploit", "heuristic", "--game", "tiny_minotaur",
               *[a.format(tmp=tmp_path) for a in arguments]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error:") and len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_positions_refuses_an_existing_file(tmp_path):
    existing = tmp_path / "p.npz"
    existing.write_bytes(b"keep me")
    with pytest.raises(ValueError, match="exists already"):
        exact_exploitability("heuristic", None, positions=existing)
    assert existing.read_bytes() == b"keep me"


def test_expert_trains_on_a_run_and_a_positions_file_together(house_ruleset, tmp_path):
    """`tavernzoo expert --samples RUN --samples FILE --games 0`: every row of both, the weights kept."""
    options = ["--set", f"game_config={{\"ruleset\": \"{house_ruleset}\", \"classes\": [\"sword\", \"magic\"], "
               "\"archetypes\": [\"fighter\", \"cleric\"], \"starting_hp\": 30, \"hp_cap\": 40}",
               "--set", "net_arch=16", "--set", "eval_games=0", "--eval-games", "0", "--workers", "1"]
    cli = [sys.executable, "-m", "tavernzoo.cli", "expert", "tiny_minotaur", "--no-progress"]
    first = subprocess.run([*cli, "--teacher", "oracle", "--games", "3", "--epochs", "1", *options,
                            "--out", str(tmp_path / "dagger")], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    positions = tmp_path / "positions.npz"
    exact_exploitability("random", small_config(house_ruleset), positions=positions)
    both = subprocess.run([*cli, "--teacher", "oracle", "--games", "0", "--epochs", "1", *options,
                           "--samples", str(tmp_path / "dagger"), "--samples", str(positions),
                           "--out", str(tmp_path / "both")], capture_output=True, text=True, timeout=300)
    assert both.returncode == 0, both.stderr
    dagger = Samples.load(tmp_path / "dagger", 65, 8)
    extra = Samples.load(positions, 65, 8)
    kept = Samples.load(tmp_path / "both", 65, 8)
    assert len(kept) == len(dagger) + len(extra)
    np.testing.assert_array_equal(kept.weights, np.concatenate([dagger.weights, extra.weights]))
    assert (kept.weights[len(dagger):] > 1).any() and (kept.weights[:len(dagger)] == 1).all()
