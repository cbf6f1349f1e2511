"""Lakes as data teams keep them: index a generated lake of a Hive dataset, a Delta table, an Iceberg table and two
files bigger than a script's memory, then answer one question per dataset end to end.

usage: python benchmarks/datasets_bench.py [--out DIR] [--hive-files 1000] [--rows-per-file 200]
                                           [--delta-commits 20] [--big-gb 3.0] [--skip-ask] [--reuse]
                                           [--profile-timeout S]
The lake is made at run time under --out (default a new folder in /tmp; never committed): `sales/` (Hive
partitions year=/region=/category=, --hive-files Parquet files), `trips/` (a Delta table of --delta-commits
commits with appends, deletes and one overwrite), `warehouse/db/events/` (an Iceberg table: appends and a
delete), and `big/readings.csv` plus `big/readings.parquet` of about --big-gb GB each. It prints the index time
and the entries, then asks one question per dataset through `lake.ask` with the scripted provider: its coder
runs the entry's own load line (the streaming one where a whole load does not fit) in the sandbox at the default
memory limit, and the script reports its peak memory. Each answer is compared with the number the generator
computed (--reuse: the lake under --out is kept and indexed anew; the expected numbers are then those the run
that made it saved in tasks.json, else computed here by reference readers, the big files by a pyarrow scan).
--profile-timeout sets profile.timeout_s (default: the setting, 30 s; a file's limit also grows with its size, for
its hash: index/timeouts.py). Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

REGIONS = ["north", "south", "east", "west", "central", "coast", "hills", "lakes", "plains", "islands"]
CATEGORIES = ["books", "music", "garden", "toys", "food", "tools", "sport", "office", "health", "travel"]


# ---- the lake ----

def make_hive(root: Path, files: int, rows: int, rng: np.random.Generator) -> dict[str, Any]:
    """Write sales/year=Y/region=R/category=C/part-0.parquet; return the question and its answer."""
    total = 0.0
    n = 0
    for year in range(2015, 2015 + math.ceil(files / 100)):
        for region in REGIONS:
            for category in CATEGORIES:
                if n == files:
                    break
                amount = np.round(rng.uniform(1, 500, rows), 2)
                frame = pd.DataFrame({"order_id": np.arange(n * rows, (n + 1) * rows), "amount": amount,
                                      "quantity": rng.integers(1, 20, rows)})
                folder = root / f"year={year}" / f"region={region}" / f"category={category}"
                folder.mkdir(parents=True, exist_ok=True)
                frame.to_parquet(folder / "part-0.parquet", index=False)
                if year == 2015 and region == "north":
                    total += float(amount.sum())
                n += 1
    return {"question": "What was the total sales amount in the north region in 2015?",
            "answer": round(total, 2),
            "compute": "print(round(float(df[(df['year'].astype(int) == 2015) & (df['region'] == 'north')]"
                       "['amount'].sum()), 2))"}


def make_delta(root: Path, commits: int, rng: np.random.Generator) -> dict[str, Any]:
    """Write a Delta table of `commits` commits: appends, two deletes and an overwrite; return the question."""
    from deltalake import DeltaTable, write_deltalake

    def batch(start: int) -> pd.DataFrame:
        return pd.DataFrame({"trip_id": np.arange(start, start + 500), "city": rng.choice(["oslo", "lima", "pune"], 500),
                             "fare": np.round(rng.uniform(3, 80, 500), 2)})

    write_deltalake(str(root), batch(0), partition_by=["city"])
    next_id, done = 500, 1
    while done < commits:
        if done == commits // 2:
            write_deltalake(str(root), batch(next_id), mode="overwrite", partition_by=["city"])
        elif done in (commits // 3, commits - 1):
            DeltaTable(str(root)).delete(f"fare > {70 if done < commits - 1 else 75}")
        else:
            write_deltalake(str(root), batch(next_id), mode="append", partition_by=["city"])
        next_id += 500
        done += 1
    current = DeltaTable(str(root)).to_pandas()  # the reference reader gives the expected answer
    return {"question": "How many trips in Lima are in the trips table now?",
            "answer": int((current["city"] == "lima").sum()),
            "compute": "print(int((df['city'] == 'lima').sum()))"}


def make_iceberg(warehouse: Path, rng: np.random.Generator) -> tuple[Path, dict[str, Any]]:
    """Write an Iceberg table (three appends and a delete); return its folder and the question."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse.mkdir(parents=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{warehouse}/catalog.db", warehouse=f"file://{warehouse}")
    catalog.create_namespace("db")
    frames = []
    table = None
    for part in range(3):
        data = pa.table({"event_id": pa.array(np.arange(part * 1000, (part + 1) * 1000), pa.int64()),
                         "kind": pa.array(rng.choice(["click", "view", "buy"], 1000)),
                         "value": pa.array(np.round(rng.uniform(0, 10, 1000), 3))})
        table = table or catalog.create_table("db.events", schema=data.schema)
        table.append(data)
        frames.append(data.to_pandas())
    table.delete("event_id < 500")
    (warehouse / "catalog.db").unlink()  # the catalog is the writer's; the lake keeps the table's own files
    frame = pd.concat(frames)
    frame = frame[frame["event_id"] >= 500]
    return warehouse / "db" / "events", {
        "question": "How many buy events does the events table hold?",
        "answer": int((frame["kind"] == "buy").sum()), "compute": "print(int((df['kind'] == 'buy').sum()))"}


def make_big(folder: Path, gigabytes: float, rng: np.random.Generator) -> list[dict[str, Any]]:
    """Write readings.csv and readings.parquet of about `gigabytes` each, block by block; return two questions."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    rows = 1_000_000
    stations = pa.array(rng.choice([f"s{i:02d}" for i in range(100)], rows))
    base = rng.uniform(-50, 50, rows)
    counts = pa.array(rng.integers(0, 1000, rows, dtype=np.int32))
    notes = pa.array(np.char.add("r", np.arange(rows).astype(str)))
    mask = np.asarray(stations) == "s07"
    answers = {}
    for name in ("csv", "parquet"):
        path = folder / f"readings.{name}"
        total, n, block = 0.0, 0, 0
        writer: Any = None
        while not path.exists() or path.stat().st_size < gigabytes * (1 << 30):
            values = base + block * 0.001  # each block shifted: the expected mean is summed block by block
            batch = pa.record_batch({"station": stations, "value": pa.array(values), "count": counts,
                                     "note": notes})
            if writer is None:
                writer = pacsv.CSVWriter(str(path), batch.schema) if name == "csv" else \
                    pq.ParquetWriter(str(path), batch.schema, compression="snappy")
            if name == "csv":
                writer.write_batch(batch)
            else:
                writer.write_batch(batch, row_group_size=rows)
            total += float(values[mask].sum())
            n += int(mask.sum())
            block += 1
        writer.close()
        answers[name] = round(total / n, 6)
    return [{"file": f"big/readings.{name}", "question": f"What is the mean value of station s07 in readings.{name}?",
             "answer": answers[name],
             "rel_compute": "print(round(float(rel.filter(\"station = 's07'\").aggregate('avg(value)')"
                            ".fetchall()[0][0]), 6))",
             "df_compute": "print(round(float(df[df['station'] == 's07']['value'].mean()), 6))"}
            for name in ("csv", "parquet")]


def reference_tasks(lake_root: Path) -> dict[str, Any]:
    """Rebuild the questions of a kept lake made before tasks.json existed: expected numbers from reference
    readers (pandas, deltalake, pyiceberg; a pyarrow scan, batch by batch, for the big files)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    from deltalake import DeltaTable
    from pyiceberg.table import StaticTable

    sales = pd.read_parquet(lake_root / "sales", filters=[("year", "=", 2015), ("region", "=", "north")])
    trips = DeltaTable(str(lake_root / "trips")).to_pandas()
    events_root = lake_root / "warehouse" / "db" / "events"
    metadata = max((events_root / "metadata").glob("*.metadata.json"), key=lambda p: p.name)
    events = StaticTable.from_metadata(str(metadata)).scan().to_pandas()
    tasks: dict[str, Any] = {
        "sales": {"question": "What was the total sales amount in the north region in 2015?",
                  "answer": round(float(sales["amount"].sum()), 2),
                  "compute": "print(round(float(df[(df['year'].astype(int) == 2015) & (df['region'] == 'north')]"
                             "['amount'].sum()), 2))"},
        "trips": {"question": "How many trips in Lima are in the trips table now?",
                  "answer": int((trips["city"] == "lima").sum()), "compute": "print(int((df['city'] == 'lima').sum()))"},
        "warehouse/db/events": {"question": "How many buy events does the events table hold?",
                                "answer": int((events["kind"] == "buy").sum()),
                                "compute": "print(int((df['kind'] == 'buy').sum()))"}}
    for name in ("csv", "parquet"):
        scanner = ds.dataset(lake_root / "big" / f"readings.{name}", format=name).scanner(
            columns=["value"], filter=ds.field("station") == "s07")
        total = n = 0
        for batch in scanner.to_batches():
            total += pc.sum(batch.column(0)).as_py() or 0.0
            n += batch.num_rows
        tasks[f"big/readings.{name}"] = {
            "question": f"What is the mean value of station s07 in readings.{name}?", "answer": round(total / n, 6),
            "rel_compute": "print(round(float(rel.filter(\"station = 's07'\").aggregate('avg(value)')"
                           ".fetchall()[0][0]), 6))",
            "df_compute": "print(round(float(df[df['station'] == 's07']['value'].mean()), 6))"}
    return tasks


# ---- the questions ----

def load_line(conn: sqlite3.Connection, path: str) -> tuple[str, str]:
    """Return the entry's own load line as the coder sees it, and the variable it binds (df or rel)."""
    row = conn.execute("SELECT d.record FROM datasets d JOIN entries e ON e.id = d.entry_id WHERE e.path = ?",
                       (path,)).fetchone()
    if row is not None:
        record = json.loads(row[0])
        hint, target = (record["hint"], record["target"]) if record["hint"] else \
            (record["stream"], record["stream_target"])
        variable = "df" if record["hint"] else "rel"
        return f"{variable} = {hint.replace('{path}', repr('data/' + target))}", variable
    description = conn.execute("SELECT description FROM entries WHERE path = ?", (path,)).fetchone()[0]
    line = next(ln.strip()[len("load: "):].split("  (")[0] for ln in description.splitlines()
                if ln.strip().startswith("load: "))
    return line, line.split(" = ", 1)[0]


IMPORTS = ("import resource\nimport duckdb\nimport pandas as pd\nimport pyarrow.dataset as ds\n"
           "from deltalake import DeltaTable\nfrom pyiceberg.table import StaticTable\n")
PEAK = ("print('peak MB', round(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024))\n")


def ask(lake_root: Path, entry: str, task: dict[str, Any], line: str, variable: str, out: Path) -> dict[str, Any]:
    """Ask one question with a scripted model whose coder runs the entry's load line; return what happened."""
    from dsstar_lake.lake import Lake

    compute = task.get(f"{variable}_compute") or task["compute"]  # a big file: by the line's variable
    final = f"```python\n{IMPORTS}{line}\n{compute}\n```"
    fenced = f"```python\n{IMPORTS}{line}\n{compute}\n{PEAK}```"  # the coder also reports its peak memory
    rules = out / f"rules-{abs(hash(entry))}.jsonl"
    rules.write_text("\n".join(json.dumps(r) for r in [
        {"role": "planner", "response": f"Load {entry} with its load line and compute what the question asks."},
        {"role": "coder", "response": fenced}, {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": final}]) + "\n")
    lake = Lake.open(lake_root, overrides={"llm.provider": "scripted", "llm.scripted_file": str(rules)})
    started = time.perf_counter()
    answer = lake.ask(task["question"], files=[entry])
    seconds = time.perf_counter() - started
    trace = (lake_root / ".dslake" / "runs" / answer.run_id / "trace.jsonl").read_text().splitlines()
    peaks = [int(w) for ev in map(json.loads, trace) if ev.get("type") == "exec"
             for ln in (ev.get("stdout_head") or "").splitlines() if ln.startswith("peak MB")
             for w in ln.split()[-1:]]
    lake.close()
    value = answer.text
    try:
        right = math.isclose(float(value), float(task["answer"]), rel_tol=1e-6, abs_tol=1e-6)
    except (TypeError, ValueError):
        right = False
    return {"entry": entry, "answer": value, "expected": task["answer"], "right": right, "seconds": seconds,
            "peak_mb": max(peaks) if peaks else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--hive-files", type=int, default=1000)
    parser.add_argument("--rows-per-file", type=int, default=200)
    parser.add_argument("--delta-commits", type=int, default=20)
    parser.add_argument("--big-gb", type=float, default=3.0)
    parser.add_argument("--skip-ask", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="keep the lake under --out, index it anew")
    parser.add_argument("--profile-timeout", type=float, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="dslake-datasets-bench-"))
    lake_root = out / "lake"
    started = time.perf_counter()
    if args.reuse and lake_root.is_dir():
        shutil.rmtree(lake_root / ".dslake", ignore_errors=True)
        saved = out / "tasks.json"
        tasks = json.loads(saved.read_text()) if saved.is_file() else reference_tasks(lake_root)
    else:
        shutil.rmtree(lake_root, ignore_errors=True)
        lake_root.mkdir(parents=True)
        rng = np.random.default_rng(7)
        tasks = {"sales": make_hive(lake_root / "sales", args.hive_files, args.rows_per_file, rng),
                 "trips": make_delta(lake_root / "trips", args.delta_commits, rng)}
        iceberg, tasks["events"] = make_iceberg(lake_root / "warehouse", rng)
        tasks[iceberg.relative_to(lake_root).as_posix()] = tasks.pop("events")
        for task in make_big(lake_root / "big", args.big_gb, rng):
            tasks[task.pop("file")] = task
        (out / "tasks.json").write_text(json.dumps(tasks, indent=1))
    files = sum(1 for p in lake_root.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in lake_root.rglob("*") if p.is_file())
    print(f"lake: {lake_root} ({files:,} files, {size / (1 << 30):.2f} GB), made in {time.perf_counter() - started:.0f} s")

    from dsstar_lake.base.errors import DslakeError
    from dsstar_lake.lake import Lake

    lake = Lake.open(lake_root, overrides={} if args.profile_timeout is None else
                     {"profile.timeout_s": args.profile_timeout})
    started = time.perf_counter()
    summary = lake.index()
    print(f"index: {time.perf_counter() - started:.1f} s wall; {summary.entries} entries "
          f"({summary.added:,} files added, {summary.failed} failed)")
    conn = sqlite3.connect(lake_root / ".dslake" / "manifest.sqlite")
    for path, kind, fmt, members in conn.execute("SELECT path, kind, format, member_count FROM entries ORDER BY path"):
        print(f"  {kind:8} {fmt:8} {members:6,} files  {path}")
    print("lake.load (in this process):")
    for entry in tasks:
        try:
            frame = lake.load(entry)
            print(f"  {entry}: {len(frame):,} rows x {frame.shape[1]} columns ({', '.join(map(str, frame.columns))})")
        except DslakeError as exc:
            print(f"  {entry}: refused: {exc.message}; hint: {exc.hint}")
    lake.close()
    if args.skip_ask:
        return
    print("questions (scripted model; the coder runs the entry's own load line in the sandbox, default limits):")
    for entry, task in tasks.items():
        if conn.execute("SELECT 1 FROM entries WHERE path = ?", (entry,)).fetchone() is None:
            error = conn.execute("SELECT error FROM files WHERE path = ?", (entry,)).fetchone()
            print(f"  {entry}: no entry ({error[0] if error else 'not indexed'})")
            continue
        line, variable = load_line(conn, entry)
        result = ask(lake_root, entry, task, line, variable, out)
        mark = "right" if result["right"] else "WRONG"
        print(f"  {entry}: {mark} ({result['answer']} vs {result['expected']}), {result['seconds']:.1f} s, "
              f"script peak {result['peak_mb']} MB; load line: {line}")
    print(f"this process: peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
