"""The plan of an index run: which scanned files are new or changed, which known files are gone.

Its own module, with the standard library and sqlite3 only: the pipeline (indexer.run_index) plans with it, and so
does the no-change check (index/no_change.py), which must answer before the pipeline's code is imported.
"""

from __future__ import annotations

import sqlite3

from dslake_index.scan import FileStat, ScanResult

# A file's failure that the next index looks at again: it could not be read, changed while read, ran out of time
# (under load, or before a faster profiler).
RECHECK_KINDS = ("unreadable", "changed", "timeout")
# Whether any known file is to be looked at again for its state alone (stale, a failure above, or profiled by an
# older profiler or its profile lost): plan_changes's conditions besides size and time, in one pass of SQLite's.
# The covering index (migration 004) answers the profile's half without reading a profile's JSON.
_RECHECK = f"""
SELECT EXISTS (SELECT 1 FROM files f WHERE f.status = 'stale' OR f.error_kind IN {RECHECK_KINDS!r}
               OR (f.status = 'ok' AND NOT EXISTS (SELECT 1 FROM profiles p INDEXED BY profiles_version
                                                   WHERE p.profiler_version = ? AND p.hash = f.hash)))
"""


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
            or row[3] in RECHECK_KINDS
            or (row[2] == "ok" and row[4] not in current)  # profiled by an older profiler, or its profile is lost
        ):
            changed.append(f)
        else:
            unchanged += 1
    return new, changed, sorted(known), unchanged


def nothing_to_plan(conn: sqlite3.Connection, scan: ScanResult, profiler_version: str) -> bool:
    """Tell whether plan_changes would find no file new, changed or removed in this whole-lake scan, without
    making the plan: the manifest's (path, size, modification time) rows are the scan's files, compared as two
    sorted lists, and no file is to be looked at again for its state. At 100k files the plan's dictionary of
    rows and set of hashes cost ~0.5 s of a no-change index; this, ~0.2 s.
    """
    if scan.scope is not None:
        return False
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples, which a FileStat equals field by field
    # ORDER BY path is SQLite's byte order of UTF-8, the scan's sort by code point: the same order.
    if cursor.execute("SELECT path, size, mtime_ns FROM files ORDER BY path").fetchall() != scan.files:
        return False
    return not cursor.execute(_RECHECK, (profiler_version,)).fetchone()[0]


def _scope_filters(scope: list[str] | None) -> list[tuple[str, tuple[str, ...]]]:
    """Return SQL conditions on files f (and their arguments) that select the known files under a scan's scope."""
    if scope is None:
        return [("1", ())]
    # A path itself, or anything below it: '/' sorts just before '0', so [p + '/', p + '0') is the subtree.
    return [("(f.path = ? OR (f.path >= ? AND f.path < ?))", (p, p + "/", p + "0")) for p in scope]
