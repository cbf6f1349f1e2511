"""Limits for a script's whole process tree: a cgroup (pids and memory) when we may make one, else rlimits.

RLIMIT_NPROC counts every process of the uid and the kernel ignores it for root; RLIMIT_AS bounds one process,
so six children each under it hold six times the memory. A cgroup bounds the tree: v2 with the pids and
memory controllers delegated to us, or v1's pids and memory hierarchies, writable as root. Each script gets
a fresh one, killed as a whole and removed when it ends. Where no cgroup can be made, the shim polls the
script's process tree and kills its group past the bound (a kill of a process group is atomic, so a fork
bomb cannot outrun it once seen), and memory is bounded per process only.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "dslake-sbx-"
CONTROLLERS = ("pids", "memory")
_counter = itertools.count()


def _own_cgroups() -> dict[str, list[Path]]:
    """Return, per controller, candidate parent folders for a new cgroup (v2 first, then v1's hierarchy);
    "both": the v2 folders where one child can carry both controllers."""
    out: dict[str, list[Path]] = {name: [] for name in (*CONTROLLERS, "both")}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        hid, controllers, rel = line.split(":", 2)
        rel = rel.lstrip("/")
        if hid == "0" and (CGROUP_ROOT / "cgroup.controllers").exists():
            parent = CGROUP_ROOT / rel
            try:
                enabled = (parent / "cgroup.subtree_control").read_text().split()
            except OSError:
                enabled = []
            for name in CONTROLLERS:
                if name in enabled:
                    out[name].insert(0, parent)
            if all(name in enabled for name in CONTROLLERS):
                out["both"].append(parent)
        for name in CONTROLLERS:
            if name in controllers.split(","):
                out[name].append(CGROUP_ROOT / name / rel)
    return out


def _make(parents: list[Path], settings: dict[str, str]) -> Path | None:
    """Make a child of the first parent that allows it and write its settings; None when none does."""
    for parent in parents:
        path = parent / f"{PREFIX}{os.getpid()}-{next(_counter)}"
        try:
            path.mkdir()
        except OSError:
            continue
        try:
            for raw, value in settings.items():  # a name ending in "?" is written only where it exists
                name = raw.rstrip("?")
                if not raw.endswith("?") or (path / name).exists():
                    (path / name).write_text(value)
            return path
        except OSError:
            path.rmdir()
    return None


class ScriptCgroup:
    """The cgroup folders of one script (one in v2; one per hierarchy in v1): bounded, killed, then removed."""

    def __init__(self, pids: Path | None, memory: Path | None) -> None:
        self.pids_path, self.memory_path = pids, memory
        self.paths = list(dict.fromkeys(p for p in (pids, memory) if p is not None))

    @classmethod
    def create(cls, max_procs: int, memory_mb: int = 0) -> ScriptCgroup | None:
        """Make the script's cgroup(s): pids.max = max_procs, a memory limit of memory_mb (0 = none).

        Return None when this machine lets us make neither. In v2 one folder carries both controllers.
        """
        parents = _own_cgroups()
        limit = str(memory_mb * 1024 * 1024)
        if max_procs and memory_mb and parents["both"]:
            path = _make(parents["both"], {"pids.max": str(max_procs), "memory.max": limit, "memory.swap.max?": "0"})
            if path is not None:
                return cls(path, path)
        pids = _make(parents["pids"], {"pids.max": str(max_procs)}) if max_procs else None
        memory = None
        if memory_mb:
            memory = _make(parents["memory"], {"memory.max?": limit, "memory.limit_in_bytes?": limit,
                                               "memory.memsw.limit_in_bytes?": limit, "memory.swap.max?": "0"})
            if memory is not None and not _limited(memory):
                memory.rmdir()
                memory = None
        return cls(pids, memory) if pids or memory else None

    @property
    def procs_files(self) -> list[str]:
        """Return the files a process writes its pid into to join every folder of the cgroup."""
        return [str(p / "cgroup.procs") for p in self.paths]

    @property
    def version(self) -> str:
        """Return "v2" or "v1", for the record."""
        return "v1" if any(p.is_relative_to(CGROUP_ROOT / c) for p in self.paths for c in CONTROLLERS) else "v2"

    def peak(self) -> int | None:
        """Return the most tasks the cgroup held at once, when the kernel reports it."""
        return _read_int(self.pids_path, "pids.peak") if self.pids_path else None

    def memory_peak_mb(self) -> int | None:
        """Return the most memory the script's tree held at once (MiB), when the kernel reports it."""
        if not self.memory_path:
            return None
        peak = _read_int(self.memory_path, "memory.peak") or _read_int(self.memory_path, "memory.max_usage_in_bytes")
        return peak // (1024 * 1024) if peak is not None else None

    def oom_killed(self) -> bool:
        """Tell whether the kernel killed a process of the tree for going past the memory limit."""
        if not self.memory_path:
            return False
        for name in ("memory.events", "memory.oom_control"):
            try:
                fields = dict(line.split() for line in (self.memory_path / name).read_text().splitlines())
            except (OSError, ValueError):
                continue
            if int(fields.get("oom_kill", 0)) > 0:
                return True
        return False

    def pids(self) -> list[int]:
        """Return the processes still in any folder of the cgroup."""
        found: set[int] = set()
        for path in self.paths:
            try:
                found |= {int(x) for x in (path / "cgroup.procs").read_text().split()}
            except OSError:
                continue
        return sorted(found)

    def destroy(self, budget_s: float = 5.0) -> list[int]:
        """Kill everything left in the cgroup and remove it; return the pids that had to be killed."""
        killed: list[int] = []
        end = time.monotonic() + budget_s
        while (pids := self.pids()) and time.monotonic() < end:
            for path in self.paths:
                if (path / "cgroup.kill").exists():
                    (path / "cgroup.kill").write_text("1")
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            killed += [p for p in pids if p not in killed]
            time.sleep(0.01)
        for path in self.paths:
            try:
                path.rmdir()
            except OSError:
                pass
        return killed


def probe_cgroups(max_procs: int, memory_mb: int) -> tuple[bool, str | None]:
    """Return whether a pids cgroup can be made here, and the version of the memory cgroup that can (or None)."""
    remove_stale_cgroups()
    group = ScriptCgroup.create(max_procs, memory_mb)
    if group is None:
        return False, None
    found = group.pids_path is not None, group.version if group.memory_path is not None else None
    group.destroy()
    return found


def describe_memory(memory_mb: int, cgroup_version: str | None) -> str:
    """Return the memory limit in force and how, for doctor, the run record and the safety table."""
    if not memory_mb:
        return "none"
    per_process = f"RLIMIT_AS {memory_mb} MiB per process"
    if cgroup_version:
        return (f"memory cgroup ({cgroup_version}) {memory_mb} MiB for the whole script tree, tmpfs files "
                f"included; {per_process}")
    return per_process + " (no memory cgroup here: each child gets as much)"


def _read_int(folder: Path, name: str) -> int | None:
    try:
        return int((folder / name).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _limited(path: Path) -> bool:
    """Tell whether a new memory cgroup really carries a limit (a controller can exist and ignore writes)."""
    value = _read_int(path, "memory.limit_in_bytes")
    if value is None:
        text = (path / "memory.max").read_text().strip() if (path / "memory.max").exists() else "max"
        return text != "max"
    return value < 1 << 60


def remove_stale_cgroups() -> None:
    """Remove empty cgroups left by dslake processes that died."""
    for parent in {p for parents in _own_cgroups().values() for p in parents}:
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


def tree_pids(root: int) -> list[int]:
    """Return root and every process below it (through /proc/PID/task/PID/children)."""
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as fh:
                stack += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):
            continue
    return found


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
