"""Incremental indexing: exact counts, cached profiles, no stale vectors or full-text rows."""

from __future__ import annotations

import os
import shutil
import zipfile

import pytest
from dslake_index import catalog

from dsstar_lake.base.errors import CatalogLocked
from dsstar_lake.lake import Lake


def _consistent(lake: Lake) -> None:
    conn = lake.connection()
    entry_ids = {row[0] for row in conn.execute("SELECT id FROM entries")}
    assert lake.vector_store().ids() == entry_ids
    assert {row[0] for row in conn.execute("SELECT entry_id FROM entries_fts")} == entry_ids
    assert lake.status(check_vectors=True).problems == []


def test_first_index_then_nothing_changed(table_lake):
    lake = Lake.open(table_lake)
    first = lake.index()
    assert (first.added, first.changed, first.removed, first.unchanged) == (8, 0, 0, 0)
    assert first.families == 1 and first.entries == 4
    assert first.profiled == 8 - 0 and first.failed == 0
    # where the time went: each phase counts what it did (index/timings.py)
    phases = first.phases
    assert phases["scan"]["n"] == 8 and phases["workers: hash"]["n"] == 8
    assert sum(v["n"] for k, v in phases.items() if k.startswith("workers: profile ")) == 8
    assert phases["vectors: embed cards"]["n"] == 4 and phases["vectors: upsert"]["n"] == 4
    assert all(v["wall"] >= 0 and v["cpu"] >= 0 for v in phases.values())
    _consistent(lake)
    again = lake.index()
    assert (again.added, again.changed, again.removed, again.unchanged, again.profiled, again.embedded) == (
        0, 0, 0, 8, 0, 0)
    assert "vectors: embed cards" not in again.phases and "workers: hash" not in again.phases


def test_change_rename_copy_delete(table_lake):
    lake = Lake.open(table_lake)
    lake.index()
    with open(table_lake / "sales.csv", "a") as fh:
        fh.write("east,widget,3,2.5\n")
    (table_lake / "notes.md").rename(table_lake / "field_notes.md")
    shutil.copy(table_lake / "ozone_by_county.csv", table_lake / "ozone_copy.csv")
    (table_lake / "sensors" / "daily" / "readings_2024-01-05.csv").unlink()
    summary = lake.index()
    assert (summary.added, summary.changed, summary.removed) == (2, 1, 2)
    assert summary.profiled == 1  # only sales.csv has new content; the rename and the copy reuse cached profiles
    assert summary.reused == 2
    family = lake.show("sensors/daily/readings_2024-01-01.csv")
    assert family["entry"]["member_count"] == 4
    assert "readings_2024-01-05.csv" not in family["entry"]["description"]
    _consistent(lake)
    hits = lake.search("ozone unhealthy days by county", k=10)
    assert sum(1 for h in hits if h.path in ("ozone_by_county.csv", "ozone_copy.csv")) == 1  # copies de-duplicated


def test_family_dissolves_when_members_go(table_lake):
    lake = Lake.open(table_lake)
    lake.index()
    for day in (3, 4, 5):
        (table_lake / "sensors" / "daily" / f"readings_2024-01-{day:02d}.csv").unlink()
    summary = lake.index()
    assert summary.families == 0
    assert lake.show("sensors/daily/readings_2024-01-01.csv")["entry"]["kind"] == "file"
    _consistent(lake)


def test_second_writer_is_refused_with_a_clear_error(table_lake):
    lake = Lake.open(table_lake)
    lake.index()
    with catalog.writer_lock(lake.catalog_dir):
        with pytest.raises(CatalogLocked, match="another dslake index is running"):
            Lake.open(table_lake).index()


def test_bad_files_are_recorded_not_fatal(table_lake):
    (table_lake / "empty.csv").write_bytes(b"")
    (table_lake / "binary.csv").write_bytes(os.urandom(4096))
    (table_lake / "latin1.csv").write_bytes("name,city\nJos\xe9,S\xe3o Paulo\n".encode("latin-1"))
    with zipfile.ZipFile(table_lake / "broken.xlsx", "w") as archive:
        archive.writestr("xl/workbook.xml", "<not really a workbook")
    lake = Lake.open(table_lake)
    summary = lake.index()
    assert summary.added == 12
    status = lake.status()
    failed = dict(status.failed)
    assert set(failed) <= {"broken.xlsx", "binary.csv", "empty.csv"}
    for name in ("broken.xlsx", "binary.csv", "empty.csv"):
        # Each bad file is either a recorded failure with its reason, or described with a caveat saying why.
        shown = lake.show(name)
        assert failed.get(name) or "entry" in shown
    assert failed.get("broken.xlsx")
    assert "latin" in lake.show("latin1.csv")["entry"]["description"].lower()
    _consistent(lake)


def test_catalog_elsewhere_leaves_the_lake_untouched(table_lake, tmp_path):
    before = sorted((p.relative_to(table_lake), p.stat().st_mtime_ns) for p in table_lake.rglob("*"))
    lake = Lake.open(table_lake, catalog=tmp_path / "cat")
    lake.index()
    after = sorted((p.relative_to(table_lake), p.stat().st_mtime_ns) for p in table_lake.rglob("*"))
    assert before == after
    assert Lake.open(None, catalog=tmp_path / "cat").root == table_lake.resolve()


def test_searches_from_several_threads_share_one_lake(table_lake):
    from concurrent.futures import ThreadPoolExecutor

    lake = Lake.open(table_lake)
    lake.index()
    questions = ["units sold per region", "ozone unhealthy days", "sensor temperature", "field notes"] * 5
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda q: lake.search(q, k=1)[0].path, questions))
    assert results[:4] == ["sales.csv", "ozone_by_county.csv", "sensors/daily/readings_*.csv", "notes.md"]
    assert results == results[:4] * 5


def test_a_script_without_a_main_guard_indexes_and_is_not_run_again(tmp_path):
    import subprocess
    import sys

    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "a.csv").write_text("a,b\n1,2\n")
    script = tmp_path / "unguarded.py"
    # Each profiler that imported the script again would add a line to ran.txt (index/worker_context.py).
    script.write_text(f"open({str(tmp_path / 'ran.txt')!r}, 'a').write('ran\\n')\n"
                      f"from dsstar_lake.lake import Lake\nprint(Lake.open({str(lake)!r}).index().added)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1" and (tmp_path / "ran.txt").read_text() == "ran\n"


def test_a_new_render_version_rebuilds_every_entry(table_lake):
    """Entries written by older code (another render version) are all rewritten, single files as well as families."""
    lake = Lake.open(table_lake)
    first = lake.index()
    conn = lake.connection()
    fresh = {row["id"]: (row["description"], row["card"]) for row in conn.execute("SELECT * FROM entries")}
    with catalog.transaction(conn):
        # What an older release left: other words in every description and card, under another render version.
        conn.execute("UPDATE entries SET description = 'old words', card = 'old words', card_hash = 'old'")
        conn.execute("UPDATE entries_fts SET body = 'old words'")
        catalog.set_meta(conn, "render_version", "an-older-release")
    again = lake.index()
    assert (again.added, again.changed, again.profiled) == (0, 0, 0)  # nothing profiled again: only rewritten
    rebuilt = {row["id"]: (row["description"], row["card"]) for row in conn.execute("SELECT * FROM entries")}
    assert rebuilt == fresh and len(rebuilt) == first.entries
    assert again.embedded == 0  # the rewritten cards are the ones the vectors were made from: none embedded again
    assert conn.execute("SELECT count(*) FROM entries_fts WHERE body = 'old words'").fetchone()[0] == 0
    _consistent(lake)
