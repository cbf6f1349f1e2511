"""Counts over the whole manifest, for `dslake status`: every file's state and how many entries and families."""

from __future__ import annotations

import sqlite3


def file_states(conn: sqlite3.Connection) -> dict[str, sqlite3.Row]:
    """Return each file's path, size, mtime_ns, status, error and format, by path."""
    return {row["path"]: row for row in conn.execute("SELECT path, size, mtime_ns, status, error, format FROM files")}


def entry_counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """Return (entries, families) in the catalog."""
    entries, families = conn.execute("SELECT count(*), coalesce(sum(kind = 'family'), 0) FROM entries").fetchone()
    return int(entries), int(families)
