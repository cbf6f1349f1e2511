"""The scan never enters dslake's catalog, however it is reached: by its name, a link to it, a link into it.

A link in the lake such as `history -> .dslake/runs` once made `dslake index` index the catalog's own run
records, and an earlier question then came back from `search`, `show` and MCP. Checked with the catalog inside
the lake and elsewhere (`--catalog`), with and without following links, for a whole scan and for the paths a
user or a watcher names.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agent_helpers import fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from dslake_index.scan import INTO_CATALOG, scan_lake

from dsstar_lake.usecases.watch import changed_paths

QUESTION = "Which county had the most unhealthy days, says PURPLEGIRAFFE?"


def indexed_paths(catalog: Path) -> list[str]:
    con = sqlite3.connect(catalog / "manifest.sqlite")
    try:
        return sorted(row[0] for row in con.execute("SELECT path FROM files"))
    finally:
        con.close()


@pytest.fixture
def asked(tmp_path, monkeypatch, request):
    """A lake indexed with its catalog inside (or elsewhere), after one real `dslake ask` left a run record."""
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "subprocess")
    lake = write_table_lake(tmp_path / "lake")
    elsewhere = request.param == "elsewhere"
    catalog = tmp_path / "catalogs" / "mine" if elsewhere else lake / ".dslake"
    where = ["--catalog", str(catalog)] if elsewhere else []
    assert CliRunner().invoke(cli, ["index", str(lake), *where]).exit_code == 0
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "planner", "response": "Read the ozone table."},
                       {"role": "coder", "response": fenced("print('Kings')")}, {"role": "*", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced("print('Kings')")})
    done = CliRunner().invoke(cli, ["ask", QUESTION, "--lake", str(lake), *where, "--files", "ozone_by_county.csv",
                                    "--llm", "scripted", "--scripted-file", rules, "--json"])
    assert done.exit_code == 0, done.output
    run_id = json.loads(done.output)["run_id"]
    assert QUESTION in (catalog / "runs" / run_id / "run.json").read_text()
    return lake, catalog, where, run_id


def plant_links(lake: Path, catalog: Path, run_id: str) -> None:
    """Links a lake could hold into its catalog: a folder of runs, the catalog itself, one run file."""
    (lake / "history").symlink_to(catalog / "runs", target_is_directory=True)
    (lake / "catalog_copy").symlink_to(catalog, target_is_directory=True)
    (lake / "earlier.json").symlink_to(catalog / "runs" / run_id / "run.json")


@pytest.mark.parametrize("asked", ["inside", "elsewhere"], indirect=True)
@pytest.mark.parametrize("follow", [False, True], ids=["links-in-lake", "follow-symlinks"])
def test_index_never_takes_the_catalogs_run_records(asked, follow, monkeypatch):
    lake, catalog, where, run_id = asked
    before = indexed_paths(catalog)
    plant_links(lake, catalog, run_id)
    monkeypatch.setenv("DSLAKE_INDEX_FOLLOW_SYMLINKS", "true" if follow else "false")
    done = CliRunner().invoke(cli, ["index", str(lake), *where])
    assert done.exit_code == 0, done.output
    assert indexed_paths(catalog) == before  # nothing of the catalog came in
    found = CliRunner().invoke(cli, ["search", "PURPLEGIRAFFE unhealthy county question", "--lake", str(lake),
                                     *where, "--json"])
    assert found.exit_code == 0, found.output
    assert not [h for h in json.loads(found.output)["hits"] if h["path"].startswith(("history", "catalog_copy",
                                                                                         "earlier"))]
    reasons = dict(scan_lake(lake, catalog, follow_symlinks=follow).skipped)
    if follow or catalog.is_relative_to(lake):
        # Left out because of where they lead, not merely because they leave the lake.
        assert reasons["history"] == reasons["catalog_copy"] == reasons["earlier.json"] == INTO_CATALOG


@pytest.mark.parametrize("asked", ["inside", "elsewhere"], indirect=True)
def test_named_paths_through_a_link_into_the_catalog_are_not_indexed(asked, monkeypatch):
    """`dslake index LAKE PATH` and a watcher's events reach files by path, through linked folders on the way."""
    lake, catalog, where, run_id = asked
    before = indexed_paths(catalog)
    plant_links(lake, catalog, run_id)
    monkeypatch.setenv("DSLAKE_INDEX_FOLLOW_SYMLINKS", "true")
    named = [f"history/{run_id}/run.json", f"history/{run_id}", "catalog_copy/manifest.sqlite", "earlier.json"]
    done = CliRunner().invoke(cli, ["index", str(lake), *where, *(str(lake / n) for n in named)])
    assert done.exit_code == 0, done.output
    assert indexed_paths(catalog) == before
    # What a watcher hands the index for an event under the link: the path as written, then left out by the scan.
    scope = changed_paths(lake, [str(lake / "history" / run_id / "trace.jsonl")])
    assert scope == [f"history/{run_id}/trace.jsonl"]
    result = scan_lake(lake, catalog, follow_symlinks=True, only=scope)
    assert result.files == [] and result.skipped == [(scope[0], INTO_CATALOG)]


def test_a_catalog_around_the_lake_leaves_the_lake_indexable(tmp_path):
    """A catalog folder that contains the lake (an odd `--catalog`) must not make every lake file its own."""
    outer = tmp_path / "outer"
    lake = write_table_lake(outer / "lake")
    (lake / "alias.csv").symlink_to(lake / "sales.csv")
    result = scan_lake(lake, outer, only=["sales.csv", "alias.csv"])
    assert [f.path for f in result.files] == ["alias.csv", "sales.csv"]
