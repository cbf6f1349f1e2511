"""Figures the catalog's notes state about the files in view: footnotes, label/value lines, stated totals.

What a file says outside its rows reaches its description's notes: the lines after a table (delimited.py: "the
last N line(s) are notes or summary rows, not data …: Of the 1,135,291 total identity theft reports…"), the text
between stacked tables and their label/value lines (stacked.py), and a stated total the rows do not add up to
(stats.share_totals: "the shares … imply a total of …"). These are figures the data itself states, the same kind
of evidence as a script's `Stated:` line; the chooser sees no descriptions, so they are handed to it here, marked
as the catalog's. Only notes that carry a figure are kept (a number that is not a year alone), source lines left
out, a few per file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dsstar_lake.agent.state import ContextEntry

# The note openings (index/profilers) whose text after the colon holds what the file itself says, ' | '-separated.
QUOTING = (
    re.compile(r"are notes or summary rows, not data \([^)]*\):\s*"),
    re.compile(r"text lines between and after the tables \(titles, footnotes\):\s*"),
    re.compile(r"label/value lines:\s*"),
)
# A note that is itself a figure the file states: its whole text is kept.
WHOLE = re.compile(r"imply a total of ")
LINE_NUMBER = re.compile(r"^line \d+:\s*")
NUMBER = re.compile(r"(?P<money>\$)?\d[\d,]*(?:\.\d+)?(?P<pct>%)?")
PER_FILE = 6
MOST = 12
CLIP = 300


@dataclass(frozen=True)
class CatalogFigure:
    """One statement of a figure in a file's own notes, and the file (lake-relative path) it is in."""

    path: str
    text: str


def _has_figure(text: str) -> bool:
    """Tell whether a note states a figure: money, a share, a decimal, a grouped number, or two digits or more that
    are not a year."""
    for m in NUMBER.finditer(text):
        digits = m[0].lstrip("$").rstrip("%")
        if m["money"] or m["pct"] or "," in digits or "." in digits:
            return True
        if len(digits) >= 2 and not (len(digits) == 4 and 1800 <= int(digits) <= 2100):  # a day of a month: no
            return True
    return False


def _statements(note: str) -> list[str]:
    """Return what a description's note quotes from the file ([] for the profiler's own remarks)."""
    if WHOLE.search(note):
        return [note]
    for opening in QUOTING:
        found = opening.search(note)
        if found:
            return [LINE_NUMBER.sub("", part).strip() for part in note[found.end():].split(" | ")]
    return []


def figures_of(entry: ContextEntry) -> list[CatalogFigure]:
    """Return the figures one entry's description states in its notes, in the description's order."""
    found: list[CatalogFigure] = []
    for line in entry.description.splitlines():
        note = line.strip()
        if not note.startswith("- "):
            continue
        for text in _statements(note[2:]):
            if text and not text.lower().startswith("source:") and _has_figure(text):
                clipped = text if len(text) <= CLIP else text[: CLIP - 1] + "…"
                if all(f.text != clipped for f in found):
                    found.append(CatalogFigure(entry.path, clipped))
    return found[:PER_FILE]


def catalog_figures(entries: Sequence[ContextEntry]) -> list[CatalogFigure]:
    """Return the figures stated in the notes of these entries' descriptions (the files a run's view shows)."""
    found = [figure for entry in entries for figure in figures_of(entry)]
    return found[:MOST]
