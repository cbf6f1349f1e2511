"""Per-column facts from a sampled pandas DataFrame: kind, nulls, examples, ranges, top values, units."""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import unicodedata
import warnings
import zlib
from collections import Counter
from typing import Any

from dslake_index.profilers.base import LATER_COLUMNS, Column, Limits, Table
from dslake_index.profilers.time_gaps import time_gaps
from dslake_index.profilers.value_kinds import (
    THIRDS_WORDS,
    after_year_kind,
    minus_one_sentinel,
    numbered_kind,
    on_thirds_grid,
)

MAX_TEXT = 80  # characters kept of one example value
TOP_MAX_UNIQUE = 50  # a text column with at most this many distinct values gets top values
_UNIT_IN_NAME = re.compile(r"[\(\[]\s*([^()\[\]]{1,24}?)\s*[\)\]]\s*$")
_UNIT_SUFFIX = re.compile(
    r"(?:^|[_\s])(nT|km|m|cm|mm|um|nm|K|degC|degF|deg|kg|g|mg|ppm|ppb|hPa|Pa|mph|kph|kt|knots|s|Hz|kHz|MHz|"
    r"GHz|keV|MeV|eV|cm3|m3|m2|km2|kW|MW|GW|kWh|MWh|V|mV|W|pct|percent|usd|USD|eur|EUR|mm_hr|in|inches|ft|"
    r"acres|ha|days|hours|hrs|mins|yrs|years)$"
)
# A unit over a unit at a name's end: 'Speed_km_s' (km/s), 'Flux_W_m2' (W/m2), 'Rain_mm_hr' (mm/hr).
_RATIO_SUFFIX = re.compile(r"(?:^|[_\s])(nT|km|m|cm|mm|kg|g|mg|W|kW|MW|J|mol|deg|rad|particles|counts)[_\s]"
                           r"(s|sec|h|hr|day|yr|m2|m3|cm2|cm3|km2|sr|kg|L)$")
_VOLUMES = ("cm3", "m3")
_COUNT_BASE = re.compile(r"(?:^|[_\s])(N|n|Np|Na|Ne|Ni|density|count|number|conc)$|^N[a-z]?$")
_NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_THOUSANDS = re.compile(r"^\s*[-+]?\d{1,3}(,\d{3})+(\.\d+)?\s*$")
# 9s sentinels (99, 999.9, 99999.99, -9999, 9.99e+32) and the 1e30-1e38 fills of CDF and netCDF files
_FILL = re.compile(r"^-?9{2,}(\.9+)?$|^-?9+\.9+$|^-?9\.9+e\+?\d+$|^-?1(\.0)?e\+?3\d$")
_NUMBER_OR_GROUPED = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
_CODE = re.compile(r"^0\d")  # a leading zero: a code such as a ZIP or station id, not a number
# said of a column whose numbers pandas cannot parse as the hint stands (the load check accepts it when said)
LOADS_AS_TEXT = "pandas loads the column as text"
_MONEY_PCT = re.compile(r"^\s*[-+]?[$€£]?\s*[-+]?[\d,]*\.?\d+\s*(%|[kKmMbB]n?)?\s*$")
_DATE_HINT = re.compile(
    r"^\s*(\d{4}[-/.]\d{1,2}([-/.]\d{1,2})?([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?|"
    r"\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}( \d{1,2}:\d{2}(:\d{2})?( ?[AaPp][Mm])?)?|"
    r"[A-Za-z]{3,9}\.? \d{1,2},? \d{4}|\d{1,2} [A-Za-z]{3,9}\.? \d{4})\s*$"
)


def jsonable(value: Any) -> Any:
    """Return a JSON-ready, short, deterministic form of one cell value."""
    # the plain Python types first, tested by exact type: a sample's cells are nearly all of them, and the general
    # path below (hasattr, isinstance chains) cost more than the rest of building a sample
    kind = type(value)
    if kind is str:
        if len(value) <= MAX_TEXT:
            return value
    elif kind is float:
        if value != value:
            return None
        if value in (math.inf, -math.inf):
            return "inf" if value > 0 else "-inf"
        return value
    elif kind is int or kind is bool:
        return value
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (ValueError, AttributeError):
            value = str(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return _iso(value)
    if type(value).__name__ in ("Timestamp", "NaTType"):
        return None if str(value) == "NaT" else _iso(value.to_pydatetime())
    if isinstance(value, bytes):
        value = value[:MAX_TEXT].decode("utf-8", "replace")
    text = str(value)
    if len(text) <= MAX_TEXT:
        return text
    cut = text[: MAX_TEXT - 1]
    space = cut.rfind(" ")  # after a whole word: a name cut in half cannot be matched to the question's
    return (cut[:space] if space >= MAX_TEXT // 2 else cut).rstrip(" ,;:(") + "…"


def _iso(value: Any) -> str:
    if isinstance(value, dt.datetime) and value.time() == dt.time(0) and value.tzinfo is None:
        return value.date().isoformat()
    return value.isoformat()


@functools.lru_cache(maxsize=4096)  # files of one family repeat the same column names
def unit_of(name: str) -> str | None:
    """Return the unit written in a column name, e.g. 'Altitude (km)' -> 'km', 'Scalar_B_nT' -> 'nT'."""
    name = str(name).strip()
    match = _UNIT_IN_NAME.search(name)
    if match and not match.group(1).strip().isdigit():
        unit = match.group(1).strip()
        # '(km)', '(kg/m^3)', '(W m-2)' are units; '(see note)', '(as of July 1)', 'Longitude (X)' are not
        if unit in ("X", "Y", "Z", "x", "y", "z", "N", "n", "%s"):
            return None
        if " " not in unit or all(len(w) <= 4 and not w.isalpha() or len(w) <= 2 for w in unit.split()):
            return unit
    ratio = _RATIO_SUFFIX.search(name)
    if ratio and len(name) > len(ratio.group(0)):
        return f"{ratio.group(1)}/{ratio.group(2)}"  # 'SW_Plasma_Speed_km_s' is km/s, not s
    match = _UNIT_SUFFIX.search(name)
    if not match or len(name) <= len(match.group(1)) + 1:
        return None
    unit = match.group(1)
    base = name[: len(name) - len(unit)].rstrip("_ ")
    if unit in _VOLUMES and _COUNT_BASE.search(base):
        return f"per {unit}"  # 'N_cm3' is a number density, per cubic centimetre, not a volume
    return unit


def is_number_text(text: str) -> bool:
    """Return True for text pandas would read as a number."""
    return bool(_NUMBER.match(text))


def text_kind(values: list[str]) -> str | None:
    """Name what a text column really holds: 'date', 'number with thousands separators', 'money or percent'."""
    vals = [v for v in values if v and v.strip()]
    if not vals:
        return None
    n = len(vals)
    if n - list(map(_DATE_HINT.match, vals)).count(None) >= 0.9 * n:  # matched in C, not a generator per value
        return "date"
    if sum(1 for v in vals if _THOUSANDS.match(v) or _NUMBER.match(v)) >= 0.9 * n and any(
        _THOUSANDS.match(v) for v in vals
    ):
        return "thousands"
    if sum(1 for v in vals if _MONEY_PCT.match(v)) >= 0.9 * n and any(("%" in v or "$" in v) for v in vals):
        return "money/percent"
    return None


def _first_distinct(values: list[Any], k: int) -> list[Any]:
    try:
        return list(dict.fromkeys(values))[:k]  # order-keeping; fast for hashable cells
    except TypeError:
        pass
    seen: list[Any] = []
    keys: set[str] = set()
    for v in values:
        key = repr(v)
        if key not in keys:
            keys.add(key)
            seen.append(v)
            if len(seen) >= k:
                break
    return seen


def _first_distinct_hashable(values: list[Any], k: int) -> list[Any]:
    """Return _first_distinct(values, k) of cells known hashable (numbers, Arrow's strings), looking at a
    prefix first: the first k distinct values of a prefix that holds k of them are the whole list's first k, and
    hashing all 200 of a column's head cost more than the rest of describing it."""
    n = 4 * k
    while True:
        found = list(dict.fromkeys(values[:n]))
        if len(found) >= k or n >= len(values):
            return found[:k]
        n *= 4


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def describe_columns(table: Table, df: Any, limits: Limits) -> None:
    """Set a table's described columns (the first limits.max_columns), the short facts of the next LATER_COLUMNS,
    and the names and kinds of the rest."""
    table.columns = column_stats(df, limits)
    table.later_columns = [short_facts(c) for c in column_stats(df, limits, limits.max_columns, LATER_COLUMNS)]
    past = limits.max_columns + len(table.later_columns)
    names, dtypes = list(df.columns), list(df.dtypes)  # no frame slice: it cost ~1 ms on a frame of 57 blocks
    table.more_columns = [[str(name), _DTYPE_KIND.get(dtype.kind, "")]
                          for name, dtype in zip(names[past:], dtypes[past:], strict=True)]


def width_notes(n_cols: int, limits: Limits) -> list[str]:
    """Return a note on how a wide table's columns are described: the first in full, the next in short, the rest by
    name."""
    if n_cols <= limits.max_columns:
        return []
    later = min(n_cols - limits.max_columns, LATER_COLUMNS)
    rest = n_cols - limits.max_columns - later
    return [f"{n_cols} columns; the first {limits.max_columns} are profiled in full, "
            + (f"the next {later} in short (type, missing, fill value, range), the other {rest} by name" if rest
               else "the rest in short (type, missing, fill value, range)")]


def short_facts(col: Column) -> Column:
    """Return what a short line says of a column (type, unit, missing, fill value, range, what its values show,
    gaps): its examples, counts of distinct values, mean and kinds of rows are not kept."""
    return Column(name=col.name, dtype=col.dtype, non_null=col.non_null, nulls=col.nulls, min=col.min, max=col.max,
                  unit=col.unit, fill=col.fill, fill_count=col.fill_count, shows=col.shows, gaps=col.gaps)


# the kind a column past the described ones shows, from its dtype alone (text needs its values read to say more)
_DTYPE_KIND = {"i": "int", "u": "int", "f": "float", "b": "bool", "M": "datetime"}


def column_arrays(df: Any, count: int, first: int = 0) -> list[Any]:
    """Return the arrays of count columns of a frame from its first-th, each taken once (ndarray or pandas
    extension array).

    pandas' positional column accessor costs ~1 µs a column; a Series per column (iloc, items) ~15-50 µs, and a
    frame slice by iloc a millisecond on the one-block-per-column frames read_csv makes.
    """
    take = getattr(df, "_get_column_array", None)
    if take is not None:
        try:
            return [take(j) for j in range(first, min(first + count, df.shape[1]))]
        except (AttributeError, IndexError, TypeError):  # another pandas: the public, slower way
            pass
    import numpy as np

    return [s.to_numpy() if isinstance(s.dtype, np.dtype) else s.array
            for _, s in df.iloc[:, first : first + count].items()]


def column_stats(df: Any, limits: Limits, first: int = 0, count: int | None = None) -> list[Column]:
    """Describe count columns of a DataFrame (a sample or the whole table) from its first-th: by default its first
    limits.max_columns."""
    import numpy as np

    arrays = column_arrays(df, limits.max_columns if count is None else count, first)
    names = [str(c) for c in list(df.columns[first : first + len(arrays)])]
    for j, arr in enumerate(arrays):
        dtype = arr.dtype
        # pandas' Int64 holds pd.NA, which numpy cannot sort or compare: as pandas' readers do, use float
        if dtype.kind in "iu" and not isinstance(dtype, np.dtype):
            nulls = bool(arr.isna().any())
            arrays[j] = arr.to_numpy(dtype="float64", na_value=np.nan) if nulls else arr.to_numpy(
                dtype=dtype.numpy_dtype)
    kinds = [a.dtype.kind for a in arrays]
    cols: list[Column | None] = [None] * len(kinds)
    for kind in "iuf":  # numeric columns in one 2-D array per kind: no per-column pandas overhead
        idx = [j for j, k in enumerate(kinds) if k == kind]
        if idx:
            parts = [np.asarray(arrays[j], dtype=np.float64) if kind == "f" else np.asarray(arrays[j]) for j in idx]
            # column-major, as pandas lays out a frame's values: a mean sums along each column's memory (pairwise),
            # so a row-major copy would round some means differently in their last digit
            block = np.vstack(parts).T
            for j, col in zip(idx, _numeric_block(block, [names[j] for j in idx], kind, limits), strict=True):
                cols[j] = col
    for j in range(len(kinds)):
        if cols[j] is None:
            cols[j] = _one_column(df.iloc[:, first + j], names[j], limits)
    out = [c for c in cols if c is not None]
    time_kinds(out)
    return out


def _numeric_block(block: Any, names: list[str], kind: str, limits: Limits) -> list[Column]:
    """Describe the columns of a 2-D numeric array at once (vectorised over columns)."""
    import numpy as np

    n = block.shape[0]
    if n == 0:
        return [Column(name=nm, dtype="empty", non_null=0, nulls=0, unit=unit_of(nm)) for nm in names]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if kind == "f":
            mask = ~np.isnan(block)
            finite = np.where(np.isfinite(block), block, np.nan)
            mins, maxs, means = np.nanmin(finite, 0), np.nanmax(finite, 0), np.nanmean(finite, 0)
            # floor(x) == x is mod(x, 1) == 0 for every finite x (and False for the NaN that stands for inf here),
            # at a tenth of its cost
            whole = np.all((np.floor(finite) == finite) | ~mask, axis=0) & (np.nanmax(np.abs(finite), 0) < 2**53)
        else:
            mask = np.ones(block.shape, dtype=bool)
            mins, maxs, means = block.min(0), block.max(0), block.mean(0, dtype=np.float64)
            whole = np.ones(block.shape[1], dtype=bool)
        srt = np.sort(block, axis=0)  # NaN sorts last
        changes = (srt[1:] != srt[:-1]) & ~np.isnan(srt[1:].astype(np.float64))
    non_null = mask.sum(0)
    unique = changes.sum(0) + (non_null > 0)
    fills = {j: f for j in range(block.shape[1]) if (f := _fill_of(block[:, j], mins[j], maxs[j])) is not None}
    for j in range(block.shape[1]):  # -1 standing for missing data (a count never measured): checked after the 9s
        if j not in fills and mins[j] == -1 and minus_one_sentinel(block[:, j], -1, bool(whole[j])):
            fills[j] = -1.0
    out = []
    # Python numbers once per block (what jsonable's .item() made of each numpy scalar, one call at a time)
    min_list, max_list, mean_list = mins.tolist(), maxs.tolist(), means.tolist()
    for j, name in enumerate(names):
        col = Column(name=name, dtype="empty", non_null=int(non_null[j]), nulls=int(n - non_null[j]),
                     unit=unit_of(name))
        if non_null[j]:
            col.dtype = "int" if kind in "iu" else "float"
            if kind == "f" and col.nulls and whole[j]:
                col.dtype = "float (whole numbers; float because of missing values)"
            col.unique = int(unique[j])
            values = block[:200, j]
            if kind == "f":
                values = values[mask[:200, j]]
            col.examples = [jsonable(v) for v in _first_distinct_hashable(values.tolist(), limits.max_examples)]
            if not math.isnan(float(min_list[j])):
                col.min, col.max = jsonable(min_list[j]), jsonable(max_list[j])
                col.mean = _round(float(mean_list[j]))
            if j in fills:
                _set_fill(col, block[:, j], fills[j])
            if whole[j] or name.isdigit():
                col.shows = _shows(block[:, j], srt[: int(non_null[j]), j], fills.get(j), name, bool(whole[j]))
        out.append(col)
    return out


def _shows(values: Any, ordered: Any, fill: float | None, name: str, whole: bool) -> str | None:
    """Return what a column's values show (value_kinds): a code on a grid of thirds x10, or a numbered column's
    kind. ordered: the column's values without NaN, sorted."""
    import numpy as np

    if ordered.size == 0:
        return None
    distinct = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    if fill is not None:
        distinct = distinct[distinct != fill]
    if whole and on_thirds_grid(distinct):
        return THIRDS_WORDS
    if not name.isdigit():
        return None
    kept = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    if fill is not None:
        kept = kept[kept != fill]
    return numbered_kind(kept, distinct, whole)


def time_kinds(columns: list[Column]) -> None:
    """Name the day-of-year and hour columns that follow a year column among a table's numbered columns (from
    their ranges: a header-less series' time is year, day, hour)."""
    before: str | None = None
    for col in columns:
        if col.name.isdigit() and col.shows is None and col.dtype == "int":
            col.shows = after_year_kind(col.min, col.max, col.unique, before)
        before = col.shows if col.name.isdigit() else None


@functools.lru_cache(maxsize=4096)  # the maxima of a family's columns repeat from file to file
def looks_like_fill(value: Any) -> bool:
    """Return True for sentinels that stand for missing data: 99, 999.9, 9999999, -9999, 9.99e+32, 1e+31."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value or abs(value) < 9:
        return False
    text = str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))
    return bool(_FILL.match(text))


def _fill_of(values: Any, low: Any, high: Any) -> float | None:
    """Return the fill value of a numeric column: a 9s sentinel at an extreme, well apart from the other values."""
    import numpy as np

    for cand in (high, low):
        try:
            cand = float(cand)
        except (TypeError, ValueError):
            continue
        if not looks_like_fill(cand) or (cand < 0 and cand != low):
            continue
        others = values[(values != cand) & ~np.isnan(values.astype(np.float64))]
        # 99 among 0..98 is a value; 99 among 51..52, or 9.99e+32 among 1e-13, is a marker. A column holding
        # nothing else (ELEMENT_SET_NO: 999 in every row) shows no other value to stand apart from: it is the
        # column's own value, a code, not missing data.
        if others.size and abs(cand) > 1.5 * float(np.abs(others.astype(np.float64)).max()):
            return cand
    return None


def _set_fill(col: Column, values: Any, fill: float) -> None:
    """Record a fill value and give min, max and mean of the other values."""
    import numpy as np

    vals = values.astype(np.float64)
    vals = vals[~np.isnan(vals)]
    others = vals[vals != fill]
    col.fill, col.fill_count = jsonable(fill), int((vals == fill).sum())
    if col.dtype == "int" and float(fill).is_integer():
        col.fill = int(fill)
    if others.size:
        col.min, col.max, col.mean = jsonable(others.min()), jsonable(others.max()), _round(float(others.mean()))
        if col.dtype == "int":
            col.min, col.max = int(col.min), int(col.max)
    else:
        col.min = col.max = col.mean = None


def fill_notes(columns: list[Column]) -> list[str]:
    """Return one note naming each fill value and the columns where it stands for missing data."""
    found: dict[str, list[str]] = {}
    for col in columns:
        if col.fill is not None:
            found.setdefault(_num_text(col.fill), []).append(col.name)
    if not found:
        return []
    each = [f"{v} in column(s) {column_list(names)}" + ("" if looks_like_fill(float(v)) else
                                                      " (likely: every other value there is 0 or more)")
            for v, names in sorted(found.items())]
    return ["fill values that stand for missing data (replace them with NaN before computing; the ranges and "
            "means below leave them out): " + "; ".join(each)]


def repeated_times(columns: list[Column]) -> list[str]:
    """Return notes on time columns that are nearly but not quite unique: rows sharing one time are repeated
    records (element sets issued twice for one epoch), which a count or a mean per time would take twice."""
    notes = []
    for col in columns:
        if not col.dtype.startswith(("text (dates)", "datetime")) or not col.unique or not col.non_null:
            continue
        if 0.5 * col.non_null <= col.unique < col.non_null:
            notes.append(f"column {col.name!r} holds {col.unique:,} distinct times in {col.non_null:,} rows: "
                         f"{col.non_null - col.unique:,} row(s) repeat a time of another row (a record issued "
                         f"again); drop them with drop_duplicates(subset=[{col.name!r}]) if each time should count once")
    return notes


_PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)\s*%")
SHARE_SLACK = 0.003  # implied totals this far from the rows' sum are rounding of the shares, not a disagreement


def share_totals(df: Any) -> list[str]:
    """Return a note where a table's own numbers disagree: a count column and a percent column whose shares imply
    a total other than the sum of the counts (report types summing to 6,495,932 with shares of a stated
    6,471,708: the rows overlap, or the shares are of another total). Each share is taken as rounded to its own
    decimals, so the implied total is a range; the note is written only when the sum lies outside it."""
    import pandas as pd

    if len(df) < 2 or len(df) > 1000:
        return []
    counts = [c for c in df.columns if df[c].dtype.kind in "iu"]
    if not counts:
        return []
    texts = [c for c in df.columns if (df[c].dtype.kind == "O" or str(df[c].dtype) in ("str", "string"))
             and any("%" in str(v) for v in df[c].iloc[:20].tolist())]  # cheap first look: shares show '%'
    notes = []
    for p in texts:
        found = df[p].astype(str).str.extract(_PERCENT, expand=False)
        shares = pd.to_numeric(found, errors="coerce")
        if shares.notna().sum() < 2 or shares.notna().sum() < 0.8 * df[p].notna().sum() or shares.sum() > 101:
            continue
        half = found.map(lambda t: 0.5 * 10 ** -(len(t.split(".")[1]) if isinstance(t, str) and "." in t else 0))
        for c in counts:
            both = shares.notna() & (shares - half > 0)
            if both.sum() < 2:
                continue
            total = float(df[c].sum())
            low = (df.loc[both, c] / ((shares[both] + half[both]) / 100)).max()
            high = (df.loc[both, c] / ((shares[both] - half[both]) / 100)).min()
            if not total or low > high or low <= total <= high:
                continue  # shares agree with the sum, or not even with each other
            notes.append(f"the shares in column {str(p)!r} imply a total of {low:,.0f} .. {high:,.0f} for column "
                         f"{str(c)!r}, whose rows sum to {total:,.0f}: the rows overlap or the shares are of another "
                         "stated total; use the stated total for shares, not the rows' sum")
            break
    return notes


MAX_NAMES_LISTED = 12  # named (not numbered) columns a note lists before it counts the rest


def column_list(names: list[str]) -> str:
    """Return column names for a note, whole: numbered columns as runs ('8-21, 23'), named ones up to
    MAX_NAMES_LISTED and then how many more (a list cut with '…' read as if it ended there)."""
    if names and all(n.isdigit() for n in names):
        numbers = sorted(int(n) for n in names)
        runs: list[list[int]] = []
        for n in numbers:
            if runs and n == runs[-1][-1] + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
        return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    shown = ", ".join(names[:MAX_NAMES_LISTED])
    return shown if len(names) <= MAX_NAMES_LISTED else f"{shown} and {len(names) - MAX_NAMES_LISTED} more"


def _num_text(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 else str(value)


def _numeric_column(arr: Any, name: str, kind: str, limits: Limits) -> Column:
    import numpy as np

    n = len(arr)
    col = Column(name=name, dtype="empty", unit=unit_of(name))
    if kind in "iu":
        col.nulls, col.non_null = 0, n
        if n:
            col.dtype = "int"
            col.unique = int(len(np.unique(arr)))
            col.examples = [jsonable(v) for v in _first_distinct_hashable(arr[:200].tolist(), limits.max_examples)]
            col.min, col.max = jsonable(arr.min()), jsonable(arr.max())
            col.mean = _round(float(arr.mean()))
        return col
    mask = ~np.isnan(arr)
    vals = arr[mask]
    col.non_null, col.nulls = int(mask.sum()), int(n - mask.sum())
    if vals.size:
        col.dtype = "float"
        if col.nulls and np.all(np.mod(vals, 1) == 0) and np.abs(vals).max() < 2**53:
            col.dtype = "float (whole numbers; float because of missing values)"
        col.unique = int(len(np.unique(vals)))
        col.examples = [jsonable(v) for v in _first_distinct_hashable(vals[:200].tolist(), limits.max_examples)]
        finite = vals[np.isfinite(vals)]
        if finite.size:
            col.min, col.max = jsonable(finite.min()), jsonable(finite.max())
            col.mean = _round(float(finite.mean()))
    return col


ROW_SKETCH = 64  # smallest row hashes kept per table: exact for small tables, an estimate beyond
_HASH_BITS = 53  # hashes are cut to what a JSON number holds exactly


def row_facts(df: Any) -> tuple[int, list[int]]:
    """Return (rows equal to an earlier row, the ROW_SKETCH smallest distinct row hashes) of a frame."""
    import numpy as np
    import pandas as pd

    if df.empty:
        return 0, []
    try:
        hashes = pd.util.hash_pandas_object(df, index=False).to_numpy() >> np.uint64(64 - _HASH_BITS)
    except TypeError:  # unhashable cells (lists read from JSON)
        return 0, []
    distinct = np.unique(hashes)
    return int(len(hashes) - len(distinct)), [int(h) for h in distinct[:ROW_SKETCH]]


def _line_hash(line: str) -> int:
    # two CRC-32s with different seeds make 53 bits: C speed (a cryptographic hash cost 7% of a CSV's profile),
    # and collisions among a family's rows are as rare as they need to be for a sketch
    data = line.strip().encode()
    return ((zlib.crc32(data) << 21) ^ zlib.crc32(data, 0x9E3779B9)) & ((1 << _HASH_BITS) - 1)


def line_facts(lines: list[str]) -> tuple[int, list[int], list[int]]:
    """Return row_facts of a table's data lines, from their text (cheaper than hashing a parsed frame), and the
    hashes of its first and last line (a boundary row two files share)."""
    # _line_hash inlined: a call per line was a third of this function's time on a 1,440-row file
    crc, mask = zlib.crc32, (1 << _HASH_BITS) - 1
    hashes = [((crc(data) << 21) ^ crc(data, 0x9E3779B9)) & mask for data in [ln.strip().encode() for ln in lines]]
    distinct = set(hashes)
    return len(lines) - len(distinct), sorted(distinct)[:ROW_SKETCH], [hashes[0], hashes[-1]] if hashes else []


def sample_rows(df: Any, limits: Limits) -> list[list[Any]]:
    """Return the first rows of a DataFrame as JSON-ready lists (first max_columns columns)."""
    import numpy as np

    # each column's head as objects, as DataFrame.to_numpy(dtype=object) makes them (a numpy column by astype, an
    # extension column by its to_numpy), without slicing a frame of one block per column
    cells = [arr[: limits.sample_rows].astype(object) if isinstance(arr, np.ndarray)
             else arr[: limits.sample_rows].to_numpy(dtype=object) for arr in column_arrays(df, limits.max_columns)]
    if not cells:
        return [[] for _ in range(min(len(df), limits.sample_rows))]
    return [[jsonable(v) for v in row] for row in zip(*(c.tolist() for c in cells), strict=True)]


def _one_column(s: Any, name: str, limits: Limits) -> Column:
    import numpy as np

    n = len(s)
    kind = s.dtype.kind
    col = Column(name=name, dtype="empty", unit=unit_of(name))
    if kind in "iuf":
        return _numeric_column(s.to_numpy(dtype="float64" if kind == "f" else None), name, kind, limits)
    if kind == "b":
        arr = s.to_numpy()
        col.nulls, col.non_null, col.dtype = 0, n, "bool"
        col.unique = int(len(np.unique(arr))) if n else 0
        col.examples = [jsonable(v) for v in _first_distinct(arr[:200].tolist(), limits.max_examples)]
        return col
    chunks = _arrow_strings(s)
    # a column of pandas' str dtype keeps its cells in Arrow: its nulls are counted there already, and its distinct
    # values counted there without a hash table built in pandas
    non_null = s if chunks is not None and chunks.null_count == 0 else s.dropna()
    col.non_null, col.nulls = len(non_null), n - len(non_null)
    if non_null.empty:
        return col
    try:
        if chunks is not None:
            import pyarrow.compute as pc

            col.unique = int(pc.count_distinct(chunks, mode="only_valid").as_py())
        else:
            col.unique = int(non_null.nunique())
    except TypeError:  # unhashable cells (lists from json)
        non_null = non_null.astype(str)
        col.unique = int(non_null.nunique())
    head = None  # the first 500 cells as Python strings, read from Arrow once for every check that looks at them
    if chunks is not None:
        import pyarrow.compute as pc

        if chunks.null_count:
            chunks = pc.drop_null(chunks)
        head = chunks.slice(0, 500).to_pylist()
    first = head[:200] if head is not None else non_null.iloc[:200].tolist()
    # Arrow's cells are str (hashable): the prefix search applies; other object cells may be lists (JSON)
    distinct = _first_distinct_hashable if chunks is not None else _first_distinct
    col.examples = [jsonable(v) for v in distinct(first, limits.max_examples)]
    if kind == "M":
        col.dtype = "datetime"
        col.min, col.max = jsonable(non_null.min()), jsonable(non_null.max())
        col.gaps = time_gaps(non_null)
        return col
    if kind == "m":
        col.dtype = "timedelta"
        return col
    col.dtype = "text" if chunks is not None else _object_dtype(non_null)  # pandas' str dtype holds text alone
    if col.dtype.startswith("text"):
        _text_facts(col, non_null, head, chunks)
    return col


def _arrow_strings(s: Any) -> Any:
    """Return the Arrow array under a Series of pandas' str dtype, or None for any other Series."""
    if str(s.dtype) != "str":
        return None
    chunks = getattr(s.array, "_pa_array", None)  # the str dtype's Arrow storage (absent for storage="python")
    import pyarrow as pa

    if isinstance(chunks, pa.ChunkedArray) and (pa.types.is_string(chunks.type) or pa.types.is_large_string(
            chunks.type)):
        return chunks
    return None


def _text_facts(col: Column, non_null: Any, head: list[str] | None = None, chunks: Any = None) -> None:
    """Name what a text column holds; head: its first 500 non-null cells when known, chunks: its Arrow cells."""
    import pandas as pd

    strings = non_null if str(non_null.dtype) == "str" else non_null.astype(str)  # astype(str) of str: a copy
    if head is None:
        head = strings.iloc[:500].tolist()
    sk = text_kind(head)
    odd = _odd_cells(strings, head[:50])
    if odd is not None:
        count, shown, marked = odd
        col.dtype = f"text: numbers, but {count:,} cell(s) are not, e.g. {shown}; {LOADS_AS_TEXT}"
        if marked:  # '*8,097,880': a number with a mark, worth keeping
            col.dtype += ": convert with pd.to_numeric(s.str.replace(r'[^0-9.eE+-]', '', regex=True))"
        nums = pd.to_numeric(strings.str.replace(r"[^0-9.eE+-]", "", regex=True), errors="coerce").dropna()
        if not nums.empty:
            col.min, col.max = jsonable(nums.min()), jsonable(nums.max())
    elif sk == "date":
        parsed = parse_dates(strings)
        if parsed.notna().sum() >= 0.9 * len(strings):
            col.dtype = "text (dates)"
            col.min, col.max = jsonable(parsed.min()), jsonable(parsed.max())
            if len(parsed) == len(strings):  # every cell parsed, not the sample a mixed format is parsed from
                col.gaps = time_gaps(parsed)
    elif sk == "thousands":
        col.dtype = "text (numbers with ',' thousands separators)"
        nums = pd.to_numeric(strings.str.replace(",", "", regex=False), errors="coerce").dropna()
        if not nums.empty:
            col.min, col.max = jsonable(nums.min()), jsonable(nums.max())
    elif sk == "money/percent":
        col.dtype = money_dtype(strings)
    elif col.dtype == "text" and col.unique is not None and (col.unique >= 2 or len(strings) <= SMALL_TABLE):
        col.kinds = row_kinds(strings.iloc[:20000].tolist())  # a small member's one kind counts in its family
    if col.unique is not None and col.unique <= TOP_MAX_UNIQUE and col.unique < len(non_null):
        if chunks is not None:  # counted in Arrow: the same counts of the same distinct strings
            import pyarrow.compute as pc

            found = pc.value_counts(chunks)
            items = zip(found.field("values").to_pylist(), found.field("counts").to_pylist(), strict=True)
        else:
            items = strings.value_counts().items()
        pairs = sorted(items, key=lambda kv: (-kv[1], str(kv[0])))[:5]
        col.top_values = [[jsonable(k), int(v)] for k, v in pairs]


MAX_KINDS = 6
SMALL_TABLE = 5  # rows of a table whose single kind of rows is kept for its family's count
KINDS_SHARE = 0.9  # share of values that must share the words the kinds are told apart next to


def row_kinds(values: list[str]) -> list[list[Any]]:
    """Return the kinds of rows a text column mixes: values that share their last (or first) words and differ
    in the word before (after) them, e.g. '... Metropolitan Statistical Area' and '... Micropolitan Statistical
    Area' in one column of areas. [[where, words, count], ...], most frequent first; one kind when every value
    shares two words or more and no split follows; [] when there are none."""
    # each distinct value once, with its count: a column of 16,000 rows often holds a few hundred names
    try:  # counted in C, then the cells that are not text dropped (the order of first sight is kept)
        distinct = Counter(values)
        for key in [k for k in distinct if not isinstance(k, str)]:
            del distinct[key]
    except TypeError:  # unhashable cells (lists read from JSON)
        distinct = Counter(v for v in values if isinstance(v, str))
    words = [(v.split(), n) for v, n in distinct.items()]
    if not words:
        return []
    total = sum(distinct.values())
    for where in ("end", "start"):
        seqs = [(w[::-1] if where == "end" else w, n) for w, n in words]
        depth = 1
        shared: Counter[tuple[str, ...]] = Counter()
        while True:
            # values with more words than depth: the kind is part of a value (a place's name goes before it)
            level: Counter[tuple[str, ...]] = Counter()
            for seq, n in seqs:
                if len(seq) > depth:
                    level[tuple(seq[:depth])] += n
            if not level or sum(level.values()) < KINDS_SHARE * total:
                break
            if len(level) == 1:  # every value shares these words: the kinds differ further in
                depth += 1
                shared = level
                continue
            if depth >= 2 and len(level) <= MAX_KINDS:
                return [[where, " ".join(k[::-1] if where == "end" else k), n]
                        for k, n in sorted(level.items(), key=lambda kv: (-kv[1], kv[0]))]
            break
        if depth > 2:  # one kind only ('TX Metropolitan Statistical Area' in every row): a family adds them up
            (words, n), = shared.items()
            return [[where, " ".join(words[::-1] if where == "end" else words), n]]
    return []


_GROUPED_INSIDE = re.compile(r"\d,\d{3}(?!\d)")
_SCALE_SUFFIX = re.compile(r"\d\s*([kKmMbB]n?)\s*$")


def money_dtype(strings: Any) -> str:
    """Name what a money or percent column's text holds beyond digits, with a cell that shows it: '$2,089M'
    among '$275M' has a thousands separator inside that a conversion dropping only '$' and 'M' would trip on."""
    values = [v.strip() for v in strings.iloc[:5000].tolist()]
    marks = [m for m in ("$", "€", "£", "%") if any(m in v for v in values)]
    parts = [f"'{m}'" for m in marks]
    grouped = next((v for v in values if _GROUPED_INSIDE.search(v)), None)
    if grouped is not None:
        parts.append(f"',' thousands separators in {sum(1 for v in values if _GROUPED_INSIDE.search(v)):,} "
                     f"cell(s), e.g. {grouped!r}")
    suffixes = sorted({m.group(1) for v in values if (m := _SCALE_SUFFIX.search(v))})
    if suffixes:
        scale = {"k": "thousands", "m": "millions", "b": "billions", "bn": "billions"}
        parts.append("a scale suffix " + ", ".join(f"{x!r} ({scale[x.lower()]})" for x in suffixes))
    if not parts:
        return "text (money or percent)"
    return ("text (money or percent: " + ", ".join(parts) + "; convert with pd.to_numeric(s.str.replace("
            "r'[^0-9.eE+-]', '', regex=True))" + (" and apply the scale)" if suffixes else ")"))


def _odd_cells(strings: Any, first: list[str] | None = None) -> tuple[int, str, bool] | None:
    """Return (count, examples, all hold digits) of the cells that keep a column of numbers as text, or None.
    first: the column's first 50 cells, when the caller has them as Python strings already."""
    head = [v.strip() for v in (strings.iloc[:50].tolist() if first is None else first)]
    if sum(1 for v in head if _NUMBER_OR_GROUPED.match(v)) < 0.8 * len(head):
        return None  # a text column (the usual case): decided on its first values, cheaply
    values = strings.iloc[:20000].str.strip()
    numbers = values.str.match(_NUMBER_OR_GROUPED)
    if values[numbers].str.match(_CODE).any():
        return None  # '041018': identifiers written with digits, not numbers
    n_odd = int((~numbers).sum())
    if n_odd == 0 or n_odd > max(3, 0.1 * len(values)) or int(numbers.sum()) < 3:
        return None
    odd = list(dict.fromkeys(values[~numbers].tolist()))
    if all(len(v) <= 12 and not any(ch.isdigit() for ch in v) for v in odd) and len(odd) <= 3:
        return None  # markers such as 'NA', '-', 'n/a': the delimited profiler passes them as na_values
    marked = all(any(ch.isdigit() for ch in v) for v in odd)
    return n_odd, ", ".join(repr(v if len(v) <= 30 else v[:29] + "…") for v in odd[:2]), marked


def parse_dates(strings: Any) -> Any:
    """Parse date strings fast with the format guessed from the first value; else a small mixed-format sample."""
    import pandas as pd
    from pandas.tseries.api import guess_datetime_format

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if _ISO.match(str(strings.iloc[0])):
            parsed = pd.to_datetime(strings, format="ISO8601", errors="coerce")
            if parsed.notna().sum() >= 0.9 * len(strings):
                return parsed
        fmt = guess_datetime_format(str(strings.iloc[0]))
        if fmt:
            parsed = pd.to_datetime(strings, format=fmt, errors="coerce")
            if parsed.notna().sum() >= 0.9 * len(strings):
                return parsed
        return pd.to_datetime(strings.iloc[:300], errors="coerce", format="mixed")


def _object_dtype(values: Any) -> str:
    if str(values.dtype) in ("str", "string"):
        return "text"
    cells = values.tolist()
    types = {type(v).__name__ for v in cells}  # every cell: one text cell among 800 numbers makes the column text
    if types <= {"str"}:
        return "text"
    if types <= {"int", "float"}:
        return "float"
    if types <= {"datetime", "Timestamp", "date"}:
        return "datetime"
    text = [v for v in cells if isinstance(v, str)]
    if types - {"str"} <= {"int", "float"} and len(text) <= 0.1 * len(cells):
        shown = ", ".join(repr(v if len(v) <= 40 else v[:39] + "…") for v in list(dict.fromkeys(text))[:2])
        return f"mixed (numbers and {len(text):,} text cell(s), e.g. {shown}: {LOADS_AS_TEXT})"
    return "mixed (" + ", ".join(sorted(types)) + ")"


def unique_column_names(names: list[str]) -> list[str]:
    """Suffix repeated column names as pandas does ("a", "a.1", "a.2"), so every column can be addressed."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            seen[name] += 1
            out.append(f"{name}.{seen[name]}")
        else:
            seen[name] = 0
            out.append(name)
    return out


def name_notes(names: list[str]) -> list[str]:
    """Return notes on column names a coder could mistype: invisible characters, leading or trailing spaces."""
    notes = []
    odd = [n for n in names if not n.isprintable()]
    if odd:
        chars = sorted({ch for n in odd for ch in n if not ch.isprintable()})
        what = ", ".join(f"{ch!r} ({unicodedata.name(ch, 'control character').lower()})" for ch in chars[:4])
        notes.append(f"column names hold invisible characters: {what}. Names are shown escaped, as Python writes "
                     f"them (e.g. {odd[0]!r}): use them exactly so, or normalise the names first, e.g. "
                     "df.columns = [' '.join(str(c).split()) for c in df.columns]")
    if any(n != n.strip() for n in names):
        notes.append("some column names have leading or trailing spaces: use them exactly, or strip df.columns")
    return notes


_YEAR_NAME = re.compile(r"(^|[\s_])(year|yr|date)s?($|[\s_])", re.I)


def _years(values: list[str]) -> bool:
    return bool(values) and all(v.isdigit() and len(v) == 4 and 1500 <= int(v) <= 2200 for v in values)


def header_misfits(df: Any) -> list[str]:
    """Return notes on columns whose name promises years or dates but whose values are words (shifted headers)."""
    def cells(c: Any) -> list[str]:
        return [str(v).strip() for v in df[c].dropna().iloc[:200].tolist()]

    named = [c for c in [c for c in list(df.columns)[:200] if _YEAR_NAME.search(str(c))] if df[c].dtype.kind in "OU"]
    if not named:  # the usual case, and a cheap one: no column named for years holds text
        return []
    years: list[Any] | None = None  # the columns holding years: looked for only once a named one holds words
    notes = []
    for c in named:
        vals = cells(c)
        if not vals:
            continue
        if any(ch.isdigit() for v in vals for ch in v[:1]) or text_kind(vals) == "date":
            continue
        if years is None:
            years = [o for o in list(df.columns)[:200] if o not in named
                     and _years([v[:-2] if v.endswith(".0") else v for v in cells(o)])]
        note = f"column {str(c)!r} holds words such as {vals[0]!r}, not years or dates"
        other = [o for o in years if o != c]
        if other:
            note += (f", while column {str(other[0])!r} holds years: the header names look swapped or shifted; "
                     "decide which column is which from the values, not the names")
        notes.append(note)
    return notes


_YEAR_ONLY_NAME = re.compile(r"(^|[\s_])(year|yr)s?($|[\s_])", re.I)
_MAX_OUTLIERS_SHOWN = 5


def year_outliers(df: Any) -> list[str]:
    """Return notes on year columns holding a few numbers that are not years (e.g. '038' among 2001 .. 2024).

    A range of '38 .. 2024' reads as a bad row a script should drop, yet such a cell is usually a typo of a real
    year: a filter on years loses a row the question needs, so the note shows the cell where it sits.
    """
    notes = []
    import numpy as np

    for c in [c for c in list(df.columns)[:200] if _YEAR_ONLY_NAME.search(str(c)) and df[c].dtype.kind in "iuf"]:
        s = df[c]
        # a numpy column holds no pd.NA: its float copy is what to_numpy(dtype, na_value) gives, at a third of the CPU
        arr = (s.to_numpy().astype(np.float64) if isinstance(s.dtype, np.dtype)
               else s.to_numpy(dtype=np.float64, na_value=np.nan))
        with np.errstate(invalid="ignore"):
            if not ((arr < 1500) | (arr > 2200)).any():  # NaN compares False: every value a year, the usual case
                continue
        values = df[c].dropna()
        plausible = values.between(1500, 2200)
        odd = values[~plausible]
        if odd.empty or plausible.sum() < max(3, 4 * len(odd)):
            continue  # every value a year, or too few years to call the rest typos
        shown = ", ".join(f"{v:g} (at index {i})" for i, v in odd.iloc[:_MAX_OUTLIERS_SHOWN].items())
        notes.append(f"column {str(c)!r} holds years ({values[plausible].min():g} .. {values[plausible].max():g}) and "
                     f"{len(odd)} value(s) that are not years: {shown}; likely typos in the data, so decide what each "
                     "stands for before filtering on years")
    return notes
