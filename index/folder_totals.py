"""Totals that disagree across a folder's files: a year-by-type table whose types sum to other than the same
folder's yearly total table (6,495,932 against 6,471,708 reports in 2024).

Each profile keeps, for a table keyed by year, its int columns summed per year (`Table.year_sums`). When a folder's
entries are rebuilt, this module compares those sums between its files: two tables over the same years whose
sums are close (the same count) but not equal in some years get one line each, naming the other file and the
years with their numbers, so a share question knows the parts and the total are not one count. Only the folders
being rebuilt are checked, from profiles already stored: no file is read again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIN_SHARED_YEARS = 3
CLOSE = 0.1  # median relative gap under which two yearly series count one thing (else they measure different things)


@dataclass
class YearTable:
    """One file's table keyed by year: its path, the table's label in the file, and its sums per year."""

    path: str
    label: str
    columns: list[str]
    by_year: dict[int, int]


def year_tables(path: str, tables: list[Any]) -> list[YearTable]:
    """Return the tables of a profile (Table objects) that carry sums per year."""
    found = []
    for i, t in enumerate(tables):
        sums = t.year_sums
        if sums:
            label = "" if len(tables) == 1 else f" (table {i + 1})"
            found.append(YearTable(path, label, sums["columns"], dict(zip(sums["years"], sums["sums"], strict=True))))
    return found


def disagreements(found: list[YearTable]) -> dict[str, list[str]]:
    """Return, per path, lines on its yearly sums that disagree with another file's over the same years."""
    notes: dict[str, list[str]] = {}
    for a in found:
        if len(a.columns) < 2:
            continue  # the parts: a table of several counts a year, against a table of one total a year
        for b in found:
            if b.path == a.path or len(b.columns) != 1:
                continue
            line = _compare(a, b)
            if line is None:
                continue
            parts, total = line
            notes.setdefault(a.path, []).append(parts)
            notes.setdefault(b.path, []).append(total)
    return notes


def _name(t: YearTable) -> str:
    return t.path.rsplit("/", 1)[-1] + t.label


def _compare(a: YearTable, b: YearTable) -> tuple[str, str] | None:
    years = sorted(set(a.by_year) & set(b.by_year))
    if len(years) < MIN_SHARED_YEARS:
        return None
    gaps = sorted(abs(a.by_year[y] - b.by_year[y]) / max(1, abs(b.by_year[y])) for y in years)
    if gaps[len(gaps) // 2] > CLOSE:
        return None
    over = [y for y in years if a.by_year[y] > b.by_year[y]]
    under = [y for y in years if a.by_year[y] < b.by_year[y]]
    if not over and not under:
        return None
    off = sorted(over + under)
    last = off[-1]
    since = ""
    run = [y for y in years if y >= off[0]]
    if len(off) >= MIN_SHARED_YEARS and run == off:
        since = f", every year from {off[0]}"
    way = "more than" if len(over) >= len(under) else "less than"
    columns = ", ".join(repr(c) for c in a.columns[:6]) + (" ..." if len(a.columns) > 6 else "")
    numbers = f"{last}: {a.by_year[last]:,} against {b.by_year[last]:,}"
    years_said = f"in {len(off)} of {len(years)} shared years{since} ({numbers})"
    parts = (f"its columns {columns} sum per year to {way} the yearly total {b.columns[0]!r} of {_name(b)} "
             f"{years_said}: the parts overlap or are counted otherwise, so a share of the total must not use the "
             "parts' sum as the total")
    total = (f"its yearly {b.columns[0]!r} is {'less' if way == 'more than' else 'more'} than the sum of the columns "
             f"{columns} of {_name(a)} {years_said}: use this total for shares of the whole count, the parts' sum only for "
             "shares among the parts")
    return parts, total
