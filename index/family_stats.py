"""A family as one dataset: its members' statistics added up from their stored profiles, and how members relate.

Every member was profiled once. Its profile holds, per column, counts, missing and fill values, range and kinds of
rows, and per table its duplicate rows and a sketch of its row hashes (the smallest ROW_SKETCH). This module adds
them up without reading a member again: ranges and date coverage of the whole family, fill values found in any
member, notes that differ by member, rows repeated across members (rolling windows, a boundary day two files share,
a metro area listed in each of its states' files), duplicate rows inside members, and whether the family's load
line should de-duplicate.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dslake_index.name_dates import SPAN_LABEL as _SPAN_LABEL
from dslake_index.name_dates import card_term, content_span, family_line, stored_time
from dslake_index.profilers.base import Column, Profile
from dslake_index.profilers.stats import MAX_KINDS, ROW_SKETCH, short_facts
from dslake_index.profilers.textio import clip
from dslake_index.stored_json import collector_paused, loads

HASH_SPACE = float(1 << 53)  # row hashes are 53-bit (profilers/stats.py)
ESTIMATE_MARGIN = 0.1  # an estimated share of repeated rows below this is within the sketch's error: not said
MAX_NOTE_KINDS = 4  # notes some members have and the first lacks, shown
NOTE_CHARS = 300
TABLES_AGGREGATED = 3
MEMBERS_LISTED = 4  # members whose coverage is listed one by one when they differ; past it, only the outliers
SAID = 3  # gaps, or members that start later or end earlier, named in a line; the rest are counted
PARALLEL_STARTS = 20  # overlapping members whose starts lie within 1/20 of a member's span cover one period


@dataclass
class MemberFacts:
    """What one member's stored profile says: its tables (as stored) and notes."""

    path: str
    tables: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    time_span: list[str] | None = None  # a record format's first and last times (Profile.time_span)
    sampled: bool = False


@dataclass
class FamilyView:
    """The family as one dataset: the first member's profile with each column's statistics over all members,
    lines on how members relate, and whether (and how) its load line de-duplicates."""

    profile: Profile
    lines: list[str]
    dedup: str = ""  # code appended to the family's pd.concat(...) ('.drop_duplicates()'), or ''
    dedup_why: str = ""
    coverage: list[str] = field(default_factory=list)  # 'Timestamp 2013-11-29 to 2016-01-31' for the card


def member_facts(conn: sqlite3.Connection, members: list[tuple[str, str]]) -> list[MemberFacts]:
    """Return what each member's stored profile says (tables and notes) for (path, content hash) pairs, in their
    order: a family's statistics are added up from these, never by reading a member again."""
    wanted = sorted({h for _, h in members})
    stored: dict[str, tuple[list[dict[str, Any]], list[str], list[str] | None, bool]] = {}
    with collector_paused():  # megabytes of decoded statistics: see stored_json
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            for row in conn.execute(
                    "SELECT hash, json_extract(profile, '$.tables'), json_extract(profile, '$.notes'), "
                    "json_extract(profile, '$.time_span'), json_extract(profile, '$.sampled') FROM profiles "
                    f"WHERE hash IN ({','.join('?' * len(chunk))})", chunk):
                stored[row[0]] = (loads(row[1] or "[]"), loads(row[2] or "[]"), loads(row[3] or "null"),
                                  bool(row[4]))
    return [MemberFacts(path, *stored.get(h, ([], [], None, False))) for path, h in members]


def family_view(representative: Profile, facts: list[MemberFacts]) -> FamilyView:
    """Add up the members' statistics into a copy of the first member's profile and say how members relate."""
    profile = Profile.from_dict(representative.to_dict())
    lines: list[str] = []
    for t, table in enumerate(profile.tables[:TABLES_AGGREGATED]):
        stored = [m.tables[t] for m in facts if len(m.tables) > t]
        if len(stored) < 2:
            continue
        by_name = [{c.get("name"): c for c in s.get("columns") or []} for s in stored]  # one pass per member
        table.columns = [_merged(col, [named.get(col.name) for named in by_name]) for col in table.columns]
        if table.later_columns:  # their short lines say the family's missing rows, fill values and ranges too
            by_name = [{c.get("name"): c for c in s.get("later_columns") or []} for s in stored]
            table.later_columns = [short_facts(_merged(col, [named.get(col.name) for named in by_name]))
                                   for col in table.later_columns]
    view = FamilyView(profile, lines)
    named = [(m.path.rsplit("/", 1)[-1], content_span(m.tables, m.time_span, m.sampled, _SPAN_LABEL.get(
        representative.format, "times"))) for m in facts]
    if (said := family_line(named)) is not None:
        lines.append(said)
        view.coverage.append(card_term(named))
    if not profile.tables or len(facts) < 2:
        return view
    first = [m for m in facts if m.tables]
    lines += _share_line(first)
    coverage = _time_relation(first)
    overlap, time_name = False, ""  # noqa: F841 (time_name is said when members overlap without copies)
    if coverage is not None:
        text, found, overlap, time_name = coverage
        view.coverage[:0] = found
        lines.append(text)
    repeats = _repeats(first)
    if repeats is not None:
        text, across, within = repeats
        lines.append(text)
        if across and overlap:  # windows of one series, or files sharing a boundary: the repeats are copies
            view.dedup = ".drop_duplicates()"
            view.dedup_why = ("drop_duplicates() keeps one copy of each row repeated across members"
                              + ("; it would drop the duplicates inside a member too" if within else ""))
        elif across:
            lines[-1] += (" The load line keeps them: one copy each (.drop_duplicates()) is right for totals "
                          "across members, but a member's own counts need its copy (a metro area listed under each "
                          "of its states).")
            if coverage is None:  # rows without a time are entities (a metro area), not readings of parallel series
                lines[-1] += (" Such a row holds the whole entity's count in each member, not the member's part of "
                              "it: over a member's own total (a metro area's reports over one of its states' "
                              "reports) its share can pass 100%, and a member's sum counts entities that reach past "
                              "it.")
        elif overlap:
            lines[-1] += (f" Members cover overlapping {time_name!r} times but share no rows: they are different "
                          "series over one period (other objects, stations or versions), not copies.")
        elif within:
            lines[-1] = (lines[-1][:-1] + "; drop_duplicates() would drop those, so decide whether a repeated row "
                         "counts twice.")
    lines += _note_lines(representative.notes, facts)
    return view


def _column_of(table: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((c for c in table.get("columns") or [] if c.get("name") == name), None)


def _merged(col: Column, stored: list[dict[str, Any] | None]) -> Column:
    """Return the column with counts, range, mean, fill values, kinds and top values over every member."""
    present = [c for c in stored if c is not None]
    if len(present) < 2:
        return col
    out = Column(name=col.name, dtype=col.dtype, unit=col.unit, examples=col.examples)
    dtypes = Counter(c.get("dtype") or "?" for c in present)
    if len(dtypes) > 1:
        out.dtype = f"{col.dtype} (by member: " + ", ".join(f"{d} in {n}" for d, n in dtypes.most_common(3)) + ")"
    out.non_null = sum(c.get("non_null") or 0 for c in present)
    out.nulls = sum(c.get("nulls") or 0 for c in present)
    out.min, out.max = _extreme([c.get("min") for c in present], min), _extreme([c.get("max") for c in present], max)
    weights = [((c.get("non_null") or 0) - (c.get("fill_count") or 0), c.get("mean")) for c in present]
    weights = [(w, m) for w, m in weights if m is not None and w > 0]
    if weights and isinstance(out.min, (int, float)):
        out.mean = float(f"{sum(w * m for w, m in weights) / sum(w for w, _ in weights):.6g}")
    fills = Counter()
    counts: Counter[Any] = Counter()
    for c in present:
        if c.get("fill") is not None:
            fills[c["fill"]] += 1
            counts[c["fill"]] += c.get("fill_count") or 0
    if fills:
        out.fill = fills.most_common(1)[0][0]
        out.fill_count = counts[out.fill]
        if len(fills) > 1:
            out.dtype += "; other fill values in some members: " + ", ".join(str(f) for f in list(fills)[1:4])
    out.kinds = _merged_kinds([c.get("kinds") or [] for c in present])
    out.shows = _merged_shows([c.get("shows") for c in present])
    holed = [c["gaps"] for c in present if c.get("gaps")]
    if holed:  # each member's own holes (the family's line says which periods no member covers)
        out.gaps = clip(f"gaps inside {len(holed):,} of {len(present):,} members' own times, e.g. {holed[0]}", 300)
    if all(c.get("top_values") and len(c["top_values"]) == c.get("unique") for c in present):
        # every member listed all its values: the family's distinct count is exact (two members holding one object
        # each are 2 distinct, not 1)
        tops: Counter[Any] = Counter()
        for c in present:
            for value, n in c["top_values"]:
                tops[value] += n
        out.unique = len(tops)
        out.top_values = [[v, n] for v, n in sorted(tops.items(), key=lambda kv: (-kv[1], str(kv[0])))[:5]]
    elif all(c.get("unique") == 1 for c in present) and out.min is not None and out.min == out.max:
        out.unique = 1
    return out


def _merged_shows(each: list[str | None]) -> str | None:
    """Return what a column's values show in the family: the kind at least half the members show (a code seen in
    a member's few values only is not the family's), without one member's counts when members' counts differ."""
    kinds = Counter(re.sub(r" \(.*", "", s) for s in each if s)
    if not kinds:
        return None
    kind, n = kinds.most_common(1)[0]
    if 2 * n < len(each):
        return None
    whole = {s for s in each if s and s.startswith(kind)}
    return whole.pop() if len(whole) == 1 else kind


def _merged_kinds(each: list[list[list[Any]]]) -> list[list[Any]]:
    """Add up members' kinds of rows at the number of words every member's kinds have: in a state's file every
    area ends 'TX Metropolitan Statistical Area', in the family the kinds are 'Metropolitan Statistical Area'
    and 'Micropolitan Statistical Area'."""
    found = [k for kinds in each for k in kinds]
    if not found or len({k[0] for k in found}) > 1:
        return []
    where = found[0][0]
    depth = min(len(k[1].split()) for k in found)
    counts: Counter[str] = Counter()
    for _, words, n in found:
        parts = words.split()
        counts[" ".join(parts[-depth:] if where == "end" else parts[:depth])] += n
    if not 2 <= len(counts) <= MAX_KINDS:
        return []
    return [[where, words, n] for words, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _extreme(values: list[Any], pick: Any) -> Any:
    """Return the min or max of values of one kind (all numbers or all text), else None."""
    known = [v for v in values if v is not None and not isinstance(v, bool)]
    if not known:
        return None
    if all(isinstance(v, (int, float)) for v in known) or all(isinstance(v, str) for v in known):
        return pick(known)
    return None


def _share_line(members: list[MemberFacts]) -> list[str]:
    """Say over how many rows the statistics below were taken when some members were sampled."""
    seen = total = 0
    for m in members:
        table = m.tables[0]
        cols = table.get("columns") or []
        if not cols or table.get("n_rows") is None:
            return []
        seen += (cols[0].get("non_null") or 0) + (cols[0].get("nulls") or 0)
        total += table["n_rows"]
    if not total or seen >= total:
        return [f"Statistics below are over all {len(members):,} members' {total:,} rows (table 1), not the first "
                "member's."] if total else []
    return [f"Statistics below are over {seen:,} of the members' {total:,} rows ({seen / total:.0%}; large members "
            "were sampled)."]


# ---- time coverage and overlap -----------------------------------------------------------------------------------


def _time_relation(members: list[MemberFacts]) -> tuple[str, list[str], bool, str] | None:
    """Return (line, card terms, members overlap, column) from the first time column every member has, or None."""
    columns = members[0].tables[0].get("columns") or []
    for col in columns:
        if not str(col.get("dtype") or "").startswith(("text (dates)", "datetime")):
            continue
        spans = []
        for m in members:
            c = _column_of(m.tables[0], col["name"])
            low, high = (stored_time(c.get("min")), stored_time(c.get("max"))) if c else (None, None)
            if low is None or high is None:
                break
            spans.append((low, high, m.path))
        else:
            return (*_describe_spans(col["name"], spans), col["name"])
    return None


def _describe_spans(name: str, spans: list[tuple[datetime, datetime, str]]) -> tuple[str, list[str], bool]:
    """Return (line, card terms, members overlap): the family's time coverage, how members relate in time, where
    they differ (each member's first and last time, or the ones that start later or end earlier) and the gaps no
    member covers."""
    spans.sort()
    gaps = coverage_gaps(spans)
    text, card, overlap = _relation_of_spans(name, spans, bool(gaps))
    if gaps:
        card.append(f"{len(gaps)} gap{'s' * (len(gaps) > 1)} " + ", ".join(f"{_iso(lo)[:10]} to {_iso(hi)[:10]}"
                                                                       for lo, hi in gaps[:1])
                    + (" …" if len(gaps) > 1 else ""))
    return text + _differences(spans, gaps), card, overlap


def coverage_gaps(spans: list[tuple[datetime, datetime, str]]) -> list[tuple[datetime, datetime]]:
    """Return the periods (end of what is covered, start of the next member) that no member covers, beyond the usual
    step between members: a missing day of daily files, a missing month or year; spans sorted by start."""
    if len(spans) < 3:
        return []  # two members give no usual step to tell a gap from the series' own spacing
    steps = sorted(b[0] - a[0] for a, b in zip(spans, spans[1:], strict=False))
    step = steps[len(steps) // 2]
    length = sorted(s[1] - s[0] for s in spans)[len(spans) // 2]
    expected = max(step - length, timedelta(0))  # the uncovered time between two successive members of the series
    gaps = []
    covered = spans[0][1]
    for low, high, _ in spans[1:]:
        if low - covered > expected + step / 2:
            gaps.append((covered, low))
        covered = max(covered, high)
    return gaps


def _differences(spans: list[tuple[datetime, datetime, str]], gaps: list[tuple[datetime, datetime]]) -> str:
    """Return sentences with numbers on where members' coverage differs and what no member covers ('' when every
    member covers the same period without gaps)."""
    out = ""
    if gaps:
        shown = ", ".join(f"{_iso(lo)} .. {_iso(hi)} ({_span(hi - lo)})" for lo, hi in gaps[:SAID])
        more = f" and {len(gaps) - SAID} more" if len(gaps) > SAID else ""
        out += f" Gaps no member covers: {shown}{more}."
    if len({(lo, hi) for lo, hi, _ in spans}) == 1:
        return out
    if len(spans) <= MEMBERS_LISTED:
        out += " Per member: " + "; ".join(f"{_member(p)} {_iso(lo)} .. {_iso(hi)}" for lo, hi, p in spans) + "."
        return out
    first, last = spans[0][0], max(s[1] for s in spans)
    starts = sorted({s[0] for s in spans})
    if len(starts) > len(spans) / 2:
        return out  # a series: each member starts later than the one before, which the relation line says
    later = [s for s in spans if s[0] > first]
    earlier = [s for s in spans if s[1] < last]
    if later:
        out += (f" {len(later)} of {len(spans)} members start after {_iso(first)}: "
                + ", ".join(f"{_member(p)} ({_iso(lo)})" for lo, _, p in later[:SAID])
                + (" …" if len(later) > SAID else "") + ".")
    if earlier:
        out += (f" {len(earlier)} of {len(spans)} members end before {_iso(last)}: "
                + ", ".join(f"{_member(p)} ({_iso(hi)})" for _, hi, p in earlier[:SAID])
                + (" …" if len(earlier) > SAID else "") + ".")
    return out


def _member(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _relation_of_spans(name: str, spans: list[tuple[datetime, datetime, str]],
                       gapped: bool) -> tuple[str, list[str], bool]:
    first, last = spans[0][0], max(s[1] for s in spans)
    head = f"{name!r} covers {_iso(first)} .. {_iso(last)} over all members"
    card = [f"{name} {_iso(first)[:10]} to {_iso(last)[:10]}"]
    pairs = list(zip(spans, spans[1:], strict=False))
    overlapping = [(a, b) for a, b in pairs if b[0] < a[1]]
    touching = [(a, b) for a, b in pairs if b[0] == a[1]]
    gaps = [(a, b) for a, b in pairs if b[0] > a[1]]
    length = sorted(s[1] - s[0] for s in spans)[len(spans) // 2]
    starts = [s[0] for s in spans]
    same_start = len(set(starts)) <= len(spans) / 2 or (max(starts) - min(starts)) < length / PARALLEL_STARTS
    if overlapping and len(overlapping) >= len(pairs) / 2 and same_start:
        # every member starts about when the others do: parallel series (one per beach, object, station); members
        # that each start a step later are windows of one series, however much of their span they share
        text = (f"{head}. Members cover one period side by side (each spans about {_span(length)}): parallel "
                "series (other sites, objects or versions), so rows equal across members are not copies of one "
                "series.")
        return text, card, False
    if overlapping and len(overlapping) >= len(pairs) / 2:
        step = sorted(b[0] - a[0] for a, b in pairs)[len(pairs) // 2]
        depth = min(len(spans), round(length / step)) if step.total_seconds() > 0 else len(spans)
        text = (f"{head}. Members overlap: each spans about {_span(length)} and the next starts about {_span(step)} "
                + ("later, in runs the gaps below separate." if gapped else
                   f"later, so a time is in about {depth} members."))
        return text, card, True
    if touching and len(touching) >= len(pairs) / 2:
        a, b = touching[0]
        text = (f"{head}. Successive members share their boundary time (the last time of one, {_iso(a[1])}, is "
                f"the first of the next, {b[2].rsplit('/', 1)[-1]}).")
        return text, card, True
    text = f"{head}; each member spans about {_span(length)}"
    if gaps and len(pairs):
        text += "; members do not overlap"
    return text + ".", card, False


def _iso(value: datetime) -> str:
    return value.date().isoformat() if value.time() == datetime.min.time() else value.isoformat(sep=" ")


def _span(delta: Any) -> str:
    seconds = delta.total_seconds()
    if seconds >= 86400:
        days = seconds / 86400
        return f"{days:.0f} day{'s' if round(days) != 1 else ''}" if days >= 2 else f"{days:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.0f} hours"
    return f"{seconds / 60:.0f} minutes"


# ---- repeated rows -----------------------------------------------------------------------------------------------


def _repeats(members: list[MemberFacts]) -> tuple[str, int, int] | None:
    """Return (line, rows repeated across members, duplicate rows inside members) from the row sketches: exact
    when every member's sketch holds all its rows, else estimated from successive members' shared sketch rows
    (bottom-k Jaccard) and from a last row equal to the next member's first (a shared boundary)."""
    tables = [m.tables[0] for m in members]
    if any(t.get("duplicate_rows") is None or t.get("n_rows") is None or not t.get("row_hashes") for t in tables):
        return None
    within = sum(t["duplicate_rows"] for t in tables)
    distinct_each = [t["n_rows"] - t["duplicate_rows"] for t in tables]
    sketches = [set(t["row_hashes"]) for t in tables]
    total = sum(t["n_rows"] for t in tables)
    sharing, spread = 0, ""
    if all(len(s) == n for s, n in zip(sketches, distinct_each, strict=True)):
        distinct = len(set().union(*sketches))
        across = sum(distinct_each) - distinct
        holders = Counter(h for s in sketches for h in s)
        sharing = sum(1 for s in sketches if any(holders[h] > 1 for h in s))
        spread = _spread(holders, sketches, members)
        about = ""
    else:
        across = 0
        for i in range(len(tables) - 1):
            a, b = sketches[i], sketches[i + 1]
            smallest = sorted(a | b)[:ROW_SKETCH]
            jaccard = sum(1 for h in smallest if h in a and h in b) / max(1, len(smallest))
            shared = round(jaccard / (1 + jaccard) * (distinct_each[i] + distinct_each[i + 1]))
            edges_a, edges_b = tables[i].get("edge_hashes") or [], tables[i + 1].get("edge_hashes") or []
            if not shared and edges_a and edges_b and edges_a[-1] == edges_b[0]:
                shared = 1  # the last row of one is the first of the next
            across += shared
        distinct = sum(distinct_each) - across
        about = "about "
    parts = []
    if across > 0:
        who = f" ({sharing} of the {len(members)} members share rows with another)" if sharing else ""
        parts.append(f"Rows repeated across members: {about}{across:,} of the {total:,} rows are copies of a row in "
                     f"another member{who}; {about}{distinct:,} distinct rows in all{spread}")
    else:
        parts.append("No row repeats across members" + (" (estimated from row samples)" if about else ""))
    if within:
        dup_members = [m.path.rsplit("/", 1)[-1] for m, t in zip(members, tables, strict=True) if t["duplicate_rows"]]
        parts.append(f"{within:,} duplicate row(s) inside {len(dup_members)} member(s), e.g. {dup_members[0]}")
    return "; ".join(parts) + ".", across, within


def _spread(holders: Counter[int], sketches: list[set[int]], members: list[MemberFacts]) -> str:
    """Say in how many members a repeated row stands, with the members of the most repeated one: a metro area
    listed with its whole count in each of its 2-4 states' files."""
    repeated = {h: n for h, n in holders.items() if n > 1}
    if not repeated:
        return ""
    low, high = min(repeated.values()), max(repeated.values())
    widest = max(repeated, key=lambda h: (repeated[h], -h))
    where = [m.path.rsplit("/", 1)[-1] for m, s in zip(members, sketches, strict=True) if widest in s]
    count = f"{low}" if low == high else f"{low}-{high}"
    return (f" (a repeated row stands in {count} members, e.g. one in {', '.join(where[:4])}"
            + (f" and {len(where) - 4} more" if len(where) > 4 else "") + ")")


# ---- notes that differ by member ---------------------------------------------------------------------------------

_DIGITS = re.compile(r"\d[\d,.]*")


def _note_lines(first: list[str], facts: list[MemberFacts]) -> list[str]:
    """Return a line naming notes some members have that the first member's (shown below) does not."""
    known = {_DIGITS.sub("#", n) for n in first}
    extra: dict[str, tuple[str, list[str]]] = {}
    for m in facts[1:]:
        for note in m.notes:
            key = _DIGITS.sub("#", note)
            if key not in known:
                extra.setdefault(key, (note, []))[1].append(m.path.rsplit("/", 1)[-1])
    if not extra:
        return []
    ranked = sorted(extra.values(), key=lambda v: -len(v[1]))
    shown = "; ".join(f"{clip(note, NOTE_CHARS)!r} (in {len(who)} member{'s' if len(who) > 1 else ''}, e.g. "
                      f"{who[0]})" for note, who in ranked[:MAX_NOTE_KINDS])
    more = f"; and {len(ranked) - MAX_NOTE_KINDS} more kinds of note" if len(ranked) > MAX_NOTE_KINDS else ""
    return [f"Notes some members have and the first does not: {shown}{more}."]
