"""Bot and option files that travel with a Ray job (eval/shipping.py): the bots named by file (an exported
ONNX bot with its manifest, a training run directory, a checkpoint) and a Wyvern deck file play on nodes
that cannot see those files by path.

The short form runs in CI on an embedded Ray instance: the files are moved away once the driver has read
them, so the tasks can only play them from what was shipped. The slow form builds a real two-node
cluster on this machine (head and worker node in their own network namespaces joined by a veth pair,
10.200.0.1/24 and 10.200.0.2/24, each node with the bot folder hidden under an empty tmpfs in its own
mount namespace) and runs ``tavernzoo tournament ... --backend ray --address`` against it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")


def _games(path: Path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()),
                  key=lambda line: (line["deal"], line["rotation"]))


def make_file_bots(folder: Path) -> dict[str, str]:
    """A training run directory (its latest checkpoint a small random MLP), that checkpoint by its own path
    and the ONNX export of it with its manifest, for tiny_minotaur; their specs by kind."""
    from tavernzoo.agents.export import export
    from tavernzoo.agents.policy import MLPPolicy
    from tavernzoo.envs import get_game

    game = get_game("tiny_minotaur")
    config = game.make_config()
    sizes = [game.encoder.observation_size(config), 8, len(game.action_names(config))]
    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.8, (out, inp)).astype(np.float32) for inp, out in zip(sizes, sizes[1:], strict=False)]
    biases = [np.zeros(out, dtype=np.float32) for out in sizes[1:]]
    meta = {"game": game.name, "env": game.env_name, "game_config": None, "seed": 0, "timesteps": 0,
            "action_names": list(game.action_names(config))}
    run = folder / "run"
    MLPPolicy(weights, biases, "tanh", meta).save(run / "checkpoints" / "step_64")
    (run / "checkpoints" / "latest").write_text("step_64\n")
    onnx_path, _ = export(run / "checkpoints" / "step_64", folder / "bot.onnx")
    return {"run": str(run), "onnx": str(onnx_path), "checkpoint": str(run / "checkpoints" / "step_64")}


def make_deck_file(folder: Path) -> str:
    from tavernzoo.envs.wyvern.decks import bundled_decks

    path = folder / "mine.toml"
    path.write_text("name = 'Mine'\nspecialty = ['fire']\n[cards]\n" + "".join(
        f"{key} = {value}\n" for key, value in bundled_decks()["inferno"]["cards"].items()))
    return str(path)


def test_gather_ships_exactly_the_named_files_and_install_maps_them(tmp_path):
    from tavernzoo.envs import get_game
    from tavernzoo.envs.shipped import local_path
    from tavernzoo.eval.shipping import gather

    bots = make_file_bots(tmp_path / "bots")
    shipment = gather(get_game("tiny_minotaur"), [bots["onnx"], bots["run"] + "@sample", "heuristic",
                                                  f"mcts:20,rollout={bots['checkpoint']}", "cmd:python x.py"],
                      None)
    assert set(shipment.items) == {bots["onnx"], bots["run"], bots["checkpoint"]}  # cmd: programs are not shipped
    assert sorted(shipment.items[bots["onnx"]][0]) == ["bot.json", "bot.onnx"]
    assert sorted(shipment.items[bots["run"]][0]) == ["policy.json", "policy.npz"]  # the latest checkpoint only
    deck = make_deck_file(tmp_path)
    wyvern = gather(get_game("wyvern"), [], {"num_players": 2, "decks": [deck, "inferno"]})
    assert list(wyvern.items) == [deck]
    shipment.install()
    copy = Path(local_path(bots["onnx"]))
    assert copy != Path(bots["onnx"]) and copy.name == "bot.onnx"
    assert copy.read_bytes() == Path(bots["onnx"]).read_bytes()
    assert (copy.parent / "bot.json").is_file() and (Path(local_path(bots["run"])) / "policy.npz").is_file()


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_file_bots_and_a_deck_file_play_from_what_was_shipped(ray_local, tmp_path, monkeypatch):
    """The files are moved away as soon as the driver has gathered them: the tasks play them from the
    object store, with the games, records and results of the local backend."""
    from tavernzoo.eval import shipping
    from tavernzoo.eval.match import play_match
    from tavernzoo.eval.tournament import GAMES_FILE, make_settings, run_tournament

    folder = tmp_path / "bots"
    bots = make_file_bots(folder)
    deck = make_deck_file(folder)
    gather = shipping.gather

    def gather_then_hide(*args):
        shipment = gather(*args)
        if folder.exists():
            folder.rename(tmp_path / "hidden")
        return shipment

    def show():
        if (tmp_path / "hidden").exists():
            (tmp_path / "hidden").rename(folder)

    settings = make_settings("tiny_minotaur", [bots["onnx"], bots["run"], "heuristic"], 24, seed=3)
    local = run_tournament(settings, tmp_path / "local")
    monkeypatch.setattr(shipping, "gather", gather_then_hide)
    remote = run_tournament(settings, tmp_path / "ray", backend="ray", batch=1)
    assert not folder.exists()
    assert _games(tmp_path / "ray" / GAMES_FILE) == _games(tmp_path / "local" / GAMES_FILE)
    assert remote == local
    show()
    config = {"num_players": 2, "decks": [deck, "inferno"], "max_turns": 60}
    here = play_match("wyvern", ["random", "random"], 4, seed=1, config=config, records_path=tmp_path / "l.jsonl")
    away = play_match("wyvern", ["random", "random"], 4, seed=1, config=config, records_path=tmp_path / "r.jsonl",
                      backend="ray")
    assert not folder.exists()
    assert (tmp_path / "r.jsonl").read_bytes() == (tmp_path / "l.jsonl").read_bytes()
    assert here == away
    show()
