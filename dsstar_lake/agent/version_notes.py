"""What changed in the libraries the sandbox actually has: notes for the roles that write scripts, by version.

A model writes the API it learned, often an older one (pandas 2's nanosecond datetimes, DuckDB 1's `fetchone()` on a
relation). Each note is kept for a library and a range of versions, and a prompt gets it only when the sandbox's
interpreter has a version in that range (sandbox/packages.py reads the installed versions, not a hard-coded list).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dsstar_lake.agent.prompts import template


@dataclass(frozen=True)
class VersionNote:
    """A note (prompts/<note>.txt) for `library` (its import name) at versions from `since` up to, not including,
    `before` (None: no upper end)."""

    library: str
    since: tuple[int, ...]
    before: tuple[int, ...] | None
    note: str

    def applies(self, version: str) -> bool:
        """Tell whether an installed version is in the note's range; an unknown version gets no note."""
        found = release(version)
        return found is not None and found >= self.since and (self.before is None or found < self.before)


NOTES = (
    VersionNote("pandas", (3,), None, "version_pandas3"),
    VersionNote("duckdb", (2,), None, "version_duckdb2"),
)


def release(version: str) -> tuple[int, ...] | None:
    """Return a version's leading numbers ('3.1.2' -> (3, 1, 2), '2.0.0rc1' -> (2, 0, 0)); None when it has none."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in found.group().split(".")) if found else None


def notes_for(versions: Mapping[str, str]) -> list[str]:
    """Return the notes for the installed versions (import name -> version), in the table's order."""
    return [template(n.note).strip() for n in NOTES if n.library in versions and n.applies(versions[n.library])]


def with_notes(packages_line: str, versions: Mapping[str, str]) -> str:
    """Return the prompts' packages line followed by the notes for the versions installed, one '- ' line each."""
    return "".join([packages_line, *(f"\n- {note}" for note in notes_for(versions))])
