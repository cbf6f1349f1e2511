"""Documents (mostly prose): an outline by line number and an excerpt that keeps their most structured sections.

A format description such as OMNI2's `omni2.text` is read for its record layout (word, format, fill value,
meaning), which sits in the middle of the file. Its first 900 characters say nothing of it, and a few aligned rows
it happens to contain are not what it is. So a document is described by its outline and by an excerpt made of its
introduction and the sections densest in aligned, numbered lines, each marked with its line numbers.
"""

from __future__ import annotations

import re

EXCERPT_CHARS = 4000  # characters of a document's text the description shows
INTRO_CHARS = 700  # of which the opening may take this much
_RULE = re.compile(r"^\s*([-=_*~#.]\s*){5,}$")  # a line drawn with dashes or equals signs
_GAPS = re.compile(r"\S\s{2,}\S")  # two or more spaces between words: aligned columns
_SPACES = re.compile(r" {3,}")


def _compact(line: str) -> str:
    # aligned columns keep a visible gap of two spaces; wider runs only cost characters
    return _SPACES.sub("  ", line.rstrip())


def _structured(line: str) -> bool:
    """Return True for a line of a layout or table: it starts with a number, or has aligned columns."""
    s = line.strip()
    return bool(s) and (s[0].isdigit() or len(_GAPS.findall(s)) >= 2)


def sections(lines: list[str], heading_lines: set[int]) -> list[tuple[int, int]]:
    """Split a document at its headings and ruled lines into (start, end) line ranges."""
    cuts = sorted({0, len(lines)} | heading_lines | {i for i, ln in enumerate(lines) if _RULE.match(ln)})
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if any(ln.strip() for ln in lines[a:b])]


def excerpt(lines: list[str], heading_lines: set[int], budget: int = EXCERPT_CHARS) -> str:
    """Return the introduction and the most structured sections, in file order, within budget characters."""
    parts = sections(lines, heading_lines)
    if not parts:
        return ""
    texts = {p: [(i, _compact(lines[i])) for i in range(*p) if lines[i].strip() and not _RULE.match(lines[i])]
             for p in parts}
    intro = parts[0]
    chosen = {intro}
    used = min(INTRO_CHARS, sum(len(t) + 1 for _, t in texts[intro]))

    def density(p: tuple[int, int]) -> float:
        body = texts[p]
        return sum(_structured(t) for _, t in body) / max(1, len(body))

    for p in sorted(parts[1:], key=lambda p: (-density(p), p[0])):
        size = sum(len(t) + 1 for _, t in texts[p])
        if density(p) < 0.3 or used >= budget:
            break
        chosen.add(p)
        used += size
    out: list[str] = []
    left = budget
    for p in sorted(chosen):
        body = texts[p]
        if not body:
            continue
        cap = INTRO_CHARS if p == intro else left
        shown, n = [], 0
        for _, t in body:
            if n + len(t) + 1 > cap:
                break
            shown.append(t)
            n += len(t) + 1
        last = body[len(shown) - 1][0] + 1 if shown else p[0] + 1
        out.append(f"[lines {body[0][0] + 1}-{last}]")
        out += shown
        if len(shown) < len(body):
            out.append(f"[… cut: lines {body[len(shown)][0] + 1}-{body[-1][0] + 1} of this section not shown]")
        left -= n
        if left <= 80:
            break
    return "\n".join(out)


def outline(lines: list[str], heading_lines: set[int]) -> list[str]:
    """Return the headings with their line numbers ('line 91: OMNI2_YYYY.DAT FORMAT DESCRIPTION')."""
    return [f"line {i + 1}: {lines[i].strip()[:100]}" for i in sorted(heading_lines)][:30]
