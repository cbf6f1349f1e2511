"""Near-identical entries: files a family did not take in, but that a reader would call the same kind of file.

A folder of per-beach datasheets whose beaches have different numbers of sampling points, per-day folders that
each hold one file of the same product, two report tables that differ only in the subject of their title: each
is its own catalog entry, and a question that matches one matches them all. Given one slot each they push
every other file out of the top K. Kin share one slot: the best-ranked is described in full, the others by one
line each (path, title, shape, load hint), and an agent's step that names one brings its own full description.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from dslake_index.families import name_pattern
from dslake_index.gist import cut_words

# Files that differ by a word fold only when the word is a data value: one of a series of at least this many files
# that differ in that slot alone (beaches, stations, states). Two files that differ by a word are two measures
# (identity theft and fraud reports; lightning- and human-caused acres), each needing its own description.
MIN_SERIES = 3
MIN_SHARED_LETTERS = 4  # a shared name part shorter than this ('2024_', 'CSN_') says nothing about the content
# Jaccard overlap of column names above which two tables count as one layout. Strictly above: a 3-column count table
# shares half its names with a 6-column cost table that adds three money columns (nifc_wildfires.csv and
# nifc_suppression_costs.csv), and as kin the count table was left one line under the cost table's description.
MIN_COLUMN_OVERLAP = 0.5
_SEPARATORS = "_-. "
_LETTERS = re.compile(r"[A-Za-z]")
# A dates column's line in a description: "- 'Date': text (dates); 1,132 distinct; range '2001-05-24' .. '2024-08-27'".
_DATE_RANGE = re.compile(r"^- ('[^']*'): [^;]*\(dates\)[^\n]*?(range \S+ \.\. \S+)")
_WORDS = re.compile(r"[a-z]+|[0-9]+")
_STANDS_FOR = re.compile(r"The '\*' stands for (.+?)\.(?: |$)")
_FAMILY_GLOB = re.compile(r" matching `[^`]*`")  # a family line's glob repeats the path the kin line starts with


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


def are_kin(a: KinKey, b: KinKey, question: frozenset[str] = frozenset(),
            siblings: Iterable[str] | None = None) -> bool:
    """Return True when two entries are the same kind of file: same folder pattern, format, name pattern and layout.

    question: the question's words; files whose names differ by one of them are never kin (the question tells
    them apart). siblings: the names of other entries of the folder; with them, names that differ by a word are
    kin only when at least MIN_SERIES of them differ in that one slot (a series of sites, not two measures).
    """
    if a.folder != b.folder or a.format != b.format:
        return False
    if question and (name_words(a.name) ^ name_words(b.name)) & question:
        return False  # 'lightning' vs 'human' in a question about lightning-caused fires: both are needed
    if not _names_alike(a, b, siblings):
        return False
    if not a.columns and not b.columns:
        return True  # documents of one name pattern in sibling folders (headers, bulletins)
    if not a.columns or not b.columns:
        return False
    return len(a.columns & b.columns) / len(a.columns | b.columns) > MIN_COLUMN_OVERLAP


def name_words(name: str) -> set[str]:
    """Return the lower-case words and numbers of a file name or pattern, without its extension."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return {w for w in _WORDS.findall(stem.lower()) if len(w) >= (2 if w.isdigit() else 3)}


def question_words(question: str) -> frozenset[str]:
    """Return the words and numbers of a question, lower case (what kin names are compared with)."""
    return frozenset(w for w in _WORDS.findall(question.lower()) if len(w) >= (2 if w.isdigit() else 3))


def _names_alike(a: KinKey, b: KinKey, siblings: Iterable[str] | None = None) -> bool:
    if a.is_family and not b.is_family:
        return fnmatchcase(b.name, a.name)
    if b.is_family and not a.is_family:
        return fnmatchcase(a.name, b.name)
    if name_pattern(a.name) == name_pattern(b.name) and "*" in name_pattern(a.name):
        return True  # they differ only by digits or dates
    if a.is_family or b.is_family:
        return False
    frame = _shared_word_pattern(a.name, b.name)
    if frame is None:
        return False
    if siblings is None:
        return True
    prefix, suffix = frame
    middle_a, middle_b = a.name[len(prefix) : len(a.name) - len(suffix)], b.name[len(prefix) : len(b.name) - len(suffix)]
    if name_words(middle_a + ".x") & name_words(middle_b + ".x"):
        return False  # 'human_caused_acres' and 'lightning_caused_wildfires': two slots differ, not one series
    series = {n for n in siblings if len(n) > len(prefix) + len(suffix) and n.startswith(prefix) and n.endswith(suffix)}
    return len(series | {a.name, b.name}) >= MIN_SERIES


def _shared_word_pattern(a: str, b: str) -> tuple[str, str] | None:
    """Return (prefix, suffix) around the word-bounded part two names differ in, when they share enough letters
    around it; else None."""
    prefix = os.path.commonprefix([a, b])
    suffix = os.path.commonprefix([a[::-1], b[::-1]])[::-1]
    shortest = min(len(a), len(b))
    if len(prefix) + len(suffix) > shortest:
        suffix = suffix[len(prefix) + len(suffix) - shortest :]
    prefix = prefix[: max((prefix.rfind(c) + 1 for c in _SEPARATORS), default=0)]
    cut = [i for i, c in enumerate(suffix) if c in _SEPARATORS]
    suffix = suffix[cut[0] :] if cut else ""
    if "." not in suffix:
        return None  # not even the extension is shared
    stem_suffix = suffix[: suffix.rfind(".")]
    if len(_LETTERS.findall(prefix + stem_suffix)) < MIN_SHARED_LETTERS:
        return None
    return prefix, suffix


def kin_line(path: str, description: str) -> str:
    """Return one line that tells a near-identical entry apart: its path, title, headings (a datasheet's sites), first
    table's shape, date coverage and load hint."""
    title = shape = load = stands_for = headings = dates = ""
    for line in description.splitlines():
        stripped = line.strip()
        if not title and stripped.startswith("Title: "):
            title = stripped[len("Title: "):]
        elif not headings and stripped.startswith("Headings: "):
            headings = stripped[len("Headings: "):]  # a datasheet's sites: what tells it from its kin
        elif not dates and (found := _DATE_RANGE.search(stripped)):
            dates = f"{found.group(1)} {found.group(2).rstrip(';,')}"
        elif not shape and (stripped.startswith("Table") and ": " in stripped):
            shape = stripped.split(": ", 1)[1]
        elif not load and stripped.startswith(("load: ", "Load: ")):
            load = stripped.split(": ", 1)[1]
        elif stripped.startswith("Family of "):
            shape = shape or _FAMILY_GLOB.sub("", stripped).rstrip(".")
        if not stands_for and (found := _STANDS_FOR.search(stripped)):
            stands_for = found.group(1)
    parts = [f"data/{path}"]
    if title:
        parts.append(repr(cut_words(title, 120)))
    if shape:
        parts.append(cut_words(shape, 120))
    if headings:
        parts.append(f"headings {cut_words(headings, 120)!r}")
    if dates:
        parts.append(cut_words(dates, 120))
    if stands_for:
        # A family's glob can match its kin too: the values behind its '*' say which files are its own.
        parts.append(f"'*' = {cut_words(stands_for, 240)}")
    if load:
        parts.append(f"load: {cut_words(load, 240)}")
    return " · ".join(parts)
