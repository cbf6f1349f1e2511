"""Catalog faults: a vector store that drifted from the manifest, a read-only catalog, a full disk."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from chroma_harness import start_chroma_server
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index import catalog as catalog_db
from dslake_index.vectors import VectorStore

from dsstar_lake.base.errors import DiskFull, is_disk_full
from dsstar_lake.lake import Lake

REPO = Path(__file__).resolve().parent.parent
QUESTION = "unhealthy ozone days by county"


def profile_rows(lake: Lake) -> list[tuple]:
    return sorted(tuple(r) for r in lake.connection().execute("SELECT hash, created_at FROM profiles"))


def indexed(root: Path) -> Lake:
    lake = Lake.open(root)
    lake.index()
    return lake


# ---- a vector store out of sync with the manifest ---------------------------------------------------------------


def test_deleted_vector_folder_is_re_embedded_by_a_plain_index_without_profiling(table_lake: Path) -> None:
    lake = indexed(table_lake)
    top = lake.search(QUESTION, k=3)[0]
    profiles = profile_rows(lake)
    lake.close()
    shutil.rmtree(table_lake / ".dslake" / "chroma")
    # A search before the next index still ranks by meaning: it reads the manifest's copies of the vectors
    # (index/local_vectors.py), not the store.
    blind = Lake.open(table_lake)
    assert blind.search(QUESTION, k=3)[0].dense == pytest.approx(top.dense, abs=1e-5)
    blind.close()
    status = CliRunner().invoke(cli, ["status", str(table_lake), "--check", "--json"])
    problems = json.loads(status.stdout)["problems"]
    assert any("missing" in p and "plain `dslake index LAKE`" in p for p in problems), problems

    result = CliRunner().invoke(cli, ["index", str(table_lake)])
    assert result.exit_code == 0, result.output
    assert "profiled 0" in result.stdout and "embedded 4" in result.stdout
    assert "note: the vector store had drifted from the manifest (4 missing, 0 with an old card, 0 extra)" in (
        result.stdout)
    again = Lake.open(table_lake)
    after = again.search(QUESTION, k=3)[0]
    assert (after.entry_id, after.dense) == (top.entry_id, top.dense) and after.dense is not None
    assert profile_rows(again) == profiles  # nothing profiled again
    assert again.status(check_vectors=True).problems == []


def test_vectors_changed_behind_the_manifests_back_are_repaired(table_lake: Path) -> None:
    lake = indexed(table_lake)
    cards = {row["id"]: row["card"] for row in lake.connection().execute("SELECT id, card FROM entries")}
    gone, overwritten = sorted(cards)[:2]
    with VectorStore.open(path=table_lake / ".dslake" / "chroma", collection=lake.settings["catalog.collection"]) as s:
        s.delete([gone])
        s.upsert([overwritten, "ghost.csv"], np.eye(2, 384, dtype=np.float32), [{"card_hash": "old"}, None])
    assert Lake.open(table_lake).status(check_vectors=True).problems == [
        "vector store out of sync with the manifest: 1 missing, 1 with an old card, 1 extra; a plain "
        "`dslake index LAKE` re-embeds them from the manifest's cards (nothing is profiled again)"]

    summary = Lake.open(table_lake).index()
    assert (summary.vectors_repaired, summary.embedded, summary.profiled) == (3, 2, 0)
    assert summary.notes and "1 missing, 1 with an old card, 1 extra" in summary.notes[0]
    fixed = Lake.open(table_lake)
    store = fixed.vector_store()
    assert store.ids() == set(cards)
    vector = fixed.embedder().encode([cards[overwritten]])[0]
    assert store.query(vector, n=1)[0][0] == overwritten  # its card's embedding again, not the planted one
    assert fixed.status(check_vectors=True).problems == []


def test_a_no_change_index_after_a_search_does_not_open_the_vector_store(table_lake: Path, monkeypatch) -> None:
    lake = indexed(table_lake)
    lake.search(QUESTION, k=2)  # opening Chroma writes to its folder: that alone must not look like drift
    lake.close()
    opened: list[object] = []
    real_open = VectorStore.open.__func__

    def counting_open(cls, *args, **kwargs):
        opened.append(args or kwargs)
        return real_open(cls, *args, **kwargs)

    monkeypatch.setattr(VectorStore, "open", classmethod(counting_open))
    summary = Lake.open(table_lake).index()
    assert (summary.unchanged, summary.embedded, summary.vectors_repaired) == (8, 0, 0)
    assert opened == []  # chromadb is not even imported for the check


def test_server_collection_emptied_behind_the_manifest_is_re_embedded(table_lake: Path, tmp_path: Path) -> None:
    with start_chroma_server(tmp_path / "chroma-data", port=0) as server:
        settings = {"catalog.chroma_url": server.url, "catalog.collection": "drift-test"}
        first = Lake.open(table_lake, catalog=tmp_path / "A", overrides=settings).index()
        with VectorStore.open(url=server.url, collection="drift-test") as shared:
            shared.reset()
        summary = Lake.open(table_lake, catalog=tmp_path / "A", overrides=settings).index()
        assert (summary.vectors_repaired, summary.embedded, summary.profiled) == (first.entries, first.entries, 0)
        assert Lake.open(table_lake, catalog=tmp_path / "A", overrides=settings).status(
            check_vectors=True).problems == []


# ---- a read-only catalog ------------------------------------------------------------------------------------------


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Return every file under folder with its content hash and mtime."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def set_writable(folder: Path, writable: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_search_and_status_work_from_a_read_only_catalog(table_lake: Path, monkeypatch) -> None:
    indexed(table_lake).close()
    catalog = table_lake / ".dslake"
    before = fingerprint(catalog)
    set_writable(catalog, False)
    try:
        if os.access(catalog, os.W_OK):
            # root writes through file modes: have dslake see the folder as an ordinary user would, and check
            # below that it wrote nothing although it could have.
            monkeypatch.setattr("dslake_index.catalog.writable", lambda folder: False)
        runner = CliRunner()
        search = runner.invoke(cli, ["search", QUESTION, "--lake", str(table_lake), "--json", "-k", "3"])
        assert search.exit_code == 0, search.output
        hits = json.loads(search.stdout)["hits"]
        assert hits[0]["path"] == "ozone_by_county.csv" and hits[0]["dense"] is not None  # Chroma was read
        status = runner.invoke(cli, ["status", str(table_lake), "--check", "--json"])
        assert status.exit_code == 0, status.output
        assert json.loads(status.stdout)["problems"] == [] and json.loads(status.stdout)["entries"] == 4
        index = runner.invoke(cli, ["index", str(table_lake)])
        assert index.exit_code == 3 and "read-only" in index.stderr and "Traceback" not in index.output
    finally:
        set_writable(catalog, True)
    assert fingerprint(catalog) == before


def test_read_only_connection_sees_what_a_running_writer_committed(table_lake: Path) -> None:
    writer = indexed(table_lake)
    conn = writer.connection()
    conn.execute("PRAGMA wal_autocheckpoint = 0")  # the commit stays in the -wal while the writer is open
    with catalog_db.transaction(conn):
        catalog_db.set_meta(conn, "probe", "fresh")
    assert (table_lake / ".dslake" / "manifest.sqlite-wal").stat().st_size > 0
    reader = Lake.open(table_lake, readonly=True)
    assert reader.readonly and catalog_db.get_meta(reader.connection(), "probe") == "fresh"
    assert reader.search(QUESTION, k=1)[0].path == "ozone_by_county.csv"
    writer.close()


def _bwrap_works() -> bool:
    if not shutil.which("bwrap"):
        return False
    probe = subprocess.run(["bwrap", "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _bwrap_works(), reason="needs bubblewrap to mount the catalog read-only")
def test_catalog_on_a_read_only_mount(table_lake: Path) -> None:
    indexed(table_lake).close()
    catalog = table_lake / ".dslake"
    before = fingerprint(catalog)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        # A real read-only mount: writes fail with EROFS even for root.
        command = ["bwrap", "--bind", "/", "/", "--ro-bind", str(catalog), str(catalog), "--dev", "/dev",
                   "--proc", "/proc", sys.executable, str(REPO / "cli.py"), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)

    search = run("search", QUESTION, "--lake", str(table_lake), "--json", "-k", "3")
    assert search.returncode == 0, search.stderr
    hits = json.loads(search.stdout)["hits"]
    assert hits[0]["path"] == "ozone_by_county.csv" and hits[0]["dense"] is not None
    for check in ("--check", "--json"):
        status = run("status", str(table_lake), check, "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["problems"] == []
    index = run("index", str(table_lake))
    assert index.returncode == 3 and "read-only" in index.stderr and "Traceback" not in index.stderr
    assert fingerprint(catalog) == before


# ---- a full disk ----------------------------------------------------------------------------------------------------


def test_full_disk_during_index_says_so_and_loses_nothing(table_lake: Path, monkeypatch) -> None:
    lake = indexed(table_lake)
    rows = "SELECT path, hash, status, entry_id FROM files WHERE path NOT LIKE 'more/%' ORDER BY path"
    files_before = lake.connection().execute(rows).fetchall()
    lake.close()
    extra = table_lake / "more"
    extra.mkdir()
    for i in range(40):
        (extra / f"survey_{i}_{'x' * 40}.csv").write_text(f"site_{i},count_{i}\n" + "a,1\n" * 200)
    real_connect = catalog_db.connect

    def nearly_full(db_path: Path, readonly: bool = False) -> sqlite3.Connection:
        # SQLite's own limit on the database's size: past it, writes fail with SQLITE_FULL exactly as on a full
        # disk, and SQLite rolls the transaction back itself.
        conn = real_connect(db_path, readonly)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(catalog_db, "connect", nearly_full)
    result = CliRunner().invoke(cli, ["index", str(table_lake), "--jobs", "1"])
    assert result.exit_code == 3, result.output
    assert "disk full" in result.stderr and result.stderr.count("error:") == 1
    assert "damaged" not in result.stderr and "Traceback" not in result.output

    monkeypatch.setattr(catalog_db, "connect", real_connect)  # space freed
    after = Lake.open(table_lake)
    assert [tuple(r) for r in after.connection().execute(rows)] == [tuple(r) for r in files_before]
    assert after.connection().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    summary = after.index()  # continues: whatever a rolled-back batch held is simply indexed now
    assert summary.added >= 1 and summary.failed == 0
    assert after.connection().execute("SELECT count(*) FROM files WHERE path LIKE 'more/%' AND status = 'ok'"
                                      ).fetchone()[0] == 40
    assert after.status(check_vectors=True).problems == []


def test_full_disk_while_writing_vectors_keeps_them_pending(table_lake: Path, monkeypatch) -> None:
    import chromadb.errors

    indexed(table_lake).close()
    (table_lake / "glacier_melt.csv").write_text("glacier,year,melt_mm\nrhone,2023,1200\n")

    def full(self, *args, **kwargs):
        # What Chroma's Rust core raises when its SQLite file cannot grow.
        raise chromadb.errors.InternalError("error returned from database: (code: 13) database or disk is full")

    real = VectorStore._clear_stale_keys
    monkeypatch.setattr(VectorStore, "_clear_stale_keys", full)
    monkeypatch.setattr("dslake_index.vector_lag.LAG_LIMIT", 0)  # the index writes the store itself
    with pytest.raises(DiskFull, match="disk full"):
        Lake.open(table_lake).index()
    monkeypatch.setattr(VectorStore, "_clear_stale_keys", real)
    summary = Lake.open(table_lake).index()
    assert summary.embedded == 1 and summary.profiled == 0  # the pending vector, from the stored profile
    assert Lake.open(table_lake).status(check_vectors=True).problems == []


def test_transaction_keeps_sqlites_own_error_when_it_rolled_back(tmp_path: Path) -> None:
    conn = catalog_db.connect(tmp_path / "m.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(sqlite3.OperationalError, match="full") as caught:
        with catalog_db.transaction(conn):
            conn.executemany("INSERT INTO t VALUES (?)", [("x" * 4000,)] * 10)
    assert is_disk_full(caught.value) and not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_is_disk_full_reads_os_sqlite_and_chroma_errors() -> None:
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    try:
        try:
            raise OSError(errno.EDQUOT, "Disk quota exceeded")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)
    assert is_disk_full(Exception("error returned from database: (code: 13) database or disk is full"))
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(sqlite3.DatabaseError("database disk image is malformed"))


def test_search_reads_the_manifests_vectors_only_when_every_card_has_its_own(table_lake: Path) -> None:
    from dslake_index.local_vectors import ManifestVectors

    lake = indexed(table_lake)
    conn = lake.connection()
    embedder = lake.embedder()
    local = ManifestVectors.load(conn, embedder.model_id)
    assert local is not None and len(local.ids) == 4
    query = embedder.encode([QUESTION])[0]
    store = lake.vector_store()
    # the same ranking as Chroma's, with the same distances
    assert [i for i, _ in local.query(query, 3)] == [i for i, _ in store.query(query, 3)]
    assert local.query(query, 3)[0][1] == pytest.approx(store.query(query, 3)[0][1], abs=1e-5)
    assert ManifestVectors.load(conn, "another-model") is None
    with catalog_db.transaction(conn):
        conn.execute("UPDATE vectors SET state = 'pending' WHERE entry_id = ?", (local.ids[0],))
    assert not local.current(conn)  # a search reloads, and then falls back to the store
    assert ManifestVectors.load(conn, embedder.model_id) is None
