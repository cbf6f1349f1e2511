"""Which files form one dataset: Hive partition folders (`sales/year=2024/month=01/…`), folders of Parquet or CSV
parts (`events/part-00000.parquet` …), and table formats (a folder with `_delta_log/`, or with Iceberg's
`metadata/*.metadata.json`). A dataset is one entry whose root folder is what a reader is given.

The rules look only at folder and file names: a lake of loose files (no `key=value` folder, no table log, no
part-numbered names) is grouped exactly as before.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field

# A Hive partition folder: `year=2024`, `region=EU west`; the key names a column.
_PARTITION = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .-]*=[^/=]*$")
# Parts written by Spark, DuckDB, pandas/pyarrow, Dask or Polars: part-00000…, part_3, data_0, chunk-12, shard7.
_PART_NAME = re.compile(r"^(part|data|chunk|shard)[-_]?\d+", re.IGNORECASE)
DATA_FORMATS = ("parquet", "csv")
DELTA_LOG = "_delta_log"
ICEBERG_METADATA = "metadata"


@dataclass
class DatasetUnit:
    """A dataset found in the lake: its root folder and its kind (hive | parts | delta | iceberg)."""

    root: str
    kind: str
    members: list = field(default_factory=list)  # index.families.Member: the files it reads
    strays: list = field(default_factory=list)  # files inside it that a whole-folder read would trip on


def partition_root(folder: str) -> str | None:
    """Return the folder above the first `key=value` folder of a path, or None (no partition folder in it)."""
    parts = folder.split("/") if folder else []
    for i, part in enumerate(parts):
        if _PARTITION.match(part):
            return "/".join(parts[:i]) or None  # a lake partitioned at its very root is not one dataset
    return None


def partition_values(path: str, root: str) -> list[tuple[str, str]]:
    """Return the (key, value) pairs of the partition folders between root and the file."""
    rest = path[len(root) + 1:] if root else path
    return [tuple(part.split("=", 1)) for part in rest.split("/")[:-1] if _PARTITION.match(part)]  # type: ignore[misc]


def is_part_name(name: str) -> bool:
    """Return True for a file name that a writer of partitioned data gives its parts (part-00000…, data_0…)."""
    return bool(_PART_NAME.match(name))


def table_roots(conn: sqlite3.Connection) -> dict[str, str]:
    """Return the lake's table folders and their format: a folder holding `_delta_log/` (delta) or Iceberg's
    `metadata/*.metadata.json` (iceberg). One pass over the files' folders, only when entries are rebuilt."""
    roots: dict[str, str] = {}
    for (folder,) in conn.execute("SELECT DISTINCT folder FROM files WHERE folder GLOB '*_delta_log'"):
        root, _, name = folder.rpartition("/")
        if name == DELTA_LOG and root:
            roots[root] = "delta"
    for (folder,) in conn.execute("SELECT DISTINCT folder FROM files WHERE folder GLOB '*metadata' "
                                  "AND path GLOB '*.metadata.json'"):
        root, _, name = folder.rpartition("/")
        if name == ICEBERG_METADATA and root and root not in roots:
            roots[root] = "iceberg"
    return roots


def dataset_root(folder: str, tables: dict[str, str]) -> str | None:
    """Return the root of the table or partitioned dataset a folder belongs to, or None for an ordinary folder."""
    for root in tables:
        if folder == root or folder.startswith(root + "/"):
            return root
    return partition_root(folder)


def folders_under(conn: sqlite3.Connection, root: str) -> set[str]:
    """Return the folders holding files at or below root."""
    return {row[0] for row in conn.execute(
        "SELECT DISTINCT folder FROM files WHERE folder = ? OR (folder >= ? AND folder < ?)",
        (root, root + "/", root + "0"))}


def find_dataset(root: str, tables: dict[str, str], members: Iterable) -> tuple[DatasetUnit | None, list]:
    """Split a unit's members into the dataset rooted at root and the rest (entries of their own).

    A table takes every file under its root (data files, log and metadata are all the table's). A Hive dataset
    takes its Parquet (or CSV) files of the most common schema; files of another schema or format are left to
    be entries of their own and named as strays, since a whole-folder read would trip on them.
    """
    members = list(members)
    inside = [m for m in members if m.path.startswith(root + "/")]
    outside = [m for m in members if not m.path.startswith(root + "/")]
    kind = tables.get(root)
    if kind is not None:
        return DatasetUnit(root, kind, inside), outside
    data = [m for m in inside if m.format in DATA_FORMATS and partition_values(m.path, root)]
    if not data:
        return None, members
    fmt = max(DATA_FORMATS, key=lambda f: sum(m.format == f for m in data))
    data = [m for m in data if m.format == fmt]
    counts: dict[str, int] = {}
    for m in data:
        counts[m.signature] = counts.get(m.signature, 0) + 1
    schema = max(counts, key=lambda s: (counts[s], s))
    chosen = [m for m in data if m.signature == schema]
    rest = [m for m in members if m not in chosen]
    # names starting with '_' or '.' (Spark's _SUCCESS, checksums) are skipped by every reader: not strays
    strays = sorted(m.path for m in inside if m not in chosen and not m.name.startswith(("_", ".")))
    return DatasetUnit(root, "hive", chosen, strays), rest


def parts_dataset(group: object, folder_paths: list[str]) -> DatasetUnit | None:
    """Return a dataset for a family of Parquet/CSV parts that fills its folder (part-00000.parquet …), else None.

    group: a families.Group; folder_paths: every file of its folder. Only part-numbered names count, so daily
    or per-station files (a family, each file a meaning of its own) stay a family.
    """
    members = group.members  # type: ignore[attr-defined]
    if not group.is_family or group.spans_folders or members[0].format not in DATA_FORMATS:  # type: ignore[attr-defined]
        return None
    if not all(is_part_name(m.name) for m in members):
        return None
    own = {m.path for m in members}
    if any(p not in own for p in folder_paths):
        return None  # a README or another table beside the parts: reading the folder would take it too
    return DatasetUnit(members[0].folder, "parts", list(members))
