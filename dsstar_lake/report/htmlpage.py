"""The report as one self-contained HTML file: Markdown rendered with raw HTML off, figures as data URIs."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dsstar_lake.report.citations import CITATION, normal_src
from dsstar_lake.report.prompts import HERE
from dsstar_lake.sandbox.figures import MIME

NUMBER = re.compile(r"\d+")


def data_uri(path: Path) -> str:
    """Return a file as a base64 data URI."""
    mime = MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def html_page(markdown: str, title: str, figures: dict[str, Path], questions: Iterable[int] = ()) -> str:
    """Render the report's Markdown as one HTML page; only the given figures appear, embedded as data URIs.

    Raw HTML in the Markdown is shown as text (markdown-it's html=False), link targets are checked by
    markdown-it (no javascript:), and an image that is not one of `figures` becomes a short note, so
    the page loads nothing from anywhere. Each figure is embedded once, where it first appears: a later
    image of it, or a link to its file, becomes a link to that place (a chart the writer shows is listed,
    not repeated, in the appendix). Each number of a citation ([4, 1]) links to its own entry in the
    evidence appendix (headings "### [n] ...").
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    page = _Page(figures, set(questions), _figure_anchors(tokens, figures))
    for at, token in enumerate(tokens):
        heading = token.type == "heading_open"
        if heading and (n := _numbered(tokens[at + 1].content)) in page.known:
            token.attrs["id"] = f"q{n}"
        if token.children:
            # A heading "[n] ..." is the target of the citations: its own number stays text.
            token.children = page.inline(token.children, cite=at == 0 or tokens[at - 1].type != "heading_open")
    body = md.renderer.render(tokens, md.options, {})
    template = string.Template((HERE / "report.html").read_text(encoding="utf-8"))
    return template.substitute(title=html.escape(title), body=body)


def _numbered(heading: str) -> int | None:
    found = re.match(r"\[(\d+)\]", heading)
    return int(found[1]) if found else None


def _figure_anchors(tokens: list[Any], figures: dict[str, Path]) -> dict[str, str]:
    """Return an anchor id for each figure the page embeds, numbered in the order they first appear.

    Two figures with the same bytes (two runs drew the same chart) share one anchor: one image.
    """
    anchors: dict[str, str] = {}
    by_content: dict[bytes, str] = {}
    for token in tokens:
        for child in token.children or []:
            src = normal_src(str(child.attrs.get("src", ""))) if child.type == "image" else ""
            if src in figures and src not in anchors:
                content = hashlib.sha256(figures[src].read_bytes()).digest()
                anchors[src] = by_content.setdefault(content, f"fig-{len(by_content) + 1}")
    return anchors


def _text(content: str) -> Any:
    from markdown_it.token import Token

    token = Token("text", "", 0)
    token.content = content
    return token


def _link(href: str, *inner: Any) -> list[Any]:
    from markdown_it.token import Token

    opening = Token("link_open", "a", 1)
    opening.attrs["href"] = href
    return [opening, *inner, Token("link_close", "a", -1)]


class _Page:
    """What rendering one page keeps across its inline runs: figures embedded so far, known citations."""

    def __init__(self, figures: dict[str, Path], known: set[int], anchors: dict[str, str]) -> None:
        self.figures = figures
        self.known = known
        self.anchors = anchors  # figure src -> id of the one <img> that embeds it
        self.placed: set[str] = set()  # anchors embedded so far

    def inline(self, children: list[Any], cite: bool = True) -> list[Any]:
        """Embed figures once (others become a note), link citations number by number, outside links."""
        out: list[Any] = []
        in_link = 0
        for child in children:
            in_link += {"link_open": 1, "link_close": -1}.get(child.type, 0)
            if child.type == "image":
                out += self._image(child, in_link > 0)
            elif child.type == "link_open":
                href = normal_src(str(child.attrs.get("href", "")))
                if href in self.anchors:  # a link to a figure's file goes to the figure on the page
                    child.attrs["href"] = "#" + self.anchors[href]
                out.append(child)
            elif child.type == "text" and not in_link and cite and self.known:
                out += self._citations(child)
            else:
                out.append(child)
        return out

    def _image(self, child: Any, in_link: bool) -> list[Any]:
        src = normal_src(str(child.attrs.get("src", "")))
        if src not in self.figures:
            return [_text(f"[figure left out: {src}]")]
        anchor = self.anchors[src]
        if anchor in self.placed:  # embedded once already: point at it (a chart is tens of KB)
            label = _text(f"{child.content or src} (figure shown above)")
            return [label] if in_link else _link("#" + anchor, label)
        self.placed.add(anchor)
        child.attrs["src"] = data_uri(self.figures[src])
        child.attrs["id"] = anchor
        return [child]

    def _citations(self, child: Any) -> list[Any]:
        """Split a text run at its citations; each known number in one becomes a link to its entry."""
        out: list[Any] = []
        last = 0
        for m in CITATION.finditer(child.content):
            body = m["body"]
            if not any(int(n) in self.known for n in NUMBER.findall(body)):
                continue
            out.append(_text(child.content[last:m.start()] + "["))
            pos = 0
            for number in NUMBER.finditer(body):
                n = int(number.group(0))
                if n not in self.known:
                    continue
                out.append(_text(body[pos:number.start()]))
                out += _link(f"#q{n}", _text(number.group(0)))
                pos = number.end()
            out.append(_text(body[pos:] + "]"))
            last = m.end()
        if not last:
            return [child]
        out.append(_text(child.content[last:]))
        return [t for t in out if t.type != "text" or t.content]

