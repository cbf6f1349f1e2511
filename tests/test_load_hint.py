"""Load hints are data (issue 26 §1): parsed into an allow-listed reader with literal arguments, never evaluated."""

from __future__ import annotations

import ast
import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import SAMPLES
from dslake_index.load_hint import HintRefused, LoadHint, parse, render, run
from dslake_index.profilers.base import Limits, ProfileError
from dslake_index.profilers.registry import profile_path

REPO = Path(__file__).resolve().parent.parent


def _hints(root: Path) -> list[tuple[Path, str]]:
    found = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or ".dslake" in p.parts:
            continue
        try:
            prof = profile_path(p, Limits())
        except ProfileError:
            continue
        found += [(p, h) for h in [prof.read_hint, *(t.read_hint for t in prof.tables)] if h]
    return found


def _made_files(tmp: Path) -> Path:
    """Files of the formats data_samples lacks, so that every hint form a profiler writes is here."""
    from cdflib.cdfwrite import CDF

    (tmp / "log.txt.gz").write_bytes(gzip.compress(b"Dear reader,\nthis is prose; it has no columns.\n"))
    (tmp / "tree.xml").write_text("<?xml version='1.0'?><root><item a='1'>x</item><item a='2'>y</item></root>")
    (tmp / "map.json").write_text(json.dumps({"a": 1, "b": 2, "c": 3}))
    (tmp / "rows.jsonl").write_text("".join(json.dumps({"k": i, "v": i * 2}) + "\n" for i in range(30)))
    (tmp / "two.html").write_text("<table><thead><tr><th colspan=2>Top</th></tr><tr><th>a</th><th>b</th></tr>"
                                  "</thead><tbody><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr>"
                                  "</tbody></table>")
    (tmp / "pipes.md").write_text("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\ntext after\n")
    (tmp / "zips.csv").write_text("zip,town,people\n" + "".join(f"0{1001 + i},town {i},{100 + i}\n" for i in range(30)))
    (tmp / "keyed.json").write_text(json.dumps({"meta": {"n": 2}, "rows": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}))
    c = CDF(str(tmp / "t.cdf"), cdf_spec={"Compressed": False}, delete=True)
    c.write_globalattrs({"TITLE": {0: "t"}})
    c.write_var({"Variable": "temp", "Data_Type": CDF.CDF_DOUBLE, "Num_Elements": 1, "Rec_Vary": True,
                 "Dim_Sizes": [], "Var_Type": "zVariable"}, var_attrs={"UNITS": "K"},
                var_data=np.array([280.0, 281.5]))
    c.close()
    return tmp


def test_every_hint_the_profilers_write_round_trips_and_runs(tmp_path):
    hints = _hints(SAMPLES) + _hints(_made_files(tmp_path))
    forms = set()
    for path, text in hints:
        hint = parse(text)
        assert render(hint) == text, path
        assert parse(render(hint)) == hint, path
        run(hint, path)  # raises on a hint that does not load its own file
        forms.add((hint.reader, *(s.name or s.kind for s in hint.steps)))
    # every reader and step of the grammar is among them, so the round trip covers what profilers write
    assert any("dtype={'zip': str}" in text for _, text in hints)  # codes with leading zeros stay text
    readers = {f[0] for f in forms}
    assert readers >= {"pd.read_csv", "pd.read_excel", "pd.read_json", "pd.read_parquet", "pd.read_html", "np.load",
                       "open", "gzip.open", "json.load", "xml.etree.ElementTree.parse", "cdflib.CDF"}
    steps = {s for f in forms for s in f[1:]}
    assert steps >= {"index", "columns", "normalize", "splitlines", "getroot", "varget", "droplevel",
                     "rename_axis", "reset_index"}


def test_a_parsed_hint_is_plain_data():
    hint = parse("pd.read_csv({path}, sep=';', skiprows=[*range(3), 4], header=None, names=['a', 'b'])")
    assert isinstance(hint, LoadHint) and hint.reader == "pd.read_csv"
    assert hint.kwargs() == {"sep": ";", "skiprows": [0, 1, 2, 4], "header": None, "names": ["a", "b"]}
    # a sheet named like the placeholder stays a string: the path is the only non-literal
    assert parse("pd.read_excel({path}, sheet_name='{path}')").kwargs() == {"sheet_name": "{path}"}


@pytest.mark.parametrize(("text", "named"), [
    ("__import__('os').system('touch MARK') or pd.read_csv({path})", "BoolOp"),
    ("pd.read_csv({path}, sep=__import__('os').system('touch MARK'))", "not a literal"),
    ("pd.read_csv({path}, converters={'a': eval})", "converters="),
    ("pd.read_csv({path}, **{'sep': ';'})", "**="),
    ("pd.read_pickle({path})", "pd.read_pickle"),
    ("np.load({path}, allow_pickle=True)", "allow_pickle"),
    ("open({path}, 'w').read()", "positional"),
    ("open('/etc/shadow').read()", "placeholder"),
    ("gzip.open({path}, 'wb').read()", "mode 'rt'"),
    ("pd.read_csv({path}).to_csv('/tmp/x')", "to_csv"),
    ("pd.read_csv({path})[__import__('os').getcwd()]", "not a literal"),
    ("pd.read_csv({path}, engine='pyarrow')", "engine="),
    ("pd.read_csv({path}, dtype={'zip': eval})", "dtype="),
    ("pd.read_csv({path}, dtype=object)", "dtype="),
    ("pd.read_csv({path}, skiprows=[*range(10**9)])", "skiprows"),
    ("(lambda: 0)()", "Lambda"),
    ("cdflib.CDF({path}).varget('x')", "str({path})"),
    ("json.load(open({path}, 'r+'))", "positional"),
    ("pd.read_csv({path}); import os", "not an expression"),
    ("", "empty"),
])
def test_anything_else_is_refused_with_what_was_refused(text, named):
    with pytest.raises(HintRefused) as caught:
        parse(text)
    assert named in str(caught.value) and "\n" not in str(caught.value)


POISON = "__import__('os').system('touch {mark}') or pd.read_csv({{path}})"


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory):
    """An indexed copy of data_samples whose manifest holds a poisoned load line for sales.csv."""
    from dsstar_lake.lake import Lake

    root = tmp_path_factory.mktemp("poison") / "lake"
    shutil.copytree(SAMPLES, root, ignore=shutil.ignore_patterns(".dslake"))
    lake = Lake.open(root)
    lake.index()
    mark = root.parent / "MARK"
    bad = POISON.format(mark=mark)
    with sqlite3.connect(lake.catalog.db_path) as conn:  # as a shared catalog's author could write it
        (content_hash,) = conn.execute("SELECT hash FROM files WHERE path = 'sales.csv'").fetchone()
        (text,) = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (content_hash,)).fetchone()
        profile = json.loads(text)
        profile["read_hint"] = bad
        for table in profile["tables"]:
            table["read_hint"] = bad
        conn.execute("UPDATE profiles SET profile = ? WHERE hash = ?", (json.dumps(profile), content_hash))
    lake.close()
    lake = Lake.open(root)
    yield lake, root, mark
    lake.close()


def test_a_poisoned_catalog_is_refused_by_load_and_by_the_serve_page(poisoned):
    from serve_helpers import Server, fetch

    from dsstar_lake.base.errors import LoadError

    lake, root, mark = poisoned
    with pytest.raises(LoadError) as caught:
        lake.load("sales.csv")
    message = caught.value.message
    assert "sales.csv" in message and "refused" in message and "\n" not in message
    assert lake.load("europe/gemeinden_semicolon.csv").shape[0] > 0  # the other entries still load
    with Server(lake) as server:
        # a cross-site <img src=...> is a plain GET: it gets the page, with the refusal as the preview's message
        code, page, _ = fetch(server.url("/entries/sales.csv"), headers={"Origin": "http://evil.example"})
    assert code == 200 and 'id="preview-error"' in page and "refused" in page and "Traceback" not in page
    assert not mark.exists()


def test_the_next_index_reprofiles_just_the_entry_whose_hint_is_refused(tmp_path):
    from dsstar_lake.lake import Lake

    root = tmp_path / "lake"
    shutil.copytree(SAMPLES, root, ignore=shutil.ignore_patterns(".dslake"))
    lake = Lake.open(root)
    lake.index()
    with sqlite3.connect(lake.catalog.db_path) as conn:  # an old catalog: a hint of another form, and no sweep yet
        (content_hash,) = conn.execute("SELECT hash FROM files WHERE path = 'sales.csv'").fetchone()
        (text,) = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (content_hash,)).fetchone()
        profile = json.loads(text)
        good = profile["tables"][0]["read_hint"]
        profile["tables"][0]["read_hint"] = profile["read_hint"] = POISON.format(mark=tmp_path / "MARK")
        conn.execute("UPDATE profiles SET profile = ? WHERE hash = ?", (json.dumps(profile), content_hash))
        conn.execute("DELETE FROM meta WHERE key = 'load_hint_form'")
    assert lake.index().profiled == 1  # sales.csv, and nothing else
    assert lake.load("sales.csv").shape[0] > 0
    with sqlite3.connect(lake.catalog.db_path) as conn:
        (text,) = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (content_hash,)).fetchone()
    assert json.loads(text)["tables"][0]["read_hint"] == good and not (tmp_path / "MARK").exists()
    assert lake.index().profiled == 0  # swept once: the next run re-profiles nothing
    lake.close()


def test_the_preview_reads_at_most_its_rows_in_a_worker_and_keeps_to_its_byte_budget(tmp_path):
    from dsstar_lake.lake import Lake
    from dsstar_lake.web.preview import Previewer

    root = tmp_path / "lake"
    root.mkdir()
    pd.DataFrame({"n": range(5000), "t": ["x"] * 5000}).to_csv(root / "long.csv", index=False)
    (root / "big.json").write_text(json.dumps([{"k": i, "v": "y" * 20} for i in range(2000)]))
    lake = Lake.open(root)
    lake.index()
    previewer = Previewer(rows=7, max_bytes=10_000, timeout_s=60, memory_mb=1536)
    try:
        shown = previewer.preview(lake, "long.csv")
        assert shown["error"] is None and shown["tables"][0]["shape"] == (7, 2)
        assert shown["tables"][0]["html"].count("<tr") == 8  # the header row and 7 rows
        over = previewer.preview(lake, "big.json")
        assert over["tables"] == [] and "over the preview's 10,000" in over["error"]
    finally:
        previewer.close()
        lake.close()


def test_no_eval_or_exec_in_the_package():
    """A new eval/exec/compile/__import__ call in dsstar_lake or index fails here: catalog text stays data."""
    found = []
    for base in ("dsstar_lake", "index"):
        for path in sorted((REPO / base).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Name) and func.id in ("eval", "exec", "compile", "__import__"):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {func.id}()")
                # df.eval(...), pd.eval(...) evaluate expressions too; torch's model.eval() takes no argument
                elif isinstance(func, ast.Attribute) and func.attr in ("eval", "exec") and (node.args or node.keywords):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} .{func.attr}()")
    assert found == []
