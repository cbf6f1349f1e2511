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
