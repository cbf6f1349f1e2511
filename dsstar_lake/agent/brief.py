"""An entry's description cut to what a reader needs to pick and load the file: the brief form.

Every prompt repeats the given data, so the entries ranked below those that fit the budget are shown briefly:
the file, its title, each table's shape and load hint, the column names with their types and units, the
near-identical files and copies. Statistics, notes, first rows and member lists are left out (the load hints
already carry what the notes say about reading), and the brief says so. A step that names the file brings its
full description into the prompts from then on.
"""

from __future__ import annotations

import re

from dslake_index.gist import cut_words

BRIEF_MARK = ("[brief: value ranges, notes, first rows and member lists left out to fit the prompt; a step that names "
              "this file brings its full description]")

_COLUMN = re.compile(r"^\s+- ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"): ([^;]+)")
_MORE_COLUMNS = re.compile(r"^\s+- and (\d+) more(?: \(statistics left out\): (.*))?")
_DROPPED = ("Notes:", "Members", "[... truncated")  # blocks whose lines a brief leaves out entirely
_SHORTENED = ("Text sample:", "Excerpt", "Outline")  # blocks a brief keeps the first lines of
_SKIPPED_HEADINGS = ("Description of the first member", "Member description")  # the member's lines follow
BLOCK_LINES = 4  # lines kept of a shortened block or of any other indented block (arrays, variables, headers)
LINE_CHARS = 240
POINTER_COLUMNS = 8


def brief(description: str) -> str:
    """Return the brief form of a description written by index.cards.describe (or a family's).

    Every top-level line stays (clipped), so facts a description gains later survive by default; the notes, the
    first rows and the member lists go; each column block becomes one line of names, types and units; any other
    indented block keeps its first few lines.
    """
    out: list[str] = []
    columns: list[str] = []
    block = ""  # what the indented lines that follow belong to: columns, rows, drop, or other
    left = 0  # lines still kept of the current block

    def flush_columns() -> None:
        if columns:
            out.append("  columns: " + ", ".join(columns))
            columns.clear()

    for line in description.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not line[:1].isspace() and not line.startswith("- "):
            flush_columns()
            block, left = "other", BLOCK_LINES
            if stripped.startswith(_DROPPED):
                block = "drop"
            elif stripped.startswith(_SKIPPED_HEADINGS):
                continue
            else:
                out.append(_clip(line))
            continue
        if block == "drop":
            continue
        if out and out[-1].startswith(("Near-identical files", "- data/")) and line.startswith("- "):
            out.append(line)  # near-identical files: already a line each
            continue
        if stripped.startswith("load:"):
            flush_columns()
            out.append(_clip(line, 2 * LINE_CHARS))
            block = "table"
        elif stripped == "columns:" or (stripped.startswith("columns (") and stripped.endswith("):")):
            block = "columns"
        elif stripped.startswith("columns: "):
            out.append(_clip(line, 2 * LINE_CHARS))
        elif stripped.startswith("first rows:"):
            flush_columns()
            block = "rows"
        elif block == "columns":
            match, more = _COLUMN.match(line), _MORE_COLUMNS.match(line)
            if match:
                columns.append(f"{match.group(1)} {_kind(match.group(2))}")
            elif more and more.group(2):
                columns.append(more.group(2))  # names, types and units: a brief keeps every column's name
            elif more:
                columns.append(f"and {more.group(1)} more")
        elif block == "other" and left > 0:
            out.append(_clip(line))
            left -= 1
    flush_columns()
    out.append(BRIEF_MARK)
    return "\n".join(out)


def _clip(line: str, limit: int = LINE_CHARS) -> str:
    """Return the line whole when it fits, else cut between words with '…', its indentation kept."""
    if len(line) <= limit:
        return line
    indent = line[: len(line) - len(line.lstrip())]
    return indent + cut_words(line, limit - len(indent))


def pointer(path: str, description: str) -> str:
    """Return the one-line form of an entry (path, title, shape, first column names), when even a brief has no room."""
    return one_line(path, description) + (" [named only: no room left in the prompt; a step that names it brings "
                                          "its description]")


def one_line(path: str, description: str) -> str:
    """Return an entry in one line: its data/ path, title, first table's shape and that table's first column names
    (a file of stacked tables: how many more tables follow, not their headers run together)."""
    lines = description.splitlines()
    title = next((ln[len("Title: "):] for ln in lines if ln.startswith("Title: ")), "")
    first = next((ln.strip() for ln in lines if ln.startswith(("Table", "Family of"))), "")
    first = _FAMILY_GLOB.sub("", first).rstrip(".")  # the glob repeats the path the line starts with
    names = first_table_columns(lines)
    tables = sum(1 for ln in lines if _TABLE_HEAD.match(ln) and not ln.startswith("Table:"))
    parts = [f"data/{path}"] + [p for p in (repr(cut_words(title, 100)) if title else "", cut_words(first, 100)) if p]
    coverage = next((m for m in map(_COVERS.match, lines) if m), None)
    if coverage:  # a family's period and its gaps: what a question's period is checked against
        parts.append(f"{coverage['column']} {coverage['span']}" + (f" (gaps: {cut_words(coverage['gaps'], 80)})"
                                                                    if coverage["gaps"] else ""))
    if names:
        shown = names[:POINTER_COLUMNS]
        parts.append("columns " + ", ".join(shown) + (" …" if len(names) > POINTER_COLUMNS else ""))
    if tables > 1:
        parts.append(f"{tables - 1} more table{'s' * (tables > 2)}")
    return " · ".join(parts)


_FAMILY_GLOB = re.compile(r" matching `[^`]*`")
# A family's coverage line (index/family_stats.py): "'Timestamp' covers 2014-01-28 .. 2019-12-16 over all members.
# … Gaps no member covers: 2019-06-10 .. 2019-06-13 (3 days)."
_COVERS = re.compile(r"^(?P<column>'[^']*'|\"[^\"]*\") covers (?P<span>.+?) over all members\b"
                     r"(?:.*? Gaps no member covers: (?P<gaps>(?:[^()]+\([^)]*\),? ?)+(?:and \d+ more)?))?")
_TABLE_HEAD = re.compile(r"^Table(?: \d+)?(?: \([^)]*\))?: ")


def first_table_columns(lines: list[str]) -> list[str]:
    """Return the column names of the description's first table, each once, in order: a later table's (or the
    first member's repeated) columns are not the first table's."""
    names: list[str] = []
    started = False
    for line in lines:
        if _TABLE_HEAD.match(line) or line.startswith(("Description of the first member", "Member description")):
            if started:
                break
            continue
        match = _COLUMN.match(line)
        if match:
            started = True
            if match.group(1) not in names:
                names.append(match.group(1))
        elif started and line.strip().startswith("columns: "):
            break
        elif line.strip().startswith("columns: ") and not started:
            started = True
            names += [n for n in _QUOTED.findall(line) if n not in names]
    return names


_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def _kind(dtype: str) -> str:
    """Return a column's type and unit without the details after it ('int [ppm]', 'text (dates)')."""
    kind = dtype.split(":", 1)[0].strip()
    if kind.count("(") > kind.count(")"):
        kind = kind[: kind.rfind("(")].strip()
    return kind
