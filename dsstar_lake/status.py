"""`dslake status`: what the catalog holds, and how it compares with the lake right now."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dslake_index import catalog as catalog_db
from dslake_index import census
from dslake_index.front_door import CHROMA_DIR, Catalog


@dataclass
class LakeStatus:
    """What the catalog holds and how it compares with the lake right now."""

    lake: str
    catalog: str
    schema: str | None
    files: int
    entries: int
    families: int
    bytes: int
    formats: dict[str, int]
    failed: list[tuple[str, str]]
    stale: list[str]
    new: list[str]
    removed: list[str]
    catalog_bytes: int
    last_index_at: float | None
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the status as JSON-ready data."""
        return asdict(self)

    def __repr__(self) -> str:
        from dsstar_lake.display import status_repr

        return status_repr(self)

    def _repr_html_(self) -> str:
        from dsstar_lake.display import status_html

        return status_html(self)


def _dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def lake_status(access: Catalog, check_vectors: bool = False) -> LakeStatus:
    """Summarise the catalog, and compare it with the lake (stale, new, removed files)."""
    from dslake_index.scan import scan_lake
    from dslake_index.sync import check_consistency

    conn = access.connection()
    files = census.file_states(conn)
    stale: list[str] = []
    new: list[str] = []
    present: set[str] = set()
    listed = None
    if access.root is not None and access.root.is_dir():
        listed = scan_lake(access.root, access.catalog_dir, access.settings["index.follow_symlinks"]).files
    elif access.remote is not None:  # a lake in object storage: its listing, as an index would compare it
        from dslake_index.objectstore import list_objects

        listed = list_objects(access.remote, access.catalog_dir)[1].files
    for f in listed or ():
        present.add(f.path)
        row = files.get(f.path)
        if row is None:
            new.append(f.path)
        elif row["size"] != f.size or row["mtime_ns"] != f.mtime_ns or row["status"] == "stale":
            stale.append(f.path)
    removed = sorted(set(files) - present) if access.root is not None or listed is not None else []
    formats: dict[str, int] = {}
    for row in files.values():
        key = row["format"] or "unknown"
        formats[key] = formats.get(key, 0) + 1
    store = None
    problems: list[str] = []
    if access.chroma_url() is None and not (access.catalog_dir / CHROMA_DIR).exists() and files:
        problems.append("the vector store folder is missing; a plain `dslake index LAKE` re-embeds every entry "
                        "from the manifest's cards (nothing is profiled again)")
    elif check_vectors:
        store = access.vector_store()
    else:
        from dslake_index.vector_check import count_problems

        problems.extend(count_problems(conn, access.vector_stamp()))
    problems.extend(check_consistency(conn, store))
    entries, families = census.entry_counts(conn)
    last = catalog_db.get_meta(conn, "last_index_at")
    return LakeStatus(
        lake=str(access.root) if access.root else (access.remote or ""),
        catalog=str(access.catalog_dir),
        schema=catalog_db.schema_version(conn),
        files=len(files),
        entries=entries,
        families=families,
        bytes=sum(row["size"] for row in files.values() if row["size"] > 0),
        formats=dict(sorted(formats.items(), key=lambda kv: -kv[1])),
        failed=[(p, r["error"] or "") for p, r in sorted(files.items()) if r["status"] == "failed"],
        stale=sorted(stale),
        new=sorted(new),
        removed=removed,
        catalog_bytes=_dir_size(access.catalog_dir),
        last_index_at=float(last) if last else None,
        problems=problems,
    )
