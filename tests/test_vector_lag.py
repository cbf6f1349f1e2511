"""A small re-index embeds into the manifest alone; the store's next reader writes the lag first (index/vector_lag.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index.vector_lag import UNSTORED, lag, write_lock
from dslake_index.vectors import VectorStore

from dsstar_lake.lake import Lake

GLACIER = "glacier,year,melt_mm\nrhone,2023,1200\naletsch,2023,1500\n"
GLACIER_QUESTION = "glacier melt in millimetres"


@pytest.fixture
def count_opens(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Record every open of the vector store."""
    opened: list[object] = []
    real_open = VectorStore.open.__func__

    def counting_open(cls, *args, **kwargs):
        opened.append(kwargs.get("path") or kwargs.get("url"))
        return real_open(cls, *args, **kwargs)

    monkeypatch.setattr(VectorStore, "open", classmethod(counting_open))
    return opened


def states(lake: Lake) -> dict[str, str]:
    return dict(lake.connection().execute("SELECT entry_id, state FROM vectors").fetchall())


def stored_cards(lake: Lake) -> dict[str, str | None]:
    """The store's card hashes, read without bringing it in step."""
    with VectorStore.open(path=lake.catalog.catalog_dir / "chroma", collection=lake.settings["catalog.collection"]) as s:
        return s.card_hashes()


def entry_id(lake: Lake, path: str) -> str:
    return lake.connection().execute("SELECT id FROM entries WHERE path = ?", (path,)).fetchone()[0]


def manifest_cards(lake: Lake) -> dict[str, str]:
    return dict(lake.connection().execute("SELECT id, card_hash FROM entries").fetchall())


def test_a_small_change_leaves_the_store_lagging_and_its_first_reader_brings_it_in_step(
        table_lake: Path, count_opens: list[object]) -> None:
    first = Lake.open(table_lake)
    first.index()  # the first index writes the store
    note = entry_id(first, "notes.md")
    first.close()
    assert count_opens
    count_opens.clear()
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    (table_lake / "notes.md").unlink()
    lake = Lake.open(table_lake)
    summary = lake.index()
    assert (summary.added, summary.removed, summary.embedded) == (1, 1, 1)
    assert count_opens == []  # neither opened nor imported for one card
    glacier = entry_id(lake, "glacier_melt.csv")
    assert states(lake)[glacier] == UNSTORED
    assert lag(lake.connection()) == 2  # the new card, and the removed note's vector the store still holds
    assert glacier not in stored_cards(lake) and note in stored_cards(lake)
    count_opens.clear()  # the test's own reads
    # What the manifest knows is what a search and the status say: nothing is missing, nothing drifted.
    hit = lake.search(GLACIER_QUESTION, k=1)[0]
    assert hit.entry_id == glacier and hit.dense is not None
    assert count_opens == []  # the search read the manifest's vectors
    assert lake.status().problems == []

    # The first reader of the store writes the lag, from the manifest's vectors, before it reads.
    store = lake.vector_store()
    assert store.card_hashes() == manifest_cards(lake)
    assert set(states(lake).values()) == {"ok"} and lag(lake.connection()) == 0
    vector = lake.embedder().encode([GLACIER_QUESTION])[0]
    assert store.query(vector, 1)[0][0] == glacier
    assert lake.status(check_vectors=True).problems == []
    lake.close()
    again = Lake.open(table_lake).index()  # the store it finds is the one its stamp says: no drift to repair
    assert (again.embedded, again.vectors_repaired, again.unchanged) == (0, 0, 8)


def test_a_search_the_manifest_cannot_answer_reads_the_store_in_step(
        table_lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Lake.open(table_lake).index()
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    lake = Lake.open(table_lake)
    lake.index()
    local = lake.search(GLACIER_QUESTION, k=3)
    lake.close()
    # Too many entries for the manifest's copies: the retriever asks the store, which must not answer from
    # before the change.
    monkeypatch.setattr("dslake_index.local_vectors.MAX_ENTRIES", 0)
    reader = Lake.open(table_lake)
    from_store = reader.search(GLACIER_QUESTION, k=3)
    assert [h.entry_id for h in from_store] == [h.entry_id for h in local]
    assert from_store[0].dense == pytest.approx(local[0].dense, abs=1e-5)
    assert lag(reader.connection()) == 0


def test_a_reader_leaves_the_store_to_the_index_that_writes_it(table_lake: Path) -> None:
    Lake.open(table_lake).index()
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    lake = Lake.open(table_lake)
    lake.index()
    glacier = entry_id(lake, "glacier_melt.csv")
    vector = lake.embedder().encode([GLACIER_QUESTION])[0]
    with write_lock(lake.catalog.catalog_dir, wait=False) as held:
        assert held
        # An index holds the lock: it writes the store, the reader writes nothing and reads the lagging card's
        # vector from the manifest, never the store's old answer.
        seen = lake.vector_store()
        assert lag(lake.connection()) == 1 and glacier not in stored_cards(lake)
        assert seen.query(vector, 1)[0][0] == glacier
        assert seen.card_hashes() == manifest_cards(lake)
        local = lake.search(GLACIER_QUESTION, k=1)[0]
        assert seen.query(vector, 1)[0][1] == pytest.approx(1.0 - local.dense, abs=1e-3)  # hits round to 4 places
    lake.vector_store()
    assert lag(lake.connection()) == 0 and entry_id(lake, "glacier_melt.csv") in stored_cards(lake)


def test_past_the_limit_the_index_writes_the_store_itself(
        table_lake: Path, monkeypatch: pytest.MonkeyPatch, count_opens: list[object]) -> None:
    Lake.open(table_lake).index()
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    lake = Lake.open(table_lake)
    lake.index()
    assert lag(lake.connection()) == 1
    count_opens.clear()
    monkeypatch.setattr("dslake_index.vector_lag.LAG_LIMIT", 1)
    (table_lake / "sales.csv").write_text("region,product,units,price\nwest,widget,3,2.5\n")
    summary = lake.index()
    assert summary.embedded == 1 and count_opens  # the lag and the new card together pass the limit
    assert lag(lake.connection()) == 0 and stored_cards(lake) == manifest_cards(lake)


def test_a_no_change_index_stays_quick_after_a_reader_wrote_the_lag(table_lake: Path) -> None:
    assert CliRunner().invoke(cli, ["index", str(table_lake)]).exit_code == 0
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    assert CliRunner().invoke(cli, ["index", str(table_lake)]).exit_code == 0
    lake = Lake.open(table_lake)
    lake.vector_store()
    assert lag(lake.connection()) == 0
    lake.close()
    dslake = Path(sys.executable).with_name("dslake")
    done = subprocess.run([str(dslake), "index", str(table_lake)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "dslake_index.indexer" not in done.stderr  # answered by the quick path, not the pipeline


def test_a_read_only_catalog_reads_its_copy_in_step(table_lake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Lake.open(table_lake).index()
    (table_lake / "glacier_melt.csv").write_text(GLACIER)
    Lake.open(table_lake).index()
    catalog = table_lake / ".dslake"
    manifest = (catalog / "manifest.sqlite").read_bytes()
    monkeypatch.setattr("dslake_index.catalog.writable", lambda folder: False)  # as a user without write access
    reader = Lake.open(table_lake)
    store = reader.vector_store()
    # its private copy is brought in step; the manifest and the catalog's own store are left as they are
    assert entry_id(reader, "glacier_melt.csv") in store.card_hashes() and lag(reader.connection()) == 1
    reader.close()
    assert (catalog / "manifest.sqlite").read_bytes() == manifest
    assert entry_id(Lake.open(table_lake), "glacier_melt.csv") not in stored_cards(Lake.open(table_lake))
