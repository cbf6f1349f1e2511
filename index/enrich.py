"""Enrichers: optional passes that add words to entries after they are rendered and before their cards are embedded.

The index pipeline (indexer.run_index) is scan → profile → group → render (entries and full text) → enrich →
render again what an enricher changed → embed. An enricher reads the rendered entries (which ones want more
words), stores what it finds by content hash (the manifest's `analyses` or `summaries` table) and marks the
folders it touched dirty; the pipeline rebuilds those and embeds every changed card once, after the last pass.
The model passes (the paper's analyzer, the summarizer) implement it in dsstar_lake: index/ never calls a model.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from dslake_index.progress import Progress


@dataclass(frozen=True)
class Enrichment:
    """What one enricher did."""

    name: Literal["analysis", "summaries"]  # the IndexSummary field its report fills
    report: dict[str, Any]  # JSON-ready: what it wanted, wrote, failed, spent
    wrote: bool  # it stored text that changes entries: they are rendered again before anything is embedded


class Enricher(Protocol):
    """An optional pass over the rendered entries (dsstar_lake.enrichers.analyzer_pass.model_passes builds the model's)."""

    def enrich(self, conn: sqlite3.Connection, progress: Progress) -> Enrichment:
        """Store what it adds (by content hash) and mark the folders whose entries change dirty."""
        ...
