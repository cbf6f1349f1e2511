"""`dslake index --watch` re-indexes a changed file without being asked again."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_watch_reindexes_after_a_change(table_lake):
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "cli.py"), "index", str(table_lake), "--watch", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    summaries: list[dict] = []
    buffer: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            buffer.append(line)
            if line.startswith("}"):
                summaries.append(json.loads("".join(buffer)))
                buffer.clear()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while not summaries and time.monotonic() < deadline:
            time.sleep(0.2)
        assert summaries and summaries[0]["added"] == 8
        time.sleep(1.0)  # let the watcher start
        (table_lake / "sales.csv").write_text("region,units\nwest,1\n")
        while len(summaries) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(summaries) >= 2, proc.stderr.read() if proc.poll() is not None else "no second summary"
        assert summaries[1]["changed"] == 1 and summaries[1]["profiled"] == 1
        assert summaries[1]["unchanged"] == 0  # only the file the watcher saw was looked at, not the whole lake
    finally:
        proc.terminate()
        proc.wait(timeout=20)
