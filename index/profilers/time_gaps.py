"""Holes inside one file's time series: a column of times on a regular step (hourly, daily) with steps missing.

A family's description says which periods no member covers (family_stats.coverage_gaps); a single file's series
can have holes of its own: an hourly file missing two days reads as complete from its first and last time, and a
mean per day or a count of hours over its span is then wrong. The times a profile parsed are checked here once:
their distinct values, sorted, the step most of them are apart by, and the steps missing between them.
"""

from __future__ import annotations

from typing import Any

MIN_TIMES = 10  # distinct times a series needs before its step is trusted
STEP_SHARE = 0.8  # share of consecutive distinct times one step apart: a regular series (months are not)
MISSING_SHARE = 0.5  # past this share of steps missing the times are sparse (a season, events), not a series with holes
GAPS_SAID = 3  # the longest gaps named; the rest are counted
_UNITS = ((7 * 86400, "week"), (86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))


def time_gaps(parsed: Any) -> str | None:
    """Return a line on the holes in a column of parsed times (pandas datetimes, NaT for missing): its step, how
    many steps are missing of how many, and the longest gaps with their bounds; None when the times do not run on
    one step or no step is missing."""
    import numpy as np

    times = parsed.dropna()
    if len(times) < MIN_TIMES:
        return None
    seconds = times.to_numpy(dtype="datetime64[s]").astype(np.int64)
    diffs = np.diff(seconds)
    if diffs.size and diffs.min() > 0 and diffs.min() == diffs.max():
        return None  # in order, one step apart throughout: the usual complete series, decided without a sort
    if not diffs.size or diffs.min() <= 0:  # out of order or repeated times: their distinct values in order
        seconds = np.unique(seconds)
        if seconds.size < MIN_TIMES:
            return None
        diffs = np.diff(seconds)
    steps, counts = np.unique(diffs, return_counts=True)
    step = int(steps[counts.argmax()])
    if step <= 0 or counts.max() < STEP_SHARE * diffs.size:
        return None
    holes = np.nonzero(diffs > step)[0]
    if not holes.size:
        return None
    missing = np.maximum(np.round(diffs[holes] / step).astype(np.int64) - 1, 0)
    if int(missing.sum()) == 0:
        return None
    total = int((seconds[-1] - seconds[0]) // step) + 1
    if int(missing.sum()) > MISSING_SHARE * total:
        return None
    longest = holes[np.argsort(-missing, kind="stable")[:GAPS_SAID]]
    said = ", ".join(_hole(seconds[i], seconds[i + 1], step) for i in sorted(longest))
    more = f" and {holes.size - len(longest):,} more" if holes.size > len(longest) else ""
    return (f"times every {_step(step)} with {holes.size:,} gap(s) inside: {int(missing.sum()):,} of the "
            f"{total:,} steps from the first time to the last have no row; missing {said}{more}")


def _hole(before: int, after: int, step: int) -> str:
    """Return one gap: the first and last missing time and how many steps (one missing time alone)."""
    first, last = _when(before + step, step), _when(after - step, step)
    n = int(round((after - before) / step)) - 1
    return first if n == 1 else f"{first} .. {last} ({n:,})"


def _step(step: int) -> str:
    for size, name in _UNITS:
        if step % size == 0:
            count = step // size
            return name if count == 1 else f"{count} {name}s"
    return f"{step} seconds"


def _when(value: Any, step: int) -> str:
    import numpy as np

    text = str(np.datetime64(int(value), "s")).replace("T", " ")
    return text[:10] if step % 86400 == 0 else text[:16] if step % 60 == 0 else text
