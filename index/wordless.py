"""Entries whose content has no words a question would use, and the model summaries their cards then carry.

A question names what is measured ("solar wind speed", "sunspot number"), not a dataset's code. A card gets such
words only from the file's own text: column and sheet names, headings, variable descriptions, keys, prose. A
header-less table, a table whose columns are codes, a fixed-format orbit file or an array file named `*_grid`
give none, and the path ("omni2_2023.dat") rarely helps. Such an entry is *wordless*: fewer than MIN_WORDS
distinct content words (WORD_MIN_LETTERS or more letters with a vowel, codes and generic words such as `year` or
`value` excluded). The optional summarizer (dsstar_lake/enrichers/summarizer_pass.py) asks a model for those words and stores
them by content hash in the `summaries` table; apply_summaries() appends them, marked as a model's, to the entry's
card (embedded and full-text indexed) and description. Nothing here needs a model.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time

from dslake_index import fulltext
from dslake_index.cards import _SPLIT, _camel_digits
from dslake_index.catalog import transaction
from dslake_index.profilers.base import Profile

MIN_WORDS = 2  # an entry with fewer distinct content words than this wants a summary
WORD_MIN_LETTERS = 4  # shorter tokens are mostly codes and abbreviations (DOY, nT, Kp, wu)
# Words that name a table's scaffolding, not what it measures: a table of `year, month, value` says nothing.
GENERIC_WORDS = frozenset(
    """date time timestamp year years month months week hour hours minute minutes second seconds epoch period
    start end value values index name names number count total data type code column field record file line
    unnamed from with""".split())
# Formats whose title the profiler writes from the format itself (index/profilers/text.py), not from the file.
FORMAT_TITLES = frozenset({"tle", "sp3"})
# Nothing to summarise: no content was read (the generic fallback) or there is none. The analyzer covers those.
SKIP_FORMATS = ("empty", "binary", "zip", "gzip")
TEXT_SAMPLE_CHARS = 2000
_VOWEL = re.compile(r"[aeiouy]", re.I)

# The fields a summary holds, in order: the summarizer's prompt asks for exactly these lines.
FIELDS = ("Measures", "Units", "Period", "Names", "Questions")
CARD_HEAD = "model summary:"
DESCRIPTION_HEAD = "Model summary"  # + " (SOURCE; …):"
DESCRIPTION_NOTE = "written by a model from this description, for search; not checked against the file"


def words(text: str) -> set[str]:
    """Return the content words of a text: split like path words, lowercase, codes and generic words left out."""
    found = set()
    for chunk in _SPLIT.split(text or ""):
        for part in _camel_digits(chunk):
            word = part.lower()
            if (len(word) >= WORD_MIN_LETTERS and word.isalpha() and _VOWEL.search(word)
                    and word not in GENERIC_WORDS):
                found.add(word)
    return found


def content_texts(profile: Profile) -> list[str]:
    """Return the texts of a profile that come from the file itself (not from its path or from the profiler)."""
    p = profile
    texts: list[str] = []
    if p.title and p.format not in FORMAT_TITLES:
        texts.append(p.title)
    texts += p.headings
    for table in p.tables:
        if table.name:
            texts.append(table.name)
        if table.header_row is not None:  # a header-less table's columns are numbers
            texts += [c.name for c in table.columns if not c.name.startswith("Unnamed: ")]
    s = p.structure
    if isinstance(s, dict):
        texts += [str(name) for name in s.get("sheet_names") or []]
        for v in s.get("variables") or []:
            texts += [str(v.get("name") or ""), str(v.get("description") or v.get("catdesc") or "")]
        texts += [str(key) for key in s.get("fields") or {}]
        texts += [str(key) for key in s.get("keys_list") or []]
        texts += [str(a.get("name") or "") for a in s.get("arrays") or []]
    if not p.tables and p.text_sample:
        texts.append(p.text_sample[:TEXT_SAMPLE_CHARS])
    return texts


def content_words(profile: Profile) -> set[str]:
    """Return the distinct content words of a profile."""
    found: set[str] = set()
    for text in content_texts(profile):
        found |= words(text)
    return found


def is_wordless(profile: Profile) -> bool:
    """Tell whether an entry described by this profile carries no words a question would use."""
    return profile.format not in SKIP_FORMATS and len(content_words(profile)) < MIN_WORDS


def representative_hashes(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    """Return (entry id, kind, path shown, content hash) per entry: a file's own, a family's first member's."""
    return [tuple(row) for row in conn.execute(
        "SELECT e.id, e.kind, e.path, coalesce(e.content_hash, (SELECT f.hash FROM files f WHERE f.entry_id = e.id "
        "ORDER BY f.path LIMIT 1)) FROM entries e ORDER BY e.path")]


def card_block(text: str) -> str:
    """Return what a summary adds to a card (the fields' words, for embedding and full text)."""
    return f"\n{CARD_HEAD}\n{text}"


def description_block(text: str, source: str) -> str:
    """Return what a summary adds to a description, marked as a model's."""
    return f"\n\n{DESCRIPTION_HEAD} ({source}; {DESCRIPTION_NOTE}):\n{text}"


def _field_lines(text: str) -> bool:
    lines = text.split("\n")
    return bool(lines) and all(any(line.startswith(f"{name}: ") for name in FIELDS) for line in lines)


def without_summary(text: str, head: str) -> str:
    """Return a card or description without the summary block it ends with (unchanged when it has none)."""
    before, mark, after = text.rpartition("\n" + head)
    if not mark:
        return text
    _, newline, body = after.partition("\n")
    # Only a well-formed block at the very end is ours: file text that happens to hold the heading stays.
    return before.rstrip("\n") if newline and _field_lines(body) else text


def apply_summaries(conn: sqlite3.Connection) -> int:
    """Append each stored summary to its entry's card and description (once); return how many entries changed.

    Idempotent and cheap when nothing changed: an entry the indexer rebuilt lost its block and gets it back
    here, before vectors are synced, so an unchanged summary never costs an embedding.
    """
    if conn.execute("SELECT 1 FROM summaries WHERE text != '' LIMIT 1").fetchone() is None:
        return 0
    summaries = {row[0]: (row[1], row[2]) for row in conn.execute(
        "SELECT hash, text, source FROM summaries WHERE text != ''")}
    changed = []
    for entry_id, _, _, content_hash in representative_hashes(conn):
        summary = summaries.get(content_hash)
        if summary is None:
            continue
        card, description = conn.execute("SELECT card, description FROM entries WHERE id = ?", (entry_id,)).fetchone()
        text, source = summary
        new_card = without_summary(card, CARD_HEAD) + card_block(text)
        new_description = without_summary(description, DESCRIPTION_HEAD) + description_block(text, source)
        if (new_card, new_description) != (card, description):
            changed.append((entry_id, new_card, new_description))
    if changed:
        now = time.time()
        with transaction(conn):
            conn.executemany(
                "UPDATE entries SET card = ?, description = ?, card_hash = ?, updated_at = ? WHERE id = ?",
                [(card, description, hashlib.sha1(card.encode()).hexdigest(), now, entry_id)
                 for entry_id, card, description in changed])
            fulltext.replace_rows(conn, [(entry_id, card) for entry_id, card, _ in changed])
    return len(changed)


def stored_summaries(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """Return {content hash: (text, source)} of every stored summary ('' text: a failed one)."""
    return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT hash, text, source FROM summaries")}


def store_summary(conn: sqlite3.Connection, content_hash: str, text: str, source: str) -> None:
    """Write one summary (text '' with a failed:… source records a failure)."""
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO summaries (hash, text, source, created_at) VALUES (?, ?, ?, ?)",
                     (content_hash, text, source, time.time()))
