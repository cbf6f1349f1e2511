"""Where a family member's profiling CPU goes, phase by phase, and what the other CSV readers would cost instead.

usage: python benchmarks/member_cost.py FOLDER [FOLDER ...] [--files 100]
Profiles the first --files CSVs of each folder in this process, as one profiler process of the pool does (one
member first, unmeasured, so imports and the family's layout search are not counted), and prints CPU
milliseconds per member: the whole profile, each phase of the delimited profiler (read, column facts, the notes,
row facts, sample rows, redaction, JSON), and the same members read by pandas' C parser, pyarrow's CSV reader
and DuckDB's read_csv_auto (CPU of every thread: process_time). Issue 46 asks whether a cheaper pass over a
family's later members would move the first index; this says what such a pass could save and what it may not.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dslake_index.profile_task import profile_json
from dslake_index.profilers import delimited, registry
from dslake_index.profilers.base import Limits

# the functions profile_delimited and profile_path call, by the module namespace they are looked up in
PHASES = {
    delimited: ["load_frame", "describe_columns", "line_facts", "row_facts", "sample_rows", "header_misfits",
                "year_outliers", "name_notes", "fill_notes", "repeated_times", "share_totals", "year_sums",
                "total_disagreements", "find_layout", "decode_head"],
    registry: ["redact_profile", "read_head"],
}


def _timed(spent: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start
    return wrapper


def phases(files: list[Path]) -> tuple[float, dict[str, float]]:
    """Return CPU ms per member of the whole profile (with JSON) and of each phase."""
    spent: dict[str, float] = defaultdict(float)
    saved = {(mod, name): getattr(mod, name) for mod, names in PHASES.items() for name in names}
    for (mod, name), fn in saved.items():
        setattr(mod, name, _timed(spent, name, fn))
    try:
        start = time.process_time()
        for f in files:
            profile = registry.profile_path(f, Limits())
            json_start = time.process_time()
            profile_json(profile)
            spent["profile_json"] += time.process_time() - json_start
        total = time.process_time() - start
    finally:
        for (mod, name), fn in saved.items():
            setattr(mod, name, fn)
    return 1000 * total / len(files), {k: 1000 * v / len(files) for k, v in spent.items()}


def _arrow(result: Any) -> Any:
    # DuckDB 1.4 names it to_arrow_table; older releases fetch_arrow_table
    return (getattr(result, "to_arrow_table", None) or result.fetch_arrow_table)()


def readers(files: list[Path]) -> dict[str, float]:
    """Return CPU ms per member of reading it whole with each reader (a first read unmeasured)."""
    import duckdb
    import pandas as pd
    import pyarrow.csv as pacsv

    con = duckdb.connect()
    ways: dict[str, Callable[[Path], Any]] = {
        "pandas.read_csv (C parser)": pd.read_csv,
        "pyarrow.csv.read_csv": pacsv.read_csv,
        "duckdb read_csv_auto -> arrow": lambda f: _arrow(con.execute("SELECT * FROM read_csv_auto(?)", [str(f)])),
    }
    out = {}
    for name, read in ways.items():
        read(files[-1])
        start = time.process_time()
        for f in files:
            read(f)
        out[name] = 1000 * (time.process_time() - start) / len(files)
    return out


def family_members(folder: Path, count: int) -> tuple[Path, list[Path]] | None:
    """Return a folder's first CSV, profiled here once so imports and the family's layout search are not counted
    as a member's cost, and the up to `count` members after it; None (said) when it holds fewer than two CSVs."""
    every = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".csv")
    if len(every) < 2:
        print(f"{folder}: fewer than two CSVs")
        return None
    registry.profile_path(every[0], Limits())
    return every[0], every[1 : 1 + count]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--files", type=int, default=100)
    args = ap.parse_args()
    for folder in args.folders:
        if (family := family_members(folder, args.files)) is None:
            continue
        _, files = family
        total, spent = phases(files)
        print(f"{folder.name}: {len(files)} members, whole profile {total:.2f} CPU-ms each")
        for name, ms in sorted(spent.items(), key=lambda kv: -kv[1]):
            print(f"  {name:<22} {ms:6.2f} ms  {100 * ms / total:5.1f}%")
        rest = total - sum(spent.values())
        print(f"  {'(the rest)':<22} {rest:6.2f} ms  {100 * rest / total:5.1f}%")
        for name, ms in readers(files).items():
            print(f"  read whole: {name:<30} {ms:6.2f} ms")


if __name__ == "__main__":
    main()
