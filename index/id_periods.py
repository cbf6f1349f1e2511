"""Ids that look alike across two families of one folder tree but do not name the same period.

STORM-AI's `OMNI2/omni2-wu001-20131129_to_20140128.csv` and `Sat_Density/swarma-wu001-20140128_to_20140131.csv`
share the id `wu001`, yet the first covers the 60 days before 2014-01-28 and the second the 3 days after: a join
on time within one id matches nothing but the boundary. When a family's member names carry an id (letters and a
digit run, one per member, 'wu001') and files elsewhere under the family's parent folder carry the same ids, each
shared id's two members are compared by their content's time coverage (name_dates.content_span); when most pairs
do not overlap, the family's entry says which family shares its ids, how the periods lie, with numbers.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from dslake_index.families import name_pattern, name_values
from dslake_index.name_dates import Span

MIN_SHARED = 3  # ids two families must share before their periods are compared
_TOKEN = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,8})(\d{2,})(?![0-9])")


@dataclass(frozen=True)
class IdPeriods:
    """Another family that shares ids with this one: its glob, and per shared id this member's and its member's
    time coverage."""

    other: str
    pairs: dict[str, tuple[Span, Span]]


def member_ids(names: list[str]) -> dict[str, str]:
    """Return {id: name} when every name holds one id of a common letter prefix ('wu001') that no other name
    holds, else {}: a constant token ('omni2') is part of the name, not an id."""
    found: dict[str, list[str]] = {}
    for name in names:
        for prefix, _digits in _TOKEN.findall(name):
            found.setdefault(prefix.lower(), []).append(name)
    for prefix, holders in sorted(found.items(), key=lambda kv: -len(kv[1])):
        if len(holders) != len(names) or len(set(holders)) != len(names):
            continue  # not one per member
        ids = {}
        for name in names:
            token = next(m.group(0) for m in _TOKEN.finditer(name) if m.group(1).lower() == prefix)
            ids[token.lower()] = name
        if len(ids) == len(names) >= MIN_SHARED:
            return ids
    return {}


def id_of(name: str, prefixes: set[str]) -> str | None:
    """Return the one id of the given letter prefixes a file name holds ('wu001'), else None."""
    tokens = [m.group(0).lower() for m in _TOKEN.finditer(name) if m.group(1).lower() in prefixes]
    return tokens[0] if len(tokens) == 1 else None


def prefix_of(ids: dict[str, str]) -> set[str]:
    """Return the letter prefixes of ids ('wu' of 'wu001')."""
    return {m.group(1).lower() for i in ids if (m := _TOKEN.match(i))}


def literal_glob(names: list[str]) -> str:
    """Return the name pattern of names with the values all of them share kept literal ('omni2-wu*-*_to_*.csv',
    not 'omni*-wu*-…')."""
    parts = name_pattern(names[0]).split("*")
    values = [name_values(n) for n in names]
    if any(len(v) != len(parts) - 1 for v in values):
        return name_pattern(names[0])
    out = parts[0]
    for i, part in enumerate(parts[1:]):
        same = {v[i] for v in values}
        out += (same.pop() if len(same) == 1 else "*") + part
    return out


def _day_span(seconds: float) -> str:
    if abs(seconds) >= 2 * 86400:
        return f"{seconds / 86400:.0f} days"
    if abs(seconds) >= 7200:
        return f"{seconds / 3600:.0f} hours"
    if abs(seconds) >= 120:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} s"


def _iso(span: Span) -> str:
    def one(value: object) -> str:
        text = str(value)
        return text[:10] if text.endswith("00:00:00") else text

    return f"{one(span.first)} .. {one(span.last)}"


def periods_line(found: IdPeriods) -> str | None:
    """Return the line on another family whose members share this family's ids but not their periods (when most
    shared ids' periods do not overlap), with the offset and each side's length; else None."""
    pairs = found.pairs
    if len(pairs) < MIN_SHARED:
        return None
    overlaps = {i: (min(a.last, b.last) - max(a.first, b.first)).total_seconds() for i, (a, b) in pairs.items()}
    apart = [i for i, o in overlaps.items() if o <= 0]
    if len(apart) * 2 < len(pairs):
        return None
    touching = sum(1 for i in apart if overlaps[i] == 0)
    after = [(b.first - a.last).total_seconds() for a, b in pairs.values() if b.first >= a.last]
    before = [(a.first - b.last).total_seconds() for a, b in pairs.values() if b.last <= a.first]
    own = statistics.median((a.last - a.first).total_seconds() for a, _ in pairs.values())
    theirs = statistics.median((b.last - b.first).total_seconds() for _, b in pairs.values())
    if len(after) >= len(before):
        gap = statistics.median(after)
        where = (f"there an id's member starts {_day_span(gap)} (median) after this family's member of that id "
                 "ends" if gap else "there an id's member starts where this family's member of that id ends")
    else:
        gap = statistics.median(before)
        where = (f"there an id's member ends {_day_span(gap)} (median) before this family's member of that id "
                 "starts" if gap else "there an id's member ends where this family's member of that id starts")
    example = sorted(pairs)[0]
    a, b = pairs[example]
    boundary = f" ({touching:,} share only their boundary time)" if touching else ""
    return (f"Ids in member names are shared with `{found.other}` ({len(pairs):,} shared ids) but not their "
            f"periods: in {len(apart):,} of {len(pairs):,} shared ids the two members' times do not overlap"
            f"{boundary}; {where}; each member here spans about {_day_span(own)}, there about "
            f"{_day_span(theirs)} (e.g. {example}: here {_iso(a)}, there {_iso(b)}). A join on time within one id "
            "matches nothing" + (" but the boundary time" if touching else "") + "; join on time across ids, or "
            "treat the two as before and after.")


def card_words(found: IdPeriods) -> str:
    """Return the card's words for another family sharing ids over other periods."""
    return f"ids shared with {found.other.rsplit('/', 2)[-2] if '/' in found.other else found.other}, other periods"
