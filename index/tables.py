"""Delta Lake and Iceberg tables read from their log or metadata: the current version, schema, rows, partition
columns, history and per-column statistics, without reading a data file.

Delta through the `deltalake` package (delta-rs): the log's add actions carry each live file's row count and
min/max/nulls. Iceberg through `pyiceberg`'s StaticTable on the newest metadata file: the snapshot summary
carries the rows, the manifests each file's bounds. A table whose log or metadata cannot be read raises
TableUnreadable with the reason, which the entry states (the rest of the lake indexes as usual).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_STATS_COLUMNS = 200


class TableUnreadable(Exception):
    """A table's log or metadata that cannot be read; the message says why."""


@dataclass
class TableFacts:
    """What a table's log or metadata says about its current version."""

    format: str  # delta | iceberg
    version: int | None
    rows: int | None
    rows_exact: bool
    columns: list[tuple[str, str]]  # (name, type)
    partition_columns: list[str]
    history: int  # commits (delta) or snapshots (iceberg)
    files: int  # live data files
    data_bytes: int
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)  # column -> {min, max, nulls}
    target: str = ""  # what the load line is given, relative to the table root ('' = the root itself)
    operations: list[str] = field(default_factory=list)  # the latest operations, newest first
    notes: list[str] = field(default_factory=list)


def read_table(root: Path, kind: str) -> TableFacts:
    """Read a table's facts; raise TableUnreadable for a broken log or metadata."""
    try:
        return read_delta(root) if kind == "delta" else read_iceberg(root)
    except TableUnreadable:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - delta-rs reports a bad log as a Rust panic (a BaseException)
        raise TableUnreadable(f"{type(exc).__name__}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else "no message")[:300]


def read_delta(root: Path) -> TableFacts:
    """Read a Delta table's current version from its log."""
    import pyarrow as pa
    from deltalake import DeltaTable

    _check_delta_log(root / "_delta_log")
    table = DeltaTable(str(root))
    schema = pa.schema(table.schema().to_arrow())
    adds = pa.table(table.get_add_actions(flatten=True))
    counts = adds.column("num_records").to_pylist() if "num_records" in adds.column_names else []
    known = [c for c in counts if c is not None]
    history = table.history()
    stats = _delta_stats(adds, schema.names)
    return TableFacts(
        format="delta", version=table.version(), rows=sum(known) if counts else None,
        rows_exact=bool(counts) and len(known) == len(counts),
        columns=[(f.name, str(f.type)) for f in schema], partition_columns=list(table.metadata().partition_columns),
        history=len(history), files=adds.num_rows,
        data_bytes=int(sum(adds.column("size_bytes").to_pylist())) if "size_bytes" in adds.column_names else 0,
        stats=stats, operations=[str(h.get("operation", "?")) for h in history[:5]])


def _check_delta_log(log: Path) -> None:
    """Refuse a log with a gap in its commit numbers: delta-rs may read the versions after a missing commit as if
    it were not there, and so report rows that a deleted or replaced file still holds."""
    numbers = {int(p.name[:20]) for p in log.glob("*.json") if re.fullmatch(r"\d{20}\.json", p.name)}
    checkpoints = [int(p.name[:20]) for p in log.glob("*.checkpoint*.parquet") if p.name[:20].isdigit()]
    if not numbers and not checkpoints:
        raise TableUnreadable("its _delta_log holds no commit file")
    start = max(checkpoints, default=-1)  # a checkpoint stands for every commit up to its own
    missing = [n for n in range(start + 1, max(numbers | {start}) + 1) if n not in numbers]
    if missing:
        shown = ", ".join(f"{n:020d}.json" for n in missing[:3])
        raise TableUnreadable(f"commit file(s) missing from _delta_log: {shown}")


def _delta_stats(adds: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """Merge the live files' min/max/nulls per column (a column without stats in some file has none here)."""
    import pyarrow.compute as pc

    out: dict[str, dict[str, Any]] = {}
    for name in names[:MAX_STATS_COLUMNS]:
        entry: dict[str, Any] = {}
        for key, how in (("min", "min"), ("max", "max"), ("null_count", "sum")):
            column = f"{key}.{name}"
            if column not in adds.column_names:
                continue
            values = adds.column(column)
            if values.null_count:
                continue  # some file has no statistic: the merged one would be wrong
            try:
                value = getattr(pc, how)(values).as_py()
            except Exception:  # noqa: BLE001 - a type pyarrow cannot order: no statistic
                continue
            entry["nulls" if key == "null_count" else key] = value
        if entry:
            out[name] = entry
    return out


_METADATA_VERSION = re.compile(r"^(?:v)?(\d+)[-.]")


def current_metadata(root: Path) -> Path:
    """Return the Iceberg metadata file in force: the one version-hint.text names, else the highest version."""
    folder = root / "metadata"
    hint = folder / "version-hint.text"
    if hint.is_file():
        text = hint.read_text(encoding="utf-8", errors="replace").strip()
        for name in (f"v{text}.metadata.json", f"{text}.metadata.json", text):
            if (folder / name).is_file():
                return folder / name
    candidates = [p for p in folder.glob("*.metadata.json") if p.is_file()]
    if not candidates:
        raise TableUnreadable("no *.metadata.json in its metadata folder")

    def version(p: Path) -> tuple[int, float]:
        match = _METADATA_VERSION.match(p.name)
        return (int(match.group(1)) if match else -1, p.stat().st_mtime)

    return max(candidates, key=version)


def read_iceberg(root: Path) -> TableFacts:
    """Read an Iceberg table's current snapshot from its newest metadata file and its manifests."""
    from pyiceberg.table import StaticTable

    metadata = current_metadata(root)
    table = StaticTable.from_metadata(str(metadata))
    schema = table.schema().as_arrow()
    snapshot = table.current_snapshot()
    summary = dict(snapshot.summary.additional_properties) if snapshot and snapshot.summary else {}
    notes = []
    location = table.metadata.location.removeprefix("file://")
    if location and Path(location).resolve() != root.resolve():
        notes.append(f"its metadata records the table at {location}, not where it lies now: the data files are "
                     "read from the paths the metadata names")
    try:
        files = table.inspect.files() if snapshot is not None else None  # reads the manifest list and manifests
    except (OSError, ValueError) as exc:
        raise TableUnreadable(f"its metadata points at manifests that cannot be read: {_first_line(exc)}") from None
    rows = int(summary.get("total-records", 0)) if snapshot is not None else 0
    deletes = int(summary.get("total-position-deletes", 0) or 0) + int(summary.get("total-equality-deletes", 0) or 0)
    if deletes:
        notes.append(f"{deletes:,} rows are marked deleted by delete files; the row count is before them")
    stats = _iceberg_stats(files, schema.names) if files is not None else {}
    spec = table.spec()
    partition = [table.schema().find_field(f.source_id).name for f in spec.fields]
    return TableFacts(
        format="iceberg", version=snapshot.snapshot_id if snapshot else None, rows=rows, rows_exact=not deletes,
        columns=[(f.name, str(f.type)) for f in schema], partition_columns=partition,
        history=len(table.metadata.snapshots), files=files.num_rows if files is not None else 0,
        data_bytes=int(summary.get("total-files-size", 0) or 0), stats=stats,
        target=metadata.relative_to(root).as_posix(),
        operations=[str(snapshot.summary.operation.value)] if snapshot and snapshot.summary else [], notes=notes)


def _iceberg_stats(files: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """Merge readable_metrics (each data file's bounds and null counts) per column."""
    if "readable_metrics" not in files.column_names or files.num_rows == 0:
        return {}
    metrics = files.column("readable_metrics").to_pylist()
    out: dict[str, dict[str, Any]] = {}
    for name in names[:MAX_STATS_COLUMNS]:
        per_file = [m.get(name) or {} for m in metrics]
        lows = [f.get("lower_bound") for f in per_file]
        highs = [f.get("upper_bound") for f in per_file]
        nulls = [f.get("null_value_count") for f in per_file]
        entry: dict[str, Any] = {}
        try:
            if all(v is not None for v in lows):
                entry["min"] = min(lows)
            if all(v is not None for v in highs):
                entry["max"] = max(highs)
        except TypeError:
            pass
        if all(v is not None for v in nulls):
            entry["nulls"] = sum(nulls)
        if entry:
            out[name] = entry
    return out
