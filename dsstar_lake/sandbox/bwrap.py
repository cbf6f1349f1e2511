"""bubblewrap command lines for scripts: the host allow-list (index/bwrap_binds.py), the lake, the work folder.

Nothing of the host is visible unless listed here: the interpreter and its packages, the shared libraries and
system programs, a few /etc files Python and the science packages read, the lake (read-only, what the index
skips blanked), the work folder, and private /tmp and /dev/shm of bounded size. Homes, /run, /srv, /var,
/etc's other files, sockets and anything on PYTHONPATH or a script's own folder simply do not exist inside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from dslake_index.bwrap_binds import (
    SANDBOX_HOME,
    USERNS_FLAGS,
    Bind,
    closing_argv,
    host_argv,
    interpreter_paths,
    mib,
    system_binds,
    trust_userns_flags,
    under,
    userns_flags,
)
from dslake_index.lakemask import Masks

from dsstar_lake.sandbox import passed_trial

__all__ = ["SANDBOX_HOME", "SCRIPTS_MOUNT", "WORK_IN_MOUNT", "Bind", "bind_list", "bwrap_argv", "interpreter_paths",
           "probe", "system_binds", "userns_flags"]

SCRIPTS_MOUNT = "/tmp/scripts"  # where the script's private, read-only folder appears inside the sandbox
WORK_IN_MOUNT = "/tmp/work-in"  # the host's work folder, read-only, copied into the tmpfs one by _launch.py


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
    argv = host_argv(bwrap, python, tmp_mb, shm_mb)
    if scripts is not None:
        argv += ["--ro-bind", str(scripts), SCRIPTS_MOUNT]
    inner = [p for p in private if under(p, [lake])]
    data = workdir / "data"
    blank: list[Path] = []
    argv += ["--ro-bind", str(lake), str(lake)]  # absolute paths into the lake keep working, read-only
    argv += _blank(lake, inner, masks, blank)
    if work_mb:
        argv += ["--ro-bind", str(workdir), WORK_IN_MOUNT, "--size", mib(work_mb), "--tmpfs", str(workdir)]
    else:
        argv += ["--bind", str(workdir), str(workdir)]
    argv += ["--ro-bind", str(lake), str(data)]
    argv += _blank(data, [data / p.relative_to(lake) for p in inner], masks, blank)
    for path in blank:
        argv += ["--remount-ro", str(path)]
    return argv + closing_argv(bwrap, workdir)


def _blank(root: Path, folders: list[Path], masks: Masks | None, blank: list[Path]) -> list[str]:
    """Return the args that cover the catalog folders and the masked lake paths under root (a lake mount)."""
    argv = []
    for rel in masks.files if masks else []:
        argv += ["--ro-bind", "/dev/null", str(root / rel)]
    for path in [*folders, *(root / rel for rel in (masks.folders if masks else []))]:
        argv += ["--tmpfs", str(path)]
        blank.append(path)
    return argv


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
            trust_userns_flags(bwrap)
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
