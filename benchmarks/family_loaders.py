"""Run every family's listing and loader code, as its description gives them, and count entries per top folder.

usage: python benchmarks/family_loaders.py [--lake PATH] [--samples PATH] [--catalog DIR]
Each lake is indexed into a temporary catalog (or --catalog, already indexed, for the first lake), then for each
family entry the `List them all with` code and the `… them all with glob, e.g.` code are executed from a folder
whose data/ is the lake, as a coder's script sees it. A family passes when its listing yields exactly its members
and its loader reads every one of them (tables: one frame with the columns the member description names).
Prints entries and families per top folder, then one line per family. Never run by CI (it needs the lakes).
"""

from __future__ import annotations

import argparse
import glob
import re
import sys
import tempfile
import time
import xml.etree.ElementTree
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from dsstar_lake.lake import Lake

HERE = Path(__file__).resolve().parent


def check_lake(name: str, root: Path, catalog: Path) -> int:
    """Index a lake (unless its catalog exists), run every family's code, print the figures; return failures."""
    lake = Lake.open(root, catalog=catalog)
    started = time.perf_counter()
    summary = lake.index()
    print(f"== {name}: {root} ({summary.entries} entries, {summary.families} families; "
          f"index {time.perf_counter() - started:.1f} s)")
    conn = lake.connection()
    rows = conn.execute("SELECT kind, path, member_count, description, id FROM entries ORDER BY path").fetchall()
    per_top: Counter[tuple[str, str]] = Counter((r["path"].split("/", 1)[0] if "/" in r["path"] else ".", r["kind"])
                                                for r in rows)
    for top in sorted({t for t, _ in per_top}):
        print(f"  {top}: {per_top[(top, 'file')] + per_top[(top, 'family')]} entries "
              f"({per_top[(top, 'family')]} families)")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="dslake-family-") as tmp:
        (Path(tmp) / "data").symlink_to(root.resolve())
        for r in rows:
            if r["kind"] != "family":
                continue
            members = {f"data/{m}" for m in lake.members(r["id"])}
            ok, what = run_family(r["description"], members, Path(tmp))
            failures += not ok
            print(f"  {'OK ' if ok else 'BAD'} {r['path']} ({r['member_count']} files): {what}")
    lake.close()
    return failures


def run_family(description: str, members: set[str], cwd: Path) -> tuple[bool, str]:
    """Execute a family description's listing and loader in cwd; return (passed, what happened)."""
    import os

    listing = re.search(r"List them(?: all)? with `([^`]+)`", description)
    loader = re.search(r" them all with glob, e.g. `([^`]+)`", description)
    if not listing or not loader:
        return False, "no listing or loader line"
    scope = {"pd": pd, "np": np, "glob": glob, "xml": xml}
    here = os.getcwd()
    os.chdir(cwd)
    try:
        code = listing.group(1)
        if code.startswith("files = "):
            exec(code, scope)
            listed = scope["files"]
        else:
            listed = eval(code, scope)
        if set(listed) != members:
            return False, f"listing gives {len(listed)} files, {len(set(listed) - members)} not members"
        code = loader.group(1)
        if code.startswith(("texts = ", "data = ")):
            exec(code, scope)
            read = scope[code.split(" ", 1)[0]]
            return len(read) == len(members), f"{len(read)} members read"
        frame = eval(code, scope)
        columns = re.findall(r"^    - '(.*?)':", description.split("Description of the first member", 1)[1], re.M)
        same = not columns or list(frame.columns[: len(columns)]) == columns
        return same, f"{len(frame):,} rows x {frame.shape[1]} columns" + ("" if same else " (columns differ)")
    except Exception as exc:  # a loader that fails is the finding, not a crash of the benchmark
        return False, f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        os.chdir(here)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lake", default=str(HERE.parent.parent / "shared" / "kramabench" / "lake"))
    parser.add_argument("--samples", default=str(HERE.parent / "data_samples"))
    parser.add_argument("--catalog", help="an existing catalog of --lake (else a temporary one)")
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="dslake-family-cat-") as tmp:
        for i, (name, root) in enumerate((("KramaBench", args.lake), ("data_samples", args.samples))):
            if not Path(root).is_dir():
                print(f"== {name}: {root} not found, skipped")
                continue
            catalog = Path(args.catalog) if args.catalog and i == 0 else Path(tmp) / name
            failures += check_lake(name, Path(root), catalog)
    print(f"families whose code failed: {failures}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
