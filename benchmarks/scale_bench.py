"""Scaling benchmark: how index time, re-index time, size, memory, search latency and recall grow with the lake.

usage: python benchmarks/scale_bench.py [--sizes 1000,10000,100000] [--jobs N] [--seed 7] [--out results.md]
                                        [--scratch DIR] [--profile] [--max-minutes 40] [--search-only]
For each N it generates a synthetic lake with benchmarks/make_lake.py (cached under --scratch, keyed by N, seed
and big-file size, so reruns skip generation), indexes it from empty with the real `dslake index` CLI, re-indexes
with nothing changed and with one file changed, measures the catalog on disk and the peak memory of the index
processes, times warm searches in one process, and runs `dslake eval retrieval` on the generated questions.
Before a size it extrapolates its whole run from the previous size and skips it if that would pass --max-minutes;
the report is rewritten after every size, so an interrupted run keeps what it measured.
--profile runs the full index under cProfile and prints where the parent's time went, plus per-format profiler
times measured in this process (the pool workers are not under cProfile).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CLI = str(REPO / "cli.py")
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))  # this checkout first (the installed names dsstar_lake, dslake_index come from its venv)

from make_lake import make_lake  # noqa: E402  (a sibling script, not a package)

TARGETS = "no-change re-index of 100k <= 10 s; one-file change <= 3 s at every N; search p95 <= 150 ms at 100k; " \
          "peak RSS <= 2 GB at 100k; recall@10 at 100k within 0.05 of 1k"


# ---- running a command and watching its memory ------------------------------------------------------------


@dataclass
class Run:
    """One finished command: wall seconds, stdout, and its peak memory."""

    wall: float
    stdout: str
    max_rss_mb: float  # largest single process of the tree (wait4's ru_maxrss covers reaped descendants)
    tree_pss_mb: float  # largest sum of PSS over the whole process tree, sampled every 0.2 s


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: fields start after the last ')'.
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree(pid: int) -> list[int]:
    kids = _children_map()
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(kids.get(p, []))
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(args: list[str], cwd: Path | None = None, check: bool = True) -> Run:
    """Run a command, sampling the PSS of its process tree, and return its wall time, output and peak memory."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(args, stdout=out, stderr=err, cwd=cwd)
        peak = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.2):
                peak = max(peak, sum(_pss_kb(p) for p in _tree(proc.pid)))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed with {proc.returncode}:\n{stderr[-3000:]}")
    return Run(wall, stdout, usage.ru_maxrss / 1024, peak / 1024)


def dslake(*args: str, profile_to: Path | None = None) -> Run:
    """Run the real CLI in a fresh process (optionally under cProfile)."""
    prefix = [sys.executable, "-m", "cProfile", "-o", str(profile_to)] if profile_to else [sys.executable]
    return run([*prefix, CLI, *args], cwd=REPO)


# ---- the lake ----------------------------------------------------------------------------------------------


def cached_lake(n: int, seed: int, big_mb: int, scratch: Path) -> tuple[Path, Path, float]:
    """Return (lake, questions, seconds spent generating), generating only if no complete copy is cached."""
    lake = scratch / f"lake-{n}-s{seed}-b{big_mb}"
    marker = scratch / f"{lake.name}.complete"
    questions = scratch / f"{lake.name}.questions.jsonl"
    if marker.exists() and lake.is_dir() and questions.exists():
        return lake, questions, 0.0
    shutil.rmtree(lake, ignore_errors=True)
    marker.unlink(missing_ok=True)
    started = time.perf_counter()
    make_lake(n, lake, seed, big_mb)
    marker.write_text(json.dumps({"n": n, "seed": seed, "big_mb": big_mb, "at": time.time()}))
    return lake, questions, time.perf_counter() - started


class Touched:
    """Append a row to one lake file, and put its bytes and times back afterwards (the cached lake stays clean)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = path.read_bytes()
        st = path.stat()
        self.times = (st.st_atime_ns, st.st_mtime_ns)

    def __enter__(self) -> Touched:
        last = self.data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        # More rows (so the card changes), and a count unlikely to have been used before: content seen before
        # reuses its cached profile, and the benchmark wants to time the profiling too.
        rows = 1 + time.time_ns() // 1000 % 199
        with open(self.path, "ab") as fh:
            fh.write((last + b"\n") * rows)
        return self

    def __exit__(self, *exc: object) -> None:
        self.path.write_bytes(self.data)
        os.utime(self.path, ns=self.times)


def pick_victims(lake: Path) -> tuple[Path, Path]:
    """Return a one-off CSV (its own entry) and a member of a daily-CSV family."""
    single = sorted((lake / "amber_coast" / "reports").glob("*.csv"))
    member = sorted(lake.glob("*/*/daily_0/*.csv")) or sorted(lake.glob("*/*/daily_*/*.csv"))
    if not single:
        single = sorted(lake.glob("*/reports/*.csv"))
    return single[0], member[0]


def watch_change(lake: Path, catalog: Path, victim: Path) -> dict[str, Any]:
    """Run `dslake index --watch`, change one file, and time until the watcher's re-index has reported."""
    proc = subprocess.Popen([sys.executable, CLI, "index", str(lake), "--catalog", str(catalog), "--watch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    summaries: list[tuple[float, dict[str, Any]]] = []

    def read() -> None:
        buffer: list[str] = []
        for line in proc.stdout or ():
            buffer.append(line)
            if line.startswith("}"):
                summaries.append((time.perf_counter(), json.loads("".join(buffer))))
                buffer.clear()

    def wait_for(count: int, limit_s: float = 600.0) -> None:
        deadline = time.monotonic() + limit_s
        while len(summaries) < count and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        if len(summaries) < count:
            raise RuntimeError("dslake index --watch gave no summary in time")

    threading.Thread(target=read, daemon=True).start()
    try:
        wait_for(1)  # the first pass scans the whole lake
        time.sleep(1.0)
        started = time.perf_counter()
        with Touched(victim):
            wait_for(2)
        done, summary = summaries[1]
        wait_for(3)  # putting the file back is a change too: let it land so the catalog matches the lake
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"latency_s": round(done - started, 2), "index_s": summary["seconds"], "looked_at":
            summary["added"] + summary["changed"] + summary["unchanged"], "profiled": summary["profiled"],
            "embedded": summary["embedded"]}


def dir_size(path: Path) -> int:
    """Return the bytes of every file under path."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ---- search latency (run in its own process: one Lake, warmed up, like a long-lived agent) ---------------


def search_latency(catalog: str, questions: str, count: int) -> dict[str, Any]:
    """Open the catalog, warm up, time `count` searches; return wall and per-part milliseconds."""
    from dsstar_lake.lake import Lake

    queries = [json.loads(line)["query"] for line in Path(questions).read_text().splitlines() if line.strip()]
    step = max(1, len(queries) // count)
    chosen = queries[::step][:count]
    lake = Lake.open(None, catalog=catalog)
    started = time.perf_counter()
    lake.retriever().warm_up()
    for q in queries[-3:]:
        lake.search(q, 10)
    warm_s = time.perf_counter() - started
    walls, parts = [], []
    for q in chosen:
        t0 = time.perf_counter()
        lake.search(q, 10)
        walls.append((time.perf_counter() - t0) * 1000)
        parts.append(vars(lake.retriever().last_timing).copy())
    mean = {k: round(statistics.fmean(p[k] for p in parts), 1) for k in parts[0]}
    return {"n": len(walls), "warm_up_s": round(warm_s, 2), "p50_ms": round(_pct(walls, 50), 1),
            "p95_ms": round(_pct(walls, 95), 1), "max_ms": round(max(walls), 1), "mean_parts_ms": mean}


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure_search(n: int, catalog: Path, questions: Path, queries: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Time warm searches in a fresh process and run `dslake eval retrieval` on the generated questions."""
    search = run([sys.executable, __file__, "--search-latency", str(catalog), str(questions),
                  "--queries", str(queries)], cwd=REPO)
    latency = json.loads(search.stdout.strip().splitlines()[-1])
    recall_run = dslake("eval", "retrieval", "--tasks", str(questions), "--catalog", str(catalog), "-k", "10",
                        "--json")
    report = json.loads(recall_run.stdout)
    overall = report["summary"]["overall"]
    recall = {"recall@10": overall["recall@10"], "all_found@10": overall["all_found@10"], "n": overall["n"],
              "skipped": len(report["skipped"]), "seconds": round(recall_run.wall, 1),
              "by_domain": {k: v["recall@10"] for k, v in report["summary"].items() if k != "overall"}}
    print(f"[{n}] search p50 {latency['p50_ms']} ms p95 {latency['p95_ms']} ms; "
          f"recall@10 {overall['recall@10']} on {overall['n']} questions", flush=True)
    return latency, recall


def search_only(sizes: list[int], args: argparse.Namespace) -> None:
    """Re-measure everything but the full index on the catalogs a previous run left: re-index (nothing changed,
    one file), search latency, recall, and a one-file change under --watch."""
    lines = ["| files | entries | no-change s | 1 file changed s (in index) | 1 file changed, named s (in index) "
             "| search ms p50 / p95 (max) | recall@10 (questions) | all found@10 "
             "| --watch, 1 file changed: s to report (in index) | recall@10 by question kind |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for n in sizes:
        catalog = args.scratch / f"catalog-{n}"
        questions = args.scratch / f"lake-{n}-s{args.seed}-b{args.big_mb}.questions.jsonl"
        if not (catalog / "manifest.sqlite").exists() or not questions.exists():
            print(f"[{n}] no catalog or questions under {args.scratch}: run the full benchmark first", flush=True)
            continue
        lake = args.scratch / f"lake-{n}-s{args.seed}-b{args.big_mb}"
        index_once(lake, catalog, args.jobs)  # in step with the lake (and this checkout's rendering)
        again_run, _ = index_once(lake, catalog, args.jobs)
        victim = pick_victims(lake)[0]
        with Touched(victim):
            one_run, one = index_once(lake, catalog, args.jobs)
        index_once(lake, catalog, args.jobs)
        with Touched(victim):
            named_run, named = index_once(lake, catalog, args.jobs, paths=(victim,))
        index_once(lake, catalog, args.jobs, paths=(victim,))
        print(f"[{n}] re-index: nothing changed {again_run.wall:.2f} s, one file {one_run.wall:.2f} s "
              f"({one['seconds']:.2f} s in index), named {named_run.wall:.2f} s ({named['seconds']:.2f})", flush=True)
        search, recall = measure_search(n, catalog, questions, args.queries)
        entries = json.loads(dslake("status", "--catalog", str(catalog), "--json").stdout)["entries"]
        watched = watch_change(lake, catalog, pick_victims(lake)[0])
        print(f"[{n}] --watch: one file changed, reported after {watched['latency_s']} s "
              f"({watched['index_s']} s in index)", flush=True)
        lines.append(f"| {n:,} | {entries:,} | {again_run.wall:.2f} | {one_run.wall:.2f} ({one['seconds']:.2f}) "
                     f"| {named_run.wall:.2f} ({named['seconds']:.2f}) "
                     f"| {search['p50_ms']:.0f} / {search['p95_ms']:.0f} ({search['max_ms']:.0f}) "
                     f"| {recall['recall@10']:.3f} ({recall['n']}) | {recall['all_found@10']:.3f} "
                     f"| {watched['latency_s']:.2f} ({watched['index_s']:.2f}; looked at {watched['looked_at']}) "
                     f"| {recall['by_domain']} |")
    text = "\n".join([f"## dslake re-index, search, recall and --watch on existing catalogs ({datetime.now():%Y-%m-%d %H:%M})", "",
                      *lines]) + "\n"
    print("\n" + text)
    if args.out:
        args.out.write_text(text)


# ---- where the time goes -------------------------------------------------------------------------------------

PHASES = [
    ("index/scan.py", "scan_lake"), ("index/plan.py", "plan_changes"), ("index/indexer.py", "_profile_all"),
    ("index/indexer.py", "_write_results"), ("index/indexer.py", "_rebuild_dirty_entries"),
    ("index/indexer.py", "_rebuild_folder"), ("index/fulltext.py", "replace_rows"),
    ("index/sync.py", "sync_vectors"), ("index/embed.py", "encode"), ("index/vectors.py", "upsert"),
    ("index/vectors.py", "open"), ("index/indexer.py", "run_index"),
]


def profile_report(prof: Path) -> list[str]:
    """Summarise a cProfile dump of one index run: the phases, then the functions with the most own time."""
    import pstats

    stats = pstats.Stats(str(prof)).stats  # type: ignore[attr-defined]
    lines = ["| phase (parent process) | calls | cumulative s |", "|---|---:|---:|"]
    for suffix, name in PHASES:
        found = [(v[1], v[3]) for (f, _, fn), v in stats.items() if fn == name and f.endswith(suffix)]
        if found:
            calls = sum(c for c, _ in found)
            cum = max(t for _, t in found)
            lines.append(f"| {suffix}:{name} | {calls} | {cum:.2f} |")
    lines += ["", "| own time, top 15 (parent) | calls | own s | cumulative s |", "|---|---:|---:|---:|"]
    top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:15]
    for (f, line, fn), (_, nc, tt, ct, _) in top:
        where = f"{Path(f).name}:{line}({fn})" if line else fn
        lines.append(f"| {where} | {nc} | {tt:.2f} | {ct:.2f} |")
    return lines


def format_times(lake: Path, per_format: int = 15) -> list[str]:
    """Time hashing and profiling a few files of each extension in this process (what one pool task costs)."""
    from dslake_index.profilers.base import Limits
    from dslake_index.profilers.registry import profile_path
    from dslake_index.scan import hash_file

    by_ext: dict[str, list[Path]] = {}
    for path in sorted(lake.rglob("*")):
        if path.is_file():
            by_ext.setdefault(path.suffix, []).append(path)
    lines = ["| format | files in lake | hash ms (mean) | profile ms (mean) | max ms |", "|---|---:|---:|---:|---:|"]
    for ext, paths in sorted(by_ext.items()):
        sample = paths[:: max(1, len(paths) // per_format)][:per_format]
        biggest = max(paths, key=lambda p: p.stat().st_size)
        sample += [] if biggest in sample else [biggest]  # the few big files cost most
        hash_ms, prof_ms = [], []
        for path in sample:
            t0 = time.perf_counter()
            hash_file(path)
            t1 = time.perf_counter()
            profile_path(path, Limits())
            t2 = time.perf_counter()
            hash_ms.append((t1 - t0) * 1000)
            prof_ms.append((t2 - t1) * 1000)
        lines.append(f"| {ext} | {len(paths)} | {statistics.fmean(hash_ms):.1f} | {statistics.fmean(prof_ms):.1f} | "
                     f"{max(prof_ms):.0f} |")
    return lines


# ---- one size ------------------------------------------------------------------------------------------------


@dataclass
class SizeResult:
    """Every figure for one N."""

    n: int
    files: int = 0
    entries: int = 0
    families: int = 0
    generate_s: float = 0.0
    full: dict[str, float] = field(default_factory=dict)
    again: dict[str, float] = field(default_factory=dict)
    one_single: dict[str, float] = field(default_factory=dict)
    one_member: dict[str, float] = field(default_factory=dict)
    catalog_mb: float = 0.0
    manifest_mb: float = 0.0
    max_rss_mb: float = 0.0
    tree_pss_mb: float = 0.0
    search: dict[str, Any] = field(default_factory=dict)
    recall: dict[str, Any] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)
    measure_s: float = 0.0  # everything after generation: the basis of the next size's estimate
    profile: list[str] = field(default_factory=list)
    phases: dict[str, dict[str, float]] = field(default_factory=dict)  # the full index's (index/timings.py)


def index_once(lake: Path, catalog: Path, jobs: int | None, profile_to: Path | None = None,
               paths: tuple[Path, ...] = ()) -> tuple[Run, dict]:
    """Run `dslake index --json` (on the named paths only, if given) and return the run and its summary."""
    extra = ["--jobs", str(jobs)] if jobs else []
    result = dslake("index", str(lake), *map(str, paths), "--catalog", str(catalog), "--json", *extra,
                    profile_to=profile_to)
    return result, json.loads(result.stdout)


def figures(result: Run, summary: dict) -> dict[str, float]:
    """Return the wall and in-process seconds and the work counts of one index run."""
    return {"wall": round(result.wall, 2), "seconds": summary["seconds"], "profiled": summary["profiled"],
            "embedded": summary["embedded"], "changed": summary["changed"], "added": summary["added"],
            "rss": round(result.max_rss_mb), "pss": round(result.tree_pss_mb)}


def bench_size(n: int, args: argparse.Namespace, scratch: Path) -> SizeResult:
    """Measure one lake size."""
    res = SizeResult(n)
    load_before = os.getloadavg()[0]
    lake, questions, res.generate_s = cached_lake(n, args.seed, args.big_mb, scratch)
    made = f"generated in {res.generate_s:.0f} s" if res.generate_s else "cached"
    print(f"[{n}] lake {lake} ({made})", flush=True)
    measure_started = time.perf_counter()
    catalog = scratch / f"catalog-{n}"
    shutil.rmtree(catalog, ignore_errors=True)
    prof = scratch / f"index-{n}.prof" if args.profile else None
    full_run, full = index_once(lake, catalog, args.jobs, prof)
    res.files = full["added"]
    res.entries, res.families = full["entries"], full["families"]
    res.full = figures(full_run, full)
    res.full["files_per_s"] = round(full["added"] / max(full_run.wall, 1e-9), 1)
    res.phases = full.get("phases") or {}
    print(f"[{n}] full index {full_run.wall:.1f} s wall ({full['seconds']:.1f} s in index), "
          f"{full['entries']} entries, {full['failed']} failed", flush=True)
    again_run, again = index_once(lake, catalog, args.jobs)
    res.again = figures(again_run, again)
    single, member = pick_victims(lake)
    with Touched(single):
        one_run, one = index_once(lake, catalog, args.jobs)
        res.one_single = figures(one_run, one)
    with Touched(single):
        named_run, named = index_once(lake, catalog, args.jobs, paths=(single,))
        res.one_named = figures(named_run, named)
    index_once(lake, catalog, args.jobs, paths=(single,))  # the catalog in step again: only the member changes next
    with Touched(member):
        member_run, member_summary = index_once(lake, catalog, args.jobs)
        res.one_member = figures(member_run, member_summary)
    # The member is restored: bring the catalog back in step, so search and recall see the generated lake.
    index_once(lake, catalog, args.jobs)
    print(f"[{n}] re-index: nothing changed {again_run.wall:.2f} s, one file {one_run.wall:.2f} s "
          f"(named: {named_run.wall:.2f} s), one family member {member_run.wall:.2f} s", flush=True)
    res.catalog_mb = dir_size(catalog) / 1e6
    res.manifest_mb = (catalog / "manifest.sqlite").stat().st_size / 1e6
    runs = (res.full, res.again, res.one_single, res.one_named, res.one_member)
    res.max_rss_mb = max(r["rss"] for r in runs)
    res.tree_pss_mb = max(r["pss"] for r in runs)
    res.search, res.recall = measure_search(n, catalog, questions, args.queries)
    if prof is not None:
        res.profile = [f"### Where the time goes at {n} files", "", *profile_report(prof), "",
                       "Per-format cost of one pool task (hash + profile, measured in the benchmark process):",
                       "", *format_times(lake)]
    res.load = (round(load_before, 1), round(os.getloadavg()[0], 1))
    res.measure_s = time.perf_counter() - measure_started
    return res


# ---- the report -----------------------------------------------------------------------------------------------


def table(results: list[SizeResult]) -> list[str]:
    """Return the Markdown table of every size measured."""
    head = ["files", "entries (families)", "full index s (in index)", "files/s", "no-change s (in index)",
            "1 file changed s (in index)", "1 file changed, named: `dslake index LAKE PATH` s (in index)",
            "1 family member changed s (in index)", "catalog MB (manifest)",
            "peak RSS MB: largest process / tree PSS", "search ms p50 / p95", "recall@10 (questions)",
            "load avg before / after"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for r in results:
        lines.append("| " + " | ".join([
            f"{r.files:,}", f"{r.entries:,} ({r.families:,})",
            f"{r.full['wall']:.1f} ({r.full['seconds']:.1f})", f"{r.full['files_per_s']:.1f}",
            f"{r.again['wall']:.2f} ({r.again['seconds']:.2f})",
            f"{r.one_single['wall']:.2f} ({r.one_single['seconds']:.2f})",
            f"{r.one_named['wall']:.2f} ({r.one_named['seconds']:.2f})",
            f"{r.one_member['wall']:.2f} ({r.one_member['seconds']:.2f})",
            f"{r.catalog_mb:.1f} ({r.manifest_mb:.1f})", f"{r.max_rss_mb:.0f} / {r.tree_pss_mb:.0f}",
            f"{r.search['p50_ms']:.0f} / {r.search['p95_ms']:.0f}",
            f"{r.recall['recall@10']:.3f} ({r.recall['n']})", f"{r.load[0]} / {r.load[1]}",
        ]) + " |")
    return lines


def details(results: list[SizeResult]) -> list[str]:
    """Return the figures behind the table: work counts, search parts, recall by question kind."""
    lines = []
    for r in results:
        lines.append(f"- {r.n:,} files: generated in {r.generate_s:.0f} s (0 = cached); full index profiled "
                     f"{r.full['profiled']}, embedded {r.full['embedded']}; one file changed: profiled "
                     f"{r.one_single['profiled']}, embedded {r.one_single['embedded']}; one member changed: "
                     f"embedded {r.one_member['embedded']}; search warm-up {r.search['warm_up_s']} s, mean parts "
                     f"{r.search['mean_parts_ms']} ms, max {r.search['max_ms']} ms; recall@10 by question kind "
                     f"{r.recall['by_domain']}, all found@10 {r.recall['all_found@10']}, eval took "
                     f"{r.recall['seconds']} s.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--jobs", type=int, help="profiler processes for dslake index (default: its own)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=8, help="size of the big CSVs (one per 2,000 files)")
    parser.add_argument("--queries", type=int, default=50, help="timed searches per size")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "dslake-scale")
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    parser.add_argument("--profile", action="store_true", help="run each full index under cProfile")
    parser.add_argument("--max-minutes", type=float, default=40.0,
                        help="skip a size whose whole run is extrapolated to take longer than this")
    parser.add_argument("--search-only", action="store_true",
                        help="re-measure all but the full index (re-index, search, recall, --watch) on the "
                             "catalogs of a previous run")
    parser.add_argument("--search-latency", nargs=2, metavar=("CATALOG", "QUESTIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_latency:
        print(json.dumps(search_latency(*args.search_latency, args.queries)))
        return
    args.scratch.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.search_only:
        search_only(sizes, args)
        return
    results: list[SizeResult] = []
    notes: list[str] = []
    for n in sizes:
        if results:
            estimate = estimate_seconds(results[-1], n, args)
            if estimate > args.max_minutes * 60:
                last = results[-1]
                notes.append(f"- {n:,} files not run: measuring {last.n:,} files took {last.measure_s / 60:.1f} min "
                             f"(full index {last.full['wall']:.0f} s); linearly, {n:,} would take about "
                             f"{estimate / 60:.0f} min, past --max-minutes {args.max_minutes:g}.")
                print(notes[-1], flush=True)
                continue
        results.append(bench_size(n, args, args.scratch))
        write_report(results, notes, args)  # after every size, so an interrupted run keeps what it measured
    write_report(results, notes, args, echo=True)


def estimate_seconds(last: SizeResult, n: int, args: argparse.Namespace) -> float:
    """Extrapolate a size's whole run (generation if not cached, index runs, search, eval) from the last size."""
    cached = (args.scratch / f"lake-{n}-s{args.seed}-b{args.big_mb}.complete").exists()
    generate = 0.0 if cached else 0.02 * n  # about 20 s per 1,000 files measured on 2 cores
    return generate + last.measure_s * n / last.n


def phase_table(r: SizeResult, shown: int = 14) -> list[str]:
    """Return where the full index's time went, by phase, the costliest first (worker phases are CPU summed
    over the profiler processes, so the rows add up to more than the wall time)."""
    if not r.phases:
        return []
    rows = sorted(r.phases.items(), key=lambda kv: -max(kv[1]["wall"], kv[1]["cpu"]))[:shown]
    return ["", f"Full index of {r.n:,} files, by phase (the costliest {len(rows)}):", "",
            "| phase | wall s | CPU s | n |", "|---|---:|---:|---:|",
            *(f"| {name} | {v['wall']:.1f} | {v['cpu']:.1f} | {v['n']:,} |" for name, v in rows)]


def write_report(results: list[SizeResult], notes: list[str], args: argparse.Namespace, echo: bool = False) -> None:
    """Print (when echo) and write (with --out) the Markdown report of the sizes measured so far."""
    report = [
        f"## dslake scaling benchmark ({datetime.now():%Y-%m-%d %H:%M})", "",
        f"{os.cpu_count()} cores, jobs={args.jobs or 'default (cores)'}, seed {args.seed}, big CSVs "
        f"{args.big_mb} MB. Wall = the `dslake` process from start to exit (imports included); "
        "in index = the seconds `dslake index --json` reports. Peak RSS covers the index runs.", "",
        *table(results), "", *details(results), *notes, "", f"Targets (issue 9): {TARGETS}.",
    ]
    for r in results:
        report += phase_table(r)
        if r.profile:
            report += ["", *r.profile]
    text = "\n".join(report) + "\n"
    if echo:
        print("\n" + text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
