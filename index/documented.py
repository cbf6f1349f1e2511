"""A format document and the data files it documents, ranked together.

A header-less table whose columns a document beside it names (`omni2_2024.dat` and `omni2.text`, index/layouts.py)
has a card of shape words only, and ends "columns named by omni2.text"; the measures' words stay in the document's
card. A question in those words (sunspot number, F10.7 flux) ranks the document first and its data 16th, though a
script needs the data and reads the document only for the columns' meanings. So when a document ranks, the data
entries whose cards name it follow it directly, at its score: the next slots, not a share of its score, because a
share would still leave them below every entry scored between the two, and a slot of their own (rather than the
document folded into the data's block as a sidecar is) keeps the document's own description, which one document
may give for several data files. The other way needs nothing: a data entry that ranks already carries the
columns' names from its document (layouts.with_layout).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from dslake_index.layouts import NAMED_BY
from dslake_index.sidecars import SIDECAR_FORMATS

MAX_DOCUMENTED = 3  # data entries pulled up after one document; a document of a whole archive's tables keeps its slot

Ranking = list[tuple[str, float]]


def documented_data(
    conn: sqlite3.Connection, candidates: Iterable[Mapping[str, Any]], columns: str
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """Return ({document entry id: ids of the entries whose cards name it, by path}, {id: row of those entries}) for
    the document-format candidates; the rows are read with the given column list (the caller's own SELECT)."""
    docs = {(row["folder"], row["path"].rpartition("/")[2]): row["id"] for row in candidates
            if row["kind"] == "file" and (row["format"] or "") in SIDECAR_FORMATS}
    if not docs:
        return {}, {}
    folders = sorted({folder for folder, _ in docs})
    marks = ",".join("?" * len(folders))
    found = conn.execute(
        f"SELECT {columns}, folder FROM entries WHERE folder IN ({marks}) AND instr(card, ?) > 0 ORDER BY path",
        [*folders, "\n" + NAMED_BY],
    ).fetchall()
    links: dict[str, list[str]] = {}
    rows: dict[str, Any] = {}
    for row in found:
        for line in (row["card"] or "").splitlines():
            doc_id = docs.get((row["folder"], line[len(NAMED_BY):].strip())) if line.startswith(NAMED_BY) else None
            if doc_id is not None and row["id"] != doc_id:
                links.setdefault(doc_id, []).append(row["id"])
                rows[row["id"]] = row
    return links, rows


def with_documented(fused: Ranking, links: Mapping[str, list[str]]) -> Ranking:
    """Return the ranking with each document's data entries right after it at its score (the best ranked of them
    first, up to MAX_DOCUMENTED); a data entry ranked above its document stays where it is."""
    if not links:
        return fused
    at = {entry_id: rank for rank, (entry_id, _) in enumerate(fused)}
    out: Ranking = []
    placed: set[str] = set()
    for entry_id, score in fused:
        if entry_id in placed:
            continue
        out.append((entry_id, score))
        placed.add(entry_id)
        data = sorted((d for d in links.get(entry_id, ()) if d not in placed), key=lambda d: at.get(d, len(at)))
        for data_id in data[:MAX_DOCUMENTED]:
            out.append((data_id, score))
            placed.add(data_id)
    return out
