"""Supervise one untrusted script: limits, cgroup, net namespace, then kill every descendant when it ends.

Runs as its own small process (`python -I -S _shim.py CONFIG_JSON`) so that no limit or namespace change ever
touches dslake's process and no preexec_fn runs in a threaded parent. Standard library only.

Protocol: CONFIG_JSON holds argv, rlimits, cgroup_procs, watch_procs, unshare_net and status_fd. The shim
writes JSON lines to status_fd: {"pid": N} once the target started, and a final {"returncode": ..., ...} line.
SIGTERM from the parent means "time is up": kill the target's tree, report, exit.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
RLIMITS = {
    "AS": resource.RLIMIT_AS,
    "CPU": resource.RLIMIT_CPU,
    "FSIZE": resource.RLIMIT_FSIZE,
    "NPROC": resource.RLIMIT_NPROC,
    "CORE": resource.RLIMIT_CORE,
}


class Terminated(Exception):
    """The parent asked the shim to stop the script (wall-clock timeout or shutdown)."""


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _children_map() -> dict[int, tuple[int, int]]:
    """Map pid -> (ppid, threads) for every visible process."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        table[int(name)] = (int(fields[1]), int(fields[17]))
    return table


def descendants(root: int) -> dict[int, int]:
    """Return pid -> thread count for every process below root."""
    table = _children_map()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        kids.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    stack = list(kids.get(root, []))
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found[pid] = table[pid][1]
        stack.extend(kids.get(pid, []))
    return found


def _signal(pid: int, sig: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(pid: int, group: bool = False) -> None:
    _signal(pid, signal.SIGKILL, group)


def sweep(groups: list[int], budget_s: float = 5.0) -> None:
    """Kill the target's process groups, then every remaining descendant, and reap them all."""
    for pgid in groups:
        _kill(pgid, group=True)  # one atomic signal for the whole group: a fork bomb cannot outrun it
    end = time.monotonic() + budget_s
    while time.monotonic() < end:
        for pid in descendants(os.getpid()):
            _kill(pid)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return  # no children left; as subreaper every orphan of the tree became our child first
        time.sleep(0.01)


def _realtime() -> bool:
    """Make the shim SCHED_FIFO with reset-on-fork; return False where that is not allowed."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
        return True
    except (AttributeError, OSError):
        return False


def _child(cfg: dict) -> None:
    """In the forked child: own process group, namespaces, cgroup, limits, then exec the target."""
    try:
        os.setpgid(0, 0)
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        if cfg.get("nice"):
            os.nice(cfg["nice"])
        os.close(cfg["status_fd"])
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for procs in cfg.get("cgroup_procs") or []:  # one file per folder (v1 has one per controller)
            with open(procs, "w") as fh:
                fh.write(str(os.getpid()))
        if cfg.get("unshare_net"):
            _unshare_net()
        for name, value in cfg.get("rlimits", {}).items():
            soft, hard = value if isinstance(value, list) else (value, value)
            resource.setrlimit(RLIMITS[name], (soft, hard))
        os.execvp(cfg["argv"][0], cfg["argv"])
    except BaseException as exc:  # noqa: BLE001 - anything here must end the child, never return into the shim
        os.write(2, f"sandbox: cannot start script: {exc}\n".encode())
        os._exit(127)


def _unshare_net() -> None:
    """Enter a fresh network namespace (only loopback, down); unprivileged users need a user namespace too."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNET if uid == 0 else CLONE_NEWNET | CLONE_NEWUSER
    if _libc().unshare(flags) != 0:
        raise OSError("unshare(CLONE_NEWNET) failed")
    if uid != 0:
        maps = (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1"))
        for path, text in maps:
            with open(f"/proc/self/{path}", "w") as fh:
                fh.write(text)


def _report(fd: int, data: dict) -> None:
    try:
        os.write(fd, (json.dumps(data) + "\n").encode())
    except OSError:
        pass


def _tasks_total() -> int:
    """Return the number of tasks on the whole machine: one cheap read, usable even under a fork bomb."""
    with open("/proc/loadavg", "rb") as fh:
        return int(fh.read().split()[3].split(b"/")[1])


def group_leader(pid: int, depth: int) -> int | None:
    """Return the process `depth` generations below pid (bwrap's namespace init leads the script's group)."""
    for _ in range(depth):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as fh:
                kids = [int(x) for x in fh.read().split()]
        except OSError:
            kids = sorted(p for p, (ppid, _) in _children_map().items() if ppid == pid)
        if not kids:
            return None
        pid = kids[0]
    return pid


def _wait(pid: int, watch_procs: int, depth: int, state: dict) -> tuple[int, str | None]:
    """Wait for the target; with watch_procs, kill it when its tree holds more tasks than that.

    A fork bomb starves any process that scans /proc, so the watchdog only reads the machine's task count
    (one read), and when that grew by more than watch_procs it stops the script's process group with one
    atomic SIGSTOP, counts the tree at leisure, then kills it or lets it go on.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    tick = 0.05 if watch_procs else 1.0
    base = _tasks_total() if watch_procs else 0
    leader = state["leader"] = pid if depth == 0 else None
    while True:
        if pidfd is not None:
            select.select([pidfd], [], [], tick)
        else:
            time.sleep(min(tick, 0.05))
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, None
        if not watch_procs:
            continue
        leader = state["leader"] = leader or group_leader(pid, depth)
        total = _tasks_total()
        if total - base <= watch_procs:
            continue
        if leader:
            _signal(leader, signal.SIGSTOP, group=True)
        tasks = sum(descendants(os.getpid()).values())
        state["peak"] = max(state["peak"], tasks)
        if tasks > watch_procs:
            return 0, "procs"
        if leader:
            _signal(leader, signal.SIGCONT, group=True)
        base = total - tasks  # the rest of the machine grew; measure from there


def main() -> None:
    """Start the target under limits, wait, clean up its whole tree, report."""
    cfg = json.loads(sys.argv[1])
    fd = cfg["status_fd"]
    libc = _libc()
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans (double-forked daemons) reparent to us, not init
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # dslake died: stop the script too
    if os.getppid() != cfg["parent_pid"]:
        return
    state: dict = {"pid": None, "leader": None, "peak": 0}

    def on_term(signum, frame):  # noqa: ARG001
        raise Terminated

    signal.signal(signal.SIGTERM, on_term)
    depth = int(cfg.get("leader_depth", 0))
    watch = int(cfg.get("watch_procs") or 0)
    if watch:
        # A fork bomb's thousands of runnable tasks would delay the watchdog's wake-ups by seconds. A
        # real-time shim wakes at once (children fall back to normal scheduling); without that right,
        # nice the script instead.
        cfg["nice"] = 0 if _realtime() else 10
    result: dict = {"returncode": None, "signal": None, "killed_by": None, "terminated": False}
    status = None
    try:
        pid = os.fork()
        if pid == 0:
            _child(cfg)
        state["pid"] = pid
        _report(fd, {"pid": pid})
        status, result["killed_by"] = _wait(pid, watch, depth, state)
    except Terminated:
        result["terminated"] = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pid = state["pid"]
    groups = [pid] if pid else []
    if pid and (status is None or result["killed_by"]):
        # The script is still running: stop its group(s) while the pids are surely still its own.
        leader = state["leader"] or group_leader(pid, depth)
        groups += [leader] if leader and leader != pid else []
        for pgid in groups:
            _signal(pgid, signal.SIGKILL, group=True)
        try:
            status = os.waitpid(pid, 0)[1]
        except ChildProcessError:  # reaped just before the SIGTERM arrived
            pass
    if status is not None and not result["terminated"]:
        if os.WIFSIGNALED(status):
            result["signal"] = os.WTERMSIG(status)
            result["returncode"] = -os.WTERMSIG(status)
        else:
            result["returncode"] = os.WEXITSTATUS(status)
    sweep(groups)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.update(peak_procs=state["peak"] or None, maxrss_kb=usage.ru_maxrss,
                  cpu_s=round(usage.ru_utime + usage.ru_stime, 3))
    _report(fd, result)


if __name__ == "__main__":
    main()
