"""Read a file's catalog entry back by its lake path: what the agent adds when a script reads a file it was not given."""

from __future__ import annotations

import sqlite3


def entry_of_file(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """Return the entry (the file's own, or its family's) that describes lake file `path`, or None."""
    row = conn.execute(
        "SELECT e.id, e.kind, e.path, e.description, e.member_count FROM files f JOIN entries e "
        "ON e.id = f.entry_id WHERE f.path = ?", (path,)).fetchone()
    return row
