"""Index benchmark on the KramaBench lake: full index, no-change re-index, one-file change, big-CSV profiler RSS.

usage: python benchmarks/index_bench.py [--lake PATH] [--big-csv-gb 2] [--skip-big]
Copies the lake to a scratch folder (the original is never written), runs `dslake index` as a user would, and
prints the figures the README's performance section quotes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DSLAKE = [sys.executable, str(HERE.parent / "cli.py")]


def run_index(lake: Path, catalog: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run([*DSLAKE, "index", str(lake), "--catalog", str(catalog), "--json"],
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    return wall, json.loads(proc.stdout)


def big_csv_rss(size_gb: float, scratch: Path) -> tuple[float, float, float]:
    """Write a CSV of about size_gb and profile it in a fresh process; return (GB, seconds, peak RSS MB)."""
    path = scratch / "big.csv"
    row = "2024-01-01T00:00:00,station_{i},{v:.4f},{w},ok,some free text describing the reading\n"
    target = int(size_gb * (1 << 30))
    with open(path, "w") as fh:
        fh.write("timestamp,station,value,count,flag,comment\n")
        block = "".join(row.format(i=i % 977, v=i * 0.37, w=i % 1000) for i in range(100_000))
        while fh.tell() < target:
            fh.write(block)
    code = (
        "import resource, sys, time, json\n"
        "from pathlib import Path\n"
        "from dslake_index.profilers.registry import profile_path\n"
        "from dslake_index.profilers.base import Limits\n"
        "t = time.perf_counter(); p = profile_path(Path(sys.argv[1]), Limits()); dt = time.perf_counter() - t\n"
        "print(json.dumps({'seconds': dt, 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
        " 'rows': p.tables[0].n_rows if p.tables else None}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                         cwd=HERE.parent)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    size = path.stat().st_size / (1 << 30)
    path.unlink()
    return size, data["seconds"], data["rss_mb"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lake", default=str(HERE.parent.parent / "shared" / "kramabench" / "lake"))
    parser.add_argument("--big-csv-gb", type=float, default=2.0)
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()
    source = Path(args.lake)
    if not source.is_dir():
        sys.exit(f"lake not found: {source} (run ../shared/kramabench/unpack)")
    with tempfile.TemporaryDirectory(prefix="dslake-bench-") as tmp:
        scratch = Path(tmp)
        lake = scratch / "lake"
        shutil.copytree(source, lake, ignore=shutil.ignore_patterns(".dslake", ".complete"))
        catalog = scratch / "catalog"
        n_files = sum(len(files) for _, _, files in os.walk(lake))
        print(f"lake: {source} ({n_files} files), cores: {os.cpu_count()}")
        wall, full = run_index(lake, catalog)
        print(f"full index from empty:    {wall:6.1f} s wall ({full['seconds']:.1f} s in index; "
              f"{full['added']} files, {full['entries']} entries, {full['families']} families, "
              f"{full['failed']} failed, {full['embedded']} embedded)")
        wall, again = run_index(lake, catalog)
        print(f"re-index, nothing changed: {wall:5.2f} s wall ({again['seconds']:.2f} s in index; "
              f"profiled {again['profiled']})")
        victim = sorted(p for p in lake.rglob("*.csv"))[0]
        with open(victim, "a") as fh:
            fh.write("\n")
        wall, one = run_index(lake, catalog)
        print(f"re-index, one file changed: {wall:4.2f} s wall ({one['seconds']:.2f} s in index; "
              f"changed {one['changed']}, profiled {one['profiled']}, embedded {one['embedded']})")
        size = sum(p.stat().st_size for p in catalog.rglob("*") if p.is_file())
        print(f"catalog size: {size / 1e6:.1f} MB")
        if not args.skip_big:
            gb, seconds, rss = big_csv_rss(args.big_csv_gb, scratch)
            print(f"profile a {gb:.2f} GB CSV: {seconds:.1f} s, peak RSS {rss:.0f} MB")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of any child process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
