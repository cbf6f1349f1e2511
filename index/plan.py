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

Plan = tuple[list[FileStat], list[FileStat], list[str], int]
# The plan the no-change check made of the scan it hands to the index that follows in the same process
# (scan.hand_over), with the manifest's files as they were then: taken once, by plan_changes of that very scan.
_handed_over: tuple[ScanResult, tuple[object, ...], Plan] | None = None  # the scan, the files' token and version
# What changes whenever an index writes, adds or removes a file row, or finishes (the manifest's files as planned).
_FILES_TOKEN = ("SELECT count(*), max(indexed_at), (SELECT value FROM meta WHERE key = 'last_index_at') "
                "FROM files")


def hand_over_plan(conn: sqlite3.Connection, scan: ScanResult, profiler_version: str, plan: Plan) -> None:
    """Keep the plan of a whole-lake scan for the pipeline's plan_changes of the same scan in this process: at 100k
    files, planning twice cost a one-file index ~0.3 s. It is taken only while the manifest's files are as they
    were (another index in between makes it plan again)."""
    global _handed_over
    _handed_over = (scan, (*conn.execute(_FILES_TOKEN).fetchone(), str(profiler_version)), plan)


def plan_changes(conn: sqlite3.Connection, scan: ScanResult, profiler_version: str, reuse: bool = True) -> Plan:
    """Split a scan into new files, changed files, removed paths and the unchanged count.

    profiler_version: profilers.base.PROFILER_VERSION, given (a file profiled by another version is changed).
    reuse: take the plan handed over with this scan (hand_over_plan), if the manifest's files are as they were;
    False when profiles changed since (hint_sweep marked some outdated).

    A scan with a scope compares only the files known under it: what lies elsewhere was not looked at.
    """
    global _handed_over
    handed, _handed_over = _handed_over, None
    if (reuse and handed is not None and handed[0] is scan
            and (*conn.execute(_FILES_TOKEN).fetchone(), str(profiler_version)) == handed[1]):
        new, changed, removed, unchanged = handed[2]
        return list(new), list(changed), list(removed), unchanged
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


def _scope_filters(scope: list[str] | None) -> list[tuple[str, tuple[str, ...]]]:
    """Return SQL conditions on files f (and their arguments) that select the known files under a scan's scope."""
    if scope is None:
        return [("1", ())]
    # A path itself, or anything below it: '/' sorts just before '0', so [p + '/', p + '0') is the subtree.
    return [("(f.path = ? OR (f.path >= ? AND f.path < ?))", (p, p + "/", p + "0")) for p in scope]
