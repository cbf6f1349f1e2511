"""HTML (title, headings, tables with a stdlib parser) and XML (root, leaf fields, repeated records)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import Limits, Profile, Table
from dslake_index.profilers.stats import describe_columns, name_notes, sample_rows, unique_column_names
from dslake_index.profilers.textio import decode_head, detect_encoding, printable

HTML_MAX_BYTES = 16 << 20  # html beyond this is profiled from its head only
MAX_TABLES = 40
MAX_TABLE_ROWS = 5000
SAMPLE_CHARS = 1500
_SKIP = {"script", "style", "noscript", "template", "svg"}
_WS = re.compile(r"\s+")
_PANDAS_WS = re.compile(r"[\r\n]+|\s{2,}")  # what pandas.read_html collapses in a cell's text


class _Extractor(HTMLParser):
    """Collect title, headings, visible text and tables (in document order, nested ones too)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.headings: list[str] = []
        self.text: list[str] = []
        self.text_len = 0
        self.tables: list[dict[str, Any]] = []
        self._stack: list[dict[str, Any]] = []
        self._skip = 0
        self._in_title = False
        self._heading: list[str] | None = None
        self._cell: list[str] | None = None
        self._cell_th = False
        self._span = 1
        self._rowspan = 1
        self._caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in ("h1", "h2", "h3"):
            self._heading = []
        elif tag == "table":
            t = {"rows": [], "caption": "", "text": False, "head_rows": 0}
            self.tables.append(t)
            self._stack.append(t)
        elif tag == "caption":
            self._caption = []
        elif tag == "tr" and self._stack:
            self._stack[-1]["rows"].append([])
        elif tag in ("td", "th") and self._stack:
            self._finish_cell()
            self._cell, self._cell_th = [], tag == "th"
            span = dict(attrs).get("colspan") or "1"
            self._span = int(span) if span.strip().isdigit() and 0 < int(span) <= 50 else 1
            down = dict(attrs).get("rowspan") or "1"
            self._rowspan = int(down) if down.strip().isdigit() and 0 < int(down) <= 500 else 1
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in ("h1", "h2", "h3") and self._heading is not None:
            h = _WS.sub(" ", "".join(self._heading)).strip()
            if h and len(self.headings) < 40:
                self.headings.append(h[:120])
            self._heading = None
        elif tag in ("td", "th"):
            self._finish_cell()
        elif tag == "caption" and self._caption is not None and self._stack:
            self._stack[-1]["caption"] = _WS.sub(" ", "".join(self._caption)).strip()[:120]
            self._caption = None
        elif tag == "table" and self._stack:
            self._finish_cell()
            self._stack.pop()

    def _finish_cell(self) -> None:
        if self._cell is None or not self._stack:
            return
        table = self._stack[-1]
        if not table["rows"]:
            table["rows"].append([])
        text = _PANDAS_WS.sub(" ", "".join(self._cell).strip())  # as pd.read_html gives it: a '\xa0' stays
        row = table["rows"][-1]
        if len(table["rows"]) <= MAX_TABLE_ROWS:
            row.extend([(text, self._cell_th, self._rowspan)] * self._span)
        self._cell = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.title += data
            return
        if self._heading is not None:
            self._heading.append(data)
        if self._caption is not None:
            self._caption.append(data)
        if self._cell is not None:
            self._cell.append(data)
        for t in self._stack:
            if data.strip():
                t["text"] = True
        if self.text_len < 20000 and data.strip():
            self.text.append(data.strip())
            self.text_len += len(data)


def _spread(rows: list[list[tuple[str, bool, int]]]) -> list[list[tuple[str, bool]]]:
    """Copy cells with rowspan=N into the N-1 rows below, as pandas.read_html does (extra rows when they run out)."""
    out: list[list[tuple[str, bool]]] = []
    pending: list[tuple[int, str, bool, int]] = []  # (column, text, th, rows still to fill)
    for tr in rows:
        texts: list[tuple[str, bool]] = []
        carry: list[tuple[int, str, bool, int]] = []
        for text, th, down in tr:
            while pending and pending[0][0] <= len(texts):
                j, t, h, n = pending.pop(0)
                texts.append((t, h))
                if n > 1:
                    carry.append((j, t, h, n - 1))
            if down > 1:
                carry.append((len(texts), text, th, down - 1))
            texts.append((text, th))
        for j, t, h, n in pending:
            texts.append((t, h))
            if n > 1:
                carry.append((j, t, h, n - 1))
        out.append(texts)
        pending = carry
    while pending:
        out.append([(t, h) for _, t, h, _ in pending])
        pending = [(j, t, h, n - 1) for j, t, h, n in pending if n > 1]
    return out


def _table_of(raw: dict[str, Any], index: int, limits: Limits) -> tuple[Table, list[str]] | None:
    import pandas as pd

    cells = [r for r in raw["rows"] if r]
    if not cells or not raw["text"]:
        return None
    heads = 0  # pandas takes every leading row of <th> cells as a header row
    while heads < len(cells) and all(th for _, th, _ in cells[heads]):
        heads += 1
    header = heads > 0
    rows = _spread(cells[:heads]) + _spread(cells[heads:])
    width = max(len(r) for r in rows)
    level = f"_level_{heads - 1}" if heads > 1 else ""  # pandas' name of an empty cell in a multi-row header
    last = rows[heads - 1] if header else []
    names = [c or f"Unnamed: {j}{level}" for j, (c, _) in enumerate(last)] if header else \
        [str(i) for i in range(width)]
    names = (names + [f"Unnamed: {i}{level}" for i in range(len(names), width)])[:width]
    body = [[c for c, _ in r] + [""] * (width - len(r)) for r in rows[heads:]]
    df = pd.DataFrame(body, columns=unique_column_names(names))
    df = df.replace("", None)
    for c in df.columns:
        conv = pd.to_numeric(df[c].astype("string").str.replace(",", "", regex=False), errors="coerce")
        if conv.notna().sum() and conv.notna().sum() == df[c].notna().sum():
            df[c] = conv
    hint = f"pd.read_html({{path}})[{index}]"
    notes = name_notes([str(c) for c in df.columns])
    if heads > 1:  # a MultiIndex of column tuples: the hint keeps the last header row's names
        hint += f".droplevel({list(range(heads - 1))}, axis=1)"
        notes.append(f"{heads} header rows: pandas makes MultiIndex columns; the load line keeps the last row's "
                     f"names (the rows above: {' / '.join(dict.fromkeys(c for r in rows[: heads - 1] for c, _ in r if c))[:300]})")
    t = Table(name=raw["caption"] or None, n_rows=len(body), n_cols=width,
              header_row=heads - 1 if header else None, read_hint=hint)
    describe_columns(t, df, limits)
    t.sample_rows = sample_rows(df, limits)
    return t, notes


def profile_html(path: Path, head: bytes, size: int, limits: Limits) -> Profile:
    """Profile an HTML page: title, headings, every table (as pd.read_html numbers them), visible text."""
    data = head
    if len(head) < size:
        with open(path, "rb") as fh:
            data = fh.read(HTML_MAX_BYTES)
    encoding, notes = detect_encoding(path, data, size, limits.max_bytes_full_read)
    text = decode_head(data, encoding, len(data) >= size)
    parser = _Extractor()
    parser.feed(text)
    parser.close()
    prof = Profile(format="html", size=size, encoding=encoding, notes=notes,
                   title=_WS.sub(" ", parser.title).strip()[:160] or None, headings=parser.headings[:30],
                   text_sample=printable(" ".join(parser.text), SAMPLE_CHARS))
    index = 0
    for raw in parser.tables:
        found = _table_of(raw, index, limits)
        if found is None:
            continue
        table, table_notes = found
        index += 1
        if len(prof.tables) < MAX_TABLES:
            prof.tables.append(table)
            prof.notes += [f"table {index}: {n}" for n in table_notes]
    if index:
        prof.notes.append(f"{index} table(s); pd.read_html(path) returns them as a list in this order "
                          "(it needs lxml, or bs4 + html5lib)")
        prof.read_hint = "pd.read_html({path})"
    else:
        prof.read_hint = "open({path}).read()"
    if len(data) < size:
        prof.sampled = True
        prof.notes.append(f"only the first {len(data):,} bytes were parsed")
    return prof


def profile_xml(path: Path, head: bytes, size: int, limits: Limits) -> Profile:
    """Profile XML: root element, leaf fields with values, repeated record elements."""
    import xml.etree.ElementTree as ET

    encoding, notes = detect_encoding(path, head, size, limits.max_bytes_full_read)
    prof = Profile(format="xml", size=size, encoding=encoding, notes=notes,
                   text_sample=printable(decode_head(head, encoding, len(head) >= size), SAMPLE_CHARS))
    leaves: dict[str, str] = {}
    counts: dict[str, int] = {}
    stack: list[str] = []
    root = None
    try:
        for n, (event, elem) in enumerate(ET.iterparse(str(path), events=("start", "end"))):
            tag = elem.tag.split("}")[-1]
            if event == "start":
                stack.append(tag)
                root = root or tag
                continue
            key = "/".join(stack[1:]) or tag
            counts[key] = counts.get(key, 0) + 1
            text = (elem.text or "").strip()
            if text and len(elem) == 0 and key not in leaves and len(leaves) < 80:
                leaves[key] = text[:160]
            stack.pop()
            if len(stack) <= 1:
                elem.clear()
            if n > 200_000:
                prof.notes.append("only the first 100,000 elements were read")
                break
    except ET.ParseError as exc:
        prof.notes.append(f"XML is not well-formed ({exc}); the fields below come from the part before the error")
    repeated = {k: v for k, v in counts.items() if v > 1}
    prof.structure = {"root": root, "fields": leaves,
                      "repeated": dict(sorted(repeated.items(), key=lambda kv: -kv[1])[:20])}
    desc = next((v for word in ("title", "description", "name") for k, v in leaves.items()
                 if re.search(word + "$", k, re.I)), None)
    prof.title = desc or root
    prof.read_hint = "xml.etree.ElementTree.parse({path}).getroot()"
    if repeated:
        top = max(repeated.items(), key=lambda kv: kv[1])
        prof.notes.append(f"repeated element '{top[0]}' ({top[1]}x) looks like the records: "
                          "pd.read_xml(path, xpath='//" + top[0].split("/")[-1] + "') may load them")
    return prof
