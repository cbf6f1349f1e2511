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
it held reads the store through the manifest (LaggingStore: the lagging cards' vectors from the manifest, the
removed entries' left out), so no reader sees a stale vector; the index that holds the lock writes the lag. Only an older dslake sees the lag unexplained: it embeds the UNSTORED cards again.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator, Sequence
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
                  readonly: bool) -> Any:
    """Before a reader reads the embedded store: write its lag to it and return it. When an index holds the write
    lock (it writes the lag itself), return the store seen through the manifest instead (LaggingStore), so that
    nothing the reader reads is stale. The recorded stamps follow a write, so the next index sees no drift and a
    no-change index stays quick.
    """
    if not lag(conn):
        return store
    if readonly:
        catch_up(conn, store, record=False)  # the reader's private copy
        return store
    from dslake_index.no_change import follow_store
    from dslake_index.vector_check import local_stamp, record_stamp

    with write_lock(catalog_dir, wait=False) as held:
        if not held:
            return LaggingStore.over(conn, store)
        if lag(conn):
            with follow_store(conn, chroma_dir):
                catch_up(conn, store)
                record_stamp(conn, local_stamp(chroma_dir, store.collection_name))
    return store


class LaggingStore:
    """A lagging store read as it will be once its lag is written: the lagging cards' vectors come from the manifest
    (exact), the removed entries' are left out, everything else is the store's."""

    def __init__(self, store: Any, ahead: dict[str, tuple[str, Any]], gone: set[str]) -> None:
        self._store = store
        self._ahead = ahead  # entry id: (card hash, unit vector) the store does not hold yet
        self._hidden = set(ahead) | gone

    @classmethod
    def over(cls, conn: sqlite3.Connection, store: Any) -> LaggingStore:
        """Read the lag from the manifest."""
        import numpy as np

        ahead = {row["id"]: (row["card_hash"], np.frombuffer(row["embedding"], dtype="<f4"))
                 for row in conn.execute(_UNSTORED)}
        return cls(store, ahead, {row[0] for row in conn.execute(_ORPHANS)})

    def query(self, embedding: Any, n: int = 10, where: Any = None) -> list[tuple[str, float]]:
        """Return up to n (id, cosine distance) pairs nearest to one query vector, nearest first."""
        if n <= 0:
            return []
        found = [(i, d) for i, d in self._store.query(embedding, n + len(self._hidden), where) if i not in self._hidden]
        if where is None:  # the manifest's vectors carry no metadata to filter on: only an unfiltered query adds them
            found += [(i, 1.0 - s) for i, s in self._scores(embedding, list(self._ahead))]
        return sorted(found, key=lambda pair: (pair[1], pair[0]))[:n]

    def similarities(self, embedding: Any, ids: Sequence[str]) -> list[tuple[str, float]]:
        """Return (id, cosine similarity to the query vector) for those of the given ids held here."""
        stored = self._store.similarities(embedding, [i for i in ids if i not in self._hidden])
        return stored + self._scores(embedding, [i for i in ids if i in self._ahead])

    def card_hashes(self) -> dict[str, str | None]:
        """Return each held vector's card hash."""
        held = {i: h for i, h in self._store.card_hashes().items() if i not in self._hidden}
        return held | {i: card_hash for i, (card_hash, _) in self._ahead.items()}

    def ids(self) -> set[str]:
        return set(self.card_hashes())

    def count(self) -> int:
        return len(self.card_hashes())

    def _scores(self, embedding: Any, ids: list[str]) -> list[tuple[str, float]]:
        import numpy as np

        query = np.asarray(embedding, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        return [(i, float(self._ahead[i][1] @ query)) for i in ids]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)  # closing it, its name and folder: the store's own
