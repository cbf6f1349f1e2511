"""Load lines in the user's terms: the `data/` paths of a stored description turned into the file's real path.

A description is written for the coder's scripts, which see the lake at `data/` inside the sandbox
(`pd.read_csv('data/sales.csv')`), and the prompts keep that form byte for byte. A person reads the same text in
`dslake show`, `lake.show()`, the web page and MCP, and runs its lines in their own Python, where `data/` is
nothing: there every `data/` path becomes the file's path as that person names it (relative to the current folder
when the lake lies under it, absolute otherwise, the bucket's URL for a lake in object storage). Quoted paths are
rewritten inside their literal (the root escaped for its quotes, the rest untouched), so a line stays the same
Python with another root; paths in prose (`File: data/x.csv`) get the same root.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dslake_index.cards import HINT_PREFIX

# a quoted literal whose value starts with data/ (not part of a longer name: 'metadata/' or 'x/data/' stay)
_LITERAL = re.compile(r"""(?<![\w.])(['"])""" + re.escape(HINT_PREFIX) + r"""(?:\\.|(?!\1)[^\\\n])*\1""")
# data/ opening a path in prose (`File: data/x.csv`, `the files under data/t`), after a space, a bracket or a `
_BARE = re.compile(r"(?<![\w./\\'\"-])" + re.escape(HINT_PREFIX))


def lake_root_text(root: Path | None, remote: str | None, absolute: bool = False) -> str:
    """Return the lake's root as the user names it: '' for the current folder itself, a path relative to it when
    the lake lies under it, else absolute (always absolute when asked: a page read in another folder); a bucket
    lake's URL. '' when neither is known (the paths stay lake-relative)."""
    if root is None:
        return (remote or "").rstrip("/")
    real = Path(root).resolve()
    if absolute:
        return str(real)
    here = Path.cwd().resolve()
    if real == here:
        return ""
    if real.is_relative_to(here):
        return real.relative_to(here).as_posix()
    return str(real)


def user_path(rel: str, root_text: str) -> str:
    """Return a lake-relative path as the user names it (lake_root_text's root joined to it)."""
    rel = rel.lstrip("/")
    if not root_text:
        return rel or "."
    return f"{root_text}/{rel}" if rel else root_text


def in_user_terms(text: str, root_text: str) -> str:
    """Return text with every `data/` path (a quoted literal or a path in prose) under the user's root instead."""
    if not text or HINT_PREFIX not in text:
        return text
    quoted = _LITERAL.sub(lambda m: _literal(m.group(0), root_text), text)
    return _BARE.sub(lambda _: f"{root_text}/" if root_text else "", quoted)


def _literal(quoted: str, root_text: str) -> str:
    """Put the root in place of a literal's `data/`, escaped for its quotes, and leave the rest byte for byte: every
    quote of the text stays where it was, so a literal the regex found inside prose (a name holding `'data/`)
    cannot change where the real literals of the line begin and end."""
    try:
        value = ast.literal_eval(quoted)  # a string literal only: the regex matched one quoted string
    except (ValueError, SyntaxError):
        return quoted
    if not isinstance(value, str) or not value.startswith(HINT_PREFIX):
        return quoted
    quote, rest = quoted[0], quoted[1 + len(HINT_PREFIX):]
    root = f"{root_text}/" if root_text else ""
    inner = repr(root)[1:-1]
    if repr(root)[0] != quote:  # repr chose the other quote: the root holds ours, unescaped
        inner = inner.replace(quote, "\\" + quote)
    return quote + inner + rest
