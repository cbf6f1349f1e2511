"""bubblewrap command lines: an allow-list of binds (the interpreter, system libraries, the lake), no network.

Nothing of the host is visible unless listed here: the interpreter and its packages, the shared libraries and
system programs, a few /etc files Python and the science packages read, the lake (read-only, what the index
skips blanked), the work folder, and private /tmp and /dev/shm of bounded size. Homes, /run, /srv, /var,
/etc's other files, sockets and anything on PYTHONPATH or a script's own folder simply do not exist inside.
"""

from __future__ import annotations

import atexit
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from dsstar_lake.sandbox import passed_trial
from dsstar_lake.sandbox.lakemask import Masks

SANDBOX_HOME = "/tmp/home"  # HOME inside the sandbox, on its private /tmp
SCRIPTS_MOUNT = "/tmp/scripts"  # where the script's private, read-only folder appears inside the sandbox
WORK_IN_MOUNT = "/tmp/work-in"  # the host's work folder, read-only, copied into the tmpfs one by _launch.py
# System software, read-only: programs (/bin/sh for subprocess and os.system), shared libraries, fonts for
# matplotlib, time zones for pandas and zoneinfo, CA certificates. /usr/local/bin and the rest of /usr/share
# are left out: they hold whatever an administrator installed, not what an analysis needs.
SYSTEM_DIRS = ("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libexec", "/usr/local/lib",
               "/usr/share/fonts", "/usr/share/zoneinfo", "/usr/share/ca-certificates", "/usr/share/matplotlib")
# On a merged-/usr system these are links into /usr (recreated as links), elsewhere folders (bound).
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32")
# The /etc files the dynamic loader, Python's stdlib (time zones, mime types, name lookups) and the science
# packages (fonts, certificates) read. passwd and group are generated: root and the running user only.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
             "/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/mime.types",
             "/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/fonts", "/etc/matplotlibrc", "/etc/alternatives")
NAMESPACES = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
              "--unshare-cgroup-try"]


@dataclass
class Bind:
    """One path a script can see, and how: read-only, read-write, a tmpfs of a size, or generated."""

    path: str
    how: str


@cache
def _prefixes(python: str) -> tuple[str, ...]:
    """Return the interpreter's prefix, base prefix and exec prefixes (asked once when it is not this one)."""
    if Path(python).absolute() == Path(sys.executable).absolute():
        found = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    else:
        code = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))"
        try:
            done = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
            found = json.loads(done.stdout) if done.returncode == 0 else []
        except (OSError, subprocess.TimeoutExpired, ValueError):
            found = []
    return tuple(dict.fromkeys(found))


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def interpreter_paths(python: str) -> list[Path]:
    """Return the folders the interpreter needs: its venv whole, its base prefix's bin and lib, its real binary.

    Never sys.path as such: a script's own folder, PYTHONPATH and an editable install's source (dslake's own
    repository) are on it, and a `.env` there is nobody's business inside the sandbox.
    """
    exe = Path(python).absolute()
    paths = {exe.parent, exe.resolve().parent}
    for raw in _prefixes(python):
        prefix = Path(raw)
        if (prefix / "pyvenv.cfg").is_file():
            paths.add(prefix)  # a venv: its bin, lib (site-packages) and pyvenv.cfg
        else:
            paths |= {prefix / name for name in ("bin", "lib", "lib64")}
    system = [Path(p) for p in SYSTEM_DIRS]
    found = sorted({p.resolve() for p in paths if p.exists()})
    found = [p for p in found if not _under(p, system)]
    return [p for p in found if not any(q != p and q in p.parents for q in found)]


def system_binds(python: str) -> list[Bind]:
    """Return what every script sees of the host, read-only: system folders, /etc files, the interpreter."""
    binds = []
    for top in (*TOP_LINKS, *SYSTEM_DIRS):  # a link (merged /usr, /usr/lib64 -> lib) is made again as a link
        if os.path.islink(top):
            binds.append(Bind(top, "link to " + os.readlink(top)))
        elif os.path.isdir(top):
            binds.append(Bind(top, "read-only"))
    binds += [Bind(p, "read-only") for p in ETC_FILES if os.path.exists(p)]
    binds += [Bind(str(p), "read-only (interpreter)") for p in interpreter_paths(python)]
    return binds


def _mib(value: int) -> str:
    return str(max(int(value), 1) * 1024 * 1024)


@cache
def identity_files() -> Path:
    """Write minimal /etc/passwd and /etc/group (root and the running user, home /tmp/home) once per process."""
    folder = Path(tempfile.mkdtemp(prefix="dslake-etc-"))
    atexit.register(shutil.rmtree, folder, True)
    uid, gid = os.getuid(), os.getgid()
    users = {0: "root", uid: _user_name(uid)}
    (folder / "passwd").write_text("".join(f"{name}:x:{u}:{gid if u == uid else 0}::{SANDBOX_HOME}:/bin/sh\n"
                                           for u, name in users.items()))
    (folder / "group").write_text("".join(f"{name}:x:{g}:\n" for g, name in {0: "root", gid: users[uid]}.items()))
    return folder


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return "user"


def bind_list(python: str, workdir: Path, lake: Path, tmp_mb: int, shm_mb: int, work_mb: int = 0) -> list[Bind]:
    """Return every path a script sees and how, in the words `dslake doctor` prints."""
    binds = system_binds(python)
    binds += [Bind("/etc/passwd", "generated: root and your user"), Bind("/etc/group", "generated"),
              Bind("/proc", "the sandbox's own processes"), Bind("/dev", "null, zero, random, tty"),
              Bind("/dev/shm", f"tmpfs of {shm_mb} MiB"), Bind("/tmp", f"tmpfs of {tmp_mb} MiB, HOME is /tmp/home"),
              Bind(str(lake), "the lake, read-only, hidden and ignored names blanked"),
              Bind(f"{workdir}/data", "the lake again, read-only")]
    if work_mb:
        binds += [Bind(str(workdir), f"tmpfs of {work_mb} MiB, filled from the run's work folder and copied "
                                     "back when the script ends"), Bind(WORK_IN_MOUNT, "the run's work folder, read-only")]
    else:
        binds.append(Bind(str(workdir), "the run's work folder, read-write"))
    return binds


def bwrap_argv(
    bwrap: str,
    python: str,
    workdir: Path,
    lake: Path,
    tmp_mb: int,
    private: list[Path] | None = None,
    scripts: Path | None = None,
    shm_mb: int = 64,
    masks: Masks | None = None,
    work_mb: int = 0,
) -> list[str]:
    """Return the bwrap prefix that runs a command in workdir, with the lake read-only at workdir/data.

    private: folders (dslake's catalog) hidden wherever they are: outside the lake they are simply not bound;
    inside it each is an empty read-only folder, and only workdir shows through. scripts: a folder bound
    read-only at SCRIPTS_MOUNT. masks: lake paths the index skips, blanked. work_mb: make the work folder a
    tmpfs of that size (the kernel enforces the budget) instead of binding the host folder.
    """
    workdir, lake = workdir.resolve(), lake.resolve()
    private = [Path(p).resolve() for p in private or [] if Path(p).is_dir()]
    argv = [bwrap]
    for bind in system_binds(python):
        if bind.how.startswith("link to "):
            argv += ["--symlink", bind.how[len("link to "):], bind.path]
        else:
            argv += ["--ro-bind", bind.path, bind.path]
    etc = identity_files()
    argv += ["--ro-bind", str(etc / "passwd"), "/etc/passwd", "--ro-bind", str(etc / "group"), "/etc/group"]
    argv += ["--dev", "/dev", "--size", _mib(shm_mb), "--tmpfs", "/dev/shm", "--proc", "/proc",
             "--size", _mib(tmp_mb), "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    # A bind under /tmp must come after its tmpfs, or the tmpfs hides it (a venv or a lake under /tmp).
    for path in interpreter_paths(python):
        if _under(path, [Path("/tmp")]):
            argv += ["--ro-bind", str(path), str(path)]
    if scripts is not None:
        argv += ["--ro-bind", str(scripts), SCRIPTS_MOUNT]
    inner = [p for p in private if _under(p, [lake])]
    data = workdir / "data"
    blank: list[Path] = []
    argv += ["--ro-bind", str(lake), str(lake)]  # absolute paths into the lake keep working, read-only
    argv += _blank(lake, inner, masks, blank)
    if work_mb:
        argv += ["--ro-bind", str(workdir), WORK_IN_MOUNT, "--size", _mib(work_mb), "--tmpfs", str(workdir)]
    else:
        argv += ["--bind", str(workdir), str(workdir)]
    argv += ["--ro-bind", str(lake), str(data)]
    argv += _blank(data, [data / p.relative_to(lake) for p in inner], masks, blank)
    for path in blank:
        argv += ["--remount-ro", str(path)]
    argv += ["--remount-ro", "/"]  # the root's own tmpfs (mount points only): nothing can be written there
    argv += NAMESPACES + userns_flags(bwrap)
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", str(workdir)]
    return argv + ["--"]


def _blank(root: Path, folders: list[Path], masks: Masks | None, blank: list[Path]) -> list[str]:
    """Return the args that cover the catalog folders and the masked lake paths under root (a lake mount)."""
    argv = []
    for rel in masks.files if masks else []:
        argv += ["--ro-bind", "/dev/null", str(root / rel)]
    for path in [*folders, *(root / rel for rel in (masks.folders if masks else []))]:
        argv += ["--tmpfs", str(path)]
        blank.append(path)
    return argv


USERNS_FLAGS = ["--unshare-user", "--disable-userns"]
_USERNS: dict[str, list[str]] = {}  # bwrap -> the flags that work with it: tried once per process, or a kept pass's


def userns_flags(bwrap: str) -> list[str]:
    """Return the flags that forbid new user namespaces inside the sandbox, where this bwrap and kernel can.

    A script that can create a user namespace gets a fresh set of capabilities there: more kernel surface
    than any analysis needs. bwrap >= 0.8 drops that with --disable-userns (it needs --unshare-user).
    """
    if bwrap not in _USERNS:
        _USERNS[bwrap] = _userns_trial(bwrap)
    return _USERNS[bwrap]


def _userns_trial(bwrap: str) -> list[str]:
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", *USERNS_FLAGS, "--", "/bin/true"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return list(USERNS_FLAGS) if done.returncode == 0 else []


@cache
def probe(python: str, tmp_mb: int = 64, fresh: bool = False) -> str | None:
    """Run a trivial script under bwrap once per process; return None when it works, else why not.

    A pass is remembered until the machine restarts, for as long as nothing it depends on changes (passed_trial.py):
    later processes take it without running the trials. fresh: run them even so (`dslake doctor`).
    """
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "bwrap is not installed"
    python = os.path.abspath(python)
    key = passed_trial.trial_key(bwrap, python, tmp_mb, [[b.path, b.how] for b in system_binds(python)])
    kept = passed_trial.passed(key) if key is not None and not fresh else None
    if kept is not None:
        if kept.get("userns_flags") == USERNS_FLAGS:  # nothing else is ever taken from the file into bwrap's argv
            _USERNS.setdefault(bwrap, list(USERNS_FLAGS))
        return None
    reason = _trial(bwrap, python, tmp_mb)
    if key is not None:
        if reason is None:
            passed_trial.remember(key, userns_flags(bwrap))
        else:
            passed_trial.forget(key)
    return reason


def _trial(bwrap: str, python: str, tmp_mb: int) -> str | None:
    """Run the trial script in a sandbox of its own: None when it read the lake and printed, else why not."""
    with tempfile.TemporaryDirectory(prefix="dslake-probe-") as tmp:
        lake, work = Path(tmp, "lake"), Path(tmp, "work")
        lake.mkdir()
        (work / "data").mkdir(parents=True)
        (lake / "probe.txt").write_text("ok")
        code = "import os; print(open('data/probe.txt').read(), os.getcwd())"
        # -S: what is on trial is bwrap with these binds running the interpreter, not site's .pth files (~0.03 s).
        argv = bwrap_argv(bwrap, python, work, lake, tmp_mb) + [python, "-I", "-S", "-c", code]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=work,
                                  env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap did not run: {exc}"
        if done.returncode != 0 or not done.stdout.startswith("ok"):
            return f"bwrap trial failed: {(done.stderr or done.stdout).strip()[:300]}"
    return None
