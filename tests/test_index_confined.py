"""The index's readers of lake bytes run confined (issue 40, item 2): a parser gone wrong in the profilers' pool
cannot read, write or reach anything outside the lake under bubblewrap, and hands dslake JSON, never a pickle.

The probe is a task of the real pool (index/profile_server.py's probe_task), sent through the real channel and run
by a real worker forked from the server's fork server: what it reaches is what a profiler reaches.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest
from dslake_index.confined_pool import ConfinedPool, plain_result, probe_outcome, server_argv
from dslake_index.profilers.base import Limits
from sandbox_helpers import BWRAP_REASON
from table_lakes import write_iceberg

from dsstar_lake.lake import Lake

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")),
    "subprocess",
]


class Listener:
    """A server on 127.0.0.1 that records whatever connects to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.heard: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.heard.append(conn.recv(100))

    def close(self) -> None:
        self.sock.close()


def _lake(tmp_path: Path) -> tuple[Path, Path, Path]:
    lake = tmp_path / "lake"
    (lake / ".dslake").mkdir(parents=True)
    (lake / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    (lake / ".dslake" / "manifest.sqlite").write_text("MANIFEST-SECRET")
    (lake / ".env").write_text("ENV-SECRET")  # a hidden name: the index never reads it
    host = tmp_path / "host"
    host.mkdir()
    (host / "id_rsa").write_text("HOST-SECRET")
    return lake, lake / ".dslake", host


def _probe(pool: ConfinedPool, read: Path, write: Path, port: int) -> dict[str, str]:
    future = pool.schedule({"task": "probe", "read": str(read), "write": str(write), "connect": ["127.0.0.1", port]},
                           30.0, check=probe_outcome)
    return future.result(timeout=120)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_profiler_reaches_nothing_outside_the_lake(tmp_path, backend):
    lake, catalog, host = _lake(tmp_path)
    listener = Listener()
    pool = ConfinedPool(lake, [catalog], backend, ["dslake_index.profile_task"])
    try:
        pool.start(1, 1024, {}, "blake2b", [])
        hello = pool.hello.result()
        assert pool.backend == backend
        outside = _probe(pool, host / "id_rsa", host / "planted.txt", listener.port)
        catalog_read = _probe(pool, catalog / "manifest.sqlite", lake / "planted.txt", listener.port)
        in_lake = _probe(pool, lake / "sales.csv", catalog / "planted.txt", listener.port)
        home = _probe(pool, Path.home() / ".bashrc", Path("/tmp/planted.txt"), listener.port)
        hidden = _probe(pool, lake / ".env", Path("/tmp/planted.txt"), listener.port)
    finally:
        pool.close()
        listener.close()
    print(f"\n{backend}: host file {outside['read']!r}; write outside {outside['write']!r}; "
          f"127.0.0.1 {outside['connect']!r}; catalog {catalog_read['read']!r}; write in lake "
          f"{catalog_read['write']!r}; the lake's .env {hidden['read']!r}")
    assert in_lake["read"].startswith("ok: region,units")  # the lake itself is readable: profiling works
    if hello.get("network_namespace") or backend == "bwrap":
        assert outside["connect"] != "ok" and listener.heard == []
    if backend == "bwrap":
        assert "HOST-SECRET" not in outside["read"] and outside["read"].startswith("FileNotFoundError")
        assert outside["write"] != "ok" and not (host / "planted.txt").exists()
        assert "MANIFEST-SECRET" not in catalog_read["read"]  # the catalog inside the lake is blanked
        assert catalog_read["write"] != "ok" and not (lake / "planted.txt").exists()  # the lake is read-only
        assert in_lake["write"] != "ok" and not (catalog / "planted.txt").exists()
        assert not home["read"].startswith("ok")
        assert "ENV-SECRET" not in hidden["read"]  # blanked: an empty file
    else:  # the documented losses of the plain process (docs/safety.md): your user's files are reachable
        assert outside["read"] == "ok: HOST-SECRET" and (host / "planted.txt").exists()


def test_the_channel_takes_json_data_only():
    profile = '{"format": "csv"}'
    good = {"hash": "ab", "profile": profile, "format": "csv", "signature": "s", "size": 3, "mtime_ns": 4,
            "error": None, "error_kind": None, "work_seconds": {"hash": [0.1, 0.1]}}
    assert plain_result(good)["profile"] == profile and plain_result(good)["work_seconds"] == {"hash": [0.1, 0.1]}
    for bad in (["not", "a", "dict"], {**good, "size": "3"}, {**good, "profile": "{not json"},
                {**good, "profile": "[1]"}, {**good, "hash": {"$": 1}}):
        assert plain_result(bad)["error_kind"] == "crash"
    # dslake's side of the channel unpickles nothing: no pool of multiprocessing or pebble, no pickle.load(s)
    tree = ast.parse(Path(sys.modules[ConfinedPool.__module__].__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module.split(".")[0] for node in ast.walk(tree)
                                            if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"multiprocessing", "pebble", "dill", "cloudpickle"}
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                and node.attr in ("load", "loads", "Unpickler") and getattr(node.value, "id", "") == "pickle"]


def test_the_bwrap_command_binds_the_lake_read_only_and_no_catalog_or_home(tmp_path):
    lake, catalog, host = _lake(tmp_path)
    argv = server_argv("bwrap", sys.executable, lake, [catalog], [])
    pairs = list(zip(argv, argv[1:], strict=False))
    assert ("--ro-bind", str(lake.resolve())) in pairs and ("--bind", str(lake.resolve())) not in pairs
    assert ("--tmpfs", str(catalog.resolve())) in pairs and "--unshare-net" in argv and "--die-with-parent" in argv
    assert str(Path.home()) not in argv[:argv.index("--")] or Path(sys.prefix).is_relative_to(Path.home())


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_profiles_in_the_confined_server(tmp_path, monkeypatch, backend):
    lake, catalog, host = _lake(tmp_path)
    (catalog / "manifest.sqlite").unlink()
    catalog.rmdir()
    (lake / "keys.csv").symlink_to(host / "id_rsa")  # a link leaving the lake: skipped unless followed
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    summary = Lake.open(lake).index()
    assert summary.profiled == 1 and summary.failed == 0 and not summary.notes
    monkeypatch.setenv("DSLAKE_INDEX_FOLLOW_SYMLINKS", "true")  # the user's choice: the link's folder is bound
    summary = Lake.open(lake).index()
    assert summary.added == 1 and summary.failed == 0


def test_auto_falls_back_to_a_plain_process_and_says_so(tmp_path, monkeypatch):
    lake, catalog, _ = _lake(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    pool = ConfinedPool(lake, [catalog], "auto", [])
    try:
        pool.start(1, 1024, {}, "blake2b", [])
        assert pool.backend == "subprocess" and "bubblewrap did not start" in pool.note
        assert "region,units" in _probe(pool, lake / "sales.csv", tmp_path / "w.txt", 9)["read"]
    finally:
        pool.close()
    refused = ConfinedPool(lake, [catalog], "bwrap", [])
    with pytest.raises(Exception, match="could not start"):
        refused.start(1, 1024, {}, "blake2b", [])
    refused.close()
    assert Limits()  # the limits the server is handed are profilers.base.Limits' fields


def _hostile(table: Path, planted: Path) -> Path:
    """Make an Iceberg table's metadata name `subprocess.Popen` as its FileIO, its other properties the argv: a
    shell that writes its parent's pid (the process that read the table) to planted, whole or not at all."""
    metadata = max((table / "metadata").glob("*.metadata.json"))
    doc = json.loads(metadata.read_text())
    command = f"echo $PPID > {planted}.new && mv {planted}.new {planted}"
    doc["properties"] = {"/bin/sh": "", "-c": "", command: "", "py-io-impl": "subprocess.Popen"}
    metadata.write_text(json.dumps(doc))
    return planted


@pytest.mark.parametrize("backend", BACKENDS)
def test_iceberg_metadata_naming_popen_as_its_file_io_runs_nothing_in_dslake(tmp_path, monkeypatch, backend):
    """Issue 40's critical attack: `py-io-impl: subprocess.Popen` in a table's metadata, its other properties the
    argv. The index reads table metadata in the confined server: under bwrap the command cannot write outside the
    lake; without it, it runs in the server's worker, never in dslake's own process."""
    lake = tmp_path / "lake"
    table, _ = write_iceberg(lake)
    planted = _hostile(table, tmp_path / "PWNED")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    summary = Lake.open(lake).index()
    print(f"\n{backend}: planted file {'written by pid ' + planted.read_text().strip() if planted.exists() else 'absent'}"
          f"; dslake is pid {os.getpid()}")
    assert summary.entries >= 1
    if backend == "bwrap":
        assert not planted.exists()
    else:
        assert not planted.exists() or planted.read_text().strip() != str(os.getpid())


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_serve_preview_reads_in_a_confined_worker(tmp_path, monkeypatch, backend):
    """A GET of an entry page (any origin can make one) reads the table in the preview's worker: a worker of a
    confined server, whose answer is data; the page's HTML is made in dslake's process. The Iceberg table's
    metadata is turned hostile after it was indexed (`py-io-impl: subprocess.Popen`)."""
    from dsstar_lake.web.preview import Previewer

    lake_dir = tmp_path / "lake"
    table, _ = write_iceberg(lake_dir)
    (lake_dir / "sales.csv").write_text("region,units\nnorth,<b>10</b>\nsouth,4\n")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    lake = Lake.open(lake_dir)
    lake.index()
    planted = _hostile(table, tmp_path / "PWNED")
    previewer = Previewer.from_settings(lake.settings)
    listener = Listener()
    try:
        sales = previewer.preview(lake, "sales.csv")
        events = previewer.preview(lake, str(table.relative_to(lake_dir)))
        assert previewer._confined is not None and previewer._confined.backend == backend
        reach = _probe(previewer._confined, tmp_path / "host-file", tmp_path / "planted-by-preview", listener.port)
    finally:
        previewer.close()
        listener.close()
    print(f"\n{backend}: preview of the hostile table: {events['error']!r}; planted file "
          f"{'written by pid ' + planted.read_text().strip() if planted.exists() else 'absent'} (dslake: {os.getpid()})"
          f"; the preview's worker: write outside {reach['write']!r}, 127.0.0.1 {reach['connect']!r}")
    assert sales["error"] is None and "&lt;b&gt;10&lt;/b&gt;" in sales["tables"][0]["html"]  # escaped here
    assert "<b>10</b>" not in sales["tables"][0]["html"]
    if backend == "bwrap":
        # (a write next to the lake's mount point lands on the sandbox's own /tmp, never on the host's)
        assert not planted.exists() and not (tmp_path / "planted-by-preview").exists() and listener.heard == []
    else:
        assert not planted.exists() or planted.read_text().strip() != str(os.getpid())


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hint_checker_runs_load_lines_in_a_confined_worker(tmp_path, monkeypatch, backend):
    """benchmarks/load_hints.py runs every dataset's load line: on a table turned hostile after it was indexed,
    that line builds the FileIO its metadata names, in a confined worker."""
    import sqlite3

    from dslake_index.hint_check import check_catalog_datasets, check_files

    lake_dir = tmp_path / "lake"
    table, _ = write_iceberg(lake_dir)
    (lake_dir / "sales.csv").write_text("region,units\nnorth,10\nsouth,4\n")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    Lake.open(lake_dir).index()
    planted = _hostile(table, tmp_path / "PWNED")
    conn = sqlite3.connect(lake_dir / ".dslake" / "manifest.sqlite")
    (check,) = check_catalog_datasets(lake_dir, conn, backend=backend)
    (sales,) = check_files(lake_dir, ["sales.csv"], workers=1, timeout_s=60, backend=backend)
    print(f"\n{backend}: the hostile table's check: {check.mismatches[0].detail if check.mismatches else 'ok'}; "
          f"planted file {'written by pid ' + planted.read_text().strip() if planted.exists() else 'absent'} "
          f"(dslake: {os.getpid()})")
    assert sales.ok and sales.executed >= 1  # the checker still checks
    # dslake picks the table's FileIO (index/table_io.py), so the hostile property is never used and the line reads
    # the table; the worker that ran it is confined besides (the probe tests above show what it can reach)
    assert check.executed == 1 and not check.mismatches, check.mismatches
    assert not planted.exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_a_parser_prints_reaches_the_terminal_without_its_escape_sequences(tmp_path, capfd, backend):
    """The server reads hostile files, and a parser's stderr used to be dslake's own, so the user's terminal: an
    OSC 52 clipboard write or a bidi override printed there is passed on with its control characters replaced."""
    lake, catalog, _ = _lake(tmp_path)
    hostile = b"\x1b]52;c;SElKQUNLRUQ=\x07warning from a parser \xe2\x80\xae gnirts\n"
    pool = ConfinedPool(lake, [catalog], backend, [])
    try:
        pool.start(1, 1024, {}, "blake2b", [])
        answer = pool.call("os:write", (2, hostile), 60.0)  # a worker writes to its stderr, as a library would
        assert answer == {"value": len(hostile)}
    finally:
        pool.close()
    err = capfd.readouterr().err
    assert "warning from a parser" in err and "gnirts" in err  # the words still reach the user
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
