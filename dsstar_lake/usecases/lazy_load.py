"""`lake.load(..., lazy=True)`: a DuckDB relation over a file or dataset where it lies, nothing read until a query.

The relation is what a file too big to load whole is queried with (the description's DuckDB line), given for any
CSV, TSV or Parquet file, Hive dataset, folder of parts, Delta or Iceberg table: `rel.filter(...)`,
`rel.aggregate(...)`, `rel.limit(5).df()` read only what the query needs, with DuckDB's own memory limit (a share
of this machine's). A CSV's relation is read with its load line's own arguments (separator, lines above the
header, names, missing-value markers...), so its columns are the DataFrame's; an argument DuckDB has no form for is
refused, never dropped. A dataset is read from its checked member files (usecases/load.py), a table through
index/table_io.py, as lake.load reads them. A relation is a handle on the files: it runs in this process, as
the other handle-valued load lines do (docs/safety.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ConfigError, LoadError

if TYPE_CHECKING:
    from dslake_index.load_hint import LoadHint

    from dsstar_lake.usecases.load import FileLoad

# pd.read_csv arguments DuckDB's read_csv takes under the same name and meaning
_SAME_CSV_ARGS = ("sep", "names", "encoding", "na_values", "comment", "decimal", "thousands")
_IGNORED_CSV_ARGS = ("engine", "compression")  # how pandas parses, not what: DuckDB detects compression itself
# a table's Arrow source, the load lines a big table's description gives (index/dataset_entries.py)
TABLE_SOURCES = {"delta": "DeltaTable({path}).to_pyarrow_dataset()",
                 "iceberg": "StaticTable.from_metadata({path}).scan().to_arrow_batch_reader()"}


def relations(family: bool, files: list[FileLoad]) -> Any:
    """Return the relation of a file or dataset, or for a family a dict from member path to its relation."""
    duckdb = _duckdb()
    if not family:
        return _checked(duckdb, files[0])
    return {f.rel: _checked(duckdb, f) for f in files}


def _checked(duckdb: Any, load: FileLoad) -> Any:
    try:
        return relation(duckdb, load)
    except duckdb.Error as exc:  # DuckDB binds the relation now: a file it cannot read says so here, in one line
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LoadError(f"DuckDB cannot read {load.rel} lazily: {why}",
                        api_hint=f"load it whole: lake.load({load.rel!r})") from None


def relation(duckdb: Any, load: FileLoad) -> Any:
    """Return a DuckDB relation over one planned file or dataset; a LoadError for one DuckDB cannot read lazily."""
    if load.kind in ("hive", "parts"):
        paths = [str(m) for m in load.members or []]
        reader = duckdb.read_parquet if load.format == "parquet" else duckdb.read_csv
        return reader(paths, hive_partitioning=load.kind == "hive", union_by_name=True)
    if load.kind in TABLE_SOURCES:
        from dslake_index.load_hint import parse, run

        # opened as every load line opens a table (index/table_io.py: nothing read outside its folder); an Iceberg
        # scan is an Arrow stream, which DuckDB reads batch by batch, once (ask lake.load again for a second pass)
        return duckdb.from_arrow(run(parse(TABLE_SOURCES[load.kind]), load.path))
    readers = {hint.reader for _, hint in load.hints}
    if len(load.hints) == 1 and readers <= {"pd.read_parquet", "duckdb.read_parquet"}:
        return duckdb.read_parquet(str(load.path))
    if len(load.hints) == 1 and readers == {"pd.read_csv"}:
        return _csv_relation(duckdb, load, load.hints[0][1])
    if len(load.hints) == 1 and readers == {"duckdb.read_csv"}:
        return duckdb.read_csv(str(load.path), **load.hints[0][1].kwargs())
    what = f"{load.format or 'this'} file" if len(load.hints) == 1 else f"file of {len(load.hints)} tables"
    raise LoadError(f"{load.rel} is a {what}: lazy=True gives DuckDB relations over single-table CSV, TSV and "
                    "Parquet files, datasets and tables",
                    api_hint=f"load it whole: lake.load({load.rel!r})")


def _csv_relation(duckdb: Any, load: FileLoad, hint: LoadHint) -> Any:
    """Read a CSV as its pandas load line does: the same arguments, in DuckDB's terms."""
    if hint.steps:
        raise _no_duckdb_form(load, "steps after the read")
    options: dict[str, Any] = {}
    nrows = None
    for name, value in hint.kwargs().items():
        if name in _SAME_CSV_ARGS:
            options[name] = value
        elif name == "skiprows" and isinstance(value, int):
            options["skiprows"] = value
        elif name == "header" and value in (0, None):
            options["header"] = value == 0
        elif name == "dtype":  # {column: str}: codes with leading zeros stay text
            options["dtype"] = {column: "VARCHAR" for column in value}
        elif name == "nrows":
            nrows = int(value)
        elif name not in _IGNORED_CSV_ARGS:
            raise _no_duckdb_form(load, f"{name}=")
    if "names" in options and "header" not in options:
        options["header"] = False  # pandas: names without header= means the file has no header line
    rel = duckdb.read_csv(str(load.path), **options)
    return rel.limit(nrows) if nrows is not None else rel


def _no_duckdb_form(load: FileLoad, what: str) -> LoadError:
    return LoadError(f"{load.rel}'s load line has {what}, which DuckDB's read_csv has no form for: lazy=True would "
                     "read other columns or rows than the load line", api_hint=f"load it whole: lake.load({load.rel!r})")


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise ConfigError("lake.load(..., lazy=True) needs DuckDB, which is not installed",
                          api_hint="pip install duckdb") from None
    return duckdb
