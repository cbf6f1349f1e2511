"""The report as one self-contained HTML file: Markdown rendered with raw HTML off, figures as data URIs."""

from __future__ import annotations

import base64
import html
import re
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dsstar_lake.report.citations import CITATION, normal_src, numbers
from dsstar_lake.report.prompts import HERE

MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
        ".svg": "image/svg+xml"}


def data_uri(path: Path) -> str:
    """Return a file as a base64 data URI."""
    mime = MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def render_html(markdown: str, title: str, figures: dict[str, Path], questions: Iterable[int] = ()) -> str:
    """Render the report's Markdown as one HTML page; only the given figures appear, embedded as data URIs.

    Raw HTML in the Markdown is shown as text (markdown-it's html=False), link targets are checked by
    markdown-it (no javascript:), and an image that is not one of `figures` becomes a short note, so
    the page loads nothing from anywhere. Citations of the given sub-question numbers link to their
    entries in the evidence appendix (headings "### [n] ...").
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    uris = {key: data_uri(path) for key, path in figures.items()}
    known = set(questions)
    for at, token in enumerate(tokens):
        if token.type == "heading_open" and (n := _numbered(tokens[at + 1].content)) in known:
            token.attrs["id"] = f"q{n}"
        if token.children:
            token.children = _inline(token.children, uris, known)
    body = md.renderer.render(tokens, md.options, {})
    page = string.Template((HERE / "report.html").read_text(encoding="utf-8"))
    return page.substitute(title=html.escape(title), body=body)


def _numbered(heading: str) -> int | None:
    found = re.match(r"\[(\d+)\]", heading)
    return int(found[1]) if found else None


def _inline(children: list[Any], uris: dict[str, str], known: set[int]) -> list[Any]:
    """Embed known figures (others become a note) and link citations [n] to the appendix, outside links."""
    from markdown_it.token import Token

    def text(content: str) -> Any:
        token = Token("text", "", 0)
        token.content = content
        return token

    out: list[Any] = []
    in_link = 0
    for child in children:
        in_link += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        if child.type == "image":
            src = normal_src(str(child.attrs.get("src", "")))
            if src in uris:
                child.attrs["src"] = uris[src]
                out.append(child)
            else:
                out.append(text(f"[figure left out: {src}]"))
        elif child.type == "text" and not in_link and known:
            last = 0
            for m in CITATION.finditer(child.content):
                cited = [n for n in numbers(m["body"]) if n in known]
                if not cited:
                    continue
                out.append(text(child.content[last:m.start()]))
                link = Token("link_open", "a", 1)
                link.attrs["href"] = f"#q{cited[0]}"
                out += [link, text(m.group(0)), Token("link_close", "a", -1)]
                last = m.end()
            out.append(text(child.content[last:]) if last else child)
        else:
            out.append(child)
    return out
