"""A dataset is read from the list of its catalog members, each checked, never by handing its folder to a reader.

Given a folder or a glob, pyarrow and DuckDB list it themselves and follow every link inside it: a link planted in
a partition folder (`sales/year=2099 -> /home/me/exports`, `part-1.parquet -> /srv/other.parquet`) brings host rows
back as the lake's. So dslake's own process (lake.load, the serve preview, the hint checker) gives the reader the
files the catalog knows as the dataset's members instead, each checked by real path (links resolved) to lie inside
the lake and outside the catalog. The load line the coder sees still names the folder: scripts read it inside the
sandbox, where only the lake is there to follow.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from dslake_index.errors import DslakeError
from dslake_index.table_io import inside_root

# The readers whose {path} is a dataset's folder (or a glob of it) in the lines index/dataset_entries.py writes.
FOLDER_READERS = frozenset({"pd.read_parquet", "ds.dataset", "duckdb.read_parquet", "duckdb.read_csv"})


class MemberRefused(DslakeError):
    """A member the catalog lists that dslake will not read; the message says which and why."""


def lake_path(lake: Path, rel: str, catalog: Path | None = None) -> Path:
    """Return a lake-relative path's path in the lake, refusing one whose real path (links resolved) lies outside
    the lake or inside the catalog: a catalog can come from someone else and list any path."""
    parts = PurePosixPath(rel).parts
    if not rel or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise MemberRefused(f"{rel} is not a path inside the lake")
    path = lake / rel
    if not inside_root(path, lake):
        raise MemberRefused(f"{rel} leads outside the lake ({os.path.realpath(path)}); dslake does not read it")
    if catalog is not None and inside_root(path, catalog):
        raise MemberRefused(f"{rel} leads into the catalog ({os.path.realpath(path)}); dslake does not read it")
    return path


def member_files(lake: Path, root: str, members: list[str], catalog: Path | None = None) -> list[Path]:
    """Return the files a whole read of the dataset rooted at root takes: its members under root, each checked
    (lake_path), in path order, without the names a folder read skips (those starting with '_' or '.')."""
    files = []
    for rel in sorted(members):
        if not rel.startswith(root + "/"):
            raise MemberRefused(f"{rel} is listed as a member of {root} but lies outside it")
        if any(part.startswith(("_", ".")) for part in rel[len(root) + 1:].split("/")):
            continue
        path = lake_path(lake, rel, catalog)
        if not path.is_file():
            raise MemberRefused(f"{rel} is no longer in the lake")
        files.append(path)
    if not files:
        raise MemberRefused(f"{root} has no member files left to read")
    return files


def read_members(reader: str, kw: dict[str, Any], folder: Path, files: list[Path]) -> Any:
    """Read a dataset the way reader would read its folder, from its member files only.

    folder: the dataset's folder in the lake (partition columns come from the folders below it, as a folder read
    gives them); files: its checked members. kw: the line's keyword arguments.
    """
    kw = {k: v for k, v in kw.items() if k != "ignore_prefixes"}  # the members are the dataset's own files
    if reader == "pd.read_parquet":
        import pandas as pd
        from pyarrow import fs

        # Relative names on a file system rooted at the folder: partition keys are parsed below it only.
        return pd.read_parquet(_relative(files, folder), filesystem=fs.SubTreeFileSystem(str(folder),
                                                                                         fs.LocalFileSystem()), **kw)
    if reader == "ds.dataset":
        import pyarrow.dataset as ds

        return ds.dataset([str(f) for f in files], format=kw.get("format", "parquet"),
                          partitioning=ds.HivePartitioning.discover() if kw.get("partitioning") == "hive" else None,
                          partition_base_dir=str(folder))
    if reader in ("duckdb.read_parquet", "duckdb.read_csv"):
        import duckdb

        return getattr(duckdb, reader[7:])([str(f) for f in files], **kw)
    raise MemberRefused(f"the reader {reader!r} does not read a dataset's folder")


def _relative(files: list[Path], folder: Path) -> list[str]:
    return [f.relative_to(folder).as_posix() for f in files]
