"""``tavernzoo blend``: weight interpolation of two policies, its checks, its command and its result as a bot."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from test_export import random_policy  # noqa: E402

from tavernzoo.agents import load_bot  # noqa: E402
from tavernzoo.agents.export import export, read_policy  # noqa: E402
from tavernzoo.agents.policy import MLPPolicy, blend  # noqa: E402
from tavernzoo.envs import get_game  # noqa: E402
from tavernzoo.eval.match import make_env, play_game  # noqa: E402

TM = get_game("tiny_minotaur")
MS = get_game("ministeel")
CLI = [sys.executable, "-m", "tavernzoo.cli", "blend"]


def with_critic(policy: MLPPolicy, seed: int) -> MLPPolicy:
    """``policy`` with a random value head of its actor's hidden sizes."""
    rng = np.random.default_rng(seed)
    sizes = [policy.observation_size, *(int(w.shape[0]) for w in policy.weights[:-1]), 1]
    pairs = zip(sizes, sizes[1:], strict=False)
    weights = [rng.normal(0, 0.5, (n_out, n_in)).astype(np.float32) for n_in, n_out in pairs]
    biases = [rng.normal(0, 0.5, n_out).astype(np.float32) for n_out in sizes[1:]]
    return MLPPolicy(policy.weights, policy.biases, policy.activation, policy.meta, weights, biases)


def test_the_ends_and_the_middle():
    first, second = with_critic(random_policy(TM, seed=1), 11), with_critic(random_policy(TM, seed=2), 12)
    for weight, expected in ((0.0, first), (1.0, second)):
        mixed = blend(first, second, weight)
        for got, want in zip(mixed.weights + mixed.value_biases, expected.weights + expected.value_biases, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-7)
    middle = blend(first, second, 0.25, {"trained_with": "a test"})
    np.testing.assert_allclose(middle.weights[0], 0.75 * first.weights[0] + 0.25 * second.weights[0], atol=1e-6)
    np.testing.assert_allclose(middle.value_weights[-1], 0.75 * first.value_weights[-1]
                               + 0.25 * second.value_weights[-1], atol=1e-6)
    assert middle.meta["env"] == TM.env_name and middle.meta["trained_with"] == "a test"
    assert "seed" not in middle.meta  # the ends' training details are not passed off as the blend's
    # One end without a critic: the actor blends, the result has none rather than half of one.
    assert not blend(first, random_policy(TM, seed=3), 0.5).has_value


@pytest.mark.parametrize("weight", [-0.1, 1.01, float("nan"), True, "0.5", None])
def test_a_weight_outside_zero_to_one_is_refused(weight):
    with pytest.raises(ValueError, match="blend weight must be a number from 0"):
        blend(random_policy(TM, seed=1), random_policy(TM, seed=2), weight)


def test_policies_that_do_not_match_are_refused():
    tiny = random_policy(TM, seed=1)
    with pytest.raises(ValueError, match="differ in env"):
        blend(tiny, random_policy(MS, seed=1), 0.5)
    with pytest.raises(ValueError, match="layers differ"):
        blend(tiny, random_policy(TM, seed=2, hidden=(8,)), 0.5)
    with pytest.raises(ValueError, match="activations"):
        blend(tiny, random_policy(TM, seed=2, activation="relu"), 0.5)
    with pytest.raises(ValueError, match="differ in game_config"):
        blend(random_policy(MS, seed=1, game_config={"num_players": 3}),
              random_policy(MS, seed=2, game_config={"num_players": 4}), 0.5)


def test_an_exported_bot_blends_as_its_checkpoint_does(tmp_path):
    first, second = with_critic(random_policy(TM, seed=1), 11), random_policy(TM, seed=2)
    first.save(tmp_path / "first")
    second.save(tmp_path / "second")
    onnx_path, _ = export(tmp_path / "first", tmp_path / "first.onnx")
    from_onnx = read_policy(str(onnx_path))
    assert from_onnx.has_value and from_onnx.meta["env"] == TM.env_name
    for got, want in zip(from_onnx.weights + from_onnx.value_weights, first.weights + first.value_weights, strict=True):
        np.testing.assert_array_equal(got, want)
    a = blend(from_onnx, read_policy(str(tmp_path / "second")), 0.5)
    b = blend(read_policy(str(tmp_path / "first")), read_policy(str(tmp_path / "second")), 0.5)
    for got, want in zip(a.weights + a.biases, b.weights + b.biases, strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_command_writes_a_bot_that_plays_and_exports(tmp_path):
    with_critic(random_policy(TM, seed=1), 11).save(tmp_path / "first")
    with_critic(random_policy(TM, seed=2), 12).save(tmp_path / "second")
    out = tmp_path / "mixed"
    done = subprocess.run([*CLI, str(tmp_path / "first"), str(tmp_path / "second"), "--weight", "0.5",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "actor and critic blended" in done.stdout
    meta = json.loads((out / "policy.json").read_text())
    assert meta["blend"]["weight"] == 0.5 and meta["blend"]["second"] == str(tmp_path / "second")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first", "mixed", "second"]  # no staging left
    bots = [load_bot(str(out), TM), load_bot("random", TM)]
    returns, record = play_game(make_env(TM), bots, seed=3)
    assert len(returns) == 2 and record["actions"]  # a whole game played
    onnx_path, _ = export(out, tmp_path / "mixed.onnx")
    assert json.loads(onnx_path.with_suffix(".json").read_text())["value"]  # the blended critic travels


@pytest.mark.parametrize("args, message", [
    (["{first}", "{second}", "--weight", "2", "--out", "{out}"], "blend weight must be a number from 0"),
    (["{first}", "{second}", "--weight", "nan", "--out", "{out}"], "blend weight must be a number from 0"),
    (["{first}", "{missing}", "--weight", "0.5", "--out", "{out}"], "neither a policy checkpoint"),
    (["{first}", "mcts", "--weight", "0.5", "--out", "{out}"], "has no network"),
    (["{first}", "{other_game}", "--weight", "0.5", "--out", "{out}"], "differ in env"),
    (["{first}", "{second}", "--weight", "0.5", "--out", "{full}"], "already exists"),
])
def test_bad_input_is_one_error_line_and_writes_nothing(tmp_path, args, message):
    random_policy(TM, seed=1).save(tmp_path / "first")
    random_policy(TM, seed=2).save(tmp_path / "second")
    random_policy(MS, seed=2).save(tmp_path / "other_game")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    names = {key: str(tmp_path / key) for key in ("first", "second", "missing", "other_game", "out", "full")}
    done = subprocess.run([*CLI, *(arg.format(**names) for arg in args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("error:") and len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr
    assert not (tmp_path / "out").exists()
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
