"""Near-identical entries: files a family did not take in, but that a reader would call the same kind of file.

A folder of per-beach datasheets whose beaches have different numbers of sampling points, per-day folders that
each hold one file of the same product, two report tables that differ only in the subject of their title: each
is its own catalog entry, and a question that matches one matches them all. Given one slot each they push
every other file out of the top K. Kin share one slot: the best-ranked is described in full, the others by one
line each (path, title, shape, load hint), and a script that reads one brings its own full description.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from dslake_index.families import name_pattern

MIN_SHARED_LETTERS = 4  # a shared name part shorter than this ('2024_', 'CSN_') says nothing about the content
# Jaccard overlap of column names above which two tables count as one layout. Strictly above: a 3-column count table
# shares half its names with a 6-column cost table that adds three money columns (nifc_wildfires.csv and
# nifc_suppression_costs.csv), and as kin the count table was left one line under the cost table's description.
MIN_COLUMN_OVERLAP = 0.5
_SEPARATORS = "_-. "
_LETTERS = re.compile(r"[A-Za-z]")
_STANDS_FOR = re.compile(r"The '\*' stands for (.+?)\.(?: |$)")


@dataclass(frozen=True)
class KinKey:
    """What kinship is judged on: where an entry sits, its name, its format and its column names."""

    folder: str  # parent folder with digit runs and dates as '*' (per-day folders compare equal)
    name: str  # file name, or a family's name pattern
    is_family: bool
    format: str
    columns: frozenset[str]


def kin_key(path: str, kind: str, fmt: str | None, card: str) -> KinKey:
    """Return the kinship key of a catalog entry from its path and its card."""
    folder, _, name = path.rpartition("/")
    parts = [name_pattern(part) for part in folder.split("/")] if folder else []
    return KinKey("/".join(parts), name, kind == "family", fmt or "", card_columns(card))


def card_columns(card: str) -> frozenset[str]:
    """Return the column names a card lists on its 'columns:' line (empty for files without tables)."""
    for line in card.splitlines():
        if line.startswith("columns: "):
            return frozenset(c.strip().lower() for c in line[len("columns: "):].split(";") if c.strip())
    return frozenset()


def are_kin(a: KinKey, b: KinKey) -> bool:
    """Return True when two entries are the same kind of file: same folder pattern, format, name pattern and layout."""
    if a.folder != b.folder or a.format != b.format:
        return False
    if not _names_alike(a, b):
        return False
    if not a.columns and not b.columns:
        return True  # documents of one name pattern in sibling folders (headers, bulletins)
    if not a.columns or not b.columns:
        return False
    return len(a.columns & b.columns) / len(a.columns | b.columns) > MIN_COLUMN_OVERLAP


def _names_alike(a: KinKey, b: KinKey) -> bool:
    if a.is_family and not b.is_family:
        return fnmatchcase(b.name, a.name)
    if b.is_family and not a.is_family:
        return fnmatchcase(a.name, b.name)
    if name_pattern(a.name) == name_pattern(b.name) and "*" in name_pattern(a.name):
        return True  # they differ only by digits or dates
    if a.is_family or b.is_family:
        return False
    return _shared_word_pattern(a.name, b.name)


def _shared_word_pattern(a: str, b: str) -> bool:
    """True when the names differ in one word-bounded slot and share enough letters around it."""
    prefix = os.path.commonprefix([a, b])
    suffix = os.path.commonprefix([a[::-1], b[::-1]])[::-1]
    shortest = min(len(a), len(b))
    if len(prefix) + len(suffix) > shortest:
        suffix = suffix[len(prefix) + len(suffix) - shortest :]
    prefix = prefix[: max((prefix.rfind(c) + 1 for c in _SEPARATORS), default=0)]
    cut = [i for i, c in enumerate(suffix) if c in _SEPARATORS]
    suffix = suffix[cut[0] :] if cut else ""
    if "." not in suffix:
        return False  # not even the extension is shared
    stem_suffix = suffix[: suffix.rfind(".")]
    return len(_LETTERS.findall(prefix + stem_suffix)) >= MIN_SHARED_LETTERS


def kin_line(path: str, description: str) -> str:
    """Return one line that tells a near-identical entry apart: its path, title, first table's shape and load hint."""
    title = shape = load = stands_for = ""
    for line in description.splitlines():
        stripped = line.strip()
        if not title and stripped.startswith("Title: "):
            title = stripped[len("Title: "):]
        elif not shape and (stripped.startswith("Table") and ": " in stripped):
            shape = stripped.split(": ", 1)[1]
        elif not load and stripped.startswith(("load: ", "Load: ")):
            load = stripped.split(": ", 1)[1]
        elif stripped.startswith("Family of "):
            shape = shape or stripped.rstrip(".")
        if not stands_for and (found := _STANDS_FOR.search(stripped)):
            stands_for = found.group(1)
    parts = [f"data/{path}"]
    if title:
        parts.append(repr(title[:120]))
    if shape:
        parts.append(shape[:120])
    if stands_for:
        # A family's glob can match its kin too: the values behind its '*' say which files are its own.
        parts.append(f"'*' = {stands_for[:240]}")
    if load:
        parts.append(f"load: {load[:240]}")
    return " · ".join(parts)
