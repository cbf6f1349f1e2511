"""Parquet from its metadata (schema, rows, row groups, column statistics) plus a small first-batch sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dslake_index.profilers.base import LATER_COLUMNS, Column, Limits, Profile, ProfileError, Table
from dslake_index.profilers.stats import column_stats, jsonable, sample_rows, unit_of, width_notes

MAX_ROW_GROUPS_STATS = 200  # row groups whose statistics are merged into min/max/nulls
SAMPLE_ROWS = 2000


def _merge_stats(md: Any, j: int) -> tuple[Any, Any, int | None]:
    lo = hi = None
    nulls: int | None = 0
    for g in range(min(md.num_row_groups, MAX_ROW_GROUPS_STATS)):
        st = md.row_group(g).column(j).statistics
        if st is None:
            return None, None, None
        if st.has_null_count and nulls is not None:
            nulls += st.null_count
        else:
            nulls = None
        if st.has_min_max:
            try:
                lo = st.min if lo is None or st.min < lo else lo
                hi = st.max if hi is None or st.max > hi else hi
            except TypeError:
                pass
    if md.num_row_groups > MAX_ROW_GROUPS_STATS:
        return lo, hi, None
    return lo, hi, nulls


def profile_parquet(path: Path | Any, size: int, limits: Limits, sample: bool = True) -> Profile:
    """Profile a parquet file without reading it whole.

    path: a path or a seekable binary file (an object in a store read by ranges). sample=False reads the footer
    alone: types, rows and min/max/nulls, no examples or top values (no data page is fetched).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        md = pf.metadata
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ProfileError(f"unreadable parquet file: {exc}"[:300]) from exc
    names = schema.names
    prof = Profile(format="parquet", size=size, read_hint="pd.read_parquet({path})")
    table = Table(n_rows=md.num_rows, n_cols=len(names), read_hint=prof.read_hint)
    cols = names[: limits.max_columns]
    try:
        batch = next(pf.iter_batches(batch_size=SAMPLE_ROWS, columns=cols), None) if sample else None
        df = batch.to_pandas() if batch is not None else schema.empty_table().select(cols).to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ProfileError(f"parquet data cannot be decoded: {exc}"[:300]) from exc
    # a footer alone: each column's pandas type, its counts and bounds from the statistics below
    table.columns = column_stats(df, limits) if sample else \
        [Column(name=str(n), dtype=str(t), unit=unit_of(str(n))) for n, t in df.dtypes.items()]
    leaf = {md.schema.column(j).path: j for j in range(md.num_columns)}
    for col in table.columns:
        col.dtype = f"{col.dtype} ({schema.field(col.name).type})" if col.name in names else col.dtype
        j = leaf.get(col.name)
        if j is None:
            continue
        lo, hi, nulls = _merge_stats(md, j)
        if lo is not None:
            col.min, col.max = jsonable(lo), jsonable(hi)
        if nulls is not None:
            col.nulls, col.non_null = nulls, md.num_rows - nulls
    # the later columns' short lines from the footer alone: their type, bounds and missing values, no data read
    later = names[limits.max_columns : limits.max_columns + LATER_COLUMNS]
    for name in later:
        col = Column(name=name, dtype=_arrow_kind(schema.field(name).type), unit=unit_of(name))
        j = leaf.get(name)
        lo, hi, nulls = _merge_stats(md, j) if j is not None else (None, None, None)
        if lo is not None:
            col.min, col.max = jsonable(lo), jsonable(hi)
        if nulls is not None:
            col.nulls, col.non_null = nulls, md.num_rows - nulls
        table.later_columns.append(col)
    past = limits.max_columns + len(later)
    table.more_columns = [[n, _arrow_kind(schema.field(n).type)] for n in names[past:]]
    table.sample_rows = sample_rows(df, limits)
    prof.tables.append(table)
    prof.structure = {"row_groups": md.num_row_groups, "created_by": md.created_by,
                      "schema": {n: str(schema.field(n).type) for n in names[:200]}}
    seen = f"examples and top values from the first {len(df):,} rows" if sample else \
        "no examples or top values (profiled from its footer alone, read by ranges from object storage)"
    prof.notes.append(f"{md.num_rows:,} rows in {md.num_row_groups} row group(s); min/max/nulls from the file's "
                      f"metadata, {seen}")
    if schema.metadata and b"pandas" in schema.metadata:
        prof.notes.append("written by pandas (index and dtypes restore with pd.read_parquet)")
    if md.num_rows > len(df):
        prof.sampled = True
    prof.notes += width_notes(len(names), limits)
    return prof


def _arrow_kind(kind: Any) -> str:
    """Return the short kind a named-only column shows: its Parquet type is known without reading a value."""
    import pyarrow as pa

    if pa.types.is_integer(kind):
        return "int"
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return "float"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return "datetime"
    return "bool" if pa.types.is_boolean(kind) else str(kind)
