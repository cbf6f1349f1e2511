"""CatalogAccess: one catalog's manifest connection, vector store and retriever, shared by the facade and runs.

The Lake facade and every run setup built from it hold the same CatalogAccess, so a use case reaches the
catalog without calling back into Lake. There is one connection and one retriever per thread: report answers
sub-questions and eval runs tasks in parallel threads, and a SQLite connection must not interleave two
threads' transactions.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from dslake_index import catalog as catalog_db
from dslake_index import lookup

from dsstar_lake.catalog_errors import REBUILD_API_HINT, disk_full, read_only
from dsstar_lake.errors import CatalogError, is_disk_full
from dsstar_lake.settings import Settings

CHROMA_DIR = "chroma"


class CatalogAccess:
    """Where a lake and its catalog are, with the settings to open them, and this thread's open handles."""

    def __init__(self, root: Path | None, catalog_dir: Path, settings: Settings,
                 readonly: bool | None = None) -> None:
        self.root = root
        self.remote: str | None = None  # the URL of a lake in object storage (then root is None)
        self.catalog_dir = catalog_dir
        self.settings = settings
        self._readonly = readonly  # None: decided on first use, from whether the folder is writable
        self._local = threading.local()

    # ---- the manifest ------------------------------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        """Return the manifest's path."""
        return self.catalog_dir / catalog_db.MANIFEST_NAME

    @property
    def readonly(self) -> bool:
        """Return whether this catalog is used without writing (its folder is not writable, or it was asked)."""
        if self._readonly is None:
            self._readonly = self.catalog_dir.is_dir() and not catalog_db.writable(self.catalog_dir)
        return self._readonly

    def require_writable(self, why: str) -> None:
        """Raise the read-only error when this catalog must not be written (why: what would write it)."""
        if self.readonly:
            raise read_only(self.catalog_dir, why)

    def open_connection(self) -> sqlite3.Connection | None:
        """Return this thread's connection if one is open, else None (never opens one)."""
        return getattr(self._local, "conn", None)

    def connection(self, create: bool = False) -> sqlite3.Connection:
        """Return this thread's manifest connection, migrating the schema on first use.

        create: open (and create) the manifest even when it does not exist yet, as the indexer does.
        """
        conn = self.open_connection()
        if conn is None:
            if not create and not self.db_path.exists():
                raise CatalogError(f"no catalog at {self.catalog_dir}", hint="run `dslake index LAKE` first",
                                   api_hint="build one with Lake.open(lake).index()")
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        try:
            if self.readonly:
                conn = catalog_db.connect(self.db_path, readonly=True)
                if catalog_db.pending_migrations(conn):
                    conn.close()
                    raise read_only(self.catalog_dir, "was written by an older dslake (its schema needs an update)")
                return conn
            conn = catalog_db.connect(self.db_path)
            catalog_db.migrate(conn)
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc):
                raise disk_full(self.catalog_dir) from None
            raise CatalogError(
                f"the catalog manifest {self.db_path} is damaged ({exc})",
                hint="run `dslake index LAKE --rebuild` to rebuild it from the lake, keeping valid cached descriptions",
                api_hint=REBUILD_API_HINT,
            ) from None
        return conn

    def close(self) -> None:
        """Close this thread's manifest connection and forget its retriever."""
        conn = self.open_connection()
        if conn is not None:
            conn.close()
            self._local.conn = None
        self._local.retriever = None

    def stored_root(self) -> Path | None:
        """Return the lake folder the catalog was last indexed from, or None."""
        if not self.db_path.exists():
            return None
        value = catalog_db.get_meta(self.connection(), "lake_root")
        return Path(value) if value and "://" not in value else None

    def stored_remote(self) -> str | None:
        """Return the object-store URL the catalog was last indexed from, or None (a folder, or never indexed)."""
        if not self.db_path.exists():
            return None
        value = catalog_db.get_meta(self.connection(), "lake_root")
        return value if value and "://" in value else None

    def members(self, entry_id: str) -> list[str]:
        """Return the lake-relative paths of an entry's files."""
        return lookup.member_paths(self.connection(), entry_id)

    def relative(self, path: str) -> str:
        """Accept a lake-relative path, or a path (absolute or from the cwd) to a file inside the lake."""
        candidate = Path(path).expanduser()
        if self.root is not None and (candidate.is_absolute() or candidate.exists()):
            try:
                return candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                pass
        return candidate.as_posix()

    # ---- derived stores ------------------------------------------------------------------------------------

    def chroma_url(self) -> str | None:
        """Return the Chroma server URL in use, or None for the embedded store."""
        return self.settings["catalog.chroma_url"] or None

    def vector_store(self) -> Any:
        """Open the vector store (embedded in the catalog, or the configured Chroma server)."""
        from dslake_index.vectors import VectorStore

        url = self.chroma_url()
        path = None if url else self.catalog_dir / CHROMA_DIR
        return VectorStore.open(path=path, url=url, collection=self.settings["catalog.collection"],
                                readonly=self.readonly)

    def embedder(self) -> Any:
        """Return the process-wide embedding model (loaded on first encode)."""
        from dslake_index.embed import get_embedder

        return get_embedder(self.settings.section("embed"))

    def retriever(self) -> Any:
        """Return this thread's hybrid retriever over the catalog (model loaded on first search)."""
        from dslake_index.retrieve import Retriever

        retriever = getattr(self._local, "retriever", None)
        if retriever is None and not self.db_path.exists() and self.chroma_url():
            # Another machine, with only the catalog's settings: search the shared store dense-only.
            from dslake_index.remote import RemoteRetriever

            retriever = RemoteRetriever(self.vector_store, self.embedder, self.settings.section("retrieve"))
            self._local.retriever = retriever
        if retriever is None:
            retriever = Retriever(self.connection(), self.vector_store, self.embedder, self.settings.section("retrieve"))
            self._local.retriever = retriever
        return retriever

    def vector_stamp(self) -> Any:
        """Return the embedded store's cheap stamp (index.vector_check), or None for a server or an unknown layout."""
        from dslake_index.vector_check import local_stamp

        if self.chroma_url():
            return None
        return local_stamp(self.catalog_dir / CHROMA_DIR, self.settings["catalog.collection"])
