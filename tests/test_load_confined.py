"""`lake.load` reads in a confined worker (issue 40, item 2): the parsers run in the Lake's confined server, one per
Lake, and what comes back is plain data (Arrow IPC, .npy, JSON, text) that gives the same values as a read in the
notebook's own process would.

The confinement is proved through the path lake.load takes: the notebook's process never imports the parsers, and
the probe task (index/profile_server.py's probe_task) run by the very server lake.load used shows what a parser gone
wrong there could reach.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest
from dslake_index.confined_pool import probe_outcome
from sandbox_helpers import BWRAP_REASON
from table_lakes import write_iceberg
from test_index_confined import Listener, _hostile

from dsstar_lake.base.errors import LoadError
from dsstar_lake.lake import Lake
from dsstar_lake.usecases.load import load as load_here

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")),
    "subprocess",
]


def _same(confined: Any, here: Any, what: str) -> None:
    assert type(confined) is type(here), what
    if isinstance(here, pd.DataFrame):
        pd.testing.assert_frame_equal(confined, here, obj=what)
    elif isinstance(here, pd.Series):
        pd.testing.assert_series_equal(confined, here, obj=what)
    elif isinstance(here, np.ndarray):
        np.testing.assert_array_equal(confined, here, err_msg=what)
        assert confined.dtype == here.dtype, what
    elif isinstance(here, np.lib.npyio.NpzFile):
        assert confined.files == here.files, what
        for name in here.files:
            np.testing.assert_array_equal(confined[name], here[name], err_msg=f"{what}[{name}]")
    elif isinstance(here, dict):
        assert list(confined) == list(here), what
        for key in here:
            _same(confined[key], here[key], f"{what}[{key!r}]")
    elif isinstance(here, list):
        assert len(confined) == len(here), what
        for i, (c, h) in enumerate(zip(confined, here, strict=True)):
            _same(c, h, f"{what}[{i}]")
    else:
        assert confined == here, what


def _outcome(read: Any) -> tuple[str, Any]:
    try:
        return "value", read()
    except LoadError as exc:
        return "error", exc.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_sample_loads_the_same_confined_as_in_process(samples_lake, monkeypatch, backend):
    """Each data_samples file (csv, tsv, latin-1, gzip, xlsx sheets, json, jsonl, parquet, html, fixed-width, npz,
    text) and the daily family give, confined, what the same load lines give run here; a file without a load line
    or one that fails gives the same line."""
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    lake = Lake.open(samples_lake)
    try:
        targets = [*lake.catalog.lake_files(), "sensors/daily/readings_2024-01-{dd}.csv"]
        loaded = 0
        for rel in targets:
            if lake.catalog.file_record(rel) is None and lake.catalog.entry_named(rel) is None:
                continue
            here = _outcome(lambda rel=rel: load_here(lake.catalog, rel))
            confined = _outcome(lambda rel=rel: lake.load(rel))
            assert confined[0] == here[0], (rel, confined, here)
            if here[0] == "error":
                assert confined[1] == here[1], rel
                continue
            _same(confined[1], here[1], rel)
            loaded += 1
        assert loaded >= 20
        assert lake._loader.pool.backend == backend
    finally:
        lake.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_lake_load_reads_in_one_confined_server_per_lake(tmp_path, monkeypatch, backend):
    """The server lake.load used is confined (its worker cannot write outside the lake nor connect out under bwrap,
    and holds no keys), serves the second load too, and ends with the Lake, its scratch folder removed."""
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    (lake_dir / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    (tmp_path / "host-file").write_text("HOST-SECRET")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-NOTEBOOK-KEY")
    lake = Lake.open(lake_dir)
    lake.index()
    listener = Listener()
    try:
        first = lake.load("sales.csv")
        server = lake._loader.pool
        assert lake.load("sales.csv").equals(first) and lake._loader.pool is server  # one server, kept
        reach = probe_outcome(server.call("dslake_index.profile_server:probe_task",
                                          (str(tmp_path / "host-file"), str(tmp_path / "planted"),
                                           ["127.0.0.1", listener.port]), 30)["value"])
        env = server.call("os:getenv", ("OPENAI_API_KEY",), 30)
        scratch = lake._loader.scratch
    finally:
        lake.close()
        listener.close()
    print(f"\n{backend}: lake.load's worker: read outside {reach['read'][:40]!r}, write outside "
          f"{reach['write'][:60]!r}, 127.0.0.1 {reach['connect'][:60]!r}")
    assert list(first["units"]) == [10, 4] and server.backend == backend
    assert env == {"value": None}  # the notebook's keys are not in the server's environment
    assert server.process.poll() is not None and not scratch.exists()
    if backend == "bwrap":
        assert "HOST-SECRET" not in reach["read"] and not (tmp_path / "planted").exists() and listener.heard == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_parsers_never_run_in_the_notebooks_process(samples_lake, backend):
    """A workbook, an HTML page and a CSV loaded from a notebook: openpyxl, lxml and pandas' parsers are imported
    by the confined worker, never by the notebook's process (on the base code they all were)."""
    code = (
        "import sys, json\n"
        "from dsstar_lake.lake import Lake\n"
        f"lake = Lake.open({str(samples_lake)!r})\n"
        "book = lake.load('stations.xlsx'); pages = lake.load('docs/library_stats.html')\n"
        "lake.load('sales.csv'); lake.close()\n"
        "print(json.dumps({'sheets': len(book), 'parsers': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('openpyxl', 'lxml', 'bs4', 'html5lib', 'pandas.io.parsers'))}))\n"
    )
    env = {**os.environ, "DSLAKE_SANDBOX_BACKEND": backend}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["sheets"] >= 2
    assert not any(m.startswith(("openpyxl", "lxml", "bs4", "html5lib")) for m in report["parsers"]), report


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hostile_iceberg_table_loads_in_the_confined_worker(tmp_path, monkeypatch, backend):
    """An Iceberg table whose metadata names `subprocess.Popen` as its FileIO, turned hostile after it was
    indexed: lake.load gives its rows and nothing runs (dslake picks the FileIO, and the reader is confined)."""
    lake_dir = tmp_path / "lake"
    table, rows = write_iceberg(lake_dir)
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    lake = Lake.open(lake_dir)
    lake.index()
    planted = _hostile(table, tmp_path / "PWNED")
    try:
        frame = lake.load(str(table.relative_to(lake_dir)))
        assert lake._loader is not None and lake._loader.pool is not None  # read by the confined worker
    finally:
        lake.close()
    assert isinstance(frame, pd.DataFrame) and len(frame) == rows
    assert not planted.exists()


def test_a_failed_load_line_reads_the_same_confined(tmp_path, monkeypatch):
    """A file that changed since it was indexed: the confined worker's failure is worded as lake.load words it."""
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    (lake_dir / "prices.parquet").write_bytes(b"")
    pd.DataFrame({"a": [1, 2]}).to_parquet(lake_dir / "prices.parquet")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "subprocess")
    lake = Lake.open(lake_dir)
    lake.index()
    (lake_dir / "prices.parquet").write_bytes(b"PAR1 not a parquet file any more PAR1")
    try:
        here = _outcome(lambda: load_here(lake.catalog, "prices.parquet"))
        confined = _outcome(lambda: lake.load("prices.parquet"))
    finally:
        lake.close()
    assert here[0] == confined[0] == "error" and confined[1] == here[1], (here, confined)
    assert confined[1].startswith("the load line of prices.parquet")


def test_mixed_columns_series_and_arrays_travel_as_data(tmp_path):
    """What a sheet often holds (ints, text, dates and gaps in one column), a Series and arrays come back equal."""
    import datetime as dt

    from dslake_index.load_transfer import decode, encode

    frame = pd.DataFrame({"mixed": [1, "two", 3.5, None, dt.datetime(2024, 1, 2), True],
                          "plain": [1, 2, 3, 4, 5, 6]}, index=list("abcdef"))
    series = pd.Series([1.5, 2.5], name="temp")
    value = {"sheet": frame, "col": series, "arr": np.arange(6).reshape(2, 3), "text": "ok", "json": {"a": [1]}}
    node = json.loads(json.dumps(encode(value, tmp_path, iter(range(100)))))
    _same(decode(node, tmp_path), value, "value")


@pytest.mark.parametrize("node", [{"frame": "../outside.arrow"}, {"npy": "/etc/passwd"}, {"pickle": "0.pkl"},
                                  {"dict": [[["k"], {"text": "x"}]]}, ["not", "a", "node"]])
def test_an_answer_not_of_encodes_form_is_refused(tmp_path, node):
    from dslake_index.load_transfer import TransferError, decode

    with pytest.raises(TransferError):
        decode(node, tmp_path)


def test_a_file_that_is_not_arrow_ipc_is_refused(tmp_path):
    """A worker gone wrong that writes garbage where a frame should be gives a refusal, not a crash."""
    from dslake_index.load_transfer import TransferError, decode

    (tmp_path / "0.arrow").write_bytes(b"ARROW1\x00\x00" + os.urandom(64))
    with pytest.raises(TransferError):
        decode({"frame": "0.arrow"}, tmp_path)
