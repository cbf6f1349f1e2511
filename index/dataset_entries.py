"""The entry of a dataset (Hive partitions, a folder of parts) or a table (Delta, Iceberg): one description and one
card for all its files, statistics across every file, and a load line that reads the whole dataset the way its
format means it to be read (partition columns back; a table's current version, not every file on disk).

What lake.load and the hint checker run is kept beside the entry (the `datasets` table): the hint with its
`{path}` placeholder, what the placeholder stands for, whether a whole load fits a script's memory, and why a
broken table has no load line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslake_index.bigfiles import load_bytes, size_text, stream_hint, streaming_lines, too_big
from dslake_index.datasets import DatasetUnit, partition_values
from dslake_index.entries import EntryRow
from dslake_index.families import describe_values, value_sort_key
from dslake_index.profilers.base import Profile
from dslake_index.profilers.textio import clip
from dslake_index.tables import TableFacts, TableStore, TableUnreadable, read_table

PREFIX = "data/"
MAX_COLUMNS_LISTED = 60
MAX_STRAYS_LISTED = 5


@dataclass
class DatasetRecord:
    """What loading a dataset entry runs: kept in the `datasets` table, read by lake.load and the hint checker."""

    entry_id: str
    kind: str  # hive | parts | delta | iceberg
    root: str
    format: str  # parquet | csv | delta | iceberg
    target: str | None = None  # lake-relative path the hint's {path} stands for
    hint: str | None = None  # the whole-load line (None: the table cannot be read)
    stream: str | None = None  # the streaming line, when a whole load does not fit
    stream_target: str | None = None
    load_bytes: int = 0
    rows: int | None = None
    columns: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> str:
        """Return the record as the JSON the table keeps."""
        return json.dumps(self.__dict__, default=str)

    @classmethod
    def from_json(cls, text: str) -> DatasetRecord:
        """Read a record back."""
        return cls(**json.loads(text))


def dataset_id(root: str) -> str:
    """Return the stable entry id of the dataset or table rooted at a folder."""
    return "ds-" + hashlib.sha1(root.encode()).hexdigest()[:20]


def dataset_entry(unit: DatasetUnit, profile_of: Callable[[str], Profile], lake: Path | TableStore | None,
                  budget_mb: int, read_local: Callable[[Path, str], TableFacts] = read_table
                  ) -> tuple[EntryRow, DatasetRecord]:
    """Build a dataset's or table's entry and its load record (profile_of: a member path's profile; lake: the
    local lake folder tables are read from, or a lake in S3 (its log and metadata are read there), None when
    neither is at hand; read_local: how a local table is read, the index's confined reader:
    confined_tables.ConfinedTables)."""
    if unit.kind in ("delta", "iceberg"):
        return _table_entry(unit, lake, budget_mb, read_local)
    return _files_entry(unit, profile_of, budget_mb)


# ---- Hive partitions and folders of parts: facts summed from every member's profile (its footer) ----

def _files_entry(unit: DatasetUnit, profile_of: Callable[[str], Profile],
                 budget_mb: int) -> tuple[EntryRow, DatasetRecord]:
    members = sorted(unit.members, key=lambda m: m.path)
    first = profile_of(members[0].path)
    fmt = first.format
    total = sum(m.size for m in members)
    rows = [m.tables[0][0] if m.tables else None for m in members]
    exact = all(m.tables and m.tables[0][1] for m in members)
    known_rows = sum(r for r in rows if r is not None) if all(r is not None for r in rows) else None
    hive = unit.kind == "hive"
    keys = _partition_keys(members, unit.root) if hive else {}
    shown = PREFIX + unit.root
    record = DatasetRecord(dataset_id(unit.root), unit.kind, unit.root, fmt, target=unit.root,
                           load_bytes=load_bytes(fmt, total), rows=known_rows)
    what = (f"{fmt.capitalize()}, Hive-partitioned: {len(members):,} files in key=value folders"
            if hive else f"{fmt.capitalize()} parts: {len(members):,} files of one schema")
    lines = [f"Dataset: {shown} ({what}; one entry for all of them)"]
    if keys:
        lines.append("Partitions (from the folder names; each becomes a column when the dataset is read): "
                     + "; ".join(f"{k}: {describe_values(v, 24, 300)}" for k, v in keys.items()))
    rows_text = f"{known_rows:,}" if known_rows is not None else "unknown"
    how = "exact, from the files' footers" if fmt == "parquet" and exact else \
        ("exact" if exact else "approximate where a file was sampled")
    lines.append(f"Rows: {rows_text} in all ({how}); {size_text(total)} on disk.")
    columns = _merged_columns(members, profile_of)
    record.columns = [c["name"] for c in columns] + list(keys)
    if too_big(fmt, total, budget_mb):
        glob = f"{unit.root}/**/*.{_extension(members)}" if hive else f"{unit.root}/*.{_extension(members)}"
        record.stream, record.stream_target = stream_hint(fmt, hive), glob
        lines += streaming_lines(fmt, total, budget_mb, PREFIX + glob, hive)
    else:
        record.hint = _whole_hint(fmt, hive, _skipped_names(unit, members))
        lines.append(f"Load every file{' with its partition columns' if keys else ''}: "
                     f"df = {record.hint.replace('{path}', repr(shown))}")
        if keys:
            lines.append("  partition columns come back as categories: convert (e.g. df['year'].astype(int)) "
                         "before arithmetic or comparisons")
            lines.append("  one partition only (the other files are not read): "
                         + _filter_example(fmt, record.hint.replace("{path}", repr(shown)), shown, keys))
    lines.append(f"Columns (statistics over all {len(members):,} files"
                 + (", from their footers):" if fmt == "parquet" else ", from their profiles):"))
    lines += [_column_line(c) for c in columns[:MAX_COLUMNS_LISTED]]
    if len(columns) > MAX_COLUMNS_LISTED:
        lines.append(f"  … and {len(columns) - MAX_COLUMNS_LISTED} more columns")
    for key, values in keys.items():
        lines.append(f"  - {key} (partition, from the folder names): {describe_values(values, 24, 300)}")
    lines.append(f"Files: {PREFIX}{members[0].path} … {PREFIX}{members[-1].path}")
    lines += _stray_lines(unit, bool(record.hint and "ignore_prefixes" in record.hint))
    from dslake_index.cards import card, describe

    lacks = "the partition columns and the other files' rows" if keys else "the other files' rows"
    lines += ["", "One file of the dataset, for its columns and values (read the dataset with the line above, not "
              f"file by file: a single file lacks {lacks}):",
              describe(first, members[0].path)]
    rows_card = "?" if known_rows is None else f"{known_rows}" if exact else f"about {known_rows}"
    head = (f"dataset {unit.root} {fmt} {'partitioned by ' + ', '.join(keys) if keys else 'parts'} "
            f"{len(members)} files rows in all {'' if exact or known_rows is None else 'about '}{rows_text}")
    # The first file's card gives the columns and values; its table line (one file's shape) gives way to the
    # dataset's: every file's rows, and the columns a whole load returns (partition columns too).
    own = [line for line in card(first, unit.root, family=True).split("\n") if not line.startswith("table")]
    own.append(f"table: {rows_card} rows x {len(record.columns)} columns")
    if keys:
        own.append("partitions: " + "; ".join(f"{k} {_card_values(v)}" for k, v in keys.items()))
    row = EntryRow(record.entry_id, "dataset", unit.root, unit.root, fmt, None, len(members), "\n".join(lines),
                   head + "\n" + "\n".join(own), [m.path for m in members])
    return row, record


def _skipped_names(unit: DatasetUnit, members: list) -> list[str]:
    """Return the file names a folder read must skip to read only the dataset's own files (strays), or [] when
    no name can do it (a stray whose name begins another member's name)."""
    names = sorted({p.rpartition("/")[2] for p in unit.strays})
    own = [m.name for m in members]
    if any(o.startswith(n) for n in names for o in own):
        return []
    return names


def _whole_hint(fmt: str, hive: bool, skip: list[str] | None = None) -> str:
    if fmt == "parquet":
        # pyarrow skips names that start with '.' or '_' unless told other prefixes; keep those two
        return f"pd.read_parquet({{path}}, ignore_prefixes={['.', '_', *skip]!r})" if skip else \
            "pd.read_parquet({path})"
    partitioning = ", partitioning='hive'" if hive else ""
    ignore = f", ignore_prefixes={['.', '_', *skip]!r}" if skip else ""
    return f"ds.dataset({{path}}, format='csv'{partitioning}{ignore}).to_table().to_pandas()"


def _filter_example(fmt: str, whole: str, shown: str, keys: dict[str, list[str]]) -> str:
    key, values = next(iter(keys.items()))
    last = max(values, key=value_sort_key)
    literal = int(last) if last.isdigit() else last  # pyarrow reads digit-only partition values as integers
    if fmt == "parquet":
        return f"{whole[:-1]}, filters=[('{key}', '=', {literal!r})])"
    return (f"ds.dataset('{shown}', format='csv', partitioning='hive').to_table(filter=ds.field('{key}') == "
            f"{literal!r}).to_pandas()  (import pyarrow.dataset as ds)")


def _extension(members: list) -> str:
    return members[0].name.rsplit(".", 1)[-1] if "." in members[0].name else "*"


def _partition_keys(members: list, root: str) -> dict[str, list[str]]:
    keys: dict[str, set[str]] = {}
    for m in members:
        for key, value in partition_values(m.path, root):
            keys.setdefault(key, set()).add(value)
    return {k: sorted(v, key=value_sort_key) for k, v in keys.items()}


def _merged_columns(members: list, profile_of: Callable[[str], Profile]) -> list[dict[str, Any]]:
    """Merge every member's first table: dtype of the first, min of mins, max of maxes, nulls summed."""
    merged: dict[str, dict[str, Any]] = {}
    for m in members:
        profile = profile_of(m.path)
        if not profile.tables:
            continue
        for c in profile.tables[0].columns:
            entry = merged.setdefault(c.name, {"name": c.name, "dtype": c.dtype, "min": c.min, "max": c.max,
                                               "nulls": 0, "files": 0})
            entry["files"] += 1
            entry["nulls"] = None if entry["nulls"] is None or c.nulls is None else entry["nulls"] + c.nulls
            for key, pick in (("min", min), ("max", max)):
                value = getattr(c, key)
                if entry[key] is None or value is None:
                    entry[key] = entry[key] if value is None else value
                    continue
                try:
                    entry[key] = pick(entry[key], value)
                except TypeError:
                    pass
    return list(merged.values())


def _column_line(c: dict[str, Any]) -> str:
    from dslake_index.profilers.redaction import redact_value

    parts = [f"  - {c['name']}: {c['dtype']}"]
    for key in ("min", "max"):
        value = redact_value(str(c["name"]), c.get(key))  # a table log's bounds of a password column
        if value is not None:
            value = 0.0 if isinstance(value, float) and value == 0 else value  # a writer's -0.0 bound
            parts.append(f"{key} {clip(str(value), 40)}")
    if c.get("nulls") is not None:
        parts.append(f"nulls {c['nulls']:,}")
    return "; ".join(parts)


def _stray_lines(unit: DatasetUnit, skipped: bool) -> list[str]:
    if not unit.strays:
        return []
    named = ", ".join(PREFIX + p for p in unit.strays[:MAX_STRAYS_LISTED])
    more = f" and {len(unit.strays) - MAX_STRAYS_LISTED} more" if len(unit.strays) > MAX_STRAYS_LISTED else ""
    return [f"Note: {len(unit.strays)} file(s) under {PREFIX}{unit.root} have another schema or format and are not "
            f"part of this dataset ({named}{more}; each has its own entry). A plain whole-folder read takes them "
            "too and may fail or fill their columns with nulls" + (": the load line above skips them by name."
                                                                   if skipped else "; read the dataset's own files.")]


def _card_values(values: list[str]) -> str:
    if len(values) > 8:
        return f"{values[0]} … {values[-1]} ({len(values)} values)"
    return ", ".join(values)


# ---- Delta and Iceberg: facts from the log or metadata ----

def _table_entry(unit: DatasetUnit, lake: Path | TableStore | None, budget_mb: int,
                 read_local: Callable[[Path, str], TableFacts]) -> tuple[EntryRow, DatasetRecord]:
    name = "Delta table" if unit.kind == "delta" else "Iceberg table"
    shown = PREFIX + unit.root
    record = DatasetRecord(dataset_id(unit.root), unit.kind, unit.root, unit.kind)
    members = sorted(m.path for m in unit.members)
    facts: TableFacts | None = None
    if lake is None:  # a store other than S3 (or a lake folder gone since): nothing to read the log from
        record.error = "its log and metadata are read from a lake folder on this machine or from S3 only"
    else:
        try:
            facts = read_local(lake / unit.root, unit.kind) if isinstance(lake, Path) else \
                read_table(Path(unit.root), unit.kind, lake, members)
        except TableUnreadable as exc:
            record.error = str(exc)
    log = "its _delta_log" if unit.kind == "delta" else "its metadata"
    if facts is None:
        lines = [f"{name}: {shown} ({len(members)} files; one entry for the table). {log.capitalize()[0]}"
                 f"{log[1:]} cannot be read: {record.error}.",
                 "dslake gives no load line for it: reading its data files directly would take rows that a "
                 "delete or an overwrite has removed. Repair the table, then run dslake index again."]
        card_text = f"{unit.kind} table {unit.root} {' '.join(unit.root.split('/'))} unreadable"
        return EntryRow(record.entry_id, "dataset", unit.root, unit.root, unit.kind, None, len(members),
                        "\n".join(lines), card_text, members), record
    record.rows, record.columns = facts.rows, [c for c, _ in facts.columns]
    record.load_bytes = load_bytes("parquet", facts.data_bytes)
    record.target = unit.root if not facts.target else f"{unit.root}/{facts.target}"
    version = f"version {facts.version}" if unit.kind == "delta" else f"snapshot {facts.version}"
    lines = [f"{name}: {shown} ({log[4:]} plus {facts.files:,} live data files; one entry for the table, whose "
             f"{len(members):,} files are all its members)",
             f"Current {version} ({facts.history:,} {'commits' if unit.kind == 'delta' else 'snapshots'} in its "
             f"history; latest operations: {', '.join(facts.operations) or 'none'})",
             f"Rows: {'?' if facts.rows is None else f'{facts.rows:,}'} in the current version"
             f" ({'exact' if facts.rows_exact else 'approximate'}, from {log[4:]}); {size_text(facts.data_bytes)} "
             "of live data files."]
    if facts.partition_columns:
        lines.append("Partition columns: " + ", ".join(facts.partition_columns))
    target = PREFIX + record.target
    if too_big("parquet", facts.data_bytes, budget_mb):
        record.stream, record.stream_target = _table_stream(unit.kind), record.target
        lines += [f"Too big to load whole (about {size_text(record.load_bytes)} as a DataFrame; a script has "
                  f"{budget_mb:,} MB): scan it with DuckDB over an Arrow stream instead:",
                  f"  load: src = {record.stream.replace('{path}', repr(target))}",
                  "  e.g. duckdb.sql(\"SELECT count(*) FROM src\").df()  (DuckDB reads the Arrow source by its "
                  "variable name, batch by batch)"]
    else:
        record.hint = "DeltaTable({path}).to_pandas()" if unit.kind == "delta" else \
            "StaticTable.from_metadata({path}).scan().to_pandas()"
        lines.append(f"Load the current version: df = {record.hint.replace('{path}', repr(target))}  "
                     + ("(from deltalake import DeltaTable)" if unit.kind == "delta"
                        else "(from pyiceberg.table import StaticTable)"))
        if unit.kind == "delta" and facts.version:
            lines.append(f"  an older version: DeltaTable('{target}', version={facts.version - 1}).to_pandas()")
    lines.append(f"Do not read the files under {shown} yourself: files that deletes and overwrites replaced are "
                 f"still on disk ({len(members):,} files, {facts.files:,} live), and the "
                 + ("log" if unit.kind == "delta" else "metadata") + " says which rows are current.")
    source = "the log's file statistics" if unit.kind == "delta" else "the manifests' file bounds"
    lines.append("Columns (current version" + (f", min/max/nulls from {source}):" if facts.stats else "):"))
    for col, dtype in facts.columns[:MAX_COLUMNS_LISTED]:
        st = facts.stats.get(col, {})
        lines.append(_column_line({"name": col, "dtype": dtype, **st}))
    lines += [f"Note: {n}" for n in facts.notes]
    rows = "?" if facts.rows is None else f"{facts.rows}" if facts.rows_exact else f"about {facts.rows}"
    history = (f"version {facts.version}, {facts.history} commits" if unit.kind == "delta"
               else f"{facts.history} snapshots")  # an Iceberg snapshot's id is a random number: no word to search
    card_lines = [f"{unit.kind} table {unit.root} {' '.join(unit.root.split('/'))}",
                  f"columns: {'; '.join(c for c, _ in facts.columns[:80])}",
                  f"table: {rows} rows x {len(facts.columns)} columns",
                  *([f"partitions: {', '.join(facts.partition_columns)}"] if facts.partition_columns else []),
                  f"versions: {history}"]
    card_text = "\n".join(card_lines)
    return EntryRow(record.entry_id, "dataset", unit.root, unit.root, unit.kind, None, len(members),
                    "\n".join(lines), card_text, members), record


def _table_stream(kind: str) -> str:
    return "DeltaTable({path}).to_pyarrow_dataset()" if kind == "delta" else \
        "StaticTable.from_metadata({path}).scan().to_arrow_batch_reader()"

