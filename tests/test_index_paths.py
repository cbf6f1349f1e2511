"""Indexing only the paths a watcher saw change gives the same catalog as scanning the whole lake."""

from __future__ import annotations

import json
import shutil

from conftest import write_table_lake

from dsstar_lake.lake import Lake
from dsstar_lake.usecases.watch import changed_paths


def snapshot(lake: Lake) -> dict:
    conn = lake.connection()
    return {
        "files": sorted(tuple(r) for r in conn.execute("SELECT path, hash, status, entry_id FROM files")),
        "entries": sorted(tuple(r) for r in conn.execute(
            "SELECT id, kind, path, member_count, description, card_hash FROM entries")),
        "fts": sorted(r[0] for r in conn.execute("SELECT entry_id FROM entries_fts")),
        "vectors": sorted(lake.vector_store().ids()),
        "problems": lake.status(check_vectors=True).problems,
    }


def test_indexing_the_changed_paths_equals_a_full_scan(tmp_path):
    root = write_table_lake(tmp_path / "lake")
    targeted = Lake.open(root, catalog=tmp_path / "targeted")
    targeted.index()
    daily = root / "sensors" / "daily"

    # A burst of changes, and the paths a watcher would report for them.
    (root / "sales.csv").write_text("region,product,units,price\nwest,widget,1,2.5\n")  # changed
    (root / "notes.md").unlink()  # removed
    (root / "ozone_by_county.csv").rename(root / "ozone_2024.csv")  # renamed: old and new path
    (root / "new" / "deep").mkdir(parents=True)  # a new folder with files: reported as the folder
    (root / "new" / "deep" / "wells.csv").write_text("well,depth_m\nW1,30\n")
    (root / "new" / "memo_00001.md").write_text("# Memo 1\n\nWell W1 was deepened.\n")
    (daily / "readings_2024-01-06.csv").write_text((daily / "readings_2024-01-05.csv").read_text())  # family grows
    shutil.rmtree(root / "sensors" / "hourly", ignore_errors=True)
    (root / ".hidden.csv").write_text("a\n1\n")  # hidden: never indexed, even when named
    events = ["sales.csv", "notes.md", "ozone_by_county.csv", "ozone_2024.csv", "new",
              "sensors/daily/readings_2024-01-06.csv", ".hidden.csv"]

    summary = targeted.index(paths=events)
    assert (summary.added, summary.changed, summary.removed) == (4, 1, 2)
    assert summary.unchanged == 0  # nothing outside the events was looked at
    full = Lake.open(root, catalog=tmp_path / "full")
    full.index()
    assert snapshot(targeted) == snapshot(full)
    assert snapshot(targeted)["problems"] == []

    # A whole folder deleted, reported as the folder alone.
    shutil.rmtree(daily)
    assert targeted.index(paths=["sensors/daily"]).removed == 5 + 1
    full.index()
    assert snapshot(targeted) == snapshot(full)


def test_watch_events_become_lake_paths_or_a_full_scan(tmp_path):
    root = write_table_lake(tmp_path / "lake")
    assert changed_paths(root, [str(root / "sales.csv"), str(root / "sensors" / "daily")]) == [
        "sales.csv", "sensors/daily"]
    assert changed_paths(root, [str(tmp_path / "elsewhere.csv")]) == []
    assert changed_paths(root, [str(root / "sales.csv"), str(root / ".dslakeignore")]) is None
    assert changed_paths(root, [str(root)]) is None
    (root / "latest.csv").symlink_to(root / "sales.csv")
    assert changed_paths(root, [str(root / "latest.csv")]) == ["latest.csv"]  # the link, not its target
    linked = tmp_path / "linked"
    linked.symlink_to(root)
    assert changed_paths(root, [str(linked / "sales.csv")]) == ["sales.csv"]  # the lake reached through a link


def test_cli_paths_from_here_or_from_the_lake_root(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from dslake_cli.cli import cli

    root = write_table_lake(tmp_path / "lake")
    catalog = tmp_path / "catalog"
    runner = CliRunner()
    assert runner.invoke(cli, ["index", str(root), "--catalog", str(catalog)]).exit_code == 0
    (root / "sales.csv").write_text("region,product,units,price\nwest,widget,1,2.5\n")
    (root / "notes.md").unlink()
    monkeypatch.chdir(tmp_path)
    # lake/sales.csv is read from here; notes.md (deleted) from the lake root.
    result = runner.invoke(cli, ["index", "lake", "lake/sales.csv", "notes.md", "--catalog", str(catalog), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["changed"], summary["removed"], summary["unchanged"]) == (1, 1, 0)

    outside = runner.invoke(cli, ["index", "lake", str(tmp_path / "catalog"), "--catalog", str(catalog)])
    assert outside.exit_code == 2 and "not inside the lake" in outside.output
    both = runner.invoke(cli, ["index", "lake", "sales.csv", "--rebuild", "--catalog", str(catalog)])
    assert both.exit_code == 2 and "--rebuild" in both.output
    # The ignore file changes what every path means: naming it scans the whole lake.
    (root / ".dslakeignore").write_text("*.md\n")
    result = runner.invoke(cli, ["index", "lake", "lake/.dslakeignore", "--catalog", str(catalog), "--json"])
    assert json.loads(result.output)["unchanged"] > 0
