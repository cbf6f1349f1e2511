"""A family's layout, found once: members of a family (one folder, one name pattern, one header line) are read
with the layout their first member's full search found, after an exact check that the search would find it again.

find_layout sniffs the delimiter, splits and types the first 120 lines, and votes on the header: ~10% of the CPU
of a 400 KB member of a 715-file family whose members all start with the same header. For the plain layout (a
comma-separated table whose first line is a header of named, non-numeric cells, no preamble, no comment, no
leading spaces), the search's every decision follows from a few facts a member's head can be checked for at C
speed: no other delimiter, quote or comment character in its first 120 lines, no blank line there, every line of
the header's width, and one column that holds numbers under the header (has_header's vote then says "header").
A member that passes gets that layout and the same footer and repeated-header search a full one gets (they read
its own lines); a member that fails any check, or has no family yet, takes the full search. The profile is the
same either way: the checks are sufficient conditions for find_layout's result, not a guess at it.

The facts live in the profiler process (each worker of the pool learns a family from the first member it meets),
so nothing has to be ordered or shared between processes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dslake_index.profilers.delimited import (
    SNIFF_LINES,
    Layout,
    _cell_kind,
    _find_footer,
    _find_sections,
)

MAX_FAMILIES = 256  # families remembered per process (a worker meets few; a bound keeps a huge lake's memory flat)
HAS_HEADER_ROWS = 19  # data rows has_header looks at (find_layout hands it rows first+1 .. first+19)
_DIGITS = re.compile(r"\d+")
# characters that could make find_layout's search decide anything but the plain layout: another delimiter the
# sniffer weighs, a quote or a character the csv module treats apart, a comment mark
_NOT_PLAIN = ("\t", ";", "|", '"', "\r", "\x00", "#")


@dataclass(frozen=True)
class FamilyFacts:
    """What a family's first member's full search showed about its header line."""

    n_fields: int
    number_column: int  # a column whose cells under the header were all numbers in the first member


_families: dict[tuple[str, str, str, str], FamilyFacts] = {}


def family_key(path: Path, ext: str, header: str) -> tuple[str, str, str, str]:
    """Return the key members of one family share: folder, name with digit runs as '*', extension, header line."""
    return str(path.parent), _DIGITS.sub("*", path.name), ext, header


def _plain_header(header: str) -> int:
    """Return the header's width when it is a row of named cells that are not numbers, else 0."""
    if any(ch in header for ch in _NOT_PLAIN):
        return 0
    cells = header.split(",")
    if len(cells) < 2 or any(not c or _cell_kind(c) != "text" for c in cells):
        return 0
    return len(cells)


def _number_column(lines: list[str], n_fields: int) -> int | None:
    """Return the first column whose cells in data lines 1..19 are all numbers (has_header's numeric column)."""
    rows = [ln.split(",") for ln in lines[1 : 1 + HAS_HEADER_ROWS]]
    if not rows or any(len(r) != n_fields for r in rows):
        return None
    for j in range(n_fields):
        if all(_cell_kind(r[j]) == "number" for r in rows):
            return j
    return None


def remember(path: Path | None, ext: str, lines: list[str], lay: Layout) -> None:
    """Keep a fully searched member's facts when its layout is the plain one members can be checked against."""
    if path is None or not lines or len(_families) >= MAX_FAMILIES or family_key(path, ext, lines[0]) in _families:
        return  # a member that failed the checks leaves its family's facts as the first member set them
    plain = (lay.sep == "," and lay.first_line == 0 and lay.header_line == 0 and not lay.comment
             and not lay.decimal_comma and not lay.skipinitialspace and not lay.preamble and not lay.group_rows
             and not lay.notes)
    if not plain:
        return
    n_fields = _plain_header(lines[0])
    if n_fields != lay.n_fields or n_fields < 2:
        return
    column = _number_column(lines, n_fields)
    if column is None:
        return
    _families[family_key(path, ext, lines[0])] = FamilyFacts(n_fields, column)


def known_layout(path: Path | None, ext: str, lines: list[str], whole: bool) -> Layout | None:
    """Return the layout find_layout(lines, ext, whole) finds, when the member's family is known and its head
    passes the checks that make that layout certain; None otherwise (the caller runs the full search)."""
    if path is None or len(lines) < 2:
        return None
    facts = _families.get(family_key(path, ext, lines[0]))
    if facts is None:
        return None
    head = lines[:SNIFF_LINES]
    joined = "\n".join(head)
    if any(ch in joined for ch in _NOT_PLAIN):
        return None  # the sniffer would weigh another delimiter, csv.reader would split quotes, '#' may comment
    width = facts.n_fields - 1
    if not all(ln.count(",") == width and not ln.isspace() and ln for ln in head):
        return None  # a blank line or a row of another width: the search's votes could differ
    data = [ln.split(",") for ln in head[1 : 1 + HAS_HEADER_ROWS]]
    j = facts.number_column
    if not all(_cell_kind(r[j]) == "number" for r in data):
        return None  # has_header would have to weigh the columns: the full search decides
    if len(data[0]) - data[0].count("") < 2:
        return None  # the footer search runs when the first row fills two cells (find_layout's 'top' test)
    if ", " in "\n".join(head[1 : 1 + HAS_HEADER_ROWS]):
        return None  # cells starting with a space: skipinitialspace is voted on
    lay = Layout(sep=",", n_fields=facts.n_fields, header_line=0, first_line=0)
    if whole:
        _find_footer(lay, lines, 1)
    _find_sections(lay, lines, 0)
    return lay


def forget() -> None:
    """Drop every family's facts (tests start from none)."""
    _families.clear()
