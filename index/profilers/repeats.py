"""Records that repeat inside one file: a table's rows equal to an earlier row, and records of a record-oriented
format (two-line element sets) that repeat their key (the epoch) with or without the rest.

Families add up their members' row sketches (family_stats.py); a single file says its own repeats here, in one
note with its numbers, because a count, a mean or a fit per key takes a repeated record twice (235 of a TLE
file's 951 element sets repeat an epoch: keeping them moved a fitted r² from 0.76 to 0.39).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

MIN_ROWS = 3  # fewer rows than this: a repeat says nothing worth a note


def duplicate_rows_note(duplicates: int | None, rows: int, whole: bool = True) -> list[str]:
    """Return a note when some of a table's rows (read) equal an earlier row whole, else nothing."""
    if not duplicates or rows < MIN_ROWS:
        return []
    read = "" if whole else " read"
    return [f"{duplicates:,} of the {rows:,} rows{read} repeat an earlier row whole (drop_duplicates() keeps one "
            "copy each); decide whether a repeated row counts twice before counting or averaging"]


def repeated_keys_note(keys: Sequence[Hashable], records: Sequence[Hashable], noun: str, key: str,
                       advice: str) -> list[str]:
    """Return a note when records repeat the key of an earlier record: how many, how many of those repeat the
    whole record too, and what to keep (advice). keys[i] and records[i] belong to the i-th record."""
    if len(keys) < MIN_ROWS:
        return []
    repeated = len(keys) - len(set(keys))
    if not repeated:
        return []
    whole = len(records) - len(set(records))
    how = (f"{whole:,} of them repeat the whole record" if whole else "none of them repeats the whole record: the "
           "other fields differ")
    return [f"{repeated:,} of the {len(keys):,} {noun} repeat the {key} of an earlier one ({how}; "
            f"{len(set(keys)):,} distinct {key}s): {advice}"]
