"""Every lake file a script reads is counted, whichever library opens it: pyarrow, DuckDB, lxml, h5py, netCDF.

Those libraries open files in C, where the read trace's audit hook does not reach; the lake's open watch
(dsstar_lake/sandbox/openwatch.py: fanotify as root, inotify otherwise) sees them through bubblewrap's binds and
through data/'s links alike. Each test asserts the exact files counted, and that a file the library did not open
(another partition the filter skipped, a sibling file) is not. Each library's test is skipped only where the
library is not installed; the Hive test runs with each kind of watch this machine has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_helpers import fenced, rules_file
from click.testing import CliRunner
from dslake_cli.cli import cli
from sandbox_helpers import BACKENDS, make_lake, sandbox

from dsstar_lake.sandbox import openwatch
from dsstar_lake.sandbox.openwatch import OVERFLOW, SHARED, OpenWatch
from dsstar_lake.sandbox.tracecheck import CLOSED

pytestmark = pytest.mark.skipif(not openwatch.available(), reason="no inotify here: only Python's opens are traced")

PAGE = "<html><body><table><tr><th>city</th><th>people</th></tr><tr><td>Lyon</td><td>5</td></tr></table></body></html>"


def write_hive(lake: Path) -> None:
    """Write sales/year=2022..2024, two Parquet parts each (pyarrow and DuckDB read its first file for the schema)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    for year in (2022, 2023, 2024):
        folder = lake / "sales" / f"year={year}"
        folder.mkdir(parents=True)
        for part in range(2):
            pq.write_table(pa.table({"units": [year + part, 1]}), folder / f"part-{part}.parquet")


WATCHES = ["inotify", pytest.param("fanotify", marks=pytest.mark.skipif(not openwatch.by_pid(),
                                                                        reason="fanotify with pids needs root"))]


@pytest.fixture
def inotify(monkeypatch):
    """Watch with inotify even as root (any process's opens counted)."""
    monkeypatch.setattr(openwatch, "FANOTIFY", False)


def run(backend: str, lake: Path, work: Path, code: str):
    res = sandbox(backend, lake, timeout_s=60).run(code, work)
    assert res.ok, res.stderr
    return res


@pytest.mark.parametrize("watch", WATCHES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_pyarrow_reads_of_a_hive_folder_count_the_partitions_read_and_no_other(backend, watch, tmp_path, monkeypatch):
    monkeypatch.setattr(openwatch, "FANOTIFY", watch == "fanotify")
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    res = run(backend, lake, tmp_path / "work",
              "import pandas as pd\nprint(int(pd.read_parquet('data/sales', filters=[('year', '=', 2022)])"
              "['units'].sum()))\n")
    assert res.stdout.split() == ["4047"]
    assert res.reads == ["sales/year=2022/part-0.parquet", "sales/year=2022/part-1.parquet"]
    assert res.trace_problems == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pyarrow_read_of_one_file_by_its_absolute_path(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    target = lake / "sales" / "year=2023" / "part-1.parquet"
    res = run(backend, lake, tmp_path / "work",
              f"import pyarrow.parquet as pq\nprint(pq.read_table({str(target)!r}).num_rows)\n")
    assert res.stdout.split() == ["2"]
    assert res.reads == ["sales/year=2023/part-1.parquet"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_duckdb_reads_count_the_partitions_its_filter_kept_and_the_csv_it_scanned(backend, tmp_path):
    pytest.importorskip("duckdb")
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    res = run(backend, lake, tmp_path / "work",
              "import duckdb\n"
              "print(duckdb.sql(\"select sum(units) from read_parquet('data/sales/*/*.parquet', hive_partitioning=true)"
              " where year = 2022\").fetchall()[0][0])\n"
              "print(duckdb.sql(\"select sum(units) from read_csv('data/sales.csv')\").fetchall()[0][0])\n")
    assert res.stdout.split() == ["4047", "14"]
    assert res.reads == ["sales/year=2022/part-0.parquet", "sales/year=2022/part-1.parquet", "sales.csv"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_pandas_read_html_through_lxml(backend, tmp_path):
    pytest.importorskip("lxml")
    lake = make_lake(tmp_path / "lake")
    (lake / "pages").mkdir()
    (lake / "pages" / "cities.html").write_text(PAGE)
    (lake / "pages" / "other.html").write_text(PAGE)
    res = run(backend, lake, tmp_path / "work",
              "import pandas as pd\nprint(int(pd.read_html('data/pages/cities.html')[0]['people'].sum()))\n")
    assert res.stdout.split() == ["5"]
    assert res.reads == ["pages/cities.html"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_h5py_reads(backend, tmp_path):
    h5py = pytest.importorskip("h5py")
    lake = make_lake(tmp_path / "lake")
    (lake / "cube").mkdir()
    for name in ("grid.h5", "other.h5"):
        with h5py.File(lake / "cube" / name, "w") as f:
            f["x"] = [1.0, 2.0, 3.5]
    res = run(backend, lake, tmp_path / "work",
              "import h5py\nwith h5py.File('data/cube/grid.h5', 'r') as f:\n    print(float(f['x'][:].sum()))\n")
    assert res.stdout.split() == ["6.5"]
    assert res.reads == ["cube/grid.h5"]


def write_netcdf(path: Path) -> None:
    netcdf4 = pytest.importorskip("netCDF4")
    with netcdf4.Dataset(path, "w") as ds:
        ds.createDimension("t", 3)
        ds.createVariable("air", "f8", ("t",))[:] = [1.0, 2.0, 4.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_netcdf4_reads(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    (lake / "cube").mkdir()
    write_netcdf(lake / "cube" / "air.nc")
    write_netcdf(lake / "cube" / "other.nc")
    res = run(backend, lake, tmp_path / "work",
              "import netCDF4\nwith netCDF4.Dataset('data/cube/air.nc') as ds:\n"
              "    print(float(ds['air'][:].sum()))\n")
    assert res.stdout.split() == ["7.0"]
    assert res.reads == ["cube/air.nc"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_xarray_reads(backend, tmp_path):
    pytest.importorskip("xarray")
    lake = make_lake(tmp_path / "lake")
    (lake / "cube").mkdir()
    write_netcdf(lake / "cube" / "air.nc")
    write_netcdf(lake / "cube" / "other.nc")
    res = run(backend, lake, tmp_path / "work",
              "import xarray as xr\nwith xr.open_dataset('data/cube/air.nc') as ds:\n"
              "    print(float(ds['air'].sum()))\n")
    assert res.stdout.split() == ["7.0"]
    assert res.reads == ["cube/air.nc"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_script_that_closes_the_trace_still_has_its_reads_counted_and_is_marked(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    res = run(backend, lake, tmp_path / "work",
              "import os\nos.close(int(os.environ['DSLAKE_TRACE_FD']))\n"
              "print(open('data/sales.csv').read().count('\\n'))\n"
              "import pyarrow.parquet as pq\nprint(pq.read_table('data/sales/year=2024/part-0.parquet').num_rows)\n")
    assert res.stdout.split() == ["3", "2"]
    # The watch runs outside the script, where it cannot close it; the closed trace still shows.
    assert res.reads == ["sales.csv", "sales/year=2024/part-0.parquet"]
    assert res.trace_problems == [CLOSED]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_script_whose_window_overlapped_another_scripts_on_the_same_lake_is_marked_when_the_watch_counted(
        backend, tmp_path, inotify):
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    other = OpenWatch(lake)  # another script of this process (a report's sub-question) watching the same lake
    try:
        in_c = run(backend, lake, tmp_path / "work",
                   "import pyarrow.parquet as pq\n"
                   "print(pq.read_table('data/sales/year=2024/part-0.parquet').num_rows)\n")
        in_python = run(backend, lake, tmp_path / "work", "print(len(open('data/sales.csv').read()))\n")
    finally:
        other.close()
    assert other.shared
    # Its C read is counted, and marked: the watch cannot tell it from the other script's reads.
    assert (in_c.reads, in_c.trace_problems) == (["sales/year=2024/part-0.parquet"], [SHARED])
    # What the audit hook reported is the script's own: no mark.
    assert (in_python.reads, in_python.trace_problems) == (["sales.csv"], [])


@pytest.mark.skipif(not openwatch.by_pid(), reason="fanotify with pids needs root")
@pytest.mark.parametrize("backend", BACKENDS)
def test_as_root_another_process_reading_the_lake_meanwhile_is_not_counted(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    stop = tmp_path / "stop"
    # Another reader of the same lake (a notebook, an index), opening a file in its folders until told to stop.
    notes = str(lake / "sub" / "notes.txt")
    reader = subprocess.Popen([sys.executable, "-c", f"import os, time\nwhile not os.path.exists({str(stop)!r}):\n"
                               f"    open({notes!r}, 'rb').close()\n    time.sleep(0.005)\n"])
    try:
        res = run(backend, lake, tmp_path / "work",
                  "import pyarrow.parquet as pq, time\nprint(pq.read_table('data/sales/year=2023/part-0.parquet')"
                  ".num_rows)\ntime.sleep(0.5)\n")
    finally:
        stop.touch()
        reader.wait()
    assert reader.returncode == 0
    assert res.reads == ["sales/year=2023/part-0.parquet"]
    assert res.trace_problems == []
    # The other reader's opens were seen in the script's window, and left out.
    assert any(n.endswith("opens of lake files by other processes meanwhile left out") for n in res.notes)


@pytest.mark.parametrize("watch", WATCHES)
def test_the_catalog_hidden_folders_and_listings_are_not_counted(tmp_path, watch, monkeypatch):
    monkeypatch.setattr(openwatch, "FANOTIFY", watch == "fanotify")
    lake = make_lake(tmp_path / "lake")
    for folder in (".dslake", ".git", "kept"):
        (lake / folder).mkdir()
        (lake / folder / "f.txt").write_text("x")
    opener = OpenWatch(lake, skip=[lake / ".dslake"])
    # dslake's own opens never count: a separate process reads, as a script would
    subprocess.run([sys.executable, "-c", "import os\nfor rel in ('.dslake/f.txt', '.git/f.txt', 'kept/f.txt', "
                    f"'sales.csv'):\n    open(os.path.join({str(lake)!r}, rel), 'rb').read()\n"
                    f"os.listdir({str(lake / 'kept')!r})"], check=True)
    opened, missing = opener.close()
    assert (opened, missing) == (["kept/f.txt", "sales.csv"], [])


def test_folders_past_the_bound_are_said_unwatched(tmp_path, monkeypatch, inotify):
    lake = make_lake(tmp_path / "lake")
    monkeypatch.setattr(openwatch, "MAX_FOLDERS", 1)
    watch = OpenWatch(lake)
    (lake / "sub" / "notes.txt").read_bytes()
    (lake / "sales.csv").read_bytes()
    assert watch.close() == (["sales.csv"], [])
    assert watch.unwatched == "only the first 1 of the lake's folders are watched"


def test_opens_past_the_kernels_queue_are_said_missing(tmp_path, inotify):
    lake = make_lake(tmp_path / "lake")
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    watch = OpenWatch(lake)
    for _ in range(limit // 2 + 1):  # two names in turn: the kernel merges only an event equal to the last one
        for name in ("sales.csv", "sub/notes.txt"):
            os.close(os.open(lake / name, os.O_RDONLY))
    assert watch.close() == (["sales.csv", "sub/notes.txt"], [OVERFLOW])


def test_an_answer_read_through_pd_read_parquet_names_its_files(tmp_path, monkeypatch):
    monkeypatch.setenv("DSLAKE_SANDBOX_MEMORY_MB", "1024")
    lake = make_lake(tmp_path / "lake")
    write_hive(lake)
    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0
    code = ("import pandas as pd\nprint(int(pd.read_parquet('data/sales', filters=[('year', '=', 2022)])"
            "['units'].sum()))\n")
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "planner", "response": "Sum the 2022 units."},
                       {"role": "coder", "response": fenced(code)}, {"role": "*", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced(code)})
    done = CliRunner().invoke(cli, ["ask", "How many units were sold in 2022?", "--lake", str(lake), "--files",
                                    "sales", "--llm", "scripted", "--scripted-file", rules, "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.output)
    assert answer["files_used"] == ["sales/year=2022/part-0.parquet", "sales/year=2022/part-1.parquet"]
    assert answer["trace_problems"] == []
