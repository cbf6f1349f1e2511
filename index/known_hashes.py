"""The content hashes the profile server is told have a current profile: those a file to profile could turn out to
have, not every one the manifest holds.

A worker hashes its file and reuses the cached profile of a known hash (a copy, a rename, a file put back costs no
profiling: index/profile_task.py). The server gets the hashes as JSON and keeps them in a SQLite file of its own
(index/profile_server.py), so each one costs both processes: at 100k files, ~13 MB and over a second of a one-file
index. Equal content has equal size, so for a few files it is enough to send the hashes of the manifest's files of
those sizes, and those of profiles no file row holds any more (a removed file's, whose size is not kept).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from dslake_index.scan import FileStat

# Up to this many distinct sizes the hashes are chosen by size; past it (a first index, a large change) every
# current hash goes, as the chosen ones would be most of them anyway.
MAX_SIZES = 500
_ALL = "SELECT hash FROM profiles WHERE profiler_version = ? ORDER BY hash"
_OF_SIZES = """
SELECT f.hash FROM files f WHERE f.size IN ({marks}) AND EXISTS
    (SELECT 1 FROM profiles p INDEXED BY profiles_version WHERE p.profiler_version = ? AND p.hash = f.hash)
UNION
SELECT p.hash FROM profiles p INDEXED BY profiles_version
WHERE p.profiler_version = ? AND NOT EXISTS (SELECT 1 FROM files f WHERE f.hash = p.hash)
ORDER BY 1
"""


def known_hashes(conn: sqlite3.Connection, todo: list[FileStat], profiler_version: str) -> Iterator[str]:
    """Yield, in order (the server inserts them fastest so), the hashes with a current profile that a file of todo
    could have: of the manifest's files of the same size, and of profiles no file holds; all of them past
    MAX_SIZES sizes."""
    sizes = sorted({f.size for f in todo})
    if len(sizes) > MAX_SIZES:
        rows = conn.execute(_ALL, (profiler_version,))
    else:
        rows = conn.execute(_OF_SIZES.format(marks=", ".join("?" * len(sizes))),
                            (*sizes, profiler_version, profiler_version))
    return (row[0] for row in rows)
