"""Tables are opened with the FileIO dslake picks, and read only inside their own root.

A table's metadata is data from the lake, and a lake can come from anyone. pyiceberg builds a table's FileIO from
`{**properties, **metadata.properties}`, so a metadata file with `py-io-impl` names a class that is imported and
called in dslake's process (`subprocess.Popen` with the other properties as argv runs a command), and what we pass
in cannot win. Its version hint, metadata file, manifest list, manifests and data files are paths the metadata
names, so a hint of `../../other/...` or a manifest at an absolute path reads another table on the host.

So no table is opened with `StaticTable.from_metadata`: `open_iceberg` picks the FileIO itself (pyiceberg's
PyArrowFileIO on disk, the store's own in a bucket), reads the metadata with it, and builds the StaticTable from
the parsed metadata and that FileIO. The FileIO is wrapped in `RootedIO`, which refuses every location whose real
path (links resolved) lies outside the table's folder, or, in a bucket, outside its prefix. `open_delta` does the
same for a Delta table: every log file and every live data file delta-rs would read must lie inside the root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

_BUCKET_SCHEMES = ("s3", "s3a", "s3n")
# A version hint as Iceberg writers leave it: a bare version (`3`), or a bare metadata file name or its stem
# (`v3`, `00003-<uuid>`, `v3.metadata.json`). Nothing that names a folder.
_HINT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class TableUnreadable(Exception):
    """A table's log or metadata that cannot be read; the message says why."""


def outside(what: str, location: str) -> TableUnreadable:
    """Return the refusal of a file a table names outside its own root."""
    return TableUnreadable(f"its {what} names a file outside the table's folder ({location[:200]}); dslake reads a "
                           "table only inside its own folder")


def hinted_names(text: str) -> list[str]:
    """Return the metadata file names a version-hint.text may mean, or raise TableUnreadable for a hint that is not
    a bare version or file name (`../../other/metadata/v2.metadata.json` would leave the table)."""
    text = text.strip()
    if not _HINT.match(text) or ".." in text:
        raise TableUnreadable(f"its metadata/version-hint.text names {text[:80]!r}, not a version or a file name "
                              "in metadata/")
    return [f"v{text}.metadata.json", f"{text}.metadata.json", text]


def inside_root(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Return True when path, every link resolved, lies inside root (also resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _local_path(location: str) -> str | None:
    """Return the local path a location names, as pyiceberg's PyArrowFileIO reads it (a plain path, or a file: URI's
    path as written), or None for another scheme or a file: URI with a host."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return parsed.path if not parsed.netloc else None
    return location if parsed.scheme == "" else None


def _key_under(location: str, prefix: str) -> bool:
    """Return True when a bucket URL lies under prefix (`bucket/key/of/root`) with no `.` or `..` in its key."""
    scheme, sep, rest = location.partition("://")
    if not sep or scheme.lower() not in _BUCKET_SCHEMES:
        return False
    parts = rest.split("/")
    if any(p in ("", ".", "..") for p in parts[1:-1]) or parts[-1] in ("", ".", ".."):
        return False
    return rest.startswith(prefix.rstrip("/") + "/")


class RootedIO:
    """A pyiceberg FileIO (by its interface: new_input, new_output, delete, properties) that reads through the
    FileIO dslake picked, only inside one table's root.

    root: the table's folder on disk, or its URL in a bucket (`s3://bucket/lake/table`). A location outside it
    raises TableUnreadable naming it; nothing is ever written or deleted.
    """

    def __init__(self, inner: Any, root: str) -> None:
        self.inner = inner
        self.properties = inner.properties  # pyiceberg reads these for its own readers; they are dslake's
        self.remote = urlparse(root).scheme not in ("", "file")
        self.root = root.partition("://")[2] if self.remote else os.path.realpath(_local_path(root) or root)

    def allows(self, location: str) -> bool:
        """Return True when location lies inside the root (by real path on disk, by key in a bucket)."""
        if self.remote:
            return _key_under(location, self.root)
        path = _local_path(location)
        return path is not None and os.path.isabs(path) and inside_root(path, self.root)

    def new_input(self, location: str) -> Any:
        """Return the inner FileIO's input file for a location inside the root; refuse any other."""
        if not self.allows(location):
            raise outside("metadata", location)
        return self.inner.new_input(location)

    def new_output(self, location: str) -> Any:
        """Refuse: reading a table writes nothing."""
        raise TableUnreadable(f"a write to {location[:200]} while reading a table")

    def delete(self, location: Any) -> None:
        """Refuse: reading a table deletes nothing."""
        raise TableUnreadable(f"a delete of {getattr(location, 'location', location)!s:.200} while reading a table")


def open_iceberg(metadata: str | os.PathLike[str], root: str | os.PathLike[str] | None = None,
                 store_io: Any = None) -> Any:
    """Open an Iceberg table from one metadata file with the FileIO dslake picks, confined to the table's root.

    metadata: the metadata file's path (or its URL in a bucket). root: the table's folder (or URL); by default
    the folder above the metadata file's `metadata/` folder. store_io: the store's FileIO for a bucket (from
    objectstore.ObjectTables.iceberg_io); on disk pyiceberg's PyArrowFileIO with no properties at all.
    """
    from pyiceberg.catalog.noop import NoopCatalog
    from pyiceberg.serializers import FromInputFile
    from pyiceberg.table import StaticTable

    location = os.fspath(metadata)
    if root is None:
        folder, _, _ = location.rpartition("/")
        root, _, name = folder.rpartition("/")
        if name != "metadata" or not root:
            raise TableUnreadable(f"{location[:200]} is not a file in a table's metadata/ folder")
    if store_io is None:
        from pyiceberg.io.pyarrow import PyArrowFileIO

        store_io = PyArrowFileIO({})
    io = RootedIO(store_io, os.fspath(root))
    table_metadata = FromInputFile.table_metadata(io.new_input(location))
    # Built from the parsed metadata and dslake's FileIO: no metadata property ever names the FileIO's class.
    return StaticTable(identifier=("static-table", location), metadata=table_metadata, metadata_location=location,
                       io=io, catalog=NoopCatalog("static-table"))


def open_delta(root: str | os.PathLike[str], version: int | None = None,
               storage_options: dict[str, str] | None = None) -> Any:
    """Open a Delta table whose log files and live data files all lie inside its root; raise TableUnreadable naming
    the first that does not (an absolute path, a `../` or a link in the log's add actions).

    root: the table's folder, or its URL in a bucket (storage_options given). The index checks too, though it reads
    only the log: a table that names files elsewhere is an entry that says so, with no load line.
    """
    from deltalake import DeltaTable

    location = os.fspath(root)
    remote = storage_options is not None
    if not remote:
        log = Path(location) / "_delta_log"
        for path in [log, *(log.iterdir() if log.is_dir() else [])]:
            if not inside_root(path, location):
                raise outside("_delta_log", str(path))
    table = DeltaTable(location, version=version, storage_options=storage_options)
    check_delta_files(table, location, remote)
    return table


def check_delta_files(table: Any, root: str, remote: bool) -> None:
    """Refuse a Delta table whose live data files (as the log names them, and as delta-rs resolves them) leave
    root."""
    import pyarrow as pa

    adds = pa.table(table.get_add_actions(flatten=False))
    for path in adds.column("path").to_pylist() if "path" in adds.column_names else []:
        text = unquote(str(path))
        if "://" in text or text.startswith(("/", "\\")) or ".." in PurePosixPath(text).parts:
            raise outside("_delta_log", text)
    prefix = root.partition("://")[2] if remote else root
    for uri in table.file_uris():
        if remote:
            if not _key_under(uri, prefix):
                raise outside("_delta_log", uri)
        elif not inside_root(_delta_local_path(uri), root):
            raise outside("_delta_log", uri)


def _delta_local_path(uri: str) -> str:
    """Return the local path a delta-rs file URI names. delta-rs percent-encodes its URIs (a space is `%20`, a `%` is
    `%25`) whether or not it writes a `file://` scheme, so the path is decoded before it is compared with root."""
    return unquote(_local_path(uri) or uri)
