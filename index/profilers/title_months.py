"""A title that names one month, checked against the months of the rows under it.

An export's title can carry the month its form was set to ("U.S. Wildfires December") while its rows cover every
month: that word is one setting, not what the file holds, so the title drops it and a note says so.
"""

from __future__ import annotations

import re
from typing import Any

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_MONTH_WORD = re.compile(r"\b(" + "|".join(MONTHS) + r")\b", re.IGNORECASE)
_YEAR_MONTH = re.compile(r"^(1[89]|2[01])\d\d-?(0[1-9]|1[0-2])(-\d\d)?$")  # 200001, 2000-01, 2000-01-31


def row_months(df: Any) -> tuple[str, set[int]] | None:
    """Return the first column whose every value is a date or a year-month (200001, '2000-01'), with the months of
    the year its rows hold; None when no column is one."""
    import pandas as pd

    for name in df.columns:
        values = df[name].dropna()
        if values.empty:
            continue
        if pd.api.types.is_datetime64_any_dtype(values):
            return str(name), set(values.dt.month.astype(int))
        if pd.api.types.is_bool_dtype(values) or not (pd.api.types.is_integer_dtype(values)
                                                      or pd.api.types.is_object_dtype(values)):
            continue
        texts = values.astype(str).str.strip()
        if texts.str.match(_YEAR_MONTH).all():
            return str(name), set(texts.str.replace("-", "").str[4:6].astype(int))
    return None


def checked_title(title: str | None, df: Any) -> tuple[str | None, list[str]]:
    """Return the title to give a table's file, and notes: a title naming one month loses that word when the rows
    (a date or year-month column) cover several months of the year."""
    if not title:
        return title, []
    named = {m.lower() for m in _MONTH_WORD.findall(title)}
    if len(named) != 1:
        return title, []
    found = row_months(df)
    if found is None or len(found[1]) < 2:
        return title, []
    column, months = found
    month = MONTHS[[m.lower() for m in MONTHS].index(named.pop())]
    rest = re.sub(r"\s{2,}", " ", _MONTH_WORD.sub("", title)).strip(" ,;:-–")
    shown = re.sub(r"^\s*title\s*:\s*", "", title, flags=re.IGNORECASE)
    note = (f"the title {shown!r} names {month}, but the rows cover {len(months)} months of the year (column "
            f"{column!r}): {month} is not the file's month")
    return rest or None, [note]
