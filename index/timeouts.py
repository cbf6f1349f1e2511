"""Files whose profile ran past the time limit (profile.timeout_s): retried alone, and an entry that says so.

A multi-GB file is profiled in bounded time (a Parquet file from its footer, a CSV from its head and strided
chunks), but its content hash still reads every byte: on a loaded machine a 3 GB file took longer than the 30 s
limit. So a file's limit grows with its size (time_limit: the hash's read at a slow disk's pace), and a file that
passes it all the same is not lost: once the pool has done the rest of the lake, it is profiled again alone (no sibling process shares
the disk or the cores), and if it times out again its entry is a recorded failure that names the file, its size,
why it is not described, and for a big table the streaming line that reads it anyway; the next index tries it
again (indexer.plan_changes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from dslake_index.bigfiles import size_text, streaming_lines, too_big
from dslake_index.entries import EntryRow
from dslake_index.families import file_entry_id

TIMEOUT = "timeout"  # files.error_kind of a file stopped at the time limit
# The content hash reads every byte (the profile itself reads a bounded head, strides or a footer): a file gets its
# size's worth of time at this slow a read (a shared disk under load) on top of profile.timeout_s. 3 GB: +123 s.
HASH_FLOOR_BYTES_PER_S = 25 << 20
PREFIX = "data/"


def time_limit(timeout_s: float, size: int) -> float:
    """Return a file's time limit: profile.timeout_s for the profile, plus its hash's read at a loaded disk's pace
    (0 or less: no limit, as the setting means)."""
    return timeout_s + max(size, 0) / HASH_FLOOR_BYTES_PER_S if timeout_s and timeout_s > 0 else timeout_s


def timed_out(conn: sqlite3.Connection, paths: Sequence[str]) -> list[str]:
    """Return which of these paths the last profile pass stopped at the time limit."""
    found: list[str] = []
    for start in range(0, len(paths), 500):
        chunk = list(paths[start:start + 500])
        marks = ",".join("?" * len(chunk))
        found += [row[0] for row in conn.execute(
            f"SELECT path FROM files WHERE error_kind = ? AND path IN ({marks})", (TIMEOUT, *chunk))]
    return found


def timed_out_entries(conn: sqlite3.Connection, folders: Sequence[str], budget_mb: int) -> list[EntryRow]:
    """Return the entries of the files in these folders that are not described because profiling timed out."""
    marks = ",".join("?" * len(folders))
    rows = conn.execute(f"SELECT path, folder, size, error FROM files WHERE folder IN ({marks}) AND status = "
                        "'failed' AND error_kind = ? ORDER BY path", (*folders, TIMEOUT)).fetchall()
    return [_entry(path, folder, size or 0, error or "profiling timed out", budget_mb)
            for path, folder, size, error in rows]


def _entry(path: str, folder: str, size: int, error: str, budget_mb: int) -> EntryRow:
    name = path.rpartition("/")[2]
    fmt = name.rpartition(".")[2].lower() if "." in name else None
    lines = [f"File: {PREFIX}{path} ({size:,} bytes, {size_text(size)})",
             f"Not described: {error}. Its columns and rows are unknown to dslake until it is profiled; the next "
             "`dslake index` profiles it again, alone."]
    if fmt and too_big(fmt, size, budget_mb):
        lines += streaming_lines(fmt, size, budget_mb, PREFIX + path)
    card = f"{path} {' '.join(path.replace('_', ' ').replace('-', ' ').split('/'))} {fmt or ''} not described " \
           f"(profiling timed out) {size_text(size)}"
    return EntryRow(file_entry_id(path), "file", folder, path, fmt, None, 1, "\n".join(lines), card, [path])
