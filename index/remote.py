"""Search a shared Chroma server from a machine that has only the catalog's settings, not its manifest.

The manifest (files, descriptions, full-text index) stays with the indexer. For `dslake search` to work
elsewhere, every vector carries what a hit shows: its entry's kind, path, format, member count and card.
All of these are fixed by the entry id (kind, path) or by the card (format and member count are written
in it), so they stay true as long as the vector does: sync re-embeds exactly when the card changes.
Such a search is dense-only (the full-text index is in the manifest) and a hit's description is its card.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dslake_index.gist import gist
from dslake_index.retrieve import Hit, Retriever, SearchTiming
from dslake_index.sections import RetrieveSettings


def card_metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """Return the metadata stored with an entry's vector: enough to show the hit without the manifest."""
    return {"card_hash": row["card_hash"], "kind": row["kind"], "path": row["path"], "format": row["format"],
            "member_count": row["member_count"], "card": row["card"]}


class RemoteRetriever(Retriever):
    """Dense-only search over a shared vector store, with hits built from the vectors' metadata."""

    def __init__(
        self, store_factory: Callable[[], Any], embedder_factory: Callable[[], Any], settings: RetrieveSettings
    ) -> None:
        super().__init__(None, store_factory, embedder_factory, settings)  # type: ignore[arg-type]

    def search(self, query: str, k: int | None = None, exclude: Iterable[str] = ()) -> list[Hit]:
        """Return the top-k entries for the query from the shared store, skipping excluded entry ids."""
        started = time.perf_counter()
        k = k or self.settings.k
        excluded = set(exclude)
        timing = SearchTiming()
        dense = [(i, s) for i, s in self._dense(query, k + len(excluded), timing)[0] if i not in excluded][:k]
        t0 = time.perf_counter()
        metadata = self._store.metadata([entry_id for entry_id, _ in dense]) if dense else {}
        timing.dense_ms += (time.perf_counter() - t0) * 1000
        rrf_k = self.settings.rrf_k
        weight = self.settings.dense_weight
        hits = []
        for rank, (entry_id, similarity) in enumerate(dense, start=1):
            meta = metadata.get(entry_id, {})
            card = str(meta.get("card", ""))
            hits.append(Hit(
                entry_id=entry_id, kind=str(meta.get("kind", "file")), path=str(meta.get("path", entry_id)),
                format=meta.get("format"), member_count=int(meta.get("member_count", 1)),
                score=round(weight / (rrf_k + rank), 6), dense=round(similarity, 4), dense_rank=rank,
                card_line=card.splitlines()[0] if card else "", summary=gist(card or ""), description=card,
            ))
        timing.total_ms = (time.perf_counter() - started) * 1000
        self.last_timing = timing
        return hits
