"""Datasets and tables in S3 (issue 30 §5): a Hive dataset, a Delta table and an Iceberg table in a bucket on a real
S3 server on 127.0.0.1 (moto) index into the same entries as on disk, from Parquet footers read by ranges and
from the Delta log and Iceberg metadata, without downloading a data file whole; a new commit re-indexes the table;
a broken log is a failure with its reason; a script reads a dataset through the run's view of the bucket."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dsstar_lake.lake import Lake

s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")
deltalake = pytest.importorskip("deltalake")


class CountingApp:
    """WSGI middleware around the moto server: bytes it sent per object key for GET requests."""

    def __init__(self, app):
        self.app = app
        self.sent: dict[str, int] = defaultdict(int)

    def __call__(self, environ, start_response):
        body = self.app(environ, start_response)
        if environ["REQUEST_METHOD"] != "GET":
            return body
        key = environ.get("PATH_INFO", "")
        chunks = list(body)
        self.sent[key] += sum(len(c) for c in chunks)
        return chunks


@pytest.fixture(scope="module")
def counted_server():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    counting = CountingApp(server._server.app)
    server._server.app = counting
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}", counting
    server.stop()


@pytest.fixture
def s3(counted_server, monkeypatch, tmp_path):
    endpoint, _ = counted_server
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


def _put_tree(s3, local: Path, prefix: str, only_new: bool = False) -> list[str]:
    """Upload a folder's files under prefix (only_new: those not there yet); return the keys written."""
    written = []
    for path in sorted(p for p in local.rglob("*") if p.is_file() and not p.name.endswith(".crc")):
        key = f"{prefix}/{path.relative_to(local).as_posix()}"
        if only_new and s3.exists(key):
            continue
        s3.put_file(str(path), key)
        written.append(key)
    return written


def _trips(start: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(start)
    return pd.DataFrame({"trip_id": np.arange(start, start + n), "city": rng.choice(["oslo", "lima"], n),
                         "fare": np.round(rng.uniform(3, 80, n), 2)})


def test_datasets_and_tables_in_a_bucket(s3, counted_server, tmp_path):
    _, counting = counted_server
    bucket = "lake-datasets"
    s3.mkdir(bucket)
    prefix = f"{bucket}/lake"
    # A Hive dataset of two partitions, each file several row groups of incompressible numbers (~1.6 MB).
    rng = np.random.default_rng(1)
    expected_total = 0.0
    for year in (2023, 2024):
        frame = pd.DataFrame({"amount": rng.uniform(0, 100, 100_000), "qty": rng.integers(0, 1 << 40, 100_000)})
        expected_total += float(frame["amount"].sum())
        local = tmp_path / "sales" / f"year={year}" / "part-0.parquet"
        local.parent.mkdir(parents=True)
        frame.to_parquet(local, index=False, row_group_size=25_000)
    _put_tree(s3, tmp_path / "sales", f"{prefix}/sales")
    # A Delta table: an append, a delete.
    from deltalake import DeltaTable, write_deltalake

    trips = tmp_path / "trips"
    write_deltalake(str(trips), _trips(0))
    write_deltalake(str(trips), _trips(400), mode="append")
    DeltaTable(str(trips)).delete("trip_id < 100")
    _put_tree(s3, trips, f"{prefix}/trips")
    # A Delta table whose log misses a commit.
    broken = tmp_path / "broken"
    for i in range(3):
        write_deltalake(str(broken), _trips(i * 400), mode="append")
    (broken / "_delta_log" / "00000000000000000001.json").unlink()
    _put_tree(s3, broken, f"{prefix}/broken")
    # An Iceberg table written straight to the bucket, as a warehouse in S3 is.
    events_rows = _write_iceberg(tmp_path, f"s3://{prefix}/warehouse")

    url = f"s3://{prefix}"
    lake = Lake.open(url, catalog=tmp_path / "catalog")
    counting.sent.clear()
    summary = lake.index()
    assert summary.failed == 0, summary.failures
    conn = sqlite3.connect(tmp_path / "catalog" / "manifest.sqlite")
    entries = {path: (kind, fmt, description) for path, kind, fmt, description in
               conn.execute("SELECT path, kind, format, description FROM entries")}

    kind, fmt, text = entries["sales"]
    assert (kind, fmt) == ("dataset", "parquet")
    assert "Rows: 200,000 in all" in text and "year: 2023, 2024" in text
    assert "pd.read_parquet('data/sales')" in text
    # Footers by ranges: a small share of each data file's bytes crossed the wire, never the whole object.
    for year in (2023, 2024):
        key = f"/{bucket}/lake/sales/year={year}/part-0.parquet"
        size = s3.size(key[1:])
        assert 0 < counting.sent[key] < size / 4, (key, counting.sent[key], size)
    data_files = [k for k in counting.sent if k.endswith(".parquet") and "/sales/" not in k]
    for key in data_files:  # the tables' data files: read by their footers too, or not at all
        assert counting.sent[key] < s3.size(key[1:]) or s3.size(key[1:]) < 70_000

    kind, fmt, text = entries["trips"]
    assert (kind, fmt) == ("dataset", "delta")
    assert "Rows: 700 in the current version (exact" in text and "Current version 2" in text
    assert "DeltaTable('data/trips').to_pandas()" in text
    assert not any(path.startswith("trips/") for path in entries)  # its files are members, not entries

    kind, fmt, text = entries["broken"]
    assert fmt == "delta" and "commit file(s) missing from _delta_log: 00000000000000000001.json" in text

    table_root = "warehouse/db/events"
    kind, fmt, text = entries[table_root]
    assert (kind, fmt) == ("dataset", "iceberg")
    assert f"Rows: {events_rows:,} in the current version" in text

    # A new commit: only its new objects are read, and the table's entry says the new version.
    write_deltalake(str(trips), _trips(800), mode="append")
    new_keys = _put_tree(s3, trips, f"{prefix}/trips", only_new=True)
    again = lake.index()
    assert (again.added, again.changed, again.profiled) == (len(new_keys), 0, len(new_keys))
    text = conn.execute("SELECT description FROM entries WHERE path = 'trips'").fetchone()[0]
    assert "Rows: 1,100 in the current version" in text and "Current version 3" in text

    # A script's load lines read them from the bucket through the run's view: a named dataset comes whole, past
    # remote.fetch_files, and its footer-indexed objects pass the blob cache's check by their identity.
    from dslake_index import lookup

    from dsstar_lake.runs.lakeview import LakeView

    view = LakeView(url, tmp_path / "catalog", lake.settings, lookup.file_hashes(conn), lookup.dataset_roots(conn))
    view.fetch_files = 1
    view.prepare("df = pd.read_parquet('data/sales')\nt = DeltaTable('data/trips').to_pandas()", [])
    assert not view.problems, view.problems
    sales = pd.read_parquet(view.root / "sales")
    assert len(sales) == 200_000 and sorted(sales["year"].astype(int).unique()) == [2023, 2024]
    assert abs(float(sales["amount"].sum()) - expected_total) < 1e-6 * expected_total
    assert len(DeltaTable(str(view.root / "trips")).to_pandas()) == 1_100
    lake.close()


def _write_iceberg(tmp_path: Path, warehouse: str) -> int:
    """Write db.events (two appends) into an S3 warehouse; return its rows."""
    import os

    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/iceberg.db", warehouse=warehouse,
                         **{"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "s3.endpoint": os.environ["AWS_ENDPOINT_URL"],
                            "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
                            "s3.region": "us-east-1"})
    catalog.create_namespace("db")
    table = None
    rows = 0
    for part in range(2):
        data = pa.table({"event_id": pa.array(np.arange(part * 300, (part + 1) * 300), pa.int64()),
                         "value": pa.array(np.linspace(0, 1, 300))})
        table = table or catalog.create_table("db.events", schema=data.schema)
        table.append(data)
        rows += data.num_rows
    return rows


def test_an_iceberg_table_in_a_bucket_names_no_file_io(s3, tmp_path):
    """The metadata's `py-io-impl` made dslake import and call that class for a table in a bucket too (the store's
    own properties came first, the metadata's won): dslake now reads with the store's FileIO it builds itself."""
    import json

    bucket = "lake-named-io"
    s3.mkdir(bucket)
    rows = _write_iceberg(tmp_path, f"s3://{bucket}/lake/warehouse")
    marker = tmp_path / "ran"
    for key in s3.glob(f"{bucket}/lake/warehouse/db/events/metadata/*.metadata.json"):
        data = json.loads(s3.cat_file(key))
        data["properties"] = {**data.get("properties", {}), "py-io-impl": "table_lakes.MarkerFileIO",
                              "marker-file": str(marker)}
        s3.pipe_file(key, json.dumps(data).encode())
    lake = Lake.open(f"s3://{bucket}/lake", catalog=tmp_path / "catalog")
    assert lake.index().failed == 0
    assert not marker.exists(), "dslake index ran the FileIO class a table's metadata in a bucket named"
    with sqlite3.connect(tmp_path / "catalog" / "manifest.sqlite") as conn:
        (text,) = conn.execute("SELECT description FROM entries WHERE path = 'warehouse/db/events'").fetchone()
    assert f"Rows: {rows:,} in the current version" in text
    lake.close()
