"""Full-text search over cards with SQLite FTS5 (BM25), with tokens split the way file names are written."""

from __future__ import annotations

import json
import re
import sqlite3

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ALNUM_RUN = re.compile(r"[^\W_]+", re.UNICODE)
_LETTER_DIGIT = re.compile(r"(?<=\D)(?=\d)|(?<=\d)(?=\D)")

# Words that carry no information in a question about data; BM25's idf would mostly ignore them,
# but dropping them keeps the OR query small and fast.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it its
    of on or our per please than that the their them then there these this those to was were what when where which
    who whom why will with would you your give answer round decimal decimals places place using use based data
    file files find value values number total show list between across among each all any most much many""".split()
)


def split_words(text: str) -> list[str]:
    """Split text into lowercase words: paths, snake_case, camelCase and digits-vs-letters all split apart.

    A compound like 'wu334' or 'noaaWildfires' is kept whole as well as split, so both spellings match.
    """
    words: list[str] = []
    for run in _ALNUM_RUN.findall(text):
        parts = [p for chunk in _CAMEL.split(run) for p in _LETTER_DIGIT.split(chunk) if p]
        lowered = [p.lower() for p in parts]
        words.extend(lowered)
        if len(parts) > 1:
            words.append(run.lower())
    return words


# The labels a card writes for its sections (index/cards.py): "units: km2", "columns: …". Indexed, a one-word query
# "units" ranked a file whose card had a units line above the file whose column is named units. Only the labels:
# the words of a table's shape ("48 rows x 5 columns, no header") are facts about the file, and dropping them too
# cost KramaBench's whole lake two tasks' files at K = 10 (BM25's length normalisation shifts every card).
_CARD_LABEL = re.compile(r"^(?:title|sheets|headings|columns|table|units|dates|places|values|keywords|arrays|variables|"
                         r"fields|keys|items|satellites|partitions|versions|load)\b(?=[^:\n]{0,200}:)", re.M)
VERSION = "3"  # of index_text: a catalog whose full-text rows were written by another is refilled from its cards


def index_text(card: str) -> str:
    """Return the text stored in FTS5 for a card: its split words, space-joined, without the card's own labels."""
    return " ".join(split_words(_CARD_LABEL.sub(" ", card)))


def query_terms(question: str) -> list[str]:
    """Return the words of a question that full text matches (split as file names are, stopwords left out)."""
    terms: list[str] = []
    for word in split_words(question):
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        if word not in terms:
            terms.append(word)
    return terms


def match_query(question: str) -> str | None:
    """Return an FTS5 MATCH expression (quoted terms OR-ed) for free text, or None if nothing is left."""
    terms = query_terms(question)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def refill_if_outdated(conn: sqlite3.Connection) -> bool:
    """Rewrite every full-text row from the stored cards when they were written by another index_text (a
    transaction of its own); return whether it did."""
    from dslake_index.catalog import get_meta, set_meta, transaction

    if get_meta(conn, "fulltext_version") == VERSION:
        return False
    with transaction(conn):
        conn.execute("DELETE FROM entries_fts")
        replace_rows(conn, [(row[0], row[1] or "") for row in conn.execute("SELECT id, card FROM entries")])
        set_meta(conn, "fulltext_version", VERSION)
    return True


def replace_rows(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    """Set the FTS rows of the given entries to their cards (inside the caller's transaction)."""
    delete_rows(conn, [entry_id for entry_id, _ in rows])
    conn.executemany(
        "INSERT INTO entries_fts (entry_id, body) VALUES (?, ?)",
        [(entry_id, index_text(card)) for entry_id, card in rows],
    )


def delete_rows(conn: sqlite3.Connection, entry_ids: list[str]) -> None:
    """Remove the FTS rows of the given entries (inside the caller's transaction).

    One statement for them all: FTS5 has no index on entry_id, so each `WHERE entry_id = ?` read every row, and a
    folder's rebuild at 100k files (25k entries, ~60 rows a folder) spent 1.2 s deleting (182 s of the first index).
    """
    if entry_ids:
        conn.execute("DELETE FROM entries_fts WHERE entry_id IN (SELECT value FROM json_each(?))",
                     (json.dumps(list(entry_ids)),))


def search(conn: sqlite3.Connection, question: str, limit: int) -> list[tuple[str, float]]:
    """Return (entry_id, bm25 score, higher is better) for the best-matching cards."""
    expression = match_query(question)
    if expression is None:
        return []
    rows = conn.execute(
        "SELECT entry_id, bm25(entries_fts) AS rank FROM entries_fts WHERE entries_fts MATCH ? "
        "ORDER BY rank LIMIT ?",
        (expression, limit),
    ).fetchall()
    return [(row[0], -float(row[1])) for row in rows]
