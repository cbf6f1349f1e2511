"""Notice when the vector store no longer holds what the manifest records, and make the manifest forget it.

The manifest's vectors table says which entries the store holds and with which card hash; sync_vectors embeds
only what that table lacks. When the store loses or changes vectors behind the manifest's back (its folder
deleted, a search recreating it empty, a vector deleted or overwritten by another program), the table still
says "ok" and nothing would be re-embedded. So each index compares a cheap fingerprint of the store with the one
recorded after its last sync; only when they differ does it read the store's ids and card hashes, drop the rows
that no longer hold, delete vectors no entry owns, and leave the re-embedding (from the manifest's cards,
nothing profiled) to sync_vectors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dslake_index.catalog import get_meta, set_meta, transaction

STAMP_KEY = "vector_stamp"

# Chroma's own tables (chromadb 1.5): the collection's id, how many vectors its metadata segment holds, and the
# log position its segments have applied, which every add, upsert and delete moves on.
_STAMP_SQL = """
SELECT c.id,
       (SELECT count(*) FROM embeddings e JOIN segments s ON s.id = e.segment_id WHERE s.collection = c.id),
       (SELECT coalesce(max(m.seq_id), 0) FROM max_seq_id m JOIN segments s ON s.id = m.segment_id
        WHERE s.collection = c.id)
FROM collections c WHERE c.name = ?
"""


@dataclass(frozen=True)
class Stamp:
    """What an embedded store's collection looks like from outside: enough to tell that it changed."""

    collection: str  # '' when the folder or the collection does not exist
    count: int
    seq: int

    def __str__(self) -> str:
        return f"{self.collection}:{self.count}:{self.seq}"


@dataclass
class VectorDrift:
    """How the vector store differs from what the manifest records."""

    missing: int = 0  # recorded as embedded, not in the store
    stale: int = 0  # in the store with another card hash than the manifest's
    extra: int = 0  # in the store, but no entry of the manifest owns it

    @property
    def total(self) -> int:
        """Return how many vectors differ."""
        return self.missing + self.stale + self.extra

    def describe(self) -> str:
        """Return the counts as words."""
        return f"{self.missing} missing, {self.stale} with an old card, {self.extra} extra"


def local_stamp(chroma_dir: Path, collection: str) -> Stamp | None:
    """Return the stamp of an embedded store's collection, read from Chroma's SQLite file without chromadb.

    Importing chromadb costs ~0.6 s, more than a whole no-change index of a 1,724-file lake; this costs about a
    millisecond. None means "cannot tell cheaply": Chroma's tables are not its API, and another version may lay
    them out differently, so the caller then asks the store itself.
    """
    db = chroma_dir / "chroma.sqlite3"
    if not db.is_file():
        return Stamp("", 0, 0)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            rows = conn.execute(_STAMP_SQL, (collection,)).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if len(rows) > 1:
        return None  # the same name in several Chroma databases: not a layout dslake writes
    if not rows:
        return Stamp("", 0, 0)
    collection_id, count, seq = rows[0]
    return Stamp(str(collection_id), int(count), int(seq))


def record_stamp(conn: sqlite3.Connection, stamp: Stamp | None) -> None:
    """Remember the store's stamp after a sync (None: forget it, so the next index asks the store)."""
    with transaction(conn):
        if stamp is None:
            conn.execute("DELETE FROM meta WHERE key = ?", (STAMP_KEY,))
        else:
            set_meta(conn, STAMP_KEY, str(stamp))


def _may_differ(conn: sqlite3.Connection, stamp: Stamp) -> bool:
    rows = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    if rows == 0 and stamp.count == 0:
        return False  # nothing on either side: a new or rebuilt catalog
    return str(stamp) != get_meta(conn, STAMP_KEY)


def check_and_repair(conn: sqlite3.Connection, stamp: Stamp | None, store_factory: Callable[[], Any]) -> VectorDrift:
    """Compare the store with the manifest when it may have changed; forget what it lost; return the difference.

    stamp: the embedded store's (local_stamp), or None for a server, whose vector count is compared instead.
    """
    if stamp is not None and not _may_differ(conn, stamp):
        return VectorDrift()
    store = store_factory()
    if stamp is None and store.count() == conn.execute("SELECT count(*) FROM vectors").fetchone()[0]:
        return VectorDrift()
    drift, forget, extra = _compare(conn, store)
    if extra:
        store.delete(extra)
    if forget or extra:
        with transaction(conn):
            conn.executemany("DELETE FROM vectors WHERE entry_id = ?", [(i,) for i in forget + extra])
    return drift


def compare(conn: sqlite3.Connection, store: Any) -> VectorDrift:
    """Return how the store differs from the manifest's record, changing nothing."""
    return _compare(conn, store)[0]


def _compare(conn: sqlite3.Connection, store: Any) -> tuple[VectorDrift, list[str], list[str]]:
    """Return the drift, the recorded ids to re-embed, and the stored ids no entry owns."""
    stored = store.card_hashes()
    entries = {row[0] for row in conn.execute("SELECT id FROM entries")}
    # A removed entry's row is the store's lag (index/vector_lag.py), not a vector it should hold.
    recorded = {row[0]: (row[1], row[2]) for row in conn.execute("SELECT entry_id, card_hash, state FROM vectors")
                if row[0] in entries}
    missing = [i for i, (_, state) in recorded.items() if state == "ok" and i not in stored]
    stale = [i for i, (card_hash, state) in recorded.items()
             if state == "ok" and i in stored and stored[i] != card_hash]
    extra = sorted(set(stored) - entries)
    return VectorDrift(len(missing), len(stale), len(extra)), missing + stale, extra


def drift_problem(drift: VectorDrift) -> str:
    """Return the status line for a drift, with the way out that works."""
    return (f"vector store out of sync with the manifest: {drift.describe()}; a plain `dslake index LAKE` "
            "re-embeds them from the manifest's cards (nothing is profiled again)")


def count_problems(conn: sqlite3.Connection, stamp: Stamp | None) -> list[str]:
    """Compare an embedded store's vector count with the manifest's record: a status check without chromadb."""
    if stamp is None:
        return []
    done, recorded = conn.execute("SELECT coalesce(sum(state = 'ok'), 0), count(*) FROM vectors").fetchone()
    if done <= stamp.count <= recorded:
        return []  # between the vectors known to be written and those that may be (pending after a kill)
    return [f"vector store out of sync with the manifest: it holds {stamp.count} vectors where the manifest "
            f"records {done}; a plain `dslake index LAKE` re-embeds from the manifest's cards (nothing is "
            "profiled again); `dslake status --check` compares them one by one"]
