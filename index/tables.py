"""Delta Lake and Iceberg tables read from their log or metadata: the current version, schema, rows, partition
columns, history and per-column statistics, without reading a data file.

Delta through the `deltalake` package (delta-rs): the log's add actions carry each live file's row count and
min/max/nulls. Iceberg through `pyiceberg`'s StaticTable on the newest metadata file: the snapshot summary
carries the rows, the manifests each file's bounds. Both are opened through table_io.py: with the FileIO dslake
picks, never one the metadata names, and only inside the table's own folder. A table whose log or metadata cannot
be read, or names files outside its folder, raises TableUnreadable with the reason, which the entry states (the
rest of the lake indexes as usual).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dslake_index.table_io import TableUnreadable, hinted_names, inside_root

MAX_STATS_COLUMNS = 200


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


class TableStore(Protocol):
    """A lake in object storage as the table readers need it (index/objectstore.py's ObjectTables)."""

    def url(self, rel: str) -> str:
        """Return the URL of a lake-relative path."""

    def delta_options(self) -> dict[str, str]:
        """Return delta-rs's storage options for the store."""

    def iceberg_io(self) -> Any:
        """Return the pyiceberg FileIO dslake reads the store with (never one a table's metadata names)."""

    def read_text(self, rel: str) -> str:
        """Return a small object's text (Iceberg's version-hint.text)."""


def read_table(root: Path, kind: str, store: TableStore | None = None, names: list[str] | None = None) -> TableFacts:
    """Read a table's facts; raise TableUnreadable for a broken log or metadata.

    root: the table's folder; in object storage (store given) its lake-relative path, with names the lake-relative
    paths of the files under it (the listing's: a store has no folder to glob).
    """
    try:
        if store is None:
            return read_delta(root) if kind == "delta" else read_iceberg(root)
        rel = Path(root).as_posix()
        inside = sorted(n[len(rel) + 1:] for n in names or [] if n.startswith(rel + "/"))
        return read_delta(root, store, inside) if kind == "delta" else read_iceberg(root, store, inside)
    except TableUnreadable:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - delta-rs reports a bad log as a Rust panic (a BaseException)
        raise TableUnreadable(f"{type(exc).__name__}: {_first_line(exc)}") from None


def read_table_plain(root: str, kind: str) -> dict[str, Any]:
    """read_table for the confined profile server (index/profile_server.py): the facts as JSON-ready data, or why
    the table cannot be read."""
    try:
        return {"facts": facts_to_plain(read_table(Path(root), kind))}
    except TableUnreadable as exc:
        return {"unreadable": str(exc)}


def _plain_value(value: Any) -> Any:
    """A statistic as JSON keeps it: numbers and booleans as they are, anything else (dates, decimals, bytes) as
    the text a description shows of it (dataset_entries._column_line prints str(value))."""
    return value if value is None or isinstance(value, (bool, int, float, str)) else str(value)


def facts_to_plain(facts: TableFacts) -> dict[str, Any]:
    """Return a table's facts as JSON-ready data."""
    from dataclasses import asdict

    plain = asdict(facts)
    plain["stats"] = {col: {k: _plain_value(v) for k, v in st.items()} for col, st in facts.stats.items()}
    return plain


def facts_from_plain(plain: Any) -> TableFacts:
    """Return the facts a confined reader sent, checked field by field; raise TableUnreadable when they are not."""
    def ok(value: Any, kinds: tuple[type, ...], optional: bool = False) -> bool:
        return (optional and value is None) or (isinstance(value, kinds) and not (
            isinstance(value, bool) and bool not in kinds))

    try:
        facts = TableFacts(**plain)
        scalars = (str, int, float, bool)
        good = (ok(facts.format, (str,)) and ok(facts.version, (int,), True) and ok(facts.rows, (int,), True)
                and ok(facts.rows_exact, (bool,)) and ok(facts.history, (int,)) and ok(facts.files, (int,))
                and ok(facts.data_bytes, (int,)) and ok(facts.target, (str,))
                and all(isinstance(c, list) and len(c) == 2 and all(ok(x, (str,)) for x in c) for c in facts.columns)
                and all(ok(x, (str,)) for x in [*facts.partition_columns, *facts.operations, *facts.notes])
                and isinstance(facts.stats, dict)
                and all(isinstance(st, dict) and all(ok(v, scalars, True) for v in st.values())
                        for st in facts.stats.values()))
    except TypeError:
        good = False
    if not good:
        raise TableUnreadable("its reader sent facts that are not a table's")
    facts.columns = [(name, dtype) for name, dtype in facts.columns]
    return facts


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else "no message")[:300]


def read_delta(root: Path, store: TableStore | None = None, names: list[str] | None = None) -> TableFacts:
    """Read a Delta table's current version from its log (in a store: names are the files under root)."""
    import pyarrow as pa
    from dslake_index.table_io import open_delta

    if store is None:
        log = [p.name for p in (root / "_delta_log").glob("*") if p.is_file()]
    else:
        log = [n.split("/", 1)[1] for n in names or [] if n.startswith("_delta_log/") and n.count("/") == 1]
    _check_delta_log(log)
    table = open_delta(root) if store is None else \
        open_delta(store.url(Path(root).as_posix()), storage_options=store.delta_options())
    schema = pa.schema(table.schema().to_arrow())
    adds = pa.table(table.get_add_actions(flatten=True))
    counts = adds.column("num_records").to_pylist() if "num_records" in adds.column_names else []
    known = [c for c in counts if c is not None]
    if store is None:
        history = [str(h.get("operation", "?")) for h in table.history()]
    else:  # delta-rs's history over S3 retried a request for minutes (seen with moto): read the commits named
        history = _stored_operations(store, Path(root).as_posix(), log)
    stats = _delta_stats(adds, schema.names)
    return TableFacts(
        format="delta", version=table.version(), rows=sum(known) if counts else None,
        rows_exact=bool(counts) and len(known) == len(counts),
        columns=[(f.name, str(f.type)) for f in schema], partition_columns=list(table.metadata().partition_columns),
        history=len(history), files=adds.num_rows,
        data_bytes=int(sum(adds.column("size_bytes").to_pylist())) if "size_bytes" in adds.column_names else 0,
        stats=stats, operations=history[:5])


def _stored_operations(store: TableStore, root: str, log: list[str], latest: int = 5) -> list[str]:
    """Return the operation of every commit in a stored log, newest first: read from the latest few commit files
    (their commitInfo), the older ones counted from the names."""
    import json

    commits = sorted((n for n in log if re.fullmatch(r"\d{20}\.json", n)), reverse=True)
    operations = []
    for name in commits[:latest]:
        operation = "?"
        for line in store.read_text(f"{root}/_delta_log/{name}").splitlines():
            try:
                action = json.loads(line)
            except ValueError:
                continue
            if isinstance(action, dict) and isinstance(action.get("commitInfo"), dict):
                operation = str(action["commitInfo"].get("operation", "?"))
                break
        operations.append(operation)
    return operations + ["?"] * (len(commits) - len(operations))


def _check_delta_log(log: list[str]) -> None:
    """Refuse a log (the names of its files) with a gap in its commit numbers: delta-rs may read the versions after a
    missing commit as if it were not there, and so report rows that a deleted or replaced file still holds."""
    numbers = {int(n[:20]) for n in log if re.fullmatch(r"\d{20}\.json", n)}
    checkpoints = [int(n[:20]) for n in log if ".checkpoint" in n and n.endswith(".parquet") and n[:20].isdigit()]
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
        if not inside_root(hint, root):
            raise TableUnreadable("its metadata/version-hint.text is a link out of the table's folder")
        for name in hinted_names(hint.read_text(encoding="utf-8", errors="replace")):
            if (folder / name).is_file() or (folder / name).is_symlink():
                return folder / name
    # A link counts as a candidate even where it dangles (a confined reader does not see the host file it names):
    # picked as the newest, it is refused by real path (table_io.RootedIO), so the entry says why, on every backend.
    candidates = [p for p in folder.glob("*.metadata.json") if p.is_file() or p.is_symlink()]
    if not candidates:
        raise TableUnreadable("no *.metadata.json in its metadata folder")

    def version(p: Path) -> tuple[int, float]:
        match = _METADATA_VERSION.match(p.name)
        return (int(match.group(1)) if match else -1, p.lstat().st_mtime)

    return max(candidates, key=version)


def stored_metadata(root: str, store: TableStore, names: list[str]) -> str:
    """Return the Iceberg metadata file in force in a store, relative to the table root (names: the files under it):
    the one version-hint.text names, else the highest version."""
    found = {n for n in names if n.startswith("metadata/") and n.count("/") == 1}
    if "metadata/version-hint.text" in found:
        for name in hinted_names(store.read_text(f"{root}/metadata/version-hint.text")):
            if f"metadata/{name}" in found:
                return f"metadata/{name}"
    candidates = sorted(n for n in found if n.endswith(".metadata.json"))
    if not candidates:
        raise TableUnreadable("no *.metadata.json in its metadata folder")

    def version(name: str) -> tuple[int, str]:
        match = _METADATA_VERSION.match(name.rpartition("/")[2])
        return (int(match.group(1)) if match else -1, name)

    return max(candidates, key=version)


def read_iceberg(root: Path, store: TableStore | None = None, names: list[str] | None = None) -> TableFacts:
    """Read an Iceberg table's current snapshot from its newest metadata file and its manifests (in a store: names
    are the files under root)."""
    from dslake_index.table_io import open_iceberg

    notes = []
    if store is None:
        metadata = current_metadata(root).relative_to(root).as_posix()
        table = open_iceberg(str(root / metadata), root)
        location = table.metadata.location.removeprefix("file://")
        moved = bool(location) and Path(location).resolve() != root.resolve()
    else:
        rel = Path(root).as_posix()
        metadata = stored_metadata(rel, store, names or [])
        table = open_iceberg(store.url(f"{rel}/{metadata}"), store.url(rel), store.iceberg_io())
        location = table.metadata.location
        moved = location.rstrip("/").partition("://")[2] != store.url(rel).partition("://")[2]
        notes.append(f"its metadata names its files by their URLs in the store ({location}/…); a script in the "
                     "sandbox has no network, so the load line above cannot follow them: answer from these facts, "
                     "or load it where the store is reachable")
    schema = table.schema().as_arrow()
    snapshot = table.current_snapshot()
    summary = dict(snapshot.summary.additional_properties) if snapshot and snapshot.summary else {}
    if moved:
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
        target=metadata,
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
