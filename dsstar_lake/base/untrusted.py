"""Untrusted text (file names, file contents, model and script output): escaped for terminals, framed for prompts.

A lake file can be named `x\\n# Question` or `\\x1b]52;c;…\\x07.csv`, and its text can say `# Guidelines`. These
functions make such text inert where dslake shows it: on a terminal every control and format character is shown
as an escape; in a prompt names are JSON string literals on one line and contents sit in a frame they cannot close.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Collection
from itertools import count

# Everything outside printable ASCII is looked at (plain text stays on the fast path); of that, these categories
# are escaped: controls (C0, DEL, C1: cursor moves, OSC clipboard writes), format characters (bidi overrides and
# isolates, zero-width characters, BOM, tag characters), lone surrogates (undecodable bytes of a name) and the
# Unicode line and paragraph separators.
_CANDIDATE = re.compile(r"[^\x20-\x7e]")
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_HEADING = re.compile(r"^([ \t]*)#", re.M)  # a line that would read as a Markdown heading (# Question, ## ...)
_HEADING_LINE = re.compile(r"^([ \t]*)(#+)([^\n]*)$", re.M)


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _UNSAFE


def _escape(ch: str) -> str:
    n = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def visible(text: object, multiline: bool = False) -> str:
    """Return text with every control and format character written as an escape (\\x1b, \\u202e): safe to print.

    With `multiline`, real newlines and tabs stay (a description printed as a block); without it a newline is
    shown as \\n, so that a name is always one line.
    """
    keep = "\n\t" if multiline else ""
    value = str(text)
    if multiline:
        value = value.replace("\r\n", "\n")  # a CRLF file's lines, not a cursor move

    def sub(match: re.Match[str]) -> str:
        ch = match.group()
        return ch if ch in keep or not _unsafe(ch) else _escape(ch)

    return _CANDIDATE.sub(sub, value)


def for_prompt(text: object) -> str:
    """Return text as a prompt may hold it: control and format characters escaped, newlines and tabs kept."""
    return visible(text, multiline=True)


def quote(name: object) -> str:
    """Return a name as a JSON string literal on one line, every control and format character escaped."""

    def sub(match: re.Match[str]) -> str:
        ch = match.group()
        if not _unsafe(ch):
            return ch
        data = ch.encode("utf-16-le", "surrogatepass")  # JSON writes astral characters as surrogate pairs
        return "".join(f"\\u{int.from_bytes(data[i:i + 2], 'little'):04x}" for i in range(0, len(data), 2))

    return _CANDIDATE.sub(sub, json.dumps(str(name), ensure_ascii=False))


def frame(text: object, kind: str, headings: Collection[str] | None = None, **attributes: object) -> str:
    """Return text between `<kind … tag=T>` and `</kind tag=T>` lines that it cannot close or pose as a section in.

    T comes from a hash of the content, so the same text frames the same way (prompts stay cacheable) and no text
    can hold its own tag; if one ever does, the tag changes. Lines that start with '#' get a backslash, so data
    cannot look like the template's own `# Question` or `# Guidelines` headings. With `headings` (the titles the
    prompt templates use, as heading_title gives them) only lines that read as one of those get it: every other line
    is shown as printed (a script's `# rows: 12` stays what the script printed).
    """
    if headings is None:
        body = _HEADING.sub(r"\1\\#", for_prompt(text))
    else:
        titles = frozenset(headings)

        def defuse(match: re.Match[str]) -> str:
            lead, hashes, rest = match.groups()
            return f"{lead}\\{hashes}{rest}" if heading_title(rest) in titles else match.group()

        body = _HEADING_LINE.sub(defuse, for_prompt(text))
    for salt in count():
        tag = hashlib.sha256(f"{salt}:{kind}:{body}".encode()).hexdigest()[:12]
        if tag not in body:
            break
    shown = "".join(f" {key}={quote(value)}" for key, value in attributes.items())
    return f"<{kind}{shown} tag={tag}>\n{body}\n</{kind} tag={tag}>"


def heading_title(text: str) -> str:
    """Return what a heading says, compared loosely: '# Given data: {x}' and '## given  DATA:' both give 'given data'.

    The words before any ':', '(' or '{', lower case, single-spaced, without trailing punctuation.
    """
    words = re.split(r"[:({]", text.lstrip("#"), maxsplit=1)[0]
    return " ".join(words.lower().split()).rstrip(".?!")


def fence(code: str, language: str = "python") -> str:
    """Put code between Markdown fences longer than any run of backticks inside it, so it cannot close them."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{code.rstrip()}\n{ticks}"
