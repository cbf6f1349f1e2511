"""The report as one self-contained HTML file: Markdown rendered with raw HTML off, figures as data URIs."""

from __future__ import annotations

import base64
import html
import string
from pathlib import Path

from dsstar_lake.report.citations import normal_src
from dsstar_lake.report.prompts import HERE

MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
        ".svg": "image/svg+xml"}


def data_uri(path: Path) -> str:
    """Return a file as a base64 data URI."""
    mime = MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def render_html(markdown: str, title: str, figures: dict[str, Path]) -> str:
    """Render the report's Markdown as one HTML page; only the given figures appear, embedded as data URIs.

    Raw HTML in the Markdown is shown as text (markdown-it's html=False), link targets are checked by
    markdown-it (no javascript:), and an image that is not one of `figures` becomes a short note, so
    the page loads nothing from anywhere.
    """
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(markdown)
    uris = {key: data_uri(path) for key, path in figures.items()}
    for token in tokens:
        for i, child in enumerate(token.children or []):
            if child.type != "image":
                continue
            src = normal_src(str(child.attrs.get("src", "")))
            if src in uris:
                child.attrs["src"] = uris[src]
            else:
                note = Token("text", "", 0)
                note.content = f"[figure left out: {src}]"
                token.children[i] = note
    body = md.renderer.render(tokens, md.options, {})
    page = string.Template((HERE / "report.html").read_text(encoding="utf-8"))
    return page.substitute(title=html.escape(title), body=body)
