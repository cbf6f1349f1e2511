"""The words for a catalog that holds no entry (Catalog.emptiness): a search over it says why it found nothing
instead of showing a bare header, on the terminal and at a Python prompt alike."""

from __future__ import annotations

_WORDS = {
    "indexing": "no entries yet: an index of this lake is running and has written none so far; search again when it "
                "has finished",
    "unfinished": "no entries yet: the first index of this lake stopped before it wrote any; index the lake again to "
                  "finish it",
    "empty": "the catalog holds no entries: its last index found no file it could describe (an empty lake, or every "
             "file failed or was skipped; the status lists them)",
}


def empty_words(state: str | None) -> str | None:
    """Return the sentence for a catalog's emptiness ('indexing', 'unfinished', 'empty'), or None (it has entries)."""
    return _WORDS.get(state) if state else None
