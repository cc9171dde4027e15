"""A sandbox for ``cmd:`` bot programs written by others (docs/sandbox.md).

A sandboxed program runs under bubblewrap (``bwrap``, Debian's ``bubblewrap``) inside control groups:

    ===============  ====================================================  ===================
    what             how                                                   breaking it
    ===============  ====================================================  ===================
    memory           cgroup ``memory.limit_in_bytes`` (and ``memsw``)      killed: ``memory``
    processes        cgroup ``pids.max``; its own pid namespace            killed: ``processes``
    CPU time         cgroup ``cpuacct.usage``, per game, watched           killed: ``cpu``
    open files       ``RLIMIT_NOFILE`` (inherited by every process)        refused (EMFILE)
    network          its own empty network namespace (no interface up)     refused
    files            ``/usr``, ``/etc`` (and ``/opt``) read-only, the      refused / not there
                     program's folder read-only, a private ``/tmp``
                     (tmpfs, the scratch folder, counted as memory);
                     nothing else: no home, no other bot, no output;
                     what others may not read in /etc stays hidden
    ===============  ====================================================  ===================

Why cgroups and not rlimits alone: ``RLIMIT_NPROC`` counts every process of the *user* (and root ignores
it), ``RLIMIT_AS`` makes allocations fail inside the program (which then crashes with a message of its
choice, so the host cannot say which limit was hit) and ``RLIMIT_CPU`` is per process. A cgroup counts the
program and everything it starts, and its counters (``oom_kill``, ``pids.events``, ``cpuacct.usage``) say
which limit was broken. A watcher thread reads them every :data:`POLL_SECONDS`; on a breach it kills every
process of the group and the bot forfeits with the limit's name as the kind.

The program runs as an unprivileged user of the host, a uid of its own that no account has
(:data:`UID_BASE` and up), with no capability, no supplementary group and ``no_new_privs``: it may read
only what any user of the machine may read, and it cannot write the groups that hold it. Bubblewrap,
started by root, builds the sandbox (its mounts are made with root's access, so an interpreter under a
private ``/root`` can be shown) and ``setpriv`` drops to that uid before the program's first instruction.
A seccomp filter refuses new namespaces and mounts (``unshare``, ``clone`` with a namespace flag,
``setns``, ``mount`` and the new mount API) and the kernel keyrings, so the program cannot make a world
of its own in which it is root. Bubblewrap starts with an empty environment (``/proc/1/environ``, the
sandbox's first process, holds nothing of the host's, and that process is root's: unreadable anyway); the
program's own is ``PATH``, ``HOME=/tmp``, ``TMPDIR=/tmp`` and ``LANG``. ``/dev`` holds the usual devices
and is read-only but for ``/dev/shm``, a private tmpfs like ``/tmp``. A new session: no terminal.

Where the machine cannot do all this (no ``bwrap``, ``setpriv`` or libseccomp, no writable cgroup
controllers, namespaces refused, or a trial sandbox that is not confined) asking for the sandbox raises
:class:`SandboxUnavailable` with one line saying what is missing: a program is never run unconfined in
its place.
"""

from __future__ import annotations

import atexit
import errno
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

IDLE_GRACE_SECONDS = 1.0
"""CPU seconds a program may use off its turn before the ``idle`` share applies (its start, its imports)."""
POLL_SECONDS = 0.05
"""How often the watcher reads the counters (a CPU burner overshoots its budget by about this much)."""
CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpuacct")
SYSTEM_DIRS = ("/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Read-only in the sandbox (those that exist; links such as ``/bin -> usr/bin`` are kept as links)."""
UID_BASE = 0x70000000
"""The sandboxed programs' uids (and gids) start here, one per sandbox: far above the accounts and the
ranges that container tools hand out, so no file or process of the host has one."""
NAMESPACE_FLAGS = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
                   "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                   "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}
REFUSED_SYSCALLS = ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
                    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "keyctl", "add_key", "request_key")
"""Refused (EPERM) by the seccomp filter: a program in a namespace of its own could mount what it likes
there (a cgroup hierarchy, say) and the keyrings are not namespaced."""


class SandboxUnavailable(ValueError):
    """This machine cannot sandbox programs (the message says what is missing)."""


@dataclass(frozen=True)
class Limits:
    """The limits of one sandboxed program (``--sandbox memory=256,processes=32,cpu=30,files=64``)."""

    memory: int = 512
    """MiB of memory for the program and everything it starts (its /tmp included)."""
    processes: int = 256
    """Processes and threads at once (the sandbox's own two included; a numpy program starts a thread per
    core of the machine)."""
    cpu: float = 60.0
    """CPU seconds per game, summed over its processes, counted also while the opponents think."""
    idle: float = 0.1
    """The share of the time it is not asked anything (the opponents think, the host writes) that it may
    compute in, after a grace of :data:`IDLE_GRACE_SECONDS` over its life: a program that keeps computing
    on the others' time is stopped even in a tournament of short games."""
    files: int = 256
    """Open files per process."""

    RANGES = {"memory": (16, 1 << 20), "processes": (4, 4096), "cpu": (0.1, 86400.0), "idle": (0.0, 64.0),
              "files": (16, 65536)}
    FLOATS = ("cpu", "idle")

    @classmethod
    def parse(cls, text: str) -> Limits:
        """Limits from ``key=value,...`` (empty: the defaults); a bad item is one clear ValueError."""
        values: dict[str, float] = {}
        names = [item.name for item in fields(cls)]
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            key, sep, value = item.partition("=")
            key = key.strip()
            if not sep or key not in names:
                raise ValueError(f"sandbox limit {item!r}: write KEY=VALUE with KEY one of {', '.join(names)}")
            low, high = (f"{bound:g}" if key in cls.FLOATS else f"{bound:d}" for bound in cls.RANGES[key])
            try:
                number = float(value) if key in cls.FLOATS else int(value)
            except ValueError:
                kind = "number" if key in cls.FLOATS else "whole number"
                raise ValueError(f"sandbox limit {item!r}: {key} takes a {kind} from {low} to {high}") from None
            if not cls.RANGES[key][0] <= number <= cls.RANGES[key][1]:  # also refuses nan
                raise ValueError(f"sandbox limit {item!r}: {key} must be from {low} to {high}")
            values[key] = number
        return cls(**values)

    def format(self) -> str:
        return ",".join(f"{item.name}={getattr(self, item.name):g}" for item in fields(self))


def available() -> None:
    """Raise :class:`SandboxUnavailable` (one line) unless programs can be sandboxed here, as the module
    docstring says: the tools, the groups, and a trial sandbox that proves itself confined."""
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            raise SandboxUnavailable(f"--sandbox needs {package}: no '{tool}' on PATH (apt-get install {package})")
    if os.geteuid() != 0:
        raise SandboxUnavailable("--sandbox runs each program as a user of its own, which only root can do "
                                 "(run as root)")
    for controller in CONTROLLERS:
        parent = _parent(controller)
        if parent is None or not os.access(parent, os.W_OK):
            raise SandboxUnavailable(f"--sandbox needs a writable cgroup v1 '{controller}' controller under "
                                     f"{CGROUP_ROOT} (run as root, or on a machine that mounts it)")
    problem = _trial()
    if problem:
        raise SandboxUnavailable(f"--sandbox: {problem}")


TRIAL_PROBE = (
    '[ "$(id -u)" = "$1" ] || echo "it runs as uid $(id -u), not its own $1";'
    ' unshare -U true 2>/dev/null && echo "it can make a user namespace";'
    ' unshare -m true 2>/dev/null && echo "it can make a mount namespace";'
    ' [ -n "$(tr -d "\\000" </proc/1/environ 2>/dev/null)" ] && echo "it can read the host environment";'
    ' touch /dev/probe 2>/dev/null && echo "it can write /dev";'
    ' echo probed'
)
"""The trial sandbox's shell: one line for each property it lacks, then ``probed``."""


@cache
def _trial() -> str:
    """Run a trial program in the sandbox (once per process): '' when it is confined, else what is wrong."""
    try:
        uid = _uid()
        argv = _bwrap_argv(["/bin/sh", "-c", TRIAL_PROBE, "trial", str(uid)], uid, ["--chdir", "/tmp"])
        trial = subprocess.run(["/bin/sh", "-c", _EXEC_WITH_FILTER, "trial", _seccomp_file(), *argv],
                               capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired, SandboxUnavailable) as error:
        return f"bwrap cannot run here ({error})"
    lines = trial.stdout.decode(errors="replace").split("\n")
    if trial.returncode != 0 or "probed" not in lines:
        detail = trial.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"this machine refuses the namespaces a sandbox needs ({detail[0]})"
    missing = [line for line in lines if line and line != "probed"]
    if missing:
        return "a trial program was not confined: " + "; ".join(missing)
    return ""


def _parent(controller: str) -> Path | None:
    """This process's own group of ``controller`` (sandboxes nest inside it), or None without one."""
    base = CGROUP_ROOT / controller
    if not base.is_dir():
        return None
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                return base / path.lstrip("/")
    except OSError:
        return None
    return base


_EXEC_WITH_FILTER = 'exec 9<"$1" && shift && exec /usr/bin/env -i "$@"'
"""Opens the seccomp filter (``$1``) as descriptor 9 for ``bwrap --seccomp 9`` and starts bwrap with an
empty environment (the rest of the arguments)."""


def _bwrap_argv(argv: list[str], uid: int, binds: list[str]) -> list[str]:
    """bwrap confining ``argv`` as ``uid`` with ``binds`` (and ``--chdir``) added to the system folders;
    the filter is read from descriptor 9. Every mount is made by bwrap as root: the program, once
    ``setpriv`` has dropped to its uid, can read only what any user may."""
    system: list[str] = []
    for directory in SYSTEM_DIRS:
        path = Path(directory)
        if path.is_symlink():
            system += ["--symlink", os.readlink(path), directory]
        elif path.is_dir():
            system += ["--ro-bind", directory, directory]
    environment = ["--clearenv", "--setenv", "PATH", os.environ.get("PATH", "/usr/bin:/bin"),
                   "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8"]
    # No user namespace: bwrap runs as root (its mounts see what root sees) and the program gets a real
    # uid of its own instead of a root that a namespace maps to the host's.
    namespaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
                  "--die-with-parent", "--new-session"]
    drop = [_setpriv(), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]
    return [_bwrap(), *namespaces, *environment, "--proc", "/proc", "--dev", "/dev", "--perms", "1777",
            "--tmpfs", "/tmp", *system, *_parents(binds), *binds,
            "--remount-ro", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm",
            "--remount-ro", "/",  # the root too: only /tmp and /dev/shm are writable
            "--seccomp", "9", "--", *drop, *argv]


def _parents(binds: list[str]) -> list[str]:
    """``--dir`` for the folders above the bound ones that bwrap would otherwise make (private to root):
    made readable (0755), so the program, which is not root, can reach what is bound below them."""
    targets = [binds[index + 2] for index, word in enumerate(binds) if word == "--ro-bind"]
    made: list[str] = []
    for target in targets:
        for parent in reversed(Path(target).parents):
            place = str(parent)
            if place in ("/", "/tmp") or place in made or place in targets:
                continue
            if any(place == d or place.startswith(d + os.sep) for d in SYSTEM_DIRS):
                continue
            made.append(place)
    return [word for place in made for word in ("--perms", "0755", "--dir", place)]


def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


def _setpriv() -> str:
    """setpriv by its path inside the sandbox (a system folder, bound read-only there)."""
    found = os.path.realpath(shutil.which("setpriv") or "/usr/bin/setpriv")
    if not any(found.startswith(d + os.sep) for d in SYSTEM_DIRS):
        raise SandboxUnavailable(f"--sandbox needs setpriv in a system folder, not {found}")
    return found


_uid_counter = 0


def _uid() -> int:
    """A uid (and gid) of its own for the next sandbox: from the host's pid and a counter."""
    global _uid_counter
    with _counter_lock:
        _uid_counter += 1
        return UID_BASE + ((os.getpid() & 0xFFFF) << 8 | _uid_counter & 0xFF)


_filter: tuple[int, str] | None = None


def _seccomp_file() -> str:
    """The seccomp filter as a BPF file (written once per process, removed at its exit): every syscall
    allowed but :data:`REFUSED_SYSCALLS` and ``clone`` with a namespace flag, refused with EPERM, and
    ``clone3`` (whose flags a filter cannot read) answered ENOSYS, so the C library falls back to ``clone``."""
    global _filter
    with _counter_lock:
        if _filter is not None and _filter[0] == os.getpid() and os.path.exists(_filter[1]):
            return _filter[1]
        try:
            import pyseccomp as seccomp
        except (ImportError, OSError, RuntimeError) as error:
            raise SandboxUnavailable(f"--sandbox needs libseccomp (apt-get install libseccomp2): {error}") from None
        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in REFUSED_SYSCALLS:
            try:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (OSError, ValueError, RuntimeError):  # a syscall this libseccomp or machine lacks
                continue
        for flag in NAMESPACE_FLAGS.values():
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        try:
            rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        except (OSError, ValueError, RuntimeError):
            pass
        descriptor, path = tempfile.mkstemp(prefix="tavernzoo-seccomp-", suffix=".bpf")
        with os.fdopen(descriptor, "wb") as file:
            rules.export_bpf(file)
        _filter = (os.getpid(), path)
        atexit.register(_remove_filter, os.getpid(), path)
        return path


def _remove_filter(pid: int, path: str) -> None:
    if os.getpid() == pid:
        try:
            os.unlink(path)
        except OSError:
            pass


_counter = 0
_counter_lock = threading.Lock()


class Sandbox:
    """One program's cgroups, its bwrap command line and the watcher of its limits.

    ``wrap(argv)`` gives the command to start; ``start_game()`` opens a game's CPU budget; ``breach`` is
    None or ``(kind, reason)`` once a limit was broken (the program is then already killed); ``close()``
    kills whatever is left and removes the groups."""

    def __init__(self, limits: Limits):
        global _counter
        available()
        _remove_stale_groups()
        self.limits = limits
        self.uid = _uid()
        with _counter_lock:
            _counter += 1
            name = f"tavernzoo-{os.getpid()}-{_counter}"
        self.groups: dict[str, Path] = {}
        try:
            for controller in CONTROLLERS:
                group = _parent(controller) / name
                group.mkdir()
                self.groups[controller] = group
            memory = limits.memory << 20
            (self.groups["memory"] / "memory.limit_in_bytes").write_text(str(memory))
            swap = self.groups["memory"] / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(str(memory))  # no swapping past the limit either
            (self.groups["pids"] / "pids.max").write_text(str(limits.processes))
        except OSError as error:
            self.close()
            raise SandboxUnavailable(f"--sandbox: cannot set up the program's cgroups ({error})") from None
        self.breach: tuple[str, str] | None = None
        self._cpu_start = self._cpu_used()
        # Off-turn accounting: CPU and wall seconds while the program was not asked anything, summed
        # over its finished off-turn spells, and where the current one began (None while it is asked).
        # Its start (until the hello reply) is not off-turn: a program may load what it needs.
        self._idle_cpu = self._idle_wall = 0.0
        self._idle_since: tuple[float, float] | None = None
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    # --- the command line ---------------------------------------------------------------------------

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run inside the sandbox: a shell joins the groups, sets the open-files limit, opens the
        seccomp filter and becomes bwrap (with an empty environment), which becomes ``setpriv``, which
        becomes the program as its own uid (so the group holds it from its first instruction).
        A program whose folder or interpreter other users may not read is refused with one line: it
        could not read them inside."""
        program, folder, script, argv = _program_folder(argv)
        binds: list[str] = []
        for extra in _interpreter_dirs(program, script):
            binds += ["--ro-bind", str(extra), str(extra)]
        if folder is not None:
            binds += ["--ro-bind", str(folder), str(folder), "--chdir", str(folder)]
        else:
            binds += ["--chdir", "/tmp"]
        _readable_by_all([binds[index + 1] for index, word in enumerate(binds) if word == "--ro-bind"]
                         + [argument for argument in argv if Path(argument).is_absolute() and Path(argument).is_file()])
        join = " ".join(f'echo $$ > "${index + 1}/cgroup.procs" &&' for index in range(len(CONTROLLERS)))
        script = f'{join} ulimit -n {self.limits.files} && shift {len(CONTROLLERS)} && {_EXEC_WITH_FILTER}'
        return ["/bin/sh", "-c", script, "sandbox",
                *(str(self.groups[c]) for c in CONTROLLERS), _seccomp_file(), *_bwrap_argv(argv, self.uid, binds)]

    # --- limits ---------------------------------------------------------------------------------------

    def start_game(self) -> None:
        """A game begins: its CPU budget starts from what the program used so far."""
        self._cpu_start = self._cpu_used()

    def asked(self) -> None:
        """The host sent a request: the program's turn (its CPU counts against the game only)."""
        since, self._idle_since = self._idle_since, None
        if since is not None:
            self._idle_cpu += self._cpu_used() - since[0]
            self._idle_wall += time.monotonic() - since[1]

    def answered(self) -> None:
        """The program answered: what it computes from now on is on the others' time."""
        if self._idle_since is None:
            self._idle_since = (self._cpu_used(), time.monotonic())

    def _idle(self) -> tuple[float, float]:
        since = self._idle_since
        if since is None:
            return self._idle_cpu, self._idle_wall
        return self._idle_cpu + self._cpu_used() - since[0], self._idle_wall + time.monotonic() - since[1]

    def _cpu_used(self) -> float:
        try:
            return int((self.groups["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError, KeyError):
            return 0.0

    def check(self) -> tuple[str, str] | None:
        """The limit broken so far, as ``(kind, reason)``, or None."""
        try:
            oom = (self.groups["memory"] / "memory.oom_control").read_text()
            kills = int(oom.split("oom_kill ")[1].split()[0]) if "oom_kill " in oom else 0
            # under_oom: the program waits for memory that no kill can free (its files in /tmp, /dev/shm).
            if kills or "under_oom 1" in oom or self._over_memory():
                return "memory", f"the program used more than its {self.limits.memory} MiB of memory"
            events = (self.groups["pids"] / "pids.events").read_text().split()
            if int(events[events.index("max") + 1]) > 0:
                return "processes", f"the program tried to run more than {self.limits.processes} processes at once"
        except (OSError, ValueError, IndexError, KeyError):
            return None
        used = self._cpu_used() - self._cpu_start
        if used > self.limits.cpu:
            return "cpu", f"the program used {used:.1f} CPU seconds in one game; its limit is {self.limits.cpu:g}"
        idle_cpu, idle_wall = self._idle()
        if idle_cpu > IDLE_GRACE_SECONDS + self.limits.idle * idle_wall:
            return "cpu", (f"the program computed {idle_cpu:.1f} CPU seconds while not asked anything in "
                           f"{idle_wall:.1f} s; it may use {self.limits.idle:g} of that time after a "
                           f"{IDLE_GRACE_SECONDS:g} s grace")
        return None

    def _over_memory(self) -> bool:
        # An allocation refused by the limit (without an OOM kill, e.g. a program that catches MemoryError).
        failures = int((self.groups["memory"] / "memory.failcnt").read_text())
        usage = int((self.groups["memory"] / "memory.max_usage_in_bytes").read_text())
        return failures > 0 and usage >= (self.limits.memory << 20) - (1 << 20)

    def _watch(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            found = self.check()
            if found is not None:
                self.breach = found
                self.kill()
                return

    # --- the end --------------------------------------------------------------------------------------

    def kill(self) -> None:
        """SIGKILL every process in the groups and any group below them (a pid namespace dies with its
        first process anyway)."""
        for _ in range(50):
            pids = {pid for group in self.groups.values() for pid in _processes(group)}
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def close(self) -> None:
        """Stop the watcher, kill what is left and remove the groups, with any made below them."""
        if getattr(self, "_stop", None) is not None:
            self._stop.set()
        self.kill()
        for group in self.groups.values():
            _remove_tree(group)
        self.groups = {}


def _tree(group: Path) -> list[Path]:
    """``group`` and the groups below it, the deepest first."""
    found = [Path(folder) for folder, _, _ in os.walk(group)]
    return sorted(found, key=lambda path: len(path.parts), reverse=True)


def _processes(group: Path) -> list[int]:
    pids: list[int] = []
    for place in _tree(group):
        try:
            pids += [int(pid) for pid in (place / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            continue
    return pids


def _remove_tree(group: Path, attempts: int = 100) -> None:
    """Remove ``group`` and the groups below it (a group goes once its processes have exited)."""
    for place in _tree(group):
        for _ in range(attempts):
            try:
                place.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:  # still busy while the last processes exit
                time.sleep(0.02)


def _readable_by_all(paths: list[str]) -> None:
    """Refuse (one line) a folder or file that the program, a user of no group, could not read."""
    for path in dict.fromkeys(paths):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & needed != needed:
            kind = "folder" if stat.S_ISDIR(mode) else "file"
            raise SandboxUnavailable(f"--sandbox: other users may not read the {kind} {path}, so the program, "
                                     f"which runs as a user of its own, could not either (chmod o+rX {path})")


def _remove_stale_groups() -> None:
    """Remove the empty groups a host killed with SIGKILL left behind (named after its pid, now gone)."""
    for controller in CONTROLLERS:
        parent = _parent(controller)
        if parent is None:
            continue
        try:
            groups = list(parent.glob("tavernzoo-*-*"))
        except OSError:
            continue
        for group in groups:
            pid = group.name.split("-")[1]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                _remove_tree(group, attempts=1)  # only empty groups go; one with processes in it stays


def _program_folder(argv: list[str]) -> tuple[str, Path | None, bool, list[str]]:
    """The program run, the folder made visible (read-only: the program file's, which is the first
    argument naming a file, else the program's own when it is given as a path) and ``argv`` with that
    file's path made absolute (the sandbox starts in that folder, not in the host's); the bool is False
    when the program is itself the program file (given as a path, no file argument), else it may be an
    interpreter."""
    program = argv[0]
    if os.sep in program:
        program = str(Path(program).absolute())
    argv = [program, *argv[1:]]
    for index, argument in enumerate(argv[1:], start=1):
        candidate = Path(argument)
        if not argument.startswith("-") and candidate.is_file():
            path = candidate.absolute()
            return program, path.parent, True, [*argv[:index], str(path), *argv[index + 1:]]
    if os.sep in program:
        return program, Path(program).parent, False, argv
    return program, None, True, argv


def _interpreter_dirs(program: str, script: bool) -> list[Path]:
    """What an interpreter needs to run, visible read-only: a virtual environment the program lives in
    (``.venv/bin/python``, with the installation its ``pyvenv.cfg`` names) and, for an interpreter outside
    the system folders (``~/.pyenv/versions/3.11/bin/python3``), its installation. That installation is
    shown only for a virtual environment or when the program runs a script (``script``): a program file
    of its own shows its own folder, nothing above."""
    path = Path(shutil.which(program) or program).absolute()
    found: list[Path] = []
    for parent in list(path.parents)[:2]:
        config = parent / "pyvenv.cfg"
        if config.is_file():
            found.append(parent)
            for line in config.read_text(errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    found.append(Path(value.strip()).parent)
            break
    real = path.resolve()
    if (script or found) and real.parent.name == "bin":
        found.append(real.parent.parent)
    return [place for place in dict.fromkeys(found)
            if place.is_dir() and not any(str(place) == d or str(place).startswith(d + os.sep) for d in SYSTEM_DIRS)]


__all__ = ["Limits", "Sandbox", "SandboxUnavailable", "available"]
