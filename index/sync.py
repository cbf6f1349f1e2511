"""Keep the vector store equal to the manifest's entries, and check that every derived index agrees."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, Protocol

from dslake_index import vector_lag
from dslake_index.catalog import get_meta, set_meta, transaction
from dslake_index.local_vectors import MAX_ENTRIES, to_blob
from dslake_index.timings import phase
from dslake_index.vector_check import compare, drift_problem
from dslake_index.vector_lag import UNSTORED, catch_up, lag

EMBED_BATCH = 256


class Store(Protocol):
    def upsert(self, ids: list[str], embeddings: Any, metadatas: list[dict[str, Any]]) -> None: ...
    def delete(self, ids: list[str]) -> None: ...
    def ids(self) -> set[str]: ...
    def card_hashes(self) -> dict[str, str | None]: ...
    def embeddings(self, ids: list[str]) -> dict[str, Any]: ...
    def reset(self) -> None: ...


class Encoder(Protocol):
    model_id: str

    def encode(self, texts: list[str]) -> Any: ...


def sync_vectors(
    conn: sqlite3.Connection,
    store_factory: Callable[[], Store],
    embedder_factory: Callable[[], Encoder],
    progress: Callable[[str, dict[str, Any]], None],
    may_lag: bool = False,
) -> int:
    """Embed entries whose card changed, delete vectors of removed entries; return how many were embedded.

    may_lag: the store may be left lagging the manifest (index/vector_lag.py): when few cards change, they are
    embedded into the manifest alone and the store is not opened. Otherwise the store is first brought in step,
    then written. The vectors table is written ahead of the store (pending, then ok), so a kill at any moment
    leaves every id the store may hold recorded in the manifest, and the next run finishes the job.
    """
    todo = conn.execute(
        "SELECT e.id, e.card, e.card_hash, e.kind, e.path, e.format, e.member_count "
        "FROM entries e LEFT JOIN vectors v ON v.entry_id = e.id "
        f"WHERE v.entry_id IS NULL OR v.card_hash != e.card_hash OR v.state NOT IN ('ok', '{UNSTORED}') "
        "ORDER BY e.id"
    ).fetchall()
    uncopied = [row[0] for row in conn.execute(
        "SELECT v.entry_id FROM vectors v JOIN entries e ON e.id = v.entry_id AND e.card_hash = v.card_hash "
        "WHERE v.state = 'ok' AND v.embedding IS NULL")]
    # Vectors of another model or recipe are re-embedded even when no card changed (the model id is read from
    # the model's files, without loading it).
    stale_model = get_meta(conn, "embed_model") is not None and _model_changed(conn, embedder_factory().model_id)
    behind = lag(conn)
    if not todo and not uncopied and not stale_model and not behind:
        return 0
    if (may_lag and not uncopied and not stale_model and behind + len(todo) <= vector_lag.LAG_LIMIT
            and conn.execute("SELECT count(*) FROM entries").fetchone()[0] <= MAX_ENTRIES):
        return _embed_into_manifest(conn, todo, embedder_factory(), progress)
    with phase("vectors: open store"):
        store = store_factory()
    if behind:
        with phase("vectors: bring the store in step", behind):
            catch_up(conn, store)
    if uncopied:
        _copy_from_store(conn, store, uncopied)
    if not todo and not stale_model:
        return 0
    embedder = embedder_factory()
    with phase("vectors: load model"):
        load = getattr(embedder, "load", None)
        if load is not None:
            load()  # charged here, not to the first batch (usually done already, while the profilers ran)
    if _model_changed(conn, embedder.model_id):
        # Vectors from another model are not comparable: start the collection over.
        store.reset()
        with transaction(conn):
            conn.execute("DELETE FROM vectors")
            set_meta(conn, "embed_model", embedder.model_id)
        todo = conn.execute(
            "SELECT id, card, card_hash, kind, path, format, member_count FROM entries ORDER BY id").fetchall()
    progress("embed", {"total": len(todo)})
    done = 0
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        with transaction(conn):
            conn.executemany(
                "INSERT INTO vectors (entry_id, card_hash, state) VALUES (?, ?, 'pending') "
                "ON CONFLICT(entry_id) DO UPDATE SET card_hash = excluded.card_hash, state = 'pending'",
                [(row["id"], row["card_hash"]) for row in batch],
            )
        with phase("vectors: embed cards", len(batch)):
            vectors = embedder.encode([row["card"] for row in batch])
        from dslake_index.remote import card_metadata  # with the retriever's modules: only when cards changed

        with phase("vectors: upsert", len(batch)):
            store.upsert(
                [row["id"] for row in batch],
                vectors,
                [card_metadata(row) for row in batch],  # what a search without the manifest shows (index.remote)
            )
        with transaction(conn):
            conn.executemany("UPDATE vectors SET state = 'ok', embedding = ? WHERE entry_id = ?",
                             [(to_blob(vector), row["id"]) for row, vector in zip(batch, vectors, strict=True)])
        done += len(batch)
        progress("embedded", {"n": len(batch)})
    return done


def _embed_into_manifest(conn: sqlite3.Connection, todo: list[sqlite3.Row], embedder: Encoder,
                         progress: Callable[[str, dict[str, Any]], None]) -> int:
    """Embed the changed cards into the manifest alone, each row UNSTORED: the store's next reader writes them."""
    if not todo:
        return 0
    with phase("vectors: load model"):
        load = getattr(embedder, "load", None)
        if load is not None:
            load()
    if get_meta(conn, "embed_model") is None:
        with transaction(conn):
            set_meta(conn, "embed_model", embedder.model_id)
    progress("embed", {"total": len(todo)})
    with phase("vectors: embed cards", len(todo)):
        vectors = embedder.encode([row["card"] for row in todo])
    with transaction(conn):
        conn.executemany(
            "INSERT INTO vectors (entry_id, card_hash, state, embedding) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(entry_id) DO UPDATE SET card_hash = excluded.card_hash, state = excluded.state, "
            "embedding = excluded.embedding",
            [(row["id"], row["card_hash"], UNSTORED, to_blob(vector))
             for row, vector in zip(todo, vectors, strict=True)])
    progress("embedded", {"n": len(todo)})
    return len(todo)


def _copy_from_store(conn: sqlite3.Connection, store: Store, ids: list[str]) -> None:
    """Copy vectors embedded before the manifest kept them (migration 006) from the store, without embedding."""
    for start in range(0, len(ids), EMBED_BATCH * 4):
        found = store.embeddings(ids[start : start + EMBED_BATCH * 4])
        with transaction(conn):
            conn.executemany("UPDATE vectors SET embedding = ? WHERE entry_id = ? AND state = 'ok'",
                             [(to_blob(vector), entry_id) for entry_id, vector in found.items()])


def _model_changed(conn: sqlite3.Connection, model_id: str | None) -> bool:
    stored = get_meta(conn, "embed_model")
    if model_id is None:
        return False
    return stored != model_id


def check_consistency(conn: sqlite3.Connection, store: Store | None = None) -> list[str]:
    """Return problems found between the manifest and its derived indexes (empty when all agree)."""
    problems: list[str] = []
    integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
    if integrity != "ok":
        problems.append(f"manifest integrity check failed: {integrity}")
        return problems
    fts_ids = {row[0] for row in conn.execute("SELECT entry_id FROM entries_fts")}
    entry_ids = {row[0] for row in conn.execute("SELECT id FROM entries")}
    if fts_ids != entry_ids:
        problems.append(f"full-text index out of sync: {len(entry_ids - fts_ids)} missing, "
                        f"{len(fts_ids - entry_ids)} extra")
    dirty = conn.execute("SELECT count(*) FROM dirty_folders").fetchone()[0]
    if dirty:
        problems.append(f"{dirty} folder(s) left half-indexed by an interrupted run")
    pending = conn.execute(
        "SELECT count(*) FROM entries e LEFT JOIN vectors v ON v.entry_id = e.id "
        f"WHERE v.entry_id IS NULL OR v.card_hash != e.card_hash OR v.state NOT IN ('ok', '{UNSTORED}')"
    ).fetchone()[0]
    if pending:
        problems.append(f"{pending} entries not yet embedded")
    if store is not None:
        drift = compare(conn, store)
        if drift.total:
            problems.append(drift_problem(drift))
    return problems
