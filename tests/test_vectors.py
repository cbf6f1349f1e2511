"""index.vectors: the Chroma store embedded and as a real `chroma run` server on loopback, no model needed."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from chroma_harness import free_port, start_chroma_server
from dslake_index.vectors import VectorStore, parse_url

from dsstar_lake.base.errors import CatalogError, UsageError

ROOT = Path(__file__).resolve().parent.parent
DIM = 384


def unit_vectors(n: int, seed: int = 0) -> np.ndarray:
    """Return n random 384-d unit vectors (stand-ins for card embeddings)."""
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _is_loopback(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like stay on the machine
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Refuse every socket connect and name lookup that would leave the machine; return the refused ones."""
    refused: list[object] = []
    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def connect(self: socket.socket, address: object) -> None:
        if not _is_loopback(address):
            refused.append(address)
            raise ConnectionRefusedError(f"test guard: no network ({address})")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        if not _is_loopback(address):
            refused.append(address)
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host not in (None, "localhost") and not _is_loopback((host, 0)):
            refused.append(host)
            raise socket.gaierror(f"test guard: no DNS ({host})")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return refused


@pytest.fixture
def store(tmp_path: Path, loopback_only: list[object]) -> Iterator[VectorStore]:
    with VectorStore.open(path=tmp_path / "chroma", collection="test-entries") as opened:
        yield opened


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Run a real `chroma run` on 127.0.0.1 at a free port for this module's tests."""
    server = start_chroma_server(tmp_path_factory.mktemp("chroma-server"), port=0)
    try:
        yield server
    finally:
        server.stop()


def test_upsert_query_delete_ids(store: VectorStore, loopback_only: list[object]) -> None:
    vectors = unit_vectors(20)
    ids = [f"entry-{i}" for i in range(20)]
    store.upsert(ids, vectors, [{"kind": "file", "card_hash": f"h{i}"} if i % 2 else {} for i in range(20)])
    assert store.count() == 20 and store.ids() == set(ids)
    hits = store.query(vectors[7], n=3)
    assert hits[0][0] == "entry-7" and abs(hits[0][1]) < 1e-4
    assert len(hits) == 3 and hits[1][1] >= hits[0][1]
    filtered = store.query(vectors[4], n=5, where={"kind": "file"})  # even ids carry no metadata
    assert len(filtered) == 5 and all(int(i.split("-")[1]) % 2 for i, _ in filtered)
    assert store.metadata(["entry-1", "entry-2"]) == {
        "entry-1": {"kind": "file", "card_hash": "h1"},
        "entry-2": {},
    }

    store.upsert(["entry-7"], vectors[8:9], [{"card_hash": "new"}])  # overwrite, not add
    assert store.count() == 20 and {i for i, _ in store.query(vectors[8], n=2)} == {"entry-7", "entry-8"}
    assert store.metadata(["entry-7"])["entry-7"] == {"card_hash": "new"}

    store.delete(["entry-0", "entry-1", "not-there"])
    assert store.ids() == set(ids) - {"entry-0", "entry-1"}
    assert store.query(vectors[0], n=100)[0][0] != "entry-0" and len(store.query(vectors[0], n=100)) == 18
    assert loopback_only == []


def test_empty_store_and_bad_input(store: VectorStore) -> None:
    assert store.count() == 0 and store.ids() == set() and store.query(unit_vectors(1)[0], n=5) == []
    with pytest.raises(ValueError):
        store.upsert(["a", "a"], unit_vectors(2))
    with pytest.raises(ValueError):
        store.upsert(["a"], unit_vectors(2))
    store.upsert(["a"], unit_vectors(1))  # the first vector fixes the collection's dimension
    with pytest.raises(CatalogError, match="dimension"):
        store.upsert(["a"], np.ones((1, 10), dtype=np.float32))


def test_no_default_embedding_function(
    store: VectorStore, tmp_path: Path, loopback_only: list[object]
) -> None:
    assert store.embedding_function is None
    assert store._collection.configuration.get("embedding_function") is None
    assert store._collection.configuration["hnsw"]["space"] == "cosine"
    # Without an embedding function Chroma refuses text at once instead of fetching a model.
    with pytest.raises(ValueError, match="embedding function"):
        store._collection.query(query_texts=["ozone"], n_results=1)
    store.close()
    # Reopened by id, still without one; and a query by vector works with the network refused.
    with VectorStore.open(path=tmp_path / "chroma", collection="test-entries") as again:
        again.upsert(["x"], unit_vectors(1))
        assert again.embedding_function is None and again.query(unit_vectors(1)[0], n=1)[0][0] == "x"
    assert loopback_only == []


def test_larger_than_one_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import chromadb.api.client

    monkeypatch.setattr(chromadb.api.client.Client, "get_max_batch_size", lambda self: 7)
    with VectorStore.open(path=tmp_path / "chroma", collection="batches") as store:
        assert store.max_batch_size == 7
        sizes: list[int] = []
        real_upsert, real_delete = store._collection.upsert, store._collection.delete

        def upsert(**kwargs: object) -> None:
            sizes.append(len(kwargs["ids"]))  # type: ignore[arg-type]
            real_upsert(**kwargs)

        def delete(**kwargs: object) -> None:
            sizes.append(-len(kwargs["ids"]))  # type: ignore[arg-type]
            real_delete(**kwargs)

        monkeypatch.setattr(store._collection, "upsert", upsert)
        monkeypatch.setattr(store._collection, "delete", delete)
        ids = [f"e{i:03d}" for i in range(50)]
        store.upsert(ids, unit_vectors(50), [{"n": i} for i in range(50)])
        assert sizes == [7] * 7 + [1]
        assert store.count() == 50 and store.ids() == set(ids)  # ids() read in pages of 7
        assert store.metadata()["e049"] == {"n": 49}
        sizes.clear()
        store.delete(ids[:20])
        assert sizes == [-7, -7, -6] and store.count() == 30


def test_reopen_in_a_new_process_keeps_data(tmp_path: Path) -> None:
    vectors = unit_vectors(12, seed=3)
    with VectorStore.open(path=tmp_path / "chroma", collection="persist") as store:
        store.upsert([f"id{i}" for i in range(12)], vectors, [{"i": i} for i in range(12)])
        store.delete(["id11"])
    np.save(tmp_path / "q.npy", vectors[5])
    code = f"""
        import numpy as np
        from pathlib import Path
        from dslake_index.vectors import VectorStore
        with VectorStore.open(path=Path({str(tmp_path / "chroma")!r}), collection="persist") as s:
            print(s.count(), s.query(np.load({str(tmp_path / "q.npy")!r}), n=1)[0][0], "id11" in s.ids(),
                  s.embedding_function)
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["11", "id5", "False", "None"]


def test_reset_drops_everything(store: VectorStore) -> None:
    store.upsert(["a", "b"], unit_vectors(2))
    store.reset()
    assert store.count() == 0 and store.embedding_function is None
    store.upsert(["c"], unit_vectors(1))
    assert store.ids() == {"c"}


def test_unusable_folders_are_catalog_errors(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(CatalogError) as caught:
        VectorStore.open(path=not_a_folder)
    assert caught.value.hint
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "chroma.sqlite3").write_bytes(os.urandom(8192))
    with pytest.raises(CatalogError, match="vector store"):
        VectorStore.open(path=corrupt)


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        VectorStore.open()
    with pytest.raises(UsageError):
        VectorStore.open(path=tmp_path, url="http://127.0.0.1:8000")
    for url in ("127.0.0.1:8000", "ftp://h:1", "http://h:99999", "http://h:1/x"):
        with pytest.raises(UsageError):
            parse_url(url)
    assert parse_url("http://chroma.internal") == ("chroma.internal", 8000, False)
    assert parse_url("https://h:9") == ("h", 9, True)


def test_unreachable_server_is_a_catalog_error(loopback_only: list[object]) -> None:
    port = free_port()
    with pytest.raises(CatalogError, match="cannot reach") as caught:
        VectorStore.open(url=f"http://127.0.0.1:{port}")
    assert "chroma run" in (caught.value.hint or "")


def test_server_mode_end_to_end(chroma_server, tmp_path: Path, loopback_only: list[object]) -> None:
    vectors = unit_vectors(30, seed=9)
    ids = [f"card-{i}" for i in range(30)]
    with VectorStore.open(url=chroma_server.url, collection="shared-entries") as store:
        assert store.embedding_function is None
        store.upsert(ids, vectors, [{"kind": "family" if i < 3 else "file"} for i in range(30)])
        assert store.count() == 30 and store.ids() == set(ids)
        assert store.query(vectors[4], n=1)[0][0] == "card-4"
        assert {i for i, _ in store.query(vectors[0], n=10, where={"kind": "family"})} == {
            "card-0",
            "card-1",
            "card-2",
        }
        store.delete(ids[:10])
        assert store.ids() == set(ids[10:])
    # A second client (another user of the shared store) sees the same data.
    with VectorStore.open(url=chroma_server.url, collection="shared-entries") as other:
        assert other.count() == 20 and other.query(vectors[25], n=1)[0][0] == "card-25"
    assert loopback_only == []


def test_server_stop_is_clean_and_errors_after(tmp_path: Path) -> None:
    server = start_chroma_server(tmp_path / "data", port=0)
    store = VectorStore.open(url=server.url, collection="short-lived")
    store.upsert(["a"], unit_vectors(1))
    assert server.stop() == 0
    with pytest.raises(CatalogError, match="Chroma server"):
        store.count()
    store.close()
    # The folder the server wrote opens as an embedded store.
    with VectorStore.open(path=tmp_path / "data", collection="short-lived") as local:
        assert local.ids() == {"a"}


def test_server_that_cannot_start_is_a_catalog_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(CatalogError, match="chroma"):
            start_chroma_server(tmp_path / "data", port=port, timeout=20)


def test_upsert_replaces_metadata(store: VectorStore) -> None:
    store.upsert(["a", "b"], unit_vectors(2), [{"kind": "file", "path": "x.csv"}, {"kind": "family"}])
    store.upsert(["a", "b"], unit_vectors(2), [{"kind": "family"}, None])
    assert store.metadata() == {"a": {"kind": "family"}, "b": {}}
    assert [i for i, _ in store.query(unit_vectors(1)[0], n=5, where={"kind": "family"})] == ["a"]
