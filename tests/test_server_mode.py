"""Server mode end to end: index into a real `chroma run` on loopback, search it from a second catalog folder that
holds only the settings (another machine), re-index after changes, stop it; batches never exceed Chroma's limit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from chroma_harness import start_chroma_server
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index.families import file_entry_id
from dslake_index.vectors import VectorStore

from dsstar_lake.base.errors import CatalogError
from dsstar_lake.lake import Lake


def manifest_entries(lake: Lake) -> dict[str, dict]:
    """Return the indexer's entries by id."""
    return {row["id"]: dict(row) for row in lake.connection().execute("SELECT * FROM entries")}


def test_index_into_a_server_and_search_it_from_another_machine(table_lake: Path, tmp_path: Path) -> None:
    server = start_chroma_server(tmp_path / "chroma-data", port=0)
    try:
        settings = {"catalog.chroma_url": server.url, "catalog.collection": "team-lake"}
        indexer = Lake.open(table_lake, catalog=tmp_path / "A", overrides=settings)
        first = indexer.index()
        entries = manifest_entries(indexer)
        assert first.failed == 0 and first.embedded == first.entries == len(entries) >= 4
        assert not (tmp_path / "A" / "chroma").exists()  # the vectors went to the server only
        with VectorStore.open(url=server.url, collection="team-lake") as shared:
            assert shared.ids() == set(entries)  # the server's ids are the manifest's entry ids

        # Another machine: a catalog folder with nothing but the settings the indexer persisted.
        other = tmp_path / "B"
        other.mkdir()
        shutil.copy(tmp_path / "A" / "config.toml", other / "config.toml")
        remote = Lake.open(catalog=other)
        assert remote.chroma_url() == server.url and remote.settings["catalog.collection"] == "team-lake"
        family = next(row for row in entries.values() if row["kind"] == "family")
        top = remote.search(family["card"], k=3)[0]
        assert top.entry_id == family["id"] and top.dense > 0.99
        assert (top.kind, top.path, top.format, top.member_count) == (
            "family", family["path"], family["format"], family["member_count"])
        assert top.card_line == family["card"].splitlines()[0] and top.description == family["card"]
        assert indexer.search(family["card"], k=1)[0].entry_id == family["id"]  # the indexer's hybrid agrees

        result = CliRunner().invoke(cli, ["search", "ozone unhealthy days by county", "--catalog", str(other),
                                          "--json", "-k", "3"])
        assert result.exit_code == 0, result.output
        assert "ozone_by_county.csv" in [hit["path"] for hit in json.loads(result.stdout)["hits"]]
        assert list(other.iterdir()) == [other / "config.toml"]  # searching wrote nothing there

        # A change on the indexer's side reaches the other machine through the server.
        (table_lake / "glacier_melt.csv").write_text("glacier,year,melt_mm\nrhone,2023,1200\naletsch,2023,1500\n")
        (table_lake / "notes.md").unlink()
        second = indexer.index()
        assert (second.added, second.removed, second.embedded) == (1, 1, 1)
        entries = manifest_entries(indexer)
        assert file_entry_id("glacier_melt.csv") in entries and file_entry_id("notes.md") not in entries
        with VectorStore.open(url=server.url, collection="team-lake") as shared:
            assert shared.ids() == set(entries)
        assert remote.search("glacier melt in millimetres per year", k=3)[0].path == "glacier_melt.csv"
        assert "notes.md" not in [hit.path for hit in remote.search("field notes maintenance log", k=10)]
        indexer.close()
    finally:
        code = server.stop()
    assert code == 0
    with pytest.raises(CatalogError, match="Chroma server"):
        remote.search("glacier", k=1)


def add_one_off_tables(root: Path, n: int) -> None:
    """Add n single-file tables whose schemas all differ (each one its own entry)."""
    for i, name in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"][:n]):
        columns = ",".join(f"{name}_{c}" for c in ["site", "count", "level"][: 1 + i % 3]) + f",{name}_extra"
        (root / f"{name}_survey.csv").write_text(columns + "\n" + ",".join(["1"] * (columns.count(",") + 1)) + "\n")


def test_a_collection_larger_than_one_chroma_batch(table_lake: Path, tmp_path: Path, monkeypatch) -> None:
    from chromadb.api.fastapi import FastAPI

    calls: list[tuple[str, int]] = []
    real_upsert, real_delete = FastAPI._upsert, FastAPI._delete

    def upsert(self, **kwargs):
        calls.append(("upsert", len(kwargs["ids"])))
        return real_upsert(self, **kwargs)

    def delete(self, **kwargs):
        calls.append(("delete", len(kwargs["ids"] or [])))
        return real_delete(self, **kwargs)

    # The server says it takes 3 records per call; chromadb's own client check rejects more than that.
    monkeypatch.setattr(FastAPI, "get_max_batch_size", lambda self: 3)
    monkeypatch.setattr(FastAPI, "_upsert", upsert)
    monkeypatch.setattr(FastAPI, "_delete", delete)
    monkeypatch.setattr("dslake_index.sync.EMBED_BATCH", 4)  # several embedding batches as well
    add_one_off_tables(table_lake, 8)
    with start_chroma_server(tmp_path / "chroma-data", port=0) as server:
        import chromadb

        lake = Lake.open(table_lake, catalog=tmp_path / "A",
                         overrides={"catalog.chroma_url": server.url, "index.jobs": 1})
        summary = lake.index()
        entries = manifest_entries(lake)
        assert summary.embedded == len(entries) >= 12
        upserts = [n for kind, n in calls if kind == "upsert"]
        assert max(upserts) == 3 and sum(upserts) == len(entries) and len(upserts) >= 4
        with VectorStore.open(url=server.url, collection=lake.settings["catalog.collection"]) as shared:
            assert shared.ids() == set(entries)
            assert shared.metadata([file_entry_id("sales.csv")])[file_entry_id("sales.csv")]["path"] == "sales.csv"
        assert lake.status(check_vectors=True).problems == []

        # The limit is real: one call with 4 records is refused by chromadb itself.
        from chromadb.config import Settings

        client = chromadb.HttpClient(host=server.host, port=server.port, settings=Settings(anonymized_telemetry=False))
        collection = client.get_collection(lake.settings["catalog.collection"], embedding_function=None)
        with pytest.raises(ValueError, match="batch size"):
            collection.upsert(ids=list("wxyz"), embeddings=np.ones((4, 384), dtype=np.float32).tolist())

        # Removing seven entries deletes their vectors in batches of at most 3 as well.
        calls.clear()
        for name in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]:
            (table_lake / f"{name}_survey.csv").unlink()
        again = lake.index()
        assert again.removed == 7 and again.embedded == 0
        deletes = [n for kind, n in calls if kind == "delete"]
        assert max(deletes) == 3 and sum(deletes) == 7
        with VectorStore.open(url=server.url, collection=lake.settings["catalog.collection"]) as shared:
            assert shared.ids() == set(manifest_entries(lake))
        lake.close()
