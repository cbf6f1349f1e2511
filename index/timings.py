"""Where an index run spends its time: wall and CPU seconds per phase, for `dslake index --json` and benchmarks.

The indexer records into the clock of the current context (`recording()`); code that runs outside a recording
(a search, a test calling a helper) times nothing and pays two no-op calls. Profiler processes time their own
work per file and send it back with the result (`work_seconds`), where the writer adds it under its phase:
such phases are CPU summed over every worker, so they may add up to more than the run's wall time.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_CURRENT: contextvars.ContextVar[PhaseClock | None] = contextvars.ContextVar("dslake_phase_clock", default=None)


@dataclass
class PhaseClock:
    """Seconds (wall and CPU of this process) and counts, by phase name."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, wall: float, cpu: float, n: int = 1) -> None:
        """Add one timed piece of work to a phase."""
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu
        self.count[name] = self.count.get(name, 0) + n

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return {phase: {"wall": s, "cpu": s, "n": count}}, rounded to the millisecond, in the order first seen."""
        return {name: {"wall": round(self.wall[name], 3), "cpu": round(self.cpu[name], 3), "n": self.count[name]}
                for name in self.wall}


@contextmanager
def recording() -> Iterator[PhaseClock]:
    """Record phases timed in this context (and in what it calls) into a new clock."""
    clock = PhaseClock()
    token = _CURRENT.set(clock)
    try:
        yield clock
    finally:
        _CURRENT.reset(token)


@contextmanager
def phase(name: str, n: int = 1) -> Iterator[None]:
    """Time the block as one piece of the named phase (nothing when no recording is on)."""
    clock = _CURRENT.get()
    if clock is None:
        yield
        return
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        clock.add(name, time.perf_counter() - wall, time.process_time() - cpu, n)


def add(name: str, wall: float, cpu: float, n: int = 1) -> None:
    """Add work timed elsewhere (in a profiler process) to the current recording, if any."""
    clock = _CURRENT.get()
    if clock is not None:
        clock.add(name, wall, cpu, n)


class Stopwatch:
    """Wall and CPU seconds of pieces of work in this process (a profiler process times its file with it)."""

    def __init__(self) -> None:
        self.laps: dict[str, list[float]] = {}
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def lap(self, name: str) -> None:
        """Charge the time since the last lap (or the start) to name."""
        wall, cpu = time.perf_counter(), time.process_time()
        self.laps[name] = [wall - self._wall, cpu - self._cpu]
        self._wall, self._cpu = wall, cpu


def add_work(laps: dict[str, Any] | None, fmt: str | None) -> None:
    """Add a profiler process's laps for one file to the current recording ("profile" by the file's format)."""
    for name, (wall, cpu) in (laps or {}).items():
        add(f"workers: {name} {fmt or '?'}" if name == "profile" else f"workers: {name}", wall, cpu)
