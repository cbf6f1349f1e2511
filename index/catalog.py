"""The SQLite manifest: schema and migrations, transactions, the writer lock. The manifest is the truth."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

MANIFEST_NAME = "manifest.sqlite"
LOCK_NAME = "index.lock"

# Append-only: a released migration is never edited; changes go in a new one.
MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_initial",
        """
        CREATE TABLE files (
            path TEXT PRIMARY KEY,          -- lake-relative POSIX path
            folder TEXT NOT NULL,           -- lake-relative folder, '' for the lake root
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT,                      -- content hash, NULL until hashed
            status TEXT NOT NULL,           -- ok | failed | stale
            error TEXT,
            error_kind TEXT,                -- unreadable | corrupt | timeout | crash | changed
            format TEXT,
            entry_id TEXT,                  -- the file's own entry or its family's
            indexed_at REAL
        );
        CREATE INDEX files_folder ON files(folder);
        CREATE INDEX files_hash ON files(hash);
        CREATE INDEX files_entry ON files(entry_id);

        CREATE TABLE profiles (             -- cached by content hash: a renamed or copied file reuses it
            hash TEXT PRIMARY KEY,
            profiler_version INTEGER NOT NULL,
            format TEXT NOT NULL,
            signature TEXT NOT NULL,
            profile TEXT NOT NULL,          -- JSON
            created_at REAL
        );

        CREATE TABLE entries (              -- one retrievable unit: a file or a family
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,             -- file | family
            folder TEXT NOT NULL,
            path TEXT NOT NULL,             -- file path, or the family's glob pattern
            format TEXT,
            content_hash TEXT,              -- for file entries: lets retrieval drop exact copies
            member_count INTEGER NOT NULL,
            description TEXT NOT NULL,
            card TEXT NOT NULL,
            card_hash TEXT NOT NULL,
            updated_at REAL
        );
        CREATE INDEX entries_folder ON entries(folder);

        CREATE VIRTUAL TABLE entries_fts USING fts5(entry_id UNINDEXED, body, tokenize='porter unicode61');

        CREATE TABLE vectors (              -- what the vector store holds, written ahead of it
            entry_id TEXT PRIMARY KEY,
            card_hash TEXT NOT NULL,
            state TEXT NOT NULL             -- pending | ok
        );

        CREATE TABLE dirty_folders (        -- folders whose entries must be rebuilt (survives a kill)
            folder TEXT PRIMARY KEY
        );

        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT
        );
        """,
    ),
    (
        "002_entries_content_index",
        """
        CREATE INDEX entries_content ON entries(content_hash);
        """,
    ),
    (
        "003_analyses",
        """
        CREATE TABLE analyses (             -- extra description text by content hash (the optional LLM analyzer)
            hash TEXT PRIMARY KEY,
            text TEXT NOT NULL,
            source TEXT NOT NULL,           -- who wrote it, e.g. llm:<model>
            created_at REAL
        );
        """,
    ),
    (
        "004_profiles_version_index",
        """
        -- Listing the hashes profiled by the current profiler reads this index, not the profile rows (the
        -- catalog's bulk): every re-index asks it.
        CREATE INDEX profiles_version ON profiles(profiler_version, hash);
        """,
    ),
    (
        "005_summaries",
        """
        CREATE TABLE summaries (            -- a model's semantic summary of a wordless entry, by content hash
            hash TEXT PRIMARY KEY,          -- the entry's content (a family's: its first member's)
            text TEXT NOT NULL,             -- '' when the model gave none (then source is failed:<source>)
            source TEXT NOT NULL,           -- who wrote it, e.g. llm:<model>
            created_at REAL
        );
        """,
    ),
    (
        "006_vector_values",
        """
        -- The vector itself (little-endian float32), written with state 'ok': a search reads these instead of
        -- starting Chroma (index/local_vectors.py). NULL for vectors embedded before this migration.
        ALTER TABLE vectors ADD COLUMN embedding BLOB;
        """,
    ),
    (
        "007_datasets",
        """
        CREATE TABLE datasets (             -- what loading a dataset or table entry runs (index/dataset_entries.py)
            entry_id TEXT PRIMARY KEY,      -- the entry (kind 'dataset') of a Hive dataset, a folder of parts, a table
            root TEXT NOT NULL,             -- its lake-relative folder
            record TEXT NOT NULL            -- JSON: load hint and its target, streaming line, rows, columns, error
        );
        """,
    ),
]


class CatalogLockHeld(Exception):
    """Raised when another process holds the writer lock."""


def connect(db_path: Path, readonly: bool = False) -> sqlite3.Connection:
    """Open the manifest with WAL journaling so readers see a consistent snapshot while an index writes.

    readonly: never write the database nor create its side files (a catalog on a read-only mount or folder).
    """
    if readonly:
        conn = _connect_readonly(db_path)
    else:
        conn = sqlite3.connect(db_path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn


def _connect_readonly(db_path: Path) -> sqlite3.Connection:
    """Open without writing anything: through the WAL when a writer left one, else the file alone (immutable).

    mode=ro needs the WAL's -wal and -shm files and creates them when they are missing (or fails with "unable to
    open database file" where it cannot), so it is used only when both exist: an index is running or was cut
    off, and its last commits are in the -wal. Otherwise the main file is the whole database (a clean index
    checkpoints and removes the -wal on close) and immutable=1 reads it with no side file and no lock.
    """
    side_files = all(db_path.with_name(db_path.name + suffix).exists() for suffix in ("-wal", "-shm"))
    if side_files:
        try:
            return _opened(f"file:{db_path}?mode=ro")
        except sqlite3.OperationalError:
            pass  # e.g. a -shm this user may not read: the main file alone is still a consistent catalog
    return _opened(f"file:{db_path}?immutable=1")


def _opened(uri: str) -> sqlite3.Connection:
    """Connect and read once: SQLite opens files lazily, so a connection that cannot read fails only here."""
    conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def writable(folder: Path) -> bool:
    """Tell whether this process may create and change files in folder (False on a read-only mount too)."""
    manifest = folder / MANIFEST_NAME
    return os.access(folder, os.W_OK) and (not manifest.exists() or os.access(manifest, os.W_OK))


def pending_migrations(conn: sqlite3.Connection) -> list[str]:
    """Return the names of the migrations this manifest still lacks (without applying them)."""
    try:
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:
        done = set()
    return [name for name, _ in MIGRATIONS if name not in done]


def unknown_migrations(conn: sqlite3.Connection) -> list[str]:
    """Return the migrations this manifest records that this code does not know, in order: a newer dslake wrote it
    (migrations are append-only, so a name this code lacks can only come from a later version)."""
    try:
        done = [row[0] for row in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    except sqlite3.OperationalError:
        return []
    known = {name for name, _ in MIGRATIONS}
    return [name for name in done if name not in known]


def newer_schema(db_path: Path) -> list[str]:
    """Return the unknown migrations of the manifest at db_path (unknown_migrations), read without writing
    anything (no side file, no lock); [] when there is no manifest or it cannot be read (opening it says why)."""
    if not db_path.exists():
        return []
    try:
        conn = _connect_readonly(db_path)
    except sqlite3.Error:
        return []
    try:
        return unknown_migrations(conn)
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def known_schema() -> str:
    """Return the name of the last migration this code knows (the schema it writes)."""
    return MIGRATIONS[-1][0]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply pending migrations in order; return the names applied."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        with transaction(conn):
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, time.time()))
        applied.append(name)
    return applied


def _statements(sql: str) -> Iterator[str]:
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


def schema_version(conn: sqlite3.Connection) -> str | None:
    """Return the name of the last applied migration."""
    try:
        row = conn.execute("SELECT name FROM _migrations ORDER BY name DESC LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run a block in one IMMEDIATE transaction: all of it lands, or none of it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        # SQLite has already rolled back after some errors (SQLITE_FULL among them): a second ROLLBACK would
        # raise "no transaction is active" and hide the real error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a COMMIT that failed (disk full) leaves the transaction open
            conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def writer_lock(catalog_dir: Path) -> Iterator[None]:
    """Hold the catalog's writer lock; the kernel releases it if the process dies, so a kill never wedges it."""
    lock_path = catalog_dir / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
            raise CatalogLockHeld(holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield
    finally:
        os.close(fd)


def writer_running(catalog_dir: Path) -> bool:
    """Tell whether a process holds the catalog's writer lock (an index is running), without writing anything.

    It asks for a shared lock and lets it go at once: an index that starts in that instant is refused as if
    another were running, so callers ask only when a running index is what they need to tell apart (a catalog
    with no entry yet), never on a busy path.
    """
    try:
        fd = os.open(catalog_dir / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False  # no lock file: no index ever ran here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing the descriptor lets the shared lock go
    return False


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """Read one value from the meta table."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """Write one value to the meta table (inside the caller's transaction)."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (key, value))
