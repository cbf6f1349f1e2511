"""Shared pieces for the sandbox tests: which backends work here, tight limits, a small lake."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from dsstar_lake.sandbox import Sandbox
from dsstar_lake.sandbox.bwrap import probe

BWRAP_REASON = probe(sys.executable, 64)
BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")),
    "subprocess",
]
# Tight limits keep every hostile script short; still enough for numpy/pandas where a test needs them.
LIMITS = {
    "timeout_s": 8.0,
    "memory_mb": 1024,
    "cpu_s": 20,
    "max_output_bytes": 4000,
    "output_limit_mb": 4,
    "max_procs": 64,
    "file_mb": 8,
    "tmp_mb": 64,
}


def make_lake(root: Path) -> Path:
    """Write a tiny lake: a CSV, a nested text file."""
    (root / "sub").mkdir(parents=True)
    (root / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    (root / "sub" / "notes.txt").write_text("keep me\n")
    return root


def lake_snapshot(root: Path, skip: Path | None = None) -> dict[str, bytes]:
    """Return every file of the lake (less the folder skip) with its bytes, for before/after comparisons."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not (skip and skip in p.parents)}


def make_catalog(lake: Path) -> Path:
    """Write a catalog inside the lake as dslake keeps one: manifest, config, another run's trace; return it."""
    catalog = lake / ".dslake"
    (catalog / "runs" / "older" / "work").mkdir(parents=True)
    (catalog / "manifest.sqlite").write_text("MANIFEST-SECRET rows\n")
    (catalog / "config.toml").write_text('[catalog]\nchroma_url = ""\n')
    (catalog / "runs" / "older" / "trace.jsonl").write_text('{"prompt": "TRACE-SECRET of another run"}\n')
    return catalog


def sandbox(backend: str, lake: Path, **overrides) -> Sandbox:
    """Return a Sandbox on the given backend with the tight test limits (the catalog in lake/.dslake)."""
    catalog = lake / ".dslake"
    return Sandbox({**LIMITS, "backend": backend, **overrides}, lake, private=[catalog],
                   volatile=[catalog / "runs"])


def processes_with(token: str) -> list[int]:
    """Return pids whose command line contains token."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if token.encode() in fh.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def survivors(token: str, settle_s: float = 2.0) -> list[int]:
    """Return processes with token still alive after giving dying ones a moment to be reaped."""
    end = time.monotonic() + settle_s
    while (alive := processes_with(token)) and time.monotonic() < end:
        time.sleep(0.05)
    return alive
