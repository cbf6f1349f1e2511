"""The plan of an index run: which scanned files are new or changed, which known files are gone.

Its own module, with the standard library and sqlite3 only: the pipeline (indexer.run_index) plans with it, and so
does the no-change check (index/no_change.py), which must answer before the pipeline's code is imported.
"""

from __future__ import annotations

import sqlite3

from dslake_index.scan import FileStat, ScanResult


def plan_changes(conn: sqlite3.Connection, scan: ScanResult,
                 profiler_version: str) -> tuple[list[FileStat], list[FileStat], list[str], int]:
    """Split a scan into new files, changed files, removed paths and the unchanged count.

    profiler_version: profilers.base.PROFILER_VERSION, given (a file profiled by another version is changed).

    A scan with a scope compares only the files known under it: what lies elsewhere was not looked at.
    """
    known: dict[str, tuple[int, int, str, str | None, str | None]] = {}
    current: set[str] = set()  # hashes with a profile from this profiler version
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: a 100k-file lake reads 100k rows here on every run
    for where, args in _scope_filters(scan.scope):
        known.update((row[0], row[1:]) for row in cursor.execute(
            f"SELECT path, size, mtime_ns, status, error_kind, hash FROM files f WHERE {where}", args))
        if scan.scope is None:
            # A covering index (migration 004): a join here read every file's profile row, 0.6 s at 100k files.
            query, query_args = "SELECT hash FROM profiles WHERE profiler_version = ?", (profiler_version,)
        else:
            # EXISTS keeps the scope's few files as the outer loop (a join let SQLite walk every profile first).
            query = (f"SELECT f.hash FROM files f WHERE {where} AND EXISTS "
                     "(SELECT 1 FROM profiles p WHERE p.profiler_version = ? AND p.hash = f.hash)")
            query_args = (*args, profiler_version)
        current.update(row[0] for row in cursor.execute(query, query_args))
    new: list[FileStat] = []
    changed: list[FileStat] = []
    unchanged = 0
    for f in scan.files:
        row = known.pop(f.path, None)
        if row is None:
            new.append(f)
        elif (
            row[0] != f.size
            or row[1] != f.mtime_ns
            or row[2] == "stale"
            or row[3] in ("unreadable", "changed", "timeout")  # timeout: under load, or before a faster profiler
            or (row[2] == "ok" and row[4] not in current)  # profiled by an older profiler, or its profile is lost
        ):
            changed.append(f)
        else:
            unchanged += 1
    return new, changed, sorted(known), unchanged


def _scope_filters(scope: list[str] | None) -> list[tuple[str, tuple[str, ...]]]:
    """Return SQL conditions on files f (and their arguments) that select the known files under a scan's scope."""
    if scope is None:
        return [("1", ())]
    # A path itself, or anything below it: '/' sorts just before '0', so [p + '/', p + '0') is the subtree.
    return [("(f.path = ? OR (f.path >= ? AND f.path < ?))", (p, p + "/", p + "0")) for p in scope]
