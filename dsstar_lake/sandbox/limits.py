"""Process-count containment: a pids cgroup when we may create one, else RLIMIT_NPROC, else a watchdog.

RLIMIT_NPROC counts every process of the uid and the kernel ignores it for root, so it contains a fork bomb
only for an unprivileged user. A pids cgroup (v2 with the pids controller delegated to us, or v1's pids
hierarchy, writable as root) is a hard bound for anyone. When neither is available the shim polls the
script's process tree and kills its group past the bound (a kill of a process group is atomic, so a fork
bomb cannot outrun it once seen).
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "dslake-sbx-"
_counter = itertools.count()


def _own_cgroups() -> list[Path]:
    """Return candidate parent folders for a new pids cgroup (v2 first, then v1)."""
    out = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        hid, controllers, rel = line.split(":", 2)
        rel = rel.lstrip("/")
        if hid == "0" and (CGROUP_ROOT / "cgroup.controllers").exists():
            out.insert(0, CGROUP_ROOT / rel)
        elif "pids" in controllers.split(","):
            out.append(CGROUP_ROOT / "pids" / rel)
    return out


class PidsCgroup:
    """A throwaway pids cgroup for one script: bounded size, killed and removed afterwards."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_procs: int) -> PidsCgroup | None:
        """Make a cgroup with pids.max = max_procs, or return None when this machine does not let us."""
        for parent in _own_cgroups():
            path = parent / f"{PREFIX}{os.getpid()}-{next(_counter)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(max_procs))
                return cls(path)
            except OSError:
                path.rmdir()
        return None

    @property
    def procs_file(self) -> str:
        """Return the file a process writes its pid into to join the cgroup."""
        return str(self.path / "cgroup.procs")

    def peak(self) -> int | None:
        """Return the most tasks the cgroup held at once, when the kernel reports it."""
        try:
            return int((self.path / "pids.peak").read_text())
        except (OSError, ValueError):
            return None

    def pids(self) -> list[int]:
        """Return the processes still in the cgroup."""
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def destroy(self, budget_s: float = 5.0) -> list[int]:
        """Kill everything left in the cgroup and remove it; return the pids that had to be killed."""
        killed: list[int] = []
        end = time.monotonic() + budget_s
        kill_file = self.path / "cgroup.kill"
        while (pids := self.pids()) and time.monotonic() < end:
            if kill_file.exists():
                kill_file.write_text("1")
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            killed += [p for p in pids if p not in killed]
            time.sleep(0.01)
        try:
            self.path.rmdir()
        except OSError:
            pass
        return killed


def remove_stale_cgroups() -> None:
    """Remove empty cgroups left by dslake processes that died."""
    for parent in _own_cgroups():
        try:
            candidates = list(parent.glob(PREFIX + "*"))
        except OSError:
            continue
        for path in candidates:
            owner = path.name[len(PREFIX):].split("-")[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                try:
                    path.rmdir()
                except OSError:
                    pass


def user_tasks(uid: int) -> int:
    """Count the tasks (threads) the uid runs now, which RLIMIT_NPROC compares against."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            text = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            total += int(fields.get("Threads", "1").strip())
    return total


def rlimits(memory_mb: int, cpu_s: int, file_mb: int, nproc: int | None) -> dict[str, object]:
    """Return the rlimits the shim applies to the script (name -> value or [soft, hard]); 0 = no limit."""
    limits: dict[str, object] = {"CORE": 0}
    if memory_mb > 0:
        limits["AS"] = int(memory_mb * 1024 * 1024)
    if cpu_s > 0:
        # SIGXCPU at the soft limit, SIGKILL at the hard one if the script ignores SIGXCPU.
        limits["CPU"] = [int(cpu_s), int(cpu_s) + 5]
    if file_mb > 0:
        limits["FSIZE"] = int(file_mb * 1024 * 1024)
    if nproc:
        limits["NPROC"] = nproc
    return limits
