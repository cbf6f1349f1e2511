"""Datasets and tables as entries: Hive partitions, part folders, Delta and Iceberg tables, broken tables, and
files too big for a script's memory. One small lake is indexed once for the module; the tests read it back."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from table_lakes import write_delta, write_hive, write_iceberg, write_parts

from dsstar_lake.base.errors import LoadError
from dsstar_lake.lake import Lake


@pytest.fixture(scope="module")
def lake_dir(tmp_path_factory) -> Path:
    """A lake of every kind of dataset, good and broken, beside a loose file; indexed once."""
    root = tmp_path_factory.mktemp("datasets") / "lake"
    write_hive(root / "sales")
    # a partition folder holding a file of another schema: noted on the dataset, an entry of its own
    pd.DataFrame({"other": ["x"]}).to_parquet(root / "sales" / "year=2024" / "month=01" / "extra.parquet")
    (root / "sales" / "_SUCCESS").write_text("")  # a writer's marker: every reader skips it, so no note
    for day in (1, 2):  # a Hive dataset of CSV files
        (root / "clicks" / f"day={day}").mkdir(parents=True)
        (root / "clicks" / f"day={day}" / "part-0.csv").write_text("page,n\nhome,3\nabout,1\n")
    write_parts(root / "events")
    write_delta(root / "trips")
    write_delta(root / "gap")
    (root / "gap" / "_delta_log" / f"{1:020d}.json").unlink()  # a missing commit
    write_delta(root / "garbled")
    (root / "garbled" / "_delta_log" / f"{2:020d}.json").write_text("{not json\n")
    warehouse, _ = write_iceberg(root / "wh")
    (root / "wh" / "catalog.db").unlink()
    broken, _ = write_iceberg(root / "wh2")
    (root / "wh2" / "catalog.db").unlink()
    for manifest in (broken / "metadata").glob("*-m*.avro"):
        manifest.unlink()  # metadata pointing at absent manifests
    (root / "loose.csv").write_text("city,visits\nOslo,3\nLima,5\n")
    Lake.open(root).index()
    return root


def _entries(root: Path) -> dict[str, sqlite3.Row]:
    conn = sqlite3.connect(root / ".dslake" / "manifest.sqlite")
    conn.row_factory = sqlite3.Row
    return {row["path"]: row for row in conn.execute("SELECT * FROM entries")}


def test_each_dataset_and_table_is_one_entry_and_loose_files_are_as_before(lake_dir):
    entries = _entries(lake_dir)
    datasets = {path: row["format"] for path, row in entries.items() if row["kind"] == "dataset"}
    assert datasets == {"sales": "parquet", "clicks": "csv", "events": "parquet", "trips": "delta", "gap": "delta",
                        "garbled": "delta", "wh/ns/events": "iceberg", "wh2/ns/events": "iceberg"}
    assert entries["loose.csv"]["kind"] == "file"
    # no file inside a table is an entry of its own; the stray file of another schema is
    inside = [p for p, row in entries.items() if p.startswith(("trips/", "wh/", "events/")) and row["kind"] != "dataset"]
    assert inside == []
    assert entries["sales/year=2024/month=01/extra.parquet"]["kind"] == "file"
    sales = entries["sales"]["description"]
    assert "year: 2023, 2024; month: 01, 02" in sales and "Rows: 12 in all" in sales
    assert "df = pd.read_parquet('data/sales', ignore_prefixes=['.', '_', 'extra.parquet'])" in sales
    assert "filters=[('year', '=', 2024)]" in sales
    assert "order_id: int (int64); min 0; max 11; nulls 0" in sales  # merged over every file's footer
    assert "1 file(s) under data/sales have another schema" in sales
    trips = entries["trips"]["description"]
    assert "Current version 2 (3 commits" in trips and "Rows: 16 in the current version" in trips
    assert "DeltaTable('data/trips').to_pandas()" in trips and "Partition columns: city" in trips
    assert entries["trips"]["member_count"] > 4  # the log and every data file on disk, removed ones too


def test_load_gives_partition_columns_and_current_table_versions(lake_dir):
    lake = Lake.open(lake_dir)
    sales = lake.load("sales")
    assert len(sales) == 12 and {"year", "month"} <= set(sales.columns)
    assert sorted(sales["year"].astype(int).unique()) == [2023, 2024]
    assert len(lake.load("events")) == 12
    clicks = lake.load("clicks")
    assert len(clicks) == 4 and sorted(clicks["day"].unique()) == [1, 2]
    trips = lake.load("trips")
    assert len(trips) == 16 and trips["trip_id"].min() == 4  # the deleted rows are absent
    assert len(lake.load("wh/ns/events")) == 16


def test_search_hits_and_the_entries_list_say_rows_partitions_and_versions(lake_dir):
    from dsstar_lake.agent.menu import hit_line

    lake = Lake.open(lake_dir)
    hits = {h.path: h for h in lake.search("order amount trips fare events kind page clicks", k=20)}
    assert hits["sales"].summary[0] == "4 files · 12 rows × 4 columns · partitions year 2023, 2024; month 01, 02"
    assert hits["clicks"].summary[0] == "2 files · 4 rows × 3 columns · partitions day 1, 2"
    assert hits["events"].summary[0] == "3 files · 12 rows × 2 columns"
    assert hits["trips"].summary[:2] == ["Delta table · 16 rows × 3 columns · partitions city · version 2, 3 commits",
                                         "columns: trip_id, city, fare"]
    assert hits["wh/ns/events"].summary[0] == "Iceberg table · 16 rows × 2 columns · 3 snapshots"
    # the selector's menu line says the same
    assert hit_line(hits["trips"]).startswith("data/trips · dataset folder of ") and \
        "· Delta table · 16 rows × 3 columns · partitions city · version 2, 3 commits ·" in hit_line(hits["trips"])
    broken = {h.path: h for h in lake.search("gap garbled delta table", k=20)}
    assert broken["gap"].summary == ["Delta table, unreadable (its log or metadata cannot be read)"]
    listed = {e["path"]: e for e in lake.entries()}
    assert (listed["trips"]["rows"], listed["trips"]["columns"], listed["trips"]["rows_exact"]) == (16, 3, True)
    assert (listed["sales"]["rows"], listed["sales"]["columns"]) == (12, 4)
    assert (listed["wh/ns/events"]["rows"], listed["wh/ns/events"]["columns"]) == (16, 2)


def test_a_delta_table_under_a_folder_with_a_space_is_read_and_loaded(tmp_path):
    # delta-rs percent-encodes the URIs of its data files ("my%20lake"); the folder check compares decoded paths
    root = tmp_path / "my lake"
    write_delta(root / "trips")
    Lake.open(root).index()
    trips = _entries(root)["trips"]["description"]
    assert "Rows: 16 in the current version" in trips and "cannot be read" not in trips
    assert len(Lake.open(root).load("trips")) == 16


@pytest.mark.parametrize(("table", "reason"), [
    ("gap", "commit file(s) missing from _delta_log: 00000000000000000001.json"),
    ("garbled", ""),
    ("wh2/ns/events", "metadata points at manifests that cannot be read"),
])
def test_a_broken_table_is_an_entry_with_its_reason_and_no_load_line(lake_dir, table, reason):
    description = _entries(lake_dir)[table]["description"]
    assert "cannot be read: " in description and reason in description and "load:" not in description
    with pytest.raises(LoadError, match="cannot be read"):
        Lake.open(lake_dir).load(table)


def test_a_new_commit_rebuilds_only_the_table(lake_dir, tmp_path):
    from deltalake import write_deltalake

    root = tmp_path / "lake"
    shutil.copytree(lake_dir, root, ignore=shutil.ignore_patterns(".dslake"))
    shutil.copytree(lake_dir / ".dslake", root / ".dslake")
    before = _entries(root)
    write_deltalake(str(root / "trips"), pd.DataFrame({"trip_id": [99], "city": ["a"], "fare": [1.0]}),
                    mode="append", partition_by=["city"])
    summary = Lake.open(root).index()
    assert summary.added == 2 and summary.profiled == 2  # the commit file and its data file, nothing else
    after = _entries(root)
    assert "Rows: 17 in the current version" in after["trips"]["description"]
    assert after["loose.csv"]["updated_at"] == before["loose.csv"]["updated_at"]
    assert after["sales"]["updated_at"] == before["sales"]["updated_at"]


def test_the_hint_checker_runs_each_dataset_line_on_the_whole_dataset(lake_dir):
    from dslake_index.hint_check import check_catalog_datasets

    conn = sqlite3.connect(lake_dir / ".dslake" / "manifest.sqlite")
    checks = {c.path: c for c in check_catalog_datasets(lake_dir, conn)}
    assert {p for p, c in checks.items() if c.skipped} == {"gap", "garbled", "wh2/ns/events"}
    assert all(c.executed == c.matched == 1 for p, c in checks.items() if not c.skipped)
    assert len(checks) == 8


def test_a_file_or_dataset_too_big_for_a_script_gets_a_streaming_line_and_load_refuses_it(tmp_path):
    from dslake_index.hint_check import check_catalog_datasets

    root = tmp_path / "lake"
    root.mkdir()
    (root / "big.csv").write_text("station,value\n" + "".join(f"s{i % 7},{i}\n" for i in range(40_000)))
    rows = write_hive(root / "sales", rows=20_000)
    lake = Lake.open(root, overrides={"sandbox.memory_mb": 1})  # 1 MB: neither the 0.4 MB file nor the dataset fits
    lake.index()
    entries = _entries(root)
    description = entries["big.csv"]["description"]
    assert "Too big to load whole" in description and "rel = duckdb.read_csv('data/big.csv')" in description
    assert "load: df =" not in description
    # lake.load in the user's own process: bounded by the memory given (default: this machine's), not the sandbox's;
    # its advice names the file as the user does (absolute here: the lake is not under the current folder)
    with pytest.raises(LoadError, match="too big to load whole") as caught:
        lake.load("big.csv", max_memory_mb=1)
    assert f"duckdb.read_csv({str(root / 'big.csv')!r})" in caught.value.hint
    sales = entries["sales"]["description"]
    assert "duckdb.read_parquet('data/sales/**/*.parquet', hive_partitioning=True)" in sales
    with pytest.raises(LoadError, match="too big to load whole"):
        lake.load("sales", max_memory_mb=1)
    assert len(lake.load("sales")) == rows  # no whole-load line in the catalog: the one of its kind, in memory here
    (check,) = check_catalog_datasets(root, sqlite3.connect(root / ".dslake" / "manifest.sqlite"))
    assert check.matched == 1 and rows == 80_000  # the streaming line counts every row, partition columns too
    (hit,) = [h for h in lake.search("big station value") if h.path == "big.csv"]
    assert hit.summary[0] == "40,000 rows × 2 columns · too big to load whole: query it with DuckDB"
    assert hit.summary[1:] == ["columns: station, value", "station: s0, s1, s2, s3, s4"]  # no card words in values


def test_a_big_csv_whose_rows_are_estimated_says_about_in_its_hit_and_the_entries_list(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    (root / "big.csv").write_text("station,shift\n" + "".join(f"s{i % 7},{'day' if i % 3 else 'night'}\n"
                                                              for i in range(300_000)))
    # sampled past 1 MB (the default reads 64 MB whole): its rows are estimated from the average line length
    lake = Lake.open(root, overrides={"profile.max_bytes_full_read": 1 << 20, "sandbox.memory_mb": 1})
    lake.index()
    (hit,) = lake.search("big station shift")
    rows = _entries(root)["big.csv"]["description"].split("Table: ", 1)[1].split(" (approximate)", 1)[0]
    assert hit.summary[0] == f"about {rows} rows × 2 columns · too big to load whole: query it with DuckDB"
    # the card's last line, its own words only (the too-big words once ran on into it: 'night too big for memory')
    assert hit.summary[2].startswith("station: s") and hit.summary[2].endswith(" · shift: day, night")
    (entry,) = lake.entries()
    assert entry["rows"] == int(rows.replace(",", "")) and entry["rows_exact"] is False


def test_duckdb_in_the_sandbox_runs_under_the_sandbox_limits(tmp_path):
    from sandbox_helpers import sandbox

    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "x.csv").write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(100)))
    work = tmp_path / "work"
    work.mkdir()
    code = ("import duckdb\n"
            "print(duckdb.sql(\"SELECT current_setting('memory_limit'), current_setting('temp_directory'), "
            "current_setting('autoinstall_known_extensions')\").fetchall())\n"
            "print(duckdb.connect().sql(\"SELECT current_setting('threads')\").fetchall())\n"
            "print(duckdb.sql(\"SELECT sum(b) FROM read_csv('data/x.csv')\").fetchall())\n")
    # 2,000 MB, not less: under a per-process address-space bound of 1,000 MB a second DuckDB instance failed to
    # reserve its memory about one run in five ("Allocation failure"); the default bound is 4,096 MB.
    result = sandbox("subprocess", lake, memory_mb=2000).run(code, work)
    assert result.returncode == 0, result.stderr
    limits, threads, total = result.stdout.splitlines()
    assert "'800.0 MB'" in limits or "762.9 MiB" in limits  # 40% of the 2,000 MB bound
    assert f"{work}/duckdb_spill" in limits and "False" in limits  # spill in the work folder; no downloads
    assert int(threads.strip("[(,)]")) <= 2 and total == "[(9900,)]"


@pytest.mark.parametrize("text", [
    "pd.read_parquet({path})",
    "pd.read_parquet({path}, ignore_prefixes=['.', '_', 'extra.parquet'], filters=[('year', '=', 2024)])",
    "DeltaTable({path}).to_pandas()",
    "DeltaTable({path}, version=3).to_pandas()",
    "DeltaTable({path}).to_pyarrow_dataset()",
    "StaticTable.from_metadata({path}).scan().to_pandas()",
    "StaticTable.from_metadata({path}).scan().to_arrow_batch_reader()",
    "ds.dataset({path}, format='csv', partitioning='hive').to_table().to_pandas()",
    "duckdb.read_parquet({path}, hive_partitioning=True)",
    "duckdb.read_csv({path})",
])
def test_the_dataset_load_lines_are_of_the_safe_form(text):
    from dslake_index.load_hint import parse, render

    assert render(parse(text)) == text


@pytest.mark.parametrize(("text", "named"), [
    ("pd.read_parquet({path}, filters=[('year', '=', __import__('os').getpid())])", "not a literal"),
    ("pd.read_parquet({path}, filters=[('year', 'like', 2024)])", "a filter"),
    ("ds.dataset({path}, format='ipc')", "format="),
    ("ds.dataset({path}, partitioning='directory')", "partitioning="),
    ("DeltaTable({path}, version='3').to_pandas()", "version="),
    ("duckdb.read_csv({path}, hive_partitioning=1)", "hive_partitioning="),
    ("duckdb.sql('COPY t TO ' + {path})", "duckdb.sql"),
    ("DeltaTable({path}).delete()", "delete"),
])
def test_the_grammar_refuses_what_the_dataset_readers_were_not_given(text, named):
    from dslake_index.load_hint import HintRefused, parse

    with pytest.raises(HintRefused, match=named):
        parse(text)


def test_the_coder_is_told_the_memory_a_script_has_and_the_engine_past_it():
    import sys

    from dsstar_lake.sandbox.packages import packages_line

    line = packages_line(sys.executable, 4096)
    assert "duckdb" in line and "deltalake" in line and "pyiceberg" in line
    assert "A script has 4,096 MB of memory" in line and "query it with DuckDB" in line
