"""Self-play training: the learner's view, reward attribution, masks, the league, checkpoints and resume."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402

from tavernzoo.agents import load_bot  # noqa: E402
from tavernzoo.agents.base import BotBase, keeps_game_state, legal_actions  # noqa: E402
from tavernzoo.agents.policy import MLPPolicy, PolicyBot  # noqa: E402
from tavernzoo.envs import games, get_game  # noqa: E402
from tavernzoo.eval.match import play_match  # noqa: E402
from tavernzoo.train.config import TrainConfig, make_train_config  # noqa: E402
from tavernzoo.train.evaluate import play_policy_match  # noqa: E402
from tavernzoo.train.lean_policy import LeanMaskablePolicy, TorchActor  # noqa: E402
from tavernzoo.train.run import make_model, policy_from_sb3  # noqa: E402
from tavernzoo.train.selfplay import League, LearnerEnv, Opponent, SelfPlayVecEnv  # noqa: E402

TM = get_game("tiny_minotaur")
torch.set_num_threads(1)  # tiny networks: more threads only fight over the cores


def league_for(game, game_config, **options) -> League:
    config = TrainConfig(game=game.name, pool_bots=("random",), latest_share=0.0, **options)
    return League.create(game, game_config, config)


def test_learner_env_passes_sb3_check_env():
    config = TM.make_config()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(LearnerEnv(TM, config, league_for(TM, config), seed=0))


@pytest.mark.parametrize("make", ["single", "vector"])
def test_the_reward_is_the_learners_own(make):
    """The final reward equals the game's result for the learner's seat, never the opponent's."""
    config = TM.make_config(starting_hp=30)
    league = league_for(TM, config)
    picker = random.Random(0)
    outcomes = set()
    if make == "single":
        env = LearnerEnv(TM, config, league, seed=1)
        for episode in range(60):
            _, _ = env.reset(seed=episode)
            done, total = False, 0.0
            while not done:
                legal = np.flatnonzero(env.action_masks())
                _, reward, terminated, truncated, _ = env.step(int(picker.choice(legal)))
                total += reward
                done = terminated or truncated
            seat = env.seat
            winner = seat.env.game_state.winner
            expected = 0.0 if winner < 0 else (1.0 if seat.env.possible_agents[winner] == seat.learner else -1.0)
            assert total == expected
            outcomes.add(expected)
    else:
        env = SelfPlayVecEnv(TM, config, league, n_envs=4, seed=3)
        env.reset()
        totals = np.zeros(4)
        finished = 0
        while finished < 60:
            masks = env.action_masks()
            actions = np.array([picker.choice(np.flatnonzero(m)) for m in masks])
            seats_before = [(s.learner, s.env) for s in env.seats]
            _, rewards, dones, infos = env.step(actions)
            totals += rewards
            for i in np.flatnonzero(dones):
                learner, game_env = seats_before[i]
                # the seat was reset already; its finished game is the one reported in the info
                assert infos[i]["episode"]["r"] == totals[i]
                assert totals[i] in (-1.0, 0.0, 1.0)
                outcomes.add(float(totals[i]))
                totals[i] = 0.0
                finished += 1
    assert {-1.0, 1.0} <= outcomes  # both a win and a loss were seen and attributed


def test_potential_based_shaping_telescopes_to_the_game_result():
    """With gamma 1 the shaped rewards of an episode sum to the game's result minus the potential at the
    learner's first decision: shaping moves credit earlier without changing what is optimal."""
    config = TM.make_config()
    league = League.create(TM, config, TrainConfig(pool_bots=("random",), latest_share=0.0, shaping=0.5, gamma=1.0))
    env = LearnerEnv(TM, config, league, seed=4)
    picker = random.Random(1)
    shaped_somewhere = False
    for episode in range(40):
        env.reset(seed=episode)
        start = env.seat._last_potential
        done, total = False, 0.0
        while not done:
            _, reward, terminated, truncated, _ = env.step(int(picker.choice(np.flatnonzero(env.action_masks()))))
            total += reward
            shaped_somewhere |= reward not in (-1.0, 0.0, 1.0)
            done = terminated or truncated
        assert total == pytest.approx(env.seat.episode_return - 0.5 * start)
        assert env.seat.episode_return in (-1.0, 0.0, 1.0)
    assert shaped_somewhere


def test_policy_extraction_matches_the_sb3_policy_and_honours_masks():
    config = TM.make_config()
    league = league_for(TM, config)
    env = SelfPlayVecEnv(TM, config, league, n_envs=8, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32, 32]})
    model.learn(256)
    policy = policy_from_sb3(model.policy, {"env": TM.env_name})
    observations, masks = [], []
    obs = env.reset()
    while len(observations) < 1000:
        mask = env.action_masks()
        observations.append(obs)
        masks.append(mask)
        actions, _ = model.predict(obs, action_masks=mask, deterministic=True)
        obs, _, _, _ = env.step(actions)
    observations, masks = np.concatenate(observations), np.concatenate(masks)
    sb3_actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
    assert np.array_equal(policy.act(observations, masks), sb3_actions)
    assert masks[np.arange(len(masks)), policy.act(observations, masks, np.random.default_rng(0), False)].all()


def test_a_policy_never_picks_a_masked_action_even_when_it_prefers_it():
    weights = [np.zeros((3, 4), np.float32)]
    biases = [np.array([100.0, 0.0, -5.0], np.float32)]  # action 0 is by far the favourite
    policy = MLPPolicy(weights, biases, "tanh", {})
    masks = np.array([[0, 1, 1]] * 50, dtype=np.int8)
    observations = np.zeros((50, 4), np.float32)
    assert set(policy.act(observations, masks).tolist()) == {1}
    sampled = policy.act(observations, masks, np.random.default_rng(1), deterministic=False)
    assert 0 not in sampled
    with pytest.raises(ValueError, match="all-zero"):
        policy.act(observations[:1], np.zeros((1, 3), np.int8))


def test_league_sampling_window_pfsp_and_persistence(tmp_path):
    config = TM.make_config()
    train_config = TrainConfig(pool_bots=("random", "heuristic"), snapshot_window=2, latest_share=0.8)
    league = League.create(TM, config, train_config)
    policy = MLPPolicy([np.zeros((8, 65), np.float32)], [np.zeros(8, np.float32)], "tanh", {"env": TM.env_name})
    league.set_latest(policy)
    for step in (10, 20, 30):
        league.add_snapshot(policy, step)
    assert [o.name for o in league.snapshots] == ["snapshot@20", "snapshot@30"]
    draws = [league.sample().name for _ in range(4000)]
    assert 0.77 < draws.count("latest") / len(draws) < 0.83
    league.builtins[0].games, league.builtins[0].score = 100, 95.0  # the learner beats random
    league.builtins[1].games, league.builtins[1].score = 100, 20.0  # and loses to the heuristic
    league.config.pfsp = True
    league.config.latest_share = 0.0
    draws = [league.sample().name for _ in range(4000)]
    assert draws.count("heuristic") > 10 * draws.count("random")
    league.save(tmp_path / "league")
    again = League.create(TM, config, train_config)
    again.load(tmp_path / "league")
    assert [o.name for o in again.snapshots] == ["snapshot@20", "snapshot@30"]
    assert again.builtins[1].score == 20.0 and again.rng.getstate() == league.rng.getstate()


class GameRecorder(BotBase):
    """A league bot that keeps its game's story (so each seat of each game gets its own copy); plays its
    first legal action."""

    def __init__(self):
        self.heard, self.closed = [], False

    def begin_game(self, seat, seed=None):
        self.heard.append("begin")

    def act(self, observation):
        self.heard.append("act")
        return legal_actions(observation, "recorder")[0]

    def game_over(self, returns, seat):
        self.heard.append("over")

    def close(self):
        self.closed = True


@pytest.mark.parametrize("name, options", [("tiny_minotaur", {}), ("ministeel", {"num_players": 4})])
def test_a_league_bot_that_keeps_its_games_state_hears_each_game_whole_one_copy_a_seat(name, options):
    game = get_game(name)
    config = game.make_config(options)
    made = []

    def load(seed=None):
        made.append(GameRecorder())
        return made[-1]

    assert keeps_game_state(GameRecorder()) and not keeps_game_state(load_bot("random", game, config))
    league = League(TrainConfig(game=name, latest_share=0.0), random.Random(0),
                    builtins=[Opponent("recorder", bot=load(0), load=load, one_game_at_a_time=True)])
    env = SelfPlayVecEnv(game, config, league, n_envs=3, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    for step in range(150):
        masks = env.action_masks()
        actions = [rng.choice(np.flatnonzero(mask)) for mask in masks]
        if step % 40 == 0 and not masks[0].all():  # an illegal move cuts the game short
            actions[0] = np.flatnonzero(~masks[0])[0]
        env.step(np.array(actions))
    league.close()
    loaded, *copies = made
    assert loaded.heard == [] and loaded.closed  # loaded for the league; its copies take the seats
    seats = game.rules.num_seats(config) - 1
    assert len(copies) == 3 * seats  # one for each seat of each game
    for copy in copies:
        assert re.fullmatch("(begin (act )*over )+", " ".join(copy.heard) + " "), copy.heard
        assert copy.heard.count("act") > 0 and copy.closed


def test_bad_training_options_are_refused():
    with pytest.raises(ValueError, match="unknown training option.*n_env\\b"):
        make_train_config("tiny_minotaur", overrides={"n_env": 4})
    with pytest.raises(ValueError, match=r'num_players is a game option of ministeel: '
                                         r'--set game_config=\{"num_players": \.\.\.\}\)$'):
        make_train_config("ministeel", overrides={"num_players": 3})
    with pytest.raises(ValueError, match="latest_share"):
        TrainConfig(latest_share=1.5)
    with pytest.raises(ValueError, match="timesteps"):
        TrainConfig(timesteps=0)
    with pytest.raises(ValueError, match=r"eval_seeding='v3' is not a seed scheme; valid: v1, v2 \(v1 deprecated\)"):
        TrainConfig(eval_seeding="v3")
    assert TrainConfig().eval_seeding == "v2"
    with pytest.raises(ValueError, match="opponent_draw='game' is not a way to draw opponents; valid: seat, table"):
        TrainConfig(opponent_draw="game")
    assert TrainConfig().opponent_draw == "seat"


@pytest.mark.parametrize("game", sorted(games()))
def test_each_games_default_run_is_its_recipe_file(game):
    """train/recipes/<game>.toml holds the default run; every key of it is a training option that holds."""
    from tavernzoo.train.config import RECIPES, game_defaults

    recipe = game_defaults(game)
    assert (RECIPES / f"{game}.toml").is_file() and recipe["timesteps"] > 0
    config = make_train_config(game)
    for key, value in recipe.items():
        assert getattr(config, key) == value
    assert make_train_config(game, overrides={"timesteps": 1234}).timesteps == 1234  # --set wins over it


def test_a_game_without_a_recipe_trains_with_the_general_defaults_and_a_bad_recipe_is_named(tmp_path, monkeypatch):
    from tavernzoo.train import config as config_module

    monkeypatch.setattr(config_module, "RECIPES", tmp_path)
    assert make_train_config("minefield").timesteps == TrainConfig().timesteps
    (tmp_path / "minefield.toml").write_text("[train]\ntimestep = 5\n")
    with pytest.raises(ValueError, match=r"recipe minefield.toml: unknown training option\(s\) timestep"):
        make_train_config("minefield")
    (tmp_path / "minefield.toml").write_text("[train\n")
    with pytest.raises(ValueError, match="recipe minefield.toml is not a TOML file"):
        make_train_config("minefield")


def test_a_policy_bot_refuses_another_games_checkpoint(tmp_path):
    policy = MLPPolicy([np.zeros((8, 65), np.float32)], [np.zeros(8, np.float32)], "tanh", {"env": "other_v0"})
    policy.save(tmp_path)
    with pytest.raises(ValueError, match="other_v0"):
        PolicyBot(TM.make_config(), 0, tmp_path, TM)


TINY = ["--set", "n_envs=4", "--set", "n_steps=64", "--set", "batch_size=64", "--set", "checkpoint_every=256",
        "--set", "snapshot_every=256", "--set", "eval_games=8", "--set", "net_arch=[16]", "--no-progress"]


def tavernzoo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tavernzoo.cli", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("game", sorted(games()))
def test_train_checkpoint_resume_and_evaluate_end_to_end(game, tmp_path):
    run = tmp_path / "run"
    # A Wyvern learner's episode runs to a few hundred decisions: two games of 256 see some end, four of 128
    # may see none (a matter of the draws).
    tiny = [*TINY, "--set", "n_envs=2", "--set", "n_steps=128"] if game == "wyvern" else TINY
    first = tavernzoo("train", game, "--timesteps", "512", "--out", str(run), *tiny)
    assert first.returncode == 0, first.stderr[-3000:]
    latest = (run / "checkpoints" / "latest").read_text().strip()
    metrics = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())
    assert metrics["timesteps"] >= 512 and metrics["episodes"] > 0
    assert (run / "checkpoints" / latest / "policy.npz").is_file()
    assert list((run / "tb").rglob("events.out.tfevents.*")), "TensorBoard logs are written"
    second = tavernzoo("train", "--resume", str(run), "--timesteps", "1024", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    resumed = (run / "checkpoints" / "latest").read_text().strip()
    assert int(resumed.split("_")[1]) >= 1024 > int(latest.split("_")[1])
    report = json.loads((run / "report.json").read_text())
    assert set(report["against"]) == {"random", "heuristic"} and report["timesteps"] >= 1024
    assert (report["results_version"], report["seeding"]) == (2, "v2")
    seats = get_game(game).rules.num_seats(get_game(game).make_config(TrainConfig().game_config
                                                                        if game == "tiny_minotaur" else
                                                                        make_train_config(game).game_config))
    match = tavernzoo("match", game, "--bots", str(run), *["random"] * (seats - 1), "--games", str(seats),
                      "--no-progress", *sum((["--set", f"{k}={json.dumps(v)}"] for k, v in
                                             make_train_config(game).game_config.items()), []))
    assert match.returncode == 0, match.stderr[-3000:]
    assert "checkpoints" not in match.stderr


def test_a_resumed_run_takes_new_update_options_and_keeps_them(tmp_path):
    """``--resume DIR --set learning_rate=...`` trains on with the new rate (the saved model's, not only the
    stored config's) and stores it, so that a later resume keeps it; ``--set latest_share=0`` takes the
    learner's latest self out of the opponent seats from then on, ``--set pool_bots=heuristic`` leaves the
    heuristic (with its record) as the pool's only bot; ``--set snapshot_every=...`` above the run's length
    adds no snapshot from then on, ``--set checkpoint_every=...`` sets the checkpoints' cadence; ``--set
    eval_games=0`` skips the final report and ``--set opponent_draw=table`` draws whole tables."""
    run = tmp_path / "run"
    first = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads((run / "config.json").read_text())["learning_rate"] == 3e-4
    before = json.loads((run / "checkpoints" / (run / "checkpoints" / "latest").read_text().strip()
                         / "metrics.json").read_text())["league"]
    assert before["latest"]["games"] > 0, before
    second = tavernzoo("train", "--resume", str(run), "--timesteps", "1024", "--set", "learning_rate=1e-4",
                       "--set", "ent_coef=0", "--set", "latest_share=0", "--set", "pool_bots=heuristic",
                       "--set", "snapshot_every=100000", "--set", "checkpoint_every=512", "--set", "eval_games=0",
                       "--set", "opponent_draw=table", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "no final report (eval_games=0)" in second.stdout
    stored = json.loads((run / "config.json").read_text())
    assert (stored["eval_games"], stored["opponent_draw"]) == (0, "table")
    assert (stored["learning_rate"], stored["ent_coef"], stored["latest_share"], stored["pool_bots"],
            stored["snapshot_every"], stored["checkpoint_every"], stored["net_arch"]) == (
        1e-4, 0, 0, ["heuristic"], 100000, 512, [16])
    latest = (run / "checkpoints" / "latest").read_text().strip()
    written = sorted(int(path.name.split("_")[1]) for path in (run / "checkpoints").glob("step_*"))
    resumed_at = max(step for step in written if step < 512)
    assert [step for step in written if step > resumed_at] == [512, 1024], (written, "every 512 steps, not 256")
    with zipfile.ZipFile(run / "checkpoints" / latest / "model.zip") as saved:
        data = json.loads(saved.read("data"))
    assert (data["learning_rate"], data["ent_coef"]) == (1e-4, 0)
    assert "latest_share" not in data, "a league option is not handed to PPO"
    after = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())["league"]
    assert "random" in before and "random" not in after, (before, after)
    played = {name: after[name]["games"] - before.get(name, {"games": 0})["games"] for name in after}
    assert played.pop("latest") == 0 and played.pop("heuristic") > 0, (before, after)
    assert all(name.startswith("snapshot@") for name in played), "the snapshots stay, no other bot is left"
    snapshots = sorted(int(name.split("@")[1]) for name in after if name.startswith("snapshot@"))
    assert snapshots and max(snapshots) <= resumed_at, ("no snapshot after the resume", snapshots)


def test_a_copied_run_resumed_logs_into_its_own_directory(tmp_path):
    """A run copied to another directory (to train on from one of its checkpoints beside the original) and
    resumed there writes its TensorBoard logs there: the original's logs stay the original's."""
    run, copy = tmp_path / "run", tmp_path / "copy"
    first = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("tb"))
    logs = sorted(path.name for path in (run / "tb").rglob("events.out.tfevents.*"))
    second = tavernzoo("train", "--resume", str(copy), "--timesteps", "512", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    assert sorted(path.name for path in (run / "tb").rglob("events.out.tfevents.*")) == logs
    assert list((copy / "tb").rglob("events.out.tfevents.*")), "the copy's resume logs into the copy"


def test_a_resumed_run_may_change_how_many_games_it_plays_at_once_and_for_how_long(tmp_path):
    """``--resume DIR --set n_envs=... --set n_steps=...`` trains on with updates of the new size (the saved
    model's buffer, not only the stored config), stores them, and keeps the league's record: a fine-tune
    near a plateau wants larger updates (docs/training.md) without starting a run over."""
    run = tmp_path / "run"
    first = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    latest = (run / "checkpoints" / "latest").read_text().strip()
    before = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())["league"]
    second = tavernzoo("train", "--resume", str(run), "--timesteps", "768", "--set", "n_envs=2", "--set",
                       "n_steps=128", "--set", "batch_size=128", "--set", "eval_games=0", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    stored = json.loads((run / "config.json").read_text())
    assert (stored["n_envs"], stored["n_steps"], stored["batch_size"]) == (2, 128, 128)
    latest = (run / "checkpoints" / "latest").read_text().strip()
    assert int(latest.split("_")[1]) >= 768
    with zipfile.ZipFile(run / "checkpoints" / latest / "model.zip") as saved:
        data = json.loads(saved.read("data"))
    assert (data["n_envs"], data["n_steps"], data["batch_size"]) == (2, 128, 128)
    after = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())["league"]
    assert after["latest"]["games"] > before["latest"]["games"] > 0, (before, after)


def test_a_resume_with_a_smaller_snapshot_window_keeps_the_newest_snapshots(tmp_path):
    """``--resume DIR --set snapshot_window=2`` drops the oldest snapshots at the resume (the newest two stay,
    records and all) and stores the window, so that a later resume keeps it."""
    run = tmp_path / "run"
    first = tavernzoo("train", "--timesteps", "1024", "--out", str(run), *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    latest = (run / "checkpoints" / "latest").read_text().strip()
    before = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())["league"]
    saved = sorted(int(name.split("@")[1]) for name in before if name.startswith("snapshot@"))
    assert len(saved) >= 3, ("the run needs more snapshots than the new window", before)
    second = tavernzoo("train", "--resume", str(run), "--timesteps", "1280", "--set", "snapshot_window=2",
                       "--set", "snapshot_every=100000", "--no-progress")
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads((run / "config.json").read_text())["snapshot_window"] == 2
    latest = (run / "checkpoints" / "latest").read_text().strip()
    after = json.loads((run / "checkpoints" / latest / "metrics.json").read_text())["league"]
    kept = sorted(int(name.split("@")[1]) for name in after if name.startswith("snapshot@"))
    assert kept == saved[-2:], (saved, kept)
    assert all(after[f"snapshot@{step}"]["games"] >= before[f"snapshot@{step}"]["games"] for step in kept)
    league = json.loads((run / "checkpoints" / latest / "league" / "league.json").read_text())
    assert [entry["name"] for entry in league["snapshots"]] == [f"snapshot@{step}" for step in kept]


def test_train_says_who_the_learner_will_play(tmp_path):
    """The console names the league before training: the latest self's share, the pool, the snapshots of the
    learner that join it (the default cadence adds them, so a pool of heuristics alone is mostly the learner's
    recent selves), how tables are drawn; a resume says it again with its changed options."""
    def said(*args: str) -> str:
        done = tavernzoo("train", *args)
        assert done.returncode == 0, done.stderr[-3000:]
        return next(line for line in done.stdout.splitlines() if line.startswith("opponents:"))

    run = tmp_path / "run"
    assert said("--timesteps", "512", "--out", str(run), *TINY, "--set", "latest_share=0", "--set",
                "pool_bots=heuristic") == ("opponents: its latest self in 0% of the draws; the rest from heuristic "
                                           "and its last 5 snapshots (one every 256 steps), each alike; seat by seat")
    assert said("--resume", str(run), "--timesteps", "768", "--set", "snapshot_every=100000000", "--set",
                "opponent_draw=table", "--no-progress") == (
        "opponents: its latest self in 0% of the draws; the rest from heuristic and its 2 saved snapshots (no new "
        "one: snapshot_every=100,000,000 is past --timesteps), each alike; one draw for all of a game's opponent "
        "seats")
    assert said("--timesteps", "256", "--out", str(tmp_path / "fresh"), *TINY, "--set", "snapshot_every=1000",
                "--set", "pfsp=true", "--set", "pool_bots=random,heuristic") == (
        "opponents: its latest self in 80% of the draws; the rest from random, heuristic and no snapshots "
        "(snapshot_every=1,000 is past --timesteps), weighted by PFSP; seat by seat")


def test_train_warns_when_a_batch_is_more_than_a_rollout(tmp_path):
    """SB3 takes a whole rollout as one batch where ``batch_size`` is larger, without a word; ``train`` says so
    (and says nothing where the batch fits)."""
    big = tavernzoo("train", "--timesteps", "256", "--out", str(tmp_path / "big"), *TINY, "--set", "batch_size=512")
    assert big.returncode == 0, big.stderr[-3000:]
    assert ("updates: batch_size=512 is more than a rollout holds (n_envs=4 x n_steps=64 = 256 decisions), so "
            "each of the n_epochs=4 passes is one batch of 256") in big.stdout.splitlines(), big.stdout
    fits = tavernzoo("train", "--timesteps", "256", "--out", str(tmp_path / "fits"), *TINY)
    assert fits.returncode == 0 and "updates:" not in fits.stdout, fits.stdout


def test_a_bot_a_resume_left_out_of_the_pool_is_still_one_the_run_trained_against(tmp_path):
    """``--resume DIR --set pool_bots=...`` without a bot the run met: the checkpoints keep that bot's record
    (``retired`` in league.json), so ``match`` still says the result trained against it; put back in the pool,
    it takes its record up again."""
    from tavernzoo.agents.export import training_opponents

    run = tmp_path / "run"
    trained = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY, "--set", "latest_share=0",
                        "--set", "pool_bots=zoo:tiny_minotaur,heuristic")
    assert trained.returncode == 0, trained.stderr[-3000:]
    met = training_opponents(str(run), "tiny_minotaur")["zoo:tiny_minotaur"]
    assert met > 0
    narrowed = tavernzoo("train", "--resume", str(run), "--timesteps", "512", "--set", "pool_bots=heuristic",
                         "--set", "eval_games=0", "--no-progress")
    assert narrowed.returncode == 0, narrowed.stderr[-3000:]
    assert training_opponents(str(run), "tiny_minotaur")["zoo:tiny_minotaur"] == met
    said = tavernzoo("match", "tiny_minotaur", "--bots", str(run), "zoo:tiny_minotaur", "--games", "2",
                     "--no-progress")
    assert said.returncode == 0 and f"trained against zoo:tiny_minotaur ({met:,} games" in said.stderr, said.stderr
    widened = tavernzoo("train", "--resume", str(run), "--timesteps", "768", "--set",
                        "pool_bots=zoo:tiny_minotaur,heuristic", "--set", "eval_games=0", "--no-progress")
    assert widened.returncode == 0, widened.stderr[-3000:]
    latest = (run / "checkpoints" / "latest").read_text().strip()
    league = json.loads((run / "checkpoints" / latest / "league" / "league.json").read_text())
    assert league["retired"] == [], league["retired"]
    assert training_opponents(str(run), "tiny_minotaur")["zoo:tiny_minotaur"] > met


def test_match_and_tournament_say_where_a_bot_trained_against_a_network_seated_beside_it(tmp_path):
    """A run whose league held ``zoo:tiny_minotaur`` is measured against it: ``match`` and ``tournament`` say
    so on stderr, with the games its league gave that bot, also where the run guides a search; not against
    another network file, nor against a rule bot of its pool (every network meets those); the exported bot
    keeps its pool in its manifest and is said to have met it too."""
    from tavernzoo.agents.export import training_opponents

    run = tmp_path / "run"
    trained = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY, "--set", "latest_share=0",
                        "--set", "pool_bots=zoo:tiny_minotaur,heuristic")
    assert trained.returncode == 0, trained.stderr[-3000:]
    met = training_opponents(str(run), "tiny_minotaur")
    assert set(met) == {"zoo:tiny_minotaur", "heuristic"} and met["zoo:tiny_minotaur"] > 0, met
    games = f"{met['zoo:tiny_minotaur']:,} games"

    def notes(*args: str) -> list[str]:
        done = tavernzoo(*args, "--no-progress")
        assert done.returncode == 0, done.stderr[-3000:]
        return [line for line in done.stderr.splitlines() if "trained against" in line]

    said = notes("match", "tiny_minotaur", "--bots", str(run), "zoo:@sample", "--games", "2")
    assert said == [f"note: {run} trained against zoo:@sample ({games} of its training league): its score "
                    "against zoo:@sample is a response trained on that bot, not a stranger's measure "
                    "(docs/strength.md)"], said
    assert len(notes("match", "tiny_minotaur", "--bots", f"mcts:sims=4,prior={run}", "zoo:tiny_minotaur",
                     "--games", "2")) == 1
    assert notes("match", "tiny_minotaur", "--bots", str(run), "zoo:tiny_minotaur_yardstick", "--games", "2") == []
    assert notes("match", "tiny_minotaur", "--bots", str(run), "heuristic", "--games", "2") == []
    assert len(notes("tournament", "tiny_minotaur", "--bots", str(run), "zoo:tiny_minotaur", "--games", "2",
                     "--out", str(tmp_path / "t"), "--no-plot")) == 1
    exported = tavernzoo("export", str(run), "--out", str(tmp_path / "bot.onnx"))
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert training_opponents(str(tmp_path / "bot.onnx")) == met  # its manifest's training_league
    assert notes("match", "tiny_minotaur", "--bots", str(tmp_path / "bot.onnx"), "zoo:tiny_minotaur",
                 "--games", "2") == [f"note: {tmp_path / 'bot.onnx'} trained against zoo:tiny_minotaur ({games} "
                                     "of its training league): its score against zoo:tiny_minotaur is a response "
                                     "trained on that bot, not a stranger's measure (docs/strength.md)"]
    # A bot exported before manifests carried the league's record names its last pool, without counts.
    assert training_opponents("zoo:wyvern", "wyvern") == {"heuristic": None, "zoo:wyvern_2026_12_01": None}
    legacy = notes("match", "wyvern", "--set", "num_players=4", "--bots", "zoo:wyvern", "zoo:wyvern_2026_12_01",
                   "heuristic", "heuristic", "--games", "1")
    assert legacy == ["note: zoo:wyvern trained against zoo:wyvern_2026_12_01 (its training pool): its score against "
                      "zoo:wyvern_2026_12_01 is a response trained on that bot, not a stranger's measure "
                      "(docs/strength.md)"], legacy
    # A bot distilled by expert iteration names the bots its positions' games seated (provenance.expert.against)
    assert training_opponents("zoo:ministeel_2026_12_07", "ministeel")["zoo:ministeel_2026_12_02"] == 28000
    distilled = notes("match", "ministeel", "--set", "num_players=4", "--bots", "zoo:ministeel_2026_12_07",
                      "zoo:ministeel_2026_12_02", "heuristic", "heuristic", "--games", "1")
    assert distilled == ["note: zoo:ministeel_2026_12_07 trained against zoo:ministeel_2026_12_02 (28,000 games of its "
                         "training league): its score against zoo:ministeel_2026_12_02 is a response trained on that "
                         "bot, not a stranger's measure (docs/strength.md)"], distilled
    # ... and one trained on from it by PPO the games of its league (the critic fitted afterwards adds none)
    assert training_opponents("zoo:ministeel", "ministeel") == {"heuristic": 1466752,
                                                                "zoo:ministeel_2026_12_02": 186451}


def test_a_blend_met_what_its_ends_met(tmp_path):
    """``tavernzoo blend``: the blend's record of its training opponents is its two ends' (one end met
    ``zoo:tiny_minotaur``, the other is the heuristic's clone), and ``match`` says so."""
    from tavernzoo.agents.export import training_opponents

    first = tmp_path / "first"
    trained = tavernzoo("train", "--timesteps", "256", "--out", str(first), *TINY, "--set", "latest_share=0",
                        "--set", "pool_bots=zoo:tiny_minotaur,heuristic")
    assert trained.returncode == 0, trained.stderr[-3000:]
    checkpoints = sorted(path for path in (first / "checkpoints").iterdir() if path.name.startswith("step_"))
    blended = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "blend", str(checkpoints[-1]), str(first),
                              "--weight", "0.5", "--out", str(tmp_path / "blend")], capture_output=True, text=True,
                             timeout=600)
    assert blended.returncode == 0, blended.stderr[-3000:]
    met = training_opponents(str(first), "tiny_minotaur")["zoo:tiny_minotaur"]
    assert training_opponents(str(tmp_path / "blend"), "tiny_minotaur")["zoo:tiny_minotaur"] == met > 0
    said = tavernzoo("match", "tiny_minotaur", "--bots", str(tmp_path / "blend"), "zoo:tiny_minotaur", "--games",
                     "2", "--no-progress")
    assert said.returncode == 0 and f"trained against zoo:tiny_minotaur ({met:,} games" in said.stderr, said.stderr


def test_a_ppo_run_keeps_the_files_its_pool_met_through_a_resume(tmp_path):
    """A run's pool bot given as an ONNX path is recorded with its file's SHA-256; a resume keeps the digest
    its first start found (its games were against that file) even after another network is exported to the
    path and the resume's pool leaves it out; the run is then said to have met the zoo bot that holds the
    file met, and ``match`` says nothing against the new file at the old path."""
    import hashlib
    import shutil

    from tavernzoo.agents.export import training_opponents
    from tavernzoo.agents.onnx_bot import ZOO_DIR
    from tavernzoo.agents.policy import find_policy_dir

    met, run = tmp_path / "met.onnx", tmp_path / "run"

    def put(name: str) -> None:
        for suffix in (".onnx", ".json"):
            shutil.copy(ZOO_DIR / f"{name}{suffix}", met.with_suffix(suffix))

    put("tiny_minotaur")
    digest = hashlib.sha256(met.read_bytes()).hexdigest()
    trained = tavernzoo("train", "--timesteps", "256", "--out", str(run), *TINY, "--set", "latest_share=0",
                        "--set", f"pool_bots={met},heuristic")
    assert trained.returncode == 0, trained.stderr[-3000:]
    games = training_opponents(str(run), "tiny_minotaur")[str(met)]
    assert games > 0
    put("tiny_minotaur_yardstick")
    resumed = tavernzoo("train", "--resume", str(run), "--timesteps", "512", "--set", "pool_bots=heuristic",
                        "--set", "eval_games=0", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    meta = json.loads((find_policy_dir(run) / "policy.json").read_text())
    assert meta["networks"] == {str(met): digest}
    now = training_opponents(str(run), "tiny_minotaur")
    assert now.get("zoo:tiny_minotaur") == games and str(met) not in now, now
    # the bot now at that path is another network: no note (against zoo:tiny_minotaur there is one, as above)
    done = tavernzoo("match", "tiny_minotaur", "--bots", str(run), str(met), "--games", "2", "--no-progress")
    assert done.returncode == 0 and "trained against" not in done.stderr, done.stderr[-3000:]


def test_a_run_started_from_a_bot_has_met_what_that_bot_trained_against(tmp_path):
    """``--init BOT``: the new run's record of its training opponents includes the league of the run it started
    from (and of that run's start, and so on), so ``match`` says the descendant met that league's networks
    too, also once it is exported."""
    from tavernzoo.agents.export import training_opponents
    from tavernzoo.agents.policy import find_policy_dir

    first, second = tmp_path / "first", tmp_path / "second"
    trained = tavernzoo("train", "--timesteps", "256", "--out", str(first), *TINY, "--set", "latest_share=0",
                        "--set", "pool_bots=zoo:tiny_minotaur,heuristic")
    assert trained.returncode == 0, trained.stderr[-3000:]
    met = training_opponents(str(first), "tiny_minotaur")
    descended = tavernzoo("train", "--timesteps", "256", "--out", str(second), *TINY, "--init", str(first),
                          "--set", "latest_share=0", "--set", "pool_bots=heuristic")
    assert descended.returncode == 0, descended.stderr[-3000:]
    own = json.loads((find_policy_dir(second) / "league" / "league.json").read_text())["builtins"]
    assert [entry["name"] for entry in own] == ["heuristic"]  # its own league never held the file
    inherited = training_opponents(str(second), "tiny_minotaur")
    assert inherited["zoo:tiny_minotaur"] == met["zoo:tiny_minotaur"]
    assert inherited["heuristic"] == met["heuristic"] + own[0]["games"] > met["heuristic"]
    said = tavernzoo("match", "tiny_minotaur", "--bots", str(second), "zoo:tiny_minotaur", "--games", "2",
                     "--no-progress")
    assert said.returncode == 0, said.stderr[-3000:]
    assert f"trained against zoo:tiny_minotaur ({met['zoo:tiny_minotaur']:,} games" in said.stderr, said.stderr
    exported = tavernzoo("export", str(second), "--out", str(tmp_path / "bot.onnx"))
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert training_opponents(str(tmp_path / "bot.onnx"), "tiny_minotaur") == inherited


@pytest.mark.parametrize(("extra", "words"), [
    (["--set", "net_arch=8,8"], "--set net_arch cannot change in a resumed run"),
    (["--set", "shaping=0.1", "--set", "learning_rate=1e-4"], "--set shaping cannot change"),
    (["--set", "learning_rate=fast"], "learning_rate='fast' is not valid"),
    (["--set", "learning_rate=-1"], "learning_rate=-1 must be above 0"),
    (["--set", "ent_coef=-0.1"], "ent_coef=-0.1 must be 0 or more"),
    (["--set", "latest_share=1.5"], "latest_share=1.5 must lie between 0 and 1"),
    (["--set", "privileged_critic=true"], "--set privileged_critic cannot change"),
    (["--set", "snapshot_window=0"], "snapshot_window=0 must be"),
    (["--set", "pool_bots=zoo:wyvern"], "zoo:wyvern plays wyvern, not tiny_minotaur"),
    (["--seed", "3"], "--seed cannot change there"),
    (["--out", "elsewhere"], "--out cannot change there"),
    (["wyvern"], "is a tiny_minotaur run, not wyvern"),
])
def test_a_resume_refuses_what_it_cannot_change_in_one_line_and_writes_nothing(tmp_path, extra, words):
    (tmp_path / "config.json").write_text(json.dumps(TrainConfig().to_dict()))
    before = sorted(tmp_path.rglob("*")), (tmp_path / "config.json").read_bytes()
    done = tavernzoo("train", "--resume", str(tmp_path), *extra, "--no-progress")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error:") and words in done.stderr, done.stderr
    assert (sorted(tmp_path.rglob("*")), (tmp_path / "config.json").read_bytes()) == before


@pytest.mark.parametrize(("resume", "out"), [
    ("run", "run/"),
    ("run", "./run"),
    ("run", "{tmp}/run"),
    ("{tmp}/run/", "run"),
    ("run", "elsewhere/../run"),
])
def test_a_resume_takes_an_out_that_names_the_same_directory_however_it_is_written(tmp_path, resume, out):
    """``--out`` spelled differently from ``--resume`` (relative or absolute, a trailing slash, ``..``) but naming
    the same directory changes nothing, so it is no refusal; the resume goes on to its next check."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(TrainConfig().to_dict()))
    # net_arch cannot change: the resume stops at that check, after --out's, and trains nothing.
    done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", "--resume", resume.format(tmp=tmp_path),
                           "--out", out.format(tmp=tmp_path), "--set", "net_arch=8,8", "--no-progress"],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--set net_arch cannot change" in done.stderr and "--out" not in done.stderr, done.stderr


def test_a_fresh_run_with_a_pool_bot_of_another_game_writes_nothing(tmp_path):
    run = tmp_path / "run"
    result = tavernzoo("train", "ministeel", "--set", "pool_bots=heuristic,zoo:wyvern", "--out", str(run),
                       "--timesteps", "64", "--no-progress")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "zoo:wyvern plays wyvern, not ministeel" in result.stderr and not run.exists(), result.stderr


def test_a_fresh_run_refuses_to_overwrite_an_existing_one(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "latest").write_text("step_0000000001\n")
    result = tavernzoo("train", "--timesteps", "64", "--out", str(run), "--no-progress")
    assert result.returncode == 2 and "--resume" in result.stderr


# --- the lean rollout forward, the torch-evaluated opponents, the batched final report ---------------------


def trained_tiny_model(n_envs=8):
    config = TM.make_config()
    train_config = TrainConfig(n_envs=n_envs, n_steps=32, batch_size=64, net_arch=(32, 32))
    env = SelfPlayVecEnv(TM, config, league_for(TM, config), n_envs=n_envs, seed=0)
    model = make_model(train_config, env)
    model.learn(512)  # a few updates, so that the logits are not all alike
    return model, env


def test_the_lean_forward_is_the_sb3_policys_masked_distribution():
    model, env = trained_tiny_model()
    assert isinstance(model.policy, LeanMaskablePolicy)
    observations, masks = [], []
    obs = env.reset()
    for _ in range(40):
        observations.append(obs)
        masks.append(env.action_masks())
        obs, _, _, _ = env.step(model.predict(obs, action_masks=masks[-1])[0])
    obs = torch.as_tensor(np.concatenate(observations))
    masks = np.concatenate(masks)
    legal = torch.as_tensor(masks, dtype=torch.bool)
    assert not legal.all(), "some actions are masked in these positions"
    with torch.no_grad():
        distribution = model.policy.get_distribution(obs, action_masks=masks).distribution
        logits, values = model.policy.masked_logits_and_values(obs, masks)
        actions, lean_values, log_prob = model.policy(obs, action_masks=masks)
        best, _, _ = model.policy(obs, deterministic=True, action_masks=masks)
    lean_log_pi = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    # the masked logits: the same numbers as SB3's MaskableCategorical, legal and masked alike
    assert torch.allclose(lean_log_pi[legal], distribution.logits[legal], atol=1e-5)
    assert (lean_log_pi[~legal] < -1e7).all() and (distribution.logits[~legal] < -1e7).all()
    assert torch.allclose(values, model.policy.predict_values(obs)) and torch.equal(values, lean_values)
    assert legal[torch.arange(len(actions)), actions].all()  # sampled actions are legal
    assert torch.allclose(log_prob, distribution.log_prob(actions), atol=1e-5)
    assert torch.equal(best, distribution.logits.argmax(dim=1))


def test_the_lean_update_evaluates_actions_as_sb3s_masked_distribution():
    # The PPO update's evaluate_actions without the distribution objects: the same values, log-probabilities,
    # entropies and so the same gradients as SB3's MaskableCategorical, up to float rounding.
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    model, env = trained_tiny_model()
    observations, masks = [], []
    obs = env.reset()
    for _ in range(20):
        observations.append(obs)
        masks.append(env.action_masks())
        obs, _, _, _ = env.step(model.predict(obs, action_masks=masks[-1])[0])
    obs, masks = torch.as_tensor(np.concatenate(observations)), np.concatenate(masks)
    assert not masks.all(), "some actions are masked in these positions"
    actions = torch.as_tensor([np.random.default_rng(i).choice(np.flatnonzero(m)) for i, m in enumerate(masks)])
    results, gradients = [], []
    for evaluate in (model.policy.evaluate_actions,
                     lambda *a, **k: MaskableActorCriticPolicy.evaluate_actions(model.policy, *a, **k)):
        model.policy.zero_grad()
        values, log_prob, entropy = evaluate(obs, actions.float(), action_masks=masks)
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
        results.append((values, log_prob, entropy))
        gradients.append([p.grad.clone() for p in model.policy.parameters()])
    (lean_values, lean_log_prob, lean_entropy), (values, log_prob, entropy) = results
    assert torch.equal(lean_values, values)
    assert torch.allclose(lean_log_prob, log_prob, atol=1e-5) and torch.allclose(lean_entropy, entropy, atol=1e-5)
    assert (entropy > 0).any()
    for lean, stock in zip(*gradients, strict=True):
        assert torch.allclose(lean, stock, atol=1e-5)


def test_the_rollouts_sampler_draws_each_action_with_its_probability_and_never_a_masked_one(monkeypatch):
    # choose inverts each row's cumulative distribution at one uniform draw (torch's generator):
    # 100,000 seeded draws per row land on each action within 5 standard deviations of its probability, on
    # no masked action (probability 0, first, middle or last); a draw of 0 takes the first action that has
    # any probability, one rounded up to the row's total the last.
    from tavernzoo.train.lean_policy import choose

    logits = np.array([[0.0, 1.0, -1.0, 2.0, 0.5], [3.0, 0.0, 0.0, 0.0, -2.0]], dtype=np.float32)
    masks = np.array([[False, True, True, False, True], [True, False, False, True, False]])
    legal_logits = np.where(masks, logits, -np.inf)
    probabilities = np.exp(legal_logits) / np.exp(legal_logits).sum(axis=1, keepdims=True)
    draws = 100_000
    torch.manual_seed(5)
    picks, log_probs = choose(np.repeat(logits, draws, axis=0), np.repeat(masks, draws, axis=0), deterministic=False)
    for row in range(2):
        counts = np.bincount(picks[row * draws:(row + 1) * draws], minlength=5)
        assert (counts[~masks[row]] == 0).all(), f"row {row} drew a masked action: {counts}"
        spread = np.sqrt(draws * probabilities[row] * (1 - probabilities[row]))
        assert (np.abs(counts - draws * probabilities[row]) <= 5 * spread + 1e-9).all(), (counts, probabilities[row])
    np.testing.assert_allclose(log_probs, np.log(probabilities[np.repeat([0, 1], draws), picks]), atol=1e-5)
    best, _ = choose(logits, masks, deterministic=True)
    assert best.tolist() == [1, 0]
    monkeypatch.setattr(torch, "rand", lambda n: torch.zeros(n))
    assert choose(logits, masks, deterministic=False)[0].tolist() == [1, 0]
    monkeypatch.setattr(torch, "rand", lambda n: torch.ones(n))  # every draw at its row's total
    assert choose(logits, masks, deterministic=False)[0].tolist() == [4, 3]
    with pytest.raises(ValueError, match="row 1 of the masks has no legal action"):
        choose(logits, np.array([masks[0], [False] * 5]), deterministic=False)


def test_a_privileged_critic_reads_every_seat_while_the_saved_bot_reads_only_its_own(tmp_path):
    """``privileged_critic``: the critic's input holds the other seats' observations (so their hidden
    hands), the actor's does not (changing them leaves its logits as they were), and the checkpoint and
    the exported ONNX bot take the seat's own observation only, with no value output."""
    onnx = pytest.importorskip("onnx")
    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    own = game.encoder.observation_size(config)
    train_config = TrainConfig(game="ministeel", game_config={"num_players": 3}, n_envs=4, n_steps=32,
                               batch_size=64, net_arch=(16,), privileged_critic=True)
    env = SelfPlayVecEnv(game, config, league_for(game, config, privileged_critic=True), n_envs=4, seed=0)
    observations = env.reset()
    assert observations.shape == (4, 3 * own)
    seat = env.seats[0]
    agents = seat.env.possible_agents
    mine = agents.index(seat.learner)
    for k in range(3):  # the learner's own view, then the next seats' in turn order
        expected = seat.env.observe(agents[(mine + k) % 3])["observation"]
        assert np.array_equal(observations[0, k * own:(k + 1) * own], expected)
    model = make_model(train_config, env)
    model.learn(128)
    changed = torch.as_tensor(observations.copy())
    changed[:, own:] = torch.rand(4, 2 * own)  # other hands, other views
    with torch.no_grad():
        same_logits = [model.policy.masked_logits_and_values(torch.as_tensor(o), None)[0]
                       for o in (observations, changed.numpy())]
        values = [model.policy.predict_values(torch.as_tensor(o)) for o in (observations, changed.numpy())]
    assert torch.equal(*same_logits) and not torch.equal(*values)
    policy = policy_from_sb3(model.policy, {"game": "ministeel", "env": game.env_name,
                                            "game_config": {"num_players": 3},
                                            "action_names": list(game.action_names(config))})
    assert policy.observation_size == own and not policy.has_value
    policy.save(tmp_path / "bot")
    exported = tavernzoo("export", str(tmp_path / "bot"), "--out", str(tmp_path / "bot.onnx"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    graph = onnx.load(str(tmp_path / "bot.onnx")).graph
    inputs = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim][1] for i in graph.input}
    assert inputs == {"observation": own, "action_mask": len(game.action_names(config))}
    assert "value" not in {o.name for o in graph.output}
    with pytest.raises(ValueError, match="privileged_critic=true is for tavernzoo train"):
        from tavernzoo.train.expert import make_model as expert_model
        from tavernzoo.train.run import Trainer
        expert_model(Trainer(train_config, tmp_path / "expert"))


def test_the_torch_actor_chooses_as_the_numpy_policy():
    model, env = trained_tiny_model()
    policy = policy_from_sb3(model.policy, {"env": TM.env_name})
    actor = TorchActor(policy)
    observations = np.concatenate([env.reset(), env.step(np.zeros(8, dtype=int))[0]])
    masks = np.ones((len(observations), policy.num_actions), dtype=np.int8)
    masks[:, ::2] = 0
    assert np.allclose(actor.logits(observations), policy.logits(observations), atol=1e-5)
    assert np.array_equal(actor.act(observations, masks), policy.act(observations, masks))
    sampled = actor.act(observations, masks, np.random.default_rng(0), deterministic=False)
    assert masks[np.arange(len(masks)), sampled].all()


def small_policy(game, config, seed, tmp_path):
    """A deterministic policy with random weights for ``game``, saved as a checkpoint."""
    rng = np.random.default_rng(seed)
    size, actions = game.encoder.observation_size(config), len(game.action_names(config))
    policy = MLPPolicy([rng.standard_normal((16, size)).astype(np.float32),
                        rng.standard_normal((actions, 16)).astype(np.float32)],
                       [np.zeros(16, np.float32), np.zeros(actions, np.float32)], "tanh",
                       {"env": game.env_name, "game": game.name})
    policy.save(tmp_path)
    return policy


@pytest.mark.parametrize("game_name, options", [("tiny_minotaur", {}), ("ministeel", {"num_players": 3})])
def test_the_batched_report_plays_play_matchs_games_against_deterministic_bots(game_name, options, tmp_path):
    game = get_game(game_name)
    config = game.make_config(options)
    policy = small_policy(game, config, 3, tmp_path)
    seats = game.rules.num_seats(config)
    specs = [str(tmp_path)] + ["heuristic"] * (seats - 1)
    for seeding in ("v2", "v1"):  # the default, and the deprecated scheme of the reports before 2026-12-05
        expected = play_match(game, specs, 60, seed=11, config=config, seeding=seeding)
        for lanes in (1, 7):
            batched = play_policy_match(game, TorchActor(policy), specs, 60, seed=11, config=config, lanes=lanes,
                                        seeding=seeding)
            assert batched.rows == expected.rows and batched.seeding == seeding
            assert (batched.games, batched.deals, batched.seats) == (expected.games, expected.deals,
                                                                     expected.seats)


def test_the_batched_report_is_fixed_by_its_seed_whatever_the_lanes(tmp_path):
    """Against a bot that draws random numbers (train/evaluate.py): the deal's bots reseeded every game (v2, the
    default), or each game its own seeded bot (v1)."""
    config = TM.make_config()
    policy = small_policy(TM, config, 4, tmp_path)
    specs = [str(tmp_path), "random"]
    for seeding in ("v2", "v1"):
        first = play_policy_match(TM, policy, specs, 80, seed=5, config=config, lanes=3, seeding=seeding)
        assert first.rows == play_policy_match(TM, policy, specs, 80, seed=5, config=config, lanes=64,
                                               seeding=seeding).rows
        assert first.rows[0].games == 80 and first.rows[0].wins + first.rows[0].losses + first.rows[0].draws == 80
        other = play_policy_match(TM, policy, specs, 80, seed=6, config=config, lanes=3, seeding=seeding)
        assert other.rows != first.rows
    with pytest.raises(ValueError, match="backend 'spark'.*valid: local, ray"):
        play_policy_match(TM, policy, specs, 8, backend="spark")


def test_the_batched_report_of_the_default_seeding_v2_plays_play_matchs_games_against_random_bots(tmp_path):
    """Seeding v2 (eval/deals.py), the default: each lane plays a deal's rotations in order with the deal's bots,
    reseeded every game, so even against bots that draw random numbers the table is play_match's; the report
    says its seeding and results version."""
    from tavernzoo.train.evaluate import strength_report

    game = get_game("ministeel")
    config = game.make_config({"num_players": 3})
    policy = small_policy(game, config, 5, tmp_path)
    specs = [str(tmp_path), "random", "heuristic"]
    expected = play_match(game, specs, 30, seed=2, config=config)
    assert expected.seeding == "v2"
    for lanes in (1, 4):
        batched = play_policy_match(game, TorchActor(policy), specs, 30, seed=2, config=config, lanes=lanes)
        assert batched.rows == expected.rows and batched.seeding == "v2"
    report = strength_report(game, TorchActor(policy), "policy", 6, seed=2, config=config)
    assert (report["results_version"], report["seeding"]) == (2, "v2")
    old = strength_report(game, TorchActor(policy), "policy", 6, seed=2, config=config, seeding="v1")
    assert (old["results_version"], old["seeding"]) == (2, "v1")


def test_commands_that_do_not_train_do_not_import_torch():
    probe = ("import sys, io, contextlib\nfrom tavernzoo.cli import main\n"
             "for argv in (['games'], ['match', '--games', '4', '--no-progress'], ['--help']):\n"
             "    try:\n        with contextlib.redirect_stdout(io.StringIO()): main(argv)\n"
             "    except SystemExit: pass\n"
             "print(' '.join(m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'ray', 'onnxruntime',"
             " 'tavernzoo.eval.tournament', 'tavernzoo.web') if m in sys.modules) or 'none')")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["none"]


def test_a_command_from_another_module_is_built_when_it_runs():
    result = tavernzoo("tournament", "--help")
    assert result.returncode == 0 and "--bots" in result.stdout
    listing = tavernzoo("--help")
    assert all(name in listing.stdout for name in ("tournament", "sweep", "export", "zoo", "serve", "web"))


@pytest.mark.parametrize(("stored", "words"), [
    ('{"game": "tiny_minotaur", "iterations": 2, "batch": 200, "hidden": [8]}', "it is a tavernzoo rllib run"),
    ('{"game": "tiny_minotaur", "learning_rate_typo": 1}', "options train does not know: learning_rate_typo"),
    ('[1, 2]', "holds no table"),
    ('{"game": ', "cannot be read"),
])
def test_resume_of_a_directory_that_is_no_train_run_is_one_error_line(tmp_path, stored, words):
    (tmp_path / "config.json").write_text(stored)
    done = subprocess.run([sys.executable, "-m", "tavernzoo.cli", "train", "--resume", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error:") and words in done.stderr, done.stderr


def test_a_spec_the_pool_names_twice_is_one_bot_in_the_league_record(tmp_path):
    """``pool_bots=heuristic,heuristic,zoo:ministeel`` weights the draws; the record that ``match``'s note and an
    exported manifest read counts each spec once, with its members' games summed."""
    from tavernzoo.agents.export import league_record

    (tmp_path / "league").mkdir()
    (tmp_path / "league" / "league.json").write_text(json.dumps({
        "builtins": [{"name": "heuristic", "games": 5, "score": 1.0}, {"name": "heuristic", "games": 7, "score": 2.0},
                     {"name": "zoo:ministeel", "games": 3, "score": 0.0}],
        "retired": [{"name": "random", "games": 2, "score": 1.0}], "snapshots": []}))
    assert league_record(tmp_path) == {"heuristic": 12, "zoo:ministeel": 3, "random": 2}
    assert league_record(tmp_path / "missing") == {}


def test_a_resume_gives_each_copy_of_a_spec_the_pool_names_twice_its_own_record(tmp_path):
    """``League.load`` matches a saved pool's records to today's copies of a spec in order; copies the resumed
    pool no longer holds fold into its last copy of that spec, or retire with their sum: no game is lost."""
    config = TM.make_config()

    def league(*pool: str) -> League:
        return League.create(TM, config, TrainConfig(game=TM.name, pool_bots=pool, latest_share=0.0))

    saved = league("random", "random", "heuristic")
    for member, (played, score) in zip(saved.builtins, [(5, 1.0), (7, 2.0), (3, 0.5)], strict=True):
        member.games, member.score = played, score
    saved.save(tmp_path)
    same = league("random", "random", "heuristic")
    same.load(tmp_path)
    assert [(m.games, m.score) for m in same.builtins] == [(5, 1.0), (7, 2.0), (3, 0.5)]
    assert same.retired == {}
    fewer = league("random")
    fewer.load(tmp_path)
    assert [(m.games, m.score) for m in fewer.builtins] == [(12, 3.0)]
    assert fewer.retired == {"heuristic": {"name": "heuristic", "games": 3, "score": 0.5}}
    fewer.save(tmp_path / "again")
    back = league("heuristic", "random", "random")
    back.load(tmp_path / "again")
    assert [(m.games, m.score) for m in back.builtins] == [(3, 0.5), (12, 3.0), (0, 0.0)]
    assert back.retired == {}
    for closing in (saved, same, fewer, back):
        closing.close()
