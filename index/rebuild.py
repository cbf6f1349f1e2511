"""Rebuild a damaged catalog from the lake, keeping every cached profile that can still be read."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dslake_index import catalog as catalog_db

PROFILE_COLUMNS = "hash, profiler_version, format, signature, profile, created_at"
ANALYSIS_COLUMNS = "hash, text, source, created_at"  # paid-for LLM analyses (and summaries) are worth keeping too


def salvage_profiles(old_db: Path, table: str = "profiles", columns: str = PROFILE_COLUMNS) -> list[tuple[Any, ...]]:
    """Read whatever rows of a table (profiles by default) a damaged manifest still yields; bad rows are skipped."""
    rows: list[tuple[Any, ...]] = []
    try:
        conn = sqlite3.connect(f"file:{old_db}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return rows
    try:
        # Read by rowid ranges so one corrupt page loses only the rows on it.
        try:
            top = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            return rows
        step = 64
        for start in range(0, top + 1, step):
            try:
                rows.extend(conn.execute(
                    f"SELECT {columns} FROM {table} WHERE rowid BETWEEN ? AND ?", (start, start + step - 1)
                ).fetchall())
            except sqlite3.DatabaseError:
                for rowid in range(start, start + step):
                    try:
                        rows.extend(conn.execute(
                            f"SELECT {columns} FROM {table} WHERE rowid = ?", (rowid,)).fetchall())
                    except sqlite3.DatabaseError:
                        continue
    finally:
        conn.close()
    return rows


def rebuild_catalog(catalog_dir: Path, db_path: Path, store_factory: Callable[[], Any], salvage: bool = True) -> int:
    """Set the manifest aside, start a fresh one seeded with salvaged profiles, and clear the vectors.

    Returns how many cached profiles were kept. The caller then runs a normal index, which hashes every
    file and reuses the salvaged profiles instead of profiling again. salvage=False keeps nothing: the manifest
    of a catalog a script was caught changing may hold any profile, analysis or summary the script wrote.
    """
    kept: list[tuple[Any, ...]] = []
    analyses: list[tuple[Any, ...]] = []
    summaries: list[tuple[Any, ...]] = []
    if db_path.exists() and salvage:
        kept = salvage_profiles(db_path)
        analyses = salvage_profiles(db_path, "analyses", ANALYSIS_COLUMNS)
        summaries = salvage_profiles(db_path, "summaries", ANALYSIS_COLUMNS)  # an older manifest has none: []
    if db_path.exists():
        aside = db_path.with_name(f"{db_path.name}.damaged-{int(time.time())}")
        db_path.replace(aside)
        for suffix in ("-wal", "-shm"):
            side = db_path.with_name(db_path.name + suffix)
            if side.exists():
                side.replace(aside.with_name(aside.name + suffix))
    conn = catalog_db.connect(db_path)
    try:
        catalog_db.migrate(conn)
        with catalog_db.transaction(conn):
            conn.executemany(f"INSERT OR IGNORE INTO profiles ({PROFILE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", kept)
            conn.executemany(f"INSERT OR IGNORE INTO analyses ({ANALYSIS_COLUMNS}) VALUES (?, ?, ?, ?)", analyses)
            conn.executemany(f"INSERT OR IGNORE INTO summaries ({ANALYSIS_COLUMNS}) VALUES (?, ?, ?, ?)", summaries)
    finally:
        conn.close()
    try:
        store_factory().reset()
    except Exception:  # a damaged embedded store: remove it; the next index re-embeds from the manifest
        chroma = catalog_dir / "chroma"
        if chroma.exists():
            shutil.rmtree(chroma)
            from dslake_index.vectors import forget_cached_client

            forget_cached_client(chroma)
    return len(kept)
