"""A run's selection as every surface says it: who chose the first round's entries, and how many of how many."""

from __future__ import annotations

from typing import Any

# Who chose a run's first entries (Answer.selected_by, the trace's selection event's `by`), in a reader's words.
SELECTED_BY = {
    "selector": "chosen by the selector model",
    "relevance": "by relevance (no model choice)",
    "given": "given by the user",
}


def selection_heading(selection: dict[str, Any]) -> str:
    """Return the line above a run's selection ({by, entries, menu}): who selected, and how many of how many."""
    by = str(selection.get("by") or "")
    entries, menu = selection.get("entries") or [], selection.get("menu") or []
    count = f"{len(entries)} of {len(menu)} candidates" if menu else f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    return f"selection ({SELECTED_BY.get(by, by or 'unknown')}): {count}"
