"""Description (what a coder needs to load a file) and card (short text for retrieval) from a profile.

Both are pure functions of the profile and the path: the catalog caches them by content hash and re-embeds a
card only when its text changes, so nothing here may depend on time, randomness or dict order we don't control.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dslake_index.profilers.base import PATH_PLACEHOLDER, Column, Profile, Table
from dslake_index.profilers.stats import looks_like_fill
from dslake_index.profilers.textio import clip

HINT_PREFIX = "data/"  # where the coder's scripts see the lake (the paper's "data/<file>")
CARD_MAX = 1500
DESC_MAX = 12000  # a bound for pathological files; a wide workbook (mmc5: 312 columns, every name) stays whole
NOTES_MAX = 3000  # characters of notes per description: each note stays whole up to it, and a cut says so
DETAIL_COLUMNS = 30  # columns described one per line in a table; the rest are listed by name, type and unit
REST_CHARS = 6000  # characters of that list of the rest (names of a 180-column workbook fit)
SHORT_CHARS = 8000  # characters of short lines (fill values, missing, range) for columns past the detailed ones
MAX_TABLES_DETAILED = 6
EXAMPLE_WIDTH = 64  # characters of one example cell: a metro area's or a contributor's whole name fits
ROW_CELL_WIDTH = 32  # characters of one cell of the first rows
_SPLIT = re.compile(r"[\s_\-.,()\[\]{}+=&@#'\"!;:*?/\\%$^~`|<>]+")
_PLACE_WORDS = (r"(state|county|country|city|town|region|province|site|station|location|place|beach|community|"
                r"municipality|district|area|zone|basin|lake|river|continent|territory|metropolitan area|msa)s?")
_PLACE_COL = re.compile(rf"^{_PLACE_WORDS}\b|\b{_PLACE_WORDS}( name| description)?$", re.I)


def path_words(relpath: str) -> list[str]:
    """Split a path into lowercase words: folders, name and extension; snake, kebab, camelCase and digit runs."""
    words: list[str] = []
    seen: set[str] = set()

    def add(w: str) -> None:
        w = w.lower()
        if w and w not in seen and w != "*":
            seen.add(w)
            words.append(w)

    for chunk in _SPLIT.split(relpath):
        if not chunk:
            continue
        parts = _camel_digits(chunk)
        for p in parts:
            add(p)
        if len(parts) > 1 and len(chunk) <= 30:
            add(chunk)
    return words


def _camel_digits(chunk: str) -> list[str]:
    """Split 'omni2Kp_Index' style chunks at lower->Upper, letter<->digit and ACRONYMWord boundaries."""
    out, cur = [], ""
    for i, ch in enumerate(chunk):
        if cur:
            prev = cur[-1]
            nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
            boundary = (
                (prev.isdigit() != ch.isdigit())
                or (prev.islower() and ch.isupper())
                or (prev.isupper() and ch.isupper() and nxt.islower() and chunk[i + 1 :] != "s")
            )
            if boundary:
                out.append(cur)
                cur = ""
        cur += ch
    if cur:
        out.append(cur)
    return out


def _fill(hint: str | None, relpath: str) -> str | None:
    return hint.replace(PATH_PLACEHOLDER, repr(HINT_PREFIX + relpath)) if hint else None


def _v(value: Any, width: int = 40) -> str:
    if isinstance(value, float):
        text = str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
        if float(text) != value and len(repr(value)) <= 12:  # a fill 99999.99 is not 100000
            text = repr(value)
    elif isinstance(value, str):
        text = repr(value)
        if len(text) > width:  # cut after a whole word: 'FTC - Web Reports (Fra…' could not be matched to a name
            return repr(word_cut(value, width - 3))
    else:
        text = json.dumps(value, ensure_ascii=False, default=str) if isinstance(value, (list, dict)) else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def word_cut(text: str, width: int) -> str:
    """Return text whole when it fits, else its words up to width and '…' (a word is never cut in half unless it
    alone is longer than half the width)."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("-"), cut.rfind("/"))
    if space >= width // 2:
        cut = cut[: space + (cut[space] not in " \n")]
    return cut.rstrip(" \n,;:(") + "…"


def _column_line(c: Column) -> str:
    parts = [f"{c.name!r}: {c.dtype}"]
    if _unit(c):
        parts[0] += f" [{c.unit}]"
    if c.nulls:
        parts.append(f"{c.nulls:,} missing")
    if c.unique is not None:
        parts.append(f"{c.unique:,} distinct")
    if c.shows:
        parts.append(f"values look like {c.shows}")
    if c.gaps:
        parts.append(c.gaps)
    if c.fill is not None:
        parts.append(fill_text(c))
    if c.min is not None and c.max is not None and c.min != c.max:
        rng = f"range {_v(c.min)} .. {_v(c.max)}" + (" without the fill value" if c.fill is not None else "")
        if c.mean is not None:
            rng += f", mean {_v(c.mean)}"
        parts.append(rng)
    if len(c.kinds) > 1:
        where = "end" if c.kinds[0][0] == "end" else "start"
        parts.append(f"{len(c.kinds)} kinds of rows by the words at the {where}: "
                     + ", ".join(f"{_v(words, 50)} ({n:,})" for _, words, n in c.kinds))
    if c.top_values:
        parts.append("top " + ", ".join(f"{_v(v, EXAMPLE_WIDTH)} ({n})" for v, n in c.top_values[:4]))
    elif c.examples:
        parts.append("e.g. " + ", ".join(_v(e, EXAMPLE_WIDTH) for e in c.examples[:3]))
    return "; ".join(parts)


def fill_text(c: Column) -> str:
    """Return what a column's fill value is: a 9s sentinel is missing data; a -1 among values of 0 and more is
    likely missing (value_kinds.minus_one_sentinel), which the data's own documentation may confirm."""
    if looks_like_fill(c.fill):
        return f"fill value {_v(c.fill)} in {c.fill_count or 0:,} rows (missing data)"
    return f"{_v(c.fill)} in {c.fill_count or 0:,} rows, likely missing (every other value is 0 or more)"


def _short_kind(c: Column) -> str:
    """Return a column's type and unit without the details after them ('int [ppm]', 'text (dates)')."""
    kind = c.dtype.split(";", 1)[0].split(":", 1)[0].strip()
    if kind.count("(") > kind.count(")"):
        kind = kind[: kind.rfind("(")].strip()
    return kind + (f" [{c.unit}]" if _unit(c) else "")


def _unit(c: Column) -> str | None:
    """Return the unit a column's name gives when its values are numbers: '_s' ending a column of words
    ('dominant_strategy_25_s') is no unit."""
    words = c.dtype.startswith("text") and not c.dtype.startswith(("text (numbers", "text (money", "text: numbers"))
    return None if words or c.dtype.startswith("mixed") else c.unit


def stats_share(t: Table) -> str:
    """Return ' (statistics of the first 2,666 of about 8,360 rows, 32%)' when a table's column statistics come
    from part of its rows, else '': a range read from part of a table is not the table's range."""
    if not t.columns or t.n_rows is None or t.columns[0].non_null is None:
        return ""
    seen = (t.columns[0].non_null or 0) + (t.columns[0].nulls or 0)
    if seen >= t.n_rows or seen <= 0:
        return ""
    about = "" if t.n_rows_exact else "about "
    return (f" (statistics, ranges and counts of {seen:,} of {about}{t.n_rows:,} rows, {seen / t.n_rows:.0%}: "
            "the rest were not read)")


def shape_text(t: Table) -> str:
    """Return the 'R rows x C columns' a description states for a table."""
    rows = "?" if t.n_rows is None else f"{t.n_rows:,}" + ("" if t.n_rows_exact else " (approximate)")
    return f"{rows} rows x {t.n_cols} columns"


def hint_line(t: Table, relpath: str) -> str:
    """Return the line of a description that tells the coder how to load a table."""
    return f"  load: df = {_fill(t.read_hint, relpath)}"


def _short_line(c: Column) -> str:
    """Return a column past the detailed ones in one short line: type and unit, missing and fill values, range,
    what its values look like (no counts of distinct values, means or examples)."""
    parts = [f"{c.name!r}: {_short_kind(c)}"]
    if c.nulls:
        parts.append(f"{c.nulls:,} missing")
    if c.fill is not None:
        parts.append(fill_text(c))
    if c.min is not None and c.max is not None and c.min != c.max:
        parts.append(f"{_short_v(c.min)} .. {_short_v(c.max)}" + (" without it" if c.fill is not None else ""))
    elif c.min is not None and c.min == c.max:
        parts.append(f"{_v(c.min, 24)} in every row" + (" with a value" if c.nulls else ""))
    if c.shows:
        parts.append(f"values look like {c.shows}")
    if c.gaps:
        parts.append(c.gaps)
    return "; ".join(parts)


def _short_v(value: Any) -> str:
    """Return a bound of a short line's range: a fraction to 4 significant digits (0.001629109 as 0.001629, 16774.3
    as 16774), what the line is for (what the values are like) in the room a 179-column table's lines have; one
    that would round to a whole number keeps its digits (0.999988 is not 1)."""
    if isinstance(value, float) and not value.is_integer() and abs(value) < 1e15:
        if abs(value) >= 1000:
            return str(round(value))
        text = f"{value:.4g}"
        return text if not float(text).is_integer() else _v(value, 24)
    return _v(value, 24)


def _short_picks(columns: list[Column], budget: int) -> set[int]:
    """Return the ids of the later columns given a short line within budget characters, by what the line adds to
    the name and type the list of the rest gives: first those with fill values or a code (a question's Kp or
    proton flux needs its fill value), then those with a range (a workbook's Log2_variant_per_Mbp, its values on
    a log scale), then those with missing values only, each in table order; a line that would add nothing is not
    written."""
    def rank(c: Column) -> int:
        if c.fill is not None or c.shows or c.gaps:
            return 0
        return 1 if c.min is not None else 2 if c.nulls else 3

    picked: set[int] = set()
    for c in sorted(columns, key=rank):
        if rank(c) == 3:
            break
        cost = len(_short_line(c)) + 7
        if cost > budget:
            break
        budget -= cost
        picked.add(id(c))
    return picked


def _table_block(t: Table, relpath: str, index: int, n_tables: int, detailed: bool,
                 short_chars: int = SHORT_CHARS) -> list[str]:
    out: list[str] = []
    where = []
    if t.name:
        where.append(t.name if n_tables > 1 or "!" in t.name else f"'{t.name}'")
    if t.location:
        where.append(t.location)
    head = f"Table {index + 1}" + (f" ({', '.join(where)})" if where else "") if n_tables > 1 else "Table"
    out.append(f"{head}: {shape_text(t)}"
               + (f", header on line/row {t.header_row + 1}" if t.header_row else "")
               + (", no header row" if t.header_row is None else ""))
    if t.read_hint:
        out.append(hint_line(t, relpath))
    if not detailed:
        names = ", ".join(repr(c.name) for c in t.columns[:40])
        out.append(f"  columns: {names}" + (" …" if t.n_cols > 40 else ""))
        return out
    out.append(f"  columns{stats_share(t)}:")
    for c in t.columns[:DETAIL_COLUMNS]:
        out.append("    - " + _column_line(c))
    later = t.columns[DETAIL_COLUMNS:] + t.later_columns
    short = _short_picks(later, short_chars)
    out += ["    - " + _short_line(c) for c in later if id(c) in short]
    # every name stays, with its type and unit: only the statistics are cut (a wildfire table's 37th column,
    # station_verified_in_psa, was a name lost in a cut list; a workbook's 150th, Log2_variant_per_Mbp, another)
    rest = [f"{c.name!r} {_short_kind(c)}" for c in later if id(c) not in short]
    rest += [f"{name!r} {kind}".rstrip() for name, kind in t.more_columns]
    unnamed = t.n_cols - len(t.columns) - len(t.later_columns) - len(t.more_columns)
    if rest:
        out.append(f"    - and {t.n_cols - DETAIL_COLUMNS - len(short)} more (statistics left out): "
                   + clip(", ".join(rest), REST_CHARS) + (f", and {unnamed} not described" if unnamed > 0 else ""))
    elif unnamed > 0:
        out.append(f"    - and {unnamed} more columns not described")
    if t.sample_rows:
        out.append("  first rows:")
        for r in t.sample_rows[:3]:
            line = " | ".join(_v(v, ROW_CELL_WIDTH) for v in r[:12]) + (" | …" if len(r) > 12 else "")
            out.append("    " + line[:300])
    return out


def _tree_lines(node: Any, name: str, depth: int, out: list[str]) -> None:
    if len(out) >= 40 or not isinstance(node, dict):
        return
    pad = "  " * depth
    kind = node.get("type")
    if kind == "object":
        out.append(f"{pad}{name}: object with {node.get('n_keys', len(node.get('keys', {})))} keys")
        for k, child in list(node.get("keys", {}).items())[:25]:
            _tree_lines(child, k, depth + 1, out)
    elif kind == "array":
        types = "/".join(node.get("item_types", [])) or "?"
        out.append(f"{pad}{name}: array of {node.get('length', '?')} {types}")
        if "item" in node and node["item"].get("type") == "object":
            for k, child in list(node["item"].get("keys", {}).items())[:25]:
                _tree_lines(child, k, depth + 1, out)
    else:
        out.append(f"{pad}{name}: {kind}" + (f" e.g. {_v(node.get('example'))}" if "example" in node else ""))


def _structure_lines(p: Profile) -> list[str]:
    s = p.structure
    if not isinstance(s, dict):
        return []
    out: list[str] = []
    if p.format in ("json", "jsonl") and "type" in s:
        out.append("Structure:")
        _tree_lines(s, "root", 1, out)
        if p.tables and len(out) > 12:
            out = out[:12] + ["  …"]
    elif "arrays" in s:
        out.append("Arrays:")
        for a in s["arrays"][:40]:
            line = f"  - {a['name']}: shape {tuple(a['shape'])}, dtype {a['dtype']}"
            if "min" in a:
                line += f", range {_v(a['min'])} .. {_v(a['max'])}, mean {_v(a.get('mean'))}"
            if a.get("head"):
                line += ", first " + _v(a["head"], 60)
            if a.get("note"):
                line += f" ({a['note']})"
            out.append(line)
    elif "variables" in s:
        out.append("Variables:")
        for v in s["variables"][:40]:
            line = f"  - {v['name']}: {v['type']}, {v['records']:,} records" + (f" x {v['dims']}" if v["dims"] else "")
            for key in ("description", "catdesc", "units"):
                if v.get(key):
                    line += f"; {key} {_v(v[key], 70)}"
            if "min" in v:
                line += f"; range {_v(v['min'])} .. {_v(v['max'])}"
            if v.get("first"):
                line += f"; from {v['first']} to {v['last']}"
            out.append(line)
    elif "sheets" in s:
        for sh in s["sheets"]:
            extra = f" [{sh['state']}]" if sh.get("state") else ""
            cells = sh.get("notes", [])
            notes = "; ".join(cells[:4]) + (f"; and {len(cells) - 4} more text cell(s)" if len(cells) > 4 else "")
            out.append(f"Sheet {sh['name']!r}{extra}: {sh['tables']} table(s), used range {sh['dimension']}"
                       + (f"; text cells: {clip(notes, 1200)}" if notes else ""))
    elif "fields" in s:
        out.append(f"XML root <{s.get('root')}>; leaf fields:")
        for k, v in list(s["fields"].items())[:25]:
            out.append(f"  - {k}: {_v(v, 90)}")
    elif "items" in s:
        out.append("Items: " + "; ".join(str(x) for x in s["items"][:40])[:800])
    elif "outline" in s:
        if s["outline"]:
            out.append("Outline (headings by line number; read the whole text with the Load line):")
            out += [f"  {h}" for h in s["outline"]]
    else:
        for k, v in list(s.items())[:12]:
            out.append(f"{k}: {_v(v, 120)}")
    return out


def describe(profile: Profile, relpath: str) -> str:
    """Return the description a coder needs to load the file correctly (format, hint, shape, columns, caveats)."""
    p = profile
    out = [f"File: {HINT_PREFIX}{relpath} ({p.size:,} bytes)"]
    fmt = p.format + (f", encoding {p.encoding}" if p.encoding and p.encoding != "utf-8" else "")
    out.append(f"Format: {fmt}")
    if p.title:
        out.append(f"Title: {title_text(p.title)}")
    if p.headings and p.format not in ("xlsx",):
        out.append("Headings: " + clip(" | ".join(p.headings[:15]), 600))
    if p.read_hint and (len(p.tables) != 1 or p.tables[0].read_hint != p.read_hint):
        out.append(f"Load: {_fill(p.read_hint, relpath)}")
    out += _structure_lines(p)
    if p.notes:
        out.append("Notes:")
        out += _note_lines(p.notes)
    detailed = MAX_TABLES_DETAILED if len(p.tables) <= MAX_TABLES_DETAILED else 3
    tail = ([f"... and {len(p.tables) - 12} more tables"] if len(p.tables) > 12 else []) + _tail_lines(p)
    short_chars = SHORT_CHARS
    # the tables whose later columns may have short lines share what is over the limit: two wide tables on a sheet
    # each give up half of it (the whole of it from each left neither a short line)
    sharing = max(1, sum(1 for t in p.tables[:detailed] if len(t.columns) + len(t.later_columns) > DETAIL_COLUMNS))
    while True:
        tables: list[str] = []
        for i, t in enumerate(p.tables[:12]):
            tables += _table_block(t, relpath, i, len(p.tables), detailed=i < detailed, short_chars=short_chars)
        over = sum(len(ln) + 1 for ln in out + tables + tail) - DESC_MAX
        if over <= 0 or short_chars == 0:  # the later columns' short lines give way before any name is cut
            break
        short_chars = max(0, short_chars - -(-over // sharing) - 100)
    out += tables + tail
    text = "\n".join(out)
    return text if len(text) <= DESC_MAX else text[: DESC_MAX - 20].rsplit("\n", 1)[0] + "\n[... truncated]"


def _tail_lines(p: Profile) -> list[str]:
    """Return the lines after the tables: a document's excerpt, or a text sample."""
    if not p.text_sample or (p.tables and p.format not in ("text", "markdown", "html")):
        return []
    if isinstance(p.structure, dict) and "outline" in p.structure:
        # a document: its excerpt (introduction, structured sections) is the description
        return ["Excerpt (the opening and the most structured sections, by line number):", _indent(p.text_sample, 200)]
    return ["Text sample:", _indent(word_cut(p.text_sample, 900))]


def _note_lines(notes: list[str]) -> list[str]:
    """Return the notes whole, up to NOTES_MAX characters for the entry; say what was cut beyond it."""
    out: list[str] = []
    used = 0
    for i, note in enumerate(notes):
        if used + len(note) > NOTES_MAX:
            room = NOTES_MAX - used
            if room >= 200:
                out.append("  - " + clip(note, room))
                i += 1
            if i < len(notes):
                out.append(f"  - [{len(notes) - i} more note(s) cut to keep this description short]")
            break
        out.append(f"  - {note}")
        used += len(note)
    return out


def _indent(text: str, max_lines: int = 30) -> str:
    return "\n".join("  " + ln for ln in text.splitlines()[:max_lines])


def _key_values(p: Profile) -> tuple[list[str], list[str], list[str], list[str]]:
    values, dates, places, units = [], [], [], []
    for t in p.tables[:8]:
        for c in t.columns:
            if c.unit and c.unit not in units:
                units.append(c.unit)
            if c.dtype.startswith(("text (dates)", "datetime")) and c.min is not None and c.max is not None:
                dates.append(f"{c.name} {str(c.min)[:10]} to {str(c.max)[:10]}")
            elif c.top_values and c.dtype.startswith("text") and not c.dtype.startswith("text ("):
                vals = ", ".join(str(v) for v, _ in c.top_values[:5])
                (places if _PLACE_COL.search(c.name) else values).append(f"{c.name}: {vals}")
            elif _PLACE_COL.search(c.name) and c.examples and c.dtype == "text":
                places.append(f"{c.name}: " + ", ".join(str(v) for v in c.examples[:5]))
            elif re.search(r"(year|date|time)", c.name, re.I) and c.dtype == "int" and c.min is not None:
                if isinstance(c.min, int) and -10000 <= c.min <= 2200 and isinstance(c.max, int) and c.max <= 2200:
                    dates.append(f"{c.name} {c.min} to {c.max}")
    return values, dates, places, units


_TITLE_LABEL = re.compile(r"^\s*title\s*[:=]\s*", re.IGNORECASE)


def title_text(title: str) -> str:
    """Return a title without the file's own 'Title:' label: a CSV preamble 'Title:U.S. Wildfires December' was
    described as 'Title: Title:U.S. Wildfires December'."""
    return _TITLE_LABEL.sub("", title, count=1) or title


# A title line that speaks of the sheet's own layout ('table with row headers in column A and column headers in rows 3
# through 4'): a screen reader's note, which Census workbooks put above the title that says what the table holds.
_LAYOUT_NOTE = re.compile(r"\b(?:row|column) headers?\b|\bcolumns? [A-Z]{1,3}\b(?! \w)|\brows? \d+ (?:through|to) \d+\b")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DAY_DATE = re.compile(rf"\b(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?, (\d{{4}})\b")


def card_title(p: Profile) -> str:
    """Return the title a card gives: the profile's, or, when that is a note on the table's layout, the next title
    line of the same table (what the table holds, whose words a question uses) with its day dates said as years.

    The years, because the line's 'April 1, 2020 to July 1, 2024' are the days of a count, not months the table is
    by: whole, 'July' lifted the population workbook into the top 5 of a question on July's rainfall (KramaBench
    recall@5 .8957 -> .8857); as '2020 to 2024' its card still answers 'population estimate of US states 2024'.
    """
    title = p.title or ""
    if not _LAYOUT_NOTE.search(title):
        return title
    sheets = p.structure.get("sheets") if isinstance(p.structure, dict) else None
    for sheet in sheets if isinstance(sheets, list) else []:
        for titles in (sheet.get("titles") or {}).values() if isinstance(sheet, dict) else []:
            if isinstance(titles, list) and len(titles) > 1 and titles[0] == title:
                return _DAY_DATE.sub(r"\1", str(titles[1]))
    return title


def card(profile: Profile, relpath: str, family: bool = False) -> str:
    """Return a short retrieval text: path words, title, headings, columns, sheets, units, key values, dates.

    family: the profile is a family's first member, so its row counts and dates are its own, not the family's
    (a yearly family's card said "dates: 2002 to 2002"): they are left out; the family's head says its total.
    """
    p = profile
    sections = [" ".join(path_words(relpath)), f"{relpath.rsplit('/', 1)[-1]} ({p.format})"]
    if p.title:
        sections.append(f"title: {title_text(card_title(p))}")
    if isinstance(p.structure, dict) and p.structure.get("sheet_names"):
        sections.append("sheets: " + "; ".join(p.structure["sheet_names"][:20]))
    elif p.headings:
        sections.append("headings: " + "; ".join(p.headings[:12]))
    cols: list[str] = []
    for t in p.tables[:8]:
        for c in t.columns:
            name = " ".join(c.name.split())  # ' # of Reports  ' in one table and '# of Reports' in the next: one name
            if name and name not in cols and not name.startswith("Unnamed: ") and not name.isdigit():
                cols.append(name)
    if cols:
        sections.append("columns: " + "; ".join(c[:60] for c in cols[:80]))
    for t in p.tables[:2]:
        rows = "" if family else f"{card_rows(t)} rows x "
        sections.append(f"table{' ' + t.name if t.name else ''}: {rows}{t.n_cols} columns"
                        + (", no header" if t.header_row is None else ""))
    if len(p.tables) > 2:  # the two tables above are not all: a short form counts the rest from this
        sections.append(f"tables: {len(p.tables)} in all")
    values, dates, places, units = _key_values(p)
    if family:
        dates = []
    if units:
        sections.append("units: " + ", ".join(units[:15]))
    if dates:
        sections.append("dates: " + "; ".join(dates[:4]))
    if places:
        sections.append("places: " + "; ".join(places[:4]))
    if values:
        sections.append("values: " + "; ".join(values[:6]))
    sections += _structure_terms(p)
    if p.keywords:
        sections.append("keywords: " + ", ".join(p.keywords[:20]))
    if not p.tables and p.text_sample and p.format in ("text", "markdown", "html", "xml", "code"):
        sections.append(" ".join(p.text_sample.split())[:400])
    out = ""
    for s in sections:
        s = s[:600]
        if len(out) + len(s) + 1 > CARD_MAX:
            room = CARD_MAX - len(out) - 1
            if room > 40:
                out += "\n" + s[: room - 1] + "…"
            break
        out = f"{out}\n{s}" if out else s
    return out


def card_rows(t: Table) -> str:
    """Return a table's rows as a card says them: '48', 'about 304738' when estimated (a big file's count from its
    average line length), '?' when unknown; the gist and the entries page read the 'about' back."""
    if t.n_rows is None:
        return "?"
    return f"{t.n_rows}" if t.n_rows_exact else f"about {t.n_rows}"


def _structure_terms(p: Profile) -> list[str]:
    s = p.structure
    if not isinstance(s, dict):
        return []
    if "arrays" in s:
        return ["arrays: " + "; ".join(f"{a['name']} {tuple(a['shape'])}" for a in s["arrays"][:20])]
    if "variables" in s:
        return ["variables: " + "; ".join(
            f"{v['name']}" + (f" ({_v(v.get('description') or v.get('catdesc'), 60)})"
                              if v.get("description") or v.get("catdesc") else "") for v in s["variables"][:20])]
    if "fields" in s:
        return ["fields: " + "; ".join(f"{k.split('/')[-1]}={_v(v, 60)}" for k, v in list(s["fields"].items())[:15])]
    if p.format in ("json", "jsonl") and isinstance(s.get("keys_list"), list):
        return ["keys: " + ", ".join(map(str, s["keys_list"][:30]))]
    if "items" in s:
        return ["items: " + "; ".join(map(str, s["items"][:30]))]
    if "satellites" in s:
        return ["satellites: " + ", ".join(map(str, s["satellites"]))]
    return []
