"""Hardening: hostile external bots, a killed tournament, corrupt files, and user mistakes on the command line.

Every bad input here must end in one clear line and a non-zero exit status, never a traceback; whatever an
external program writes, the host's memory and its files stay bounded.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tavernzoo.agents import load_bot
from tavernzoo.eval.tournament import GAMES_FILE, RESULTS_FILE, make_settings, read_games, run_tournament

PYTHON = sys.executable
TAVERNZOO = str(Path(sys.executable).with_name("tavernzoo"))
ZOO = Path(__file__).resolve().parents[1] / "agents" / "zoo"

# The start of every evil bot: answer the handshake and new games properly, misbehave on `act`.
PREAMBLE = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    request = json.loads(line)\n"
    "    kind = request['type']\n"
    "    if kind == 'hello':\n"
    "        print(json.dumps({'type': 'hello', 'protocol': 1, 'name': 'evil'}), flush=True)\n"
    "    elif kind != 'act':\n"
    "        print(json.dumps({'type': 'ok'}), flush=True)\n"
    "    else:\n"
)


def evil_bot(tmp_path: Path, name: str, on_act: str, at_end: str = "") -> str:
    """A ``cmd:`` spec of a bot whose answer to ``act`` (the dict ``request``) is the code ``on_act``;
    ``at_end`` runs when its stdin ends."""
    script = tmp_path / f"{name}.py"
    script.write_text(PREAMBLE + "".join(f"        {line}\n" for line in on_act.splitlines()) + at_end + "\n")
    return f"cmd:{PYTHON} {script}"


def tavernzoo(*argv: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([TAVERNZOO, *argv], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)


# Runs the command line in this fresh process and writes its peak memory (VmHWM: this process's own, unlike
# ru_maxrss, which a child inherits from the process it was forked from) to the file named first.
MEASURED = (
    "import sys\n"
    "from tavernzoo.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "status = open('/proc/self/status').read()\n"
    "peak = next(line.split()[1] for line in status.splitlines() if line.startswith('VmHWM:'))\n"
    "open(sys.argv[1], 'w').write(peak)\n"
    "sys.exit(code)\n"
)


def run_measured(argv: list[str], cwd: Path) -> tuple[int, str, str, int]:
    """Run ``tavernzoo ARGV``; return its exit status, stdout, stderr and peak memory (KiB)."""
    peak = cwd / "peak.txt"
    result = subprocess.run([PYTHON, "-c", MEASURED, str(peak), *argv], capture_output=True, text=True, cwd=cwd,
                            timeout=300, stdin=subprocess.DEVNULL)
    return result.returncode, result.stdout, result.stderr, int(peak.read_text())


# --- external bots: bounded reads, bounded reasons -------------------------------------------------------


FLOOD_MB = 400


@pytest.mark.parametrize(("name", "on_act", "kind"), [
    # 400 MB on stderr without a newline, then an exit: once drove the host to gigabytes.
    ("stderr-flood", f"for _ in range({FLOOD_MB * 16}): sys.stderr.write('x' * 65536)\n"
                     "sys.stderr.flush()\nsys.exit(3)", "crash"),
    # 400 MB of short lines nobody asked for, then silence.
    ("stdout-flood", f"for _ in range({FLOOD_MB * 4}): sys.stdout.write('{{}}\\n' * 87382)\n"
                     "sys.stdout.flush()\nsys.exit(3)", "garbage"),
    # One reply line of 400 MB.
    ("long-line", f"for _ in range({FLOOD_MB * 16}): sys.stdout.write('x' * 65536)\n"
                  "sys.stdout.write('\\n')\nsys.stdout.flush()", "garbage"),
], ids=["stderr-flood", "stdout-flood", "long-line"])
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_flooding_bot_leaves_the_host_memory_flat(tmp_path, name, on_act, kind):
    spec = evil_bot(tmp_path, name, on_act)
    code, stdout, stderr, maxrss = run_measured(
        ["tournament", "tiny_minotaur", "--bots", spec, "random", "--games", "2", "--workers", "1",
         "--move-timeout", "60", "--no-plot", "--no-progress", "--out", str(tmp_path / "t")], tmp_path)
    assert code == 0, stderr
    forfeits = [line["forfeit"] for line in read_games(tmp_path / "t" / GAMES_FILE)]
    # Every game is forfeited; on a machine loaded enough that the restarted program misses its time limit
    # one may be a timeout instead.
    assert len(forfeits) == 2 and all(forfeits) and kind in [f["kind"] for f in forfeits], forfeits
    # The host never held the flood: its peak stays far below the 400 MB the bot wrote.
    assert maxrss < 200 * 1024, f"host peak memory {maxrss // 1024} MB"
    assert len(stdout) + len(stderr) < 20_000


@pytest.mark.parametrize(("size", "marker"), [(10_000_000, "line longer than"), (500_000, "more characters]")])
def test_a_huge_reply_is_cut_short_in_every_file_and_on_the_terminal(tmp_path, size, marker):
    spec = evil_bot(tmp_path, "huge-action", f"print(json.dumps({{'type': 'action', 'action': 'x' * {size}}}), "
                                              "flush=True)")
    result = tavernzoo("tournament", "tiny_minotaur", "--bots", spec, "random", "--games", "2", "--workers", "1",
                       "--no-plot", "--no-progress", "--out", str(tmp_path / "t"))
    assert result.returncode == 0, result.stderr
    for file in (GAMES_FILE, RESULTS_FILE):
        assert (tmp_path / "t" / file).stat().st_size < 100_000
    reasons = [line["forfeit"]["reason"] for line in read_games(tmp_path / "t" / GAMES_FILE)]
    assert reasons and all(marker in reason and len(reason) < 2_000 for reason in reasons)
    assert len(result.stdout) + len(result.stderr) < 20_000


def test_a_huge_error_from_an_in_process_bot_is_cut_short(tmp_path, monkeypatch):
    from tavernzoo.agents.random_bot import RandomBot

    def explode(self, observation):
        raise RuntimeError("boom " * 1_000_000)

    monkeypatch.setattr(RandomBot, "act", explode)
    run_tournament(make_settings("tiny_minotaur", ["heuristic", "random"], 2), tmp_path / "t")
    assert (tmp_path / "t" / GAMES_FILE).stat().st_size < 100_000


def test_a_missing_program_is_refused_at_once_with_its_name(tmp_path):
    with pytest.raises(ValueError, match="no-such-program-here.*not found"):
        load_bot("cmd:no-such-program-here --flag", "tiny_minotaur")
    with pytest.raises(ValueError, match="cmd:'unbalanced"):
        load_bot("cmd:'unbalanced", "tiny_minotaur")


# --- a killed tournament -----------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_stop_when_the_tournament_is_killed(tmp_path):
    # An external bot that outlives the end of its input: the workers must stop it themselves.
    stubborn = evil_bot(tmp_path, "stubborn", "legal = [i for i, bit in enumerate(request['action_mask']) if bit]\n"
                        "print(json.dumps({'type': 'action', 'index': legal[0]}), flush=True)",
                        at_end="import time\ntime.sleep(600)")
    out = tmp_path / "t"
    process = subprocess.Popen(
        [TAVERNZOO, "tournament", "tiny_minotaur", "--bots", "random", stubborn, "--games", "1000000",
         "--workers", "2", "--no-plot", "--no-progress", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:  # until both workers play, each with its copy of the bot
            workers = {pid for pid in _children(process.pid) if _children(pid)}
            if len(workers) >= 2:
                break
            assert process.poll() is None and time.monotonic() < deadline, "the tournament did not start"
            time.sleep(0.2)
        bots = set().union(*(_children(pid) for pid in workers))
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    workers |= bots
    deadline = time.monotonic() + 60  # an upper bound, not a speed requirement
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in workers if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "worker processes or their bots kept running after the tournament was killed"


# --- corrupt games.jsonl -------------------------------------------------------------------------------------


def test_a_corrupt_line_in_games_jsonl_is_reported_and_replayed_on_resume(tmp_path, caplog):
    settings = make_settings("tiny_minotaur", ["heuristic", "random"], 8)
    whole = run_tournament(settings, tmp_path / "whole")
    run_tournament(settings, tmp_path / "t")
    path = tmp_path / "t" / GAMES_FILE
    lines = path.read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]  # cut in the middle: not JSON
    lines[4] = json.dumps({"deal": "two"})  # JSON, but not a game line
    path.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="tavernzoo.tournament"):
        assert len(read_games(path)) == 6
    messages = [record.getMessage() for record in caplog.records]
    assert any("line 3" in message for message in messages) and any("line 5" in message for message in messages)
    resumed = run_tournament(settings, tmp_path / "t", resume=True)
    assert resumed["games"] == 8
    assert resumed["leaderboard"] == whole["leaderboard"]


# --- the command line: a corpus of bad input ---------------------------------------------------------------

def _manifest_with(tmp_path: Path, **changes) -> str:
    manifest = json.loads((ZOO / "tiny_minotaur.json").read_text())
    manifest.update(changes)
    (tmp_path / "bot.json").write_text(json.dumps(manifest))
    (tmp_path / "bot.onnx").write_bytes((ZOO / "tiny_minotaur.onnx").read_bytes())
    return str(tmp_path / "bot.onnx")


# Each case: argv (with {tmp} for the test's directory), files to write first, words the error must hold.
CASES = [
    (["match", "--bots", "cmd:no-such-program-here", "random", "--games", "2"], {}, "no-such-program-here"),
    (["tournament", "tiny_minotaur", "--bots", "cmd:no-such-program-here", "random", "--games", "2",
      "--out", "{tmp}/t"], {}, "no-such-program-here"),
    (["match", "--bots", "cmd:'unbalanced", "random"], {}, "quotation"),
    (["match", "--bots", f"cmd:{PYTHON} -c 'import sys; sys.exit(3)'", "random", "--games", "2"], {},
     "external bot failed (crash)"),
    (["match", "--config", "{tmp}/list.json", "--games", "2"], {"list.json": "[1, 2]"}, "list.json"),
    (["match", "--config", "{tmp}/bad.json", "--games", "2"], {"bad.json": "{nope"}, "bad.json"),
    (["match", "--config", "{tmp}/bad.toml", "--games", "2"], {"bad.toml": "= 1"}, "bad.toml"),
    (["match", "--config", "{tmp}/binary.json"], {"binary.json": b"\xff\xfe\x00"}, "binary.json"),
    (["match", "--config", "{tmp}", "--games", "2"], {}, "directory"),
    (["match", "--config", "{tmp}/missing.json"], {}, "missing.json"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--config", "{tmp}/list.json", "--out",
      "{tmp}/t"], {"list.json": "[1]"}, "list.json"),
    (["match", "--bots", "manifest", "random", "--games", "2"], {"manifest": {"actions": None}}, "actions"),
    (["match", "--bots", "manifest", "random", "--games", "2"], {"manifest": {"game": [1]}}, "game"),
    (["match", "--bots", "manifest", "random", "--games", "2"], {"manifest": {"observation": {"size": "x"}}},
     "observation"),
    (["match", "--bots", "manifest", "random", "--games", "2"], {"manifest": {"onnx": 5}}, "onnx"),
    (["train", "--set", "learning_rate=abc"], {}, "learning_rate"),
    (["train", "--set", "net_arch=abc"], {}, "net_arch"),
    (["train", "--set", "game_config=abc"], {}, "game_config"),
    (["train", "--set", "pfsp=maybe"], {}, "pfsp"),
    (["train", "--set", "gamma=nan"], {}, "gamma"),
    (["train", "--set", "clip_range=0"], {}, "clip_range=0 must be above 0"),
    (["train", "--set", "pool_bots=nosuchbot"], {}, "nosuchbot"),
    (["train", "--config", "{tmp}/list.json"], {"list.json": "[1]"}, "list.json"),
    (["train", "--config", "{tmp}/bad.toml"], {"bad.toml": "train = 5"}, "bad.toml"),
    (["match", "--config", "{tmp}/deep.json"], {"deep.json": "[" * 100_000 + "]" * 100_000}, "deep.json"),
    (["bot", "cmd:no-such-program-here"], {}, "no-such-program-here"),
    (["match", "--bots", "{tmp}/ck", "random"], {"ck/policy.json": "{", "ck/policy.npz": ""}, "policy.json"),
    (["bot", "{tmp}/ck"], {"ck/policy.json": "[1]", "ck/policy.npz": ""}, "policy.json"),
    (["match", "--bots", "{tmp}/ck", "random"],
     {"ck/policy.json": '{"format": "tavernzoo-policy", "layers": [4]}', "ck/policy.npz": "garbage"}, "policy.npz"),
    (["match", "--games", "0"], {}, "games"),
    (["match", "--games", "abc"], {}, "games"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--workers", "0", "--out", "{tmp}/t"], {},
     "workers"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--move-timeout", "inf", "--out", "{tmp}/t"],
     {}, "timeout"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--move-timeout", "-1", "--out", "{tmp}/t"],
     {}, "timeout"),
    (["tournament", "tiny_minotaur", "--resume", "--out", "{tmp}/nothing"], {}, "nothing to resume"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--workers", "100000", "--out", "{tmp}/t"], {},
     "workers"),
    (["tournament", "tiny_minotaur", "--bots", "random", "random", "--sprt", "0", "inf", "0.05", "0.05", "--out",
      "{tmp}/t"], {}, "sprt"),
    (["match", "--config", "/dev/zero"], {}, "/dev/zero"),
    (["tournament", "tiny_minotaur", "--resume", "--out", "{tmp}/r"], {"r/tournament.json": "[1]"},
     "tournament.json"),
    (["tournament", "tiny_minotaur", "--resume", "--out", "{tmp}/r"], {"r/tournament.json": "{}"},
     "tournament.json"),
    (["tournament", "tiny_minotaur", "--resume", "--out", "{tmp}/r"], {"r/tournament.json": "garbage"},
     "tournament.json"),
    (["match", "--set", "classes=wizard"], {}, "wizard"),
    (["match", "--set", "=5"], {}, "KEY=VALUE"),
    (["match", "--bots", "random@x", "random"], {}, "random@x"),
    (["match", "--bots", "zoo:chess", "random"], {}, "chess"),
    (["match", "--records", "{tmp}/no/such/dir/games.jsonl", "--games", "2"], {}, "games.jsonl"),
    (["replay", "{tmp}/missing.jsonl"], {}, "missing.jsonl"),
    (["wyvern", "validate", "{tmp}/missing.toml"], {}, "missing.toml"),
    # Game options of the wrong type (envs/core.py make_config checks them for every game).
    (["match", "--set", "starting_hp=1.5"], {}, "starting_hp"),
    (["match", "--set", "ruleset=5"], {}, "ruleset"),
    (["match", "wyvern", "--set", "start_hand=1.5"], {}, "start_hand"),
    (["replay", "{tmp}/list.jsonl"], {"list.jsonl": "[1, 2]\n"}, "record"),
    (["replay", "{tmp}/null.jsonl"], {"null.jsonl": "null\n"}, "record"),
    (["replay", "{tmp}/r.json"], {"r.json": {"actions": 5}}, "actions"),
    (["replay", "{tmp}/r.json"], {"r.json": {"actions": "abc"}}, "actions"),
    (["replay", "{tmp}/r.json"], {"r.json": {"config": [1]}}, "config"),
]

for _game in ("tiny_minotaur", "ministeel", "minefield", "wyvern"):
    CASES += [
        (["match", _game, "--set", "num_players=abc", "--games", "2"], {}, "num_players"),
        (["match", _game, "--set", "num_players=1.5", "--games", "2"], {}, "num_players"),
        (["match", _game, "--set", "num_players=[1]", "--games", "2"], {}, "num_players"),
        (["match", _game, "--set", "no_such_option=1", "--games", "2"], {}, "no_such_option"),
    ]


def _valid_record() -> dict:
    from tavernzoo.envs import get_game
    from tavernzoo.eval.match import make_env, play_game

    game = get_game("tiny_minotaur")
    env = make_env(game)
    _, record = play_game(env, [load_bot("random", game, seed=0), load_bot("random", game, seed=1)], 0)
    return record


@pytest.mark.parametrize(("argv", "files", "words"), CASES)
def test_bad_input_gets_one_clear_line_and_no_traceback(tmp_path, argv, files, words):
    argv = [part.replace("{tmp}", str(tmp_path)) for part in argv]
    for name, content in files.items():
        if name == "manifest":
            argv[argv.index("manifest")] = _manifest_with(tmp_path, **content)
            continue
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):  # a record with some fields changed
            content = json.dumps({**_valid_record(), **content})
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if argv[0] in ("match", "tournament"):
        argv.append("--no-progress")
    result = tavernzoo(*argv, cwd=tmp_path)
    output = result.stderr + result.stdout
    assert result.returncode != 0, output
    assert "Traceback" not in output, output
    last = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1]
    assert words.lower() in last.lower(), output


# --- output that scripts can read ---------------------------------------------------------------------------


def test_piped_tables_keep_each_row_on_one_line_and_show_no_progress_bar(tmp_path):
    zoo = tavernzoo("zoo")
    assert zoo.returncode == 0
    # the first column and the last (the fair share) on one line, whatever the bundled bot's figures
    rows = [line.rstrip(" │|") for line in zoo.stdout.splitlines() if "zoo:tiny_minotaur" in line]
    assert rows and rows[0].endswith("0.500")
    match = tavernzoo("match", "--bots", "heuristic", "random", "--games", "400")
    assert match.returncode == 0 and match.stderr == ""  # no progress bar when stderr is not a terminal
    assert [line for line in match.stdout.splitlines() if "heuristic" in line and "400" in line]
    games = tavernzoo("games")
    assert [line for line in games.stdout.splitlines() if "starting_hp" in line and "100" in line]


def test_json_output_is_one_document_on_stdout(tmp_path):
    games = json.loads(tavernzoo("games", "--json").stdout)
    assert {entry["name"] for entry in games} >= {"tiny_minotaur", "wyvern"}
    zoo = json.loads(tavernzoo("zoo", "--json").stdout)
    assert zoo["tiny_minotaur"]["game"] == "tiny_minotaur"
    match = json.loads(tavernzoo("match", "--bots", "heuristic", "random", "--games", "6", "--json").stdout)
    assert match["games"] == 6 and [row["bot"] for row in match["rows"]] == ["heuristic", "random"]
    assert sum(row["wins"] for row in match["rows"]) + match["rows"][0]["draws"] == 6
    result = tavernzoo("tournament", "tiny_minotaur", "--bots", "heuristic", "random", "--games", "4", "--json",
                       "--workers", "1", "--no-plot", "--out", str(tmp_path / "t"))
    tournament = json.loads(result.stdout)
    assert tournament == json.loads((tmp_path / "t" / RESULTS_FILE).read_text())
