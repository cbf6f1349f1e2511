"""Dates a file's name states, against the times its content covers.

An orbit file named `…__20181001T235942_20181002T235942_0201.sp3` holds epochs 2018-10-02 00:00:00 .. 23:59:50
only: a question on 2018-10-01 that picks files by their names reads the wrong day. When the catalog knows the
content's time coverage (a record format's epochs, `Profile.time_span`, or a table's date column's range) and a
name states a full date (YYYYMMDD, YYYY-MM-DD, with a time or not), the name's first date must hold some of the
content: if none of the content falls on that day, the entry says what the name states and what the content
covers. Only the first date is checked, and only against exact coverage (not a sampled table's): a range's end
date is often exclusive ('…_to_20140201' ending 2014-01-31 23:00), and a sample's range is not the file's.

The check runs when entries are written (names are not content: a profile is shared by every copy of a file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)([-_]?)(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])"
                   r"(?:T?([01]\d|2[0-3])([0-5]\d)([0-5]\d))?(?!\d)")
TIME_DTYPES = ("text (dates)", "datetime")
SPAN_LABEL = {"sp3": "epochs", "tle": "epochs"}  # what a record format's times are called


@dataclass(frozen=True)
class Span:
    """The content's time coverage: what the times are ('epochs', a column's name), first and last."""

    label: str
    first: datetime
    last: datetime


def stored_time(value: Any) -> datetime | None:
    """Return a stored ISO time (a profile's min/max, a time span's bound) as a naive datetime, or None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def content_span(tables: list[Any], time_span: list[str] | None, sampled: bool, label: str = "times") -> Span | None:
    """Return the content's exact time coverage: a record format's [first, last] times, else the range of the
    first table's first date column when the table was read whole; None when not known. tables are Table objects
    or their stored dicts."""
    if time_span and len(time_span) == 2:
        first, last = stored_time(time_span[0]), stored_time(time_span[1])
        return Span(label, first, last) if first and last else None
    if sampled or not tables or _get(tables[0], "n_rows_exact") is False:
        return None
    for col in _get(tables[0], "columns") or []:
        if str(_get(col, "dtype") or "").startswith(TIME_DTYPES):
            first, last = stored_time(_get(col, "min")), stored_time(_get(col, "max"))
            if first and last:
                return Span(f"{str(_get(col, 'name'))!r} times", first, last)
            return None
    return None


def name_dates(name: str) -> list[datetime]:
    """Return the full dates (with their times where given) a file name states, in order."""
    found = []
    for m in _DATE.finditer(name):
        y, _, mo, d, h, mi, s = m.groups()
        try:
            found.append(datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0)))
        except ValueError:
            continue
    return found


def _iso(value: datetime) -> str:
    return value.date().isoformat() if value.time() == datetime.min.time() else value.isoformat(sep=" ")


def _stated(dates: list[datetime]) -> str:
    return _iso(dates[0]) if len(dates) == 1 else f"{_iso(dates[0])} .. {_iso(dates[-1])}"


def _offset(seconds: float) -> str:
    size = abs(seconds)
    if size < 120:
        text = f"{size:.0f} s"
    elif size < 7200:
        text = f"{size / 60:.0f} min"
    elif size < 172800:
        text = f"{size / 3600:.0f} h"
    else:
        text = f"{size / 86400:.0f} days"
    return text + (" after" if seconds > 0 else " before")


def disagreement(name: str, span: Span | None) -> str | None:
    """Return 'name states X, content covers Y .. Z' when no content time falls on the name's first date."""
    dates = name_dates(name)
    if span is None or not dates:
        return None
    day = dates[0].date()
    if span.first.date() <= day <= span.last.date():
        return None
    start = _offset((span.first - dates[0]).total_seconds())
    timed = any(t.time() != datetime.min.time() for t in (span.first, span.last))
    first, last = (t.isoformat(sep=" ") if timed else _iso(t) for t in (span.first, span.last))
    return (f"the name states {_stated(dates)} but the content's {span.label} cover {first} .. {last} (it starts "
            f"{start} the name's start): none falls on {day.isoformat()}")


def file_note(name: str, span: Span | None) -> list[str]:
    """Return the note a single file's description gets when its name's dates lie about its content."""
    said = disagreement(name, span)
    if said is None:
        return []
    return [said[0].upper() + said[1:] + "; pick by the content's times, not by the date in the name"]


def family_line(members: list[tuple[str, Span | None]]) -> str | None:
    """Return a family's line on members whose names' first date holds none of their content, with the count and
    the first such member's numbers; members are (file name, content span)."""
    lying = [(name, said) for name, span in members if (said := disagreement(name, span)) is not None]
    if not lying:
        return None
    name, said = lying[0]
    return (f"Dates in member names are not the content's: in {len(lying):,} of {len(members):,} members no "
            f"content time falls on the name's first date (e.g. {name}: {said}). Pick members by their content's "
            "times, not by the dates in their names.")


def card_term(members: list[tuple[str, Span | None]]) -> str:
    """Return the card's words for the content's days when names state other days ('' when they agree)."""
    lying = [(name, span) for name, span in members if span is not None and disagreement(name, span) is not None]
    if not lying:
        return ""
    first = min(span.first for _, span in lying)
    last = max(span.last for _, span in lying)
    named = name_dates(lying[0][0])[0].date().isoformat() + (" …" if len(lying) > 1 else "")
    return f"content dates {first.date().isoformat()} to {last.date().isoformat()}, not the dates in the names ({named})"
