"""An entry's description cut to what a reader needs to pick and load the file: the brief form.

Every prompt repeats the given data, so the entries ranked below those that fit the budget are shown briefly:
the file, its title, each table's shape and load hint, the column names with their types and units, the
near-identical files and copies. Statistics, notes, first rows and member lists are left out (the load hints
already carry what the notes say about reading), and the brief says so. A script that reads the file brings
its full description into the next round's prompts.
"""

from __future__ import annotations

import re

BRIEF_MARK = ("[brief: value ranges, notes and first rows left out to fit the prompt; a script that reads "
              "this file brings its full description next round]")

_KEEP = ("File: ", "Format: ", "Title: ", "Load: ", "Family of ", "First: ", "Load them all", "Table",
         "Identical copy", "Near-identical files", "This file is one member")
_CLIP_KEEP = ("Headings: ", "Sheet ", "XML root")
_COLUMN = re.compile(r"^\s+- ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"): ([^;]+)")
_MORE_COLUMNS = re.compile(r"^\s+- and (\d+) more")
_DROPPED_BLOCKS = ("Notes:", "Members", "Text sample:", "Excerpt")
_EXCERPT_LINES = 4
POINTER_COLUMNS = 8


def brief(description: str) -> str:
    """Return the brief form of a description written by index.cards.describe (or a family's)."""
    out: list[str] = []
    columns: list[str] = []
    block = ""  # the block whose indented lines follow: columns, rows, notes, members, excerpt
    excerpt_left = 0
    heading = ""

    def flush_columns() -> None:
        if columns:
            out.append("  columns: " + ", ".join(columns))
            columns.clear()

    for line in description.splitlines():
        stripped = line.strip()
        indented = line[:1].isspace() or line.startswith("- ")
        if not indented:
            flush_columns()
            block = ""
            if stripped.startswith(_DROPPED_BLOCKS):
                block = "excerpt" if stripped.startswith(("Text sample:", "Excerpt")) else "drop"
                excerpt_left = _EXCERPT_LINES
                heading = stripped
                continue
            if stripped.startswith("Member description"):
                continue  # the member's own lines follow and are briefed like a file's
            if stripped.startswith(_KEEP):
                out.append(line)
            elif stripped.startswith(_CLIP_KEEP):
                out.append(line if len(line) <= 240 else line[:239] + "…")
            continue
        if block == "drop":
            continue
        if block == "excerpt":
            if excerpt_left == _EXCERPT_LINES:
                out.append(heading)  # only when the excerpt has lines
            if excerpt_left > 0:
                out.append(line if len(line) <= 200 else line[:199] + "…")
                excerpt_left -= 1
            continue
        if out and out[-1].startswith(("Near-identical files", "- data/")):
            out.append(line)
            continue
        if stripped.startswith("load:"):
            flush_columns()
            out.append(line)
        elif stripped == "columns:":
            block = "columns"
        elif stripped.startswith("columns: "):
            out.append(line)
        elif stripped.startswith("first rows:"):
            flush_columns()
            block = "rows"
        elif block == "columns":
            match = _COLUMN.match(line)
            more = _MORE_COLUMNS.match(line)
            if match:
                columns.append(f"{match.group(1)} {_kind(match.group(2))}")
            elif more:
                columns.append(f"and {more.group(1)} more")
    flush_columns()
    out.append(BRIEF_MARK)
    return "\n".join(out)


def pointer(path: str, description: str) -> str:
    """Return the one-line form of an entry (path, title, shape, first column names), when even a brief has no room."""
    lines = description.splitlines()
    title = next((ln[len("Title: "):] for ln in lines if ln.startswith("Title: ")), "")
    first = next((ln.strip() for ln in lines if ln.startswith(("Table", "Family of"))), "")
    names = [m.group(1) for m in map(_COLUMN.match, lines) if m][:POINTER_COLUMNS]
    parts = [f"data/{path}"] + [p for p in (repr(title[:100]) if title else "", first[:100]) if p]
    if names:
        parts.append("columns " + ", ".join(names) + (" …" if len(names) == POINTER_COLUMNS else ""))
    return " · ".join(parts) + " [named only: no room left in the prompt; a script that reads it brings its description]"


def _kind(dtype: str) -> str:
    """Return a column's type and unit without the details after it ('int [ppm]', 'text (dates)')."""
    kind = dtype.split(":", 1)[0].strip()
    if kind.count("(") > kind.count(")"):
        kind = kind[: kind.rfind("(")].strip()
    return kind
