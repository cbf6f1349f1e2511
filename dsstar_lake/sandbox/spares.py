"""Sandboxes started ahead: each script's own sandbox, begun before its code exists, handed the code when it goes.

Under bubblewrap a script's start (the shim, bubblewrap, the launcher, an interpreter importing pandas) costs far
more than most scripts. None of it depends on the code, so a run starts the next script's sandbox while it does
something else (retrieval for the first; the running script for the next), with the same allow-list, limits and
namespaces as ever: one sandbox per script, never shared. When the script goes, its file is written into the
sandbox's private scripts folder (bound read-only, so the sandbox sees it appear) and its name is sent down a pipe;
the launcher then copies the work folder in (so it sees what the previous script left) and hands the name to the
waiting interpreter (_launch.py, _warm.py). A sandbox that was not needed is killed, its whole tree and cgroup.

Processes are started by one long-lived thread: the shim asks the kernel to stop it when the thread that started it
ends (PR_SET_PDEATHSIG), so a starter thread that ended at once would take its sandbox with it; and a dslake that
dies takes every sandbox it started with it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dsstar_lake.sandbox import limits
from dsstar_lake.sandbox.pump import KILL_GRACE_S, killpg


@dataclass
class Started:
    """One script's sandbox process (the shim and what it started) and dslake's ends of its pipes.

    go: the pipe the launcher waits on for the script's name (None: the script was written before the start and
    runs at once). status, trace, work: read by a Pump once the script goes, which closes them.
    """

    proc: subprocess.Popen
    scratch: Path
    scripts: Path
    shown_dir: str  # the scripts folder as the script sees it
    workdir: Path
    status: int
    trace: int
    work: int | None
    go: int | None
    cgroup: limits.ScriptCgroup | None

    def send(self, name: str, code: str) -> None:
        """Write the script into its read-only folder and tell the launcher to run it (no-op when it runs already)."""
        if self.go is None:
            return
        (self.scripts / name).write_text(code, encoding="utf-8")
        try:
            os.write(self.go, f"{name}\n".encode())
        except OSError:
            pass  # the sandbox ended while it waited: the shim's status says how, as for any script
        finally:
            os.close(self.go)
            self.go = None

    def release(self) -> None:
        """Remove the private scratch folder once the script is done (the Pump closed the pipes)."""
        shutil.rmtree(self.scratch, ignore_errors=True)

    def kill(self) -> None:
        """End a sandbox whose script never went: the shim kills the tree; the group and cgroup are the backstops."""
        if self.go is not None:
            os.close(self.go)
            self.go = None
        try:
            self.proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            killpg(self.proc.pid)  # bubblewrap dies with the shim (--die-with-parent), and its namespace with it
            self.proc.wait()
        if self.cgroup:
            self.cgroup.destroy()
        for fd in (self.status, self.trace, self.work):
            if fd is not None:
                os.close(fd)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()
        self.release()


class Spares:
    """The sandboxes started ahead for a run's next scripts, per work folder, oldest first; close() kills the rest."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ahead: dict[Path, list[Future[Started]]] = {}
        self._pool: ThreadPoolExecutor | None = None
        self.started = 0  # sandboxes started ahead, and how many of them a script took: the run's trace says both
        self.taken = 0

    def add(self, workdir: Path, start: Callable[[Path], Started]) -> None:
        """Start one more sandbox for a coming script in workdir with start(workdir), in the starter thread.

        start is given per call, not kept: a Sandbox holding a Spares that held its method would live until the
        collector found the cycle, and its lake view (a folder in the catalog) with it.
        """
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="dslake-spare")
            self._ahead.setdefault(workdir, []).append(self._pool.submit(start, workdir))
            self.started += 1

    def waiting(self, workdir: Path) -> int:
        """Return how many sandboxes wait for workdir's coming scripts."""
        with self._lock:
            return len(self._ahead.get(workdir, []))

    def take(self, workdir: Path) -> Started | None:
        """Return the sandbox waiting for workdir's next script, or None (none started, or it failed or ended).

        A start that failed is not raised here: the script starts the usual way, which raises it where it belongs.
        """
        with self._lock:
            queue = self._ahead.get(workdir)
            ahead = queue.pop(0) if queue else None
            if queue == []:
                del self._ahead[workdir]
        if ahead is None:
            return None
        try:
            started = ahead.result()
        except Exception:  # noqa: BLE001 - see above
            return None
        if started.proc.poll() is not None:
            started.kill()
            return None
        with self._lock:
            self.taken += 1
        return started

    def close(self) -> None:
        """Kill every sandbox still waiting and end the starter thread."""
        with self._lock:
            waiting = [ahead for queue in self._ahead.values() for ahead in queue]
            self._ahead = {}
            pool, self._pool = self._pool, None
        for ahead in waiting:
            try:
                started = ahead.result()
            except Exception:  # noqa: BLE001 - nothing was started
                continue
            started.kill()
        if pool is not None:
            pool.shutdown(wait=True)
