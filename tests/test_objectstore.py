"""Lakes in S3 (issue 19): index, re-index, search, show and status against a real S3 server on 127.0.0.1 (moto)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.lake import Lake

s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
UPLOADS = {"tables/sales.csv": "sales.csv", "tables/stations.xlsx": "stations.xlsx", "parks.json": "city/parks.json"}


@pytest.fixture(scope="module")
def s3_server():
    """A real S3-compatible server (moto in server mode) on a free loopback port, for this module."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_server, monkeypatch, tmp_path):
    """Point the AWS clients at the loopback server with fake keys, and return a filesystem to arrange buckets."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask a cloud metadata service for keys
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


@pytest.fixture
def bucket(s3, request) -> str:
    """A bucket (one per test) holding a CSV, an xlsx and a JSON file from data_samples under lake/."""
    name = "lake-" + request.node.name.replace("_", "-")[:40].lower()
    s3.mkdir(name)
    for key, sample in UPLOADS.items():
        s3.put_file(str(SAMPLES / sample), f"{name}/lake/{key}")
    return name


def test_index_search_show_status_and_incremental(bucket, s3, tmp_path):
    url = f"s3://{bucket}/lake"
    catalog = tmp_path / "catalog"
    lake = Lake.open(url, catalog=catalog)
    first = lake.index()
    assert (first.added, first.profiled, first.failed) == (3, 3, 0), first.failures
    # The catalog records the URL, so the catalog alone opens the lake again.
    reopened = Lake.open(catalog=catalog)
    assert reopened.root is None and reopened.catalog.remote == url
    assert reopened.status().lake == url and reopened.status().files == 3
    shown = reopened.show("tables/stations.xlsx")
    assert shown["file"]["status"] == "ok" and shown["file"]["format"] == "xlsx"
    assert repr(f"{url}/tables/stations.xlsx") in shown["entry"]["description"]  # a person's line names the bucket
    hits = reopened.search("units sold per region", k=3)
    assert hits[0].path == "tables/sales.csv"

    again = lake.index()  # nothing changed: the listing alone decides, nothing is downloaded
    assert (again.added, again.changed, again.unchanged, again.profiled) == (0, 0, 3, 0)

    # Same size, same second: only the ETag tells the new content apart.
    text = (SAMPLES / "sales.csv").read_text()
    s3.pipe(f"{bucket}/lake/tables/sales.csv", text.replace("Widget", "Gizmo").encode())
    s3.rm(f"{bucket}/lake/parks.json")
    s3.pipe(f"{bucket}/lake/new.csv", b"a,b\n1,2\n")
    before = lake.status()  # compares the catalog with the listing, as the next index will
    assert (before.stale, before.new, before.removed) == (["tables/sales.csv"], ["new.csv"], ["parks.json"])
    s3.rm(f"{bucket}/lake/new.csv")
    changed = lake.index()
    assert (changed.changed, changed.removed, changed.unchanged, changed.profiled) == (1, 1, 1, 1)
    assert lake.status().files == 2
    assert "Gizmo" in json.dumps(lake.show("tables/sales.csv"))

    # A copy (new key, known content) reuses the stored profile: downloaded to hash it, not profiled again.
    s3.copy(f"{bucket}/lake/tables/stations.xlsx", f"{bucket}/lake/copy/stations.xlsx")
    copied = lake.index()
    assert (copied.added, copied.reused, copied.profiled) == (1, 1, 0)
    assert not any((catalog / "tmp-objects").iterdir())  # every download was deleted once profiled


def test_cli_index_search_json(bucket, tmp_path):
    runner = CliRunner()
    catalog = str(tmp_path / "catalog")
    result = runner.invoke(cli, ["index", f"s3://{bucket}/lake", "--catalog", catalog, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] == 3
    result = runner.invoke(cli, ["search", "weather stations", "--catalog", catalog, "--json", "-k", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["hits"][0]["path"] == "tables/stations.xlsx"
    result = runner.invoke(cli, ["status", "--catalog", catalog, "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["lake"] == f"s3://{bucket}/lake"
    # the catalog remembers its bucket: indexing again needs no URL
    result = runner.invoke(cli, ["index", "--catalog", catalog, "--json"])
    assert result.exit_code == 0, result.output
    assert (json.loads(result.output)["unchanged"], json.loads(result.output)["added"]) == (3, 0)


def test_missing_bucket_is_one_line_and_leaves_no_catalog(s3, tmp_path):
    catalog = tmp_path / "catalog"
    result = CliRunner().invoke(cli, ["index", "s3://no-such-bucket/lake", "--catalog", str(catalog)])
    assert result.exit_code == 2
    assert "bucket not found: s3://no-such-bucket/lake" in result.output and "Traceback" not in result.output
    assert not catalog.exists()


def _records(catalog: Path) -> list[tuple]:
    """Return the manifest's file records and meta rows (its bytes change when a closed connection checkpoints)."""
    with sqlite3.connect(catalog / "manifest.sqlite") as conn:
        return [*conn.execute("SELECT * FROM files ORDER BY path"), *conn.execute("SELECT * FROM meta ORDER BY key")]


def test_missing_credentials_is_one_line_and_leaves_the_catalog_as_it_was(bucket, monkeypatch, tmp_path):
    catalog = tmp_path / "catalog"
    runner = CliRunner()
    assert runner.invoke(cli, ["index", f"s3://{bucket}/lake", "--catalog", str(catalog)]).exit_code == 0
    before = _records(catalog)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = runner.invoke(cli, ["index", f"s3://{bucket}/lake", "--catalog", str(catalog)])
    assert result.exit_code == 2, result.output
    assert "access to s3://" in result.output and "credentials" in result.output
    assert "Traceback" not in result.output
    assert _records(catalog) == before


def test_unreachable_endpoint_is_one_line(s3, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    result = CliRunner().invoke(cli, ["index", "s3://somewhere/lake", "--catalog", str(tmp_path / "c")])
    assert result.exit_code == 1 and "cannot list s3://somewhere/lake" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "c").exists()


def test_a_remote_lake_needs_a_catalog():
    result = CliRunner().invoke(cli, ["index", "s3://bucket/lake"])
    assert result.exit_code == 2 and "needs a local catalog" in result.output


def test_a_synced_copy_is_asked_with_the_same_catalog(bucket, s3, tmp_path):
    from agent_helpers import FAST, fenced, scripted

    catalog = tmp_path / "catalog"
    Lake.open(f"s3://{bucket}/lake", catalog=catalog).index()
    # A local copy, asked with the same catalog (its paths are lake-relative); tests/test_objectstore_ask.py
    # asks the bucket itself.
    copy = tmp_path / "copy"
    s3.get(f"{bucket}/lake/", str(copy), recursive=True)
    script = 'import csv\nprint(sum(int(r["units"]) for r in csv.DictReader(open("data/tables/sales.csv"))))\n'
    expected = sum(int(line.split(",")[3]) for line in (SAMPLES / "sales.csv").read_text().splitlines()[1:] if line)
    provider = scripted(("planner", "Sum the units column of data/tables/sales.csv."), ("coder", fenced(script)),
                        ("verifier", "Yes"), ("finalyzer", fenced(script)))
    answer = Lake.open(copy, catalog=catalog).ask("How many units were sold in total?", provider=provider,
                                                   overrides=FAST)
    assert answer.text == str(expected) and answer.files_used == ["tables/sales.csv"]


def test_a_failed_download_is_recorded_and_the_next_index_retries_it(bucket, monkeypatch, tmp_path):
    import dataclasses

    from dslake_index import objectstore

    listed = objectstore.list_objects

    def dropped(url, catalog_dir):  # the listing works, then the store goes away before any download
        lake, listing = listed(url, catalog_dir)
        env = dict(lake.env, AWS_ENDPOINT_URL="http://127.0.0.1:9", AWS_MAX_ATTEMPTS="1")
        return dataclasses.replace(lake, env=tuple(sorted(env.items()))), listing

    catalog = tmp_path / "catalog"
    lake = Lake.open(f"s3://{bucket}/lake", catalog=catalog)
    monkeypatch.setattr(objectstore, "list_objects", dropped)  # the index imports it where it lists a bucket
    first = lake.index()
    assert (first.added, first.failed, first.profiled) == (3, 3, 0)
    assert all("cannot download" in error for _, error in first.failures)
    monkeypatch.setattr(objectstore, "list_objects", listed)  # the store is back
    again = lake.index()
    assert (again.changed, again.failed, again.profiled) == (3, 0, 3)


def test_wrong_keys_are_one_line_and_leave_the_catalog_as_it_was(bucket, monkeypatch, tmp_path):
    catalog = tmp_path / "catalog"
    runner = CliRunner()
    assert runner.invoke(cli, ["index", f"s3://{bucket}/lake", "--catalog", str(catalog)]).exit_code == 0
    before = _records(catalog)
    # The server checks signatures from here on (moto reads this setting on every request): the keys are unknown.
    monkeypatch.setattr("moto.settings.INITIAL_NO_AUTH_ACTION_COUNT", 0)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAWRONGWRONGWRONG1")
    result = runner.invoke(cli, ["index", f"s3://{bucket}/lake", "--catalog", str(catalog)])
    assert result.exit_code == 2, result.output
    assert f"access to s3://{bucket}/lake refused" in result.output and "Traceback" not in result.output
    assert _records(catalog) == before


def test_a_store_that_cannot_sign_urls_is_downloaded_by_each_profiler(bucket, monkeypatch, tmp_path):
    from dslake_index import objectstore

    def cannot_sign(lake, rels):
        raise NotImplementedError("this filesystem does not sign URLs")

    monkeypatch.setattr(objectstore, "_sign", cannot_sign)
    summary = Lake.open(f"s3://{bucket}/lake", catalog=tmp_path / "catalog").index()
    assert (summary.added, summary.failed, summary.profiled) == (3, 0, 3)


def test_profilers_fetch_by_signed_url_without_a_store_client(bucket, tmp_path):
    from dslake_index import objectstore

    lake, listing = objectstore.list_objects(f"s3://{bucket}/lake", tmp_path)
    tasks = list(objectstore.object_tasks(lake, listing.files))
    assert {task for task, _ in tasks} == {objectstore.profile_url_task}
    # The task carries a URL the standard library can fetch: no keys, no client, in the profiler process.
    url = tasks[0][1][0]
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.read() == (SAMPLES / UPLOADS[listing.files[0].path]).read_bytes()


def test_a_dslakeignore_at_the_prefix_is_honoured_as_locally(bucket, s3, tmp_path):
    from dslake_index.objectstore import list_objects

    s3.pipe(f"{bucket}/lake/.dslakeignore", b"# as in a local lake\nold/\nparks.json\n*.xlsx\n!keep/*.xlsx\n")
    s3.copy(f"{bucket}/lake/tables/stations.xlsx", f"{bucket}/lake/keep/stations.xlsx")
    s3.copy(f"{bucket}/lake/tables/sales.csv", f"{bucket}/lake/old/deep/sales.csv")
    _, listing = list_objects(f"s3://{bucket}/lake", tmp_path)
    assert [f.path for f in listing.files] == ["keep/stations.xlsx", "tables/sales.csv"]
