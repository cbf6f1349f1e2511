"""Delimited text: layout sniffing (delimiter, preamble, header, comments, footer, sections) and hints that load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits
from dslake_index.profilers.registry import profile_path


def run_hint(hint: str, path: Path):
    return eval(hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd, "np": np, "json": json})


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def test_preamble_comments_and_header(tmp_path):
    p = write(tmp_path, "log.csv", "Station report\n\n# units: C\n# generated\nid,temp\n1,3.5\n2,4.0\n3,NA\n")
    t = profile_path(p, Limits()).tables[0]
    assert (t.skip_rows, t.header_row, t.n_rows) == (4, 4, 3)
    df = run_hint(t.read_hint, p)
    assert list(df.columns) == ["id", "temp"] and df["temp"].isna().sum() == 1


def test_no_header_numeric(tmp_path):
    p = write(tmp_path, "n.csv", "".join(f"{i},{i * 0.5},{i * 3}\n" for i in range(20)))
    t = profile_path(p, Limits()).tables[0]
    assert t.header_row is None and t.n_rows == 20
    assert run_hint(t.read_hint, p).shape == (20, 3)


def test_year_header_is_a_header(tmp_path):
    p = write(tmp_path, "y.csv", "state,2019,2020\nOhio,1.5,2.5\nUtah,3.5,4.5\n")
    t = profile_path(p, Limits()).tables[0]
    assert t.header_row == 0 and [c.name for c in t.columns] == ["state", "2019", "2020"]


def test_footer_notes_and_thousands(tmp_path):
    text = ('Reports by Age,\n,\nAge,# of Reports\n19 and Under,"21,420"\n20 - 29,"187,195"\n30 - 39,"291,807"\n'
            ',\n"Source: Consumer Sentinel Network Data Book 2024, Federal Trade Commission",\n')
    p = write(tmp_path, "age.csv", text)
    prof = profile_path(p, Limits())
    t = prof.tables[0]
    assert prof.title == "Reports by Age"
    assert "thousands=','" in t.read_hint and "nrows=3" in t.read_hint
    df = run_hint(t.read_hint, p)
    assert df["# of Reports"].tolist() == [21420, 187195, 291807]
    assert any("Source: Consumer Sentinel" in n for n in prof.notes)


def test_missing_value_marker_and_summary_rows(tmp_path):
    rows = "".join(f"{2000 + i},{i + 0.5},{'M' if i == 3 else i * 2}\n" for i in range(8))
    p = write(tmp_path, "precip.csv", "Year,Jan,Feb\n" + rows + "Mean,3.2,4.1\nMax,7.5 2007,14 2006\n")
    t = profile_path(p, Limits()).tables[0]
    assert "na_values=['M']" in t.read_hint and "nrows=8" in t.read_hint
    df = run_hint(t.read_hint, p)
    assert df["Feb"].dtype.kind == "f" and df["Feb"].isna().sum() == 1 and len(df) == 8


def test_stacked_sections_are_reported(tmp_path):
    text = "Contributors,,\nFTC,,\nYear,Name,Reports\n2022,A,1\n2023,B,2\n,,\nOthers,,\nYear,Name,Reports\n2022,C,3\n"
    p = write(tmp_path, "s.csv", text)
    prof = profile_path(p, Limits())
    note = next(n for n in prof.notes if "stacked" in n)
    assert "'Others' (lines 8-9)" in note and "same columns" in " ".join(prof.notes)
    assert [(t.name, t.n_rows) for t in prof.tables] == [("FTC", 2), ("Others", 1)]
    assert run_hint(prof.tables[1].read_hint, p)["Name"].tolist() == ["C"]


def test_delimiters(tmp_path):
    cases = {
        "a.tsv": "x\ty\n1\t2\n3\t4\n",
        "b.psv": "x|y\n1|2\n3|4\n",
        "c.csv": "x;y\n1,5;2\n3,5;4\n4,5;6\n",
        "d.txt": "x y\n1 2\n3 4\n5 6\n7 8\n",
    }
    seps = {}
    for name, text in cases.items():
        p = write(tmp_path, name, text)
        t = profile_path(p, Limits()).tables[0]
        df = run_hint(t.read_hint, p)
        assert list(df.columns) == ["x", "y"], name
        seps[name] = t.read_hint
    assert "sep='\\t'" in seps["a.tsv"] and "sep='|'" in seps["b.psv"]
    assert "sep=';'" in seps["c.csv"] and "decimal=','" in seps["c.csv"]


def test_encodings(tmp_path):
    p = write(tmp_path, "bom.csv", "\ufeffname,v\nA,1\n")
    prof = profile_path(p, Limits())
    assert prof.encoding == "utf-8-sig" and prof.tables[0].columns[0].name == "name"
    p = write(tmp_path, "win.csv", "name,quote\nA,\u201chi\u201d\nB,caf\u00e9\n", encoding="cp1252")
    prof = profile_path(p, Limits())
    assert prof.encoding == "cp1252"
    assert run_hint(prof.tables[0].read_hint, p)["quote"].tolist() == ["\u201chi\u201d", "caf\u00e9"]


def test_quoted_newlines_and_ragged_rows(tmp_path):
    p = write(tmp_path, "q.csv", 'id,text\n1,"two\nlines"\n2,plain\n')
    t = profile_path(p, Limits()).tables[0]
    assert t.n_rows == 2
    p = write(tmp_path, "r.csv", "a,b\n1,2\n3,4,5\n6,7\n")
    prof = profile_path(p, Limits())
    assert prof.tables[0].columns[0].name == "a"


def test_large_file_is_sampled_with_counted_rows(tmp_path):
    p = tmp_path / "big.csv"
    with open(p, "w") as fh:
        fh.write("id,city,value\n")
        for i in range(30_000):
            fh.write(f"{i},{['Oslo', 'Rome', 'Lima'][i % 3]},{i * 0.25}\n")
    small = Limits(head_bytes=64 * 1024)
    prof = profile_path(p, small)
    t = prof.tables[0]
    assert prof.sampled and t.n_rows == 30_000 and t.n_rows_exact
    assert t.columns[0].max > 2_000  # strided chunks reach past the head
    tiny = Limits(head_bytes=64 * 1024, max_bytes_full_read=100 * 1024)
    t2 = profile_path(p, tiny).tables[0]
    assert not t2.n_rows_exact and 20_000 < t2.n_rows < 40_000


def _counts(table, name):
    column = next(c for c in table.columns if c.name == name)
    return dict(column.top_values)


def test_a_file_a_little_over_the_head_is_counted_row_by_row_not_by_overlapping_chunks(tmp_path):
    # 30,000 rows of ~28 bytes: the head (256 KiB) holds about a third; the rest fits four chunks and is read
    # once, so value counts are the table's own and add up to its rows.
    p = tmp_path / "fires.csv"
    causes = ["L", "H", "L", "U"]
    p.write_text("id,cause,acres\n" + "".join(f"{i},{causes[i % 4]},{i % 97}.5\n" for i in range(30_000)))
    t = profile_path(p, Limits(head_bytes=1 << 18)).tables[0]
    assert t.n_rows == 30_000
    assert _counts(t, "cause") == {"L": 15_000, "H": 7_500, "U": 7_500}


def test_chunks_sampled_across_the_rest_of_a_file_never_count_a_row_twice(tmp_path):
    # Head 64 KiB, chunks of 16 KiB, a rest of about 72 KiB: more than four chunks, so it is sampled, and chunks a
    # fifth of the rest apart would overlap. Every id is distinct, so a row counted twice shows as a repeat.
    p = tmp_path / "ids.csv"
    p.write_text("id,cause\n" + "".join(f"{i:07d},{'LH'[i % 2]}\n" for i in range(13_926)))
    column = next(c for c in profile_path(p, Limits(head_bytes=1 << 16)).tables[0].columns if c.name == "id")
    assert column.unique == column.non_null


def test_a_year_column_with_a_typo_says_where_it_is_instead_of_a_range_from_38(tmp_path):
    p = write(tmp_path, "acres.tsv", "Year\tAcres\n" + "".join(f"{y}\t{y % 7}\n" for y in (2024, 2023, 2022))
              + "038\t5\n" + "".join(f"{y}\t1\n" for y in range(2016, 2000, -1)))
    notes = profile_path(p, Limits()).notes
    assert any("'Year' holds years (2001 .. 2024)" in n and "38 (at index 3)" in n for n in notes)
    clean = write(tmp_path, "clean.csv", "Year,n\n" + "".join(f"{y},1\n" for y in range(2001, 2025)))
    assert not any("not years" in n for n in profile_path(clean, Limits()).notes)


def test_zero_led_search_agrees_with_the_regex_it_replaces():
    """The vectorised search for a field starting '0'+digit answers as the regex over "\\n" + text does."""
    import random

    from dslake_index.profilers.codes import _ZERO_LED, has_zero_led_field

    cases = ["08123,x", "a,08123", "a, 08123", 'a,"08123"', 'a, "0812"', "a,0.5", "a,10", "2024-01-01 00:00",
             "x\t 01", "x|\x0c 07", "x; \r\n 09", "a,b\n07,c", "a" + " " * 40 + "07", "," + " " * 40 + "07", ",café,0123", "0", "00"]
    rng = random.Random(7)
    cases += ["".join(rng.choice("019,;\t|\n \"a.") for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    for text in cases:
        assert has_zero_led_field(text) == (_ZERO_LED.search("\n" + text) is not None), repr(text)


def test_later_reads_of_some_columns_equal_a_whole_read():
    # load_frame reads only the columns thousands=/na_values=/dtype= change and puts them into the first frame;
    # the frame must be the one a whole read with the final keywords gives (names mangled, 'Unnamed: N' kept)
    from dslake_index.profilers.delimited import Layout, load_frame

    rows = [f'{i},"{i % 9 + 1},{i % 1000:03d}",{"M" if i % 7 == 0 else i * 1.5},0{i % 9 + 1}{i % 10},x{i},{i}'
            for i in range(1000, 1040)]
    text = "id,count,level,zip,,id\n" + "\n".join(rows) + "\n"
    df, kw, notes = load_frame(text, {}, Layout(sep=",", n_fields=6))
    assert kw["thousands"] == "," and kw["na_values"] == ["M"] and kw["dtype"] == {"zip": str}
    whole = pd.read_csv(__import__("io").StringIO(text), **kw)
    pd.testing.assert_frame_equal(df, whole)
    assert list(df.columns) == ["id", "count", "level", "zip", "Unnamed: 4", "id.1"] and len(notes) == 3


def test_profile_json_is_the_asdict_json():
    # the worker serialises without dataclasses.asdict; the text must not change (numpy values, tuples, nesting)
    from dslake_index.profile_task import profile_json
    from dslake_index.profilers.base import Column, Profile, Table

    col = Column(name="n", dtype="int64", min=np.int64(3), max=np.float64(2.5), examples=[np.int64(1), "é", (1, 2)],
                 top_values=[{"v": np.bool_(True)}], kinds=[["end", "Area", 3]])
    prof = Profile(format="csv", tables=[Table(columns=[col], sample_rows=[[np.int64(1), None]])],
                   structure={"k": [1.5, {"x": np.int32(2)}]}, notes=["ünï"])
    assert profile_json(prof) == json.dumps(prof.to_dict(), default=str, ensure_ascii=False)


def test_a_title_naming_one_month_over_rows_of_every_month_loses_the_month(tmp_path):
    # an export titled by the month its form was set to, over rows of every month: not the file's month
    rows = "".join(f"{2000 + i // 12}{i % 12 + 1:02d},{100 + i},{10 + i}\n" for i in range(30))
    p = write(tmp_path, "fires.csv", "Title:U.S. Wildfires December\nMissing:-999\n\nDate,Acres,Fires\n" + rows)
    prof = profile_path(p, Limits())
    assert prof.title == "Title:U.S. Wildfires"
    assert any("names December, but the rows cover 12 months of the year (column 'Date')" in n for n in prof.notes)
    # a title whose month is the rows' only month keeps it
    december = "".join(f"{2000 + i}12,{100 + i},{10 + i}\n" for i in range(10))
    p = write(tmp_path, "dec.csv", "Title:U.S. Wildfires December\n\nDate,Acres,Fires\n" + december)
    assert profile_path(p, Limits()).title == "Title:U.S. Wildfires December"
