"""Delimited text (csv, tsv, semicolon, pipe, whitespace): sniff the layout, then sample with pandas."""

from __future__ import annotations

import csv
import io
import re
import statistics
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits, Profile, Table
from dslake_index.profilers.codes import zero_led_codes
from dslake_index.profilers.coordinates import swapped_coordinates
from dslake_index.profilers.repeats import duplicate_rows_note
from dslake_index.profilers.stats import (
    _MONEY_PCT,
    _THOUSANDS,
    describe_columns,
    fill_notes,
    header_misfits,
    is_number_text,
    line_facts,
    name_notes,
    repeated_times,
    row_facts,
    sample_rows,
    share_totals,
    width_notes,
    year_outliers,
)
from dslake_index.profilers.textio import clip, count_lines, decode_head, detect_encoding, read_at
from dslake_index.profilers.title_months import checked_title
from dslake_index.profilers.totals import total_disagreements, year_sums

DELIMITERS = [",", "\t", ";", "|"]
WHITESPACE = r"\s+"
FORMAT_OF = {",": "csv", "\t": "tsv", ";": "csv", "|": "psv", WHITESPACE: "whitespace-separated"}
DELIM_NAME = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe", WHITESPACE: "whitespace"}
EXT_DELIM = {".tsv": "\t", ".tab": "\t", ".psv": "|", ".ssv": ";"}
SUMMARY_LABELS = {"total", "totals", "sum", "mean", "average", "avg", "max", "min", "maximum", "minimum", "median",
                  "std", "count", "grand total", "overall", "all"}
_DECIMAL_COMMA = re.compile(r"^-?\d{1,3}(\.\d{3})*,\d+$")
_GROUPED = re.compile(r"^-?\d{1,3}(,\d{3})+$")
_DOT_GROUPED = re.compile(r"^-?\d{1,3}(\.\d{3})+(,\d+)?$")
SNIFFER_LINES = 30  # lines of the body csv.Sniffer reads, header first
SNIFFER_CHARS = 8_000  # and at most this much (its regexes are slow on long samples)
SNIFF_LINES = 120  # lines looked at to find delimiter, preamble, header and footer
STRIDE_CHUNKS = 4  # extra chunks sampled across a file larger than the head
_COMMENT = re.compile(r"\s*#")  # \s is what str.isspace() accepts, so this is line.lstrip().startswith("#")
_CSV_SPECIAL = re.compile(r'["\r\n\x00]')  # where csv.reader's fields can differ from str.split's


@dataclass
class Layout:
    """How a delimited file is laid out: what pandas needs to read it."""

    sep: str = ","
    n_fields: int = 1
    header_line: int | None = 0  # physical line of the header; None = no header
    first_line: int = 0  # physical line where the header (or the first data row) is
    comment: bool = False
    decimal_comma: bool = False
    skipinitialspace: bool = False
    footer_lines: int = 0
    data_lines: int | None = None  # non-blank data lines between header and footer (whole file seen)
    preamble: list[str] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)
    group_rows: list[list[str]] = field(default_factory=list)  # labels above some header cells
    repeats: list[int] = field(default_factory=list)  # 1-based lines where the header line repeats
    sections: list[str] = field(default_factory=list)  # title lines of stacked tables
    notes: list[str] = field(default_factory=list)


def _split(line: str, sep: str) -> list[str]:
    if sep == WHITESPACE:
        return line.split()
    if not _CSV_SPECIAL.search(line):
        return line.split(sep) if line else []  # what csv.reader gives for such a line (see _split_many)
    try:
        return next(csv.reader([line], delimiter=sep), [])
    except csv.Error:
        return line.split(sep)


def _split_many(lines: list[str], sep: str) -> list[list[str]]:
    if sep == WHITESPACE:
        return [ln.split() for ln in lines]
    if not _CSV_SPECIAL.search("".join(lines)):
        # no quote and no character the csv module treats apart: its fields are the delimiter's pieces (and an
        # empty line no field), at C speed without the reader's per-field objects
        return [ln.split(sep) if ln else [] for ln in lines]
    try:
        rows = list(csv.reader(lines, delimiter=sep))
        if len(rows) == len(lines):
            return rows
    except csv.Error:
        pass
    return [_split(ln, sep) for ln in lines]


def _is_comment(line: str) -> bool:
    return _COMMENT.match(line) is not None  # line.lstrip().startswith("#") without copying the line


def _data_lines(lines: list[str]) -> list[str]:
    """Return the lines that are neither blank nor comments ('#' first), tested in C when none is a comment."""
    filled = list(compress(lines, map(str.strip, lines)))
    if not any(map(_COMMENT.match, filled)):
        return filled
    return [ln for ln in filled if not _is_comment(ln)]


def sniff_delimiter(lines: list[str], ext: str) -> tuple[str, int, float]:
    """Return (delimiter, fields per row, share of rows with that many fields) for sample lines."""
    body = _data_lines(lines[: SNIFF_LINES * 3])[:SNIFF_LINES]
    if not body:
        return ",", 1, 0.0
    tail = body[min(len(body) // 5, 10):] or body
    best = (",", 1, 0.0)
    candidates = list(DELIMITERS)
    preferred = EXT_DELIM.get(ext)
    if preferred:
        candidates.remove(preferred)
        candidates.insert(0, preferred)
    for sep in candidates:
        if not any(sep in ln for ln in tail[:50]):
            continue
        counts = list(map(len, _split_many(tail, sep)))
        mode = statistics.mode(counts)
        if mode < 2:
            continue
        share = sum(1 for c in counts if c == mode) / len(counts)
        # clearly more consistent wins; equally consistent with more fields wins ("a;10,5" is ';' with a
        # decimal comma, not ',')
        if share > best[2] + 0.05 or (best[1] == 1 and share >= 0.5) or (share >= best[2] - 0.05 and mode > best[1]):
            best = (sep, mode, share)
    sniffed = _sniffed(body)  # with the header line: it has as many fields as the rows under the right delimiter
    if sniffed is not None and sniffed != best[0]:
        # csv.Sniffer weighs how evenly each character recurs line by line: it tells '\t' from the ',' of
        # thousands separators ("2024\t64,897\t8,924,884"), where our field counting prefers the ','
        counts = list(map(len, _split_many(tail, sniffed)))
        mode = statistics.mode(counts)
        share = sum(1 for c in counts if c == mode) / len(counts)
        if mode >= 2 and share >= 0.9:
            best = (sniffed, mode, share)
    if best[1] == 1 or best[2] < 0.6:
        counts = [len(ln.split()) for ln in tail]
        mode = statistics.mode(counts)
        share = sum(1 for c in counts if c == mode) / len(counts)
        if mode >= 2 and share >= 0.8 and share > best[2]:
            best = (WHITESPACE, mode, share)
    return best


def _sniffed(lines: list[str]) -> str | None:
    """Return the delimiter the standard library's csv.Sniffer picks among ours, or None when it cannot tell."""
    sample = "\n".join(lines[:SNIFFER_LINES])[:SNIFFER_CHARS]
    if sum(1 for d in DELIMITERS if d in sample) < 2:
        return None  # one candidate only: nothing for the sniffer to decide (most files, and it costs ~2 ms)
    try:
        return csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS)).delimiter
    except csv.Error:
        return None


def _cell_kind(cell: str) -> str:
    c = cell.strip()
    if not c:
        return "empty"
    if is_number_text(c) or _THOUSANDS.match(c) or (_MONEY_PCT.match(c) and any(ch.isdigit() for ch in c)):
        return "number"
    return "text"


def _yearlike(cell: str) -> bool:
    c = cell.strip()
    return c.isdigit() and len(c) == 4 and 1500 <= int(c) <= 2200


def has_header(first: list[str], data: list[list[str]]) -> bool:
    """Decide whether the first full row names the columns (csv.Sniffer's idea, made tolerant)."""
    if not data:
        return all(_cell_kind(c) == "text" for c in first if c.strip())
    width = len(first)
    numeric_cols, votes_data = 0, 0
    kind_of: dict[str, str] = {}  # a column repeats its values (flags, fills, years): each is judged once
    if all(len(r) >= width for r in data):  # every row full (most files): the columns in one pass, in C
        columns: list[Any] = list(zip(*data, strict=False))[:width]  # rows longer than the header: cut
    else:
        columns = [[r[j] for r in data if j < len(r)] for j in range(width)]
    for j, column in enumerate(columns):
        cells = list(compress(column, map(str.strip, column)))  # the non-blank cells
        if not cells:
            continue
        for c in set(cells).difference(kind_of):
            kind_of[c] = _cell_kind(c)
        if list(map(kind_of.__getitem__, cells)).count("number") >= 0.7 * len(cells):
            numeric_cols += 1
            h = first[j] if j < len(first) else ""
            if _cell_kind(h) == "number" and not (_yearlike(h) and not all(_yearlike(c) for c in cells)):
                votes_data += 1
    if numeric_cols:
        return votes_data * 2 < numeric_cols
    cells = [c.strip() for c in first]
    if not all(cells) or len(set(cells)) < len(cells):
        return False
    for j, h in enumerate(cells):
        if any(j < len(r) and r[j].strip() == h for r in data[:50]):
            return False
    return True


def find_layout(lines: list[str], ext: str, whole: bool) -> Layout:
    """Find delimiter, preamble, header, comments and footer from the first lines of a file."""
    sep, n_fields, _share = sniff_delimiter(lines, ext)
    lay = Layout(sep=sep, n_fields=n_fields)
    limit = min(len(lines), SNIFF_LINES)
    split = _split_many(lines[:limit], sep)
    head = lines[:limit]
    if any(map(_COMMENT.match, head)):
        rows = [r if ln.strip() and not _is_comment(ln) else None for ln, r in zip(head, split, strict=True)]
    else:  # no comment line (most files): a row wherever the line is not blank
        rows = [r if filled else None for r, filled in zip(split, map(str.strip, head), strict=True)]
    fills = [len(r) - r.count("") if r is not None else -1 for r in rows]  # blank-only cells count as filled
    full = [f for r, f in zip(rows, fills, strict=True) if r is not None and len(r) == n_fields and f > 0]
    typical = statistics.median(full) if full else n_fields
    need = max(1, min(n_fields, round(0.6 * typical))) if n_fields > 1 else 1
    if n_fields > 1:
        need = max(need, 2)
    first = next((i for i, r in enumerate(rows) if r is not None and fills[i] >= need), None)
    if first is None:
        first = next((i for i, r in enumerate(rows) if r is not None), 0)
    lay.first_line = first
    lay.preamble = [" / ".join(c.strip() for c in _split(ln, sep) if c.strip()) for ln in lines[:first]][:8]
    data = [r for r in rows[first + 1 : first + 20] if r is not None]
    lay.header_line = first if has_header(rows[first] or [], data) else None
    after = lines[first + 1 : limit]
    if any(map(_COMMENT.match, after)):
        if any("#" in ln for ln in lines[first:limit] if not _is_comment(ln)):
            lay.notes.append("some lines further down start with '#' (comments); '#' also occurs in data, "
                             "so comment='#' would cut fields: drop those rows after loading")
        else:
            lay.comment = True
    if sep in (";", "\t", "|") and data:
        cells = [c.strip() for r in data for c in r if c.strip()]
        commas = [c for c in cells if _DECIMAL_COMMA.match(c)]
        # '2,911' with exactly three digits after every comma is a thousands separator, not 2.911
        grouped = all(_GROUPED.match(c) for c in commas)
        lay.decimal_comma = len(commas) >= 3 and len(commas) >= 0.2 * len(cells) and not grouped
    if sep != WHITESPACE and data:
        later = [f for r in data for f in r[1:] if f]
        if later and sum(map(str.startswith, later, repeat(" "))) >= 0.3 * len(later):
            lay.skipinitialspace = True
    data_start = first + (1 if lay.header_line is not None else 0)
    body = [f for f in fills[first + 1 :] if f > 0]
    # The table's rows fill two cells or more: then one-cell lines at its end are notes. A short table's own
    # rows are judged from its top (a state's two rows under four note lines have a median of 1.5 filled cells,
    # and the notes were counted as rows: 476 rows in a family whose data rows are 452).
    top = [f for f in fills[first : first + 2] if f > 0]  # the header and the first row
    if whole and n_fields > 1 and body and (statistics.median(body) >= 2 or (len(top) == 2 and min(top) >= 2)):
        _find_footer(lay, lines, data_start)
    if lay.header_line is not None:
        _find_sections(lay, lines, first)
    lay.group_rows = [r for r in rows[:first] if r is not None and len(r) == n_fields
                      and 1 < sum(1 for c in r if c.strip()) < n_fields]
    return lay


def _is_summary(cells: list[str]) -> bool:
    return bool(cells) and cells[0].lower().rstrip(":") in SUMMARY_LABELS


def _find_footer(lay: Layout, lines: list[str], data_start: int) -> None:
    """Find trailing notes (one long cell) and summary rows (Total, Mean, Max ...) after the data."""
    sep = lay.sep
    end = len(lines)
    while end > data_start and not lines[end - 1].strip():
        end -= 1
    k = end
    while k > data_start + 1:
        r = _split(lines[k - 1], sep)
        cells = [c.strip() for c in r if c.strip()]
        note = len(cells) == 1 and (len(cells[0]) > 25 or r[0].strip() != cells[0])
        if not cells or note or _is_summary(cells):
            k -= 1
            continue
        break
    if k < end and any(ln.strip(sep + " ") for ln in lines[k:end]):
        shown = [" ".join(c.strip() for c in _split(ln, sep) if c.strip()) for ln in lines[k:end]]
        lay.footer = [f for f in shown if f][:4]
        lay.footer_lines = end - k
        lay.data_lines = sum(1 for ln in lines[data_start:k] if ln.strip() and not _is_comment(ln))


def _find_sections(lay: Layout, lines: list[str], first: int) -> None:
    """Find a header line repeated further down: stacked tables, each usually under a one-cell title line."""
    header = lines[first].strip()
    stop = first + 1 + (lay.data_lines or len(lines))
    end = min(len(lines), stop)
    if header not in "\n".join(lines[first + 1 : end]):  # a line equal to the header holds it: C speed for most
        return
    repeats = [i for i in range(first + 1, end) if lines[i].strip() == header]
    if not repeats:
        return
    titles = []
    for i in [first, *repeats]:
        j = i - 1
        while j >= 0 and not lines[j].strip(lay.sep + " \"\r"):
            j -= 1
        cells = [c.strip() for c in _split(lines[j], lay.sep) if c.strip()] if j >= 0 else []
        if len(cells) == 1 and j != first:
            titles.append(cells[0][:80])
    lay.sections = titles
    lay.repeats = [i + 1 for i in repeats]


def read_kwargs(lay: Layout, encoding: str) -> dict[str, Any]:
    """Return the pandas.read_csv keyword arguments that load the table correctly."""
    kw: dict[str, Any] = {}
    if lay.sep != ",":
        kw["sep"] = lay.sep
    if lay.first_line:
        kw["skiprows"] = lay.first_line
    if lay.header_line is None:
        kw["header"] = None
    if encoding not in ("utf-8",):
        kw["encoding"] = encoding
    if lay.comment:
        kw["comment"] = "#"
    if lay.skipinitialspace:
        kw["skipinitialspace"] = True
    if lay.decimal_comma:
        kw["decimal"] = ","
    if lay.data_lines is not None:
        kw["nrows"] = lay.data_lines
    return kw


def hint_of(kw: dict[str, Any], func: str = "pd.read_csv") -> str:
    """Render a pandas call with the path placeholder and keyword arguments in a stable order."""
    order = ["sep", "skiprows", "header", "names", "usecols", "encoding", "comment", "skipinitialspace", "decimal", "thousands",
             "na_values", "nrows", "compression"]
    parts = [PATH_PLACEHOLDER] + [f"{k}={kw[k]!r}" for k in order if k in kw]
    if kw.get("dtype"):  # {'zip': str}: written as code, not as the repr of the str class
        parts.append("dtype={" + ", ".join(f"{c!r}: str" for c in kw["dtype"]) + "}")
    return f"{func}({', '.join(parts)})"


def _parse(text: str, kw: dict[str, Any]) -> tuple[Any, list[str]]:
    import pandas as pd

    kw = {k: v for k, v in kw.items() if k not in ("encoding", "compression")}
    try:
        return pd.read_csv(io.StringIO(text), **kw), []
    except pd.errors.EmptyDataError:
        return pd.DataFrame(), ["no columns could be parsed: the file holds no delimited data"]
    except (pd.errors.ParserError, ValueError, IndexError):
        df = pd.read_csv(io.StringIO(text), on_bad_lines="skip", engine="python", **kw)
        return df, ["some lines have a different number of fields than the header: pass on_bad_lines='skip' "
                    "(or engine='python') to load the rest"]


# A read of some columns (usecols) stands for the whole read's columns when both are one chunk of pandas' C
# reader: it infers types chunk by chunk, and a chunk holds about 2**19 / (fields per row) rows or more.
_ONE_CHUNK_CELLS = 1 << 18
# na_values markers that a numeric or boolean column could hold as a value (pandas reads 'inf' as a float)
_VALUE_WORDS = ("inf", "nan", "true", "false")


def _read_columns(text: str, kw: dict[str, Any], df: Any, positions: list[int], lay: Layout) -> Any | None:
    """Return the columns at positions of df read again with kw (usecols), named as in df; None when such a
    read could differ from the same columns of a whole read with kw (the caller then reads the whole table)."""
    import pandas as pd

    index = df.index
    if not positions or not isinstance(index, pd.RangeIndex) or index.start != 0 or index.step != 1:
        return None  # no columns, or a first column pandas took for the index: positions are not the file's
    used = kw.get("usecols")
    if used is not None and list(used) != list(range(len(used))):
        return None
    width = max(len(df.columns), lay.n_fields) + 1
    if (len(df) + max(lay.first_line, kw.get("skiprows", 0)) + 2) * width >= _ONE_CHUNK_CELLS:
        return None
    try:
        part, notes = _parse(text, {**kw, "usecols": positions})
    except Exception:  # the whole read will say what is wrong
        return None
    if notes or len(part) != len(df) or len(part.columns) != len(positions):
        return None
    part.columns = [df.columns[j] for j in positions]  # mangled and 'Unnamed: N' names are the whole read's
    return part


def _with_columns(df: Any, part: Any, positions: list[int]) -> Any:
    """Return df with the columns at positions replaced by part's (same rows, same names)."""
    out = df.copy(deep=False)
    for k, j in enumerate(positions):
        out.isetitem(j, part.iloc[:, k])
    return out


def load_frame(text: str, kw: dict[str, Any], lay: Layout) -> tuple[Any, dict[str, Any], list[str]]:
    """Parse a table, adding thousands= and na_values= when its text columns need them; return df, kw, notes.

    Each later read (with thousands= or na_values=, every number column as text for the zero-led codes, then the
    codes as text) changes only some columns: those are read alone (usecols) and put into the first frame, which
    is what a whole read gives (pandas converts each column by itself), unless _read_columns cannot vouch for it.
    """
    df, notes = _parse(text, kw)
    clean = not notes  # pandas' C reader read it as it stands: no line skipped
    extra: dict[str, Any] = {}
    # text columns among the first 200, picked by dtype: df.items() builds a Series for every column first
    distinct = _DistinctText(df)
    # Without a quote in the text, the C reader splits at every ',' of a comma-separated table: no cell holds a
    # ',' and none can match _THOUSANDS (the check then reads no text column's values at all).
    commas_split = kw.get("sep", ",") == "," and '"' not in text
    if not lay.decimal_comma and not commas_split and any(any(map(_THOUSANDS.match, vals))
                                                          for vals in distinct.all().values()):
        extra["thousands"] = ","
    elif lay.decimal_comma and any(any(map(_DOT_GROUPED.match, vals)) for vals in distinct.all().values()):
        extra["thousands"] = "."  # '1.234,5' with a decimal comma groups thousands with '.'

    na = [t for t in _na_tokens(distinct) if t not in {str(c).strip() for c in df.columns}]
    if na:
        extra["na_values"] = na
    if extra:
        kw = {**kw, **extra}
        # thousands= and na_values= change text columns only: a number column holds no ',' group and no marker
        # without digits, unless the marker is a word pandas reads as a value ('inf', 'True')
        text_cols = [j for j, d in enumerate(df.dtypes) if d.kind == "O"]
        part = None
        if clean and not any(w in t.lower() for t in na for w in _VALUE_WORDS):
            part = _read_columns(text, kw, df, text_cols, lay)
        if part is not None:
            df = _with_columns(df, part, text_cols)
        else:
            df, notes = _parse(text, kw)
    if extra.get("thousands") == ",":
        notes.append("numbers are written with ',' thousands separators (e.g. \"1,299\"): pass thousands=','")
    elif extra.get("thousands"):
        notes.append("numbers are written with '.' thousands separators (e.g. \"1.234,5\"): pass thousands='.'")
    if na:
        notes.append(f"numeric columns use {na} for missing values: pass na_values={na!r}")
    number_cols = [j for j, d in enumerate(df.dtypes) if d.kind in "iuf"]
    as_text: Any = None

    def read_as_text() -> Any:
        nonlocal as_text
        # the number columns are the only ones zero_led_codes reads as text
        as_text = _read_columns(text, {**kw, "dtype": str}, df, number_cols, lay) if clean else None
        return as_text if as_text is not None else _parse(text, {**kw, "dtype": str})[0]

    codes = zero_led_codes(df, read_as_text, text)
    if codes:
        kw = {**kw, "dtype": {c: str for c in codes}}
        where = {c: j for j, c in enumerate(df.columns)}
        if as_text is not None and all(c in where and c in as_text.columns for c in codes):
            positions = sorted(where[c] for c in codes)
            df = _with_columns(df, as_text[[df.columns[j] for j in positions]], positions)
        else:
            df, _ = _parse(text, kw)
        names = ", ".join(f"{c!r}" for c in codes[:5])
        first = codes[0]
        example = next((str(v) for v in df[first].dropna() if str(v).startswith("0")), "") if first in df else ""
        notes.append(f"codes with leading zeros in {names}" + (f" (e.g. {example!r})" if example else "")
                     + f": read as text with dtype={{{', '.join(f'{c!r}: str' for c in codes)}}}, as numbers they "
                     "would lose the zeros")
    return df, kw, notes


def _distinct_text(s: Any, limit: int = 500, rows: int = 3000) -> list[str]:
    """Return up to 500 distinct stripped strings of a text column's first 3,000 cells (checks run on these, not
    every cell)."""
    if s.dtype.kind != "O":
        return []
    return [str(v).strip() for v in s.iloc[:rows].dropna().unique()[:limit].tolist()]


class _DistinctText:
    """_distinct_text of the text columns among a frame's first 200, each computed when a check first needs it."""

    HEAD = 20  # the values _na_tokens looks at first
    HEAD_ROWS = 100  # cells whose distinct values usually include the first HEAD

    def __init__(self, df: Any) -> None:
        self.df = df
        self.text = {df.columns[j]: j for j, d in enumerate(df.dtypes[:200]) if d.kind == "O"}
        self.full: dict[Any, list[str]] = {}

    def values(self, name: Any) -> list[str]:
        """Return _distinct_text of the column (empty for a column that is not text)."""
        if name not in self.full:
            j = self.text.get(name)
            self.full[name] = [] if j is None else _distinct_text(self.df.iloc[:, j])
        return self.full[name]

    def head(self, name: Any) -> list[str]:
        """Return values(name)[:HEAD], from the first HEAD_ROWS cells when they hold that many distinct values
        (distinct values come in the order they first appear, so a prefix's first HEAD are the column's)."""
        if name in self.full or name not in self.text:
            return self.values(name)[: self.HEAD]
        s = self.df.iloc[:, self.text[name]]
        found = _distinct_text(s, self.HEAD, self.HEAD_ROWS)
        if len(found) >= self.HEAD or len(s) <= self.HEAD_ROWS:
            return found
        return self.values(name)[: self.HEAD]

    def all(self) -> dict[Any, list[str]]:
        """Return every text column's values by name."""
        return {name: self.values(name) for name in self.text}


def _na_tokens(distinct: _DistinctText) -> list[str]:
    tokens: set[str] = set()
    for name in distinct.text:  # the text columns among the first 200: any other has no values to look at
        head = distinct.head(name)
        if not head or sum(1 for v in head if is_number_text(v) or _THOUSANDS.match(v)) < 0.5 * len(head):
            continue
        vals = distinct.values(name)
        bad = [v for v in vals if not (is_number_text(v) or _THOUSANDS.match(v))]
        # markers like 'M', 'NA', '-', 'n/a', '*' in an otherwise numeric column: never text with digits
        if bad and len(bad) <= 3 and len(vals) - len(bad) >= max(2, 0.8 * len(vals) - 3):
            if all(0 < len(t) <= 12 and not any(ch.isdigit() for ch in t) for t in bad):
                tokens |= set(bad)
    return sorted(tokens)[:8]


def _stride_sample(path: Path, size: int, start: int, kw: dict[str, Any], names: list[str], enc: str,
                   chunk: int, seen: list[int]) -> list[Any]:
    """Parse chunks spread over the file; add their byte and line counts to seen (for a row estimate)."""
    frames = []
    # Chunks a quarter of the rest apart never overlap (the caller reads a rest of four chunks or less whole): an
    # overlap counted its rows twice, and a description's value counts then added up to more than the table holds.
    step = (size - start) // STRIDE_CHUNKS
    ckw = {k: v for k, v in kw.items() if k not in ("skiprows", "nrows", "header")}
    for i in range(STRIDE_CHUNKS):
        raw = read_at(path, start + i * step, min(chunk, step))
        text = raw.decode(enc, errors="replace")
        lines = text.split("\n")[1:-1]  # drop the cut first and last lines
        if not lines:
            continue
        seen[0] += sum(len(ln.encode(enc, errors="replace")) + 1 for ln in lines)
        seen[1] += len(lines)
        try:
            df, _ = _parse("\n".join(lines), {**ckw, "header": None, "names": names})
        except Exception:  # a chunk that starts inside a quoted field can be unparseable; skip it
            continue
        frames.append(df)
    return frames


def _rest_frame(path: Path, start: int, size: int, kw: dict[str, Any], names: list[str], enc: str) -> Any | None:
    """Parse every line from start (a line's first byte) to the end of the file, or None when it will not parse."""
    text = read_at(path, start, size - start).decode(enc, errors="replace")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    lines = [ln for ln in lines if ln.strip()]
    if not lines:
        return None
    ckw = {k: v for k, v in kw.items() if k not in ("skiprows", "nrows", "header")}
    try:
        df, _ = _parse("\n".join(lines), {**ckw, "header": None, "names": names})
    except Exception:  # a footer or a stray quote the head did not show: fall back to the head's stats
        return None
    return df


def profile_delimited(path: Path | None, head: bytes, size: int, limits: Limits, ext: str,
                      encoding: str | None = None, extra_notes: list[str] | None = None) -> Profile:
    """Profile a delimited text file from its head (plus strided chunks and a line count when large)."""
    import pandas as pd

    whole = len(head) >= size
    notes: list[str] = list(extra_notes or [])
    if encoding is None:
        encoding, enc_notes = detect_encoding(path, head, size, limits.max_bytes_full_read)
        notes += enc_notes
    text = decode_head(head, encoding, whole)
    if text.startswith("\ufeff"):
        text = text[1:]
    crlf = "\r" in text
    # each line without its '\n' and one '\r' before it: '\r\n' ends lines in C, a last line's '\r' by hand
    lines = (text.replace("\r\n", "\n") if crlf else text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if crlf and lines and lines[-1].endswith("\r"):
        lines[-1] = lines[-1][:-1]
    from dslake_index.profilers import family_layout  # it builds on this module's layout functions

    lay = family_layout.known_layout(path, ext, lines, whole)  # a family's member: its first member's search
    if lay is None:
        lay = find_layout(lines, ext, whole)
        family_layout.remember(path, ext, lines, lay)
    if whole and lay.n_fields > 1 and lay.sep != WHITESPACE:
        from dslake_index.profilers import stacked  # it builds on this module's layout functions

        stack = stacked.stack_of(lines, lay)
        if stack is not None:  # each table's own lines say what to skip: the one-table notes do not apply
            return stacked.profile_stacked(text, lay, stack, encoding, size, limits, notes)
    notes += lay.notes
    kw = read_kwargs(lay, encoding)
    df, kw, frame_notes = load_frame(text, kw, lay)
    notes += frame_notes
    table = Table(n_cols=len(df.columns), header_row=lay.header_line, skip_rows=lay.first_line)
    if lay.preamble:
        shown = " | ".join(clip(p, 300) for p in lay.preamble if p)
        notes.append(f"{lay.first_line} line(s) before the {'header' if lay.header_line is not None else 'data'} "
                     f"(skip them with skiprows={lay.first_line}): {shown}")
    if lay.footer:
        notes.append(f"the last {lay.footer_lines} line(s) are notes or summary rows, not data (nrows="
                     f"{lay.data_lines} stops before them): " + " | ".join(clip(f, 1000) for f in lay.footer))
    if lay.repeats:
        notes.append(f"several stacked tables: the header line repeats at line(s) {', '.join(map(str, lay.repeats[:10]))}"
                     + (f" under section titles {', '.join(repr(t) for t in lay.sections[:10])}" if lay.sections else "")
                     + f"; after loading, drop the repeated header rows (where column {str(df.columns[0])!r} equals "
                       f"{str(df.columns[0])!r}) and the title rows (only the first cell filled)")
    for r in lay.group_rows[:2]:
        labels = [f"{c.strip()!r} above {str(df.columns[j])!r}" for j, c in enumerate(r)
                  if c.strip() and j < len(df.columns)]
        notes.append("a label row above the header groups columns: " + ", ".join(labels[:12]))
    if lay.header_line is None:
        notes.append("no header row: columns are numbered 0..n-1 (header=None)")
    if lay.skipinitialspace:
        notes.append("fields start with spaces after the delimiter: pass skipinitialspace=True")
    if lay.decimal_comma:
        notes.append("numbers use a decimal comma (e.g. 3,14): pass decimal=','")
    if any(str(c).startswith("Unnamed: ") for c in df.columns):
        notes.append("some header cells are empty (pandas names them 'Unnamed: N')")
    notes += name_notes([str(c) for c in df.columns]) + header_misfits(df) + year_outliers(df) + swapped_coordinates(df)
    stats_df = df
    sampled = every_row = False
    if whole:
        table.n_rows, table.n_rows_exact = len(df), True
    else:
        sampled = True
        data_start = lay.first_line + (1 if lay.header_line is not None else 0)
        head_lines = len(list(compress(lines[data_start:], map(str.strip, lines[data_start:]))))
        start = len(head)
        seen = [len(text.encode(encoding, errors="replace")), max(1, len(lines))]
        chunk = limits.head_bytes // 4
        rest_from = head.rfind(b"\n") + 1  # the head's text ends at its last newline
        single_byte_newline = "16" not in encoding and "32" not in encoding
        if path is not None and single_byte_newline and 0 < rest_from and size - rest_from <= STRIDE_CHUNKS * chunk:
            # The rest is no more than the chunks would read: read it whole, and the stats are the table's own.
            rest = _rest_frame(path, rest_from, size, kw, list(df.columns), encoding)
            if rest is not None and not lay.footer:
                stats_df = pd.concat([df, rest], ignore_index=True)
                every_row = True
        elif path is not None:
            frames = _stride_sample(path, size, start, kw, list(df.columns), encoding, chunk, seen)
            if frames:
                stats_df = pd.concat([df, *frames], ignore_index=True)
        if path is not None and size <= limits.max_bytes_full_read:
            total = count_lines(path, size)
            table.n_rows = max(0, total - data_start)
            table.n_rows_exact = head_lines == len(df) and all(map(str.strip, lines[data_start:]))
            how = f"counting {total:,} lines"
            if head_lines and len(df) != head_lines:  # quoted fields over several lines: rows are fewer than lines
                table.n_rows = round(table.n_rows * len(df) / head_lines)
                how += f" and the head's {len(df) / head_lines:.2f} rows per line (quoted fields span lines)"
            if every_row:
                notes.append(f"stats come from every row ({len(stats_df):,}); the row count is from {how}")
            else:
                notes.append(f"stats come from the first {len(df):,} rows" + (" and 4 chunks spread over the file"
                             if stats_df is not df else "") + f"; the row count is from {how}")
        else:
            per_line = max(1.0, seen[0] / seen[1])
            table.n_rows = int(size / per_line) - data_start if path is not None else None
            table.n_rows_exact = False
            notes.append(f"large file: stats come from the first {len(df):,} rows"
                         + (" and chunks spread over the file" if stats_df is not df else "")
                         + "; the row count is estimated from the average line length")
    describe_columns(table, stats_df, limits)
    notes += fill_notes(table.columns + table.later_columns) + repeated_times(table.columns) + share_totals(df)
    notes += total_disagreements(lay.footer + [p for p in lay.preamble if p], [("the table", df)])
    if table.n_rows == len(df):
        table.year_sums = year_sums(df)
    if whole and lay.data_lines is None and not lay.repeats and not lay.comment:
        data_start = lay.first_line + (1 if lay.header_line is not None else 0)
        rest = lines[data_start:]
        body = list(compress(rest, map(str.strip, rest)))  # the non-blank lines, in C
        if len(body) == len(df):  # one line per row (no quoted line breaks): the lines are the rows
            table.duplicate_rows, table.row_hashes, table.edge_hashes = line_facts(body)
    elif whole and lay.data_lines is not None and len(df) == lay.data_lines:
        data_start = lay.first_line + (1 if lay.header_line is not None else 0)
        body = [ln for ln in lines[data_start:] if ln and not ln.isspace() and not _is_comment(ln)][: lay.data_lines]
        table.duplicate_rows, table.row_hashes, table.edge_hashes = line_facts(body)
    hashed = len(body) if table.row_hashes else len(stats_df)
    if table.duplicate_rows is None:
        table.duplicate_rows, table.row_hashes = row_facts(stats_df)
    notes += duplicate_rows_note(table.duplicate_rows, hashed, whole=table.n_rows_exact and hashed == table.n_rows)
    table.sample_rows = sample_rows(df, limits)
    table.read_hint = hint_of(kw)
    notes += width_notes(len(df.columns), limits)
    title = None
    if lay.preamble:
        title, month_notes = checked_title(next((p for p in lay.preamble if p), None), stats_df)
        notes += month_notes
    fmt = FORMAT_OF[lay.sep]
    if lay.sep != "," or len(df.columns) > 1:
        notes.insert(0, f"{DELIM_NAME[lay.sep]}-delimited text, {len(df.columns)} columns")
    return Profile(format=fmt, size=size, encoding=encoding, title=title, tables=[table], notes=notes,
                   read_hint=table.read_hint, sampled=sampled,
                   headings=[p for p in lay.preamble[1:] if p][:5] + lay.sections[:10])
