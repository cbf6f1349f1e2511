"""CatalogStatus: what a catalog holds, and how it compares with the lake right now (Catalog.status fills it)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class CatalogStatus:
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


def dir_size(path: Path) -> int:
    """Return the bytes of every file under a folder (files that vanish meanwhile count as nothing)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
