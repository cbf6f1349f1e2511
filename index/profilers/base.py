"""What a profiler returns: plain facts about one file, JSON-serialisable, no SQLite or Chroma."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PROFILER_VERSION = 14  # bump to re-profile every file when profilers change what they extract


class ProfileError(Exception):
    """A file that cannot be read at all, or corrupt data of a known format: recorded as a failed file."""

    def __init__(self, message: str, kind: str = "corrupt") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind  # corrupt | unreadable | changed: how the indexer may classify the failure


# Read hints are Python expressions with this placeholder where the file's path goes (as a string literal).
PATH_PLACEHOLDER = "{path}"

# Columns past Limits.max_columns given the facts of a short line (type, missing, fill value, range): 400 in all,
# the columns a sheet reads. They cost little to find, and the description's own limits decide how many it shows.
LATER_COLUMNS = 340


@dataclass
class Limits:
    """Bounds every profiler honours so a 2 GB file costs what a 2 MB one does."""

    head_bytes: int = 1 << 20
    sample_rows: int = 5
    max_rows_scanned: int = 200_000
    max_columns: int = 60
    max_sheets: int = 30
    max_examples: int = 5
    max_bytes_full_read: int = 64 << 20

    @classmethod
    def from_settings(cls, section: dict[str, Any]) -> Limits:
        """Build limits from the [profile] settings section."""
        known = {k: section[k] for k in cls.__dataclass_fields__ if k in section}
        return cls(**known)


@dataclass
class Column:
    """One column of a table: its name, type and a few facts a coder or a question needs."""

    name: str
    dtype: str
    non_null: int | None = None
    nulls: int | None = None
    unique: int | None = None
    examples: list[Any] = field(default_factory=list)
    min: Any = None
    max: Any = None
    mean: float | None = None
    top_values: list[Any] = field(default_factory=list)  # most frequent values of a categorical column
    unit: str | None = None
    fill: Any = None  # a sentinel such as 9.99e+32 or -9999 standing for missing data (min/max/mean exclude it)
    fill_count: int | None = None  # cells holding the fill value
    # kinds of rows a text column mixes, by the words its values share at their end or start:
    # [["end", "Metropolitan Statistical Area", 380], ["end", "Micropolitan Statistical Area", 20]]
    kinds: list[Any] = field(default_factory=list)
    # what the values show where nothing else says (profilers/value_kinds.py): a code ('Kp-style codes: x10 on a
    # grid of thirds ...'), or a numbered column's kind ('years at their middle', 'a 0/1 flag (1 in 324 rows ...)')
    shows: str | None = None
    # holes in a column of times on a regular step (profilers/time_gaps.py): 'times every hour with 2 gap(s) ...'
    gaps: str | None = None


@dataclass
class Table:
    """A rectangular table inside a file: a csv, one sheet, a table on a sheet, an html table."""

    name: str | None = None  # sheet name, table title, or None for a whole-file table
    n_rows: int | None = None
    n_rows_exact: bool = True
    n_cols: int = 0
    columns: list[Column] = field(default_factory=list)
    # the columns past those described (limits.max_columns), up to LATER_COLUMNS more, with only what a short line
    # says (type, unit, missing, fill value, range, what the values show, gaps): a 179-column workbook's 147th
    # column, Log2_variant_per_Mbp, was a name without its range or its missing rows
    later_columns: list[Column] = field(default_factory=list)
    # [name, kind] of the columns past those (kind '' where the type is not known without a read): every name
    # reaches the description, so a coder never guesses one
    more_columns: list[list[str]] = field(default_factory=list)
    sample_rows: list[list[Any]] = field(default_factory=list)
    header_row: int | None = 0  # 0-based line/row of the header in the file or sheet; None = no header
    skip_rows: int = 0  # lines before the header (preamble)
    location: str | None = None  # e.g. "B3:H40" on a sheet
    read_hint: str | None = None  # one line of pandas that loads it
    duplicate_rows: int | None = None  # rows equal to an earlier row of the rows read (None: not computed)
    # the ROW_SKETCH smallest hashes of the distinct rows read: members of a family compare them to find the
    # rows they share (rolling windows, a metro area listed in each of its states' files) without a second read
    row_hashes: list[int] = field(default_factory=list)
    edge_hashes: list[int] = field(default_factory=list)  # hashes of the first and the last row (a shared boundary)
    # a table keyed by year (one row a year): its int columns' sums per year, which the folder's other tables are
    # checked against (types summing to more than the yearly total): {"key", "years", "columns", "sums"}
    year_sums: dict[str, Any] | None = None


@dataclass
class Profile:
    """Everything a profiler learned about one file."""

    format: str  # csv, tsv, xlsx, json, jsonl, parquet, markdown, html, text, fixed-width, npz, cdf, binary...
    size: int = 0
    encoding: str | None = None
    title: str | None = None
    headings: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text_sample: str | None = None  # printable head for text-like files
    structure: Any = None  # json structure tree, npz arrays, cdf variables...
    keywords: list[str] = field(default_factory=list)  # extra terms worth retrieving on (units, places, ...)
    notes: list[str] = field(default_factory=list)  # caveats a coder must know (preamble, encoding, sampling)
    read_hint: str | None = None  # how to load the file in Python
    sampled: bool = False  # stats come from a sample, not the whole file
    # [first, last] ISO times of the records of a record format without a table (SP3 epochs, TLE epochs): the
    # content's time coverage where no date column says it (a name's dates are checked against it: name_dates.py)
    time_span: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the profile as plain JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Profile:
        """Rebuild a profile stored as JSON."""
        data = dict(data)
        tables = []
        for t in data.pop("tables", []) or []:
            t = dict(t)
            cols = [Column(**c) for c in t.pop("columns", []) or []]
            later = [Column(**c) for c in t.pop("later_columns", []) or []]
            tables.append(Table(columns=cols, later_columns=later, **t))
        return cls(tables=tables, **data)

    def signature(self) -> str:
        """A schema signature: files of one family share it (format plus column names)."""
        parts = [self.format]
        for table in self.tables:
            parts.append((table.name or "") + ":" + "|".join(c.name for c in table.columns))
        if not self.tables and isinstance(self.structure, dict) and "keys" in self.structure:
            parts.append("|".join(map(str, self.structure["keys"])))
        return "\x1f".join(parts)
