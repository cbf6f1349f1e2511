"""What a numeric column's values show when nothing else says: sentinels, codes and the plain kinds of a
numbered column.

A header-less table's columns are numbers ('0' .. '4'), and no format document beside it names them: the yearly
sunspot file's five columns are a year at mid-year (1700.5), a mean, a deviation and a count with -1 where nothing
was measured, and a 0/1 definitive marker. A coder reads the values blind unless the description says what they
show. A coded column is a trap even when named: Kp is stored x10 on a grid of thirds (0, 3, 7, 10, 13, 17, ...),
and read as a plain int range its 17 looks like 17, not 1.67 (2-).

Each check here is conservative: a column is said to be a kind only when every value fits and the values show
enough of the kind's pattern that chance would rarely give it (several thirds on both sides of the tens, a -1
in more than one row among many other values, all of them 0 or more).
"""

from __future__ import annotations

from typing import Any

MINUS_ONE_OTHERS = 5  # distinct other values a column needs before a -1 among them reads as a sentinel
MINUS_ONE_ROWS = 2  # rows holding -1: a single -1 is as likely a value
COUNT_LIKE = 20  # whole-number values reaching this are counts or measures, not a small code (a flag -1..6)
THIRDS_DISTINCT = 4  # distinct values a column on the grid of thirds x10 shows at least
HOURS_DISTINCT = 12
YEAR_LOW, YEAR_HIGH = 1000, 2300  # years with a fraction (decimal dates) lie here
WHOLE_YEAR_LOW, WHOLE_YEAR_HIGH = 1900, 2100  # whole numbers read as years only here: counts reach 1000 .. 2300 too
THIRDS_WORDS = ("Kp-style codes: x10 on a grid of thirds (0, 3, 7, 10, 13, 17, ...: steps of 3.3; 13 = 1+, "
                "17 = 2-, 20 = 2); divide by 10 for the index (17 -> 1.67), not a plain int range")


def minus_one_sentinel(values: Any, low: float, whole: bool) -> bool:
    """Return True when -1 in a numeric column stands for missing data: the column's least value, in two rows or
    more, every other value 0 or more and of a measure or count (several distinct values, fractions or values of
    COUNT_LIKE and up), not a small code where -1 is one of the codes (a flag -1, 0 .. 6)."""
    import numpy as np

    if low != -1:
        return False
    finite = values[~np.isnan(values)] if values.dtype.kind == "f" else values
    is_minus = finite == -1
    if int(is_minus.sum()) < MINUS_ONE_ROWS:
        return False
    others = finite[~is_minus]
    if not others.size or float(others.min()) < 0:
        return False
    distinct = np.unique(others)
    if distinct.size < MINUS_ONE_OTHERS:
        return False
    return not whole or float(distinct[-1]) >= COUNT_LIKE


_THIRDS_LAST = [d in (0, 3, 7) for d in range(10)]  # last digits of thirds x10, indexed by digit


def on_thirds_grid(distinct: Any) -> bool:
    """Return True when a column's distinct whole values are thirds scaled by 10 and rounded (0, 3, 7, 10, 13,
    17, ...): every value's last digit 0, 3 or 7, both 3 and 7 among them, none negative, enough values."""
    import numpy as np

    if distinct.size < THIRDS_DISTINCT or float(distinct[0]) < 0:
        return False
    for part in (distinct[:THIRDS_DISTINCT], distinct):  # most int columns fail on their first few values
        last = np.mod(part.astype(np.int64), 10)
        if not np.asarray(_THIRDS_LAST)[last].all():
            return False
    return bool((last == 3).any() and (last == 7).any())


def numbered_kind(values: Any, distinct: Any, whole: bool) -> str | None:
    """Return what a numbered column's values show on their own (years at mid-year, fractional years, years, a
    0/1 flag with its counts), or None. values: the column without missing and fill values, distinct: sorted."""
    import numpy as np

    if not distinct.size:
        return None
    low, high = float(distinct[0]), float(distinct[-1])
    # a time column runs forward: a measure that happens to lie in 1000 .. 2300 (a pressure in hPa) does not
    ordered = values.size < 2 or bool((values[1:] >= values[:-1]).all())
    if not whole and ordered and YEAR_LOW <= low and high <= YEAR_HIGH:
        fractions = np.mod(distinct, 1)
        if np.allclose(fractions, 0.5):
            return f"years at their middle ({_num(low)} = mid-{int(low)}; a yearly series' time)"
        if distinct.size >= 2:
            return "fractional years (decimal dates)"
    if not whole:
        return None
    if WHOLE_YEAR_LOW <= low and high <= WHOLE_YEAR_HIGH and ordered:
        return f"a year ({_num(low)} in every row)" if distinct.size == 1 else "years"
    if distinct.size == 2 and low == 0 and high == 1:
        ones = int((values == 1).sum())
        return f"a 0/1 flag (1 in {ones:,} rows, 0 in {values.size - ones:,})"
    return None


def after_year_kind(low: Any, high: Any, unique: int | None, before: str | None) -> str | None:
    """Return 'days of the year' or 'hours of the day' for a numbered int column from its range and the kind
    of the column before it (a year, then a day of the year): the time columns of a header-less series."""
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)) or before is None:
        return None
    if before.startswith(("a year", "years")) and 1 <= low and high <= 366:
        return f"a day of the year ({_num(low)})" if unique == 1 else "days of the year (1 = January 1)"
    if before.startswith(("a day of the year", "days of the year")) and 0 <= low and high <= 23 and (
            (unique or 0) >= HOURS_DISTINCT or unique == 1):
        return "hours of the day (0 .. 23)" if unique != 1 else f"an hour of the day ({_num(low)})"
    return None


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
