"""bubblewrap command lines: read-only system, private /tmp, hidden homes and sockets, no network."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

SANDBOX_HOME = "/tmp/home"  # HOME inside the sandbox, on its private /tmp
SCRIPTS_MOUNT = "/tmp/scripts"  # where the script's private, read-only folder appears inside the sandbox
# Files that hold credentials outside home folders; covered by /dev/null when present.
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers")
SECRET_GLOBS = (("/etc/ssh", "ssh_host_*key"),)
NAMESPACES = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
              "--unshare-cgroup-try"]


def hidden_roots() -> list[Path]:
    """Return the folders replaced by an empty tmpfs: every home (they hold ~/.ssh, ~/.aws, tokens)."""
    roots = []
    for raw in (str(Path.home()), "/root", "/home", os.environ.get("HOME", "")):
        if not raw or raw == "/":
            continue
        path = Path(raw).resolve()
        if path.is_dir() and path != Path("/"):
            roots.append(path)
    roots = sorted(set(roots), key=lambda p: len(p.parts))
    return [p for p in roots if not any(q != p and q in p.parents for q in roots)]


def interpreter_paths(python: str) -> list[Path]:
    """Return the folders a Python interpreter needs to start and import its packages."""
    exe = Path(python)
    paths = {exe.parent.parent, exe.resolve().parent.parent}
    if Path(python).absolute() == Path(sys.executable).absolute():
        paths |= {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)}
        paths |= {Path(p) for p in sys.path if p and Path(p).is_dir()}
    return sorted({p.resolve() for p in paths if p.exists()})


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _mib(value: int) -> str:
    return str(max(int(value), 1) * 1024 * 1024)


def bwrap_argv(
    bwrap: str,
    python: str,
    workdir: Path,
    lake: Path,
    tmp_mb: int,
    private: list[Path] | None = None,
    scripts: Path | None = None,
    shm_mb: int = 64,
) -> list[str]:
    """Return the bwrap prefix that runs a command in workdir, with the lake read-only at workdir/data.

    private: folders (dslake's catalog: manifest, vectors, config, every run's prompts) shown as empty,
    read-only folders wherever they are, in the lake or not; only workdir stays visible inside them.
    scripts: a folder bound read-only at SCRIPTS_MOUNT, so the script itself is out of the script's reach.
    """
    workdir, lake = workdir.resolve(), lake.resolve()
    private = [Path(p).resolve() for p in private or [] if Path(p).is_dir()]
    hidden = hidden_roots()
    masked = hidden + [Path("/tmp")]
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--size", _mib(shm_mb), "--tmpfs", "/dev/shm",
            "--proc", "/proc", "--tmpfs", "/run"]
    for root in hidden:
        argv += ["--tmpfs", str(root)]
    argv += ["--size", _mib(tmp_mb), "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    # Order matters: a bind under a tmpfs must come after that tmpfs, or the tmpfs hides it. A masked root
    # itself (/tmp on sys.path when dslake was started from there) is never bound back whole.
    for path in interpreter_paths(python):
        if _under(path, masked) and path not in masked:
            argv += ["--ro-bind", str(path), str(path)]
    if scripts is not None:
        argv += ["--ro-bind", str(scripts), SCRIPTS_MOUNT]
    for name in SECRET_FILES:
        if os.path.isfile(name):
            argv += ["--ro-bind", "/dev/null", name]
    for folder, pattern in SECRET_GLOBS:
        for path in sorted(Path(folder).glob(pattern)) if os.path.isdir(folder) else []:
            argv += ["--ro-bind", "/dev/null", str(path)]
    # A private folder that holds the lake must be masked before the lake is bound back; one inside the lake
    # after it. Each is a fresh tmpfs, made read-only once workdir (possibly inside it) is bound.
    outer = [p for p in private if not _under(p, [lake])]
    inner = [p for p in private if _under(p, [lake])]
    argv += [arg for p in outer for arg in ("--tmpfs", str(p))]
    argv += ["--ro-bind", str(lake), str(lake)]  # absolute paths into the lake keep working, read-only
    argv += [arg for p in inner for arg in ("--tmpfs", str(p))]
    argv += ["--bind", str(workdir), str(workdir), "--ro-bind", str(lake), str(workdir / "data")]
    in_data = [workdir / "data" / p.relative_to(lake) for p in inner]
    for path in in_data:
        argv += ["--tmpfs", str(path)]
    for path in [*in_data, *outer, *inner]:
        argv += ["--remount-ro", str(path)]
    argv += NAMESPACES + userns_flags(bwrap)
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--chdir", str(workdir)]
    return argv + ["--"]


@cache
def userns_flags(bwrap: str) -> list[str]:
    """Return the flags that forbid new user namespaces inside the sandbox, where this bwrap and kernel can.

    A script that can create a user namespace gets a fresh set of capabilities there: more kernel surface
    than any analysis needs. bwrap >= 0.8 drops that with --disable-userns (it needs --unshare-user).
    """
    flags = ["--unshare-user", "--disable-userns"]
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", *flags, "--", "/bin/true"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return flags if done.returncode == 0 else []


@cache
def probe(python: str, tmp_mb: int = 64) -> str | None:
    """Run a trivial script under bwrap once per process; return None when it works, else why not."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return "bwrap is not installed"
    with tempfile.TemporaryDirectory(prefix="dslake-probe-") as tmp:
        lake, work = Path(tmp, "lake"), Path(tmp, "work")
        lake.mkdir()
        (work / "data").mkdir(parents=True)
        (lake / "probe.txt").write_text("ok")
        code = "import os; print(open('data/probe.txt').read(), os.getcwd())"
        argv = bwrap_argv(bwrap, python, work, lake, tmp_mb) + [python, "-I", "-c", code]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=work,
                                  env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap did not run: {exc}"
        if done.returncode != 0 or not done.stdout.startswith("ok"):
            return f"bwrap trial failed: {(done.stderr or done.stdout).strip()[:300]}"
    return None
