"""ExecResult, and the capped buffer that keeps the head and tail of a script's output."""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

TRACEBACK_START = "Traceback (most recent call last):"
MEMORY_SIGNS = ("MemoryError", "Cannot allocate memory", "failed to map segment", "std::bad_alloc")


class CappedBuffer:
    """Keep the first and last bytes of a stream up to a cap, and count what was cut."""

    def __init__(self, cap: int) -> None:
        self.head_cap = max(cap // 2, 0)
        self.tail_cap = max(cap - self.head_cap, 0)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def write(self, data: bytes) -> None:
        """Add bytes; memory stays bounded by the cap whatever the input size."""
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data or not self.tail_cap:
            return
        data = data[-self.tail_cap :]
        self.tail.append(data)
        self.tail_len += len(data)
        while self.tail_len - len(self.tail[0]) >= self.tail_cap:
            self.tail_len -= len(self.tail.popleft())

    @property
    def cut(self) -> int:
        """Return how many bytes were dropped from the middle."""
        kept_tail = min(self.tail_len, self.tail_cap)
        return self.total - len(self.head) - kept_tail

    def text(self) -> str:
        """Return head + a marker saying how much was cut + tail, decoded leniently."""
        tail = b"".join(self.tail)[-self.tail_cap :] if self.tail_cap else b""
        if not self.cut:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        marker = f"\n[... {self.cut} bytes cut ({self.total} in all); head and tail kept ...]\n"
        return bytes(self.head).decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace")


@dataclass
class ExecResult:
    """What one sandboxed script did.

    killed_by: None, "timeout" (wall clock), "memory" (address-space limit hit), "cpu" (CPU-time limit),
    "procs" (too many processes, watchdog), "output" (printed more than the output limit), "file size"
    (RLIMIT_FSIZE), or "signal N". "memory" and "file size" are read from the end of stderr.
    lake_modified: lake paths whose size/mtime changed, appeared or vanished (checked without bwrap).
    catalog_modified: the same for dslake's catalog (config, manifest, vectors), named from its folder.
    reads: the lake files the script (or a Python process it started) reported opening for reading,
    lake-relative, in the order first read, traced by an audit hook in the script's own interpreter, so a script
    can add to it or stop it; then those the lake's open watch alone saw opened (a library's opens in C: inotify,
    sandbox/openwatch.py). trace_problems: what shows that the trace is doubtful (tracecheck.py, openwatch.py).
    "disk" in killed_by: the work folder went past sandbox.disk_mb or sandbox.max_files.
    """

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    killed_by: str | None
    duration_s: float
    lake_modified: list[str]
    script_name: str
    backend: str = "subprocess"
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    peak_procs: int | None = None
    maxrss_kb: int | None = None
    notes: list[str] = field(default_factory=list)
    catalog_modified: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    trace_problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Return True when the script exited 0, was not killed, and left the lake untouched."""
        clean_exit = self.returncode == 0 and not self.timed_out and self.killed_by is None
        return clean_exit and not self.lake_modified and not self.catalog_modified

    @property
    def traceback(self) -> str | None:
        """Return the last Python traceback in stderr, or None."""
        at = self.stderr.rfind(TRACEBACK_START)
        return self.stderr[at:].strip() if at >= 0 else None

    def describe(self) -> str:
        """Return one line saying how the script ended, for traces and observations."""
        if self.lake_modified:
            return f"modified the lake ({len(self.lake_modified)} paths, e.g. {self.lake_modified[0]})"
        if self.catalog_modified:
            return (f"modified dslake's catalog ({len(self.catalog_modified)} paths, "
                    f"e.g. {self.catalog_modified[0]})")
        if self.timed_out:
            return f"killed after the {self.duration_s:.0f} s time limit"
        if self.killed_by:
            return f"killed ({self.killed_by}) after {self.duration_s:.1f} s"
        return f"exit {self.returncode} after {self.duration_s:.1f} s"

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-ready data for the run record."""
        return asdict(self)


def classify(returncode: int | None, signal_no: int | None, stderr: str) -> str | None:
    """Name why a script died from its status and the end of its stderr."""
    if signal_no == 24:  # SIGXCPU: RLIMIT_CPU reached
        return "cpu"
    tail = stderr[-4000:] if returncode not in (0, None) else ""
    # Python ignores SIGXFSZ, so RLIMIT_FSIZE shows up as an OSError rather than a signal.
    if signal_no == 25 or "File too large" in tail:
        return "file size"
    if any(sign in tail for sign in MEMORY_SIGNS):
        return "memory"
    if "No space left on device" in tail:  # the work folder's (or /tmp's) kernel-bounded space is full
        return "disk"
    if signal_no:
        return f"signal {signal_no}"
    return None

