"""Neural guidance in ``mcts``: a trained policy's probabilities as PUCT priors, its value head as the leaf
value, the value head carried by checkpoints and exported ONNX bots, and the errors for bots without one."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.base import BotBase
from tavernzoo.agents.mcts import MCTSBot, parse_options
from tavernzoo.agents.policy import MLPPolicy, find_policy_dir
from tavernzoo.envs import get_game
from tavernzoo.eval.match import play_match

TM = get_game("tiny_minotaur")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny Tiny Minotaur run: a few thousand PPO steps, enough for a policy and a critic to exist."""
    pytest.importorskip("sb3_contrib")
    import torch

    from tavernzoo.train.config import TrainConfig
    from tavernzoo.train.run import Trainer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("neural") / "run"
    try:
        Trainer(TrainConfig(game=TM.name, timesteps=4096, n_envs=8, n_steps=128, batch_size=256, net_arch=(32, 32),
                            eval_games=0, checkpoint_every=10**9), out).run(progress=False)
    finally:
        torch.set_num_threads(threads)
    return out


@pytest.fixture(scope="module")
def exported(run_dir, tmp_path_factory):
    pytest.importorskip("onnx")
    from tavernzoo.agents.export import export

    onnx_path, _ = export(run_dir, tmp_path_factory.mktemp("bots") / "tm.onnx")
    return onnx_path


def _observations(count: int, seed: int = 0) -> np.ndarray:
    """Observations of both seats along random games."""
    import random

    from tavernzoo.envs.core import Chance

    rules, rng = TM.rules, random.Random(seed)
    config = TM.make_config()
    observer = TM.make_observer()
    rows = []
    while len(rows) < count:
        state = rules.new_game(config, Chance(rng.randrange(2**31)))
        while not rules.is_terminal(state) and len(rows) < count:
            for seat in range(2):
                buffer = np.zeros(TM.encoder.observation_size(config), dtype=np.float32)
                observer.encode(state, seat, buffer)
                rows.append(buffer)
            legal = rules.legal_actions(state)
            rules.apply(state, legal[rng.randrange(len(legal))])
    return np.stack(rows[:count])


def test_checkpoints_keep_the_critic_and_it_matches_sb3(run_dir):
    from sb3_contrib import MaskablePPO

    checkpoint = find_policy_dir(run_dir)
    meta = json.loads((checkpoint / "policy.json").read_text())
    assert meta["value_layers"] == [32, 32, 1]
    policy = MLPPolicy.load(checkpoint)
    observations = _observations(200)
    model = MaskablePPO.load(checkpoint / "model.zip", device="cpu")  # our own run, written by this test
    import torch

    with torch.no_grad():
        expected = model.policy.predict_values(torch.as_tensor(observations)).numpy()[:, 0]
    assert np.allclose(policy.values(observations), expected, atol=1e-5)
    assert np.ptp(expected) > 0  # a trained critic, not a constant


def test_exported_bot_carries_the_value_output(run_dir, exported):
    manifest = json.loads(exported.with_suffix(".json").read_text())
    assert "value" in manifest["outputs"] and manifest["value"]["per"] == "observation_seat"
    assert manifest["network"]["value_layers"] == [32, 32, 1]
    onnx_bot = load_bot(str(exported), TM)
    policy_bot = load_bot(str(run_dir), TM)
    observations = _observations(100, seed=1)
    assert np.allclose(onnx_bot.value_estimates(observations), policy_bot.value_estimates(observations), atol=1e-5)
    masks = np.ones((len(observations), len(manifest["actions"])), dtype=np.int8)
    masks[:, 1] = 0
    probabilities = onnx_bot.action_probabilities(observations, masks)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5) and (probabilities[:, 1] == 0).all()
    assert np.allclose(probabilities, policy_bot.action_probabilities(observations, masks), atol=1e-5)


def test_old_bots_without_the_value_output_still_play_but_refuse_value():
    # zoo:tiny_minotaur_yardstick was exported before bots carried the value head
    assert play_match(TM, ["zoo:tiny_minotaur_yardstick", "random"], 2, seed=0).rows[0].games == 2
    with pytest.raises(ValueError,
                       match=r"tiny_minotaur_yardstick\.onnx has no value output.*tavernzoo export CHECKPOINT"):
        load_bot("mcts:value=zoo:tiny_minotaur_yardstick", TM)
    load_bot("mcts:value=zoo:tiny_minotaur", TM)  # today's carries it


@pytest.mark.parametrize("spec, message", [
    ("mcts:value=heuristic", "heuristic has no value head"),
    ("mcts:value=zoo:ministeel", "zoo:ministeel plays ministeel, not tiny_minotaur"),
    ("mcts:value=no/such/run", "unknown bot spec 'no/such/run'"),
    ("mcts:prior=no/such/bot.onnx", "does not exist"),
    ("mcts:value=", "value='' is not valid"),
    ("mcts:puct=-1", "puct='-1' is not valid"),
])
def test_bad_value_and_prior_specs_are_refused(spec, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        load_bot(spec, TM)


def test_a_checkpoint_without_the_critic_is_refused_for_value(tmp_path):
    weights = [np.zeros((8, TM.encoder.observation_size(TM.make_config())), np.float32)]
    MLPPolicy(weights, [np.zeros(8, np.float32)], "tanh", {"env": TM.env_name}).save(tmp_path / "old")
    load_bot(str(tmp_path / "old"), TM)  # it still plays
    with pytest.raises(ValueError, match="has no value head.*policy.npz"):
        load_bot(f"mcts:value={tmp_path / 'old'}", TM)


def test_cli_names_the_missing_value_head_in_one_error_line():
    result = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "match", "tiny_minotaur", "--games", "1",
                             "--bots", "mcts:value=zoo:tiny_minotaur_yardstick", "random"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "tiny_minotaur_yardstick.onnx" in lines[0], \
        result.stderr


@pytest.mark.parametrize("tree", ["closed", "open"])
def test_guided_search_plays_legal_games(run_dir, exported, tree):
    specs = [f"mcts:60,tree={tree},prior={exported},value={run_dir}", "heuristic"]
    result = play_match(TM, specs, 4, seed=3)
    assert result.rows[0].games == 4


class _OneMoveFancier(BotBase):
    """A fake policy: all its probability on one action, a value of +0.5 for every seat."""

    name = "fake"

    def __init__(self, favourite: int):
        self.favourite = favourite
        self.asked_values = 0

    def act(self, observation):
        return self.favourite if observation["action_mask"][self.favourite] else int(np.flatnonzero(
            observation["action_mask"])[0])

    def action_probabilities(self, observations, masks):
        rows = np.where(masks.astype(bool), 1e-6, 0.0)
        for row, mask in zip(rows, masks, strict=True):
            if mask[self.favourite]:
                row[self.favourite] = 1.0
        return rows / rows.sum(axis=1, keepdims=True)

    def check_value_head(self):
        pass

    def value_estimates(self, observations):
        self.asked_values += 1
        return np.full(len(observations), 0.5, dtype=np.float32)


def _root_position():
    """A Tiny Minotaur position where the seat to act has several legal moves."""
    from tavernzoo.envs.core import Chance

    config = TM.make_config()
    state = TM.rules.new_game(config, Chance(5))
    while len(TM.rules.legal_actions(state)) < 3:
        TM.rules.apply(state, TM.rules.legal_actions(state)[0])
    return config, state


@pytest.mark.parametrize("tree", ["closed", "open"])
def test_puct_follows_the_prior_probabilities_and_value_replaces_rollouts(tree):
    config, state = _root_position()
    legal = TM.rules.legal_actions(state)
    favourite = legal[-1]
    fake = _OneMoveFancier(favourite)
    options = parse_options(f"mcts:50,tree={tree},prior=fake,value=fake,rollout=heuristic", TM.name)
    bot = MCTSBot(TM, config, 0, options, lambda spec, game, config, seed: fake)
    bot._policy = None  # the rollout policy must never be asked: value= with depth=0 plays no rollout
    seat = TM.rules.current_seat(state)
    bot.observe_information_state(TM.rules.information_state(state, seat), seat)
    mask = np.zeros(len(TM.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    assert bot.act({"observation": np.zeros(TM.encoder.observation_size(config), np.float32),
                    "action_mask": mask}) == favourite
    visits = bot.last_search["visits"]
    assert visits[favourite] > 0.6 * sum(visits.values())
    assert fake.asked_values > 0


def test_value_bot_scores_leaves_per_seat_in_one_batch():
    config, state = _root_position()
    fake = _OneMoveFancier(0)
    bot = MCTSBot(TM, config, 0, parse_options("mcts:10,tree=open,value=fake", TM.name),
                  lambda spec, game, config, seed: fake)
    assert bot._rollout(state) == [0.5, 0.5]
    assert fake.asked_values == 1  # both seats' observations in one call


def test_zoo_prior_guides_a_four_player_search_with_hidden_cards():
    """Open-loop PUCT over determinized samples, with the zoo bot's probabilities (no value head needed)."""
    game = get_game("ministeel")
    result = play_match(game, ["mcts:12,prior=zoo:ministeel", "heuristic", "heuristic", "heuristic"], 1, seed=0,
                        config={"num_players": 4})
    assert result.rows[0].games == 4  # one deal, every seating
    from tavernzoo.envs.core import Chance

    bot = load_bot("mcts:12,prior=zoo:ministeel", game, {"num_players": 4}, seed=0)
    state = game.rules.new_game(game.make_config(num_players=4), Chance(0))
    legal = game.rules.legal_actions(state)
    priors = bot._prior(state, game.rules.current_seat(state), legal)
    assert sorted(priors) == sorted(legal) and abs(sum(priors.values()) - 1) < 1e-5


def test_a_root_temperature_spreads_the_roots_visits_over_the_networks_other_moves():
    """root_temp > 1 flattens a peaked prior at the root only: the search tries the other moves more, and
    root_temp=1 is the search without it, move for move."""
    from tavernzoo.agents.mcts import _tempered

    assert _tempered({1: 0.81, 2: 0.09, 3: 0.1}, 1.0) == pytest.approx({1: 0.81, 2: 0.09, 3: 0.1})
    flat = _tempered({1: 0.81, 2: 0.09, 3: 0.1}, 2.0)
    assert flat == pytest.approx({1: 0.9 / 1.5162, 2: 0.3 / 1.5162, 3: 0.1 ** 0.5 / 1.5162}, rel=1e-3)
    config, state = _root_position()
    legal = TM.rules.legal_actions(state)
    seat = TM.rules.current_seat(state)
    mask = np.zeros(len(TM.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    observation = {"observation": np.zeros(TM.encoder.observation_size(config), np.float32), "action_mask": mask}

    def root_visits(spec: str) -> tuple[int, dict[int, int]]:
        fake = _OneMoveFancier(legal[-1])
        bot = MCTSBot(TM, config, 0, parse_options(spec, TM.name), lambda spec, game, config, seed: fake)
        bot.observe_information_state(TM.rules.information_state(state, seat), seat)
        return bot.act(observation), bot.last_search["visits"]

    plain = root_visits("mcts:200,tree=open,prior=fake,rollout=random,seed=3")
    assert root_visits("mcts:200,tree=open,prior=fake,rollout=random,seed=3,root_temp=1") == plain
    _, hot = root_visits("mcts:200,tree=open,prior=fake,rollout=random,seed=3,root_temp=8")
    others = lambda visits: sum(n for a, n in visits.items() if a != legal[-1])  # noqa: E731
    assert others(hot) > others(plain[1]) + 10


@pytest.mark.parametrize("spec, message", [
    ("mcts:tree=open,root_temp=2", "root_temp=2 needs a prior that gives probabilities.*prior=none is none"),
    ("mcts:tree=open,prior=heuristic,root_temp=2", "prior=heuristic only names its move"),
    ("mcts:prior=zoo:tiny_minotaur,root_temp=2", "only the open tree.*tiny_minotaur with tree=closed"),
    ("mcts:root_temp=0", "root_temp='0' is not valid"),
    ("mcts:root_temp=-1", "root_temp='-1' is not valid"),
    ("mcts:root_temp=hot", "root_temp='hot' is not valid"),
])
def test_bad_root_temperatures_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        load_bot(spec, TM)


def test_a_root_temperature_is_refused_for_simultaneous_moves():
    with pytest.raises(ValueError, match="only the open tree of a turn-based game.*minefield"):
        load_bot("mcts:prior=zoo:minefield,root_temp=2", get_game("minefield"), {"num_players": 4})


# --- root=paired: policy improvement by paired rollouts --------------------------------------------------------


def _ministeel_position(seed: int = 3):
    """A 4-player MiniSteel position (the first turn, after every opening window) with several legal moves."""
    from tavernzoo.envs.core import Chance

    game = get_game("ministeel")
    config = game.make_config(num_players=4)
    state = game.rules.new_game(config, Chance(seed))
    while len(game.rules.legal_actions(state)) < 3:
        game.rules.apply(state, game.rules.legal_actions(state)[-1])
    return game, config, state


def test_paired_samples_give_every_candidate_the_same_cards_and_dice():
    """The copies of one sample hold the same hidden cards and the same dice to come; samples differ."""
    game, config, state = _ministeel_position()
    seat = game.rules.current_seat(state)
    bot = load_bot("mcts:root=paired,rollout=random,prior=none,depth=0", game, config, seed=1)
    from tavernzoo.envs.core import Chance

    groups = bot._paired_samples(game.rules.information_state(state, seat), seat, Chance(9), 4, 3)
    assert [len(group) for group in groups] == [3, 3, 3, 3]
    for group in groups:
        first = group[0]
        for copy in group[1:]:
            assert copy is not first and copy.hands == first.hands and copy.deck == first.deck
            assert copy.chance._random.getstate() == first.chance._random.getstate()
            assert copy.hands is not first.hands and copy.chance is not first.chance  # playing one leaves the rest
        rolls = [[copy.chance.roll(20) for _ in range(5)] for copy in group]
        assert rolls == [rolls[0]] * len(group)
    assert len({json.dumps(group[0].hands) + json.dumps(group[0].deck) for group in groups}) > 1


class _CountingPolicy(BotBase):
    """A network-like rollout policy (zoo:ministeel) that counts its batched calls and rows."""

    name = "counting"

    def __init__(self, inner):
        self.inner, self.calls, self.rows, self.single = inner, 0, 0, 0

    def act(self, observation):
        self.single += 1
        return self.inner.act(observation)

    def act_batch(self, observations, masks):
        self.calls += 1
        self.rows += len(observations)
        return self.inner.act_batch(observations, masks)


def test_batched_rollouts_play_the_same_games_as_one_by_one_rollouts():
    """_rollouts steps many states together and asks the network for all of them at once; each state's
    game and returns are those of the one-state rollout."""
    game, config, state = _ministeel_position()
    seat = game.rules.current_seat(state)
    bot = load_bot("mcts:root=paired,prior=zoo:ministeel,rollout=zoo:ministeel,depth=0", game, config, seed=1)
    counting = bot._policy = _CountingPolicy(bot._policy)
    from tavernzoo.envs.core import Chance

    groups = bot._paired_samples(game.rules.information_state(state, seat), seat, Chance(4), 6, 2)
    together = [copy for group in groups for copy in group]
    apart = [game.rules.clone(copy) for copy in together]
    batched = bot._rollouts(together)
    assert counting.calls > 0 and counting.rows > 2 * counting.calls  # several games answered per call
    assert counting.single == 0
    assert batched == [bot._rollout(copy) for copy in apart]
    assert counting.single >= counting.rows  # the one-by-one rollouts asked the network (forced moves too)
    assert all(game.rules.is_terminal(copy) for copy in together)
    assert [copy.eliminated for copy in together] == [copy.eliminated for copy in apart]


def _seat_view(game, config, observer, state):
    """The seat to move, its legal actions and its observation as a bot is handed it."""
    seat, legal = game.rules.current_seat(state), game.rules.legal_actions(state)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    observation = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
    observer.encode(state, seat, observation)
    return seat, legal, {"observation": observation, "action_mask": mask}


def test_paired_search_keeps_the_priors_move_unless_another_is_significantly_better():
    """With an unreachable margin the search plays the prior's most likely move at every decision; the
    visits give the move played all the rollouts."""
    game, config, state = _ministeel_position()
    prior = load_bot("zoo:ministeel", game, config)
    bot = load_bot("mcts:sims=30,root=paired,prior=zoo:ministeel,rollout=random,depth=0,z=1000000", game, config, 2)
    observer = game.make_observer()
    rules = game.rules
    checked = 0
    while not rules.is_terminal(state) and checked < 8:
        seat, legal, view = _seat_view(game, config, observer, state)
        expected = prior.act(view)
        if len(legal) > 1:
            bot.observe_information_state(rules.information_state(state, seat), seat)
            assert bot.act(view) == expected
            search = bot.last_search
            assert search["base"] == expected and search["samples"] == 30 // min(3, len(legal))
            assert bot.visit_distribution() == {expected: 1.0}
            checked += 1
        rules.apply(state, expected)
    assert checked == 8


def test_a_sure_prior_is_played_without_rollouts_and_an_unsure_one_searched():
    """sure=P: where the prior gives its move at least P that move is played with no rollout (and is the
    improved target's prior itself); below P the decision is searched as without the option."""
    game, config, state = _ministeel_position()
    rules = game.rules
    prior = load_bot("zoo:ministeel", game, config)
    observer = game.make_observer()
    searched = skipped = 0
    while not rules.is_terminal(state) and (searched < 3 or skipped < 3):
        seat, legal, view = _seat_view(game, config, observer, state)
        observation, mask = view["observation"], view["action_mask"]
        expected = prior.act(view)
        if len(legal) > 1:
            p = float(prior.action_probabilities(observation[None, :], mask[None, :])[0][expected])
            sure = 0.9 if p >= 0.9 else min(1.0, (p + 1) / 2)  # at p, or above it
            bot = load_bot(f"mcts:sims=12,root=paired,prior=zoo:ministeel,rollout=random,depth=0,z=1000000,"
                           f"target=improved,sure={sure}", game, config, 3)
            bot.observe_information_state(rules.information_state(state, seat), seat)
            assert bot.act(view) == expected
            if p >= sure:
                assert bot.last_search["simulations"] == 0 and bot.last_search["sure"]
                target = bot.visit_distribution()
                assert target[expected] == pytest.approx(p, abs=1e-5)
                skipped += 1
            else:
                assert bot.last_search["simulations"] == 12 // min(3, len(legal)) * min(3, len(legal))
                assert "sure" not in bot.last_search
                searched += 1
        rules.apply(state, expected)
    assert searched >= 3 and skipped >= 3


def test_improved_target_shifts_the_priors_log_probabilities_by_the_measured_gains():
    """target=improved: the move played is still the prior's (an unreachable z), but the policy target is
    the prior moved by each candidate's gain: log(t[a] / t[base]) = log(p[a] / p[base]) + sigma * gain[a],
    with gain 0 for actions that were not candidates. Expert iteration's labeller takes it as it is."""
    from tavernzoo.agents.mcts import IMPROVED_SCALE, IMPROVED_VISITS
    from tavernzoo.train.labelling import teacher_target

    game, config, state = _ministeel_position()
    rules = game.rules
    prior = load_bot("zoo:ministeel", game, config)
    bot = load_bot("mcts:sims=60,root=paired,prior=zoo:ministeel,rollout=random,depth=0,z=1000000,target=improved",
                   game, config, 5)
    seat, legal = rules.current_seat(state), rules.legal_actions(state)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    observation = np.zeros(game.encoder.observation_size(config), dtype=np.float32)
    game.make_observer().encode(state, seat, observation)
    p = prior.action_probabilities(observation[None, :], mask[None, :])[0]
    bot.observe_information_state(rules.information_state(state, seat), seat)
    move = bot.act({"observation": observation, "action_mask": mask})
    search = bot.last_search
    base, gains = search["base"], search["gains"]
    assert move == base == int(np.argmax(np.where(mask, p, -1)))
    assert len(gains) == 2 and any(abs(g) > 0.01 for g in gains.values())  # random rollouts: gains measured
    target = bot.visit_distribution()
    assert sorted(target) == sorted(legal) and sum(target.values()) == pytest.approx(1.0)
    sigma = (IMPROVED_VISITS + search["samples"]) * IMPROVED_SCALE
    floored = np.maximum(p, 1e-12)  # the prior's log-probabilities are floored there (a sure network's reach it)
    for action in legal:
        shift = np.log(target[action] / target[base]) - np.log(floored[action] / floored[base])
        assert shift == pytest.approx(sigma * gains.get(action, 0.0), abs=1e-4)
    labelled = teacher_target(bot, {"observation": observation, "action_mask": mask}, move)
    assert labelled[legal] == pytest.approx([target[a] for a in legal], abs=1e-6)
    assert labelled[base] < 1.0  # not the move played alone


def test_paired_search_leaves_a_bad_favourite_for_a_better_move():
    """Tiny Minotaur, where the oracle knows every move's value: a prior that fancies the worst move at
    positions where it costs at least 0.3 of the return, rollouts by the oracle. The search plays another
    move, and a better one, at every such position (policy improvement)."""
    import random

    from tavernzoo.envs.core import Chance

    config = TM.make_config()
    rules = TM.rules
    oracle = load_bot("oracle", TM, config)
    observer = TM.make_observer()
    rng = random.Random(4)
    improved = []
    state = rules.new_game(config, Chance(11))
    while len(improved) < 4:
        if rules.is_terminal(state):
            state = rules.new_game(config, Chance(rng.randrange(2**31)))
        seat, legal = rules.current_seat(state), rules.legal_actions(state)
        mask = np.zeros(len(TM.action_names(config)), dtype=np.int8)
        mask[legal] = 1
        observation = np.zeros(TM.encoder.observation_size(config), dtype=np.float32)
        observer.encode(state, seat, observation)
        values = oracle.values({"observation": observation, "action_mask": mask}) if len(legal) > 1 else {}
        if values and max(values.values()) - min(values.values()) >= 0.3:
            worst = min(values, key=values.get)
            fake = _OneMoveFancier(worst)
            options = parse_options(f"mcts:sims=600,root=paired,prior=fake,rollout=oracle,width={len(legal)},depth=0,"
                                    "target=improved", TM.name)
            assert options.tree == "open"  # the game's default closed tree gives way where no tree is built
            bot = MCTSBot(TM, config, len(improved), options,
                          lambda spec, game, config, seed, fake=fake: fake if spec == "fake" else oracle)
            bot.observe_information_state(rules.information_state(state, seat), seat)
            chosen = bot.act({"observation": observation, "action_mask": mask})
            assert bot.last_search["base"] == worst
            improved.append(values[chosen] - values[worst])
            # the improved target moves probability from the prior's sure move to the better one: by a
            # factor of at least exp(sigma * 0.1) > 10 against the prior's odds (1e-6 : 1); a prior this sure
            # still keeps most of it, as Gumbel MuZero's improved policy does
            target = bot.visit_distribution()
            assert sorted(target) == sorted(legal)
            assert target[chosen] / target[worst] > 10 * 1e-6
        rules.apply(state, legal[rng.randrange(len(legal))])
    assert all(gain > 0.1 for gain in improved), improved


@pytest.mark.parametrize("game_name, spec, message", [
    ("minefield", "mcts:root=paired", "root=paired: minefield has simultaneous moves"),
    ("tiny_minotaur", "mcts:root=paired,tree=closed", "root=paired builds no tree, so tree=closed"),
    ("ministeel", "mcts:root=paired,prior=zoo:ministeel,root_temp=2", "root=paired builds no tree.*root_temp"),
    ("ministeel", "mcts:root=paired,width=1", "width='1' is not valid; width: root=paired"),
    ("ministeel", "mcts:root=paired,z=-1", "z='-1' is not valid"),
    ("ministeel", "mcts:root=paired,z=nan", "z='nan' is not valid"),
    ("ministeel", "mcts:root=paired,gain=-0.1", "gain='-0.1' is not valid; gain: root=paired: the least"),
    ("ministeel", "mcts:root=leaf", "root='leaf' is not valid; root: tree .*or paired"),
    ("ministeel", "mcts:prior=zoo:ministeel,target=improved", "target=improved does not apply to root=tree; valid "
                                                               "there: visits, move"),
    ("ministeel", "mcts:z=3,width=4", "width, z only apply to root=paired"),
    ("ministeel", "mcts:root=tree,gain=0.1", "gain only apply to root=paired"),
    ("ministeel", "mcts:root=paired,target=soft", "target='soft' is not valid; target: .*visits.*move.*improved"),
    ("ministeel", "mcts:root=paired,prior=zoo:ministeel,sure=0", "sure='0' is not valid; sure: root=paired"),
    ("ministeel", "mcts:root=paired,prior=zoo:ministeel,sure=1.5", "sure='1.5' is not valid"),
    ("ministeel", "mcts:prior=zoo:ministeel,sure=0.9", "sure only apply to root=paired"),
    ("ministeel", "mcts:root=paired,prior=heuristic,sure=0.9", "sure=0.9 needs a prior that gives probabilities.*"
                                                               "only names its move"),
    ("ministeel", "mcts:root=paired,prior=none,sure=0.9", "sure=0.9 needs a prior that gives probabilities.*is none"),
])
def test_bad_paired_options_are_refused(game_name, spec, message):
    game = get_game(game_name)
    with pytest.raises(ValueError, match=message):
        load_bot(spec, game, {"num_players": 4} if game_name != "tiny_minotaur" else None)


class _SeatRecorder(BotBase):
    """A rollout policy reading the state (``act_state``) that records the seats it moved for."""

    def __init__(self, name):
        self.name, self.seats = name, set()

    def act_state(self, state, seat, legal):
        self.seats.add(seat)
        return legal[0]


@pytest.mark.parametrize("root", ["tree", "paired"])
def test_others_roll_out_the_other_seats_with_their_own_policy(root):
    """others=SPEC: the searching seat's rollout moves come from rollout=, every other seat's from others=."""
    game, config, state = _ministeel_position()
    seat = game.rules.current_seat(state)
    mine, theirs = _SeatRecorder("mine"), _SeatRecorder("theirs")
    options = parse_options(f"mcts:sims=12,root={root},rollout=mine,others=theirs,prior=none,depth=0", "ministeel")
    bot = MCTSBot(game, config, 0, options, lambda spec, game, config, seed: {"mine": mine, "theirs": theirs}[spec])
    bot.observe_information_state(game.rules.information_state(state, seat), seat)
    legal = game.rules.legal_actions(state)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    bot.act({"observation": np.zeros(game.encoder.observation_size(config), np.float32), "action_mask": mask})
    assert mine.seats == {seat}
    assert theirs.seats == set(range(4)) - {seat}


def test_others_defaults_to_the_rollout_policy_and_refuses_what_rollout_refuses():
    game = get_game("ministeel")
    assert parse_options("mcts", "ministeel").others == "rollout"
    with pytest.raises(ValueError, match="an mcts others policy cannot itself be mcts"):
        load_bot("mcts:others=mcts", game, {"num_players": 4})
    with pytest.raises(ValueError, match="others policy cannot be an external program"):
        load_bot("mcts:others=cmd:python3 x.py", game, {"num_players": 4})
    with pytest.raises(ValueError, match="no zoo bot for 'nothing'"):
        load_bot("mcts:others=zoo:nothing", game, {"num_players": 4})


@pytest.mark.parametrize("game_name", ["ministeel", "wyvern", "tiny_minotaur"])
def test_paired_search_plays_whole_games_in_process_and_served(game_name):
    """root=paired plays legal whole games wherever bots go: in the match loop, and as a served program
    (the protocol hands it the information state). Wyvern's long games are cut: rollouts stop after 10
    decisions and the zoo bot's value head scores them (one batch of every seat of every rollout)."""
    players = {} if game_name == "tiny_minotaur" else {"num_players": 4}
    seats = 2 if game_name == "tiny_minotaur" else 4
    cut = f"value=zoo:{game_name},depth=10" if game_name == "wyvern" else "depth=0"
    spec = f"mcts:12,root=paired,prior=zoo:{game_name},rollout=zoo:{game_name},{cut}"
    local = play_match(game_name, [spec] + ["heuristic"] * (seats - 1), seats, seed=2, config=players)
    assert local.games == seats and sum(row.wins + row.draws + row.losses for row in local.rows) == seats * seats
    if game_name == "ministeel":
        # The same games served and in process under seeding v1, where both keep the entry's seed; under v2 a
        # program is reseeded every game and an in-process bot once a deal (eval/deals.py), other draws.
        local = play_match(game_name, [spec] + ["heuristic"] * (seats - 1), seats, seed=2, config=players,
                           seeding="v1")
        served = play_match(game_name, [f"cmd:tavernzoo bot {spec}"] + ["heuristic"] * (seats - 1), seats, seed=2,
                            config=players, seeding="v1")
        assert [row.wins for row in served.rows] == [row.wins for row in local.rows]  # the same games


@pytest.mark.parametrize("least, leaves", [(0.0, True), (0.005, True), (0.02, False)])
def test_a_tiny_sure_gain_leaves_the_priors_move_only_above_the_least_gain(least, leaves):
    """A candidate that gains exactly 0.01 on every sample (as value-head scores of rollouts cut short can)
    has no spread, so any z passes it; gain= is the least mean gain that may still replace the prior's move."""
    game, config, state = _ministeel_position()
    seat = game.rules.current_seat(state)
    bot = load_bot(f"mcts:sims=24,root=paired,prior=zoo:ministeel,rollout=random,depth=0,gain={least}", game,
                   config, 1)
    # each sample's copies in candidate order: the second candidate ahead by 0.01, the third level with the base
    bot._rollouts = lambda states: [[0.5 + (0.01 if index % 3 == 1 else 0.0)] * 4 for index in range(len(states))]
    legal = game.rules.legal_actions(state)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    observation = np.zeros(game.encoder.observation_size(config), np.float32)
    game.make_observer().encode(state, seat, observation)
    bot.observe_information_state(game.rules.information_state(state, seat), seat)
    move = bot.act({"observation": observation, "action_mask": mask})
    search = bot.last_search
    runner_up = [a for a, g in search["gains"].items() if g == pytest.approx(0.01)]
    assert len(runner_up) == 1 and move == (runner_up[0] if leaves else search["base"])


def test_paired_rollouts_cut_at_depth_are_scored_by_the_value_head_in_one_batch():
    """depth=D with value=BOT: every rollout stops after D decisions and one call scores every seat of every
    unfinished rollout; the search's means are then the value head's."""
    game, config, state = _ministeel_position()
    seat = game.rules.current_seat(state)
    fake = _OneMoveFancier(game.rules.legal_actions(state)[0])
    zoo = load_bot("zoo:ministeel", game, config)
    options = parse_options("mcts:sims=24,root=paired,prior=zoo,rollout=zoo,value=fake,depth=3", "ministeel")
    bot = MCTSBot(game, config, 0, options, lambda spec, game, config, seed: fake if spec == "fake" else zoo)
    legal = game.rules.legal_actions(state)
    mask = np.zeros(len(game.action_names(config)), dtype=np.int8)
    mask[legal] = 1
    bot.observe_information_state(game.rules.information_state(state, seat), seat)
    bot.act({"observation": np.zeros(game.encoder.observation_size(config), np.float32), "action_mask": mask})
    search = bot.last_search
    assert search["samples"] == 8 and fake.asked_values == 1  # one round of 8 samples x 3 moves, one batch
    assert search["means"] == pytest.approx({a: 0.5 for a in search["means"]})
    assert search["gains"] == pytest.approx({a: 0.0 for a in search["gains"]})
