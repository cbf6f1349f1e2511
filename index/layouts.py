"""Format documents that define another file's columns, and the header-less tables they name.

A data set often ships a text that lays out the words of its header-less tables: `omni2.text` lists, for
`omni2_YYYY.dat`, 55 words with their Fortran format, fill value, meaning and unit. A coder given only the table
reads 55 numbered columns blind. The text profiler finds such word tables (parse_layouts); when the entries of a
folder are built, a header-less table whose column count equals a layout's word count in a document beside it is
linked to it (match_layout), and its entry names each column from it (layout_lines).
"""

from __future__ import annotations

import re
from typing import Any

# a word line: number, a Fortran-style format (I4, F6.1, 'F6 1', A10, E12.4), an optional fill value, meaning
_WORD = re.compile(r"^\s*(\d{1,3})\s+([AIFEDX]\d{1,3}(?:[. ]\d{1,2})?)\s+(?:(-?\d[\d.]*(?:[eE][-+]?\d+)?)\s+)?(\S.*)$")
_HEADER = re.compile(r"\bWORD\b|\bCOLUMN\b|\bFIELD\b", re.I)
_TITLE = re.compile(r"[A-Za-z][\w.]*\.(?:DAT|TXT|ASC|LST)\b", re.I)
MIN_WORDS = 5  # a layout lists at least this many consecutive words
MAX_GAP = 8  # lines between two words of one layout (continuation lines of a long meaning)
CONTINUED = 4  # lines below a word that carry on its comment, joined to it
COMMENT_CHARS = 200
_CONTINUATION = re.compile(r"^ {12,}\S")  # deeply indented: under a word's meaning or comment, not a new word
LINE_WORDS = 60  # words named one per line in a description; beyond, the rest in one line
# The card line of a table whose columns a document names, followed by the document's file name: how search finds
# the document's data when the document ranks (index/documented.py).
NAMED_BY = "columns named by "


def parse_layouts(lines: list[str]) -> list[dict[str, Any]]:
    """Return the word tables of a text: [{'title', 'line', 'words': [[n, format, fill, meaning, unit], ...]}]."""
    layouts: list[dict[str, Any]] = []
    i, n = 0, len(lines)
    while i < n:
        if not _is_header(lines[i]):
            i += 1
            continue
        words: list[list[Any]] = []
        j, gap, more = i + 1, 0, 0
        while j < n and gap <= MAX_GAP and not _is_header(lines[j]):
            match = _WORD.match(lines[j])
            if match and int(match.group(1)) == len(words) + 1:
                words.append(_word(match))
                gap, more = 0, 0
            elif match and words:
                break  # numbering restarts: another table
            else:
                if words and gap == more and more < CONTINUED and _CONTINUATION.match(lines[j]):
                    more += 1  # a word's comment goes on below it: Kp's '(e.g. 3+ = 33, 6- = 57, 4 = 40, etc.)'
                    words[-1][4] = clip_words(f"{words[-1][4]} {lines[j].strip()}".strip(), COMMENT_CHARS)
                gap += 1
            j += 1
        if len(words) >= MIN_WORDS:
            title = next((ln.strip() for ln in reversed(lines[max(0, i - 6) : i]) if _TITLE.search(ln)), "")
            layouts.append({"title": title[:120], "line": i + 1, "words": words})
        i = max(j, i + 1)
    return layouts


def _is_header(line: str) -> bool:
    return bool(_HEADER.search(line)) and bool(re.search(r"MEANING|DESCRIPTION|FORMAT", line, re.I)) \
        and not _TITLE.search(line)


def clip_words(text: str, width: int) -> str:
    """Return text whole when it fits, else cut after a whole word with '…'."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    return (cut[: cut.rfind(" ")] if cut.rfind(" ") > width // 2 else cut).rstrip(" ,;:(") + "…"


def _word(match: re.Match[str]) -> list[Any]:
    number, fmt, fill, rest = match.groups()
    parts = [p.strip() for p in re.split(r"\s{2,}", rest.strip()) if p.strip()]
    meaning = parts[0] if parts else ""
    unit = " ".join(parts[1:])
    return [int(number), fmt.replace(" ", "."), fill, meaning[:80], unit[:80]]


def match_layout(name: str, n_cols: int, docs: list[tuple[str, list[dict[str, Any]]]]) -> tuple[str, dict] | None:
    """Return (document path, layout) for a header-less table of n_cols columns in a file called name: a layout of
    exactly that many words, preferring one whose title names the file's pattern (OMNI2_YYYY.DAT for
    omni2_2024.dat)."""
    fits = [(path, layout) for path, layouts in docs for layout in layouts if len(layout["words"]) == n_cols]
    if not fits:
        return None
    stem = re.sub(r"\d+", "", name.lower())
    named = [f for f in fits if re.sub(r"[^a-z_.]|yyyy|yy|mm|dd", "", f[1]["title"].lower().split()[0]
                                       if f[1]["title"] else "") == stem.replace("-", "_")]
    return (named or fits)[0]


def layout_lines(doc: str, layout: dict[str, Any]) -> list[str]:
    """Return the lines that name a table's numbered columns from a layout (pandas column = word - 1)."""
    title = f", table '{layout['title']}'" if layout["title"] else ""
    out = [f"Columns named by the format document `data/{doc}` (line {layout['line']}{title}): pandas column N "
           "(header=None) is word N+1; meaning [unit or comment], fill value:"]
    for number, _fmt, fill, meaning, unit in layout["words"][:LINE_WORDS]:
        out.append(f"  - '{number - 1}': {meaning}" + (f" [{unit}]" if unit else "") + (f", fill {fill}" if fill else ""))
    rest = layout["words"][LINE_WORDS:]
    if rest:
        out.append("  - and " + "; ".join(f"'{w[0] - 1}' = {w[3]}" for w in rest))
    return out


def layout_docs(rows: list[Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Return (path, layouts) of the documents among a folder's file rows (path, structure JSON) that have any."""
    import json

    out = []
    for row in rows:
        if row["structure"] and '"layouts"' in row["structure"]:
            layouts = (json.loads(row["structure"]) or {}).get("layouts")
            if layouts:
                out.append((row["path"], layouts))
    return out


def linked_layout(members: list[Any], docs: list[tuple[str, list[dict[str, Any]]]]) -> tuple[str, dict] | None:
    """Return the (document, layout) that names the columns of a group's header-less table, from a document in
    the folder of its first member (families.Member: its signature lists the table's columns), or None."""
    first = members[0]
    hint = first.tables[0][2] if first.tables else None
    if not docs or not hint or "header=None" not in hint:
        return None
    parts = first.signature.split("\x1f")
    if len(parts) < 2:
        return None
    n_cols = len(parts[1].split(":", 1)[-1].split("|"))
    here = [d for d in docs if d[0].rpartition("/")[0] == first.folder]
    return match_layout(first.name, n_cols, here)


def with_layout(description: str, card: str, doc: str, layout: dict[str, Any]) -> tuple[str, str]:
    """Return a description with the layout's column names before its (first) table, and the card naming the
    document. The meanings stay out of the card: 55 measures' words made the table the best match of questions
    about other sources (a workbook's potassium in ppm); the document's own card carries them for search."""
    lines = description.split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.startswith(("Table", "Description of the first member"))),
              len(lines))
    return ("\n".join(lines[:at] + layout_lines(doc, layout) + lines[at:]),
            card + f"\n{NAMED_BY}{doc.rpartition('/')[2]}")
