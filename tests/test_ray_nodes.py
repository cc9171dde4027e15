"""Bot and option files that travel with a Ray job (eval/shipping.py): the bots named by file (an exported
ONNX bot with its manifest, a training run directory, a checkpoint) and a Wyvern deck file play on nodes
that cannot see those files by path.

The short form runs in CI on an embedded Ray instance: the files are moved away once the driver has read
them, so the tasks can only play them from what was shipped. The cluster form (root only) builds a real two-node
cluster on this machine (head and worker node in their own network namespaces joined by a veth pair,
10.200.0.1/24 and 10.200.0.2/24, each node with the bot folder hidden under an empty tmpfs in its own
mount namespace) and runs ``tavernzoo tournament ... --backend ray --address`` against it, then ``tavernzoo
expert ... --backend ray --address`` (labelling and strength games, its run directory hidden from the nodes).
"""

from __future__ import annotations

import json
import os
import secrets
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


def test_gather_ships_exactly_the_named_files_and_install_maps_them(tmp_path, monkeypatch):
    from tavernzoo.envs import get_game
    from tavernzoo.envs.shipped import local_path
    from tavernzoo.eval.shipping import gather

    bots = make_file_bots(tmp_path / "bots")
    shipment = gather(get_game("tiny_minotaur"), [bots["onnx"], bots["run"] + "@sample", "heuristic",
                                                  f"mcts:20,value={bots['checkpoint']}", "cmd:python x.py"],
                      None)
    assert set(shipment.items) == {bots["onnx"], bots["run"], bots["checkpoint"]}  # cmd: programs are not shipped
    for key in ("rollout", "others", "prior"):  # every option of a search that names a bot
        assert set(gather(get_game("tiny_minotaur"), [f"mcts:{key}={bots['onnx']}"], None).items) == {bots["onnx"]}
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
    from tavernzoo.eval import shipping

    monkeypatch.setattr(shipping, "MAX_SHIPPED_BYTES", 1000)
    with pytest.raises(ValueError, match="the Ray backend ships at most 0 MiB per run"):
        gather(get_game("tiny_minotaur"), [bots["onnx"]], None)


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


def _expert_run(out: Path, teacher: str, **where) -> tuple[dict, list]:
    """Two rounds of a tiny expert run (round 2 with DAgger: the round-1 student plays and is shipped too),
    labelled against heuristics and measured after each round; its samples' arrays and its rounds."""
    from tavernzoo.train.config import make_train_config
    from tavernzoo.train.expert import ExpertConfig, run_expert

    config = make_train_config("tiny_minotaur", overrides={"net_arch": [8], "eval_games": 0}, seed=2)
    expert = ExpertConfig(teacher=teacher, opponents="heuristic", rounds=2, games=6, epochs=1, eval_games=8,
                          workers=1)
    run_expert(config, expert, out, log=lambda _: None, **where)
    return _expert_result(out)


# ``tavernzoo expert`` with the options of :func:`_expert_run` (its backend's given after them)
EXPERT_COMMAND = ["expert", "tiny_minotaur", "--opponents", "heuristic", "--rounds", "2", "--games", "6", "--epochs",
                  "1", "--eval-games", "8", "--workers", "1", "--set", "net_arch=[8]", "--set", "eval_games=0",
                  "--seed", "2", "--no-progress"]


def _expert_result(out: Path) -> tuple[dict, list]:
    """An expert run's samples' arrays and its rounds (without their timings)."""
    from tavernzoo.envs import get_game
    from tavernzoo.train.samples import Samples

    game = get_game("tiny_minotaur")
    table = game.make_config()
    samples = Samples.load(out / "expert" / "samples.npz", game.encoder.observation_size(table),
                           len(game.action_names(table)))
    rounds = json.loads((out / "expert.json").read_text())["rounds"]
    return ({name: getattr(samples, name) for name in Samples.FIELDS},
            [{k: v for k, v in entry.items() if not k.endswith("seconds")} for entry in rounds])


def test_expert_labels_and_measures_on_ray_from_shipped_files(ray_local, tmp_path, monkeypatch):
    """``tavernzoo expert --backend ray``: the labelled games and the strength games run as Ray tasks, the
    teacher's file hidden from them (each gather ships it, then it is moved away), with the samples, the
    students and the strength lines of the local backend."""
    from tavernzoo.eval import shipping

    folder = tmp_path / "bots"
    teacher = make_file_bots(folder)["onnx"]
    local_samples, local_rounds = _expert_run(tmp_path / "local", teacher)
    gather = shipping.gather
    gathered: list[list[str]] = []

    def gather_then_hide(game, specs, config):
        if (tmp_path / "hidden").exists():
            (tmp_path / "hidden").rename(folder)
        shipment = gather(game, specs, config)
        gathered.append(list(specs))
        folder.rename(tmp_path / "hidden")
        return shipment

    monkeypatch.setattr(shipping, "gather", gather_then_hide)
    ray_samples, ray_rounds = _expert_run(tmp_path / "ray", teacher, backend="ray")
    assert not folder.exists()
    (tmp_path / "hidden").rename(folder)
    # each round: its labelling (the teacher; from round 2 the student too) and its strength games
    assert [teacher in specs for specs in gathered] == [True, False, True, False], gathered
    assert str(tmp_path / "ray" / "expert" / "round_1") in gathered[2], gathered  # round 2's student
    for name, array in local_samples.items():
        np.testing.assert_array_equal(ray_samples[name], array, err_msg=name)
    assert ray_rounds == local_rounds
    assert all(entry["strength"]["games"] == 8 for entry in ray_rounds)


# --- a real two-node cluster on this machine ---------------------------------------------------------------

HEAD_IP, WORKER_IP, PORT = "10.200.0.1", "10.200.0.2", 6379
START_TIMEOUT_S = 240  # Ray's start on two loaded cores: generous, never unbounded


def _can_build_a_cluster() -> str | None:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "needs root on Linux (network and mount namespaces)"
    for tool in ("ip", "unshare", "mount"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


def _cluster_env(token: str) -> dict[str, str]:
    """Every process of the test's cluster shares one fresh token (Ray's token authentication)."""
    return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}


def _node(netns: str, hidden: Path, temp: Path, log: Path, env: dict, *ray_args: str) -> subprocess.Popen:
    """``ray start --block`` in network namespace ``netns`` and a mount namespace of its own, where
    ``hidden`` is an empty tmpfs: nothing this node runs can read the files the driver sees there."""
    ray_start = [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--block",
                 "--num-cpus=1", "--object-store-memory=100000000", "--disable-usage-stats", f"--temp-dir={temp}",
                 *ray_args]
    script = 'mount -t tmpfs tmpfs "$0" && exec "$@"'
    return subprocess.Popen(["ip", "netns", "exec", netns, "unshare", "--mount", "--propagation", "private",
                             "sh", "-c", script, str(hidden), *ray_start],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True, env=env)


def _stop(process: subprocess.Popen, netns: str) -> None:
    """The node and every process it started (Ray's own daemons and workers, in the namespace)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with _suppress():
            os.killpg(process.pid, sig)
        pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, timeout=30).stdout
        for pid in pids.split():
            with _suppress():
                os.kill(int(pid), sig)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            time.sleep(2)  # Ray's daemons take a moment after their parent


def _suppress():
    import contextlib

    return contextlib.suppress(ProcessLookupError, PermissionError)


WAIT_FOR_NODES = """
import sys, time, json, socket, ray
deadline = time.monotonic() + float(sys.argv[2])
host, port = sys.argv[1].split(":")
while time.monotonic() < deadline:  # the head's port first: ray.init gives up on an address soon
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        break
    except OSError:
        time.sleep(1)
time.sleep(2)
ray.init(address=sys.argv[1], configure_logging=False, log_to_driver=False)
while time.monotonic() < deadline:
    alive = [node for node in ray.nodes() if node["Alive"]]
    if len(alive) == 2:
        print(json.dumps({node["NodeManagerAddress"]: node["NodeID"] for node in alive}))
        break
    time.sleep(1)
"""

DRIVER = """
import json, sys
from tavernzoo.cli import main
from tavernzoo.eval import ray_backend
run_deals = ray_backend.run_deals
def counted(*args, **kwargs):
    per_node = run_deals(*args, **kwargs)
    with open(sys.argv[1], "w") as file:
        json.dump(per_node, file)
    return per_node
ray_backend.run_deals = counted
sys.exit(main(sys.argv[2:]))
"""


def test_a_two_node_cluster_plays_file_bots_it_cannot_see_with_the_local_results(tmp_path):
    why = _can_build_a_cluster()
    if why and os.environ.get("CI") == "true":
        pytest.fail(f"{why}; CI runs as root with ip, unshare and mount, and must run the cluster test")
    if why:
        pytest.skip(why)
    from tavernzoo.eval.tournament import GAMES_FILE, make_settings, run_tournament

    bots_dir = tmp_path / "bots"
    bots = make_file_bots(bots_dir)
    specs = [bots["onnx"], bots["run"], "heuristic"]
    games = 60
    run_tournament(make_settings("tiny_minotaur", specs, games, seed=4), tmp_path / "local")
    expert_here = _expert_run(tmp_path / "expert-local", bots["onnx"])

    tag = str(os.getpid())
    head_ns, worker_ns, veth = f"tzh{tag}", f"tzw{tag}", f"tzv{tag}"
    temp = Path(os.environ.get("TMPDIR", "/tmp")) / f"tzr{tag}"  # short: Ray's socket paths have a limit
    nodes: list[tuple[subprocess.Popen, str]] = []
    env = _cluster_env(secrets.token_hex(32))
    try:
        _run("ip", "netns", "add", head_ns)
        _run("ip", "netns", "add", worker_ns)
        _run("ip", "link", "add", f"{veth}a", "type", "veth", "peer", "name", f"{veth}b")
        _run("ip", "link", "set", f"{veth}a", "netns", head_ns)
        _run("ip", "link", "set", f"{veth}b", "netns", worker_ns)
        for netns, device, address in ((head_ns, f"{veth}a", HEAD_IP), (worker_ns, f"{veth}b", WORKER_IP)):
            _run("ip", "-n", netns, "addr", "add", f"{address}/24", "dev", device)
            _run("ip", "-n", netns, "link", "set", device, "up")
            _run("ip", "-n", netns, "link", "set", "lo", "up")
        (temp / "h").mkdir(parents=True)
        (temp / "w").mkdir()
        nodes.append((_node(head_ns, bots_dir, temp / "h", tmp_path / "head.log", env, "--head", f"--port={PORT}",
                            "--include-dashboard=false", f"--node-ip-address={HEAD_IP}"), head_ns))
        address = f"{HEAD_IP}:{PORT}"
        nodes.append((_node(worker_ns, bots_dir, temp / "w", tmp_path / "worker.log", env, f"--address={address}",
                            f"--node-ip-address={WORKER_IP}"), worker_ns))
        wait = subprocess.run(["ip", "netns", "exec", head_ns, sys.executable, "-c", WAIT_FOR_NODES, address,
                               str(START_TIMEOUT_S)], capture_output=True, text=True, timeout=START_TIMEOUT_S + 60,
                              env=env)
        (tmp_path / "wait.log").write_text(wait.stderr)
        node_ids = json.loads(wait.stdout.strip().splitlines()[-1]) if wait.stdout.strip() else {}
        assert set(node_ids) == {HEAD_IP, WORKER_IP}, (wait.stderr[-2000:],
                                                      (tmp_path / "worker.log").read_text()[-2000:])

        # The driver runs in the head's network namespace and sees the bot folder; the nodes do not.
        counts = tmp_path / "per_node.json"
        out = tmp_path / "ray"
        driver = subprocess.run(
            ["ip", "netns", "exec", head_ns, sys.executable, "-c", DRIVER, str(counts), "tournament", "tiny_minotaur",
             "--bots", *specs, "--games", str(games), "--seed", "4", "--backend", "ray", "--address", address,
             "--out", str(out), "--no-progress", "--no-plot"],
            capture_output=True, text=True, timeout=600, env=env)
        assert driver.returncode == 0, driver.stderr[-3000:]
        per_node = json.loads(counts.read_text())
        assert set(per_node) == set(node_ids.values())  # games were played on both nodes
        assert all(count > 0 for count in per_node.values()) and sum(per_node.values()) == games
        assert _games(out / GAMES_FILE) == _games(tmp_path / "local" / GAMES_FILE)
        assert json.loads((out / "results.json").read_text()) == json.loads(
            (tmp_path / "local" / "results.json").read_text())

        # Expert iteration on the cluster: the labelled games and the strength games. Its run directory is in
        # the folder the nodes cannot see, so the students are shipped to them as the teacher's file is.
        expert_out = bots_dir / "expert"
        driver = subprocess.run(
            ["ip", "netns", "exec", head_ns, sys.executable, "-m", "tavernzoo.cli", *EXPERT_COMMAND, "--teacher",
             bots["onnx"], "--backend", "ray", "--address", address, "--out", str(expert_out)],
            capture_output=True, text=True, timeout=600, env=env)
        assert driver.returncode == 0, driver.stderr[-3000:]
        expert_there = _expert_result(expert_out)
        for name, array in expert_here[0].items():
            np.testing.assert_array_equal(expert_there[0][name], array, err_msg=name)
        assert expert_there[1] == expert_here[1]
    finally:
        for process, netns in reversed(nodes):
            _stop(process, netns)
        for netns in (head_ns, worker_ns):
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=30)
        shutil.rmtree(temp, ignore_errors=True)
    assert not any(name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
                   for name in (head_ns, worker_ns))
