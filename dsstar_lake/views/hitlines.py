"""Search hits as a person reads them, the same on every surface: what each entry holds (index/gist.py), the
words the query matched, and the near-identical files folded under it.

The terminal (rich), the web page (HTML) and the notebook take the marked pieces from here; the CLI's `--csv` and
`--nl` rows too. Hit text comes from the lake (names, column names, cell values): rich markup and HTML are
escaped here, before any marking is added.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from dslake_index.fulltext import query_terms
from dslake_index.gist import matched_spans

FOLDED_SHOWN = 8  # folded members listed by name under a hit; the rest are counted (`--json` lists them all)
FOLDED_NOTE = "+ near-identical files (same folder, name pattern and layout), folded under the hit above them"
CSV_COLUMNS = ("rank", "path", "kind", "format", "files", "score", "dense", "fulltext", "summary", "folded")


def pieces(text: str, terms: Iterable[str]) -> list[tuple[str, bool]]:
    """Return text cut into (piece, matched) pairs: the words a query term matches, and what lies between."""
    out, at = [], 0
    for start, end in matched_spans(text, terms):
        if start > at:
            out.append((text[at:start], False))
        out.append((text[start:end], True))
        at = end
    if at < len(text):
        out.append((text[at:], False))
    return out


def marked_html(text: str, terms: Iterable[str]) -> str:
    """Return text as HTML, every piece escaped, the matched words in <mark>."""
    return "".join(f"<mark>{html.escape(p)}</mark>" if hit else html.escape(p) for p, hit in pieces(text, terms))


def marked_rich(text: str, terms: Iterable[str], style: str = "bold yellow", rest: str | None = None) -> Any:
    """Return text as a rich Text (no markup parsed), the matched words in style and the others in rest."""
    from rich.text import Text

    from dsstar_lake.base.untrusted import visible

    shown = Text()
    for piece, hit in pieces(visible(text), terms):
        shown.append(piece, style=style if hit else rest)
    return shown


def folded_lines(hit: Any, shown: int = FOLDED_SHOWN) -> list[str]:
    """Return the lines that name a hit's folded members: one per path, then how many more."""
    kin = list(getattr(hit, "kin", None) or [])
    lines = [f"+ {path}" for path in kin[:shown]]
    if len(kin) > shown:
        lines.append(f"+ … and {len(kin) - shown} more")
    return lines


def terms_of(query: str) -> list[str]:
    """Return the query's words that search matches (what gets marked)."""
    return query_terms(query)


def csv_text(hits: Sequence[Any]) -> str:
    """Return the hits as CSV with a header row (summary lines joined by ' | ', folded paths by '; ')."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, hit in enumerate(hits, 1):
        writer.writerow([rank, hit.path, hit.kind, hit.format or "", hit.member_count, f"{hit.score:.4f}",
                         "" if hit.dense is None else hit.dense, "" if hit.fulltext is None else hit.fulltext,
                         " | ".join(hit.summary), "; ".join(hit.kin)])
    return buffer.getvalue()


def nl_text(hits: Sequence[Any]) -> str:
    """Return the hits as newline-delimited JSON: one object per hit, best first, each with its rank."""
    return "".join(json.dumps({"rank": rank, **hit.to_dict()}, ensure_ascii=False) + "\n"
                   for rank, hit in enumerate(hits, 1))
