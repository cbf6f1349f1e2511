"""Read catalog rows back by path or id: what the facade shows, and what the agent adds to a run's context.

The agent and the facade never write SQL themselves (all catalog SQL lives in index/); these are the reads they
need, each named for what it answers.
"""

from __future__ import annotations

import sqlite3


def entry_of_file(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """Return the entry (the file's own, or its family's) that describes lake file `path`, or None."""
    row = conn.execute(
        "SELECT e.id, e.kind, e.path, e.description, e.member_count, e.card FROM files f JOIN entries e "
        "ON e.id = f.entry_id WHERE f.path = ?", (path,)).fetchone()
    return row


def file_record(conn: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    """Return the whole file record of lake file `path`, or None when the catalog does not know it."""
    return conn.execute("SELECT * FROM files WHERE path = ?", (path,)).fetchone()


def entry_record(conn: sqlite3.Connection, entry_id: str) -> sqlite3.Row | None:
    """Return the whole entry with this id, or None."""
    return conn.execute("SELECT * FROM entries WHERE id = ?", (entry_id,)).fetchone()


def entry_named(conn: sqlite3.Connection, key: str) -> sqlite3.Row | None:
    """Return the entry whose shown path (a family's pattern) or id is `key`, or None."""
    return conn.execute("SELECT * FROM entries WHERE path = ? OR id = ?", (key, key)).fetchone()


def all_entries(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Return every entry's id, kind, path, format, file count and card, by path."""
    return conn.execute("SELECT id, kind, path, format, member_count, card FROM entries ORDER BY path").fetchall()


def member_paths(conn: sqlite3.Connection, entry_id: str) -> list[str]:
    """Return the lake-relative paths of an entry's files, sorted."""
    return [row[0] for row in conn.execute("SELECT path FROM files WHERE entry_id = ? ORDER BY path", (entry_id,))]


def stored_profile(conn: sqlite3.Connection, content_hash: str) -> str | None:
    """Return the profile JSON cached for a content hash, or None."""
    row = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (content_hash,)).fetchone()
    return row[0] if row is not None else None


def entry_description(conn: sqlite3.Connection, entry_id: str) -> str | None:
    """Return an entry's description, or None when there is no such entry."""
    row = conn.execute("SELECT description FROM entries WHERE id = ?", (entry_id,)).fetchone()
    return row[0] if row is not None else None


def profiled_paths(conn: sqlite3.Connection) -> list[str]:
    """Return the paths of the files that profiled without failure (status ok)."""
    return [row[0] for row in conn.execute("SELECT path FROM files WHERE status = 'ok'")]


def entry_of_paths(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Return (path, entry id) for every file that belongs to an entry."""
    return [(row[0], row[1]) for row in conn.execute("SELECT path, entry_id FROM files WHERE entry_id IS NOT NULL")]


def dataset_roots(conn: sqlite3.Connection) -> list[str]:
    """Return the root folders of the dataset and table entries (each read whole by its load line)."""
    return [row[0] for row in conn.execute("SELECT path FROM entries WHERE kind = 'dataset' ORDER BY path")]


def file_hashes(conn: sqlite3.Connection) -> list[tuple[str, int, str | None]]:
    """Return (path, size, content hash) of every file record, whatever its status, sorted by path."""
    return [(row[0], row[1], row[2]) for row in conn.execute("SELECT path, size, hash FROM files ORDER BY path")]
