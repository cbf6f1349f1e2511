"""Bigger than memory: how much memory a whole load of a file or dataset takes, and the line that streams instead.

A script gets sandbox.memory_mb for its whole process tree. pandas holds a CSV in about twice its size on disk
(numbers as 8 bytes, strings as Arrow buffers plus the parse's own copies) and a Parquet file in several times
its compressed size. A load that would take more than half the budget leaves the script no room to work, so its
entry gets a DuckDB line instead: a lazy relation that reads only what a query needs, spills to the work folder
and never holds the file whole.
"""

from __future__ import annotations

# In-memory bytes of a pandas DataFrame per byte on disk (measured on numeric-and-text tables; a rough bound).
EXPANSION = {"csv": 2.0, "tsv": 2.0, "parquet": 4.0}
SHARE_OF_BUDGET = 0.5  # a whole load may take at most this share of a script's memory
STREAMABLE = ("csv", "tsv", "parquet")


def load_bytes(fmt: str, size: int) -> int:
    """Return about how many bytes of memory pandas needs to hold a file of this format and size."""
    return int(size * EXPANSION.get(fmt, 1.0))


def too_big(fmt: str, size: int, budget_mb: int) -> bool:
    """Tell whether loading a file (or a dataset of this many bytes) whole would not fit a script's memory."""
    return budget_mb > 0 and fmt in STREAMABLE and load_bytes(fmt, size) > SHARE_OF_BUDGET * budget_mb * (1 << 20)


def duckdb_reader(fmt: str) -> str:
    """Return DuckDB's reader function for a format (csv and tsv are both read_csv: it sniffs the delimiter)."""
    return "read_parquet" if fmt == "parquet" else "read_csv"


def stream_hint(fmt: str, hive: bool = False) -> str:
    """Return the load hint (with the {path} placeholder) that gives a lazy DuckDB relation over the data."""
    extra = ", hive_partitioning=True" if hive else ""
    return f"duckdb.{duckdb_reader(fmt)}({{path}}{extra})"


def sql_example(fmt: str, target: str, hive: bool = False) -> str:
    """Return a DuckDB query over the data, as the coder should write one (aggregates pushed down)."""
    extra = ", hive_partitioning=true" if hive else ""
    return f"duckdb.sql(\"SELECT count(*) AS n FROM {duckdb_reader(fmt)}('{target}'{extra})\").df()"


def size_text(n: int) -> str:
    """Return a byte count the way a person says it (3.0 GB, 512 MB)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def streaming_lines(fmt: str, size: int, budget_mb: int, target: str, hive: bool = False) -> list[str]:
    """Return the lines a description gives a file or dataset too big to load whole."""
    need = size_text(load_bytes(fmt, size))
    return [
        f"Too big to load whole: {size_text(size)} on disk, about {need} as a DataFrame, and a script has "
        f"{budget_mb:,} MB (sandbox.memory_mb). Do not read it with pandas; query it where it lies with DuckDB "
        "(lazy: only what a query needs is read; it spills to the work folder):",
        f"  load: rel = {stream_hint(fmt, hive).replace('{path}', repr(target))}  (a lazy relation: "
        "rel.filter(...), rel.aggregate(...), rel.limit(5).df())",
        f"  e.g. {sql_example(fmt, target, hive)}",
    ]
