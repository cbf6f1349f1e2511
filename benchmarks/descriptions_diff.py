"""Diff what two code trees say about the same lake: every entry's description and card, every file's profile.

usage:
  python benchmarks/descriptions_diff.py dump CATALOG OUT.json      # a catalog's entries and profiles, by path
  python benchmarks/descriptions_diff.py profiles LAKE OUT.json [--only-ext .csv,.tsv] [--jobs 2]
                                                                     # profile every file with this tree's code
  python benchmarks/descriptions_diff.py diff A.json B.json [--show 5]

A change to a profiler must leave what an index writes byte-identical, or change it on purpose. `dump` reads a
catalog's manifest (run `dslake index LAKE --catalog DIR` with each tree, e.g. main's venv and a branch's), keyed
by what does not depend on the content hash: entries by id, file profiles by lake-relative path. `profiles` runs
the profilers of the tree whose interpreter runs this script on every file (no catalog, no embedding: a quick check
while working). `diff` prints how many records differ in each section and the first differing fields of each
record, and exits 1 when any differs. Timings and dates inside records are left out of the comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# Fields that say when, not what: they differ between any two runs.
_VOLATILE = {"created_at", "updated_at", "indexed_at", "work_seconds"}


def dump_catalog(catalog: Path) -> dict[str, dict[str, Any]]:
    """Return {"entries": {id: {description, card, ...}}, "profiles": {path: profile}, "files": {path: status}}."""
    db = catalog / "manifest.sqlite"
    if not db.is_file():
        sys.exit(f"no manifest at {db}")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    entries = {row[0]: {"kind": row[1], "path": row[2], "format": row[3], "member_count": row[4],
                        "description": row[5], "card": row[6]}
               for row in conn.execute("SELECT id, kind, path, format, member_count, description, card FROM entries")}
    files, profiles = {}, {}
    query = ("SELECT f.path, f.status, f.error_kind, f.format, f.entry_id, p.profiler_version, p.signature, p.profile "
             "FROM files f LEFT JOIN profiles p ON p.hash = f.hash")
    for path, status, error_kind, fmt, entry_id, version, signature, profile in conn.execute(query):
        files[path] = {"status": status, "error_kind": error_kind, "format": fmt, "entry_id": entry_id,
                       "profiler_version": version, "signature": signature}
        profiles[path] = json.loads(profile) if profile else None
    return {"entries": entries, "files": files, "profiles": profiles}


def _profile_one(args: tuple[str, str]) -> tuple[str, Any]:
    from dslake_index.profilers.base import Limits, ProfileError
    from dslake_index.profilers.registry import profile_path

    root, rel = args
    try:
        profile = profile_path(Path(root) / rel, Limits())
    except ProfileError as exc:
        return rel, {"error": str(exc)}
    return rel, json.loads(json.dumps(profile.to_dict(), default=str, ensure_ascii=False))


def profile_lake(lake: Path, exts: set[str] | None, jobs: int) -> dict[str, dict[str, Any]]:
    """Return {"profiles": {path: profile}} for every file of the lake, profiled by this interpreter's code."""
    rels = sorted(str(p.relative_to(lake)) for p in lake.rglob("*")
                  if p.is_file() and ".dslake" not in p.parts and (exts is None or p.suffix.lower() in exts))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        profiles = dict(pool.map(_profile_one, [(str(lake), r) for r in rels], chunksize=8))
    return {"profiles": profiles}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Return where two JSON values differ, field by field, with both sides shortened."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            out += _differences(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{where}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{where}[{i}]")]
    if a == b and type(a) is type(b):
        return []
    return [f"{where or '.'}: {json.dumps(a, ensure_ascii=False)[:300]} -> {json.dumps(b, ensure_ascii=False)[:300]}"]


def diff(a: dict[str, Any], b: dict[str, Any], show: int) -> int:
    """Print the differences section by section; return how many records differ."""
    total = 0
    for section in sorted(set(a) | set(b)):
        left, right = a.get(section, {}), b.get(section, {})
        keys = sorted(set(left) | set(right))
        changed = [k for k in keys if _differences(_strip(left.get(k)), _strip(right.get(k)))]
        print(f"{section}: {len(keys):,} records, {len(changed):,} differ"
              + (f" (only in A: {len(set(left) - set(right))}, only in B: {len(set(right) - set(left))})"
                 if set(left) != set(right) else ""))
        for key in changed[:show]:
            lines = _differences(_strip(left.get(key)), _strip(right.get(key)))
            print(f"  {key}: {len(lines)} field(s)")
            for line in lines[:6]:
                print(f"    {line}")
        total += len(changed)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump")
    dump.add_argument("catalog", type=Path)
    dump.add_argument("out", type=Path)
    prof = sub.add_parser("profiles")
    prof.add_argument("lake", type=Path)
    prof.add_argument("out", type=Path)
    prof.add_argument("--only-ext", default="", help="comma-separated extensions, e.g. .csv,.tsv")
    prof.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    cmp_ = sub.add_parser("diff")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path)
    cmp_.add_argument("--show", type=int, default=5, help="differing records printed per section")
    args = parser.parse_args()
    if args.command == "dump":
        args.out.write_text(json.dumps(dump_catalog(args.catalog), ensure_ascii=False, sort_keys=True))
    elif args.command == "profiles":
        if not args.lake.is_dir():
            sys.exit(f"lake not found: {args.lake}")
        exts = {e.strip().lower() for e in args.only_ext.split(",") if e.strip()} or None
        args.out.write_text(json.dumps(profile_lake(args.lake, exts, args.jobs), ensure_ascii=False, sort_keys=True))
    else:
        a, b = (json.loads(p.read_text()) for p in (args.a, args.b))
        sys.exit(1 if diff(a, b, args.show) else 0)


if __name__ == "__main__":
    main()
