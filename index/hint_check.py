"""Execute every load hint a description gives and compare what it loads with what the description says.

A description is only as good as its `load:` line: the coder runs it as written and trusts the shape and the
column names printed under it. This module runs each hint against the real file and reports, per table, what
differs (rows, columns, names, delimiters left inside values, numbers left as text, header rows inside the data).
`check_profile` runs in this process (tests); `check_files` profiles and checks files in worker processes with a
per-file timeout, since a hint that reads a big file can take long (benchmarks/load_hints.py); those workers, and
the datasets' checks, are a confined server's (index/confined_pool.py), whose answers are JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dslake_index import load_hint
from dslake_index.profilers.base import PATH_PLACEHOLDER, Limits, Profile, ProfileError, Table
from dslake_index.profilers.stats import LOADS_AS_TEXT

# Mismatch kinds, in the order a report lists them.
KINDS = ("error", "timeout", "not-a-table", "rows", "columns", "column-names", "numeric-dtype", "numbers-as-text",
         "decimal-comma", "delimiter-in-values", "header-in-data", "not-in-description")
ROWS_TOLERANCE = 0.25  # an approximate row count may be this far off (a share of the count)
_NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
_THOUSANDS = re.compile(r"^\s*[-+]?\d{1,3}(,\d{3})+(\.\d+)?\s*$|^\s*[-+]?\d{1,3}(\.\d{3})*,\d+\s*$")
_GROUPED = re.compile(r"^[-+]?\d{1,3}(,\d{3})+$")  # '2,911': three digits after every comma
_NUMERIC_LIKE = re.compile(r"^\s*[-+]?[$€£]?\s*[-+]?[\d,]*\.?\d+\s*(%|[kKmMbB]n?)?\s*$")  # 12, 1,299, $5M, 23%
VALUES_LOOKED_AT = 300  # cells per column the value checks read (enough to see a pattern, cheap on big tables)


@dataclass
class Mismatch:
    """One way a hint's result differs from its description."""

    kind: str
    where: str  # "table 2", "file"
    detail: str


@dataclass
class FileCheck:
    """The hints of one file: how many ran, how many matched, and what differed."""

    path: str
    format: str | None = None
    hints: int = 0
    executed: int = 0
    matched: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)
    skipped: str | None = None  # why the file has no profile to check (a recorded failure)

    @property
    def ok(self) -> bool:
        """Return True when every hint executed and matched its description."""
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        """Return the check as JSON-ready data."""
        return asdict(self)


def run_hint(hint: str, path: Path, overrides: dict[str, Any] | None = None) -> Any:
    """Run a stored read hint on path: parsed into its safe form (index/load_hint.py) and called, never evaluated.

    Raises load_hint.HintRefused for a hint that is not of that form (a poisoned or hand-edited catalog).
    """
    return load_hint.run(load_hint.parse(hint), path, overrides=overrides)


def check_profile(profile: Profile, path: Path, relpath: str) -> FileCheck:
    """Run each table's load hint (and the file's own hint) on path; compare with the profile and its description."""
    from dslake_index.cards import describe, hint_line, shape_text

    result = FileCheck(path=relpath, format=profile.format)
    description = describe(profile, relpath)
    table_hints = {t.read_hint for t in profile.tables}
    for i, table in enumerate(profile.tables):
        if not table.read_hint:
            continue
        where = f"table {i + 1}"
        result.hints += 1
        try:
            loaded = run_hint(table.read_hint, path)
        except Exception as exc:  # the hint is what we test: any failure of it is a finding, not a crash
            result.mismatches.append(Mismatch("error", where, _error_text(exc)))
            continue
        result.executed += 1
        found = compare(loaded, table, where, path)
        if i < 12 and hint_line(table, relpath) not in description:
            found.append(Mismatch("not-in-description", where, "the load line is cut from the description"))
        elif i < 12 and shape_text(table) not in description:
            found.append(Mismatch("not-in-description", where, f"'{shape_text(table)}' is not in the description"))
        result.mismatches += found
        result.matched += not found
    if profile.read_hint and profile.read_hint not in table_hints:
        result.hints += 1
        try:
            run_hint(profile.read_hint, path)
        except Exception as exc:  # the hint is what we test: any failure of it is a finding, not a crash
            result.mismatches.append(Mismatch("error", "file", _error_text(exc)))
        else:
            result.executed += 1
            result.matched += 1
    return result


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"


def compare(df: Any, table: Table, where: str, path: Path) -> list[Mismatch]:
    """Return what differs between a described table and what its hint loaded."""
    import pandas as pd

    if isinstance(df, pd.Series):
        df = df.to_frame()
    if not isinstance(df, pd.DataFrame):
        return [Mismatch("not-a-table", where, f"the hint returns {type(df).__name__}, not a DataFrame")]
    out: list[Mismatch] = []
    if len(df.columns) != table.n_cols:
        out.append(Mismatch("columns", where, f"{len(df.columns)} columns loaded, {table.n_cols} described"))
    names = [str(c) for c in df.columns[: len(table.columns)]]
    described = [c.name for c in table.columns]
    if names != described:
        diff = next((j for j, (a, b) in enumerate(zip(names, described, strict=False)) if a != b), len(names))
        got = names[diff] if diff < len(names) else None
        want = described[diff] if diff < len(described) else None
        out.append(Mismatch("column-names", where, f"column {diff}: loaded {got!r}, described {want!r}"))
    if table.n_rows is not None:
        n = len(df)
        off = abs(n - table.n_rows) > (ROWS_TOLERANCE * table.n_rows if not table.n_rows_exact else 0)
        if off:
            exact = "" if table.n_rows_exact else " (approximate)"
            out.append(Mismatch("rows", where, f"{n:,} rows loaded, {table.n_rows:,}{exact} described"))
    out += _value_mismatches(df, table, where)
    if "decimal=','" in (table.read_hint or "") and table.read_hint.startswith("pd.read_csv(" + PATH_PLACEHOLDER):
        out += _decimal_comma_mismatches(df, table.read_hint, path, where)
    return out


def _decimal_comma_mismatches(df: Any, hint: str, path: Path, where: str) -> list[Mismatch]:
    """Find columns read with decimal=',' whose text is written with thousands separators ('2,911' is 2911)."""
    raw = run_hint(hint, path, overrides={"dtype": str})
    found = []
    for j, name in enumerate(df.columns[:200]):
        if df[name].dtype.kind != "f" or j >= len(raw.columns):
            continue
        values = [v.strip() for v in raw.iloc[:VALUES_LOOKED_AT, j].dropna().tolist()]
        grouped = [v for v in values if _GROUPED.match(v)]
        if grouped and all(_GROUPED.match(v) or v.lstrip("+-").isdigit() for v in values):
            found.append(f"{name!r} ({grouped[0]!r} read as {float(grouped[0].replace(',', '.')):g})")
    return [Mismatch("decimal-comma", where, "thousands separators read as decimal commas: " + "; ".join(found[:3]))
            ] if found else []


def _value_mismatches(df: Any, table: Table, where: str) -> list[Mismatch]:
    """Look at the loaded values: delimiters inside cells, numbers left as text, header rows inside the data."""
    out: list[Mismatch] = []
    head = df.iloc[:VALUES_LOOKED_AT]
    by_name = {c.name: c for c in table.columns + table.later_columns}
    tabs, as_text, not_numeric = [], [], []
    for j in range(min(len(df.columns), 200)):
        name = str(df.columns[j])
        col = head.iloc[:, j]
        described = by_name.get(name)
        if described is not None and described.dtype in ("int", "float") and col.dtype.kind not in "iufb":
            not_numeric.append(name)
        if "\t" in name:
            tabs.append(name)
        if col.dtype.kind != "O":
            continue
        values = [v for v in col.dropna().tolist() if isinstance(v, str) and v.strip()]
        if any("\t" in v for v in values):
            tabs.append(name)
        numbers = sum(1 for v in values if _NUMBER.match(v) or _THOUSANDS.match(v))
        said = described is not None and LOADS_AS_TEXT in described.dtype
        # mostly numbers, yet text: a separator or marker the hint does not pass, or a sub-table's header row
        codes = any(v.strip()[:1] == "0" and v.strip()[1:2].isdigit() for v in values)  # '041018' is an id
        if len(values) >= 3 and numbers >= 0.8 * len(values) and not said and not codes:
            odd = [v for v in values if not (_NUMBER.match(v) or _THOUSANDS.match(v))]
            as_text.append(name + (f" (text: {', '.join(repr(v) for v in odd[:2])})" if odd else ""))
    if tabs:
        out.append(Mismatch("delimiter-in-values", where, f"tab characters inside column(s) {_names(tabs)}"))
    if not_numeric:
        out.append(Mismatch("numeric-dtype", where, f"described as numbers, loaded as text: {_names(not_numeric)}"))
    if as_text:
        out.append(Mismatch("numbers-as-text", where, f"numbers loaded as text in {'; '.join(as_text[:4])}"))
    found = _header_row_inside(head, table.header_row is not None)
    if found:
        out.append(Mismatch("header-in-data", where, found))
    return out


def _header_row_inside(head: Any, has_header: bool) -> str | None:
    """Find a row that heads another table: the header again, or labels over numbers in the row below."""
    rows = [tuple(row) for row in head.itertuples(index=False)]
    if has_header and len(head.columns) >= 2:
        header = [str(c).strip() for c in head.columns]
        wanted = max(2, (2 * sum(1 for h in header if not h.startswith("Unnamed: ")) + 2) // 3)
        for k, row in enumerate(rows):
            if sum(1 for h, v in zip(header, row, strict=False) if isinstance(v, str) and v.strip() == h) >= wanted:
                return f"data row {k} repeats the header"
    for k, (row, below) in enumerate(zip(rows, rows[1:], strict=False)):
        # a sub-table's header: labels in two or more columns that hold numbers (counts, money, %) right below
        labels = [j for j, v in enumerate(row) if isinstance(v, str) and v.strip() and not _NUMERIC_LIKE.match(v)]
        under = [j for j in labels if _numeric_like(below[j])]
        if len(under) >= 2 and all(not _numeric_like(v) for v in row if _filled(v)):
            return f"data row {k} looks like the header of another table: {' | '.join(str(row[j]) for j in under[:4])}"
    return None


def _filled(v: Any) -> bool:
    return v is not None and v == v and str(v).strip() != ""


def _numeric_like(v: Any) -> bool:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v == v
    return isinstance(v, str) and bool(_NUMERIC_LIKE.match(v))


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names[:5]) + (" …" if len(names) > 5 else "")


def check_path(root: str, relpath: str, limits: Limits | None = None) -> dict[str, Any]:
    """Profile one lake file and check its hints (the unit of work a worker process runs); return plain data."""
    from dslake_index.profilers.registry import profile_path

    path = Path(root) / relpath
    try:
        profile = profile_path(path, limits or Limits())
    except ProfileError as exc:
        return FileCheck(path=relpath, skipped=f"not profiled: {exc.message}").to_dict()
    return check_profile(profile, path, relpath).to_dict()


def from_dict(data: Any) -> FileCheck:
    """Rebuild a FileCheck a worker process sent as JSON, checked field by field; raise ValueError when it is not
    one (a worker gone wrong)."""
    def text(value: Any, optional: bool = False) -> bool:
        return isinstance(value, str) or (optional and value is None)

    if not isinstance(data, dict) or set(data) - {f for f in FileCheck.__dataclass_fields__}:
        raise ValueError("not a file check")
    data = dict(data)
    raw = data.pop("mismatches", [])
    if not isinstance(raw, list) or not all(isinstance(m, dict) and set(m) == {"kind", "where", "detail"}
                                            and all(text(v) for v in m.values()) for m in raw):
        raise ValueError("not a file check's mismatches")
    check = FileCheck(mismatches=[Mismatch(**m) for m in raw], **data)
    counts = (check.hints, check.executed, check.matched)
    if not (text(check.path) and text(check.format, True) and text(check.skipped, True)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in counts)):
        raise ValueError("not a file check's fields")
    return check


def _checked(rel: str, answer: dict[str, Any], timeout_s: float) -> FileCheck:
    """Turn a confined worker's answer (confined_pool.ConfinedPool.call) into the file's check."""
    if "timeout" in answer:
        return FileCheck(path=rel, mismatches=[Mismatch("timeout", "file",
                                                        f"profile and hints took over {timeout_s:g} s")])
    try:
        return from_dict(answer["value"])
    except (KeyError, TypeError, ValueError):
        why = answer.get("crash") or "it sent no file check"
        return FileCheck(path=rel, mismatches=[Mismatch("error", "file", f"worker died: {why}"[:500])])


def check_files(root: Path, relpaths: list[str], workers: int = 2, timeout_s: float = 120.0,
                limits: Limits | None = None, backend: str = "auto",
                hidden: list[Path] | None = None) -> Iterator[FileCheck]:
    """Profile and check files in the workers of a confined server (index/confined_pool.py: the index's
    profilers' confinement; backend as sandbox.backend, hidden: the catalog); a file past timeout_s is stopped and
    reported as 'timeout'."""
    from dslake_index.confined_pool import ConfinedPool

    preload = ["dslake_index.fork_server", "dslake_index.profilers.registry", "dslake_index.hint_check", "pandas"]
    pool = ConfinedPool(root, hidden or [root / ".dslake"], backend, preload)
    try:
        pool.start(max(1, workers), 0, {}, "blake2b", [])
        futures = [(rel, pool.submit("dslake_index.hint_check:check_path", (str(root), rel, limits), timeout_s))
                   for rel in relpaths]
        for rel, future in futures:
            yield _checked(rel, future.result(), timeout_s)
    finally:
        pool.stop()


# ---- datasets and tables: the entry's one load line, run on the whole dataset ----

def check_dataset(root: Path, record: Any, members: list[str] | None = None, catalog: Path | None = None) -> FileCheck:
    """Run a dataset entry's load line (its streaming line when a whole load does not fit) and compare the rows and
    columns it gives with the entry's (record: a dataset_entries.DatasetRecord).

    members: the lake-relative paths of a Hive dataset's or a folder of parts' files, which are read instead of its
    folder (member_reads.py), each checked to lie in the lake and outside the catalog."""
    from dslake_index.member_reads import member_files

    result = FileCheck(path=record.root, format=record.format)
    if record.error:
        result.skipped = f"unreadable {record.kind} table: {record.error}"
        return result
    hint, target = (record.hint, record.target) if record.hint else (record.stream, record.stream_target)
    result.hints = 1
    try:
        files = member_files(root, record.root, members or [], catalog) if record.kind in ("hive", "parts") else None
        path = root / (record.root if files is not None else target)
        rows, columns = _rows_and_columns(load_hint.run(load_hint.parse(hint), path, members=files))
    except Exception as exc:  # noqa: BLE001 - the hint's failure on the data is the finding
        result.mismatches.append(Mismatch("error", "dataset", _error_text(exc)))
        return result
    result.executed = 1
    if record.rows is not None and rows != record.rows:
        result.mismatches.append(Mismatch("rows", "dataset", f"the line gives {rows:,} rows, the entry says "
                                                              f"{record.rows:,}"))
    if set(columns) != set(record.columns):
        missing, extra = sorted(set(record.columns) - set(columns)), sorted(set(columns) - set(record.columns))
        result.mismatches.append(Mismatch("column-names", "dataset", f"missing {_names(missing)}; "
                                                                      f"not described {_names(extra)}"))
    result.matched = int(not result.mismatches)
    return result


def _rows_and_columns(value: Any) -> tuple[int, list[str]]:
    """Count the rows and name the columns of what a dataset's line gives, streaming what is lazy."""
    if type(value).__module__.partition(".")[0] in ("duckdb", "_duckdb"):  # a lazy relation: DuckDB counts
        return int(value.aggregate("count(*)").fetchall()[0][0]), list(value.columns)
    if hasattr(value, "count_rows"):  # a pyarrow dataset
        return int(value.count_rows()), list(value.schema.names)
    if hasattr(value, "read_next_batch"):  # an Arrow stream of batches
        return sum(batch.num_rows for batch in value), list(value.schema.names)
    return len(value), [str(c) for c in value.columns]


def check_catalog_datasets(root: Path, conn: Any, backend: str = "auto", hidden: list[Path] | None = None,
                           timeout_s: float = 600.0) -> list[FileCheck]:
    """Check the load line of every dataset and table entry a catalog holds, each run in a worker of a confined
    server (as check_files: a table's metadata may name the code its reader runs). A Hive dataset's or a folder of
    parts' members are listed here from the manifest (the server cannot see the catalog) and read one by one."""
    from dslake_index.confined_pool import ConfinedPool
    from dslake_index.dataset_entries import DatasetRecord
    from dslake_index.lookup import member_paths

    database = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    catalog = str(Path(database).parent) if database else ""
    records = [(text, member_paths(conn, DatasetRecord.from_json(text).entry_id))
               for (text,) in conn.execute("SELECT record FROM datasets ORDER BY root")]
    if not records:
        return []
    pool = ConfinedPool(root, hidden or [root / ".dslake"], backend,
                        ["dslake_index.fork_server", "dslake_index.hint_check", "pandas", "pyarrow"])
    try:
        pool.start(1, 0, {}, "blake2b", [])
        return [_checked(json.loads(text).get("root", ""),
                         pool.call("dslake_index.hint_check:check_stored_dataset",
                                   (str(root), text, members, catalog), timeout_s), timeout_s)
                for text, members in records]
    finally:
        pool.stop()


def check_stored_dataset(root: str, record: str, members: list[str], catalog: str) -> dict[str, Any]:
    """check_dataset for a confined worker: the record as the catalog stores it, its member paths and the catalog's
    folder (a member inside it is refused), the check as JSON-ready data."""
    from dslake_index.dataset_entries import DatasetRecord

    return check_dataset(Path(root), DatasetRecord.from_json(record), members, Path(catalog) if catalog else None
                         ).to_dict()
