"""Card vectors in Chroma: an embedded PersistentClient in the catalog, or a shared server through HttpClient.

Chroma never embeds anything here: every collection is opened with `embedding_function=None` (on get as
well as create, or Chroma attaches its default ONNX model, which downloads at first use) and every vector
comes from index.embed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from dslake_index.errors import CatalogError, DiskFull, UsageError, is_disk_full

SPACE = "cosine"
DEFAULT_PORT = 8000
# What Chroma accepts as a collection name.
_NAME_HINT = "use 3-512 characters of [a-zA-Z0-9._-], starting and ending with a letter or digit"
_FULL_HINT = ("free some space, then run `dslake index LAKE` again: vectors not yet written are recorded as pending "
              "in the manifest and embedded then")
_FULL_API_HINT = ("free some space, then run lake.index() again: vectors not yet written are recorded as pending "
                  "in the manifest and embedded then")


def _chroma_errors() -> tuple[type[BaseException], ...]:
    """Return the exception types that mean the store or the server failed (not a bug in our call)."""
    import chromadb.errors
    import httpx

    return (chromadb.errors.ChromaError, httpx.HTTPError, OSError)


def parse_url(url: str) -> tuple[str, int, bool]:
    """Split http(s)://HOST[:PORT] into host, port and ssl."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"bad Chroma server URL {url!r}", hint="write it as http://HOST:PORT")
    try:
        port = parts.port or (443 if parts.scheme == "https" else DEFAULT_PORT)
    except ValueError as exc:
        raise UsageError(
            f"bad port in Chroma server URL {url!r}", hint="write it as http://HOST:PORT"
        ) from exc
    if parts.path not in ("", "/"):
        raise UsageError(f"Chroma server URL {url!r} has a path", hint="write it as http://HOST:PORT")
    return parts.hostname, port, parts.scheme == "https"


class VectorStore:
    """One Chroma collection of unit vectors keyed by entry id, compared by cosine distance."""

    def __init__(self, client: Any, collection_name: str, where: str) -> None:
        self._client = client
        self.collection_name = collection_name
        self.where = where  # the folder or URL, for messages
        self._cleanup: Any = None  # removes the private copy of a read-only store
        self._collection = self._get_or_create()
        self._max_batch = int(client.get_max_batch_size())

    @classmethod
    def open(
        cls, path: Path | None = None, url: str | None = None, collection: str = "dslake-entries",
        readonly: bool = False,
    ) -> VectorStore:
        """Open (creating if needed) a collection in a local folder or on a Chroma server at url.

        readonly: the folder must not be written (a read-only catalog); the store is read from a private copy.
        """
        if readonly and path is not None:
            return cls._open_copy(Path(path), collection)
        if (path is None) == (not url):
            raise UsageError("give the vector store either a folder or a server URL, not both or neither")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "legacy embedding function config"
            import chromadb
            from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        if url:
            host, port, ssl = parse_url(url)
            where = f"Chroma server {url}"
            try:
                client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
            except Exception as exc:  # chromadb raises ValueError("Could not connect…") or httpx errors
                raise CatalogError(
                    f"cannot reach the Chroma server at {url}: {exc}",
                    hint=f"start one with `chroma run --path DIR --host {host} --port {port}`, "
                    "or fix catalog.chroma_url",
                ) from exc
        else:
            assert path is not None
            where = f"vector store {path}"
            try:
                # chromadb's first open of a folder is not thread-safe ("Could not connect to tenant"):
                # serialise client creation within the process.
                with _OPEN_LOCK:
                    opened_before = _OPENED.get(str(path))
                    if not Path(path).exists() or (opened_before and opened_before != _identity(Path(path))):
                        # Deleted, or deleted and made again by another process: the cached client writes
                        # to the old, unlinked database.
                        forget_cached_client(Path(path))
                    Path(path).mkdir(parents=True, exist_ok=True)
                    client = chromadb.PersistentClient(path=str(path), settings=settings)
                    _OPENED[str(path)] = _identity(Path(path))
            except Exception as exc:
                if is_disk_full(exc):
                    raise DiskFull(f"disk full: cannot open the vector store in {path}",
                                   hint=_FULL_HINT, api_hint=_FULL_API_HINT) from exc
                raise CatalogError(
                    f"cannot open the vector store in {path}: {exc}",
                    hint="check that the folder is readable and writable; if it is damaged, delete it "
                    "and re-index (vectors are rebuilt from the manifest)",
                ) from exc
        try:
            return cls(client, collection, where)
        except CatalogError:
            _close_client(client)
            raise
        except Exception as exc:
            _close_client(client)
            raise CatalogError(
                f"cannot open collection {collection!r} in the {where}: {exc}",
                hint=_NAME_HINT
                if "name" in str(exc).lower()
                else "if the store is damaged, delete it and re-index",
            ) from exc

    @classmethod
    def _open_copy(cls, path: Path, collection: str) -> VectorStore:
        """Open a private temporary copy of a store that must not be written.

        Chroma writes to its folder whenever a client opens it (a read-only one fails with "attempt to write a
        readonly database") and has no read-only mode; the copy costs about as much as reading the store once.
        """
        if not (path / "chroma.sqlite3").is_file():
            raise CatalogError(f"the vector store {path} is missing and the catalog is read-only",
                               hint="run `dslake index LAKE` where the catalog is writable: it re-embeds from the "
                               "manifest",
                               api_hint="run lake.index() where the catalog is writable: it re-embeds from the manifest")
        copy = Path(tempfile.mkdtemp(prefix="dslake-vectors-"))
        try:
            shutil.copytree(path, copy / "chroma")
        except OSError as exc:
            shutil.rmtree(copy, ignore_errors=True)
            raise CatalogError(f"cannot copy the read-only vector store {path} to read it: {exc}",
                               hint="set TMPDIR to a folder with room for it") from exc
        try:
            store = cls.open(path=copy / "chroma", collection=collection)
        except BaseException:
            shutil.rmtree(copy, ignore_errors=True)
            raise
        store.where = f"vector store {path} (read from a copy)"
        store._cleanup = weakref.finalize(store, shutil.rmtree, copy, True)
        return store

    def _get_or_create(self) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            collection = self._client.get_or_create_collection(
                self.collection_name,
                embedding_function=None,  # never let Chroma attach (and download) its default model
                configuration={"hnsw": {"space": SPACE}},
            )
        space = ((collection.configuration or {}).get("hnsw") or {}).get("space")
        if space not in (None, SPACE):
            raise CatalogError(
                f"collection {self.collection_name!r} in the {self.where} uses {space} distance, not cosine",
                hint="reset the vector store (it is rebuilt from the manifest) or use another collection name",
            )
        return collection

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Turn store and connection failures into CatalogError."""
        try:
            yield
        except CatalogError:
            raise
        except _chroma_errors() as exc:
            hint = (
                "check that the Chroma server is running"
                if self.where.startswith("Chroma server")
                else (
                    "if the store is damaged, delete it and re-index (vectors are rebuilt from the manifest)"
                )
            )
            if "dimension" in str(exc):
                hint = "the collection holds vectors of another size: reset the vector store and re-embed"
            if is_disk_full(exc):
                raise DiskFull(f"disk full: cannot {action} in the {self.where}", hint=_FULL_HINT,
                               api_hint=_FULL_API_HINT) from exc
            raise CatalogError(f"cannot {action} in the {self.where}: {exc}", hint=hint) from exc

    @property
    def max_batch_size(self) -> int:
        """Return the most records Chroma takes in one call."""
        return self._max_batch

    def upsert(
        self,
        ids: Sequence[str],
        embeddings: Any,
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Insert or overwrite vectors (an (n, d) array or list of lists) and their metadata, in batches."""
        ids = list(ids)
        if len(ids) != len(embeddings) or (metadatas is not None and len(metadatas) != len(ids)):
            raise ValueError("upsert needs as many embeddings (and metadatas) as ids")
        if len(set(ids)) != len(ids):
            raise ValueError("upsert got duplicate ids")
        # None values mean "no such key", as in Chroma.
        metas = [
            {k: v for k, v in (m or {}).items() if v is not None} for m in (metadatas or [None] * len(ids))
        ]
        with self._errors("write vectors"):
            for start in range(0, len(ids), self._max_batch):
                stop = start + self._max_batch
                batch = metas[start:stop]
                self._clear_stale_keys(ids[start:stop], batch)
                # Chroma rejects an empty metadata dict; None means "no metadata".
                payload = [m or None for m in batch]
                self._collection.upsert(
                    ids=ids[start:stop],
                    embeddings=_rows(embeddings[start:stop]),
                    metadatas=None if all(m is None for m in payload) else payload,
                )

    def _clear_stale_keys(self, ids: list[str], metas: list[dict[str, Any]]) -> None:
        """Set keys an entry had before but lacks now to None: Chroma's upsert merges metadata, we replace it."""
        existing = self._collection.get(ids=ids, include=["metadatas"])
        position = {item_id: i for i, item_id in enumerate(ids)}
        for item_id, old in zip(existing["ids"], existing.get("metadatas") or [], strict=False):
            new = metas[position[item_id]]
            for key in (old or {}).keys() - new.keys():
                new[key] = None

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors by id; ids not in the store are ignored."""
        ids = list(ids)
        with self._errors("delete vectors"):
            for start in range(0, len(ids), self._max_batch):
                self._collection.delete(ids=ids[start : start + self._max_batch])

    def query(
        self, embedding: Any, n: int = 10, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Return up to n (id, cosine distance) pairs nearest to one query vector, nearest first."""
        if n <= 0:
            return []
        with self._errors("query vectors"):
            result = self._collection.query(
                query_embeddings=_rows([embedding]),
                n_results=n,
                where=dict(where) if where else None,
                include=["distances"],
            )
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result.get("distances") else []
        return [(i, float(d)) for i, d in zip(ids, distances, strict=True)]

    def similarities(self, embedding: Any, ids: Sequence[str]) -> list[tuple[str, float]]:
        """Return (id, cosine similarity to the query vector) for those of the given ids the store holds.

        Reads the stored vectors and compares them here: a Chroma query restricted to ids costs ~20 ms at
        27k vectors, reading 100 vectors ~3 ms.
        """
        if not ids:
            return []
        with self._errors("read vectors"):
            result = self._collection.get(ids=list(ids), include=["embeddings"])
        if not result["ids"]:
            return []
        stored = np.asarray(result["embeddings"], dtype=np.float32)
        query = np.asarray(embedding, dtype=np.float32)
        norms = np.linalg.norm(stored, axis=1) * (np.linalg.norm(query) or 1.0)
        cosine = stored @ query / np.where(norms > 0, norms, 1.0)
        return [(entry_id, float(value)) for entry_id, value in zip(result["ids"], cosine, strict=True)]

    def embeddings(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Return {id: stored vector} for those of the given ids the store holds."""
        if not ids:
            return {}
        with self._errors("read vectors"):
            result = self._collection.get(ids=list(ids), include=["embeddings"])
        stored = np.asarray(result["embeddings"], dtype=np.float32) if result["ids"] else np.zeros((0, 384))
        return dict(zip(result["ids"], stored, strict=True))

    def card_hashes(self) -> dict[str, str | None]:
        """Return {id: the card hash stored with the vector} for every vector (None where none was stored)."""
        return {entry_id: meta.get("card_hash") for entry_id, meta in self.metadata().items()}

    def ids(self) -> set[str]:
        """Return every id in the collection (read in pages)."""
        return set(self.metadata(with_metadata=False))

    def metadata(
        self, ids: Sequence[str] | None = None, with_metadata: bool = True
    ) -> dict[str, dict[str, Any]]:
        """Return {id: metadata} for the given ids (all when None), read in pages."""
        include = ["metadatas"] if with_metadata else []
        out: dict[str, dict[str, Any]] = {}
        with self._errors("read vectors"):
            if ids is not None:
                ids = list(ids)
                for start in range(0, len(ids), self._max_batch):
                    page = self._collection.get(ids=ids[start : start + self._max_batch], include=include)
                    out.update(_pairs(page, with_metadata))
                return out
            offset = 0
            while True:
                page = self._collection.get(limit=self._max_batch, offset=offset, include=include)
                out.update(_pairs(page, with_metadata))
                if len(page["ids"]) < self._max_batch:
                    return out
                offset += len(page["ids"])

    def count(self) -> int:
        """Return the number of vectors in the collection."""
        with self._errors("count vectors"):
            return int(self._collection.count())

    def reset(self) -> None:
        """Drop the collection and create it empty."""
        import chromadb.errors

        with self._errors("reset the collection"):
            try:
                self._client.delete_collection(self.collection_name)
            except chromadb.errors.NotFoundError:
                pass
            self._collection = self._get_or_create()

    @property
    def embedding_function(self) -> Any:
        """Return the embedding function Chroma holds for the collection (always None here)."""
        return self._collection._embedding_function

    def close(self) -> None:
        """Release the client (for the embedded store: its file handles)."""
        _close_client(self._client)
        self._client = None
        self._collection = None
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_OPEN_LOCK = threading.Lock()
_OPENED: dict[str, tuple[int, int] | None] = {}  # folder -> identity of the database this process opened there


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path / "chroma.sqlite3")
    except OSError:
        return None
    return st.st_dev, st.st_ino


def forget_cached_client(path: Path) -> None:
    """Drop chromadb's in-process client for a folder that was deleted, so a new one starts clean.

    chromadb keeps one System per persist directory for the life of the process; after the folder is
    removed (lost, or cleared by a rebuild) that cached System would keep writing to the deleted database.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    key = str(path)
    system = SharedSystemClient._identifier_to_system.pop(key, None)
    SharedSystemClient._identifier_to_refcount.pop(key, None)
    if system is not None:
        try:
            system.stop()
        except Exception:  # the folder is gone; stopping is best effort
            pass


def _rows(vectors: Any) -> list[list[float]]:
    """Return vectors as lists of floats (Chroma accepts numpy, but lists avoid dtype surprises)."""
    import numpy as np

    return np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1).tolist()


def _pairs(page: Mapping[str, Any], with_metadata: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    metas = page.get("metadatas") if with_metadata else None
    for i, item_id in enumerate(page["ids"]):
        yield item_id, dict((metas[i] if metas else None) or {})


def _close_client(client: Any) -> None:
    if client is None:
        return
    try:
        # The HTTP API objects of an HttpClient (its own and its admin client's), each with an httpx session.
        servers = [getattr(c, "_server", None) for c in (client, getattr(client, "_admin_client", None))]
        client.close()
        # Chroma stops a shared system when its last client closes but leaves the HTTP sessions'
        # keep-alive sockets open; close them once no other client in this process uses that system.
        from chromadb.api.shared_system_client import SharedSystemClient

        if client._identifier not in SharedSystemClient._identifier_to_system:
            for server in servers:
                session = getattr(server, "_session", None)
                if session is not None:
                    session.close()
    except Exception:  # closing a client whose server is gone must not hide the real error
        pass
