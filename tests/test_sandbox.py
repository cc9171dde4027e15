"""The sandbox for bot programs (agents/sandbox.py, docs/sandbox.md): evil bots stopped or refused.

Every evil bot (tests/fixtures/evil_bot.py) is bounded on its own (at most 400 MB, 200 children that
exit within 5 s, 30 s of CPU); the limits set here are far below those bounds, so on a machine that
sandboxes, the harm never happens. The fork bomb runs only under a pids limit. The bots that try what a
sandbox refuses (a socket, another bot's file, a write outside their folder) are also run unconfined
once, as controls: otherwise a sandbox test could pass because the bot never did anything.

Without a machine that sandboxes (no bwrap, no writable cgroups) these tests are skipped, except under
CI (``CI=true``), where they fail: ``.ci/run`` installs bubblewrap.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.agents.sandbox import UID_BASE, Limits, Sandbox, SandboxUnavailable, available
from tavernzoo.agents.spec import BotSpec
from tavernzoo.envs import get_game
from tavernzoo.eval.tournament import GAMES_FILE, make_settings, read_games, run_tournament

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
PYTHON = sys.executable
GOOD = f"cmd:{PYTHON} {FIXTURES / 'protocol_random_bot.py'}"
TIGHT = "memory=64,processes=16,cpu=20"


def _can_sandbox() -> str:
    try:
        available()
    except SandboxUnavailable as error:
        return str(error)
    return ""


needs_sandbox = pytest.mark.skipif(bool(_can_sandbox()) and os.environ.get("CI", "").lower() != "true",
                                   reason=f"this machine cannot sandbox: {_can_sandbox()}")


@pytest.fixture
def evil(tmp_path):
    """``evil(MODE, *ARGS, limits=TIGHT)``: the spec of an evil bot copied into a folder of its own."""
    folder = tmp_path / "evil"
    folder.mkdir()
    shutil.copy(FIXTURES / "evil_bot.py", folder / "evil_bot.py")

    def spec(mode: str, *args: str, limits: str | None = TIGHT) -> str:
        command = f"cmd:{PYTHON} {folder / 'evil_bot.py'} {mode} {' '.join(args)}".rstrip()
        return command if limits is None else str(BotSpec.parse(command).sandboxed(limits))

    yield spec
    # No process of the evil bot's is left, and no control group.
    assert not _processes_running(str(folder)), "an evil bot's process outlived its test"
    assert not _groups_left(), "a sandbox's control group was left behind"


def _processes_running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _groups_left() -> list[str]:
    prefix = f"tavernzoo-{os.getpid()}-"
    left = []
    for controller in ("memory", "pids", "cpuacct"):
        root = Path("/sys/fs/cgroup") / controller
        left += [str(path) for path in root.rglob(prefix + "*")] if root.is_dir() else []
    return left


def tournament(tmp_path, bots, games, name="t", **options):
    settings = make_settings("tiny_minotaur", bots, games, **options)
    results = run_tournament(settings, tmp_path / name, workers=1)
    return results, read_games(tmp_path / name / GAMES_FILE)


# --- limits and specs (no program run) ---------------------------------------------------------------


def test_limits_parse_with_defaults_and_refuse_what_is_out_of_range():
    assert Limits.parse("") == Limits()
    assert Limits.parse("memory=128, cpu=2.5,files=32") == Limits(memory=128, cpu=2.5, files=32)
    assert Limits.parse(Limits(processes=9).format()) == Limits(processes=9)
    for text, words in (("ram=5", "KEY one of memory, processes, cpu, idle, files"),
                        ("memory=6", "from 16 to 1048576"), ("processes=many", "whole number from 4 to 4096"),
                        ("cpu=nan", "from 0.1 to 86400"), ("memory", "KEY=VALUE")):
        with pytest.raises(ValueError, match=words):
            Limits.parse(text)


def test_a_sandbox_spec_is_a_cmd_spec_that_writes_itself_back():
    spec = BotSpec.parse("sandbox[memory=64]:cmd:python3 bot.py --fast")
    assert (spec.kind, spec.name, spec.sandbox) == ("cmd", "python3 bot.py --fast", "memory=64")
    assert BotSpec.parse(spec.format()) == spec and spec.local(("heuristic",), ("wyvern",))
    assert BotSpec.parse("sandbox:cmd:x").sandbox == "" and BotSpec.parse("cmd:x").sandbox is None
    assert BotSpec.parse("cmd:x") != BotSpec.parse("sandbox:cmd:x")
    assert str(BotSpec.parse("cmd:x y").sandboxed("cpu=3")) == "sandbox[cpu=3]:cmd:x y"
    assert BotSpec.parse("heuristic").sandboxed("") == BotSpec.parse("heuristic")  # runs no program
    assert BotSpec.parse("sandbox[cpu=1]:cmd:x").sandboxed("cpu=9").sandbox == "cpu=1"  # its own limits kept
    with pytest.raises(ValueError, match="a sandbox runs programs only"):
        load_bot("sandbox:heuristic", "tiny_minotaur")


def test_a_machine_that_cannot_sandbox_refuses_in_one_line_and_runs_nothing(monkeypatch, tmp_path):
    import tavernzoo.agents.sandbox as sandbox

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None if name == "bwrap" else shutil.which(name))
    with pytest.raises(SandboxUnavailable, match="needs bubblewrap"):
        load_bot(f"sandbox:{GOOD}", "tiny_minotaur")
    # The command line: one line, exit status 2, no game played (bwrap is not on this PATH).
    result = subprocess.run([PYTHON, "-m", "tavernzoo.cli", "match", "--bots", GOOD, "random", "--games", "2",
                             "--sandbox"], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PATH": str(tmp_path)})
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0 and "needs bubblewrap" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_machine_without_cgroups_to_write_refuses_too(monkeypatch, tmp_path):
    import tavernzoo.agents.sandbox as sandbox

    if shutil.which("bwrap") is None:
        pytest.skip("no bwrap: the first refusal is about bubblewrap (tested above)")
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)  # no controller mounted there
    with pytest.raises(SandboxUnavailable, match="needs a writable cgroup v1 'memory' controller"):
        load_bot(f"sandbox:{GOOD}", "tiny_minotaur")


# --- what a sandboxed program sees -------------------------------------------------------------------


@needs_sandbox
def test_inside_the_sandbox_a_program_sees_its_folder_a_private_tmp_and_no_network(tmp_path):
    folder = tmp_path / "bot"
    folder.mkdir()
    probe = folder / "probe.py"
    home = str(Path.home())
    probe.write_text(
        "import os, socket, resource\n"
        "print(sorted(os.listdir('/')))\n"
        "print(os.getcwd(), os.environ.get('HOME'), sorted(os.environ))\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
        "print(sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else [])\n"
        "open('/tmp/scratch', 'w').write('ok'); print(open('/tmp/scratch').read())\n"
        f"print(os.path.exists({str(FIXTURES)!r}), os.path.exists({str(ROOT / 'pyproject.toml')!r}))\n"
        f"print(sorted(os.listdir({home!r})) if os.path.isdir({home!r}) else [])\n"
        "try:\n    print(len(open('/etc/shadow').read()))\nexcept OSError as error:\n    print(type(error).__name__)\n"
        "print(os.getuid(), os.getgid(), os.getgroups())\n")
    os.environ["TAVERNZOO_SECRET_TOKEN"] = "x"  # the host's environment does not travel
    sandbox = Sandbox(Limits(files=40))
    try:
        result = subprocess.run(sandbox.wrap([PYTHON, str(probe)]), capture_output=True, text=True, timeout=60)
    finally:
        del os.environ["TAVERNZOO_SECRET_TOKEN"]
        sandbox.close()
    assert result.returncode == 0, result.stderr
    root, where, files, interfaces, scratch, seen, home, shadow, user = result.stdout.splitlines()
    assert shadow == "PermissionError"  # only root may read it, and the program is not root
    # A uid of its own, no account's, the host's own (no user namespace maps it to root), no groups.
    assert user == f"{sandbox.uid} {sandbox.uid} []" and sandbox.uid >= UID_BASE
    with pytest.raises(KeyError):
        pwd.getpwuid(sandbox.uid)
    assert "home" not in root and "srv" not in root and "mnt" not in root
    assert where.startswith(f"{folder} /tmp ") and "TAVERNZOO_SECRET_TOKEN" not in where
    assert files == "40" and scratch == "ok"
    assert seen == "False False"  # the other bots' folder, the project (where tournaments write)
    assert interfaces in ("[]", "['lo']")
    # Of the home folder, at most the way to the interpreter (a Python installed there, as pyenv does).
    interpreter = Path(PYTHON).resolve()
    allowed = [part for part in interpreter.relative_to(Path.home()).parts[:1]] if interpreter.is_relative_to(
        Path.home()) else []
    assert eval(home) in ([], allowed)  # noqa: S307 - our own probe's printed list
    assert not _groups_left()


# --- the evil bots -----------------------------------------------------------------------------------


@needs_sandbox
@pytest.mark.parametrize(("mode", "kind"), [("memory", "memory"), ("fork", "processes")])
def test_a_bot_that_breaks_a_limit_forfeits_with_the_limit_and_the_tournament_goes_on(tmp_path, evil, mode, kind):
    results, lines = tournament(tmp_path, [GOOD, evil(mode)], 4)
    assert len(lines) == 4
    for line in lines:
        assert line["forfeit"] is not None and line["forfeit"]["kind"] == kind, line["forfeit"]
        assert line["forfeit"]["seat"] == line["entries"].index(1)
    board = {row["spec"]: row for row in results["leaderboard"]}
    assert board[GOOD]["wins"] == 4 and board[GOOD]["forfeits"] == 0


@needs_sandbox
@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_a_bot_that_fills_its_scratch_folders_breaks_its_memory_limit(evil, folder):
    # Files in a tmpfs are memory: the breach is named as such, not as the time-out the host may see first.
    for _ in range(2):
        _, lost = _one_game(evil("fill", folder))
        assert lost is not None and lost.kind == "memory", lost


@needs_sandbox
def test_a_bot_cannot_lift_its_limits_read_the_host_environment_or_write_dev(tmp_path, evil, monkeypatch):
    # What a program that ran as the host's root in a user namespace did: a namespace of its own with the
    # memory hierarchy mounted and its limit lifted (then 400 MB played without a forfeit), the host's
    # environment (API keys) through /proc/1/environ, files in /dev.
    monkeypatch.setenv("TAVERNZOO_SECRET_TOKEN", "hunter2")
    bot, lost = _one_game(evil("escape"))
    found = dict(part.split(":", 1) for part in bot.program_name.split(":", 1)[1].split("|"))
    assert found["limit"] == "unshare-EPERM", found  # no namespace of its own, so no mount either
    assert found["environ"] in ("EACCES", "clean"), found
    assert found["dev"] in ("EROFS", "EACCES") and found["shm"] == "written", found  # /dev/shm is a scratch tmpfs
    assert lost is not None and lost.kind == "memory", lost  # the limit held
    # The host's environment is not even in the sandbox's first process (bwrap, started with none).
    box = Sandbox(Limits())
    try:
        process = subprocess.Popen(box.wrap(["/bin/sleep", "30"]), stdout=subprocess.DEVNULL)
        try:
            seen = []
            for _ in range(200):
                seen = [pid for pid in _processes_running("/bin/sleep") if _command(pid).startswith("bwrap")
                        or _command(pid).endswith("/bwrap")]
                if seen:
                    break
                threading.Event().wait(0.02)
            assert seen, "no bwrap process found"
            for pid in seen:
                assert b"hunter2" not in Path(f"/proc/{pid}/environ").read_bytes()
        finally:
            process.kill()
            process.wait()
    finally:
        box.close()
    # ... nor in a tournament's files or its console.
    results, lines = tournament(tmp_path, [GOOD, evil("escape")], 2)
    assert [line["forfeit"]["kind"] for line in lines] == ["memory", "memory"]
    for path in (tmp_path / "t").rglob("*"):
        assert not path.is_file() or b"hunter2" not in path.read_bytes(), path


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return ""


@needs_sandbox
def test_a_program_in_a_folder_others_may_not_read_is_refused_in_one_line(tmp_path):
    folder = tmp_path / "private"
    folder.mkdir(mode=0o700)
    shutil.copy(FIXTURES / "protocol_random_bot.py", folder / "bot.py")
    folder.chmod(0o700)
    _, lost = _one_game(str(BotSpec.parse(f"cmd:{PYTHON} {folder / 'bot.py'}").sandboxed("")))
    assert lost is not None and lost.kind == "start" and f"chmod o+rX {folder}" in lost.reason, lost
    assert not _groups_left()
    folder.chmod(0o755)
    _, lost = _one_game(str(BotSpec.parse(f"cmd:{PYTHON} {folder / 'bot.py'}").sandboxed("")))
    assert lost is None


@needs_sandbox
def test_groups_made_below_a_sandboxs_groups_go_with_it():
    box = Sandbox(Limits())
    for group in box.groups.values():
        (group / "child" / "grandchild").mkdir(parents=True)
    box.close()
    assert not _groups_left()


@needs_sandbox
def test_a_trial_sandbox_that_is_not_confined_is_refused(monkeypatch):
    import tavernzoo.agents.sandbox as sandbox

    monkeypatch.setattr(sandbox, "TRIAL_PROBE", 'echo "it runs as uid 0, not its own $1"; echo probed')
    sandbox._trial.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="a trial program was not confined: it runs as uid 0"):
            available()
    finally:
        sandbox._trial.cache_clear()
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxUnavailable, match="only root can do"):
        available()


@needs_sandbox
def test_a_bot_that_computes_on_the_opponents_time_is_stopped(tmp_path, evil):
    # The opponent thinks 0.1 s a move, so the burner has time to burn that is not its own; idle=0 leaves
    # it the grace alone (1 CPU second), reached within the run even on a loaded machine.
    # The opponent is sandboxed too, with the defaults: a program that waits its turn is never stopped.
    slow = str(BotSpec.parse(f"{GOOD} --delay 0.1").sandboxed(""))
    results, lines = tournament(tmp_path, [slow, evil("cpu", limits="cpu=100,idle=0")], 8)
    kinds = [line["forfeit"]["kind"] for line in lines if line["forfeit"]]
    assert "cpu" in kinds, kinds
    assert set(kinds) == {"cpu"} and all(line["forfeit"]["entry"] == 1 for line in lines if line["forfeit"])
    assert len(lines) == 8


@pytest.fixture
def listener():
    """A loopback server: ``(port, what reached it)``."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    received.append(connection.recv(100))
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join(timeout=5)
    server.close()


def _one_game(spec: str):
    from tavernzoo.envs.make import make_env
    from tavernzoo.eval.guard import Forfeit, Guard
    from tavernzoo.eval.loop import play_game

    game = get_game("tiny_minotaur")
    config = game.make_config()
    env = make_env(game, config)
    bot = load_bot(spec, game, config, seed=0)
    try:
        play_game(env, [Guard(bot, 0, 1, env), Guard(load_bot("random", game, config, 1), 1, 2, env)], 3)
        return bot, None
    except Forfeit as lost:
        return bot, lost
    finally:
        bot.close()


@needs_sandbox
def test_a_bot_that_opens_a_socket_reaches_nothing(evil, listener):
    port, received = listener
    _, lost = _one_game(evil("socket", str(port), limits=None))  # the control: unconfined, it gets through
    assert lost is None and received == [b"leak"]
    _, lost = _one_game(evil("socket", str(port)))
    assert lost is not None and lost.kind == "crash" and "Connection refused" in lost.reason
    assert received == [b"leak"]


@needs_sandbox
def test_a_bot_cannot_read_another_bots_files_the_tournaments_games_or_home(tmp_path, evil):
    tournament(tmp_path, [GOOD, "random"], 2, name="earlier")
    games = tmp_path / "earlier" / GAMES_FILE
    other = FIXTURES / "protocol_random_bot.py"
    bot, lost = _one_game(evil("read", str(other), str(games), limits=None))  # the control
    assert lost is None and "A correct external" in bot.program_name and games.read_text()[:20] in bot.program_name
    home = [path for path in Path.home().iterdir() if path.is_file() and os.access(path, os.R_OK)][:1]
    for target in (other, games, *home):
        _, lost = _one_game(evil("read", str(target)))
        assert lost is not None and lost.kind == "crash" and "No such file" in lost.reason, (target, lost)
    # ... and a tournament where it plays goes on, its output as hidden from it as the earlier one's.
    results, lines = tournament(tmp_path, [GOOD, evil("read", str(tmp_path / "t" / GAMES_FILE))], 2)
    assert [line["forfeit"]["kind"] for line in lines] == ["crash", "crash"]


@needs_sandbox
@pytest.mark.parametrize("where", ["outside", "own folder"])
def test_a_bot_cannot_write_outside_its_scratch_folder(tmp_path, evil, where):
    target = tmp_path / "written.txt" if where == "outside" else tmp_path / "evil" / "written.txt"
    _, lost = _one_game(evil("write", str(target), limits=None))  # the control
    assert lost is None and target.read_bytes() == b"evil"
    target.unlink()
    _, lost = _one_game(evil("write", str(target)))
    if where == "own folder":
        assert lost is not None and lost.kind == "crash" and "Read-only file system" in lost.reason
    # Outside, under /tmp, the write lands in the program's private /tmp (which goes with it).
    assert not target.exists()


@needs_sandbox
def test_a_bot_cannot_write_into_the_project_or_the_tournament(tmp_path, evil):
    target = ROOT / f"evil-was-here-{os.getpid()}"
    try:
        _, lost = _one_game(evil("write", str(target)))
        assert not target.exists()  # the project is never written, whatever the program was told
        if not ROOT.resolve().is_relative_to("/tmp"):
            # A checkout under /tmp (CI's clone may be one) is shadowed by the program's private /tmp, where
            # the write lands harmlessly; anywhere else the path is read-only and the write fails.
            assert lost is not None and lost.kind == "crash"
            assert "Read-only file system" in lost.reason or "No such file" in lost.reason
    finally:
        target.unlink(missing_ok=True)
    results, lines = tournament(tmp_path, [GOOD, evil("write", str(tmp_path / "t" / GAMES_FILE))], 2)
    assert len(lines) == 2 and (tmp_path / "t" / GAMES_FILE).read_bytes().startswith(b"{")  # not overwritten


@needs_sandbox
def test_bot_check_runs_the_program_in_the_sandbox():
    command = f"{PYTHON} {FIXTURES / 'protocol_random_bot.py'}"
    base = [PYTHON, "-m", "tavernzoo.cli", "bot", "check", command, "--game", "tiny_minotaur", "--games", "1"]
    result = subprocess.run([*base, "--sandbox", "memory=128"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "compliant" in result.stdout, result.stdout + result.stderr
    result = subprocess.run([*base, "--sandbox", "memory=1"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "memory must be from 16" in result.stderr


@needs_sandbox
def test_tournament_and_match_take_sandbox_on_the_command_line(tmp_path, evil):
    fork = evil("fork", limits=None)
    result = subprocess.run([PYTHON, "-m", "tavernzoo.cli", "tournament", "tiny_minotaur", "--bots", GOOD, fork,
                             "--games", "2", "--sandbox", "processes=16", "--out", str(tmp_path / "t"), "--json",
                             "--no-plot", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = read_games(tmp_path / "t" / GAMES_FILE)
    assert [line["forfeit"]["kind"] for line in lines] == ["processes", "processes"]
    assert all(bot.startswith("sandbox[processes=16]:cmd:") for bot in lines[0]["bots"])  # both programs
    # A match has no forfeits: the program's breach ends it with one line naming the limit.
    result = subprocess.run([PYTHON, "-m", "tavernzoo.cli", "match", "--bots", fork, "random", "--games", "2",
                             "--sandbox", "processes=16", "--no-progress"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "an external bot failed (processes)" in result.stderr
    assert "Traceback" not in result.stderr


@needs_sandbox
def test_the_web_servers_sandbox_confines_the_pages_cmd_seats(evil):
    import time

    from starlette.testclient import TestClient

    from tavernzoo.web.app import create_app

    with TestClient(create_app(hosts=("testserver",), allow_local=True, sandbox="memory=64")) as client:
        response = client.post("/api/tables", json={"game": "tiny_minotaur", "config": {}, "seed": 3,
                                                     "seats": [evil("memory", limits=None), "random"]})
        assert response.status_code == 201, response.text
        table = response.json()["id"]
        deadline = time.monotonic() + 120
        while (summary := client.get(f"/api/tables/{table}").json())["status"] != "over":
            assert time.monotonic() < deadline, summary
            time.sleep(0.05)
        forfeit = summary["result"]["forfeit"]
        assert forfeit["seat"] == 0 and forfeit["kind"] == "memory", forfeit
        nested = client.post("/api/tables", json={"game": "tiny_minotaur", "config": {}, "seed": 3,
                                                  "seats": ["random", f"mcts:2,rollout={GOOD}"]})
        assert nested.status_code == 400 and "cannot confine" in nested.text


@needs_sandbox
def test_a_group_left_by_a_killed_host_is_removed_and_one_in_use_is_kept():
    from tavernzoo.agents.sandbox import _parent

    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout
    stale = _parent("pids") / f"tavernzoo-{dead.strip()}-1"
    stale.mkdir()
    mine = Sandbox(Limits())
    try:
        assert not stale.exists() and mine.groups["pids"].exists()
    finally:
        mine.close()
        if stale.exists():
            stale.rmdir()
    assert not mine.groups and not _groups_left()


@needs_sandbox
def test_a_sandboxed_program_that_stops_reading_forfeits_on_time(tmp_path):
    # Its stdin pipe shrunk to 4 KiB and never read: a Wyvern request cannot be written whole. The write is
    # bounded by the move's time as the read is; the program and its groups go.
    deaf = str(BotSpec.parse(f"cmd:{PYTHON} {FIXTURES / 'deaf_bot.py'}").sandboxed(""))
    settings = make_settings("wyvern", [GOOD, deaf], 2, config={"num_players": 2}, move_timeout=2.0)
    run_tournament(settings, tmp_path / "t", workers=1)
    lines = read_games(tmp_path / "t" / GAMES_FILE)
    assert [line["forfeit"]["kind"] for line in lines] == ["timeout", "timeout"], [line["forfeit"] for line in lines]
    assert all("did not read its input" in line["forfeit"]["reason"] for line in lines)
    assert not _processes_running(str(FIXTURES / "deaf_bot.py"))
    assert not _groups_left()
