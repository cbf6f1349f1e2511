"""Sidecars: a header, format document or readme that sits beside a data file with the same stem (`X.HDR` beside
`X.sp3`). Retrieved apart, the pair took two slots and the sidecar's description repeated the data's; shown
inside its data entry's block, once, it ranks with the data and leaves the slot to another file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dslake_index.families import name_pattern

SIDECAR_FORMATS = frozenset({"xml", "text", "txt", "md", "markdown", "pdf", "html", "rtf", "docx"})
SIDECAR_LINES = 14  # lines of the sidecar's own description shown in the data entry's block
_SKIPPED = ("File: ", "Description of the first member", "Format: ")


def _stem_key(path: str) -> tuple[str, str]:
    folder, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return "/".join(name_pattern(part) for part in folder.split("/")) if folder else "", stem


def sidecar_pairs(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Return {sidecar entry id: data entry id} for the rows that are a sidecar and its data (same folder pattern,
    same stem, another extension; the sidecar a document format, the data not)."""
    by_stem: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        by_stem.setdefault(_stem_key(row["path"]), []).append(row)
    pairs: dict[str, str] = {}
    for group in by_stem.values():
        docs = [r for r in group if (r["format"] or "") in SIDECAR_FORMATS and r["kind"] == group[0]["kind"]]
        data = [r for r in group if (r["format"] or "") not in SIDECAR_FORMATS]
        if len(data) == 1 and docs:
            for doc in docs:
                if doc["kind"] == data[0]["kind"]:
                    pairs[doc["id"]] = data[0]["id"]
    return pairs


def with_sidecar(description: str, path: str, sidecar_description: str) -> str:
    """Append a sidecar's own facts (title, load, its first fields) to its data entry's description."""
    lines = [line for line in sidecar_description.splitlines() if line.strip()]
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("Description of the first member")), 0)
    own = [line for line in lines[start:] if not line.startswith(_SKIPPED)]
    shown = own[:SIDECAR_LINES]
    if len(own) > SIDECAR_LINES:
        shown.append(f"  [... {len(own) - SIDECAR_LINES} more lines of the sidecar's description; read it to see them]")
    heading = (f"Sidecar beside each data file, same stem: data/{path} (a header or format document, not data; "
               "shown here once):")
    return "\n".join([description.rstrip("\n"), heading, *shown])
