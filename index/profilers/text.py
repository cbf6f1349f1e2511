"""Plain text, code, markdown and scientific text: title, headings, tables inside, a printable sample."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dslake_index.layouts import parse_layouts
from dslake_index.profilers import document
from dslake_index.profilers.base import Limits, Profile, Table
from dslake_index.profilers.fixedwidth import (
    find_runs,
    is_sp3,
    is_tle,
    last_sp3_epoch,
    run_table,
    sp3_facts,
    sp3_time,
    tle_facts,
    tle_time,
)
from dslake_index.profilers.repeats import duplicate_rows_note
from dslake_index.profilers.stats import describe_columns, fill_notes, sample_rows
from dslake_index.profilers.textio import count_lines, decode_head, detect_encoding, printable

SAMPLE_CHARS = 1500
WHOLE_TABLE_BYTES = 16 << 20  # a text file holding an aligned table is read whole up to this size
PROSE_SHARE = 0.1  # aligned rows covering less than this share of a text's lines do not make it a table
CODE_EXT = {".py": "Python", ".r": "R", ".sql": "SQL", ".sh": "shell", ".js": "JavaScript", ".ipynb": "Jupyter",
            ".m": "MATLAB", ".jl": "Julia", ".java": "Java", ".c": "C", ".cpp": "C++", ".go": "Go", ".rs": "Rust"}
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_MD_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _lines_of(path: Path, head: bytes, size: int, limits: Limits) -> tuple[str, list[str], str, list[str]]:
    encoding, notes = detect_encoding(path, head, size, limits.max_bytes_full_read)
    text = decode_head(head, encoding, len(head) >= size)
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return text, lines, encoding, notes


TAIL_BYTES = 4096  # the end of a record file read for its last record's time


def _tail_lines(path: Path, size: int) -> list[str]:
    with open(path, "rb") as f:
        f.seek(max(0, size - TAIL_BYTES))
        return f.read().decode("ascii", "replace").splitlines()


def _span(first: str | None, last: str | None) -> list[str] | None:
    return [first, last] if first and last and first <= last else None


def _heading_like(lines: list[str], i: int) -> bool:
    s = lines[i].strip()
    if not (3 <= len(s) <= 70) or sum(ch.isalpha() for ch in s) < 3 or s.endswith((",", ";")):
        return False
    if s[0] in "#%/*+-" or s.count(" ") > 9:
        return False
    before_blank = i == 0 or not lines[i - 1].strip()
    after_blank = i + 1 >= len(lines) or not lines[i + 1].strip()
    return (before_blank and (after_blank or s.isupper() or s.endswith(":"))) or s.isupper()


def text_title_headings(lines: list[str]) -> tuple[str | None, list[str]]:
    """Return a title (first meaningful line) and heading-like lines of plain text."""
    title = None
    for ln in lines[:20]:
        s = ln.strip().lstrip("#:").strip()
        if s and sum(ch.isalpha() for ch in s) >= 3:
            title = s[:120]
            break
    heads = []
    for i in heading_lines(lines):
        h = lines[i].strip()
        if h[:120] != title and h not in heads:
            heads.append(h[:120])
        if len(heads) >= 15:
            break
    return title, heads


def heading_lines(lines: list[str], limit: int = 40) -> list[int]:
    """Return the indexes of heading-like lines (short, set apart, or in capitals) among the first 2,000."""
    return [i for i in range(min(len(lines), 2000)) if _heading_like(lines, i)][:limit]


def profile_text(path: Path, head: bytes, size: int, limits: Limits, ext: str) -> Profile:
    """Profile text: TLE/SP3 records, an aligned numeric table, code, or prose."""
    text, lines, encoding, notes = _lines_of(path, head, size, limits)
    whole = len(head) >= size
    n_lines = len(lines) if whole else (count_lines(path, size) if size <= limits.max_bytes_full_read else None)
    prof = Profile(format="text", size=size, encoding=encoding, notes=notes,
                   text_sample=printable(text, SAMPLE_CHARS))
    if n_lines is not None:
        prof.notes.append(f"{n_lines:,} lines")
    if is_tle(lines):
        prof.format = "tle"
        prof.structure, extra = tle_facts(lines)
        prof.notes += extra
        prof.title = "two-line element sets for satellite(s) " + ", ".join(prof.structure["satellites"])
        if prof.structure["first_date"]:
            prof.keywords.append(f"epochs {prof.structure['first_date']} to {prof.structure['last_date']}")
        if whole and prof.structure["first_epoch"]:  # epochs in file order: the head's last is not the file's
            prof.time_span = _span(tle_time(prof.structure["first_epoch"]), tle_time(prof.structure["last_epoch"]))
        prof.read_hint = "open({path}).read().splitlines()"
        return prof
    if is_sp3(lines):
        prof.format = "sp3"
        prof.structure, extra = sp3_facts(lines)
        prof.notes += extra
        prof.title = "SP3 orbit positions" + (" and velocities" if lines[0][2:3] == "V" else "")
        last = last_sp3_epoch(lines if whole else _tail_lines(path, size))
        if prof.structure["first_epoch_in_sample"] and last:
            prof.time_span = _span(sp3_time(prof.structure["first_epoch_in_sample"]), sp3_time(last))
        prof.read_hint = "open({path}).read().splitlines()"
        return prof
    if ext in CODE_EXT:
        prof.format = "code"
        prof.notes.insert(0, f"{CODE_EXT[ext]} source code, not data")
        prof.title = next((ln.strip("#/\"' ") for ln in lines[:10] if ln.strip("#/\"' ")), None)
        prof.read_hint = "open({path}).read()"
        return prof
    prof.title, prof.headings = text_title_headings(lines)
    runs = find_runs(lines)
    if not whole and size <= WHOLE_TABLE_BYTES and runs and runs[0].end >= len(lines) - 1:
        # An aligned table runs to the end of the head: read the whole (small) file, so its ranges are the
        # file's own (omni2_2024.dat, 2.8 MB: day of year 1 .. 134 from the head, 1 .. 366 in the file).
        return profile_text(path, path.read_bytes(), size, limits, ext)
    nonblank = sum(1 for ln in lines if ln.strip())
    for run in runs[:3]:
        to_eof = run.end == len(lines) and all(not ln.strip() for ln in lines[run.end :])
        try:
            table, _df = run_table(lines, run, limits, to_eof)
        except Exception:  # an odd run pandas cannot read is skipped; the text profile still stands
            continue
        if to_eof and not whole:
            table.n_rows = (n_lines - run.start) if n_lines is not None else None
            table.n_rows_exact = n_lines is not None
        prof.tables.append(table)
    rows = sum(t.n_rows or 0 for t in prof.tables)
    if prof.tables and rows < PROSE_SHARE * max(1, nonblank if whole else len(lines)):
        # a few aligned rows in a long text are part of the document, not what it is
        prof.notes.append("aligned rows inside the text (" + ", ".join(t.location or "" for t in prof.tables)
                          + ") are part of the document; read it as text")
        prof.tables = []
    for table in prof.tables:
        prof.notes += fill_notes(table.columns + table.later_columns)
        if table.duplicate_rows and table.n_rows:
            prof.notes += duplicate_rows_note(table.duplicate_rows, table.n_rows, table.n_rows_exact)
    if prof.tables and (prof.tables[0].n_rows or 0) >= 0.5 * max(1, nonblank if whole else len(lines)):
        prof.format = "fixed-width"
        main = prof.tables[0]
        prof.read_hint = main.read_hint
        prof.notes.insert(0, f"whitespace-aligned table of {main.n_cols} columns starting at line "
                             f"{main.skip_rows + 1}" + (f" after {main.skip_rows} header/comment lines"
                                                        if main.skip_rows else "")
                          + ("; no header line: columns are numbered (header=None)" if main.header_row is None
                             and main.columns and main.columns[0].name == "0" else "")
                          + ("; column names come from a comment line (names=...)" if main.header_row is None
                             and main.columns and main.columns[0].name != "0" else ""))
        if len(main.columns) and all(c.dtype in ("int", "float") for c in main.columns[:3]):
            prof.text_sample = printable("\n".join(lines[: main.skip_rows + 5]), SAMPLE_CHARS)
    else:
        if prof.tables:
            prof.notes.append(f"{len(prof.tables)} small aligned table(s) inside the text")
        if 0 < nonblank <= 200 and whole and all(len(ln.strip()) <= 60 for ln in lines if ln.strip()):
            prof.notes.append(f"a list of {nonblank} short lines (one item per line)")
            prof.structure = {"items": [ln.strip() for ln in lines if ln.strip()][:50]}
        elif len(text) > SAMPLE_CHARS and not prof.tables:
            heads = heading_lines(lines)
            prof.structure = {"outline": document.outline(lines, set(heads))}
            layouts = parse_layouts(lines)  # a format document: the words of another file's columns
            if layouts:
                prof.structure["layouts"] = layouts
                prof.notes.append("defines the columns (words) of data files: " + "; ".join(
                    f"{lay['title'] or 'a table'} at line {lay['line']} ({len(lay['words'])} words)" for lay in layouts))
            prof.text_sample = printable(document.excerpt(lines, set(heads)), document.EXCERPT_CHARS + 400)
        prof.read_hint = f"open({{path}}, encoding={encoding!r}).read()"
    return prof


def md_tables(lines: list[str], limits: Limits) -> list[Table]:
    """Return the pipe tables of a markdown text, each with a read hint that loads it."""
    import pandas as pd

    tables = []
    i = 0
    while i + 1 < len(lines):
        if "|" in lines[i] and _MD_SEP.match(lines[i + 1]) and "-" in lines[i + 1]:
            h = i
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            rows = [_md_cells(ln) for ln in lines[h + 2 : j]]
            names = _md_cells(lines[h])
            width = len(names)
            rows = [(r + [""] * width)[:width] for r in rows]
            df = pd.DataFrame(rows, columns=names)
            df = _numeric(df)
            edge = lines[h].strip()
            lead, trail = edge.startswith("|"), edge.endswith("|")
            cols = f".iloc[:, {1 if lead else 0}:{-1 if trail else ''}]" if lead or trail else ""
            hint = (f"pd.read_csv({{path}}, sep=r'\\s*\\|\\s*', engine='python', skiprows=[*range({h}), {h + 1}], "
                    f"nrows={len(rows)}){cols}")
            t = Table(name=None, n_rows=len(rows), n_cols=width, header_row=h, skip_rows=h,
                      location=f"lines {h + 1}-{j}", read_hint=hint)
            describe_columns(t, df, limits)
            t.sample_rows = sample_rows(df, limits)
            tables.append(t)
            i = j
        else:
            i += 1
    return tables


def _md_cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _numeric(df: Any) -> Any:
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        conv = pd.to_numeric(out[c], errors="coerce")
        if conv.notna().sum() == (out[c].astype(str).str.strip() != "").sum():
            out[c] = conv
    return out


def profile_markdown(path: Path, head: bytes, size: int, limits: Limits) -> Profile:
    """Profile markdown: title, headings, pipe tables with read hints, a text sample."""
    text, lines, encoding, notes = _lines_of(path, head, size, limits)
    prof = Profile(format="markdown", size=size, encoding=encoding, notes=notes,
                   text_sample=printable(text, SAMPLE_CHARS), read_hint="open({path}).read()")
    in_code = False
    for ln in lines:
        if ln.lstrip().startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else _MD_HEADING.match(ln)
        if m:
            if prof.title is None and len(m.group(1)) == 1:
                prof.title = m.group(2)[:120]
            elif len(prof.headings) < 30:
                prof.headings.append(m.group(2)[:120])
    if prof.title is None:
        prof.title, _ = text_title_headings(lines)
    prof.tables = md_tables(lines, limits)[:20]
    if prof.tables:
        prof.notes.append(f"{len(prof.tables)} pipe table(s) in the text")
    if len(head) < size:
        prof.sampled = True
        prof.notes.append(f"only the first {len(head):,} bytes were read")
    return prof
