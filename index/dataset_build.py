"""The indexer's side of datasets: find the dataset or table a rebuilt unit of folders holds, build its entry, keep
its load record. Called from indexer._rebuild_folder; a unit without a dataset costs one look at its folder names.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dslake_index.dataset_entries import DatasetRecord, dataset_entry
from dslake_index.datasets import (
    DELTA_LOG,
    ICEBERG_METADATA,
    dataset_root,
    find_dataset,
    partition_root,
    parts_dataset,
    table_roots,
)
from dslake_index.entries import EntryRow
from dslake_index.profilers.base import Profile
from dslake_index.tables import read_table

Built = tuple[EntryRow, DatasetRecord]


def _may_hold_dataset(key: str, folders: Sequence[str]) -> bool:
    """Tell, from folder names alone, whether a unit keyed by key may be a dataset's or a table's root."""
    if not key:
        return False
    return any(f"{key}/{DELTA_LOG}" == f or f"{key}/{ICEBERG_METADATA}" == f for f in folders) \
        or any(partition_root(f) == key for f in folders)


def build_datasets(conn: sqlite3.Connection, key: str, folders: Sequence[str], members: list, hashes: dict[str, str],
                   load: Callable[[str], Profile], options: Any) -> tuple[list[Built], list]:
    """Return the dataset entry of a unit rooted at a dataset or table (with its record) and the members left for
    ordinary grouping; ([], members) for an ordinary unit."""
    if not _may_hold_dataset(key, folders):
        return [], members
    tables = table_roots(conn)
    if not (key in tables or (dataset_root(key, tables) is None and any(partition_root(f) == key for f in folders))):
        return [], members  # a table's subfolder, or a partition folder whose table lies higher up
    unit, rest = find_dataset(key, tables, members)
    if unit is None or not unit.members:
        return [], members
    row, record = dataset_entry(unit, lambda path: load(hashes[path]), _lake_folder(conn, options),
                                options.script_memory_mb, options.read_table or read_table)
    return [(row, record)], rest


def _lake_folder(conn: sqlite3.Connection, options: Any) -> Path | Any | None:
    """Return where tables are read from: the index run's lake folder, else the one the catalog was last indexed
    from (entries rebuilt after an analysis), or for a lake in S3 its objectstore.ObjectTables; None when neither
    is there (another store, or a folder gone)."""
    if options.lake_root is not None:
        return options.lake_root
    from dslake_index.catalog import get_meta

    value = get_meta(conn, "lake_root")
    if value and "://" in value:
        from dslake_index.objectstore import is_remote, object_tables

        return object_tables(value) if is_remote(value) else None
    return Path(value) if value and Path(value).is_dir() else None


def parts_entry(group: Any, rows: Sequence[sqlite3.Row], load: Callable[[str], Profile],
                options: Any) -> Built | None:
    """Return the dataset entry of a family of part files that fills its folder, or None."""
    if not group.is_family or not group.members[0].folder or not group.members[0].name[:1].isalpha():
        return None
    folder = group.members[0].folder
    paths = [r["path"] for r in rows if r["path"].rpartition("/")[0] == folder]
    unit = parts_dataset(group, paths)
    if unit is None:
        return None
    by_path = {r["path"]: r["hash"] for r in rows}
    return dataset_entry(unit, lambda path: load(by_path[path]), options.lake_root, options.script_memory_mb)


def stored_record(conn: sqlite3.Connection, entry_id: str) -> DatasetRecord | None:
    """Return a dataset entry's load record, or None (not a dataset, or not indexed yet)."""
    row = conn.execute("SELECT record FROM datasets WHERE entry_id = ?", (entry_id,)).fetchone()
    return DatasetRecord.from_json(row[0]) if row is not None else None


def write_records(conn: sqlite3.Connection, records: list[DatasetRecord], stale: list[str]) -> None:
    """Keep the load records of rebuilt dataset entries; drop those of entries that are gone."""
    if stale:
        conn.executemany("DELETE FROM datasets WHERE entry_id = ?", [(i,) for i in stale])
    if records:
        conn.executemany("INSERT OR REPLACE INTO datasets (entry_id, root, record) VALUES (?, ?, ?)",
                         [(r.entry_id, r.root, r.to_json()) for r in records])


def streamed(row: EntryRow, member: Any, budget_mb: int) -> EntryRow:
    """Give a single file too big for a script's memory its streaming line in place of its whole-load line."""
    from dataclasses import replace

    from dslake_index.bigfiles import streaming_lines, too_big
    from dslake_index.cards import HINT_PREFIX

    if not too_big(member.format, member.size, budget_mb):
        return row
    block = streaming_lines(member.format, member.size, budget_mb, HINT_PREFIX + member.path)
    lines: list[str] = []
    for line in row.description.split("\n"):
        if line.lstrip().startswith(("load: df = ", "Load: ")):  # a whole-load line: the first becomes the block
            lines += block
            block = []
        else:
            lines.append(line)
    # a line of its own: appended to the card's last line, these words read as that line's values in a hit
    return replace(row, description="\n".join(lines), card=row.card + "\nload: too big for memory, duckdb")
