"""The fast worksheet reader gives exactly openpyxl's values_only rows, and hands odd sheets back to openpyxl."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl
import pytest
from dslake_index.profilers.sheet_rows import FastReadError, sheet_values

SHEET = "xl/worksheets/sheet1.xml"
NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


def openpyxl_rows(path: Path) -> list:
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    ws = wb.worksheets[0]
    ws.reset_dimensions()
    rows = list(ws.iter_rows(values_only=True))
    wb.close()
    return rows


def fast_rows(path: Path) -> list:
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    ws = wb.worksheets[0]
    ws.reset_dimensions()
    try:
        return list(sheet_values(ws))
    finally:
        wb.close()


def typed(rows: list) -> list:
    return [[(type(v).__name__, v) for v in row] for row in rows]


def with_sheet_xml(source: Path, target: Path, sheet_data: str) -> Path:
    """Copy a workbook, replacing its first sheet's XML with a hand-written <sheetData> (after a dimension, which
    openpyxl reads when it opens the workbook)."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == SHEET:
                data = (f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS}><dimension ref="A1:I9"/>'
                        f"<sheetData>{sheet_data}"
                        "</sheetData></worksheet>").encode()
            zout.writestr(item, data)
    return target


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sheets") / "mixed.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["name", "when", "count", "ratio", "ok", "note"])
    ws.append(["a", dt.datetime(2020, 1, 2, 3, 4), 3, 0.5, True, None])
    ws.append(["b", dt.date(2021, 5, 6), -7, 1e-12, False, "  "])
    ws.cell(row=6, column=9, value="far away")  # rows 4-5 missing, a wide sparse row
    ws.cell(row=7, column=2, value=12)
    ws.cell(row=8, column=1, value=dt.time(10, 30))
    ws.cell(row=8, column=2, value=dt.timedelta(hours=5))
    wb.save(path)
    return path


def test_written_workbook_reads_as_openpyxl_reads_it(book):
    assert typed(fast_rows(book)) == typed(openpyxl_rows(book))


def test_hand_written_cells_read_as_openpyxl_reads_them(book, tmp_path):
    """Rows and cells without coordinates, inline strings, formulas' cached values, errors, a repeated row."""
    data = (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>inline</t></is></c><c r="C1" t="str"><f>A1</f><v>x</v></c></row>'
        '<row><c><v>1</v></c><c><v>2.5</v></c><c t="e"><v>#N/A</v></c><c t="b"><v>1</v></c></row>'
        '<row r="4"><c r="b4"><v>1E3</v></c><c r="A4"><v>9</v></c></row>'
        '<row r="3"><c r="A3"><v>5</v></c></row>'
        '<row r="6" spans="1:2"/>'
        '<row r="7"><c r="A7"><f>1+1</f></c><c r="B7"><v></v></c><!-- note --><c r="C7" s="0"><v>3</v></c></row>'
    )
    path = with_sheet_xml(book, tmp_path / "hand.xlsx", data)
    assert typed(fast_rows(path)) == typed(openpyxl_rows(path))


@pytest.mark.parametrize("data", [
    '<row r="1.0"><c r="A1"><v>1</v></c></row>',  # a row number openpyxl accepts as a float
    '<row r="1"><c r="A1"><v>1</v></row>',  # not well-formed
    '<row r="1"><c r="A1" t="s"><v>99</v></c></row>',  # a shared string that does not exist
])
def test_odd_sheets_are_left_to_openpyxl(book, tmp_path, data):
    path = with_sheet_xml(book, tmp_path / "odd.xlsx", data)
    with pytest.raises(FastReadError):
        fast_rows(path)
