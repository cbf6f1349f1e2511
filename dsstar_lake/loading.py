"""`lake.load(...)`: run an entry's load lines against the real files, so what the agent is told is what a user gets.

A description tells the coder how to read each table (`load: df = pd.read_csv('data/x.csv', sep=';')`); those lines
come from the profile's read hints, kept in the catalog with the `{path}` placeholder. Loading runs the same hints
through index/hint_check.run_hint (the executor the hint checker uses), with the file's real path bound as a
variable, never pasted into the code: a file or sheet name cannot turn into code.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from dslake_index import lookup

from dsstar_lake.catalog_access import CatalogAccess
from dsstar_lake.errors import LoadError, UsageError


def load(access: CatalogAccess, target: Any, limit: int | None = None) -> Any:
    """Load a Hit, an entry path (a family's pattern) or a lake file: a DataFrame, or a dict of them.

    A file of one table gives its DataFrame; a file of several (a workbook's sheets) a dict by table name; a file
    without tables what its own load line returns (a dict from JSON, arrays from npz). A family gives a dict from
    member path to what that member gives, in path order, the first `limit` members only when limit is given.
    """
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be 1 or more, not {limit}")
    if access.root is None:
        raise UsageError("loading needs the lake folder", hint="give --lake LAKE (and --catalog DIR if elsewhere)",
                         api_hint="open the catalog with its lake: Lake.open(lake, catalog=DIR)")
    conn = access.connection()
    entry_id = getattr(target, "entry_id", None)
    if entry_id is not None:
        entry = lookup.entry_record(conn, entry_id)
        if entry is None:
            raise UsageError(f"the hit {getattr(target, 'path', entry_id)!r} is no longer in the catalog",
                             api_hint="search again: the catalog changed since this hit was found")
        return _load_entry(conn, access.root, entry, limit)
    if not isinstance(target, (str, os.PathLike)):
        raise UsageError(f"cannot load a {type(target).__name__}: give a search hit, an entry path or a lake file")
    rel = access.relative(os.fspath(target))
    row = lookup.file_record(conn, rel)
    if row is not None:
        return _load_file(conn, access.root, row)
    entry = lookup.entry_named(conn, rel)
    if entry is None:
        raise UsageError(f"not in the catalog: {rel}", hint="check the path (relative to the lake) or run dslake index",
                         api_hint="check the path (relative to the lake) or run lake.index()")
    return _load_entry(conn, access.root, entry, limit)


def _load_entry(conn: sqlite3.Connection, root: Path, entry: sqlite3.Row, limit: int | None) -> Any:
    members = lookup.member_paths(conn, entry["id"])
    if not members:
        raise LoadError(f"the entry {entry['path']} has no files left in the catalog",
                        api_hint="run lake.index() to bring the catalog up to date")
    rows = [lookup.file_record(conn, path) for path in members[:limit]]
    if entry["kind"] != "family":
        return _load_file(conn, root, rows[0])
    # Each member by its own load lines: the family's shared reader is a summary of them, the members' own are exact.
    return {row["path"]: _load_file(conn, root, row) for row in rows if row is not None}


def _load_file(conn: sqlite3.Connection, root: Path, row: sqlite3.Row) -> Any:
    from dslake_index.hint_check import run_hint
    from dslake_index.profilers.base import Profile

    rel = row["path"]
    if row["status"] == "failed":
        raise LoadError(f"{rel} could not be described ({row['error']}), so it has no load line")
    stored = lookup.stored_profile(conn, row["hash"]) if row["hash"] else None
    if stored is None:
        raise LoadError(f"{rel} is not described yet", hint="run `dslake index LAKE`",
                        api_hint="run lake.index() first")
    profile = Profile.from_dict(json.loads(stored))
    path = _inside(root, rel)
    hints = [(t.name or f"table {i + 1}", t.read_hint) for i, t in enumerate(profile.tables) if t.read_hint]
    if not hints and profile.read_hint:
        hints = [("file", profile.read_hint)]
    if not hints:
        raise LoadError(f"{rel} ({profile.format}) has no load line: it is not a table dslake knows how to read",
                        api_hint=f"read it yourself from {path}")
    loaded: dict[str, Any] = {}
    for name, hint in hints:
        key = name if name not in loaded else f"{name} ({len(loaded) + 1})"
        try:
            loaded[key] = run_hint(hint, path)
        except Exception as exc:  # the hint is the catalog's: its failure on this file is a finding to report
            raise LoadError(f"the load line of {rel} ({name}) failed: {type(exc).__name__}: {exc}",
                            api_hint="the file may have changed since it was indexed: run lake.index()") from exc
    return next(iter(loaded.values())) if len(loaded) == 1 else loaded


def _inside(root: Path, rel: str) -> Path:
    """Return the file's path in the lake, refusing one that a link or '..' takes outside it."""
    path = root / rel
    real, base = os.path.realpath(path), os.path.realpath(root)
    if os.path.commonpath([real, base]) != base:
        raise LoadError(f"{rel} leads outside the lake ({real}); dslake does not read it")
    if not os.path.isfile(real):
        raise LoadError(f"{rel} is no longer in the lake", api_hint="run lake.index() to bring the catalog up to date")
    return path
