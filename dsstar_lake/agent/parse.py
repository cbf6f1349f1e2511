"""Read the models' answers robustly: code fenced or not, Yes/No in prose, Step 3 / step three / 3."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

FENCE = re.compile(r"(?P<fence>```|~~~)[ \t]*(?P<lang>[\w+.-]*)[^\n]*\n(?P<body>.*?)(?:\n[ \t]*(?P=fence)|\Z)", re.S)
CODE_LANGS = ("", "python", "py", "python3", "ipython")
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
}
NUMBER = r"(\d+|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
MARKUP = re.compile(r"[*_`#>\"']")


def extract_code(text: str) -> str | None:
    """Return the Python code in an answer: the longest Python fenced block, else the whole answer if it is code."""
    blocks = [m["body"] for m in FENCE.finditer(text or "") if m["lang"].lower() in CODE_LANGS]
    blocks = [b.strip("\n") for b in blocks if b.strip()]
    if blocks:
        return max(blocks, key=len) + "\n"
    stripped = (text or "").strip()
    return stripped + "\n" if _looks_like_code(stripped) else None


def _looks_like_code(text: str) -> bool:
    """Tell code from prose: it parses, and does more than name a value ('Yes' parses too)."""
    if not text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Name | ast.Constant))
               for node in tree.body)


def _plain(text: str) -> str:
    return MARKUP.sub(" ", text or "").strip().lower()


def parse_verdict(text: str) -> bool | None:
    """Return True for Yes (sufficient), False for No, None when the answer says neither clearly."""
    plain = _plain(text)
    label = r"^\W*(?:(?:final\s+)?(?:answer|verdict|response|decision)\s*[:\-]\s*)?"
    last_line = plain.splitlines()[-1] if plain else ""
    last_sentence = re.split(r"(?<=[.!?])\s+", last_line)[-1]
    for line in (plain, last_line, last_sentence):
        found = re.match(label + r"(yes|no)\b", line.strip())
        if found:
            return found[1] == "yes"
    if re.search(r"\b(insufficient|not sufficient|not enough)\b", plain):
        return False
    words = set(re.findall(r"\b(yes|no)\b", plain))
    if len(words) == 1:
        return words.pop() == "yes"
    if re.search(r"\b(sufficient|enough)\b", plain):
        return True
    return None


@dataclass(frozen=True)
class Route:
    """The router's decision: add a step, go back to step `step`, or look for the `missing` data."""

    kind: str  # add | step | missing
    step: int | None = None
    missing: str | None = None
    reason: str = field(default="", repr=False)  # what the router said of a wrong step, shortened (in to_dict)

    def to_dict(self) -> dict[str, object]:
        """Return JSON-ready data."""
        return {"kind": self.kind, "step": self.step, "missing": self.missing, "reason": self.reason}


def reason_of(text: str, limit: int = 300) -> str:
    """Return a role's words besides a bare answer ('No', 'Step 2'), on one line and at most `limit` characters;
    "" when there are none beyond a few words."""
    words = " ".join((text or "").split())
    if len(words.split()) <= 3:
        return ""
    return words if len(words) <= limit else words[: limit - 1].rsplit(" ", 1)[0] + "…"


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def parse_route(text: str, n_steps: int) -> Route | None:
    """Return the route an answer names (the earliest one in the text); None when none is valid."""
    raw = (text or "").strip()
    plain = MARKUP.sub(" ", raw).lower()
    found: list[tuple[int, Route | None]] = []
    missing = re.search(r"missing\s+data\s*[:\-–—]\s*(?P<what>.+)", MARKUP.sub(" ", raw), re.I | re.S)
    if missing:
        what = " ".join(missing["what"].split())
        found.append((missing.start(), Route("missing", missing=what) if what else None))
    add = re.search(r"\badd(?:\s+a)?(?:\s+new)?(?:\s+next)?\s+step\b", plain)
    if add:
        found.append((add.start(), Route("add")))
    step = re.search(r"\bstep\s*(?:no\.?\s*|number\s*|#\s*)?" + NUMBER + r"\b", plain)
    if step:
        found.append((step.start(), _step_route(_number(step[1]), n_steps)))
    bare = re.fullmatch(r"\W*" + NUMBER + r"\W*", plain)
    if bare:
        found.append((bare.start(), _step_route(_number(bare[1]), n_steps)))
    if not found:
        return None
    return min(found, key=lambda item: item[0])[1]


def _step_route(number: int, n_steps: int) -> Route | None:
    return Route("step", step=number) if 1 <= number <= n_steps else None


def clean_step(text: str) -> str | None:
    """Return a planner's step without labels, numbering or fences; None when nothing is left."""
    lines = [ln for ln in (text or "").strip().splitlines() if not re.match(r"\s*(```|~~~)", ln)]
    step = "\n".join(lines).strip()
    label = r"^\s*(?:\*\*|__)?\s*(?:(?:next|first|initial|new)\s+)?(?:step|plan)(?:\s*" + NUMBER + r")?\s*[:.)\-–]\s*"
    step = re.sub(label, "", step, flags=re.I)
    step = re.sub(r"^\s*(?:\*\*|__)\s*", "", step)
    step = re.sub(r"^\s*\d+[.)]\s+", "", step).strip()
    step = re.sub(r"^(?:\*\*|__)\s*|\s*(?:\*\*|__)$", "", step).strip()
    return step or None
