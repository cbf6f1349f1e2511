"""The `analyses` table: which contents the LLM analyzer could describe, and what it wrote for them.

The analyzer itself (a model writing scripts) lives in dsstar_lake/enrichers/analyzer_pass.py; these are its catalog reads and
writes, kept here with the rest of the catalog's SQL.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from dslake_index.catalog import transaction


def file_contents(conn: sqlite3.Connection, skip_formats: Sequence[str]) -> list[tuple[str, str]]:
    """Return (content hash, path) of every single-file entry whose format is not skipped."""
    skip = ",".join("?" * len(skip_formats))
    rows = conn.execute(f"SELECT content_hash, path FROM entries WHERE kind = 'file' AND format NOT IN ({skip})",
                        tuple(skip_formats))
    return [(r[0], r[1]) for r in rows]


def unread_contents(conn: sqlite3.Connection, skip_formats: Sequence[str], fallback_formats: Sequence[str],
                    failed_note: str) -> list[tuple[str, str, str, bool]]:
    """Return (content hash, path, format, tripped) of the single files described as fallback formats or text.

    tripped: the profile carries a note starting with failed_note (a format profiler gave up on the content).
    """
    skip = ",".join("?" * len(skip_formats))
    fallback = ",".join("?" * len(fallback_formats))
    rows = conn.execute(
        "SELECT e.content_hash, e.path, e.format, EXISTS (SELECT 1 FROM json_each(p.profile, '$.notes') "
        "WHERE json_each.value LIKE ? || '%') FROM entries e JOIN profiles p ON p.hash = e.content_hash "
        f"WHERE e.kind = 'file' AND e.format NOT IN ({skip}) AND e.format IN ({fallback}, 'text')",
        (failed_note, *skip_formats, *fallback_formats))
    return [(r[0], r[1], r[2], bool(r[3])) for r in rows]


def family_representatives(conn: sqlite3.Connection, skip_formats: Sequence[str]) -> list[tuple[str, str]]:
    """Return (first member's path, its content hash) per family whose format is not skipped.

    A family is described by its first member (entries.family_entry), so that member is its representative;
    SQLite returns the other columns of the row that min() picked.
    """
    skip = ",".join("?" * len(skip_formats))
    rows = conn.execute(
        "SELECT min(f.path), f.hash FROM files f JOIN entries e ON e.id = f.entry_id "
        f"WHERE e.kind = 'family' AND e.format NOT IN ({skip}) GROUP BY f.entry_id", tuple(skip_formats))
    return [(r[0], r[1]) for r in rows]


def stored_analyses(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """Return {content hash: (text, source)} of every stored analysis ('' text: a failed one)."""
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT hash, text, source FROM analyses")}


def store_analysis(conn: sqlite3.Connection, content_hash: str, text: str, source: str, ok: bool) -> None:
    """Write one analysis; a good one marks its files' folders dirty, so the entry rebuild picks the text up.

    The script read the file itself: what it printed is kept with its secrets redacted, as a profile is."""
    from dslake_index.profilers.redaction import redact_text

    text = redact_text(text)[0]
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO analyses (hash, text, source, created_at) VALUES (?, ?, ?, ?)",
                     (content_hash, text, source, time.time()))
        if ok:
            conn.execute("INSERT OR IGNORE INTO dirty_folders (folder) SELECT DISTINCT folder FROM files "
                         "WHERE hash = ?", (content_hash,))
