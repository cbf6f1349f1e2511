"""Index benchmark on the KramaBench lake: full index, no-change re-index, one-file change, big-CSV profiler RSS.

usage: python benchmarks/index_bench.py [--lake PATH] [--big-csv-gb 2] [--skip-big] [--phases-only]
Copies the lake to a scratch folder (the original is never written), runs `dslake index` as a user would, and
prints the figures the README's performance section quotes, with a per-phase profile of the first index (from
the `phases` of `dslake index --json`, index/timings.py): wall and CPU seconds per phase of the coordinator, and
the CPU the profiler processes spent per file on hashing and on profiling each format (summed over processes).
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


def workers_cpu(phases: dict) -> float:
    """Return the CPU seconds the profiler processes spent, summed over their `workers: ...` phases.

    The confined pool's workers are not children this benchmark reaps (they run under the profile server), so
    RUSAGE_CHILDREN leaves their CPU out: each worker times its own files, and the index reports the sums.
    """
    return sum(figures["cpu"] for name, figures in phases.items() if name.startswith("workers:"))


def run_index(lake: Path, catalog: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([*DSLAKE, "index", str(lake), "--catalog", str(catalog), "--json"],
                          capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = json.loads(proc.stdout)
    summary["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary["workers_cpu"] = workers_cpu(summary.get("phases") or {})
    summary["process_wall"] = wall
    return wall, summary


# The order phases are printed in (index/timings.py names them); others follow in the order they came.
_ORDER = ("scan", "plan", "profile: whole pool (wall)", "workers: hash", "workers: lookup", "workers: profile",
          "workers: serialize", "manifest:", "entries: whole rebuild", "entries:", "vectors: whole sync", "vectors:")


def print_phases(summary: dict) -> None:
    """Print where one index run's time went: the process, then each phase (wall, CPU, count, rate)."""
    phases = summary.get("phases") or {}
    scan = phases.get("scan", {}).get("wall", 0.0)
    outside = summary["process_wall"] - summary["seconds"] - scan
    print(f"  {'phase':44} {'wall s':>8} {'cpu s':>8} {'n':>6}  rate")
    print(f"  {'whole process (dslake index, as a user runs it)':44} {summary['process_wall']:8.2f} "
          f"{summary['process_cpu'] + summary['workers_cpu']:8.2f}        (cpu: the process, the children it "
          "reaped and the profiler workers)")
    print(f"  {'  of it the profiler workers (workers: rows)':44} {'':8} {summary['workers_cpu']:8.2f}")
    print(f"  {'  start-up, imports, catalog open, checks':44} {outside:8.2f}")

    def rank(item: tuple[str, dict]) -> tuple[int, float]:
        name, figures = item
        place = next((i for i, prefix in enumerate(_ORDER) if name.startswith(prefix)), len(_ORDER))
        return place, -figures["cpu"]

    for name, figures in sorted(phases.items(), key=rank):
        nested = name.startswith(("workers:", "manifest:", "entries: ", "vectors: ")) and "whole" not in name
        rate = f"{figures['n'] / figures['wall']:.0f}/s" if figures["wall"] > 0.005 and figures["n"] > 1 else ""
        label = ("    " if nested else "  ") + name
        print(f"  {label:44} {figures['wall']:8.2f} {figures['cpu']:8.2f} {figures['n']:6d}  {rate}")
    print("  (workers: CPU summed over the profiler processes, each file timed in its process; 'manifest:' runs "
          "inside the pool's wall time)")


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
    parser.add_argument("--phases-only", action="store_true", help="only the first index and its profile")
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
        print(f"full index from empty:    {wall:6.1f} s wall, {full['process_cpu'] + full['workers_cpu']:.1f} "
              f"CPU-s ({full['workers_cpu']:.1f} of them the profiler workers'; {full['seconds']:.1f} s in index; "
              f"{full['added']} files, {full['entries']} entries, {full['families']} families, "
              f"{full['failed']} failed, {full['embedded']} embedded)")
        print_phases(full)
        if args.phases_only:
            return
        wall, again = run_index(lake, catalog)
        print(f"re-index, nothing changed: {wall:5.2f} s wall ({again['seconds']:.2f} s in index; "
              f"profiled {again['profiled']})")
        print_phases(again)
        victim = sorted(p for p in lake.rglob("*.csv"))[0]
        with open(victim, "a") as fh:
            fh.write("\n")
        wall, one = run_index(lake, catalog)
        print(f"re-index, one file changed: {wall:4.2f} s wall ({one['seconds']:.2f} s in index; "
              f"changed {one['changed']}, profiled {one['profiled']}, embedded {one['embedded']})")
        print_phases(one)
        size = sum(p.stat().st_size for p in catalog.rglob("*") if p.is_file())
        print(f"catalog size: {size / 1e6:.1f} MB")
        if not args.skip_big:
            gb, seconds, rss = big_csv_rss(args.big_csv_gb, scratch)
            print(f"profile a {gb:.2f} GB CSV: {seconds:.1f} s, peak RSS {rss:.0f} MB")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of any child process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
