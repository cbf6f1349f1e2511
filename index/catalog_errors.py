"""What SQLite and the OS say about a catalog (damaged, busy, full, read-only), as one DslakeError each."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dslake_index.errors import CatalogError, CatalogTooNew, DiskFull, is_disk_full

# A Python caller's wording of the advice cli.py gives as `dslake index LAKE --rebuild`.
REBUILD_API_HINT = "rebuild it from the lake with lake.index(rebuild=True), keeping valid cached descriptions"


def manifest_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """Turn SQLite corruption, a full disk or a read-only catalog met anywhere in a command into one CatalogError."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            if is_disk_full(exc):
                raise disk_full(self.catalog_dir) from None
            raise
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc):
                raise disk_full(self.catalog_dir) from None
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY:
                raise read_only(self.catalog_dir, "this command writes to it") from None
            if "locked" in str(exc) or "busy" in str(exc):
                raise CatalogError(f"the catalog at {self.catalog_dir} is busy ({exc})",
                                   hint="another process is writing it; try again in a moment") from None
            raise CatalogError(
                f"the catalog manifest {self.db_path} is damaged ({exc})",
                hint="run `dslake index LAKE --rebuild` to rebuild it from the lake, keeping valid cached descriptions",
                api_hint=REBUILD_API_HINT,
            ) from None

    return wrapper


def disk_full(catalog_dir: Path) -> DiskFull:
    """Return the error for a catalog write that found the disk full."""
    return DiskFull(
        f"disk full: cannot write the catalog at {catalog_dir}",
        hint="free some space, then run `dslake index LAKE` again: what was being written was rolled back, "
        "the rest of the catalog is intact, and the next index continues from there",
        api_hint="free some space, then run lake.index() again: what was being written was rolled back, "
        "the rest of the catalog is intact, and the next index continues from there",
    )


def read_only(catalog_dir: Path, why: str) -> CatalogError:
    """Return the error for a command that must write to a read-only catalog."""
    return CatalogError(f"the catalog at {catalog_dir} is read-only and {why}",
                        hint="run it on a writable copy of the catalog (--catalog COPY), or where the catalog is "
                        "writable; search, show and status work read-only",
                        api_hint="use a writable copy of the catalog (Lake.open(lake, catalog=COPY)), or run it where "
                        "the catalog is writable; search, show, load and status work read-only")


def newer_schema_words(catalog_dir: Path, unknown: list[str]) -> str:
    """Return what is said of a catalog a newer dslake wrote: where it is, and its schema against this code's."""
    from dslake_index.catalog import known_schema

    return (f"the catalog at {catalog_dir} was written by a newer dslake (schema {unknown[-1]}; this one knows up "
            f"to {known_schema()})")


def too_new(catalog_dir: Path, unknown: list[str], why: str) -> CatalogTooNew:
    """Return the error for a command that must write to a catalog a newer dslake wrote (unknown: its migrations
    this code does not know): this code never writes one, whatever its folder allows."""
    return CatalogTooNew(f"{newer_schema_words(catalog_dir, unknown)} and {why}; this dslake never writes to it",
                         hint="upgrade dslake to write to it, or index into another catalog (--catalog DIR); "
                         "search, show and status work read-only",
                         api_hint="upgrade dslake to write to it, or index into another catalog "
                         "(Lake.open(lake, catalog=DIR)); search, show, load and status work read-only")
