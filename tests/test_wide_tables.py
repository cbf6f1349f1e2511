"""A wide table's later columns (past the profiled Limits.max_columns) keep their short lines in every table kind:
a workbook's sheet, a sheet of several wide tables, a Parquet file's footer, a family of CSVs; 'NA' cells are
missing values in a workbook as read_excel reads them. Every file here is generated in tmp_path."""

from __future__ import annotations

import random

import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from dslake_index.cards import DESC_MAX, DETAIL_COLUMNS, describe
from dslake_index.entries import family_entry
from dslake_index.families import Member, group_files
from dslake_index.family_stats import MemberFacts
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.registry import profile_path

N_COLS = 179  # the width of the clinical workbook whose 147th column a question needed


def _names(n: int = N_COLS) -> list[str]:
    names = [f"Clinical_{j:03d}" for j in range(n)]
    names[0] = "idx"
    if n > 147:
        names[147] = "Log2_variant_per_Mbp"
    return names


def _clinical_rows(n_rows: int, names: list[str], seed: int = 5) -> list[list]:
    """Samples x measures: text ids, then numbers; the normal samples (every third, from the second) have 'NA'
    for the measures."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_rows):
        row: list = [f"S{i:03d}"]
        for j in range(1, len(names)):
            if j % 2 == 0 and j < 60:
                row.append(rng.choice(["Tumor", "Normal", "Other"]))
            elif i % 3 == 1:
                row.append("NA")
            else:
                row.append(round(rng.uniform(0.05, 9.0), 6))
        rows.append(row)
    return rows


def _short_line(text: str, name: str) -> str | None:
    return next((line for line in text.splitlines() if line.startswith(f"    - '{name}': ")), None)


def _load(hint: str, path) -> pd.DataFrame:
    return eval(hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd})


def test_a_wide_sheets_later_columns_say_their_missing_values_and_ranges(tmp_path):
    names = _names()
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "meta_table"
    ws.append(names)
    for row in _clinical_rows(60, names):
        ws.append(row)
    path = tmp_path / "clinical.xlsx"
    wb.save(path)

    profile = profile_path(path, Limits())
    table = profile.tables[0]
    assert len(table.columns) + len(table.later_columns) == N_COLS and not table.more_columns
    text = describe(profile, "clinical.xlsx")
    assert len(text) <= DESC_MAX and "[... truncated]" not in text
    df = _load(table.read_hint, path)
    values = df["Log2_variant_per_Mbp"]
    # 'NA' is a missing value to read_excel, and so to the description: a float column with 20 missing, its range
    line = _short_line(text, "Log2_variant_per_Mbp")
    assert line == (f"    - 'Log2_variant_per_Mbp': float; 20 missing; {values.min():.4g} .. {values.max():.4g}")
    assert values.dtype.kind == "f" and int(values.isna().sum()) == 20
    assert "'Clinical_061': float; 20 missing; " in text  # past the profiled 60
    assert all(repr(name) in text for name in names)  # every name, in a line or in the list of the rest
    by_name = {c.name: c for c in table.columns}
    assert by_name["Clinical_002"].top_values and "NA" not in [v for v, _ in by_name["Clinical_002"].top_values]
    assert by_name["Clinical_003"].dtype == "float" and by_name["Clinical_003"].nulls == 20


def test_a_sheet_of_two_wide_tables_gives_each_its_later_columns_within_the_limit(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "two"
    first = [f"a{j:02d}" for j in range(70)]
    second = [f"b{j:02d}" for j in range(70)]
    ws.append(first)
    for i in range(12):
        ws.append([f"S{i}"] + ["NA" if i % 4 == 1 else (i * j) % 10 for j in range(1, 70)])
    ws.append([])
    ws.append(second)
    for i in range(9):
        ws.append([f"T{i}"] + [(i + j) % 7 for j in range(1, 70)])
    path = tmp_path / "two_tables.xlsx"
    wb.save(path)

    profile = profile_path(path, Limits())
    assert [t.n_cols for t in profile.tables] == [70, 70]
    assert [len(t.later_columns) for t in profile.tables] == [10, 10]
    text = describe(profile, "two_tables.xlsx")
    assert len(text) <= DESC_MAX and "[... truncated]" not in text
    # each table's columns past the profiled 60 keep a short line, the first with its 'NA' cells as missing
    assert _short_line(text, "a65") == "    - 'a65': float; 3 missing; 0 .. 5"  # (i * 65) % 10
    assert _short_line(text, "b65") == "    - 'b65': int; 0 .. 6"
    assert all(repr(name) in text for name in first + second)
    for table in profile.tables:
        df = _load(table.read_hint, path)
        assert len(df) == table.n_rows
        assert list(df.columns) == [c.name for c in table.columns + table.later_columns]


def test_two_tables_too_wide_for_every_short_line_share_the_room_left(tmp_path):
    names = _names(120)
    second = [f"Other_{j:03d}" for j in range(len(names))]
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "two"
    ws.append(names)
    for row in _clinical_rows(30, names, seed=1):
        ws.append(row)
    ws.append([])
    ws.append(second)
    for row in _clinical_rows(25, second, seed=2):
        ws.append(row)
    path = tmp_path / "two_wide.xlsx"
    wb.save(path)

    text = describe(profile_path(path, Limits()), "two_wide.xlsx")
    assert len(text) <= DESC_MAX and all(repr(name) in text for name in names + second)
    # the first numbered later column of each: the room over the limit is given up by both tables, not by each whole
    assert _short_line(text, "Clinical_031") and _short_line(text, "Other_031")


def test_a_wide_parquet_files_later_columns_come_from_its_footer(tmp_path):
    n_cols = 90
    rng = random.Random(9)
    data = {f"m{j:02d}": [None if (i + j) % 4 == 0 else rng.uniform(-3, 3) for i in range(40)] for j in range(n_cols)}
    data["m80"] = [float(i) for i in range(40)]
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table(data), path)

    table = profile_path(path, Limits()).tables[0]
    assert len(table.later_columns) == 30 and not table.more_columns
    later = {c.name: c for c in table.later_columns}
    assert (later["m80"].min, later["m80"].max, later["m80"].nulls) == (0.0, 39.0, 0)
    text = describe(profile_path(path, Limits()), "wide.parquet")
    assert _short_line(text, "m80") == "    - 'm80': float; 0 .. 39"
    assert _short_line(text, "m85").startswith("    - 'm85': float; 10 missing; ")


def test_a_familys_later_columns_say_the_range_over_every_member(tmp_path):
    n_cols = 75
    header = ",".join(f"v{j}" for j in range(n_cols))
    names = []
    for m in range(3):
        name = f"site-{m:02d}.csv"
        rows = [",".join(str(m * 100 + i + j) for j in range(n_cols)) for i in range(10)]
        (tmp_path / name).write_text(header + "\n" + "\n".join(rows) + "\n")
        names.append(name)
    profiles = {n: profile_path(tmp_path / n, Limits()) for n in names}
    assert [c.name for c in profiles[names[0]].tables[0].later_columns][:2] == ["v60", "v61"]
    members = [Member(n, n, profiles[n].signature(), (tmp_path / n).stat().st_size,
                      [(t.n_rows, t.n_rows_exact, t.read_hint) for t in profiles[n].tables]) for n in names]
    (group,) = group_files(members, 2)
    facts = [MemberFacts(n, profiles[n].to_dict()["tables"], profiles[n].notes) for n in names]
    entry = family_entry(group, profiles[names[0]], 40, facts=facts)
    # v70 runs 70 .. 79 in the first member and up to 279 in the third: the family's line says the whole range
    assert "    - 'v70': int; 70 .. 279" in entry.description


def test_short_lines_go_first_to_columns_whose_line_says_more_than_their_name():
    from dslake_index.profilers.base import Column, Profile, Table

    detailed = [Column(name=f"d{j}", dtype="int", min=0, max=j + 1) for j in range(DETAIL_COLUMNS)]
    later = [Column(name=f"text{j}", dtype="text", nulls=3) for j in range(5)]  # a missing count only
    later += [Column(name="plain", dtype="text", nulls=0)]  # nothing to add to its name and type
    later += [Column(name="score", dtype="float", min=0.25, max=0.999988, nulls=3)]
    table = Table(n_rows=10, n_cols=len(detailed) + len(later), columns=detailed + later)
    text = describe(Profile(format="csv", tables=[table]), "t.csv")
    assert "    - 'score': float; 3 missing; 0.25 .. 0.999988" in text  # a bound is not rounded to a whole number
    assert _short_line(text, "plain") is None and "'plain' text" in text
    assert _short_line(text, "text0") == "    - 'text0': text; 3 missing"
