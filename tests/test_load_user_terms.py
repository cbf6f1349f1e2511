"""Load lines in the user's terms (issue 43 item 2): what a person reads (`dslake show`, `lake.show()`, the web page,
MCP) names the real file and runs as printed in their own Python, from any folder; prompts keep `data/`.
`lake.load(lazy=True)` gives a DuckDB relation, and a whole load is bounded by this machine's memory, not the
sandbox's, with a refusal that names the user's path and the ways round it."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from table_lakes import write_delta, write_hive, write_parts

from dsstar_lake import Lake
from dsstar_lake.base.errors import LoadError, UsageError
from dsstar_lake.usecases.load import machine_memory_mb
from dsstar_lake.views.userpaths import in_user_terms, lake_root_text

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "data_samples"
# lake path -> what lake.load gives it (a frame, or a dict of frames by sheet)
KINDS = ("sales.csv", "my files/sales 2024.csv", "weather/station_log.csv", "stations.xlsx", "city/trips.parquet", "sales_hive", "events",
         "trips_delta")
# the lines a description gives a person to load the whole entry, after "df = "
WHOLE = ("load: df = ", "Load every file: df = ", "Load every file with its partition columns: df = ",
         "Load the current version: df = ")


@pytest.fixture(scope="module")
def lake_dir(tmp_path_factory) -> Path:
    """Sample files of several kinds, a Hive dataset, a folder of parts and a Delta table, indexed once."""
    root = tmp_path_factory.mktemp("user-terms") / "lake"
    for rel in ("sales.csv", "weather/station_log.csv", "stations.xlsx", "city/trips.parquet"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLES / rel, root / rel)
    (root / "my files").mkdir()
    (root / "my files" / "sales 2024.csv").write_text("region;units\nNorth;3\nSouth;4\n")  # a space, and ;
    write_hive(root / "sales_hive")
    write_parts(root / "events")
    write_delta(root / "trips_delta")
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


@pytest.fixture
def lake(lake_dir):
    handle = Lake.open(lake_dir)
    yield handle
    handle.close()


def _whole_lines(description: str) -> list[str]:
    """Return the lines that load the whole entry, as shown (one per table for a workbook)."""
    found = []
    for line in description.splitlines():
        for lead in WHOLE:
            if line.strip().startswith(lead):
                code = line.strip()[len(lead):]
                found.append(code.split("  (", 1)[0])  # a table's line ends with its import, in parentheses
    return found


def _run_elsewhere(lines: list[str], cwd: Path) -> list[list]:
    """exec each line in a fresh Python started in cwd; return [rows, columns] of what each gave."""
    code = ("import json, sys\nimport pandas as pd\nfrom deltalake import DeltaTable\nout = []\n"
            "for line in json.loads(sys.argv[1]):\n"
            "    df = eval(line)\n"
            "    out.append([len(df), sorted(map(str, df.columns))])\n"
            "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(lines)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _shape(value) -> list:
    return [len(value), sorted(map(str, value.columns))]


@pytest.mark.parametrize("where", ["outside", "above"])
def test_shown_load_lines_run_as_printed_in_the_users_python(lake, lake_dir, tmp_path, monkeypatch, where):
    """From a folder outside the lake the lines are absolute; from the folder above it, relative to it. Either
    way a fresh Python in that folder runs each line and gets what lake.load gives."""
    here = tmp_path / "elsewhere" if where == "outside" else lake_dir.parent
    here.mkdir(exist_ok=True)
    monkeypatch.chdir(here)
    for rel in KINDS:
        description = lake.show(rel)["entry"]["description"]
        assert "'data/" not in description and "File: data/" not in description, rel
        lines = _whole_lines(description)
        assert lines, (rel, description[:400])
        shown = str(lake_dir / rel) if where == "outside" else f"lake/{rel}"
        assert repr(shown) in lines[0], lines[0]
        got = _run_elsewhere(lines, here)
        loaded = lake.load(rel)
        expected = [_shape(loaded)] if isinstance(loaded, pd.DataFrame) else [_shape(v) for v in loaded.values()]
        assert got[:len(expected)] == expected, rel


def test_dslake_show_prints_the_users_path(lake_dir, tmp_path, monkeypatch):
    from dslake_cli.cli import cli

    monkeypatch.chdir(lake_dir)  # inside the lake itself: paths relative to it, as the user types them here
    result = CliRunner().invoke(cli, ["show", "city/trips.parquet", "--lake", str(lake_dir)])
    assert result.exit_code == 0, result.output
    assert "load: df = pd.read_parquet('city/trips.parquet')" in result.output
    assert "data/" not in result.output
    as_json = CliRunner().invoke(cli, ["show", "sales.csv", "--lake", str(lake_dir), "--json"])
    assert "pd.read_csv('sales.csv')" in json.loads(as_json.output)["entry"]["description"]


def test_the_web_page_and_mcp_name_files_absolutely(lake, lake_dir, monkeypatch):
    """A page or an MCP client reads the lines away from the server's folder: always the absolute path."""
    monkeypatch.chdir(lake_dir)
    described = lake.show("sales.csv", absolute=True)["entry"]["description"]
    assert f"pd.read_csv({str(lake_dir / 'sales.csv')!r})" in described


def test_prompts_keep_the_sandbox_form(lake, lake_dir, monkeypatch):
    """What the model reads is the stored text: the lake at data/, as the sandbox mounts it."""
    monkeypatch.chdir(lake_dir.parent)
    hits = lake.search("units sold per region", k=3)
    hit = next(h for h in hits if h.path == "sales.csv")
    assert "pd.read_csv('data/sales.csv')" in hit.description
    assert str(lake_dir) not in hit.description and "lake/sales.csv" not in hit.description
    assert "pd.read_csv('data/sales.csv')" in lake.catalog.show("sales.csv")["entry"]["description"]


def test_paths_are_rewritten_inside_their_literals_only():
    text = ("File: data/it's.csv (3 bytes)\n  load: df = pd.read_csv(\"data/it's.csv\", sep=';')\n"
            "metadata/x 'metadata/y' a/data/b\n  e.g. duckdb.sql(\"SELECT 1 FROM read_csv('data/big.csv')\")")
    out = in_user_terms(text, "/o'neil/lake")
    assert out.splitlines()[0] == "File: /o'neil/lake/it's.csv (3 bytes)"
    line = out.splitlines()[1].split("df = ", 1)[1]
    call = ast.parse(line, mode="eval").body
    assert ast.literal_eval(call.args[0]) == "/o'neil/lake/it's.csv"
    assert out.splitlines()[2] == "metadata/x 'metadata/y' a/data/b"
    assert in_user_terms(text, "").splitlines()[1] == "  load: df = pd.read_csv(\"it's.csv\", sep=';')"
    # a name holding 'data/ in prose cannot move where a line's real literals begin and end
    tricky = "First: x 'data/y; List them with `glob.glob('data/s/*.csv')`"
    code = in_user_terms(tricky, "/a'b").split("`")[1]
    assert ast.literal_eval(ast.parse(code, mode="eval").body.args[0]) in ("data/s/*.csv", "/a'b/s/*.csv")


def test_a_bucket_lake_is_named_by_its_url(tmp_path):
    root = lake_root_text(None, "s3://bucket/lake/")
    assert root == "s3://bucket/lake"
    assert in_user_terms("load: df = pd.read_csv('data/t/sales.csv')", root) == \
        "load: df = pd.read_csv('s3://bucket/lake/t/sales.csv')"


def test_lazy_gives_a_duckdb_relation_with_the_load_lines_columns(lake, lake_dir):
    import duckdb

    for rel in ("sales.csv", "weather/station_log.csv", "city/trips.parquet", "sales_hive", "events", "trips_delta"):
        relation = lake.load(rel, lazy=True)
        assert isinstance(relation, duckdb.DuckDBPyRelation), rel
        whole = lake.load(rel)
        assert relation.aggregate("count(*)").fetchall()[0][0] == len(whole), rel
        assert sorted(relation.columns) == sorted(map(str, whole.columns)), rel
    station = lake.load("weather/station_log.csv", lazy=True).df()  # four lines above its header, as pandas skips
    assert station["wind_dir"].tolist() == lake.load("weather/station_log.csv")["wind_dir"].tolist()
    with pytest.raises(LoadError, match="lazy=True gives DuckDB relations") as caught:
        lake.load("stations.xlsx", lazy=True)
    assert "lake.load('stations.xlsx')" in str(caught.value)


def test_a_whole_load_is_bounded_by_the_machine_not_the_sandbox(tmp_path, monkeypatch):
    root = tmp_path / "lake"
    root.mkdir()
    (root / "big.csv").write_text("station,value\n" + "".join(f"s{i % 7},{i}\n" for i in range(40_000)))
    lake = Lake.open(root, overrides={"sandbox.memory_mb": 1})  # too big for a script: the index says stream it
    lake.index()
    assert "rel = duckdb.read_csv('data/big.csv')" in lake.catalog.show("big.csv")["entry"]["description"]
    assert machine_memory_mb() > 1000
    assert len(lake.load("big.csv")) == 40_000  # this machine's memory, not the sandbox's 1 MB
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LoadError, match="too big to load whole") as caught:
        lake.load("big.csv", max_memory_mb=1)
    said = str(caught.value)
    assert "lake.load('lake/big.csv', lazy=True)" in said and "max_memory_mb=0" in said and "data/" not in said
    assert "duckdb.read_csv('lake/big.csv')" in caught.value.hint
    assert len(lake.load("lake/big.csv", max_memory_mb=0)) == 40_000  # no limit: loaded anyway, by the user's path
    with pytest.raises(UsageError, match="max_memory_mb must be 0"):
        lake.load("big.csv", max_memory_mb=-1)
    lake.close()


def test_a_dataset_too_big_for_the_sandbox_loads_whole_or_lazily(tmp_path, monkeypatch):
    root = tmp_path / "lake"
    rows = write_hive(root / "sales", rows=20_000)
    lake = Lake.open(root, overrides={"sandbox.memory_mb": 1})  # no whole-load line is kept for it
    lake.index()
    monkeypatch.chdir(root)
    whole = lake.load("sales")  # this machine has the memory: the line a smaller Hive dataset gets
    assert len(whole) == rows and {"year", "month"} <= set(whole.columns)
    with pytest.raises(LoadError, match="too big to load whole") as caught:
        lake.load("sales", max_memory_mb=1)
    assert "lake.load('sales', lazy=True)" in str(caught.value) and "data/" not in str(caught.value)
    relation = lake.load("sales", lazy=True)
    assert relation.aggregate("count(*)").fetchall()[0][0] == rows
    assert {"year", "month", "order_id", "amount"} <= set(relation.columns)
    lake.close()



def test_an_iceberg_table_loads_lazily_as_its_current_snapshot(tmp_path):
    from table_lakes import write_iceberg

    root = tmp_path / "lake"
    table, rows = write_iceberg(root / "wh")
    lake = Lake.open(root)
    lake.index()
    name = table.relative_to(root).as_posix()
    relation = lake.load(name, lazy=True)
    assert relation.aggregate("count(*)").fetchall()[0][0] == rows == len(lake.load(name))
    lake.close()
