"""Ctrl-C during a first index: dslake stops at once, keeps every file it profiled, and a plain index finishes.

The interrupt is what a terminal sends: SIGINT to the whole process group (the profilers and their fork server
get it too). It is sent once the run has written its first files, so it lands while most are still queued.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from dslake_index.embed import model_dir, onnx_dir
from dslake_index.sync import check_consistency

FOLDERS, PER_FOLDER = 12, 50  # 600 files: several seconds of profiling on 2 cores, far more than the test waits


def make_lake(root: Path) -> int:
    """Write daily CSVs with distinct contents (so that each is profiled, none reused from another)."""
    for i in range(FOLDERS):
        folder = root / f"station_{i:02d}"
        folder.mkdir(parents=True)
        for day in range(PER_FOLDER):
            rows = "".join(f"2024-03-{1 + day % 28:02d}T{h:02d}:00,s{h % 3},{i * 1000 + day + h / 4}\n"
                           for h in range(24))
            (folder / f"readings_{day:03d}.csv").write_text("timestamp,sensor,value\n" + rows)
    return FOLDERS * PER_FOLDER


def files_written(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM files").fetchone()[0]
    except sqlite3.Error:  # not created yet, or its schema not yet written
        return 0


def session_alive(sid: int) -> list[str]:
    """Processes of a session that still run (zombies left to init do not)."""
    rows = subprocess.run(["ps", "-eo", "sid=,stat=,pid=,args="], capture_output=True, text=True).stdout
    return [row for row in rows.splitlines() if row.split()[:1] == [str(sid)] and not row.split()[1].startswith("Z")]


@pytest.mark.slow
def test_ctrl_c_stops_a_first_index_keeps_what_was_written_and_a_plain_index_finishes(tmp_path, capsys):
    lake, catalog, cache = tmp_path / "lake", tmp_path / "catalog", tmp_path / "models"
    total = make_lake(lake)
    command = [sys.executable, str(REPO / "cli.py"), "index", str(lake), "--catalog", str(catalog)]
    env = {**os.environ, "DSLAKE_INDEX_WRITE_BATCH": "10", "DSLAKE_EMBED_CACHE_DIR": str(cache)}
    # No ONNX model in this cache, and its export lock held, as while another process exports it (a first
    # export takes 15-55 s). The warm-up exported in a thread that Ctrl-C waited for (here: for ever); now the
    # export runs in a child process, which Ctrl-C ends with the rest.
    lock_dir = onnx_dir(model_dir(), cache)
    lock_dir.mkdir(parents=True)
    with open(lock_dir / ".lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while files_written(catalog / "manifest.sqlite") == 0 and proc.poll() is None:
            assert time.monotonic() < deadline, "the index wrote nothing in 120 s"
            time.sleep(0.02)
        assert proc.poll() is None, "the index finished before it could be interrupted: " + proc.stderr.read()
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        try:  # a hang guard, not a timing: queued files or the warm-up held it from 14 s to for ever
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError("Ctrl-C did not stop dslake index within 60 s") from None
        stopped_in = time.monotonic() - sent
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, out, err)
    assert "Traceback" not in err, err  # not from the fork server or a profiler either
    gone_by = time.monotonic() + 30
    while session_alive(proc.pid) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not session_alive(proc.pid), "processes left running after Ctrl-C"
    assert not (lock_dir / "model.onnx").exists()

    # What was written is whole: profiled files with their profiles, nothing half-done but the entries to build.
    with sqlite3.connect(catalog / "manifest.sqlite") as conn:
        kept, ok, profiled = conn.execute(
            "SELECT count(*), coalesce(sum(status = 'ok'), 0), "
            "coalesce(sum(hash IN (SELECT hash FROM profiles)), 0) FROM files").fetchone()
        problems = check_consistency(conn)
    assert 0 < kept < total, (kept, total)
    assert ok == profiled == kept
    assert all("left half-indexed by an interrupted run" in problem for problem in problems), problems

    # A plain index finishes the job without profiling again what was kept.
    env.pop("DSLAKE_EMBED_CACHE_DIR")
    finished = subprocess.run([*command, "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads(finished.stdout)
    assert (summary["added"], summary["unchanged"], summary["failed"]) == (total - kept, kept, 0)
    with sqlite3.connect(catalog / "manifest.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM files WHERE status = 'ok' AND entry_id IS NOT NULL"
                            ).fetchone()[0] == total
        assert check_consistency(conn) == []
    with capsys.disabled():
        print(f"\n[interrupt] {total} files: Ctrl-C after {kept} were written; dslake exited {stopped_in:.2f} s "
              f"later with code 130; a plain index then added the other {total - kept}")
