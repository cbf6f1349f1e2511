"""The profilers' pool is handed files a window at a time, so a huge lake's first index does not hold every file's
task and profile in memory at once (100k files: ~230 MB of tasks before any work, then every profile's JSON)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from dslake_index import catalog
from dslake_index.collect import collect
from dslake_index.indexer import IndexOptions, IndexSummary, _jobs, _pool_context
from dslake_index.profile_task import limit_memory
from dslake_index.profilers.base import Limits
from dslake_index.scan import FileStat
from pebble import ProcessPool

WINDOW = 3


def test_the_pool_gets_at_most_a_window_of_files_ahead_and_every_result_is_written(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    files = []
    for i in range(11):
        path = lake / f"reading_{i:02d}.csv"
        path.write_text("station,value\n" + "".join(f"s{j},{i * 100 + j}\n" for j in range(5)))
        files.append(FileStat(path.name, path.stat().st_size, path.stat().st_mtime_ns))
    files.append(FileStat("gone.csv", 10, 1))  # listed, then deleted before its profiler ran: recorded, not fatal
    db_path = tmp_path / "manifest.sqlite"
    conn = catalog.connect(db_path)
    catalog.migrate(conn)
    options = IndexOptions(jobs=2, limits=Limits(), timeout_s=60.0, memory_mb=0, hash_algorithm="blake2b",
                           write_batch=4, min_members=3, max_members_listed=40, script_memory_mb=4096)
    summary = IndexSummary()
    ahead_at_start: list[int] = []

    with ProcessPool(max_workers=2, initializer=limit_memory, initargs=(0,), context=_pool_context()) as pool:
        def counted():
            for f, start in _jobs(pool, lake, files, db_path, options):
                recorded = summary.added + summary.changed
                ahead_at_start.append(len(ahead_at_start) - recorded)  # started, not yet recorded
                yield f, start

        collect(conn, counted(), WINDOW, {f.path for f in files}, options, summary, lambda event, data: None,
                threading.Event())

    assert len(ahead_at_start) == len(files)
    assert max(ahead_at_start) == WINDOW - 1 and min(ahead_at_start) >= 0
    rows = dict(conn.execute("SELECT path, status FROM files").fetchall())
    assert rows == {**{f.path: "ok" for f in files[:-1]}, "gone.csv": "stale"}
    assert conn.execute("SELECT count(DISTINCT hash) FROM profiles").fetchone()[0] == 11
    assert summary.added == len(files) and summary.profiled == 11
    conn.close()
    with sqlite3.connect(db_path) as check:  # written for good, not left in a batch
        assert check.execute("SELECT count(*) FROM files").fetchone()[0] == len(files)
