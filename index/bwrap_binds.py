"""bubblewrap's allow-list of the host, shared by model-written scripts and the index's readers of lake bytes.

Nothing of the host is visible inside unless listed here: the interpreter and its packages, the shared libraries
and system programs, a few /etc files Python and the science packages read, generated passwd and group files,
private /tmp and /dev/shm of bounded size, its own /proc and a minimal /dev; no network, own pid, IPC, UTS and
cgroup namespaces, no capabilities, no new user namespaces where bwrap can forbid them. What each caller adds (the
lake read-only, a work folder, dslake's own source for the index's reader) is the caller's: the script sandbox's
command line is dsstar_lake/sandbox/bwrap.py, the index's confined reader's is index/confined_pool.py.
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

SANDBOX_HOME = "/tmp/home"  # HOME inside, on the private /tmp
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
USERNS_FLAGS = ["--unshare-user", "--disable-userns"]


@dataclass
class Bind:
    """One path the confined side can see, and how: read-only, read-write, a tmpfs of a size, or generated."""

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


def under(path: Path, roots: list[Path]) -> bool:
    """Tell whether path is one of roots or lies below one."""
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
    found = [p for p in found if not under(p, system)]
    return [p for p in found if not any(q != p and q in p.parents for q in found)]


def system_binds(python: str) -> list[Bind]:
    """Return what the confined side sees of the host, read-only: system folders, /etc files, the interpreter."""
    binds = []
    for top in (*TOP_LINKS, *SYSTEM_DIRS):  # a link (merged /usr, /usr/lib64 -> lib) is made again as a link
        if os.path.islink(top):
            binds.append(Bind(top, "link to " + os.readlink(top)))
        elif os.path.isdir(top):
            binds.append(Bind(top, "read-only"))
    binds += [Bind(p, "read-only") for p in ETC_FILES if os.path.exists(p)]
    binds += [Bind(str(p), "read-only (interpreter)") for p in interpreter_paths(python)]
    return binds


def mib(value: int) -> str:
    """Return a size in MiB as the bytes bwrap's --size takes."""
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


def host_argv(bwrap: str, python: str, tmp_mb: int, shm_mb: int) -> list[str]:
    """Return bwrap and the first half of its arguments: the system read-only, generated identity files, a minimal
    /dev, own /proc, /tmp and /dev/shm as tmpfs of these sizes (HOME an empty folder on /tmp)."""
    argv = [bwrap]
    for bind in system_binds(python):
        if bind.how.startswith("link to "):
            argv += ["--symlink", bind.how[len("link to "):], bind.path]
        else:
            argv += ["--ro-bind", bind.path, bind.path]
    etc = identity_files()
    argv += ["--ro-bind", str(etc / "passwd"), "/etc/passwd", "--ro-bind", str(etc / "group"), "/etc/group"]
    argv += ["--dev", "/dev", "--size", mib(shm_mb), "--tmpfs", "/dev/shm", "--proc", "/proc",
             "--size", mib(tmp_mb), "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    # A bind under /tmp must come after its tmpfs, or the tmpfs hides it (a venv or a lake under /tmp).
    for path in interpreter_paths(python):
        if under(path, [Path("/tmp")]):
            argv += ["--ro-bind", str(path), str(path)]
    return argv


def closing_argv(bwrap: str, chdir: Path, network: bool = False) -> list[str]:
    """Return the arguments that end every command line: the root read-only, the namespaces (no network unless
    asked), no capabilities, a new session, death with the parent, then `--`."""
    namespaces = NAMESPACES if not network else [n for n in NAMESPACES if n != "--unshare-net"]
    argv = ["--remount-ro", "/"]  # the root's own tmpfs (mount points only): nothing can be written there
    argv += namespaces + userns_flags(bwrap)
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", str(chdir)]
    return argv + ["--"]


_USERNS: dict[str, list[str]] = {}  # bwrap -> the flags that work with it: tried once per process, or a kept pass's


def userns_flags(bwrap: str) -> list[str]:
    """Return the flags that forbid new user namespaces inside the sandbox, where this bwrap and kernel can.

    A process that can create a user namespace gets a fresh set of capabilities there: more kernel surface
    than any analysis or parser needs. bwrap >= 0.8 drops that with --disable-userns (it needs --unshare-user).
    """
    if bwrap not in _USERNS:
        _USERNS[bwrap] = _userns_trial(bwrap)
    return _USERNS[bwrap]


def trust_userns_flags(bwrap: str) -> None:
    """Take the --disable-userns flags as working with this bwrap without a trial (a kept pass said so)."""
    _USERNS.setdefault(bwrap, list(USERNS_FLAGS))


def _userns_trial(bwrap: str) -> list[str]:
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", *USERNS_FLAGS, "--", "/bin/true"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return list(USERNS_FLAGS) if done.returncode == 0 else []
