"""Which entries of the given data get the budget first: those the question is about, not only the best-ranked.

Retrieval ranks by similarity, and in a lake of several sources the entries of another source can rank high on a
shared word ('average', 'date') and take the budget from the files the question needs. The budget goes first to
entries in the best match's top-level folder, and among them to those whose path, title or column names carry a
word of the question beyond the words most of the given entries share (the domain's common words); entries whose
score is far below the best match's come after the near ones. Rank order breaks ties; nothing here looks at a particular question.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

FAR_BELOW = 0.5  # an entry scoring less than this share of the best match's score is far below it
COMMON_SHARE = 0.5  # a word named by more than this share of the given entries is the domain's, not the question's
_WORD = re.compile(r"[a-z]{3,}")
_COLUMN = re.compile(r"^\s+- '((?:[^'\\]|\\.)*)': ")
_STEM = 5  # words that agree in their first letters are one word here ('maltese' and 'malta', 'genes' and 'gene')
_STOP = frozenset("the and for with from that this what which how many much are was were per each all any its "
                  "their between than into over under about there have has had not only also when where who whom "
                  "does did give given find answer round decimal places number".split())


def allocation_order(entries: Sequence[Any], descriptions: Sequence[str], question: str) -> list[int]:
    """Return the entries' indexes in the order the budget should reach them."""
    if not question or len(entries) < 2:
        return list(range(len(entries)))
    asked = {_stem(w) for w in _WORD.findall(question.lower()) if w not in _STOP}
    named = [{_stem(w) for w in _WORD.findall(_names(e.path, text).lower())} for e, text in zip(entries, descriptions,
                                                                                                   strict=True)]
    counts = Counter(w for words in named for w in words)
    common = {w for w, n in counts.items() if n > COMMON_SHARE * len(entries)}
    best_folder = _top_folder(entries[0].path)
    best_score = max((e.score for e in entries if e.score), default=0.0) or 0.0

    def key(i: int) -> tuple[bool, bool, bool, int]:
        e = entries[i]
        far = bool(best_score) and e.score is not None and e.score < FAR_BELOW * best_score
        # Named by the question first (whatever its score), then the rest of the best match's source, near before far.
        return (_top_folder(e.path) != best_folder, not (named[i] - common) & asked, far, i)

    return sorted(range(len(entries)), key=key)


def _names(path: str, description: str) -> str:
    """Return what names an entry: its path, its title, its sheets and its column names (not its values)."""
    lines = description.splitlines()
    title = next((line for line in lines if line.startswith("Title: ")), "")
    sheets = [line.split("'")[1] for line in lines if line.startswith("Sheet '") and line.count("'") >= 2]
    columns = [m.group(1) for m in map(_COLUMN.match, lines) if m]
    return " ".join([path.replace("_", " "), title, *sheets, *columns])


def _stem(word: str) -> str:
    return word[:_STEM]


def _top_folder(path: str) -> str:
    head, sep, _ = path.partition("/")
    return head if sep else ""


def entry_words(path: str, description: str) -> set[str]:
    """Return the stems of the words that name an entry: path, title, sheets and column names."""
    return {_stem(w) for w in _WORD.findall(_names(path, description).lower())}


def content_words(text: str) -> list[str]:
    """Return a text's words worth searching with, in order, without repeats (stop words dropped)."""
    return list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in _STOP))


def uncovered_words(question: str, entries: Sequence[Any]) -> list[str]:
    """Return the question's words that no given entry's path, title, sheets or columns name: what is missing."""
    named = set().union(*(entry_words(e.path, e.description) for e in entries)) if entries else set()
    return [w for w in content_words(question) if _stem(w) not in named]


def names_any(path: str, description: str, words: Sequence[str]) -> bool:
    """Return True when the entry's names, or its description's text, carry one of the words (by stem)."""
    stems = {_stem(w) for w in words}
    return bool(stems & (entry_words(path, description) | {_stem(w) for w in _WORD.findall(description.lower())}))
