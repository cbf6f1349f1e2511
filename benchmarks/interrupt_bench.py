"""Ctrl-C during a first index: how long `dslake index` takes to exit, and how many files it kept.

usage: python benchmarks/interrupt_bench.py [--lake PATH] [--at 1,2,4,8] [--cold]
Each trial indexes the lake from scratch into a scratch catalog (--catalog; the lake is never written), sends
SIGINT to the process group after the given seconds (what a terminal's Ctrl-C does: the profilers and their
fork server get it too), and prints the exit code, the seconds from the signal to the exit and to the last
process of the session gone, the files kept in the manifest, and any traceback printed. --cold gives each run
an empty ONNX model cache, as on a machine that has never embedded (a first export takes 15-55 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DSLAKE = [sys.executable, str(HERE.parent / "cli.py")]


def alive(sid: int) -> bool:
    rows = subprocess.run(["ps", "-eo", "sid=,stat="], capture_output=True, text=True).stdout.splitlines()
    return any(row.split()[:1] == [str(sid)] and not row.split()[1].startswith("Z") for row in rows)


def trial(lake: Path, scratch: Path, after: float, cold: bool) -> str:
    catalog = scratch / "catalog"
    shutil.rmtree(catalog, ignore_errors=True)
    env = dict(os.environ)
    if cold:
        shutil.rmtree(scratch / "models", ignore_errors=True)
        env["DSLAKE_EMBED_CACHE_DIR"] = str(scratch / "models")
    proc = subprocess.Popen([*DSLAKE, "index", str(lake), "--catalog", str(catalog)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    time.sleep(after)
    if proc.poll() is not None:
        return f"Ctrl-C at {after:4.1f} s: the index had already finished"
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    output, _ = proc.communicate()
    exited = time.monotonic() - sent
    while alive(proc.pid) and time.monotonic() - sent < 120:
        time.sleep(0.05)
    gone = time.monotonic() - sent
    try:
        with sqlite3.connect(f"file:{catalog / 'manifest.sqlite'}?mode=ro", uri=True) as conn:
            kept = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    except sqlite3.Error:
        kept = 0
    return (f"Ctrl-C at {after:4.1f} s: exit code {proc.returncode}, exited {exited:5.2f} s after it "
            f"(last process gone {gone:5.2f} s), files kept {kept:5d}, tracebacks {output.count('Traceback')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", default=str(HERE.parent.parent / "shared" / "kramabench" / "lake" / "astronomy"))
    parser.add_argument("--at", default="1,2,4,8", help="seconds after the start to press Ctrl-C, one run each")
    parser.add_argument("--cold", action="store_true", help="an empty ONNX model cache for every run")
    args = parser.parse_args()
    lake = Path(args.lake)
    if not lake.is_dir():
        sys.exit(f"lake not found: {lake} (run ../shared/kramabench/unpack)")
    files = sum(len(names) for _, _, names in os.walk(lake))
    print(f"lake {lake} ({files} files), {'cold' if args.cold else 'warm'} ONNX model cache")
    with tempfile.TemporaryDirectory(prefix="dslake-interrupt-") as scratch:
        for after in (float(x) for x in args.at.split(",")):
            print(trial(lake, Path(scratch), after, args.cold), flush=True)


if __name__ == "__main__":
    main()
