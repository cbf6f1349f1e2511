"""The synthetic lake generator is deterministic, and parallel and serial indexing give the same catalog."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from dsstar_lake.lake import Lake

REPO = Path(__file__).resolve().parent.parent


def load_make_lake():
    """Import benchmarks/make_lake.py (a script, not a package) and return its make_lake function."""
    spec = importlib.util.spec_from_file_location("make_lake", REPO / "benchmarks" / "make_lake.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_lake


def fingerprint(root: Path) -> dict[str, str]:
    """Return {relative path: sha1 of the bytes} for every file under root."""
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_lake(tmp_path_factory) -> Path:
    """A generated lake of 40 files (one family, one-off tables, workbooks, json, notes, parquet, a big CSV)."""
    root = tmp_path_factory.mktemp("scale") / "lake"
    count, _ = load_make_lake()(40, root, seed=5, big_mb=1)
    assert count == 40
    return root


def test_same_seed_gives_identical_bytes(small_lake: Path, tmp_path: Path) -> None:
    make_lake = load_make_lake()
    again = tmp_path / "lake"
    count, questions = make_lake(40, again, seed=5, big_mb=1)
    assert count == 40 and len(fingerprint(again)) == 40
    assert fingerprint(again) == fingerprint(small_lake)
    assert questions.read_bytes() == (small_lake.parent / "lake.questions.jsonl").read_bytes()
    other = tmp_path / "other"
    make_lake(40, other, seed=6, big_mb=1)
    assert fingerprint(other) != fingerprint(small_lake)
    suffixes = {Path(p).suffix for p in fingerprint(small_lake)}
    assert suffixes == {".csv", ".xlsx", ".json", ".md", ".parquet"}
    # Every question names files that exist in the lake.
    rows = [line for line in questions.read_text().splitlines() if line]
    assert rows and all((again / f).is_file() for row in rows for f in json.loads(row)["files"])


def test_generator_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "mine.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="not empty"):
        load_make_lake()(10, tmp_path / "lake", seed=1, big_mb=1)
    assert fingerprint(tmp_path / "lake") == {"mine.txt": hashlib.sha1(b"keep me").hexdigest()}


TABLES = {
    "files": "path, folder, size, mtime_ns, hash, status, error, error_kind, format, entry_id",
    "profiles": "hash, profiler_version, format, signature, profile",
    "entries": "id, kind, folder, path, format, content_hash, member_count, description, card, card_hash",
    "entries_fts": "entry_id, body",
    "vectors": "entry_id, card_hash, state",
}


def catalog_rows(catalog: Path) -> dict[str, list[tuple]]:
    """Return every table's rows that do not depend on when the index ran, sorted."""
    conn = sqlite3.connect(catalog / "manifest.sqlite")
    try:
        return {table: sorted(conn.execute(f"SELECT {cols} FROM {table}").fetchall(), key=repr)
                for table, cols in TABLES.items()}
    finally:
        conn.close()


def test_parallel_and_serial_indexing_give_identical_catalogs(small_lake: Path, tmp_path: Path) -> None:
    summaries = {}
    for jobs in (1, 2):
        lake = Lake.open(small_lake, catalog=tmp_path / f"jobs{jobs}", overrides={"index.jobs": jobs})
        summaries[jobs] = lake.index()
        lake.close()
    serial, parallel = catalog_rows(tmp_path / "jobs1"), catalog_rows(tmp_path / "jobs2")
    assert summaries[1].added == summaries[2].added == 40
    assert summaries[1].failed == summaries[2].failed == 0
    assert summaries[1].entries == summaries[2].entries == len(serial["entries"])
    assert len(serial["files"]) == 40 and any(row[1] == "family" for row in serial["entries"])
    for table in TABLES:
        assert parallel[table] == serial[table], f"{table} differs between --jobs 1 and --jobs 2"
