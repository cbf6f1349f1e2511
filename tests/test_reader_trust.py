"""Readers choose nothing from the data (issue 40 §1): a lake's tables and datasets decide no code, no FileIO and no
file outside themselves, in `dslake index`, `lake.load`, the serve preview and the hint checker.

Each lake here is an attacker's: an Iceberg table whose metadata names a FileIO class, a version hint and a metadata
file that lead to another table on the host, links inside a Hive dataset and a folder of parts to host files and
folders, and a Delta table whose log names a linked, an absolute or a `../` data file. The host's rows carry values
no lake holds, so any that come back are seen.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from table_lakes import name_file_io, write_hive, write_iceberg, write_parts

from dsstar_lake.base.errors import LoadError
from dsstar_lake.lake import Lake

HOST_IDS = [424242, 999999]  # values only the host's data holds


def _description(root: Path, path: str) -> str:
    with sqlite3.connect(root / ".dslake" / "manifest.sqlite") as conn:
        return conn.execute("SELECT description FROM entries WHERE path = ?", (path,)).fetchone()[0]


def _host_iceberg(folder: Path) -> Path:
    """An Iceberg table on the host, outside the lake, holding HOST_IDS; return its folder."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    folder.mkdir(parents=True)
    catalog = SqlCatalog("host", uri=f"sqlite:///{folder}/catalog.db", warehouse=f"file://{folder}")
    catalog.create_namespace("ns")
    data = pa.table({"id": pa.array(HOST_IDS, pa.int64())})
    catalog.create_table("ns.secret", schema=data.schema).append(data)
    return folder / "ns" / "secret"


def _newest_metadata(table: Path) -> Path:
    return max((table / "metadata").glob("*.metadata.json"), key=lambda p: p.name)


# ---- Iceberg metadata picks the code (critical) ----

def test_iceberg_metadata_names_no_file_io_in_index_load_or_the_served_entry_page(tmp_path):
    from serve_helpers import Server, fetch

    root = tmp_path / "lake"
    table, rows = write_iceberg(root / "wh")
    (root / "wh" / "catalog.db").unlink()
    marker = tmp_path / "ran"  # outside the lake: a line in it is code the metadata chose, run by dslake
    name_file_io(table, marker)
    lake = Lake.open(root)
    lake.index()
    assert not marker.exists(), "dslake index ran the FileIO class a table's metadata named"
    assert f"Rows: {rows} in the current version" in _description(root, "wh/ns/events")
    assert len(lake.load("wh/ns/events")) == rows
    assert not marker.exists(), "lake.load ran the FileIO class a table's metadata named"
    with Server(lake) as server:  # a plain GET, as a cross-site <img src=…/entries/…> sends
        code, page, _ = fetch(server.url("/entries/wh/ns/events"), headers={"Origin": "http://evil.example"})
    # the page itself is what matters here: its preview (a worker under the profilers' memory bound) read the table
    # through dslake's FileIO, or failed on that bound on a loaded machine; either way the metadata chose nothing
    assert code == 200 and "wh/ns/events" in page
    assert not marker.exists(), "the serve preview ran the FileIO class a table's metadata named"
    lake.close()


# ---- version-hint.text and metadata reach outside the table (high) ----

def test_an_iceberg_table_that_names_another_host_table_is_an_entry_that_says_why(tmp_path):
    host = _host_iceberg(tmp_path / "host")
    root = tmp_path / "lake"
    hinted, _ = write_iceberg(root / "hinted")
    # a version hint that walks out of the table to the host's newest metadata file
    (hinted / "metadata" / "version-hint.text").write_text(os.path.relpath(_newest_metadata(host),
                                                                           hinted / "metadata"))
    # a metadata file inside the table (the newest version) that is the host table's: its manifest list is the host's
    copied, _ = write_iceberg(root / "copied")
    shutil.copy(_newest_metadata(host), copied / "metadata" / "v99.metadata.json")
    # a metadata file that is a link to the host's (the scan leaves it out; the reader must too)
    linked, _ = write_iceberg(root / "linked")
    os.symlink(_newest_metadata(host), linked / "metadata" / "v99.metadata.json")
    for name in ("hinted", "copied", "linked"):
        (root / name / "catalog.db").unlink()
    lake = Lake.open(root)
    lake.index()
    for name, reason in (("hinted/ns/events", "version-hint.text names"),
                         ("copied/ns/events", "names a file outside the table's folder"),
                         ("linked/ns/events", "names a file outside the table's folder")):
        text = _description(root, name)
        assert "cannot be read" in text and reason in text, (name, text)
        assert not any(str(v) in text for v in HOST_IDS), f"the host table's values reached {name}'s entry"
        with pytest.raises(LoadError, match="cannot be read"):
            lake.load(name)
    lake.close()


# ---- links inside a dataset folder (medium) ----

@pytest.fixture(scope="module")
def linked_lake(tmp_path_factory) -> Path:
    """A Hive dataset and a folder of parts, each with links to host rows planted inside; indexed."""
    base = tmp_path_factory.mktemp("links")
    host = base / "host"
    (host / "year=2099").mkdir(parents=True)
    pd.DataFrame({"order_id": HOST_IDS, "amount": [1e6, 2e6]}).to_parquet(host / "rows.parquet", index=False)
    pd.DataFrame({"order_id": HOST_IDS[:1], "amount": [3e6]}).to_parquet(host / "year=2099" / "part-0.parquet",
                                                                         index=False)
    pd.DataFrame({"event": ["host"] * 2, "value": HOST_IDS}).to_parquet(host / "events.parquet", index=False)
    root = base / "lake"
    write_hive(root / "sales", months=1)
    os.symlink(host / "rows.parquet", root / "sales" / "year=2024" / "month=01" / "part-1.parquet")  # a file
    os.symlink(host / "year=2099", root / "sales" / "year=2099")  # a partition folder
    write_parts(root / "events")
    os.symlink(host / "events.parquet", root / "events" / "part-00009.parquet")
    Lake.open(root).index()
    return root


def test_load_reads_a_dataset_from_its_members_not_the_links_in_its_folder(linked_lake):
    lake = Lake.open(linked_lake)
    sales = lake.load("sales")
    assert sorted(sales["order_id"]) == [0, 1, 2, 3, 4, 5]  # the six lake rows, no host row
    assert sorted(sales["year"].astype(int).unique()) == [2023, 2024]  # partition columns as a folder read gives
    events = lake.load("events")
    assert len(events) == 12 and "host" not in set(events["event"])
    lake.close()


def test_the_serve_preview_and_the_hint_checker_read_no_linked_host_rows(linked_lake):
    from dslake_index.hint_check import check_catalog_datasets
    from serve_helpers import Server, fetch

    lake = Lake.open(linked_lake)
    with Server(lake) as server:
        for path in ("sales", "events"):
            code, page, _ = fetch(server.url(f"/entries/{path}"))
            assert code == 200 and 'id="preview-error"' not in page, page
            assert not any(str(v) in page for v in HOST_IDS), f"host rows in the preview of {path}"
    lake.close()
    with sqlite3.connect(linked_lake / ".dslake" / "manifest.sqlite") as conn:
        checks = {c.path: c for c in check_catalog_datasets(linked_lake, conn)}
    assert checks["sales"].matched == checks["events"].matched == 1, checks


def test_load_reads_nothing_of_the_catalog_a_catalog_lists_as_lake_data(table_lake):
    """A catalog can come from someone else and list any path as a lake file: one inside the catalog (its runs'
    prompts, its config) is refused by real path, however the catalog names it."""
    lake = Lake.open(table_lake)
    lake.index()
    lake.close()
    (table_lake / ".dslake" / "kept.csv").write_text("region,product,units,price\nCATALOG-ONLY,x,1,1\n")
    with sqlite3.connect(table_lake / ".dslake" / "manifest.sqlite") as conn:
        conn.execute("UPDATE files SET path = '.dslake/kept.csv' WHERE path = 'sales.csv'")
    lake = Lake.open(table_lake)
    with pytest.raises(LoadError, match="leads into the catalog"):
        lake.load(".dslake/kept.csv")
    lake.close()


# ---- a Delta log that names files outside the table ----

def _delta_naming(root: Path, how: str, host_file: Path) -> None:
    """A Delta table whose one data file the log names as how says: a link to a host file, its absolute path, a
    `file://` URI, or a `../` path."""
    from deltalake import write_deltalake

    write_deltalake(str(root), pd.DataFrame({"trip_id": [1, 2], "fare": [1.0, 2.0]}))
    log = root / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    data = next(root.glob("*.parquet"))
    for action in actions:
        if "add" not in action:
            continue
        action["add"]["size"] = host_file.stat().st_size
        action["add"].pop("stats", None)
        if how == "link":
            data.unlink()
            os.symlink(host_file, data)
        else:
            action["add"]["path"] = {"absolute": str(host_file), "uri": host_file.as_uri(),
                                     "dotdot": os.path.relpath(host_file, root)}[how]
    log.write_text("".join(json.dumps(a) + "\n" for a in actions))


@pytest.mark.parametrize("how", ["link", "absolute", "uri", "dotdot"])
def test_a_delta_table_whose_log_names_files_outside_it_is_an_entry_that_says_why(tmp_path, how):
    host = tmp_path / "host"
    host.mkdir()
    pd.DataFrame({"trip_id": HOST_IDS, "fare": [9e6, 9e6]}).to_parquet(host / "trips.parquet", index=False)
    root = tmp_path / "lake"
    _delta_naming(root / "trips", how, host / "trips.parquet")
    lake = Lake.open(root)
    lake.index()
    text = _description(root, "trips")
    assert "cannot be read" in text and "names a file outside the table's folder" in text, text
    with pytest.raises(LoadError, match="cannot be read"):
        lake.load("trips")
    lake.close()


def test_a_table_reader_opens_only_locations_inside_its_root(tmp_path):
    """The rule the attacks above meet, location by location: on disk by real path, in a bucket by key."""
    from dslake_index.table_io import RootedIO, TableUnreadable
    from pyiceberg.io.pyarrow import PyArrowFileIO

    table = tmp_path / "lake" / "t"
    (table / "metadata").mkdir(parents=True)
    (tmp_path / "host.avro").write_bytes(b"host")
    os.symlink(tmp_path / "host.avro", table / "metadata" / "snap.avro")
    io = RootedIO(PyArrowFileIO({}), str(table))
    for inside in (f"{table}/metadata/v1.metadata.json", f"file://{table}/data/x.parquet", f"file:{table}/d.parquet"):
        assert io.allows(inside), inside
    for outside in (f"{table}/metadata/snap.avro", f"{table}/../host.avro", str(tmp_path / "host.avro"),
                    f"file://localhost{table}/d.parquet", "s3://bucket/t/d.parquet", "hdfs://nn/t/d", "metadata/x"):
        assert not io.allows(outside), outside
        with pytest.raises(TableUnreadable, match="outside the table's folder"):
            io.new_input(outside)
    with pytest.raises(TableUnreadable):
        io.new_output(f"{table}/metadata/v2.metadata.json")
    bucket = RootedIO(PyArrowFileIO({}), "s3://bucket/lake/t")
    assert bucket.allows("s3://bucket/lake/t/metadata/a.avro") and bucket.allows("s3a://bucket/lake/t/d.parquet")
    for outside in ("s3://bucket/lake/t/../u/d.parquet", "s3://bucket/lake/tt/d", "s3://other/lake/t/d",
                    "gs://bucket/lake/t/d", f"{table}/d.parquet"):
        assert not bucket.allows(outside), outside
