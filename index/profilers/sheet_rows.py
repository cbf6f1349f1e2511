"""A worksheet's cell values row by row, as openpyxl's read-only `iter_rows(values_only=True)` gives them, faster.

openpyxl's read-only reader hands every XML element of a sheet to Python and builds a dict per cell: for the
2.4 MB climate workbook of the KramaBench lake (222k cells) that was ~80% of its profile's CPU. Here lxml's
iterparse hands over only the `<row>` elements, and the common cells (numbers, shared strings, booleans, cached
formula strings, errors) are decoded in a few lines. Everything else is openpyxl's own code: the workbook (shared
strings, date styles, epoch) is opened by openpyxl, and a cell with a date style or an unusual type (inline
strings, ISO dates, a coordinate we do not read) is decoded by openpyxl's `WorkSheetParser.parse_cell`.

Rows come out exactly as openpyxl's do: a missing row is `[]` (unsized sheet, after `reset_dimensions()`), a row
is as wide as its last cell's column, a row numbered at or below one already given is skipped. A sheet whose XML
lxml refuses, or anything else unexpected, raises `FastReadError`: the caller then reads the sheet with openpyxl
itself, so a damaged sheet fails with openpyxl's own reason, never ours.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_ROW, _VALUE = _NS + "row", _NS + "v"


class FastReadError(Exception):
    """The fast path cannot read this sheet the way openpyxl would: read it with openpyxl instead."""


def sheet_values(ws: Any) -> Iterator[tuple[Any, ...] | list[Any]]:
    """Yield a read-only worksheet's rows of values (openpyxl's values_only rows, for an unsized sheet).

    Raises FastReadError (possibly after some rows were yielded) when the sheet must be read by openpyxl instead.
    """
    from lxml import etree
    from openpyxl.utils.cell import column_index_from_string
    from openpyxl.worksheet._reader import WorkSheetParser

    book = ws.parent
    strings = ws._shared_strings
    dates = book._date_formats
    # openpyxl's own cell decoder, for what the fast path leaves to it (dates, inline strings, odd cells)
    slow = WorkSheetParser(None, strings, data_only=True, epoch=book.epoch, date_formats=dates,
                           timedelta_formats=book._timedelta_formats)
    columns: dict[str, int] = {}
    counter = 1
    try:
        with ws._get_source() as src:
            # no entity resolution, no network: a worksheet is untrusted input
            parse = etree.iterparse(src, events=("end",), tag=_ROW, resolve_entities=False, no_network=True,
                                    huge_tree=False, remove_comments=True, remove_pis=True)
            row_number = 0
            for _, row in parse:
                if row_number == 0 and counter == 1 and row.getroottree().docinfo.doctype:
                    # openpyxl reads through defusedxml, which refuses a DTD: let it refuse this one too
                    raise FastReadError("a worksheet with a DTD")
                r = row.get("r")
                if r is None:
                    row_number += 1
                else:
                    try:
                        row_number = int(r)
                    except ValueError as exc:
                        raise FastReadError(f"row number {r!r}") from exc
                cells: list[tuple[int, Any]] = []
                column = 0
                for c in row:  # every child is read as a cell, as openpyxl does
                    get = c.get
                    kind, ref, style = get("t"), get("r"), get("s")
                    style_id = int(style) if style else 0
                    if ref:
                        letters = ref.rstrip("0123456789")
                        if len(letters) == len(ref):  # no row digits: openpyxl's own error, or its reading
                            slow.row_counter, slow.col_counter = row_number, column
                            cell = slow.parse_cell(c)
                            column = cell["column"]
                            cells.append((column, cell["value"]))
                            continue
                        column = columns.get(letters, 0)
                        if not column:  # as openpyxl reads it (any case; 'A' to 'ZZZ', else ValueError)
                            column = columns[letters] = column_index_from_string(letters)
                    else:
                        column += 1
                    if kind in (None, "n", "s", "b", "str", "e") and style_id not in dates:
                        # openpyxl's findtext(v) or None; lxml's findtext is slow, a cell is <v> or <f><v>
                        children = len(c)
                        if children == 1:
                            first = c[0]
                            value = (first.text or None) if first.tag == _VALUE else None
                        elif children:
                            value = next((ch.text for ch in c if ch.tag == _VALUE), None) or None
                        else:
                            value = None
                        if value is not None:
                            if kind is None or kind == "n":  # openpyxl's _cast_number, without a call
                                value = float(value) if "." in value or "E" in value or "e" in value \
                                    else int(value)
                            elif kind == "s":
                                value = strings[int(value)]
                            elif kind == "b":
                                value = bool(int(value))
                    else:
                        slow.row_counter, slow.col_counter = row_number, column - 1
                        cell = slow.parse_cell(c)
                        column = cell["column"]
                        value = cell["value"]
                    cells.append((column, value))
                row.clear(keep_tail=True)
                while row.getprevious() is not None:  # rows already read: keep memory flat on a long sheet
                    del row.getparent()[0]
                for _ in range(counter, row_number):  # rows the XML leaves out
                    counter += 1
                    yield []
                if counter <= row_number:
                    counter += 1
                    if not cells:
                        yield ()
                        continue
                    width = cells[-1][0]
                    values: list[Any] = [None] * width
                    for col, value in cells:
                        if 1 <= col <= width:
                            values[col - 1] = value
                    yield tuple(values)
    except FastReadError:
        raise
    except Exception as exc:  # lxml's stricter parse, a bad index into shared strings, ...: openpyxl decides
        raise FastReadError(f"{type(exc).__name__}: {exc}") from exc
