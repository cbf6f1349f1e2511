"""Run every load hint the descriptions give, on the KramaBench lake and data_samples/, and count what matches.

usage: python benchmarks/load_hints.py [--lake PATH] [--samples PATH] [--workers 2] [--timeout 120] [--only GLOB]
                                      [--catalog DIR]
Each file is profiled as `dslake index` would, then each table's `load:` hint is executed against the file and
compared with the description (rows x columns, column names, delimiters inside values, numbers left as text,
header rows inside the data). Prints, per lake: files checked, hints executed and matched, mismatches by kind,
and the failing files. Datasets and tables (Hive partitions, part folders, Delta, Iceberg) are entries, not
files: where a lake has a catalog (<lake>/.dslake, or --catalog for the KramaBench lake), each dataset entry's
load line is run on the whole dataset and its rows and columns compared with the entry's. Never run by CI (it
needs the KramaBench lake).
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from collections import Counter
from pathlib import Path

from dslake_index.hint_check import KINDS, FileCheck, check_files
from dslake_index.scan import scan_lake

HERE = Path(__file__).resolve().parent


def check_lake(name: str, root: Path, workers: int, timeout_s: float, only: str | None,
               catalog: Path | None = None) -> list[FileCheck]:
    """Check every file of one lake and print its summary."""
    files = [f.path for f in scan_lake(root).files]
    if only:
        files = [f for f in files if fnmatch.fnmatch(f, only)]
    started = time.perf_counter()
    results = list(check_files(root, files, workers=workers, timeout_s=timeout_s,
                               hidden=[catalog or root / ".dslake"]))
    seconds = time.perf_counter() - started
    hints = sum(r.hints for r in results)
    executed = sum(r.executed for r in results)
    matched = sum(r.matched for r in results)
    skipped = [r for r in results if r.skipped]
    failing = [r for r in results if not r.ok]
    kinds = Counter(m.kind for r in results for m in r.mismatches)
    files_by_kind = Counter(k for r in results for k in {m.kind for m in r.mismatches})
    print(f"== {name}: {root}")
    print(f"files checked: {len(results):,} ({len(skipped)} not profiled: recorded failures) in {seconds:.1f} s")
    print(f"hints: {hints:,}; executed OK {executed:,}; matched their description {matched:,}; "
          f"files fully OK {len(results) - len(failing):,} / {len(results):,}")
    if kinds:
        print("mismatches by kind (count, files):")
        for kind in KINDS:
            if kinds[kind]:
                print(f"  {kind:22} {kinds[kind]:5,} {files_by_kind[kind]:5,}")
    if failing:
        print(f"failing files ({len(failing)}):")
        for r in failing:
            first = r.mismatches[0]
            more = f" (+{len(r.mismatches) - 1} more)" if len(r.mismatches) > 1 else ""
            print(f"  {r.path} [{r.format}]: {first.kind} in {first.where}: {first.detail}{more}")
    for r in skipped:
        print(f"  not profiled: {r.path}: {r.skipped}")
    return results + check_datasets(root, catalog)


def check_datasets(root: Path, catalog: Path | None) -> list[FileCheck]:
    """Check every dataset entry of the lake's catalog (none without a catalog); print the summary."""
    import sqlite3

    from dslake_index.hint_check import check_catalog_datasets

    manifest = (catalog or root / ".dslake") / "manifest.sqlite"
    if not manifest.is_file():
        print("datasets: no catalog to read them from (index the lake first, or give --catalog)")
        return []
    conn = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True)
    try:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'datasets'").fetchone()
        results = check_catalog_datasets(root, conn, hidden=[catalog or root / ".dslake"]) if has else []
    finally:
        conn.close()
    ok = [r for r in results if r.ok and not r.skipped]
    print(f"datasets and tables: {len(results)}; executed {sum(r.executed for r in results)}; "
          f"matched {sum(r.matched for r in results)}; unreadable tables {sum(bool(r.skipped) for r in results)}")
    for r in results:
        if r.skipped:
            print(f"  unreadable: {r.path}: {r.skipped}")
        elif r not in ok:
            print(f"  {r.path} [{r.format}]: " + "; ".join(f"{m.kind}: {m.detail}" for m in r.mismatches))
    return [r for r in results if not r.skipped]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lake", default=str(HERE.parent.parent / "shared" / "kramabench" / "lake"))
    parser.add_argument("--samples", default=str(HERE.parent / "data_samples"))
    parser.add_argument("--workers", type=int, default=2, help="worker processes (the machine has 2 cores)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per file: profile and all hints")
    parser.add_argument("--only", help="check only lake-relative paths matching this glob")
    parser.add_argument("--catalog", help="the KramaBench lake's catalog folder, for its dataset entries "
                        "(default <lake>/.dslake)")
    args = parser.parse_args()
    lakes = [("data_samples", Path(args.samples)), ("KramaBench", Path(args.lake))]
    bad = 0
    for name, root in lakes:
        if not root.is_dir():
            print(f"== {name}: not found at {root} (KramaBench: run ../shared/kramabench/unpack)")
            continue
        catalog = Path(args.catalog) if args.catalog and name == "KramaBench" else None
        bad += sum(not r.ok for r in check_lake(name, root, args.workers, args.timeout, args.only, catalog))
        print()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
