"""A command run inside a lake's subfolder, without LAKE, --lake or --catalog, reads that lake's catalog, as git
finds the repository of a subfolder; outside any lake it says so without advising a catalog where it stands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_helpers import SUM_WIDGETS, fenced, rules_file
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.terminal.nearest import nearest_lake

QUESTION = "unhealthy ozone days by county"


@pytest.fixture
def nested(indexed: Path, monkeypatch) -> Path:
    """The indexed table lake, with the current folder two levels inside it."""
    deep = indexed / "sensors" / "daily"
    monkeypatch.chdir(deep)
    return indexed


def test_show_search_and_status_find_the_catalog_above(nested: Path) -> None:
    runner = CliRunner()
    # A name that exists from here is read from here (as git reads paths), giving its lake-relative path.
    show = runner.invoke(cli, ["show", "readings_2024-01-02.csv", "--json"])
    assert show.exit_code == 0, show.output
    assert json.loads(show.stdout)["path"] == "sensors/daily/readings_2024-01-02.csv"
    by_lake_path = runner.invoke(cli, ["show", "sales.csv", "--json"])  # a lake-relative path still works
    assert by_lake_path.exit_code == 0 and json.loads(by_lake_path.stdout)["entry"]["path"] == "sales.csv"

    search = runner.invoke(cli, ["search", QUESTION, "--json", "-k", "2"])
    assert search.exit_code == 0, search.output
    assert json.loads(search.stdout)["hits"][0]["path"] == "ozone_by_county.csv"

    status = runner.invoke(cli, ["status", "--json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.stdout)["lake"] == str(nested) and json.loads(status.stdout)["entries"] == 4
    assert not (nested / "sensors" / "daily" / ".dslake").exists()  # nothing made where the command ran


def test_ask_finds_the_catalog_above(nested: Path, tmp_path: Path) -> None:
    rules = rules_file(
        tmp_path / "rules.jsonl",
        {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
        {"role": "coder", "response": fenced(SUM_WIDGETS)},
        {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
    )
    done = CliRunner().invoke(cli, ["ask", "How many widget units?", "--files", "sales.csv", "--llm", "scripted",
                                    "--scripted-file", rules, "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["value"] == "14" and answer["files_used"] == ["sales.csv"]
    assert (nested / ".dslake" / "runs" / answer["run_id"] / "answer.json").is_file()  # the lake's own catalog
    assert not (nested / "sensors" / "daily" / ".dslake").exists()


def test_outside_any_lake_the_hint_does_not_make_a_catalog_here(tmp_path: Path, monkeypatch) -> None:
    stray = tmp_path / "not_a_lake" / "sub"
    stray.mkdir(parents=True)
    monkeypatch.chdir(stray)
    for args in (["show", "a.csv"], ["search", "anything"], ["status"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 3, result.output
        assert result.stderr.splitlines()[0] == f"error: no catalog in {stray} nor in any folder above it"
        hint = result.stderr.splitlines()[1]
        assert hint.startswith("hint:") and "--lake LAKE" in hint and "its top folder" in hint
        assert "dslake index ." not in hint and "Traceback" not in result.output
    assert list(stray.iterdir()) == []


def test_the_nearest_catalog_wins_and_a_named_lake_is_not_searched_for(indexed: Path, tmp_path: Path,
                                                                       monkeypatch) -> None:
    inner = indexed / "sensors"
    (inner / ".dslake").mkdir(exist_ok=True)
    (inner / ".dslake" / "config.toml").write_text('[catalog]\nchroma_url = ""\ncollection = "entries"\n')
    try:
        assert nearest_lake(inner / "daily", ".dslake") == inner  # a lake inside a lake: the inner one
        assert nearest_lake(indexed, ".dslake") == indexed
        assert nearest_lake(indexed / "sensors" / "daily", "/abs/catalog") == indexed / "sensors" / "daily"
    finally:
        (inner / ".dslake" / "config.toml").unlink()
        (inner / ".dslake").rmdir()
    monkeypatch.chdir(tmp_path)
    named = CliRunner().invoke(cli, ["status", str(indexed), "--json"])
    assert named.exit_code == 0 and json.loads(named.stdout)["lake"] == str(indexed)


def test_a_first_index_of_a_folder_inside_an_indexed_lake_notes_the_second_catalog(indexed: Path) -> None:
    sub = indexed / "sensors"
    try:
        first = CliRunner().invoke(cli, ["index", str(sub)])
        assert first.exit_code == 0, first.output
        assert (f"note: {indexed} above is a lake with a catalog of its own: this index made a second catalog in "
                f"{sub / '.dslake'}; to keep one, index the folder into the lake's: dslake index {indexed} sensors"
                ) in first.stdout
        again = CliRunner().invoke(cli, ["index", str(sub)])
        assert again.exit_code == 0 and "note:" not in again.stdout  # said once, when the catalog was made
    finally:
        import shutil

        shutil.rmtree(sub / ".dslake", ignore_errors=True)
    elsewhere = CliRunner().invoke(cli, ["index", str(sub), "--catalog", str(indexed.parent / "elsewhere")])
    assert elsewhere.exit_code == 0 and "note:" not in elsewhere.stdout  # a catalog named elsewhere is meant
