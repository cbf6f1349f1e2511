"""A catalog written by a newer dslake is read as it is and never written; one from an older dslake is migrated."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from agent_helpers import scripted
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index import catalog as catalog_db

from dsstar_lake.base.errors import CatalogTooNew
from dsstar_lake.lake import Lake

NEWER = "999_from_a_newer_dslake"  # a migration this code does not know
QUESTION = "unhealthy ozone days by county"


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Return every file under folder with its content hash and mtime (a file added, changed or touched shows)."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def record_migration(manifest: Path, name: str, sql: str = "") -> None:
    """Write into a manifest what a dslake with one more migration would have left: its table and its name."""
    conn = sqlite3.connect(manifest)
    if sql:
        conn.execute(sql)
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, 0)", (name,))
    conn.commit()
    conn.close()


@pytest.fixture
def newer_lake(table_lake: Path) -> Path:
    """The table lake, indexed, then bumped to a schema past this code's (as a newer dslake's index leaves it)."""
    lake = Lake.open(table_lake)
    lake.index()
    lake.close()  # the catalog at rest, as a newer dslake's finished index leaves it: no -wal, no -shm
    record_migration(table_lake / ".dslake" / "manifest.sqlite", NEWER,
                     "CREATE TABLE lineage (entry_id TEXT PRIMARY KEY, parents TEXT)")
    return table_lake


def test_every_command_reads_a_newer_catalog_and_none_writes_it(newer_lake: Path) -> None:
    catalog = newer_lake / ".dslake"
    before = fingerprint(catalog)
    (newer_lake / "added_later.csv").write_text("a,b\n1,2\n")  # something an index would want to write
    runner = CliRunner()
    warning = f"warning: the catalog at {catalog} was written by a newer dslake (schema {NEWER}; this one knows up to "

    status = runner.invoke(cli, ["status", str(newer_lake), "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.stdout)
    assert data["entries"] == 4 and data["schema"] == "dslake.status/1"
    assert data["manifest_schema"] == NEWER  # the manifest's last migration, beside the command's schema
    assert status.stderr.count("\n") == 1 and status.stderr.startswith(warning)  # one warning line
    assert "read as it is, never written" in status.stderr

    search = runner.invoke(cli, ["search", QUESTION, "--lake", str(newer_lake), "--json", "-k", "2"])
    assert search.exit_code == 0, search.output
    assert json.loads(search.stdout)["hits"][0]["path"] == "ozone_by_county.csv"
    assert search.stderr.startswith(warning) and search.stderr.count("\n") == 1

    show = runner.invoke(cli, ["show", "sales.csv", "--lake", str(newer_lake)])
    assert show.exit_code == 0 and "description:" in show.stdout and show.stderr.startswith(warning)

    for args in (["index", str(newer_lake)], ["index", str(newer_lake), "--rebuild"],
                 ["index", str(newer_lake), "added_later.csv"]):
        index = runner.invoke(cli, args)
        assert index.exit_code == 3, index.output  # the catalog's code in the exit-code table
        first = index.stderr.splitlines()[0]
        assert first.startswith(f"error: the catalog at {catalog} was written by a newer dslake (schema {NEWER}")
        assert first.endswith("and indexing writes to it; this dslake never writes to it")
        assert "upgrade dslake" in index.stderr and "Traceback" not in index.output
    assert fingerprint(catalog) == before


def test_the_console_scripts_no_change_index_does_not_touch_a_newer_catalog(newer_lake: Path) -> None:
    """The quick no-change answer (terminal/quick_index.py) takes the writer lock and writes the index time: for a
    newer catalog it hands over to the full CLI, which refuses."""
    from dsstar_lake.terminal.quick_index import answer

    catalog = newer_lake / ".dslake"
    before = fingerprint(catalog)
    assert answer(["index", str(newer_lake)]) is False
    assert fingerprint(catalog) == before


def test_python_callers_get_a_read_only_lake_and_the_error_on_writing(newer_lake: Path) -> None:
    catalog = newer_lake / ".dslake"
    before = fingerprint(catalog)
    lake = Lake.open(newer_lake, readonly=False)  # asking for a writable one does not make it writable
    assert lake.readonly and lake.catalog_warning() is not None and lake.status().schema == NEWER
    assert lake.search(QUESTION, k=1)[0].path == "ozone_by_county.csv"
    assert lake.show("sales.csv")["entry"]["path"] == "sales.csv"
    with pytest.raises(CatalogTooNew) as index_error:
        lake.index()
    assert "newer dslake" in str(index_error.value) and "Lake.open(lake, catalog=DIR)" in str(index_error.value)
    with pytest.raises(CatalogTooNew, match="`ask` keeps its run record in it"):
        lake.ask("How many widget units?", provider=scripted(("planner", "Count the widget units.")))
    lake.close()
    assert fingerprint(catalog) == before


def test_a_catalog_of_this_version_has_no_warning(table_lake: Path) -> None:
    lake = Lake.open(table_lake)
    lake.index()
    assert lake.catalog_warning() is None and not lake.readonly
    status = CliRunner().invoke(cli, ["status", str(table_lake)])
    assert status.exit_code == 0 and status.stderr == ""


def test_a_catalog_from_an_older_dslake_is_migrated_and_used(table_lake: Path) -> None:
    Lake.open(table_lake).index()
    manifest = table_lake / ".dslake" / "manifest.sqlite"
    last, _ = catalog_db.MIGRATIONS[-1]
    # What the dslake before the last migration left: no datasets table, the migration not recorded.
    conn = sqlite3.connect(manifest)
    conn.execute("DROP TABLE datasets")
    conn.execute("DELETE FROM _migrations WHERE name = ?", (last,))
    conn.commit()
    conn.close()

    status = CliRunner().invoke(cli, ["status", str(table_lake)])
    assert status.exit_code == 0, status.output
    assert f"schema:        {last}" in status.stdout and status.stderr == ""  # migrated on opening, no warning
    conn = sqlite3.connect(manifest)
    assert conn.execute("SELECT count(*) FROM datasets").fetchone() == (0,)
    conn.close()
    index = CliRunner().invoke(cli, ["index", str(table_lake)])
    assert index.exit_code == 0 and "8 unchanged" in index.stdout


def test_unknown_migrations_are_the_ones_this_code_lacks(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.sqlite"
    conn = catalog_db.connect(manifest)
    catalog_db.migrate(conn)
    assert catalog_db.unknown_migrations(conn) == [] and catalog_db.newer_schema(manifest) == []
    conn.close()
    record_migration(manifest, NEWER)
    assert catalog_db.newer_schema(manifest) == [NEWER]
    assert catalog_db.newer_schema(tmp_path / "absent.sqlite") == []
