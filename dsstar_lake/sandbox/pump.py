"""Read a running shim's pipes (stdout, stderr, status, read trace, figures) without letting any fill memory."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from dsstar_lake.sandbox import limits, workfolder
from dsstar_lake.sandbox.openwatch import OpenWatch
from dsstar_lake.sandbox.result import CappedBuffer

MAX_TRACE_BYTES = 4 * 1024 * 1024  # paths a script reported reading; more is cut (and said so)
KILL_GRACE_S = 3.0  # time the shim gets to kill the script's tree before we kill the shim's group


class Pump:
    """Read a running shim's stdout, stderr and status pipe without letting any of them fill memory."""

    def __init__(self, proc: subprocess.Popen, status_fd: int, cap: int, output_limit: int, trace_fd: int,
                 work: tuple[int, Any, int] | None = None, opens: OpenWatch | None = None) -> None:
        """work: (pipe, spool file, cap): where _launch.py sends back what a script wrote in a tmpfs work folder.
        opens: the lake's open watch, read as the pipes are so the kernel's queue of its events does not fill."""
        self.proc = proc
        self.out, self.err = CappedBuffer(cap), CappedBuffer(cap)
        self.status = bytearray()
        self.reads = CappedBuffer(MAX_TRACE_BYTES)
        self.output_limit = output_limit
        self.sel = selectors.DefaultSelector()
        assert proc.stdout is not None and proc.stderr is not None
        self.sel.register(proc.stdout.fileno(), selectors.EVENT_READ, self.out)
        self.sel.register(proc.stderr.fileno(), selectors.EVENT_READ, self.err)
        self.sel.register(status_fd, selectors.EVENT_READ, self.status)
        self.sel.register(trace_fd, selectors.EVENT_READ, self.reads)
        work_fd, self.spool, self.spool_left = work if work else (None, None, 0)
        if work_fd is not None:
            self.sel.register(work_fd, selectors.EVENT_READ, self.spool)
        self.opens = opens
        if opens is not None:
            self.sel.register(opens.fileno(), selectors.EVENT_READ, opens)
        self.status_fd = status_fd
        self.owned = (status_fd, trace_fd, work_fd)  # ours to close; stdout and stderr belong to proc

    def _step(self, timeout: float) -> None:
        for key, _ in self.sel.select(timeout):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                self.sel.unregister(key.fd)
                if key.fd in self.owned:
                    os.close(key.fd)
            elif isinstance(key.data, CappedBuffer):
                key.data.write(chunk)
            elif key.data is self.opens:
                self.opens.feed(chunk)
            elif key.data is self.spool:
                if self.spool_left > 0:  # past the cap (the tmpfs's size) read and dropped: the sender never blocks
                    self.spool.write(chunk[:self.spool_left])
                    self.spool_left -= len(chunk)
            else:
                key.data.extend(chunk)

    def _pipes_open(self) -> bool:
        """Tell whether a pipe of the shim is still open (the open watch never ends by itself)."""
        return len(self.sel.get_map()) > (self.opens is not None and self.opens.fileno() in self.sel.get_map())

    def run(self, deadline: float, over_budget: Callable[[], bool] = lambda: False) -> str | None:
        """Pump until the shim is done; return "timeout", "output" or "disk" when we had to stop it."""
        while self._pipes_open():
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            self._step(min(left, workfolder.BUDGET_EVERY_S))
            if self.output_limit and self.out.total + self.err.total > self.output_limit:
                return "output"
            if over_budget():
                return "disk"
            if self.proc.poll() is not None:
                break  # the shim is gone; whatever still holds the pipes is an escaped process: drain briefly
        try:
            self.proc.wait(max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            return "timeout"
        return None

    def stop(self, cgroup: limits.ScriptCgroup | None) -> None:
        """Ask the shim to kill the script's tree; kill its group ourselves if it does not finish in time."""
        try:
            self.proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        end = time.monotonic() + KILL_GRACE_S
        while self.proc.poll() is None and time.monotonic() < end:
            self._step(0.05) if self.sel.get_map() else time.sleep(0.05)
        if self.proc.poll() is None:
            for pgid in (self.proc.pid, self.target_pid()):
                killpg(pgid)
            if cgroup:
                cgroup.destroy()
            self.proc.wait()

    def drain(self, deadline: float) -> None:
        """Read what is left in the pipes, then close them (the open watch is left to its owner: it never ends)."""
        if self.opens is not None and self.opens.fileno() in self.sel.get_map():
            self.sel.unregister(self.opens.fileno())
        while self.sel.get_map() and time.monotonic() < deadline:
            self._step(max(deadline - time.monotonic(), 0.0))
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fd)
            if key.fd in self.owned:
                os.close(key.fd)
        self.sel.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()

    def _lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.status.decode("utf-8", "replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def target_pid(self) -> int | None:
        """Return the script's pid (also its process group), once the shim has reported it."""
        return next((d["pid"] for d in self._lines() if "pid" in d), None)

    def final_status(self) -> dict[str, Any]:
        """Return the shim's last report (empty if it was killed before writing one)."""
        return next((d for d in reversed(self._lines()) if "returncode" in d), {})


def killpg(pgid: int | None) -> None:
    if pgid:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
