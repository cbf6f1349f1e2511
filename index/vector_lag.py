"""The embedded vector store may lag the manifest: a small re-index embeds into the manifest only.

Importing and opening Chroma costs about a second, two thirds of an index after one file changed, and nothing
reads the embedded store then: a search reads the manifest's copies of the vectors (index/local_vectors.py). So
when the store exists, the catalog is one the manifest's copies can answer for, and few cards wait, an index
writes each new vector to the manifest alone, its row marked UNSTORED (the store may hold that entry's older
vector, or none), and leaves the vectors of removed entries' rows in place (the store still holds them). That is
the store's *lag*. It is brought in step, from the manifest's vectors and never by embedding again:

- by the first reader that opens the store (Catalog.vector_store: a search the manifest cannot answer, an ask,
  `dslake status --check`, `dslake doctor`), before it reads; a reader of a read-only catalog brings its private
  copy in step instead;
- by the next index that opens the store anyway (more than LAG_LIMIT cards to write, a model that changed, a
  drift to repair), before its own writes.

Every write to the embedded store holds WRITE_LOCK, so a reader never writes beside an index. A reader that finds
it held reads the store as an index is writing it, as any search during an index does; that index brings the
store in step before it ends. Only an older dslake sees the lag unexplained: it embeds the UNSTORED cards again.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dslake_index.catalog import transaction

UNSTORED = "unstored"
# Cards an index may leave for the store's next reader; past this, the index writes them to the store itself,
# so the lag (and the first reader's wait) stays one batch of upserts.
LAG_LIMIT = 256
WRITE_LOCK = "vectors.lock"  # in the catalog folder; held by whoever writes the embedded store

_ORPHANS = "SELECT v.entry_id FROM vectors v LEFT JOIN entries e ON e.id = v.entry_id WHERE e.id IS NULL"
_UNSTORED = ("SELECT e.id, e.card, e.card_hash, e.kind, e.path, e.format, e.member_count, v.embedding "
             "FROM entries e JOIN vectors v ON v.entry_id = e.id AND v.card_hash = e.card_hash "
             f"WHERE v.state = '{UNSTORED}' AND v.embedding IS NOT NULL ORDER BY e.id")
_LAG = (f"SELECT (SELECT count(*) FROM vectors WHERE state = '{UNSTORED}') "
        "+ (SELECT count(*) FROM vectors v LEFT JOIN entries e ON e.id = v.entry_id WHERE e.id IS NULL)")
_BATCH = 1024


def lag(conn: sqlite3.Connection) -> int:
    """Return how many of the store's vectors wait for a write (UNSTORED rows, and removed entries' rows)."""
    return int(conn.execute(_LAG).fetchone()[0])


def may_lag(chroma_dir: Path | None, collection: str) -> bool:
    """Tell whether an index may leave this store lagging: an embedded store whose collection exists (a first
    index creates it, so that a catalog always has one), read without importing Chroma."""
    if chroma_dir is None:
        return False  # a Chroma server: other machines read it without the manifest
    from dslake_index.vector_check import local_stamp

    stamp = local_stamp(chroma_dir, collection)
    return stamp is not None and stamp.collection != ""


@contextmanager
def write_lock(catalog_dir: Path, wait: bool) -> Iterator[bool]:
    """Hold the store's write lock; yield False (holding nothing) when another holds it and wait is False.

    A flock: the kernel lets it go when the process dies, and a second open in the same process is refused too,
    so a reader inside an index that writes the store leaves it to the index."""
    fd = os.open(catalog_dir / WRITE_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def catch_up(conn: sqlite3.Connection, store: Any, record: bool = True) -> int:
    """Write the store's lag to it (deletions, then the manifest's vectors); return how many vectors were written.

    record: mark the rows written (False: a read-only catalog's private copy, the manifest is left as it is). A
    kill midway leaves rows UNSTORED whose vector the store may already hold: writing them again is harmless.
    """
    import numpy as np
    from dslake_index.remote import card_metadata

    orphans = [row[0] for row in conn.execute(_ORPHANS)]
    if orphans:
        store.delete(orphans)
        if record:
            with transaction(conn):
                conn.executemany("DELETE FROM vectors WHERE entry_id = ?", [(i,) for i in orphans])
    rows = conn.execute(_UNSTORED).fetchall()
    for start in range(0, len(rows), _BATCH):
        batch = rows[start : start + _BATCH]
        vectors = np.frombuffer(b"".join(row["embedding"] for row in batch), dtype="<f4").reshape(len(batch), -1)
        store.upsert([row["id"] for row in batch], vectors, [card_metadata(row) for row in batch])
        if record:
            with transaction(conn):
                conn.executemany(
                    f"UPDATE vectors SET state = 'ok' WHERE entry_id = ? AND card_hash = ? AND state = '{UNSTORED}'",
                    [(row["id"], row["card_hash"]) for row in batch])
    return len(rows)


def bring_in_step(conn: sqlite3.Connection, store: Any, catalog_dir: Path, chroma_dir: Path,
                  readonly: bool) -> None:
    """Before a reader reads the embedded store: write its lag to it, unless an index holds the write lock (that
    index writes it). The recorded stamps follow, so the next index sees no drift and a no-change index stays quick.
    """
    if not lag(conn):
        return
    if readonly:
        catch_up(conn, store, record=False)
        return
    from dslake_index.no_change import follow_store
    from dslake_index.vector_check import local_stamp, record_stamp

    with write_lock(catalog_dir, wait=False) as held:
        if not held or not lag(conn):
            return
        with follow_store(conn, chroma_dir):
            catch_up(conn, store)
            record_stamp(conn, local_stamp(chroma_dir, store.collection_name))
