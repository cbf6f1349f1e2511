"""JSON, JSON lines, parquet, arrays, CDF, html, markdown, scientific text, xml, gzip and the registry's rules."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dslake_index.profilers import jsonfile
from dslake_index.profilers.base import PATH_PLACEHOLDER, PROFILER_VERSION, Limits, ProfileError
from dslake_index.profilers.registry import profile_path


def run_hint(hint: str, path: Path):
    return eval(hint.replace(PATH_PLACEHOLDER, repr(str(path))), {"pd": pd, "np": np, "json": json})


def test_version_is_exported():
    assert isinstance(PROFILER_VERSION, int) and PROFILER_VERSION >= 2


@pytest.mark.parametrize(
    ("doc", "n_rows", "first_col"),
    [
        ([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": None}], 3, "a"),
        ({"a": [1, 2, 3, 4], "b": [5, 6, 7, 8]}, 4, "a"),
        ({"AK": "Alaska", "AL": "Alabama", "AR": "Arkansas"}, 3, "key"),
        ({"meta": {"v": 1}, "items": [{"id": 1, "pos": {"x": 1}}, {"id": 2, "pos": {"x": 2}}]}, 2, "id"),
    ],
)
def test_json_tables_with_hints(tmp_path, doc, n_rows, first_col):
    p = tmp_path / "d.json"
    p.write_text(json.dumps(doc))
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    assert t.n_rows == n_rows and t.columns[0].name == first_col
    df = run_hint(t.read_hint, p)
    assert len(df) == n_rows and str(df.columns[0]) == first_col


def test_json_structure_is_depth_bounded(tmp_path):
    deep: dict = {"leaf": 1}
    for _ in range(30):
        deep = {"k": deep, "list": [1, 2]}
    p = tmp_path / "deep.json"
    p.write_text(json.dumps(deep))
    prof = profile_path(p, Limits())
    text = json.dumps(prof.structure)
    assert prof.format == "json" and text.count('"keys"') <= jsonfile.MAX_DEPTH + 2


def test_invalid_json_falls_back_to_text_and_json_lines_are_recognised(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1, "b": ')
    prof = profile_path(bad, Limits())
    assert prof.format == "text" and any("not valid JSON" in n for n in prof.notes)
    lines = tmp_path / "lines.json"
    lines.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    assert profile_path(lines, Limits()).format == "jsonl"


def test_large_json_array_is_decoded_from_the_head(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonfile, "JSON_FULL_BYTES", 1000)
    p = tmp_path / "big.json"
    p.write_text(json.dumps([{"id": i, "name": f"n{i}"} for i in range(2000)]))
    prof = profile_path(p, Limits(head_bytes=4096))
    assert prof.sampled and prof.tables[0].columns[0].name == "id" and not prof.tables[0].n_rows_exact


def test_jsonl_counts_and_bad_lines(tmp_path):
    p = tmp_path / "e.jsonl"
    p.write_text("".join(json.dumps({"i": i, "k": "ab"[i % 2]}) + "\n" for i in range(50)) + "not json\n")
    prof = profile_path(p, Limits())
    assert prof.tables[0].n_rows == 51 and any("not valid JSON" in n for n in prof.notes)


def test_parquet_metadata_and_corruption(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": list(range(1000)), "s": ["a", "b"] * 500}), p, row_group_size=100)
    prof = profile_path(p, Limits())
    t = prof.tables[0]
    assert t.n_rows == 1000 and t.columns[0].min == 0 and t.columns[0].max == 999
    assert prof.structure["row_groups"] == 10 and len(run_hint(t.read_hint, p)) == 1000
    broken = tmp_path / "b.parquet"
    broken.write_bytes(p.read_bytes()[:-20])
    with pytest.raises(ProfileError):
        profile_path(broken, Limits())


def test_arrays(tmp_path):
    p = tmp_path / "a.npz"
    np.savez(p, grid=np.arange(12.0).reshape(3, 4), ids=np.array([1, 2, 3]))
    prof = profile_path(p, Limits())
    arrays = {a["name"]: a for a in prof.structure["arrays"]}
    assert arrays["grid"]["shape"] == [3, 4] and arrays["grid"]["max"] == 11.0
    obj = tmp_path / "o.npz"
    np.savez(obj, objs=np.array([{"a": 1}], dtype=object))
    note = profile_path(obj, Limits()).structure["arrays"][0]["note"]
    assert "allow_pickle" in note
    one = tmp_path / "v.npy"
    np.save(one, np.linspace(0, 1, 5))
    assert profile_path(one, Limits()).structure["arrays"][0]["shape"] == [5]


def test_cdf(tmp_path):
    from cdflib.cdfwrite import CDF

    p = tmp_path / "t.cdf"
    c = CDF(str(p), cdf_spec={"Compressed": False}, delete=True)
    c.write_globalattrs({"TITLE": {0: "test title"}})
    c.write_var({"Variable": "temp", "Data_Type": CDF.CDF_DOUBLE, "Num_Elements": 1, "Rec_Vary": True,
                 "Dim_Sizes": [], "Var_Type": "zVariable"},
                var_attrs={"UNITS": "K", "DESCRIPTION": "air temperature"}, var_data=np.array([280.0, 281.5, 290.0]))
    c.close()
    prof = profile_path(p, Limits())
    (var,) = prof.structure["variables"]
    assert prof.format == "cdf" and prof.title == "test title"
    assert (var["units"], var["records"], var["max"]) == ("K", 3, 290.0)


def test_html_tables_match_read_html(tmp_path):
    p = tmp_path / "p.html"
    p.write_text("<html><head><title>T</title><script>var t='<table><tr><td>x</td></tr></table>'</script></head>"
                 "<body><h1>Head</h1><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
                 "<table></table><table><tr><td colspan=2>wide</td></tr><tr><td>3</td><td>4</td></tr></table>"
                 "</body></html>")
    prof = profile_path(p, Limits())
    frames = pd.read_html(p)
    assert prof.title == "T" and prof.headings == ["Head"]
    assert len(prof.tables) == len(frames) == 2
    assert run_hint(prof.tables[1].read_hint, p).shape == frames[1].shape


def test_markdown_table_hint(tmp_path):
    p = tmp_path / "n.md"
    p.write_text("# Title\n\ntext\n\n| a | b |\n|---|:-:|\n| 1 | x |\n| 2 | y |\n\nmore\n")
    prof = profile_path(p, Limits())
    (t,) = prof.tables
    df = run_hint(t.read_hint, p)
    assert list(df.columns) == ["a", "b"] and df["a"].tolist() == [1, 2]


def test_scientific_text(tmp_path):
    lines = ["HEADER TEXT", "created by a tool", ""] + [f"{2024} {d:3d} {d * 1.5:7.2f} {999.9 if d == 4 else d:6.1f}"
                                                        for d in range(1, 30)]
    p = tmp_path / "obs.dat"
    p.write_text("\n".join(lines) + "\n")
    prof = profile_path(p, Limits())
    t = prof.tables[0]
    assert prof.format == "fixed-width" and t.skip_rows == 3 and t.n_rows == 29
    assert run_hint(t.read_hint, p).shape == (29, 4)
    assert any("999.9" in n for n in prof.notes)


def test_tle_and_sp3(tmp_path):
    tle = tmp_path / "x.txt"
    tle.write_text("1 25544U 98067A   24061.50000000  .00016717  00000-0  10270-3 0  9005\n"
                   "2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.49815308441234\n")
    prof = profile_path(tle, Limits())
    assert prof.format == "tle" and prof.structure["first_date"] == "2024-03-01"
    sp3 = tmp_path / "orbit.sp3"
    sp3.write_text("#dV2018 10  2  0  0  0.00000000    8640 U+u   IGS14 FIT TUD\n## 2021 172800.0 10.0 58393 0.0\n"
                   "+    1   L47  0  0\n*  2018 10 02 00 00 00.00000000\nPL47 -5121.2441167  1309.4747195  "
                   "4294.2916022 999999.999999\n")
    prof = profile_path(sp3, Limits())
    assert prof.format == "sp3" and prof.structure["satellites"] == ["L47"]


def test_xml_fields(tmp_path):
    p = tmp_path / "h.HDR"
    p.write_text('<?xml version="1.0"?><Hdr><Fixed><File_Name>F1</File_Name>'
                 "<File_Description>Positions of a satellite</File_Description></Fixed></Hdr>")
    prof = profile_path(p, Limits())
    assert prof.format == "xml" and prof.title == "Positions of a satellite"


def test_gzip_csv(tmp_path):
    p = tmp_path / "r.csv.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("a,b\n1,2\n3,4\n")
    prof = profile_path(p, Limits())
    assert prof.format == "csv.gz" and prof.tables[0].n_rows == 2
    assert run_hint(prof.tables[0].read_hint, p).shape == (2, 2)


def test_registry_edge_cases(tmp_path):
    empty = tmp_path / "e.parquet"
    empty.write_bytes(b"")
    assert profile_path(empty, Limits()).format == "empty"
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    assert profile_path(binary, Limits()).format == "binary"
    random_parquet = tmp_path / "r.parquet"
    random_parquet.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ProfileError):
        profile_path(random_parquet, Limits())
    with pytest.raises(ProfileError) as err:
        profile_path(tmp_path / "missing.csv", Limits())
    assert err.value.kind == "changed"
    with pytest.raises(ProfileError):
        profile_path(tmp_path, Limits())
    xls = tmp_path / "old.xls"
    xls.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))
    old = profile_path(xls, Limits())
    assert old.format == "binary" and any("xlrd" in n for n in old.notes)
    code = tmp_path / "s.py"
    code.write_text('"""Download data."""\nimport os\n')
    assert profile_path(code, Limits()).format == "code"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    p = tmp_path / "secret.csv"
    p.write_text("a\n1\n")
    p.chmod(0)
    with pytest.raises(ProfileError) as err:
        profile_path(p, Limits())
    assert err.value.kind == "unreadable"
