"""What an entry holds, in at most three short lines a person decides by: title, shape, columns or sheets, dates,
one or two key facts.

Built from the entry's card, which index/cards.py writes as labelled sections ("columns: a; b", "table: 48 rows x 5
columns", "dates: date 2024-01-01 to 2024-11-25"). The card's first line (the path as words) and its file-name
line are left out: a hit already shows its path. Lists are cut between items ("… +12 more") and text between words
("…"), never inside a word; a section this module does not know is skipped, so a card that gains a label still
gives a gist. Every search surface shows these lines (the CLI, the web page, MCP, the notebook), with the words a
query matched picked out by `matched_spans`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from dslake_index.layouts import NAMED_BY

WIDTH = 110  # characters per gist line: one terminal line beside a rank, a format and a score
FAMILY_NAMES = 40  # characters of a family's member names on its first line (its dates and shape follow)
FACTS = 2  # key-fact sections shown (places, values, units, keys, …)
# Card sections, by the label cards.py gives them, in the order their facts are worth showing.
FACT_LABELS = ("places", "values", "units", "keys", "variables", "arrays", "fields", "items", "satellites", "keywords")
_LABEL = re.compile(r"^(title|sheets|headings|columns|tables|table(?: [^:\n]{0,200})?|units|dates|places|values|keywords|"
                    r"arrays|variables|fields|keys|items|satellites|partitions|versions|load): ?(.*)$")
# 'about' marks a count estimated from part of a big file (cards.card_rows)
_SHAPE = re.compile(r"^(?:(?P<about>about )?(?P<rows>[\d?,]+) rows x )?(?P<cols>\d+) columns(?P<rest>.*)$")
# A dataset's first line (index/dataset_entries.py): 'dataset sales parquet partitioned by year, month 4 files rows
# in all 8,000', and a Delta or Iceberg table's: 'delta table trips trips' ('… unreadable' when its log is not).
_DATASET = re.compile(r"^dataset .+ (?:partitioned by .+|parts) (?P<n>\d+) files rows in all ")
_TABLE = re.compile(r"^(?P<kind>delta|iceberg) table \S.*?(?P<unreadable> unreadable)?$")
TABLE_NAMES = {"delta": "Delta table", "iceberg": "Iceberg table"}
_DATE_RANGE = re.compile(r"^(?P<col>.*?)\s*(?P<lo>-?\d{4}(?:-\d\d(?:-\d\d)?)?) to (?P<hi>-?\d{4}(?:-\d\d(?:-\d\d)?)?)$")
# A family card's first line (index/entries.py): 'family of 52 files <glob> names a, b rows in all 1,030,315 dates:
# Timestamp 2013-11-29 to 2019-12-13; 1 gap 2019-04-11 to 2019-04-13'.
_FAMILY = re.compile(r"^family of (?P<n>\d+) files (?P<pattern>\S.*?)(?: names (?P<names>.*?))?"
                     r"(?: rows in all (?P<rows>[\d,]+))?(?: dates: (?P<dates>.*?))?\s*$")
_GAPS = re.compile(r"^\d+ gaps? ")
_LEADING_NUMBER = re.compile(r"\d*")
_TOKEN = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=\D)(?=\d)|(?<=\d)(?=\D)")


def sections(card: str) -> list[tuple[str, str]]:
    """Return the card's labelled sections as (label, text), a line without a label joined to the one before.

    The first two lines (path words, "name (format)") come back as ("path", …) and ("name", …); unlabelled text
    after them (a note's first words) as ("text", …).
    """
    lines = (card or "").splitlines()
    out: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        if i < 2 and not _LABEL.match(line):
            out.append(("path" if i == 0 else "name", line))
            continue
        found = _LABEL.match(line)
        if found:
            out.append((found.group(1), found.group(2).strip()))
        elif line.startswith(NAMED_BY):  # a header-less table's link to its format document, a line of its own
            out.append(("named", line.strip()))
        elif out and out[-1][0] not in ("path", "name", "title"):  # a value's own line break (a site's text)
            out[-1] = (out[-1][0], f"{out[-1][1]} {line.strip()}")
        else:
            out.append(("text", line.strip()))
    return out


def cut_words(text: str, width: int = WIDTH) -> str:
    """Return text on one line, cut at a word boundary with '…' when longer than width."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    head = flat[: width - 1]
    space = head.rfind(" ")
    return (head[:space] if space > width // 3 else head).rstrip(" ,;:") + "…"


def fit_items(label: str, items: list[str], width: int = WIDTH) -> str:
    """Return 'label: a, b, c … +N more' within width, cut between items (a first item too long is cut by words)."""
    items = [" ".join(i.split()) for i in items if i.strip()]
    head = f"{label}: " if label else ""
    shown: list[str] = []
    for n, item in enumerate(items):
        more = f" … +{len(items) - n - 1} more" if n < len(items) - 1 else ""
        candidate = head + ", ".join([*shown, item])
        if len(candidate) + len(more) > width:
            if not shown:
                shown.append(cut_words(item, max(20, width - len(head) - len(more) - 12)))
            rest = len(items) - len(shown)
            return head + ", ".join(shown) + (f" … +{rest} more" if rest else "")
        shown.append(item)
    return head + ", ".join(shown)


def _shape(tables: list[tuple[str, str]], total: int) -> str:
    """Return the shape of the entry's tables: '48 rows × 5 columns', or the first and how many more (of total,
    the card's count when it shows only the first tables)."""
    parts = []
    for name, text in tables:
        found = _SHAPE.match(text)
        if not found:
            continue
        rows = f"{found['about'] or ''}{_grouped(found['rows'])} rows × " if found["rows"] else ""
        where = f" ({name})" if name and len(tables) > 1 else ""
        parts.append(f"{rows}{found['cols']} columns{found['rest'].replace(', no header', ', no header row')}{where}")
    if not parts:
        return ""
    more = max(total, len(parts)) - 1
    return parts[0] if not more else f"{parts[0]} and {more} more table{'s' * (more > 1)}"


def _grouped(number: str) -> str:
    """Return a card's row count with thousands separators ('304738' reads as '304,738'); '?' stays."""
    digits = number.replace(",", "")
    return f"{int(digits):,}" if digits.isdigit() else number


def _dataset_head(first: dict[str, str]) -> list[str]:
    """Return what a dataset's or table's hit says before its shape: its kind or file count; after the shape come
    its partitions, versions and a too-big file's way to read (_dataset_tail)."""
    path = first.get("path", "")
    if table := _TABLE.match(path):
        return [TABLE_NAMES[table["kind"]] + (", unreadable (its log or metadata cannot be read)"
                                               if table["unreadable"] else "")]
    if dataset := _DATASET.match(path):
        return [f"{dataset['n']} files"]
    return []


def _dataset_tail(first: dict[str, str]) -> list[str]:
    parts = []
    if first.get("partitions"):
        parts.append("partitions " + first["partitions"])
    if first.get("versions"):
        parts.append(first["versions"])
    if first.get("load"):
        parts.append("too big to load whole: query it with DuckDB")
    return parts


def _dates(text: str) -> str:
    """Return the first date range the card gives: 'date 2024-01-01 to 2024-11-25' (years or dates only), and a
    family's gaps after it: 'Timestamp 2013-11-29 to 2019-12-13 (1 gap 2019-04-11 to 2019-04-13)'."""
    parts = [part.strip() for part in text.split("; ")]
    gaps = next((part for part in parts if _GAPS.match(part)), "")  # a family's: what no member covers
    for part in parts:
        found = _DATE_RANGE.match(part)
        if found and not _GAPS.match(part):
            span = found["lo"] if found["lo"] == found["hi"] else f"{found['lo']} to {found['hi']}"
            return f"{found['col']} {span}".strip() + (f" ({gaps})" if gaps else "")
    return ""


def _fact(label: str, text: str, width: int) -> str:
    """Return one key fact: a 'column: a, b, c' pair of the card, or the label and its items."""
    if label in ("places", "values"):
        column, _, values = text.partition(": ")
        first_values = values.split("; ", 1)[0] if values else ""
        if first_values:
            return fit_items(column, first_values.split(", "), width)
    separator = ", " if label in ("units", "keys", "keywords", "satellites") else "; "
    return fit_items(label, text.split(separator), width)


def gist(card: str, width: int = WIDTH) -> list[str]:
    """Return up to three lines that say what the entry holds (empty when its card says nothing beyond its path)."""
    found = sections(card)
    first: dict[str, str] = {}
    tables: list[tuple[str, str]] = []
    facts: list[tuple[str, str]] = []
    for label, text in found:
        if label.startswith("table") and label != "tables":
            tables.append((label[6:].strip(), text))
        elif label in FACT_LABELS:
            if len(facts) < FACTS and text:
                facts.append((label, text))
        else:
            first.setdefault(label, text)
    head: list[str] = _dataset_head(first)
    family = _FAMILY.match(first.get("path", ""))
    if family:
        head.append(f"{family['n']} files" + (f", {family['rows']} rows in all" if family["rows"] else ""))
    total = int(_LEADING_NUMBER.match(first.get("tables", "")).group(0) or 0) or len(tables)
    shape = _shape(tables, total)
    if shape:
        head.append(shape)
    dates = _dates(first.get("dates", "") or (family["dates"] if family and family["dates"] else ""))
    if dates:  # before the member names: the period is what a question's selection checks first
        head.append(dates)
    head += _dataset_tail(first)
    if first.get("named"):  # 'columns named by omni2.text': where the numbered columns get their meanings
        head.append(first["named"])
    if first.get("title"):  # the title gets what the shape and the dates leave of the line
        room = width - sum(len(part) + 3 for part in head)
        head.insert(0, cut_words(first["title"], max(room, 30)))
    if family and family["names"]:  # the member names get what the rest leaves (the path's glob says their form)
        room = width - sum(len(part) + 3 for part in head)
        if room >= 20:
            head.append("names " + cut_words(family["names"], min(room - 6, FAMILY_NAMES)))
    lines = [cut_words(" · ".join(head), width)] if head else []
    if first.get("sheets"):
        lines.append(fit_items("sheets", first["sheets"].split("; "), width))
    if first.get("columns"):
        # one list of names over all tables: said as such, so stacked tables' headers do not read as one table's
        label = f"columns of the {total} tables" if total > 1 else "columns"
        lines.append(fit_items(label, first["columns"].split("; "), width))
    elif first.get("headings") and not first.get("sheets"):
        lines.append(fit_items("headings", first["headings"].split("; "), width))
    if first.get("text") and not first.get("columns"):  # a note or a script: its first words
        lines.append(cut_words(first["text"], width))
    if len(lines) < 3 and facts:
        lines.append(cut_words(" · ".join(_fact(label, text, width) for label, text in facts), width))
    return lines[:3]


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def matched_spans(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Return the (start, end) of each word of text that a query term matches (case and plural aside).

    A snake_case or camelCase word matches by any of its parts ('unit_price' for 'units'); the whole part is marked.
    """
    wanted = {_stem(t) for t in terms if t}
    if not wanted:
        return []
    spans = []
    for token in _TOKEN.finditer(text):
        start = token.start()
        for part in _CAMEL.split(token.group()):
            if part and _stem(part) in wanted:
                spans.append((start, start + len(part)))
            start += len(part)
    return spans


class TableSize(NamedTuple):
    """The rows and columns a card gives (None where it does not say); rows_exact is False when a count was
    estimated (a big file's, from its average line length)."""

    rows: int | None
    columns: int | None
    rows_exact: bool = True


def table_size(card: str) -> TableSize:
    """Return the rows and columns the card gives: its tables' rows summed (a family's rows in all) and the widest
    table's columns; None where the card does not say."""
    rows: int | None = None
    cols: int | None = None
    exact = True
    for label, text in sections(card):
        if label == "path" and (family := _FAMILY.match(text)) and family["rows"]:
            rows = int(family["rows"].replace(",", ""))
        elif label.startswith("table") and label != "tables" and (found := _SHAPE.match(text)):
            cols = max(cols or 0, int(found["cols"]))
            if found["rows"] and found["rows"].replace(",", "").isdigit() and not _FAMILY.match(card):
                rows = (rows or 0) + int(found["rows"].replace(",", ""))
                exact = exact and not found["about"]
    return TableSize(rows, cols, exact)
