"""The confined profile server after an index's profiling (index/confined_pool.py close_soon, index/profile_server.py):
it winds down while the entries are rendered, yet none outlives the index, and the hashes it was handed still
reach its workers before their first file although its pool now starts before they go in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dslake_index.confined_pool import ConfinedPool
from sandbox_helpers import BWRAP_REASON

from dsstar_lake.lake import Lake

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")),
    "subprocess",
]


def _lake(tmp_path: Path) -> Path:
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    (lake / "notes.md").write_text("# Sales\nUnits sold by region.\n")
    return lake


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_server_outlives_the_index(tmp_path, monkeypatch, backend):
    lake = _lake(tmp_path)
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    closed: list[ConfinedPool] = []
    close_soon = ConfinedPool.close_soon

    def recorded(self: ConfinedPool) -> None:
        closed.append(self)
        close_soon(self)

    monkeypatch.setattr(ConfinedPool, "close_soon", recorded)
    summary = Lake.open(lake).index()
    assert summary.profiled == 2 and summary.failed == 0
    assert closed, "the index closed its server with close_soon"
    for server in closed:
        assert server.process.returncode is not None  # exited and reaped before index() returned
        assert not server.home.exists()  # its HOME removed


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_reuses_the_profile_the_server_was_told_of(tmp_path, monkeypatch, backend):
    lake = _lake(tmp_path)
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    first = Lake.open(lake).index()
    assert first.profiled == 2
    shutil.copy(lake / "sales.csv", lake / "sales copy.csv")
    again = Lake.open(lake).index()
    # The copy's hash was among the known ones the server took in start(): its worker reused the profile.
    assert (again.added, again.profiled, again.reused, again.failed) == (1, 0, 1, 0)
    catalog = Lake.open(lake).catalog
    assert catalog.file_record("sales copy.csv")["hash"] == catalog.file_record("sales.csv")["hash"]


def test_a_file_put_back_reuses_the_profile_no_file_row_holds(tmp_path, monkeypatch):
    lake = _lake(tmp_path)
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "subprocess")
    Lake.open(lake).index()
    data = (lake / "sales.csv").read_bytes()
    (lake / "sales.csv").unlink()
    assert Lake.open(lake).index().removed == 1  # its profile stays, held by no file row (and of no size known)
    (lake / "sales.csv").write_bytes(data)
    back = Lake.open(lake).index()
    assert (back.added, back.profiled, back.reused) == (1, 0, 1)


def test_the_server_is_told_the_hashes_a_file_could_have(tmp_path, monkeypatch):
    from dslake_index.catalog import connect
    from dslake_index.known_hashes import known_hashes
    from dslake_index.profilers.base import PROFILER_VERSION
    from dslake_index.scan import FileStat

    lake = _lake(tmp_path)
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "subprocess")
    Lake.open(lake).index()
    conn = connect(lake / ".dslake" / "manifest.sqlite")
    try:
        rows = {row["path"]: (row["size"], row["hash"]) for row in conn.execute("SELECT path, size, hash FROM files")}
        size, digest = rows["sales.csv"]
        held = {h for _, h in rows.values()}
        orphans = {row[0] for row in conn.execute("SELECT hash FROM profiles")} - held  # no file row holds them
        same_size = {h for n, h in rows.values() if n == size}  # sales.csv's (and notes.md's: 30 bytes too)
        assert digest in same_size
        assert set(known_hashes(conn, [FileStat("new.csv", size, 0)], PROFILER_VERSION)) == same_size | orphans
        assert set(known_hashes(conn, [FileStat("new.csv", size + 1000, 0)], PROFILER_VERSION)) == orphans
        many = [FileStat(f"f{n}.csv", n, 0) for n in range(600)]  # past MAX_SIZES: every current hash
        assert set(known_hashes(conn, many, PROFILER_VERSION)) == held | orphans
    finally:
        conn.close()
