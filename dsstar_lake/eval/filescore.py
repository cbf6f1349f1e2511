"""How well a run's files match a task's gold files: coverage, and the precision, recall and F1 of a list of paths.

A path covers a gold file when it names it, when it is a family's glob that matches it, or when it is a dataset's
folder that holds it. Precision is the share of the listed paths that cover at least one gold file, recall the
share of gold files covered, F1 their harmonic mean. The benchmark scores two lists this way: the entries the run
selected for its first round (issue 45) and the files its scripts read.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

# A family glob uses only '*'; a literal '[' or '?' in a folder name must not act as a wildcard.
_GLOB_SPECIALS = str.maketrans({"[": "[[]", "?": "[?]"})
# Who chose a run's first entries (Answer.selected_by). Only a choice the agent made is scored: "given" (--files,
# --oracle) is the user's, and "" is a run from before the selection existed.
SCORED_SELECTORS = ("selector", "relevance")


@dataclass(frozen=True)
class FileScore:
    """Precision, recall and F1 of a list of paths against gold files.

    precision is None when the list is empty (no path to be right or wrong); F1 is then 0.
    """

    precision: float | None
    recall: float
    f1: float


class _Cover:
    """Answers whether a path covers a gold file, with each glob translated once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.glob = path.translate(_GLOB_SPECIALS) if "*" in path else None
        self.folder = path.rstrip("/") + "/" if path.strip("/") else None

    def covers(self, gold: str) -> bool:
        if gold == self.path:
            return True
        if self.glob is not None and fnmatch.fnmatchcase(gold, self.glob):
            return True
        return self.folder is not None and gold.startswith(self.folder)


def _covers(paths: list[str]) -> list[_Cover]:
    return [_Cover(p) for p in dict.fromkeys(paths)]  # a path listed twice counts once


def coverage(gold: list[str], paths: list[str]) -> float | None:
    """Return the share of gold files the paths cover, or None when there are no gold files."""
    if not gold:
        return None
    covers = _covers(paths)
    return round(sum(any(c.covers(g) for c in covers) for g in gold) / len(gold), 4)


def file_score(gold: list[str], paths: list[str]) -> FileScore | None:
    """Return the precision, recall and F1 of paths (repeats counted once) against gold; None without gold."""
    if not gold:
        return None
    covers = _covers(paths)
    recall = round(sum(any(c.covers(g) for c in covers) for g in gold) / len(gold), 4)
    if not covers:
        return FileScore(None, recall, 0.0)
    precision = round(sum(any(c.covers(g) for g in gold) for c in covers) / len(covers), 4)
    f1 = round(2 * precision * recall / (precision + recall), 4) if precision + recall else 0.0
    return FileScore(precision, recall, f1)


def selection_score(gold: list[str], selection: list[dict[str, str]], selected_by: str) -> FileScore | None:
    """Return the score of a run's selection, or None when the agent chose nothing itself (given, or no record)."""
    if selected_by not in SCORED_SELECTORS:
        return None
    return file_score(gold, [str(e.get("path", "")) for e in selection if e.get("path")])
