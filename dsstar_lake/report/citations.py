"""Check a report body: every [n] names an answered sub-question, every image is a produced figure."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from dsstar_lake.report.questions import SubQuestion

# [3], [2, 5], [2-4], [1; 3] that is not a link's text ([3](url)) or a reference ([3]: url).
CITATION = re.compile(r"\[(?P<body>\d+(?:\s*(?:[,;]|[-–])\s*\d+)*)\](?!\(|\[|:\s*(?:https?://|/|\./))")
IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\(\s*<?(?P<src>[^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCED = re.compile(r"^(?P<fence>`{3,}|~{3,}).*?^(?P=fence)[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


@dataclass
class Check:
    """What the check found: citations to no answered sub-question, images that no sub-question produced."""

    bad_citations: list[int] = field(default_factory=list)
    bad_figures: list[str] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    embedded: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Tell whether nothing is wrong."""
        return not self.bad_citations and not self.bad_figures

    def problems(self, questions: list[SubQuestion]) -> list[str]:
        """Return one sentence per problem (for the writer's fix prompt and for the report's note)."""
        known = {q.n: q for q in questions}
        lines = []
        for n in self.bad_citations:
            q = known.get(n)
            why = "there is no such sub-question" if q is None else "that sub-question has no answer"
            lines.append(f"[{n}] is cited, but {why}.")
        lines += [f"the image {src} is embedded, but no sub-question produced it."
                  for src in self.bad_figures]
        return lines


def _without_code(text: str) -> str:
    """Blank out code (fenced blocks, inline spans): there [n] and ![..](..) are not citations or images."""
    text = FENCED.sub(lambda m: " " * len(m.group(0)), text)
    return INLINE_CODE.sub(lambda m: " " * len(m.group(0)), text)


def numbers(body: str) -> list[int]:
    """Return the numbers one citation names: [2, 5] -> 2, 5; [2-4] -> 2, 3, 4 (ranges capped at 50)."""
    out: list[int] = []
    for part in re.split(r"\s*[,;]\s*", body):
        bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part) if x]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= 50:
            out.extend(range(bounds[0], bounds[1] + 1))
        else:
            out.extend(bounds)
    return out


def normal_src(src: str) -> str:
    """Return an image path as the report names figures (figures/q1-x.png), without a leading './'."""
    return src.strip().removeprefix("./")


def check(text: str, questions: list[SubQuestion]) -> Check:
    """Check every citation and every embedded image of a report body."""
    answered = {q.n for q in questions if q.answered}
    figures = {f for q in questions for f in q.figures}
    plain = _without_code(text)
    result = Check()
    for m in CITATION.finditer(plain):
        for n in numbers(m["body"]):
            result.cited.append(n)
            if n not in answered and n not in result.bad_citations:
                result.bad_citations.append(n)
    for m in IMAGE.finditer(plain):
        src = normal_src(m["src"])
        result.embedded.append(src)
        if src not in figures and src not in result.bad_figures:
            result.bad_figures.append(src)
    return result


def flag(text: str, found: Check) -> str:
    """Mark what a check found in the text itself: [7] becomes [7?], a bad image becomes a note."""
    bad = set(found.bad_citations)

    def citation(m: re.Match[str]) -> str:
        parts = re.split(r"(\s*[,;]\s*)", m["body"])
        marked = [p + "?" if re.fullmatch(r"[\d\s–-]+", p) and bad & set(numbers(p)) else p for p in parts]
        return "[" + "".join(marked) + "]"

    def image(m: re.Match[str]) -> str:
        src = normal_src(m["src"])
        if src not in found.bad_figures:
            return m.group(0)
        return f"*(figure left out: {_inline(src)} was not produced by any sub-question)*"

    return _outside_code(text, lambda chunk: IMAGE.sub(image, CITATION.sub(citation, chunk)))


def _inline(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """Apply a change to the text outside fenced code blocks."""
    out, last = [], 0
    for m in FENCED.finditer(text):
        out.append(change(text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(change(text[last:]))
    return "".join(out)
