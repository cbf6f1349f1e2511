"""Cluster benchmark (issue 19): the generated lake indexed locally vs on a loopback Dask cluster of 1 and 2 workers.

usage: python benchmarks/cluster_bench.py [--files 10000] [--workers 1,2] [--scratch DIR] [--seed 7]
                                          [--batches 1,8] [--batch-files 2000]
The lake is benchmarks/make_lake.py's (cached under --scratch as scale_bench.py caches it). Each run indexes it
from an empty catalog in this process with `Lake.index()`: locally (the pebble pool, --jobs = cores), then on a
scheduler on 127.0.0.1 with N workers of one thread each (`dask worker --nworkers 1 --nthreads 1`, started per
run, so each run pays its workers' start as a first index on a fresh cluster would). It prints, per run:
profiling files/s (from the plan to the last profile written), total files/s, and where the coordinator's time
went: writing results to the manifest (rows/s of collect.write_results), rebuilding entries, embedding cards and
Chroma upserts. --batches compares files per task (index/cluster.py MAX_BATCH) on the first --batch-files files.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from scale_bench import cached_lake  # noqa: E402  (a sibling script, not a package)


class Clock:
    """Time the phases of one index run from its progress events, and the coordinator's writes and upserts."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}
        self.files = 0
        self.write_s = 0.0
        self.rows = 0
        self.upsert_s = 0.0

    def progress(self, event: str, data: dict[str, Any]) -> None:
        self.marks.setdefault(event, time.perf_counter())
        if event == "file":
            self.files += 1
            self.marks["last_file"] = time.perf_counter()


def hooked(clock: Clock) -> Callable[[], None]:
    """Wrap collect.write_results and VectorStore.upsert to time them; return the undo."""
    from dslake_index import collect, vectors

    write, upsert = collect.write_results, vectors.VectorStore.upsert

    def timed_write(conn: Any, results: list[Any]) -> None:
        started = time.perf_counter()
        write(conn, results)
        clock.write_s += time.perf_counter() - started
        clock.rows += len(results)

    def timed_upsert(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return upsert(self, *args, **kwargs)
        finally:
            clock.upsert_s += time.perf_counter() - started

    collect.write_results = timed_write
    vectors.VectorStore.upsert = timed_upsert  # type: ignore[method-assign]

    def undo() -> None:
        collect.write_results = write
        vectors.VectorStore.upsert = upsert  # type: ignore[method-assign]

    return undo


class LoopbackCluster:
    """A scheduler on 127.0.0.1 and N one-thread workers under their nannies, each process in its own group."""

    def __init__(self, workers: int, work: Path) -> None:
        import distributed

        work.mkdir(parents=True)
        info = work / "scheduler.json"
        self.procs = [self._start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(info)], work)]
        while not (info.exists() and info.stat().st_size):
            time.sleep(0.05)
        self.address = json.loads(info.read_text())["address"]
        self.procs += [self._start(["distributed.cli.dask_worker", self.address, "--nworkers", "1", "--nthreads",
                                    "1", "--no-dashboard", "--local-directory", str(work / f"w{i}")], work)
                       for i in range(workers)]
        started = time.perf_counter()
        with distributed.Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=120)
        self.start_s = time.perf_counter() - started

    @staticmethod
    def _start(args: list[str], work: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", *args], cwd=work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        for proc in self.procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def index_once(lake: Path, catalog: Path, cluster: str | None) -> dict[str, Any]:
    """Index the lake from an empty catalog; return its figures."""
    from dsstar_lake.lake import Lake

    clock = Clock()
    undo = hooked(clock)
    started = time.perf_counter()
    try:
        summary = Lake.open(lake, catalog=catalog).index(progress=clock.progress, cluster=cluster or "")
    finally:
        undo()
    total = time.perf_counter() - started
    marks = clock.marks
    profiling = marks.get("last_file", started) - marks.get("plan", started)
    embed_start = marks.get("embed")
    embedding = (time.perf_counter() - embed_start) if embed_start else 0.0
    return {
        "files": summary.added, "failed": summary.failed, "entries": summary.entries, "embedded": summary.embedded,
        "total_s": round(total, 1), "total_fps": round(summary.added / total, 1),
        "profiling_s": round(profiling, 1), "profiling_fps": round(summary.added / profiling, 1) if profiling else 0,
        "write_s": round(clock.write_s, 2), "write_rows_per_s": round(clock.rows / clock.write_s) if clock.write_s else 0,
        "entries_s": round((embed_start or time.perf_counter()) - marks.get("entries", started), 1),
        "embedding_s": round(embedding, 1), "upsert_s": round(clock.upsert_s, 1),
        "embedding_share": round(embedding / total, 2), "notes": summary.notes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--workers", default="1,2", help="cluster sizes to run (comma-separated; 0 skips)")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "dslake-bench")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batches", default="", help="files per task to compare, e.g. 1,8 (empty: skip)")
    parser.add_argument("--batch-files", type=int, default=2000)
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    args.scratch.mkdir(parents=True, exist_ok=True)
    lake, _, generated = cached_lake(args.files, args.seed, 8, args.scratch)
    print(f"lake: {args.files} files ({lake}; generated in {generated:.0f} s), {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(dir=args.scratch) as tmp:
        work = Path(tmp)
        from dsstar_lake.lake import Lake

        # The model loads once per process: loaded here, no run pays it (nor competes with its profilers for it).
        Lake.open(lake, catalog=work / "warm").index_embedder().encode(["warm up"])
        if not args.skip_local:
            print("local  ", json.dumps(index_once(lake, work / "local", None)), flush=True)
        for n in [int(x) for x in args.workers.split(",") if x.strip() and int(x)]:
            cluster = LoopbackCluster(n, work / f"dask-{n}")
            try:
                figures = index_once(lake, work / f"cluster-{n}", cluster.address)
                print(f"{n} worker{'s' if n > 1 else ''}", json.dumps({"cluster_start_s": round(cluster.start_s, 1),
                                                                       **figures}), flush=True)
            finally:
                cluster.stop()
        if args.batches:
            subset = cached_lake(args.batch_files, args.seed, 8, args.scratch)[0]
            from dslake_index import cluster as cluster_module

            for size in [int(x) for x in args.batches.split(",")]:
                cluster_module.MAX_BATCH = size
                cluster = LoopbackCluster(2, work / f"dask-batch-{size}")
                try:
                    figures = index_once(subset, work / f"batch-{size}", cluster.address)
                    print(f"batch {size} (2 workers, {args.batch_files} files)",
                          json.dumps({k: figures[k] for k in ("profiling_s", "profiling_fps", "total_s")}), flush=True)
                finally:
                    cluster.stop()


if __name__ == "__main__":
    main()
