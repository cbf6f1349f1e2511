"""Workbooks: tables found by bounding box wherever they sit, headers, titles, hints that load; corrupt files."""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits, ProfileError
from dslake_index.profilers.registry import profile_path


def run_hint(hint: str, path: Path):
    return eval(hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd})


def put(ws, top: int, left: int, rows: list[list]) -> None:
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if v is not None:
                ws.cell(row=top + r, column=left + c, value=v)


def check_hints(prof, path: Path) -> None:
    for t in prof.tables:
        df = run_hint(t.read_hint, path)
        assert [str(c) for c in df.columns] == [c.name for c in t.columns], t.location
        assert len(df) == t.n_rows, t.location


def test_table_away_from_a1_with_title(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws["B1"] = "Monthly sales"
    put(ws, 3, 2, [["month", "units", "price"]] + [[f"m{i}", i * 10, 1.5 * i] for i in range(1, 9)])
    p = tmp_path / "t.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    assert t.location == "B3:D11" and t.header_row == 2 and t.n_rows == 8
    assert prof.title == "Monthly sales"
    check_hints(prof, p)


def test_several_tables_on_one_sheet_and_blank_row_inside(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    put(ws, 1, 1, [["a", "b"], [1, 2], [3, 4], [None, None], [5, 6], [7, 8]])  # a blank row inside one table
    put(ws, 2, 5, [["name", "score", "when"]] + [[f"n{i}", i, dt.datetime(2024, 1, i)] for i in range(1, 5)])
    put(ws, 10, 1, [["k", "v"], ["x", 1.0], ["y", 2.0], ["z", 3.0]])
    p = tmp_path / "m.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    assert [t.location for t in prof.tables] == ["A1:B6", "E2:G6", "A10:B13"]
    assert prof.tables[1].columns[2].dtype == "datetime"
    check_hints(prof, p)


def test_two_row_header_and_footnotes(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "pop"
    put(ws, 1, 1, [["Annual estimates"], ["Area", "Base", "Estimate"], [None, None, 2020, 2021, 2022]])
    put(ws, 4, 1, [[f"R{i}", 100 + i, 101 + i, 102 + i, 103 + i] for i in range(6)])
    ws["A10"] = "Source: a census office"
    ws["A11"] = "Release date: December"
    p = tmp_path / "pop.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    assert [c.name for c in t.columns] == ["Area", "Base", "2020", "2021", "2022"]
    assert t.n_rows == 6 and "names=" in t.read_hint
    assert any("Source: a census office" in n for n in prof.notes)
    check_hints(prof, p)


def test_no_header_block_and_text_only_sheet(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    put(ws, 1, 1, [[i, i * 2.5, i * 3] for i in range(10)])
    ws2 = wb.create_sheet("readme")
    ws2["A1"] = "This workbook holds numbers."
    p = tmp_path / "n.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    assert t.header_row is None and "header=None" in t.read_hint
    check_hints(prof, p)
    assert prof.structure["sheets"][1]["notes"] == ["A1: This workbook holds numbers."]


def test_corrupt_workbooks_raise(tmp_path):
    notzip = tmp_path / "a.xlsx"
    notzip.write_bytes(b"\x00\x01\x02 definitely not a workbook" * 10)
    with pytest.raises(ProfileError):
        profile_path(notzip, Limits())
    otherzip = tmp_path / "b.xlsx"
    with zipfile.ZipFile(otherzip, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(ProfileError, match="workbook"):
        profile_path(otherzip, Limits())


def test_csv_text_named_xlsx_is_profiled_by_content(tmp_path):
    p = tmp_path / "c.xlsx"
    p.write_text("a,b\n1,2\n3,4\n")
    prof = profile_path(p, Limits())
    assert prof.format == "csv" and "content is text" in prof.notes[0]


def test_a_list_of_text_without_header_keeps_its_first_row(tmp_path):
    # Gene lists as supplementary tables publish them: one column of names, no header. Past the first 12 rows
    # every row is a label too, so none of them is the header; 'BRD8' is written like the names under it.
    genes = ["BRD8", "DHX15", "SSB", "FUS", "PARP1", "TRIM33", "JADE3", "CEBPZ", "TBL1XR1", "MYC", "FBXO22",
             "ZSCAN18", "CDK1", "TOP2A", "H2AFJ", "PMS2"]
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "genes"
    put(ws, 1, 1, [[g] for g in genes])
    named = wb.create_sheet("named")
    put(named, 1, 1, [["Gene"]] + [[g] for g in genes])
    p = tmp_path / "g.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    bare, headed = prof.tables
    assert (bare.location, bare.header_row, bare.n_rows) == ("A1:A16", None, 16)
    assert "header=None" in bare.read_hint
    assert run_hint(bare.read_hint, p).iloc[:, 0].tolist() == genes
    assert (headed.header_row, headed.n_rows, [c.name for c in headed.columns]) == (0, 16, ["Gene"])
    check_hints(prof, p)


def test_a_first_data_row_of_na_numbers_is_data_not_the_header(tmp_path):
    # 'NA' in every number cell of the first data row is missing data: the header stays on the row above
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "sites"
    put(ws, 1, 1, [["site", "depth_m", "ph"], ["S0", "NA", "NA"]] + [[f"S{i}", 1.5 * i, 7.0 + i / 10] for i in
                                                                   range(1, 8)])
    p = tmp_path / "na.xlsx"
    wb.save(p)
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    assert t.header_row == 0 and t.n_rows == 8 and "header=1" not in t.read_hint
    assert [c.name for c in t.columns] == ["site", "depth_m", "ph"]
    check_hints(prof, p)
    assert run_hint(t.read_hint, p)["depth_m"].isna().sum() == 1
