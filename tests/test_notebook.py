"""The notebook API (issue 18): lake.load runs the load lines the agent is told, results show as escaped HTML,
library errors give library advice, and the README's Python example runs as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from dslake_index.hint_check import run_hint
from dslake_index.retrieve import Hit

from dsstar_lake import Lake
from dsstar_lake.base.errors import CatalogError, DslakeError, LoadError, UsageError
from dsstar_lake.views.notebook import RunList, RunView, SearchResults
from dsstar_lake.views.status import LakeStatus

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def samples(samples_lake: Path):
    handle = Lake.open(samples_lake)
    yield handle
    handle.close()


def _told(description: str, rel: str, root: Path) -> list[str]:
    """Return the description's load lines with the coder's data/ path turned into the real one."""
    lines = [ln.split("load: df = ", 1)[1] for ln in description.splitlines() if "load: df = " in ln]
    return [ln.replace(repr("data/" + rel), repr(str(root / rel))) for ln in lines]


def test_load_gives_what_the_description_tells_the_agent(samples, samples_lake):
    hits = samples.search("units sold per region and product", k=3)
    assert isinstance(hits, SearchResults) and isinstance(hits, list) and hits[0].path == "sales.csv"
    df = samples.load(hits[0])
    told = _told(hits[0].description or samples.show("sales.csv")["entry"]["description"], "sales.csv", samples_lake)
    assert len(told) == 1
    expected = eval(told[0], {"pd": pd})  # the description's own line, as a coder would run it
    pd.testing.assert_frame_equal(df, expected)
    # an entry path and a path from the current folder name the same file
    pd.testing.assert_frame_equal(samples.load("sales.csv"), df)
    pd.testing.assert_frame_equal(samples.load(str(samples_lake / "sales.csv")), df)


def test_a_workbook_gives_a_dict_of_frames_by_sheet(samples):
    import openpyxl

    loaded = samples.load("stations.xlsx")
    sheets = openpyxl.load_workbook(samples.root / "stations.xlsx", read_only=True).sheetnames
    assert isinstance(loaded, dict) and len(loaded) >= 2
    assert all(isinstance(v, pd.DataFrame) and not v.empty for v in loaded.values())
    assert {name.split("!")[0] for name in loaded} <= set(sheets)


def test_a_family_loads_each_member_and_limit_takes_the_first(samples, samples_lake):
    hit = next(h for h in samples.search("sensor readings by day", k=10) if h.kind == "family")
    members = samples.members(hit.entry_id)
    every = samples.load(hit)
    assert list(every) == members and len(members) >= 5
    first = samples.load(hit.path, limit=2)
    assert list(first) == members[:2]
    one = samples.load(members[0])
    pd.testing.assert_frame_equal(one, every[members[0]])
    pd.testing.assert_frame_equal(one, pd.read_csv(samples_lake / members[0]))
    with pytest.raises(UsageError, match="limit must be 1 or more"):
        samples.load(hit, limit=0)


def test_load_errors_are_library_errors(samples):
    with pytest.raises(UsageError) as caught:
        samples.load("no/such.csv")
    assert "lake.index()" in str(caught.value) and "dslake" not in str(caught.value)
    with pytest.raises(LoadError, match="could not be described"):
        samples.load("broken/corrupt.xlsx")
    with pytest.raises(UsageError, match="cannot load a int"):
        samples.load(3)


def _quote_lake(root: Path) -> tuple[Path, str, str]:
    """A lake whose names try to break out of a string literal: quotes in a file name, `{path}` as a sheet name."""
    import openpyxl

    root.mkdir(parents=True)
    csv_name = """it's "q" '+__import__('os').system('touch PWNED')+'.csv"""
    (root / csv_name).write_text("a,b\n1,x\n2,y\n")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "{path}"
    sheet.append(["name", "value"])
    for i in range(4):
        sheet.append([f"n{i}", i])
    other = book.create_sheet("it's {path}")
    other.append(["k", "v"])
    other.append(["a", 1])
    other.append(["b", 2])
    book_name = "\"{path}'.xlsx"
    book.save(root / book_name)
    return root, csv_name, book_name


def test_file_and_sheet_names_cannot_inject_code(tmp_path, monkeypatch):
    root, csv_name, book_name = _quote_lake(tmp_path / "lake")
    monkeypatch.chdir(tmp_path)
    lake = Lake.open(root)
    lake.index()
    df = lake.load(csv_name)
    assert list(df.columns) == ["a", "b"] and df["a"].tolist() == [1, 2]
    sheets = lake.load(book_name)
    assert sorted(sheets) == sorted(["{path}", "it's {path}"])
    assert sheets["{path}"]["value"].tolist() == [0, 1, 2, 3]
    assert not (tmp_path / "PWNED").exists() and not (root / "PWNED").exists()
    lake.close()


def test_run_hint_passes_the_path_as_a_value_and_leaves_literals_alone(tmp_path):
    path = tmp_path / "a'b\"c.txt"
    path.write_text("{path}\nx\n", encoding="utf-8")
    assert run_hint("open({path}, encoding='utf-8').read().splitlines()", path) == ["{path}", "x"]


# ---- display ---------------------------------------------------------------------------------------------------

EVIL = "<script>alert('x')</script>&.csv"


def _hit(path: str = EVIL) -> Hit:
    return Hit(entry_id="e1", kind="family", path=path, format="csv", member_count=3, score=0.8123,
               card_line="path words", summary=["<b>card</b> & more units"], kin=["kin<1>.csv"])


def test_search_results_show_as_an_escaped_table_and_stay_a_list():
    hits = SearchResults([_hit(), _hit("plain.csv")], "q <i> units")
    page = hits._repr_html_()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;.csv" in page and "<script>" not in page
    assert "&lt;b&gt;card&lt;/b&gt; &amp; more <mark>units</mark>" in page and "q &lt;i&gt;" in page
    assert "+ kin&lt;1&gt;.csv" in page and "path words" not in page  # folded members listed, never path words
    assert hits[1].path == "plain.csv" and hits == [_hit(), _hit("plain.csv")] and len(hits) == 2
    text = repr(hits)
    assert text.splitlines()[0] == "SearchResults('q <i> units': 2 hits)"
    assert "2. plain.csv  [csv family of 3, score 0.812]" in text
    assert repr(_hit("a.csv")) == "Hit('a.csv', csv family of 3, score=0.812)"


def test_status_runs_and_a_run_show_escaped():
    status = LakeStatus(lake="/l<a>", catalog="/l/.dslake", schema="5", files=3, entries=2, families=1, bytes=10,
                        formats={"csv": 3}, failed=[(EVIL, "bad <thing>")], stale=[], new=["n<1>.csv"], removed=[],
                        catalog_bytes=5, last_index_at=0.0, problems=["vectors <drifted>"])
    page = status._repr_html_()
    assert "&lt;script&gt;" in page and "bad &lt;thing&gt;" in page and "n&lt;1&gt;.csv" in page
    assert "vectors &lt;drifted&gt;" in page and "<script>" not in page
    assert repr(status) == ("LakeStatus(/l<a>: 3 files in 2 entries (1 families), 1 failed, 1 new, 1 problem(s), "
                            "last index 1970-01-01 00:00 UTC)")
    runs = RunList([{"id": "r1", "status": "done", "question": "<q>?", "answer": "<a>", "created_at": 0.0}])
    assert "&lt;q&gt;?" in runs._repr_html_() and "<q>" not in runs._repr_html_()
    assert runs == [runs[0]] and "r1  done  '<q>?' -> <a>" in repr(runs)
    run = RunView({"meta": {"id": "r1", "status": "done", "question": "<q>"}, "folder": "/f",
                   "rounds": [{"round": 0, "step": "<s>", "scripts": [{}], "sufficient": True,
                               "route": {"kind": "add"}}],
                   "calls": {"coder": {"calls": 1, "input_tokens": 2, "output_tokens": 3, "cost_usd": 0.1,
                                       "errors": 0}},
                   "answer": {"value": "<v>", "files_used": [EVIL]}})
    page = run._repr_html_()
    assert "&lt;s&gt;" in page and "&lt;v&gt;" in page and "&lt;script&gt;" in page and "<script>" not in page
    assert repr(run) == "RunView(r1: done, 1 rounds, question '<q>', answer '<v>')" and run["folder"] == "/f"


def test_a_real_status_and_search_render(samples):
    status = samples.status()
    assert "corrupt.xlsx" in status._repr_html_() and repr(status).startswith(f"LakeStatus({samples.root}: ")
    assert "sales.csv" in samples.search("units sold", k=2)._repr_html_()
    assert samples.runs() == [] and samples.runs()._repr_html_().startswith("<table>")


# ---- error wording -------------------------------------------------------------------------------------------


def test_library_errors_give_library_advice_and_the_cli_keeps_its_own(tmp_path):
    from dslake_cli.cli import cli

    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "a.csv").write_text("a\n1\n")
    with pytest.raises(CatalogError) as caught:
        Lake.open(lake).status()
    assert str(caught.value) == f"no catalog at {lake.resolve() / '.dslake'}: build one with Lake.open(lake).index()"
    result = CliRunner().invoke(cli, ["status", str(lake)])
    assert result.exit_code == 3 and "run `dslake index LAKE` first" in result.output
    assert "Lake.open" not in result.output
    with pytest.raises(UsageError) as caught:
        Lake.open(None)
    assert "--catalog" not in str(caught.value) and "Lake.open(catalog=DIR)" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        Lake.open(lake, catalog=lake)
    assert "--catalog" not in str(caught.value) and "catalog=" in str(caught.value)


def test_a_neutral_hint_reaches_str_and_command_line_advice_does_not():
    assert str(DslakeError("bad URL", hint="write it as http://HOST:PORT")) == "bad URL: write it as http://HOST:PORT"
    assert str(DslakeError("no room", hint="choose one with --catalog DIR")) == "no room"
    assert str(DslakeError("old", hint="run `dslake index LAKE`")) == "old"
    assert str(DslakeError("m", hint="run `dslake index`", api_hint="run lake.index()")) == "m: run lake.index()"


# ---- scripts and the README ---------------------------------------------------------------------------------


def _copy_samples(folder: Path) -> Path:
    target = folder / "data_samples"
    shutil.copytree(REPO / "data_samples", target, ignore=shutil.ignore_patterns(".dslake"))
    return target


def _run_script(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    script = folder / "script.py"
    script.write_text(code)
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("DSLAKE_")}
    env["XDG_CONFIG_HOME"] = str(folder / "config-home")
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, str(script)], cwd=folder, capture_output=True, text=True, timeout=300,
                          env=env)


def test_lake_index_works_from_a_script_without_a_main_guard(tmp_path):
    _copy_samples(tmp_path)
    done = _run_script(tmp_path, (
        "from pathlib import Path\n"
        "from dsstar_lake import Lake\n"
        "with open('ran.txt', 'a') as f:\n"  # a child that imported this script again would add a line
        "    f.write('ran\\n')\n"
        "lake = Lake.open('data_samples')\n"
        "summary = lake.index()\n"
        "print('profiled', summary.profiled)\n"
        "print(lake.load(lake.search('units sold per region', k=1)[0]).shape)\n"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran.txt").read_text() == "ran\n"
    assert re.search(r"profiled [1-9]\d*", done.stdout) and "(48, 5)" in done.stdout


def readme_python_block() -> str:
    """Return the first python block under the README's 'Using it from Python' heading."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Using it from Python", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_python_example_runs(tmp_path):
    _copy_samples(tmp_path)
    done = _run_script(tmp_path, readme_python_block())
    assert done.returncode == 0, done.stderr
    assert "SearchResults(" in done.stdout and "sales.csv" in done.stdout
