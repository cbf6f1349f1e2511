"""Totals a file states in its footnotes, against each other and against its tables' column sums.

A footnote 'Of the 212,158 total reports from military consumers…' and another '…of the 212,518 total reports…'
state one total twice with two values, and the table above sums to a third (210,639): a share question must pick
one, and a coder who takes the first footnote or the sum without knowing of the others answers another question.
Only totals that nearly agree are compared (within NEAR): a footnote on a part ('86% included age') or on
another quantity is far from the sum and says nothing here.
"""

from __future__ import annotations

import re
from typing import Any

from dslake_index.profilers.textio import clip

NEAR = 0.03  # stated totals and sums this close claim the same total; equal ones agree
_TOTAL = re.compile(r"\btotal", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.$])(\d{1,3}(?:,\d{3})+|\d{4,})(?![\w.%]|\.\d)")
_YEAR = re.compile(r"^(19|20)\d\d$")


def stated_total(text: str) -> int | None:
    """Return the one number a footnote states as a total ('Of the 1,135,291 total … reports'), else None: a
    line with no 'total', or with several numbers (totals of several years), states no single total."""
    if not _TOTAL.search(text):
        return None
    numbers = [n for n in _NUMBER.findall(text) if not _YEAR.match(n)]
    if len(numbers) != 1:
        return None
    return int(numbers[0].replace(",", ""))


def _near(a: float, b: float) -> bool:
    return a != b and abs(a - b) <= NEAR * max(abs(a), abs(b))


def total_disagreements(footnotes: list[str], frames: list[tuple[str, Any]]) -> list[str]:
    """Return a note when the footnotes state nearly equal but different totals, or a total that an integer
    column of a table nearly but not exactly sums to. frames are (label, DataFrame): 'table 1', the frame."""
    stated = [(v, t) for t in footnotes if (v := stated_total(t)) is not None]
    if not stated:
        return []
    sums = [(label, str(c), int(df[c].sum())) for label, df in frames for c in df.columns
            if len(df) >= 2 and df[c].dtype.kind in "iu"]
    values = sorted({v for v, _ in stated})
    clashing = [v for v in values if any(_near(v, w) for w in values)]
    near_sums = [(label, c, s) for label, c, s in sums if any(_near(s, v) for v in values)
                 and s not in values]
    if not clashing and not near_sums:
        return []
    shown = clashing or sorted({v for v, _ in stated if any(_near(s, v) for _, _, s in near_sums)})
    said = "; ".join(f"{v:,} ({clip(next(t for w, t in stated if w == v), 120)!r})" for v in shown)
    head = (f"the notes state {len(shown)} different totals of one count: {said}" if len(shown) > 1
            else f"a note states a total of {said}")
    tail = ""
    if near_sums:
        tail = "; " + ", ".join(f"{label}'s {c!r} sums to {s:,}" for label, c, s in near_sums[:3])
    return [f"{head}{tail}: these totals disagree, so a share or percentage must name which one it is of (the "
            "stated total for the publisher's percentages, the rows' sum for shares of the rows shown)"]


MAX_YEAR_ROWS = 300


def year_sums(df: Any) -> dict[str, Any] | None:
    """Return a table's int columns summed per year when one column is a year key (unique whole years, at least
    three), for the folder check (folder_totals.py); None otherwise."""
    if not 3 <= len(df) <= MAX_YEAR_ROWS:
        return None
    for key in df.columns:
        values = df[key]
        if values.dtype.kind not in "iu" or not values.between(1800, 2200).all() or not values.is_unique:
            continue
        counts = [c for c in df.columns if c != key and df[c].dtype.kind in "iu"]
        if not counts:
            return None
        return {"key": str(key), "years": [int(y) for y in values], "columns": [str(c).strip() for c in counts],
                "sums": [int(s) for s in df[counts].sum(axis=1)]}
    return None
