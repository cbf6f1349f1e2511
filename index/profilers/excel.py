"""Excel workbooks (xlsx, xlsm): every sheet, every table on it with its bounding box, header and read hint."""

from __future__ import annotations

import datetime as dt
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits, Profile, ProfileError, Table
from dslake_index.profilers.coordinates import swapped_coordinates
from dslake_index.profilers.repeats import duplicate_rows_note
from dslake_index.profilers.sheet_rows import FastReadError, sheet_values
from dslake_index.profilers.stats import (
    describe_columns,
    fill_notes,
    header_misfits,
    name_notes,
    row_facts,
    sample_rows,
    unique_column_names,
    year_outliers,
)
from dslake_index.profilers.textio import clip

# A small workbook is read whole, so its statistics are its own: a climate workbook's ranges came from 2,666 of
# its 7,507 rows (about 1.2 s more for its 2.4 MB); beyond WHOLE_BYTES the budget is SCAN_CELLS.
WHOLE_BYTES = 4 << 20
WHOLE_CELLS = 400_000
SCAN_CELLS = 80_000  # cells read per sheet to find tables; beyond, the row count comes from the dimension tag
MAX_COLS = 400  # columns looked at per sheet
NOTE_CHARS = 1000  # a text cell is kept whole up to this (a footnote can decide an answer); longer ones say so


@dataclass
class Block:
    """A rectangle of non-empty cells separated from others by empty rows/columns (0-based, end exclusive)."""

    r0: int
    r1: int
    c0: int
    c1: int
    title: list[str] = field(default_factory=list)


def _segments(mask: Any) -> list[tuple[int, int]]:
    segs, start = [], None
    for i, v in enumerate(mask.tolist()):
        if v and start is None:
            start = i
        elif not v and start is not None:
            segs.append((start, i))
            start = None
    if start is not None:
        segs.append((start, len(mask)))
    return segs


def xy_cut(occ: Any, r0: int, r1: int, c0: int, c1: int, depth: int = 0) -> list[Block]:
    """Split a sheet's occupancy grid into blocks at fully empty rows and columns, recursively."""
    import numpy as np

    sub = occ[r0:r1, c0:c1]
    rows, cols = sub.any(axis=1), sub.any(axis=0)
    if not rows.any():
        return []
    rr, cc = np.flatnonzero(rows), np.flatnonzero(cols)
    r0, r1, c0, c1 = r0 + int(rr[0]), r0 + int(rr[-1]) + 1, c0 + int(cc[0]), c0 + int(cc[-1]) + 1
    if depth > 12:
        return [Block(r0, r1, c0, c1)]
    sub = occ[r0:r1, c0:c1]
    bands = _segments(sub.any(axis=1))
    if len(bands) > 1:
        return [b for s, e in bands for b in xy_cut(occ, r0 + s, r0 + e, c0, c1, depth + 1)]
    bands = _segments(sub.any(axis=0))
    if len(bands) > 1:
        return [b for s, e in bands for b in xy_cut(occ, r0, r1, c0 + s, c0 + e, depth + 1)]
    return [Block(r0, r1, c0, c1)]


def _empty(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _yearlike(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 1500 <= v <= 2200


def _missing_marker(v: Any) -> bool:
    """Return True for a cell pandas' readers take for a missing value ('NA', 'n/a', '#N/A', 'null', ...)."""
    from pandas._libs.parsers import STR_NA_VALUES

    return isinstance(v, str) and v.strip() in STR_NA_VALUES


def _number_column(j: int, below: list[list[Any]]) -> bool:
    """Return True when column j's filled cells below (missing markers aside) are all numbers or dates."""
    col = [r[j] for r in below if j < len(r) and not _empty(r[j]) and not _missing_marker(r[j])]
    return bool(col) and all(isinstance(x, (int, float, dt.date)) and not isinstance(x, bool) for x in col)


def _labelish_row(row: list[Any], below: list[list[Any]]) -> bool:
    """Return True when a row's cells are all labels: text, or years heading columns that are not years."""
    vals = [(j, v) for j, v in enumerate(row) if not _empty(v)]
    if not vals:
        return False
    over_numbers = [v for j, v in vals if _number_column(j, below)]
    if over_numbers and all(_missing_marker(v) for v in over_numbers):
        return False  # 'NA' wherever numbers go: a data row with its numbers missing, not a header
    for j, v in vals:
        if isinstance(v, str):
            continue
        if _yearlike(v):
            col = [r[j] for r in below if j < len(r) and not _empty(r[j])]
            if col and not all(_yearlike(x) for x in col):
                continue
        return False
    return True


def _text_shape(v: Any) -> str:
    """Return a cell's shape: runs of capitals, small letters and digits as A, a, 9 ('BRD8' -> 'A9')."""
    shape = re.sub(r"[A-Z]+", "A", str(v).strip())
    shape = re.sub(r"[a-z]+", "a", shape)
    return re.sub(r"[0-9]+", "9", shape)


def _first_row_is_data(rows: list[list[Any]]) -> bool:
    """Return True when every filled cell of the first row has a shape its column's other cells share.

    In a block of text only, types cannot tell a header from data: a list of gene names ('BRD8', 'DHX15', ...)
    has none, while a header ('Gene') is written unlike the values under it.
    """
    first = [(j, v) for j, v in enumerate(rows[0]) if not _empty(v)]
    for j, v in first:
        shapes = {_text_shape(r[j]) for r in rows[1:] if j < len(r) and not _empty(r[j])}
        if _text_shape(v) not in shapes:
            return False
    return bool(first)


def find_header(rows: list[list[Any]]) -> int | None:
    """Return the index of the header row in a block (the last well-filled label row on top), or None."""
    lead: list[tuple[int, int]] = []
    for k, row in enumerate(rows[:12]):
        if _labelish_row(row, rows[k + 1 : k + 30]):
            lead.append((k, sum(1 for v in row if not _empty(v))))
        else:
            break
    if not lead:
        return None
    # a block of text only (every row labels, not just the first 12): the header is the first row, if any
    if len(lead) == len(rows) or all(_labelish_row(row, []) for row in rows[len(lead):]):
        return None if len(rows) > 2 and _first_row_is_data(rows) else 0
    top = max(f for _, f in lead)
    return [k for k, f in lead if f >= 0.5 * top][-1]


def _col_name(v: Any, j: int) -> str:
    if _empty(v):
        return f"Unnamed: {j}"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _first(row: list[Any]) -> Any:
    return next(v for v in row if not _empty(v))


def _frame(rows: list[list[Any]], names: list[str]) -> Any:
    import pandas as pd

    # the cells pandas' readers take for missing values by default ('NA', 'n/a', '#N/A', 'null', ...): the load
    # line's read_excel does, so a column of numbers with 'NA' in 50 rows is float with 50 missing, not a mix
    from pandas._libs.parsers import STR_NA_VALUES

    df = pd.DataFrame(rows, columns=names, dtype=object)
    # Each column is typed on its own and the frame is made once from them: assigning hundreds of columns back
    # into the object frame one by one split and copied its block each time (a wide sheet's 312 columns).
    columns: dict[Any, Any] = {}
    for c in df.columns:
        col = df[c]
        s = col.dropna()
        kinds = set(map(type, s.tolist()))
        if str in kinds:
            missing = s.isin(STR_NA_VALUES)
            if missing.any():
                col = col.where(~col.isin(STR_NA_VALUES), None)
                s = s[~missing]
                kinds = set(map(type, s.tolist()))
        if not s.empty:
            # a number (not a bool), a date or a text in every cell: tested once per distinct type, not per value
            if all(issubclass(k, (int, float)) and not issubclass(k, bool) for k in kinds):
                col = pd.to_numeric(col)
                if col.notna().all() and (col % 1 == 0).all():
                    col = col.astype("int64")
            elif all(issubclass(k, (dt.datetime, dt.date)) for k in kinds):
                col = pd.to_datetime(col, errors="coerce")
            elif all(issubclass(k, str) for k in kinds):
                col = col.astype("str").where(col.notna(), None)
        columns[c] = col
    return pd.DataFrame(columns, index=df.index, columns=df.columns)


def _units(rows: list[list[Any]]) -> dict[int, str]:
    units: dict[int, str] = {}
    for row in rows:
        for j, v in enumerate(row):
            if isinstance(v, str) and len(v.strip()) <= 16 and v.strip()[:1] in "([" and v.strip()[-1:] in ")]":
                units[j] = v.strip()[1:-1].strip()
    return units


def _letter(c: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(c + 1)


def block_table(grid: list[list[Any]], occ: Any, b: Block, sheet: str, several: bool, limits: Limits,
                dim_rows: int | None, truncated: bool) -> tuple[Table, list[str]]:
    """Describe one table block: header row, columns, rows, location and a read_excel hint."""
    rows = [(grid[r] + [None] * b.c1)[b.c0 : b.c1] for r in range(b.r0, b.r1)]
    notes: list[str] = []
    h = find_header(rows)
    width = b.c1 - b.c0
    if h is None:
        names = [str(j) for j in range(width)]
        data = rows
        header_abs = None
    else:
        names = unique_column_names([_col_name(v, j) for j, v in enumerate(rows[h])])
        data = rows[h + 1 :]
        header_abs = b.r0 + h
        above = rows[:h]
        titles = [str(next(v for v in r if not _empty(v))).strip() for r in above
                  if sum(1 for v in r if not _empty(v)) == 1]
        b.title = b.title + titles
        units = _units(above)
        if above and len(titles) < len(above):
            notes.append(f"{len(above) - len(titles)} row(s) above the header row {header_abs + 1} add labels "
                         "to some columns (a grouped or two-row header)")
        if data and _empty(data[0][0]) and sum(1 for v in data[0] if not _empty(v)) >= 2 and len(data) > 2 and \
                not _empty(data[1][0]) and all(isinstance(v, (str, int)) for v in data[0] if not _empty(v)):
            notes.append(f"row {header_abs + 2} looks like a second header row (labels under the header): "
                         "it is read as the first data row")
    footer: list[str] = []
    first_data = b.r0 + (h + 1 if h is not None else 0)  # the filled cells of each data row, from the grid's
    fills = sorted(occ[first_data : b.r1, b.c0 : b.c1].sum(axis=1).tolist())  # occupancy (rows == data here)
    typical = fills[len(fills) // 2] if fills else 0
    while typical >= 2 and len(data) > 2 and sum(1 for v in data[-1] if not _empty(v)) == 1 \
            and isinstance(_first(data[-1]), str) and _empty(data[-1][-1]):
        footer.insert(0, clip(_first(data.pop()).strip(), NOTE_CHARS))
    if footer:
        notes.append(f"{len(footer)} note row(s) under the table (excluded by nrows): " + " | ".join(footer[:3]))
    filled = names
    if h is not None and h > 0:  # a two-row header: empty header cells take the label from the row above
        filled = unique_column_names([_col_name(rows[h - 1][j], j) if n.startswith("Unnamed: ") and not _empty(rows[h - 1][j])
                          else n for j, n in enumerate(names)])
    end_row = dim_rows if truncated and b.r1 >= len(grid) and dim_rows else b.r1
    loc = f"{_letter(b.c0)}{b.r0 + 1 + (h or 0)}:{_letter(b.c1 - 1)}{end_row}"
    table = Table(name=sheet, n_cols=width, header_row=header_abs,
                  skip_rows=(header_abs if header_abs is not None else b.r0), location=loc)
    df = _frame(data, filled)
    describe_columns(table, df, limits)
    table.duplicate_rows, table.row_hashes = row_facts(df)
    notes += duplicate_rows_note(table.duplicate_rows, len(df))
    notes += name_notes(filled) + header_misfits(df) + year_outliers(df) + swapped_coordinates(df) + fill_notes(table.columns + table.later_columns)
    if h is not None:
        for j, unit in units.items():
            if j < len(table.columns):
                table.columns[j].unit = table.columns[j].unit or unit
    table.n_rows = len(data)
    if truncated and b.r1 >= len(grid) and dim_rows:
        table.n_rows = dim_rows - (header_abs + 1 if header_abs is not None else b.r0)
        table.n_rows_exact = False
        notes.append(f"only the first {len(grid):,} rows were scanned; about {table.n_rows:,} data rows "
                     "(from the sheet's dimension)")
    table.sample_rows = sample_rows(df, limits)
    kw: list[str] = [PATH_PLACEHOLDER, f"sheet_name={sheet!r}"]
    if header_abs is None or filled != names:
        first_data = b.r0 if header_abs is None else header_abs + 1
        kw.append("header=None")
        if first_data:
            kw.append(f"skiprows={first_data}")
        if filled != names:
            kw.append(f"names={filled!r}")
    elif header_abs:
        kw.append(f"header={header_abs}")
    if b.c0 or several:
        kw.append(f"usecols={_letter(b.c0) + ':' + _letter(b.c1 - 1)!r}")
    reaches_end = truncated and b.r1 >= len(grid)
    if not reaches_end and (several or footer or b.r1 < len(grid)):
        kw.append(f"nrows={len(data)}")
    table.read_hint = f"pd.read_excel({', '.join(kw)})"
    return table, notes


def _pandas_names(table: Table, grid: list[list[Any]], b: Block) -> None:
    """Name the columns as read_excel will: it numbers repeated names across the whole header row, usecols or not.

    Two tables side by side under one header row that both have 'Age_ky' get 'Age_ky' and 'Age_ky.1'.
    """
    if table.header_row is None or "names=" in (table.read_hint or ""):
        return
    row = grid[table.header_row]
    full = unique_column_names([_col_name(v, j) for j, v in enumerate(row)])
    if len(full) >= b.c1:
        for col, name in zip(table.columns, full[b.c0 : b.c1], strict=False):
            col.name = name


def _merge(blocks: list[Block], occ: Any, grid: list[list[Any]]) -> list[Block]:
    """Join blocks that one table was split into: side by side over the same rows, or across a blank row."""
    blocks = sorted(blocks, key=lambda b: (b.r0, b.c0))
    changed = True
    while changed:
        changed = False
        for a in blocks:
            for b in blocks:
                if a is b:
                    continue
                side = a.r0 == b.r0 and a.r1 == b.r1 and 0 < b.c0 - a.c1 <= 1 and a.r1 - a.r0 > 1
                # a blank row inside a table: same columns, a short gap, and no header row starting the part below
                below = (a.c0 == b.c0 and a.c1 == b.c1 and 0 < b.r0 - a.r1 <= 2 and a.r1 - a.r0 > 2
                         and bool(occ[b.r0, b.c0 : b.c1].sum() >= 0.5 * (b.c1 - b.c0))
                         and not _labelish_row(grid[b.r0][b.c0 : b.c1], [r[b.c0 : b.c1] for r in grid[b.r0 + 1 : b.r0 + 10]]))
                if side or below:
                    a.r0, a.r1 = min(a.r0, b.r0), max(a.r1, b.r1)
                    a.c0, a.c1 = min(a.c0, b.c0), max(a.c1, b.c1)
                    blocks.remove(b)
                    changed = True
                    break
            if changed:
                break
    return blocks


def _block_text(grid: list[list[Any]], b: Block) -> str:
    parts = [str(v).strip() for r in range(b.r0, b.r1) for v in (grid[r] + [None] * b.c1)[b.c0 : b.c1]
             if not _empty(v)]
    return clip(" | ".join(parts), NOTE_CHARS)


def _first_rows(rows: Any, budget: int) -> tuple[list[list[Any]], bool]:
    """Return up to budget rows (each cut at MAX_COLS) and whether the sheet has more."""
    grid: list[list[Any]] = []
    for r, row in enumerate(rows):
        if r >= budget:
            return grid, True
        grid.append(list(row[:MAX_COLS]))
    return grid, False


def _read_grid(ws: Any, cells: int = 0) -> tuple[list[list[Any]], bool, int | None, int | None]:
    dim_rows, dim_cols = ws.max_row, ws.max_column
    ws.reset_dimensions()
    per_row = min(MAX_COLS, dim_cols or 50)
    budget = max(200, (cells or SCAN_CELLS) // max(1, per_row))
    try:
        grid, truncated = _first_rows(sheet_values(ws), budget)
    except FastReadError:  # a sheet the fast path does not read as openpyxl would: openpyxl reads it, from the top
        grid, truncated = _first_rows(ws.iter_rows(values_only=True), budget)
    while grid and all(_empty(v) for v in grid[-1]):
        grid.pop()
    return grid, truncated, dim_rows, dim_cols


def sheet_tables(ws: Any, limits: Limits, cells: int = 0) -> tuple[list[Table], dict[str, Any], list[str]]:
    """Find and describe the tables of one sheet (reading up to cells cells, SCAN_CELLS when 0); return them, the
    sheet's facts and notes."""
    import numpy as np

    grid, truncated, dim_rows, dim_cols = _read_grid(ws, cells)
    info: dict[str, Any] = {"name": ws.title, "dimension": None, "tables": 0, "notes": []}
    if getattr(ws, "sheet_state", "visible") != "visible":
        info["state"] = ws.sheet_state
    if not grid:
        return [], info, []
    width = max(len(r) for r in grid)
    occ = np.zeros((len(grid), width), dtype=bool)
    for r, row in enumerate(grid):  # not _empty(v), inline: a call per cell was a tenth of a big sheet's CPU
        filled = [c for c, v in enumerate(row) if v is not None and (not isinstance(v, str) or v.strip())]
        if filled:
            occ[r, filled] = True
    blocks = _merge(xy_cut(occ, 0, len(grid), 0, width), occ, grid)
    info["dimension"] = f"A1:{_letter(width - 1)}{dim_rows if truncated and dim_rows else len(grid)}"
    tables_b, texts = [], []
    for b in blocks:
        nr, nc = b.r1 - b.r0, b.c1 - b.c0
        cells = int(occ[b.r0 : b.r1, b.c0 : b.c1].sum())
        if nr == 1 or cells <= 2 or (nc == 1 and nr <= 2):
            texts.append(b)
        else:
            tables_b.append(b)
    for t in texts:  # a text block just above a table is its title
        for b in tables_b:
            if 0 < b.r0 - t.r1 <= 3 and t.c0 < b.c1 and b.c0 <= t.c0:
                b.title.append(_block_text(grid, t))
                break
        info["notes"].append(f"{_letter(t.c0)}{t.r0 + 1}: {_block_text(grid, t)}")
    several = len(tables_b) > 1
    tables, notes = [], []
    for b in sorted(tables_b, key=lambda b: (b.r0, b.c0)):
        table, tnotes = block_table(grid, occ, b, ws.title, several, limits, dim_rows, truncated)
        _pandas_names(table, grid, b)
        if several:
            table.name = f"{ws.title}!{table.location}"
        notes += [f"sheet '{ws.title}' {table.location}: {n}" for n in tnotes]
        if b.title:
            info.setdefault("titles", {})[table.location] = b.title[:3]
            notes.append(f"sheet '{ws.title}' {table.location} is titled " + " / ".join(repr(t) for t in b.title[:3]))
        tables.append(table)
    info["tables"] = len(tables)
    if several:
        notes.append(f"sheet '{ws.title}' holds {len(tables)} separate tables: read each with its own "
                     "header/usecols/nrows")
    return tables, info, notes


def profile_xlsx(path: Path, size: int, limits: Limits) -> Profile:
    """Profile a workbook with openpyxl in read-only mode: sheets, tables with bounding boxes, hints."""
    with warnings.catch_warnings():
        # "Unknown extension is not supported and will be removed" and the like: openpyxl's notes about parts it
        # skips (data validation, slicers) say nothing about the data and filled `dslake index`'s output
        warnings.filterwarnings("ignore", category=UserWarning, module="openpyxl")
        return _profile_workbook(path, size, limits)


def _profile_workbook(path: Path, size: int, limits: Limits) -> Profile:
    import openpyxl

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError, EOFError) as exc:
        raise ProfileError(f"not a readable Excel workbook: {type(exc).__name__}: {exc}"[:300]) from exc
    except Exception as exc:  # openpyxl raises its own and lxml/expat errors on corrupt parts
        raise ProfileError(f"not a readable Excel workbook: {type(exc).__name__}: {exc}"[:300]) from exc
    prof = Profile(format="xlsx", size=size, read_hint="pd.read_excel({path}, sheet_name=None)")
    sheets = []
    try:
        names = wb.sheetnames
        for ws in wb.worksheets[: limits.max_sheets]:
            tables, info, notes = sheet_tables(ws, limits, WHOLE_CELLS if size <= WHOLE_BYTES else SCAN_CELLS)
            prof.tables += tables
            prof.notes += notes
            sheets.append(info)
    except ProfileError:
        raise
    except Exception as exc:  # a corrupt sheet part: the workbook cannot be read reliably
        raise ProfileError(f"corrupt Excel sheet data: {type(exc).__name__}: {exc}"[:300]) from exc
    finally:
        wb.close()
    prof.structure = {"sheets": sheets, "sheet_names": names}
    prof.sampled = any(not t.n_rows_exact for t in prof.tables)
    if len(names) > limits.max_sheets:
        prof.notes.append(f"{len(names)} sheets; the first {limits.max_sheets} are described")
    prof.notes.insert(0, f"workbook with {len(names)} sheet(s): {', '.join(names[:30])}")
    prof.headings = [n for n in names][:30]
    first_note = next((s["notes"][0].split(": ", 1)[1] for s in sheets if s["notes"]), None)
    first_title = next((t[0] for s in sheets for t in s.get("titles", {}).values()), None)
    prof.title = first_title or first_note
    if any(t.location and not t.location.startswith("A1:") for t in prof.tables) or len(prof.tables) > len(sheets):
        prof.notes.append("some tables do not start at A1: use each table's read hint (header, usecols, nrows)")
    prof.notes.append("formulas are read as their cached values (data_only); a never-calculated formula reads NaN")
    return prof
