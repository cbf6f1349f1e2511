"""What a family's members would cost if each distinct line were parsed once for the whole family (issue 46's
overlapping-windows lever), and whether the column facts computed that way are the full profile's.

usage: python benchmarks/member_batch_cost.py FOLDER [FOLDER ...] [--files 100]
For the first --files CSVs of each folder after the first, in this process (the batch only over the members read
with no option, holding no quote and sharing the first CSV's header line: their lines are the family's rows):
- full: registry.profile_path per member, as a profiler process of the pool does (CPU ms per member);
- batch: read every member's data lines, parse the family's distinct lines once with the same pandas call, then per
  member take its rows from that frame and run the same column facts (stats.column_stats) and row sketch
  (stats.line_facts) the full profile runs, plus the row count. It prints CPU ms per member, split into the shared
  parse and the per-member facts, and how many members' column facts equal the full profile's, field by field
  (a dtype can differ: pandas infers a column's dtype from the rows it sees, and the union holds more rows).
This measures the lever; it is not wired into the index. What a member pass would still have to add (notes, time
span, kinds of text cells from the same functions) is in the full profile's other phases (benchmarks/member_cost.py).
"""

from __future__ import annotations

import argparse
import io
import time
import warnings
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from dslake_index.profilers import registry
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.stats import _HASH_BITS, ROW_SKETCH, column_stats, line_facts
from member_cost import family_members  # a script in this folder, which Python puts first on the path

# the fields family_stats reads from a member's stored column (family_stats._merged)
READ_FIELDS = ("dtype", "non_null", "nulls", "min", "max", "mean", "fill", "fill_count", "kinds", "shows", "gaps",
               "top_values", "unique")


def _plain_member(path: Path, profile: Any) -> bool:
    """Return whether a member's full profile reads it with no option at all (header on the first line, no preamble,
    footer, other delimiter or marker) and its text holds no quote: its non-blank lines are then its rows."""
    return profile.read_hint == f"pd.read_csv({PATH_PLACEHOLDER})" and '"' not in path.read_text()


def full_profiles(files: list[Path]) -> tuple[float, list[Any]]:
    """Return CPU ms per member of the full profile, and the profiles."""
    start = time.process_time()
    profiles = [registry.profile_path(f, Limits()) for f in files]
    return 1000 * (time.process_time() - start) / len(files), profiles


def _line_hashes(lines: list[str]) -> Any:
    """Return each line's row hash as stats.line_facts computes it (two CRC-32s, 53 bits)."""
    import numpy as np

    crc, mask = zlib.crc32, (1 << _HASH_BITS) - 1
    return np.array([((crc(d) << 21) ^ crc(d, 0x9E3779B9)) & mask for d in (ln.strip().encode() for ln in lines)],
                    dtype=np.int64)


def batch_facts(files: list[Path]) -> tuple[dict[str, float], list[tuple[int, list[Any]]], int]:
    """Return CPU ms per member of each step of the batch pass, each member's (rows, columns), and how many
    members' row sketches (duplicates, smallest hashes, edge hashes) differ from stats.line_facts of its lines."""
    import numpy as np
    import pandas as pd

    clock = time.process_time
    spent = {"read and index lines": 0.0, "parse distinct lines once": 0.0, "hash distinct lines once": 0.0,
             "per member: rows from the shared frame": 0.0, "per member: column facts": 0.0,
             "per member: row sketch from shared hashes": 0.0}
    start = clock()
    header = ""
    members: list[list[str]] = []
    for f in files:
        lines = f.read_text().splitlines()
        header = lines[0]
        members.append([ln for ln in lines[1:] if ln.strip()])
    index: dict[str, int] = {}
    rows_of = [np.fromiter((index.setdefault(ln, len(index)) for ln in body), dtype=np.int64, count=len(body))
               for body in members]
    at = clock()
    spent["read and index lines"] += at - start
    union = pd.read_csv(io.StringIO(header + "\n" + "\n".join(index)))
    spent["parse distinct lines once"] += clock() - at
    at = clock()
    hashes = _line_hashes(list(index))
    spent["hash distinct lines once"] += clock() - at
    out, differ = [], 0
    for body, rows in zip(members, rows_of, strict=True):
        at = clock()
        frame = union.take(rows).reset_index(drop=True)
        then = clock()
        spent["per member: rows from the shared frame"] += then - at
        columns = column_stats(frame, Limits())
        at = clock()
        spent["per member: column facts"] += at - then
        mine = hashes[rows]
        distinct = np.unique(mine)
        sketch = (len(mine) - len(distinct), distinct[:ROW_SKETCH].tolist(), [int(mine[0]), int(mine[-1])])
        spent["per member: row sketch from shared hashes"] += clock() - at
        differ += sketch != line_facts(body)
        out.append((len(frame), columns))
    return {k: 1000 * v / len(files) for k, v in spent.items()}, out, differ


def stacked_floor(files: list[Path], profiles: list[Any], members: int = 20) -> tuple[float, Counter[str], int]:
    """Return CPU ms per member of the numeric columns' counts, range, mean and distinct count for members at
    once (numpy over a members x rows x columns stack, no Python per member or column): the floor a member pass
    vectorised over a batch of one family's members could reach for those facts (the shared parse not counted).
    Also how many member-columns' facts differ from the full profile's, field by field, over the columns without a
    fill value (a fill takes itself out of the range and mean), and how many were compared."""
    import numpy as np
    import pandas as pd

    frames = [pd.read_csv(f) for f in files]
    numeric = [c for c, d in frames[0].dtypes.items() if d.kind in "iuf"]
    rows = len(frames[0])
    kept = [k for k, df in enumerate(frames) if len(df) == rows and list(df.columns) == list(frames[0].columns)]
    arrays = [frames[k][numeric].to_numpy(dtype=np.float64) for k in kept]
    facts = []
    start = time.process_time()
    for at in range(0, len(arrays), members):
        stack = np.stack(arrays[at : at + members])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            non_null = (~np.isnan(stack)).sum(1)
            low, high, mean = np.nanmin(stack, 1), np.nanmax(stack, 1), np.nanmean(stack, 1)
            ordered = np.sort(stack, axis=1)
            unique = ((ordered[:, 1:] != ordered[:, :-1]) & ~np.isnan(ordered[:, 1:])).sum(1) + (non_null > 0)
        facts += list(zip(non_null.tolist(), low.tolist(), high.tolist(), mean.tolist(), unique.tolist(),
                          strict=True))
    spent = 1000 * (time.process_time() - start) / max(1, len(arrays))
    differ: Counter[str] = Counter()
    compared = 0
    for k, (non_null, low, high, mean, unique) in zip(kept, facts, strict=True):
        stored = {c.name: c for c in profiles[k].tables[0].columns}
        for j, name in enumerate(numeric):
            col = stored.get(str(name))
            if col is None or col.fill is not None or not non_null[j]:
                continue
            compared += 1
            mine = {"non_null": non_null[j], "min": low[j], "max": high[j], "mean": float(f"{mean[j]:.6g}"),
                    "unique": unique[j]}
            for field, value in mine.items():
                if getattr(col, field) != value:
                    differ[field] += 1
    return spent, differ, compared


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--files", type=int, default=100)
    args = ap.parse_args()
    for folder in args.folders:
        if (family := family_members(folder, args.files)) is None:
            continue
        first, files = family
        full_ms, profiles = full_profiles(files)
        header = first.read_text().split("\n", 1)[0]
        plain = [(f, p) for f, p in zip(files, profiles, strict=True)
                 if _plain_member(f, p) and f.read_text().split("\n", 1)[0] == header]
        if len(plain) < len(files):
            # a preamble, a footer, quotes, a reading option or another header: the lines are not the family's rows
            print(f"{folder.name}: {len(files) - len(plain)} of {len(files)} members need reading options, hold "
                  f"quotes or have another header; the batch pass is measured on the other {len(plain)}")
        if len(plain) < 2:
            continue
        files, profiles = [f for f, _ in plain], [p for _, p in plain]
        spent, batch, sketches_differ = batch_facts(files)
        differ: Counter[str] = Counter()
        for profile, (n_rows, columns) in zip(profiles, batch, strict=True):
            table = profile.tables[0]
            if table.n_rows != n_rows:
                differ["n_rows"] += 1
            for mine, theirs in zip(columns, table.columns, strict=True):
                for name in READ_FIELDS:
                    if getattr(mine, name) != getattr(theirs, name):
                        differ[name] += 1
        print(f"{folder.name}: {len(files)} members; full profile {full_ms:.2f} CPU-ms each; batch pass "
              f"{sum(spent.values()):.2f} CPU-ms each:")
        for step, ms in spent.items():
            print(f"  {step:<44} {ms:6.2f} ms")
        print(f"  row sketches that differ from line_facts': {sketches_differ} of {len(files)}")
        floor_ms, floor_differ, compared = stacked_floor(files, profiles)
        print(f"  numeric columns' counts, range, mean, distinct for 20 members at once (numpy floor): "
              f"{floor_ms:.2f} CPU-ms per member; of {compared} member-columns without a fill value, differing from "
              "the full profile's: " + (", ".join(f"{k} {v}" for k, v in floor_differ.most_common()) or "none"))
        print("  column facts that differ from the full profile's (member-columns): "
              + (", ".join(f"{k} {v}" for k, v in differ.most_common()) or "none"))


if __name__ == "__main__":
    main()
