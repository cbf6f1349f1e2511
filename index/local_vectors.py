"""Dense search over the card vectors the manifest keeps beside its vectors rows, exact, in numpy.

Importing Chroma costs ~0.7 s of a cold `dslake search` (more than the rest of it together), and for the
catalogs one machine builds, a brute-force scan of every vector is exact and takes a few milliseconds (27k
vectors: ~3 ms). So the retriever searches these copies when they are complete and current, and opens Chroma
only when it must: vectors from another model, a catalog older than the copies (its next re-embedding fills
them), an entry not embedded yet, or more entries than MAX_ENTRIES. The copy is written in the same transaction
that marks a vector 'ok' in the store, so it is the vector the store holds for that very card, or, for a card a
small re-index embedded into the manifest alone ('unstored', index/vector_lag.py), the vector the store is behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

DIM = 384
# Above this many entries the HNSW index beats reading every vector into each searching process (~0.4 GB at 275k).
MAX_ENTRIES = 50_000

_ROWS = (
    "SELECT e.id, v.embedding FROM entries e LEFT JOIN vectors v "
    "ON v.entry_id = e.id AND v.card_hash = e.card_hash AND v.state IN ('ok', 'unstored') ORDER BY e.id"
)


def to_blob(vector: Any) -> bytes:
    """Return one vector as the bytes the manifest keeps (little-endian float32)."""
    import numpy as np  # here, not at the top: an index with nothing to embed does not import numpy

    return np.asarray(vector, dtype="<f4").tobytes()


def _version(conn: sqlite3.Connection) -> tuple[int, int]:
    # data_version moves when another connection commits; total_changes when this one writes (an index run in
    # the process that searches).
    return int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes


class ManifestVectors:
    """Every entry's current card vector, read from the manifest; answers like VectorStore.query/similarities."""

    def __init__(self, ids: list[str], matrix: np.ndarray, version: tuple[int, int]) -> None:
        self.ids = ids
        self.matrix = matrix
        self.version = version  # the manifest's state when read (_version)
        self._row = {entry_id: i for i, entry_id in enumerate(ids)}

    @classmethod
    def load(cls, conn: sqlite3.Connection, model_id: str) -> ManifestVectors | None:
        """Read the vectors, or None when they cannot stand in for the store (see the module's docstring)."""
        version = _version(conn)
        row = conn.execute("SELECT value FROM meta WHERE key = 'embed_model'").fetchone()
        if row is None or row[0] != model_id:
            return None
        if conn.execute("SELECT count(*) FROM entries").fetchone()[0] > MAX_ENTRIES:
            return None
        try:
            rows = conn.execute(_ROWS).fetchall()
        except sqlite3.OperationalError:  # a manifest from before the vectors' copies (migration 006)
            return None
        if any(blob is None or len(blob) != DIM * 4 for _, blob in rows):
            return None  # an entry not embedded yet, or embedded before the copies were kept
        import numpy as np

        matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), DIM)
        return cls([entry_id for entry_id, _ in rows], matrix, version)

    def current(self, conn: sqlite3.Connection) -> bool:
        """Tell whether the manifest is as it was when these vectors were read."""
        return _version(conn) == self.version

    def query(self, embedding: Any, n: int = 10) -> list[tuple[str, float]]:
        """Return up to n (id, cosine distance) pairs nearest to one unit query vector, nearest first."""
        import numpy as np

        if n <= 0 or not self.ids:
            return []
        scores = self.matrix @ np.asarray(embedding, dtype=np.float32)
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(1.0 - scores[i])) for i in top]

    def similarities(self, embedding: Any, ids: Sequence[str]) -> list[tuple[str, float]]:
        """Return (id, cosine similarity to the query vector) for those of the given ids held here."""
        import numpy as np

        rows = [(entry_id, self._row[entry_id]) for entry_id in ids if entry_id in self._row]
        if not rows:
            return []
        scores = self.matrix[[i for _, i in rows]] @ np.asarray(embedding, dtype=np.float32)
        return [(entry_id, float(s)) for (entry_id, _), s in zip(rows, scores, strict=True)]
