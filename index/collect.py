"""Profilers' results into the manifest: counted, reported and written in batches by the one writer.

The local process pool (index/indexer.py) and a Dask cluster (index/cluster.py) hand their results to the same
ResultWriter, so a file's row is written the same way wherever it was profiled.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from dslake_index.catalog import transaction
from dslake_index.errors import DslakeError
from dslake_index.interrupt import next_finished, raise_if_pressed
from dslake_index.profile_task import crash_result, timeout_result
from dslake_index.profilers.base import PROFILER_VERSION
from dslake_index.progress import Progress
from dslake_index.scan import FileStat
from dslake_index.timeouts import time_limit
from dslake_index.timings import add_work, phase


class ResultWriter:
    """Count finished files into the summary, report each, and write them in batches (also every 2 s)."""

    # options and summary are indexer.IndexOptions and IndexSummary (not imported: indexer imports this module)
    def __init__(self, conn: sqlite3.Connection, new_paths: set[str], options: Any, summary: Any,
                 progress: Progress) -> None:
        self.conn, self.new_paths, self.options = conn, new_paths, options
        self.summary, self.progress = summary, progress
        self.pending: list[tuple[FileStat, dict[str, Any]]] = []
        self.last_flush = time.monotonic()

    def add(self, f: FileStat, result: dict[str, Any]) -> None:
        """Record one file's result; write the batch when it is full or 2 s old."""
        self.pending.append((f, result))
        add_work(result.get("work_seconds"), result.get("format"))
        if result.get("profile"):
            self.summary.profiled += 1
        elif result.get("hash") and not result.get("error"):
            self.summary.reused += 1
        if f.path in self.new_paths:
            self.summary.added += 1
        else:
            self.summary.changed += 1
        self.progress("file", {"path": f.path})
        if len(self.pending) >= self.options.write_batch or time.monotonic() - self.last_flush > 2.0:
            self.flush()

    def flush(self) -> None:
        """Write what is pending (on every way out: what was profiled is kept)."""
        if self.pending:
            with phase("manifest: file rows and profiles", len(self.pending)):
                write_results(self.conn, self.pending)
            self.pending = []
        self.last_flush = time.monotonic()


# Files handed to a pool ahead of the results recorded, per worker: enough that no worker waits, few enough that
# the futures' arguments and results stay a window, not the lake (collect's docstring).
AHEAD_PER_WORKER = 64


def collect(
    conn: sqlite3.Connection,
    jobs: Iterator[tuple[FileStat, Callable[[], Any]]],
    window: int,
    new_paths: set[str],
    options: Any,  # IndexOptions
    summary: Any,  # IndexSummary
    progress: Progress,
    pressed: threading.Event,
) -> None:
    """Start each file's job (it returns the pool's future) and record the results as they finish, writing them in
    batches; on Ctrl-C keep what finished.

    At most `window` jobs are started and not yet recorded: a future keeps its arguments and then its result (the
    profile's JSON), so scheduling a 100k-file lake at once held ~2.3 KB a file before any work began, and every
    profile until the last file finished (the bulk of a 100k first index's peak memory). A finished future is
    dropped once its result is recorded, and the next job is started in its place.
    """
    from pebble import ProcessExpired

    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    running: dict[Any, FileStat] = {}

    def start_next() -> None:
        job = next(jobs, None)
        if job is not None:
            raise_if_pressed(pressed)
            f, start = job
            future = start()
            running[future] = f
            future.add_done_callback(finished.put)

    for _ in range(window):
        start_next()
    writer = ResultWriter(conn, new_paths, options, summary, progress)
    try:
        while running:
            future = next_finished(finished, pressed)
            f = running.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool:
                writer.flush()  # keep what was profiled
                # Not a script without a main guard any more (index/worker_context.py): the server itself failed.
                raise DslakeError("the profiler processes could not start (their fork server ended); what was "
                                  "profiled is kept, and the next index continues from there") from None
            except FutureTimeout:
                result = timeout_result(time_limit(options.timeout_s, f.size))
            except ProcessExpired as exc:
                result = crash_result(exc)
            writer.add(f, result)
            start_next()
    except KeyboardInterrupt:
        writer.flush()  # keep every file profiled so far; the queued rest waits for the next run
        raise
    writer.flush()


def write_results(conn: sqlite3.Connection, results: list[tuple[FileStat, dict[str, Any]]]) -> None:
    """Write profiles and file rows for finished files in one transaction, marking their folders dirty."""
    now = time.time()
    with transaction(conn):
        for f, r in results:
            if r.get("profile"):
                conn.execute(
                    "INSERT OR REPLACE INTO profiles (hash, profiler_version, format, signature, profile, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (r["hash"], PROFILER_VERSION, r["format"], r["signature"], r["profile"], now),
                )
            failed = bool(r.get("error"))
            status = ("stale" if r.get("error_kind") == "changed" else "failed") if failed else "ok"
            fmt = conn.execute("SELECT format FROM profiles WHERE hash = ?", (r.get("hash"),)).fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO files (path, folder, size, mtime_ns, hash, status, error, error_kind, format, "
                "entry_id, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                (f.path, f.folder, r.get("size", f.size), r.get("mtime_ns", f.mtime_ns), r.get("hash"), status,
                 r.get("error"), r.get("error_kind"), fmt[0] if fmt else None, now),
            )
            conn.execute("INSERT OR IGNORE INTO dirty_folders (folder) VALUES (?)", (f.folder,))
