"""Delimited files that stack several tables: a summary block, titled tables each with its own header, footnotes.

Data-book CSVs are laid out for print: tables one under another, separated by empty lines, each under a one-cell
title, with notes at the end. Read as one table they give 'Unnamed: N' columns and header rows among the data;
each table needs its own skiprows/nrows/usecols. This module finds the tables from the lines alone.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from typing import Any

from dslake_index.profilers.base import Limits, Profile, Table
from dslake_index.profilers.delimited import (
    DELIM_NAME,
    FORMAT_OF,
    Layout,
    _cell_kind,
    _is_comment,
    has_header,
    hint_of,
    load_frame,
    read_kwargs,
)
from dslake_index.profilers.stats import (
    describe_columns,
    fill_notes,
    header_misfits,
    name_notes,
    sample_rows,
    share_totals,
    year_outliers,
)
from dslake_index.profilers.textio import clip
from dslake_index.profilers.totals import total_disagreements, year_sums


@dataclass
class Block:
    """One table of a stacked file, by physical lines."""

    start: int  # line of the header row (or of the first data row when there is no header)
    end: int  # one past the last line of the table
    header: bool
    width: int  # leading columns in use: the ones up to the last filled cell
    rows: int = 0  # data rows pandas reads (lines after the header that are not blank)
    title: str | None = None


@dataclass
class Stack:
    """The tables of a stacked file and the one-cell lines (notes) between and after them."""

    tables: list[Block] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)  # (line, text)


def _filled(row: list[str]) -> list[int]:
    return [j for j, c in enumerate(row) if c.strip()]


def _kinds(rows: list[list[str]], width: int) -> list[set[str]]:
    kinds: list[set[str]] = [set() for _ in range(width)]
    for r in rows:
        for j in range(min(width, len(r))):
            kinds[j].add(_cell_kind(r[j]))
    return kinds


def find_stack(lines: list[str], rows: list[list[str]], first: int, comments: bool = False) -> Stack | None:
    """Return the tables stacked from line `first` on (rows: the lines split into cells), or None for one table.

    A sub-table's header is decided the way the file's own header is (delimited.has_header). comments: lines
    starting with '#' are comments (pandas is told comment='#'); otherwise '#' is data ('# of Reports').
    """

    def skip(k: int) -> bool:
        return comments and _is_comment(lines[k])

    groups: list[tuple[int, int]] = []
    header_line = lines[first].strip()
    i = first
    while i < len(lines):
        if not _filled(rows[i]) or skip(i):
            i += 1
            continue
        j = i + 1
        # a gap, a comment or the first table's header line again ends a group; title lines just above a
        # repeated header belong to the group that header starts
        while j < len(lines) and _filled(rows[j]) and not skip(j):
            if lines[j].strip() == header_line and any(len(_filled(r)) > 1 for r in rows[i:j]):
                while j - 1 > i and len(_filled(rows[j - 1])) <= 1:
                    j -= 1
                break
            j += 1
        groups.append((i, j))
        i = j
    stack = Stack()
    for start, end in groups:
        k = start
        titles = []
        while k < end and len(_filled(rows[k])) <= 1:
            titles.append((k, rows[k][_filled(rows[k])[0]].strip()))
            k += 1
        if k >= end:
            stack.notes += titles
            continue
        width = max(max(_filled(r)) + 1 for r in rows[k:end])
        body = [r[:width] for r in rows[k:end]]
        header = len(body) > 1 and has_header(body[0], body[1:])
        if len(body) == 1 and not any(_cell_kind(c) == "number" for c in body[0]):
            stack.notes += titles + [(k, " | ".join(c.strip() for c in body[0] if c.strip()))]
            continue
        prev = stack.tables[-1] if stack.tables else None
        if not header and not titles and prev is not None and _continues(prev, rows, body, width):
            prev.end = end  # a gap inside a table: the rows below carry on the same columns
            continue
        stack.notes += titles[:-1]
        block = Block(start=k, end=end, header=header, width=width, title=titles[-1][1] if titles else None)
        stack.tables.append(block)
    if len(stack.tables) < 2:
        return None
    for b in stack.tables:
        b.rows = sum(1 for ln in lines[b.start + b.header : b.end] if ln.strip())
    return stack


def _continues(prev: Block, rows: list[list[str]], body: list[list[str]], width: int) -> bool:
    """Return True when header-less rows below a gap have the kinds of cells the table above has."""
    if width > prev.width:
        return False
    above = _kinds([r[: prev.width] for r in rows[prev.start + prev.header : prev.end]], prev.width)
    here = _kinds(body, width)
    return all(k <= above[j] | {"empty"} for j, k in enumerate(here))


def stack_of(lines: list[str], lay: Layout) -> Stack | None:
    """Return the stacked tables of a whole delimited file, or None when it holds one table (the usual case)."""
    first = lay.first_line
    sep = lay.sep
    header = lines[first].strip() if first < len(lines) else ""
    # cheap test first (C speed: most files are one table): a stack needs a gap (an empty line, or one of
    # empty cells) or the header line again. Lines hold no '\n', so each is a line of the rest equal to it
    # (list membership, no copy of the file's text)
    rest = lines[first + 1 :]
    empty_row = sep * (lay.n_fields - 1)  # a spreadsheet's empty row: only the delimiters
    if not header or (rest and "" not in rest and empty_row not in rest and header not in rest):
        return None
    try:
        rows = list(csv.reader(lines, delimiter=sep))
    except csv.Error:
        return None
    if len(rows) != len(lines):
        return None  # a quoted field runs over several lines: lines are not rows, skiprows would miss
    stack = find_stack(lines, rows, first, lay.comment)
    if stack is not None and stack.tables[0].title is None:
        above = [p for p in lay.preamble if p]
        if len(above) >= 2:  # the file's title, then the first table's own title
            stack.tables[0].title = above[-1]
    return stack


def profile_stacked(text: str, lay: Layout, stack: Stack, encoding: str, size: int, limits: Limits,
                    notes: list[str]) -> Profile:
    """Describe each stacked table with its own hint (skiprows, nrows, usecols) and the notes around them."""
    base = {k: v for k, v in read_kwargs(lay, encoding).items() if k not in ("skiprows", "header", "nrows")}
    tables: list[Table] = []
    table_notes: list[str] = []
    frames: list[tuple[str, Any]] = []
    for i, b in enumerate(stack.tables):
        kw: dict[str, Any] = dict(base)
        if b.start:
            kw["skiprows"] = b.start
        if not b.header:
            kw["header"] = None
        if b.width < lay.n_fields:
            kw["usecols"] = list(range(b.width))
        kw["nrows"] = b.rows
        df, kw, frame_notes = load_frame(text, kw, lay)
        t = Table(name=b.title, n_rows=len(df), n_cols=len(df.columns), header_row=b.start if b.header else None,
                  skip_rows=b.start, location=f"lines {b.start + 1}-{b.end}")
        describe_columns(t, df, limits)
        t.sample_rows = sample_rows(df, limits)
        t.read_hint = hint_of(kw)
        tables.append(t)
        frames.append((f"table {i + 1}", df))
        t.year_sums = year_sums(df)
        if not b.header and len(df) <= 12:  # label/value lines: every value is worth seeing, and they are few
            lines_ = [": ".join(str(v).strip() for v in row if str(v).strip() and str(v) != "nan")
                      for row in df.astype(str).itertuples(index=False)]
            table_notes.append(f"table {i + 1}: label/value lines: " + " | ".join(clip(x, 200) for x in lines_))
        names = [str(c) for c in df.columns]
        for n in (frame_notes + name_notes(names) + header_misfits(df) + year_outliers(df) + fill_notes(t.columns + t.later_columns)
                  + share_totals(df)):
            table_notes.append(f"table {i + 1}: {n}")
    titled = [f"{i + 1} {t.name!r} ({t.location})" if t.name else f"{i + 1} ({t.location})"
              for i, t in enumerate(tables)]
    head = [f"{DELIM_NAME[lay.sep]}-delimited text holding {len(tables)} tables stacked one under another, each "
            f"with its own header row (or none): load each with its own line below (skiprows, nrows, usecols); "
            f"read as one table they would mix. Tables: " + "; ".join(titled)]
    if lay.preamble:
        head.append(f"{lay.first_line} line(s) before the first table: "
                    + " | ".join(clip(p, 300) for p in lay.preamble if p))
    between = [f"line {k + 1}: {clip(t, 1000)}" for k, t in stack.notes]
    if between:
        head.append("text lines between and after the tables (titles, footnotes): " + " | ".join(between))
    head += total_disagreements([t for _, t in stack.notes] + [p for p in lay.preamble if p], frames)
    if len({tuple(c.name for c in t.columns) for t in tables}) == 1:
        head.append(f"all {len(tables)} tables have the same columns: pd.concat of their loads gives one table "
                    "(add each table's title as a column to keep them apart)")
    # merge repeated notes (thousands=',' in every table) into one
    seen: dict[str, list[str]] = {}
    for n in table_notes:
        label, _, rest = n.partition(": ")
        seen.setdefault(rest, []).append(label.removeprefix("table "))
    merged = [f"table{'s' if len(v) > 1 else ''} {', '.join(v)}: {k}" for k, v in seen.items()]
    title = next((p for p in lay.preamble if p), None)
    return Profile(format=FORMAT_OF[lay.sep], size=size, encoding=encoding, title=title, tables=tables,
                   notes=notes + head + merged, read_hint=None,
                   headings=[t.name for t in tables if t.name][:12])
