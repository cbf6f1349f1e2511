"""The CLI through click's CliRunner: exit codes, output, what was written; misuse gives one line, no traceback."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_index_status_show_search_json(runner, table_lake):
    result = runner.invoke(cli, ["index", str(table_lake), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["added"] == 8 and summary["families"] == 1
    result = runner.invoke(cli, ["status", str(table_lake), "--json"])
    status = json.loads(result.output)
    assert status["files"] == 8 and status["entries"] == 4 and status["problems"] == []
    result = runner.invoke(cli, ["show", "sales.csv", "--lake", str(table_lake), "--json"])
    shown = json.loads(result.output)
    assert shown["file"]["status"] == "ok" and "units" in shown["entry"]["card"]
    result = runner.invoke(cli, ["search", "units sold per region", "--lake", str(table_lake), "--json", "-k", "2"])
    hits = json.loads(result.output)["hits"]
    assert result.exit_code == 0 and len(hits) == 2 and hits[0]["path"] == "sales.csv"
    result = runner.invoke(cli, ["search", "sensor temperature readings", "--lake", str(table_lake), "--json"])
    top = json.loads(result.output)["hits"][0]
    assert top["kind"] == "family" and top["member_count"] == 5


def test_human_output(runner, table_lake):
    result = runner.invoke(cli, ["index", str(table_lake)])
    assert result.exit_code == 0
    assert "8 added" in result.output and "1 families" in result.output
    table_lake.joinpath("sales.csv").write_text("region,units\nwest,1\n")
    result = runner.invoke(cli, ["status", str(table_lake)])
    assert "1 changed" in result.output
    result = runner.invoke(cli, ["search", "ozone", "--lake", str(table_lake), "-v"])
    assert "ozone_by_county.csv" in result.output and "search" in result.output


@pytest.mark.parametrize(
    "args, code, text",
    [
        (["index", "/no/such/lake"], 2, "lake not found"),
        (["index", "--jobs", "many", "."], 2, "Invalid value"),
        (["index"], 2, "Missing argument"),
        (["search"], 2, "Missing argument"),
        (["index", ".", "--no-such-option"], 2, "No such option"),
        (["search", "x", "--lake", "/no/such/lake"], 2, "lake not found"),
    ],
)
def test_misuse_is_one_clear_line(runner, args, code, text):
    result = runner.invoke(cli, args)
    assert result.exit_code == code
    assert text in result.output
    assert "Traceback" not in result.output


def test_lake_that_is_a_file_and_unwritable_catalog(runner, tmp_path):
    afile = tmp_path / "data.csv"
    afile.write_text("a\n1\n")
    result = runner.invoke(cli, ["index", str(afile)])
    assert result.exit_code == 2 and "not a folder" in result.output
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "a.csv").write_text("a\n1\n")
    result = runner.invoke(cli, ["index", str(lake), "--catalog", str(afile / "cat")])
    assert result.exit_code == 3 and "cannot write the catalog" in result.output


def test_search_without_a_catalog_says_to_index_first(runner, table_lake):
    result = runner.invoke(cli, ["search", "anything", "--lake", str(table_lake)])
    assert result.exit_code == 3
    assert "dslake index" in result.output


def test_config_lists_every_setting_with_its_source(runner):
    result = runner.invoke(cli, ["config", "--json"])
    rows = {row["key"]: row for row in json.loads(result.output)["settings"]}
    assert rows["retrieve.k"]["value"] == 10 and rows["retrieve.k"]["source"] == "default"


def test_every_command_has_help_and_is_in_the_readme(runner):
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    for name in cli.commands:
        assert runner.invoke(cli, [name, "--help"]).exit_code == 0
        assert f"dslake {name}" in readme, f"`dslake {name}` is missing from the README"


def test_catalog_that_is_the_lake_itself_is_refused(runner, tmp_path):
    (tmp_path / "a.csv").write_text("a\n1\n")
    result = runner.invoke(cli, ["index", str(tmp_path), "--catalog", str(tmp_path / ".")])
    assert result.exit_code == 2 and "cannot be the lake folder itself" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]  # nothing written into the lake
