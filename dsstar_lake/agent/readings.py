"""Readings: the choices of reading a question that change its answer, and what the other readings give.

A question like "what share of all reports came from states?" can be read several ways (which denominator,
whether territories count as states); the answer is only as good as its reading. Planner, verifier and
finalyzer name theirs in lines after their usual answer, and scripts print the values of other readings:

    Assumption: <the reading the answer takes, one short sentence>
    Alternative: <another reading> = <its value> (<how it was computed>)
    Stated: <where the data states the figure> = <the stated value>

A line that does not read as one of these is left alone, never an error; lines inside code fences are code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_ITEMS = 6  # of each kind in a record: more is noise, not a reading
MAX_CHARS = 600  # of one sentence, reading, value or how: a reading often names its alternative in the same line
FIELD = re.compile(r"^[\s>*_`#-]*(?:\d+[.)]\s*)?[*_`]*(?P<kind>assumptions?|alternatives?|stated)[*_`]*"
                   r"\s*(?:[:\-–—][*_`]*\s*|$)(?P<rest>.*)$", re.I)
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
OPENING = re.compile(r"^\s*(```|~~~)")
ARROWS = (r"\s+(?:=|→|->)\s+", r"\s*(?:=|→|->)\s*")  # spaced first: a reading may hold a bare '='
STATED_HOW = "stated in the data, not computed"


@dataclass(frozen=True)
class Alternative:
    """Another reading of the question and the value it gives."""

    reading: str
    value: str
    how: str = ""

    def to_dict(self) -> dict[str, str]:
        """Return JSON-ready data."""
        return {"reading": self.reading, "value": self.value, "how": self.how}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Alternative:
        """Rebuild from to_dict()."""
        return cls(str(data.get("reading", "")), str(data.get("value", "")), str(data.get("how") or ""))


@dataclass
class Readings:
    """The assumptions an answer rests on and the alternatives' values, as one role (or script) gave them."""

    assumptions: list[str] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.assumptions or self.alternatives)


def split_readings(text: str, how: str = "") -> tuple[Readings, str]:
    """Return the readings named in a text and the text without their lines (code fences kept whole).

    `how` fills in an alternative that does not say how it was computed (a script's line, say).
    """
    found = Readings()
    kept: list[str] = []
    fence: str | None = None
    header: str | None = None  # "Assumptions:" alone on a line: the bullet lines below are its items
    for line in (text or "").splitlines():
        stripped = line.strip()
        if fence is not None:
            kept.append(line)
            if stripped.startswith(fence) and not stripped.strip("`~").strip():
                fence = None
            continue
        opening = OPENING.match(line)
        if opening:
            fence, header = opening[1], None
            kept.append(line)
            continue
        named = FIELD.match(stripped)
        if named:
            kind, rest = named["kind"].lower(), named["rest"].strip()
            kind = "stated" if kind == "stated" else kind.rstrip("s")
            if rest:
                _add(found, kind, rest, how)
                header = None
            else:
                header = kind
            continue
        if header is not None and BULLET.match(stripped):
            _add(found, header, BULLET.sub("", stripped, count=1), how)
            continue
        if stripped:
            header = None
        kept.append(line)
    return found, "\n".join(kept).strip("\n")


def parse_readings(text: str, how: str = "") -> Readings:
    """Return the readings named in a text (none: an empty Readings)."""
    return split_readings(text, how)[0]


def _add(found: Readings, kind: str, text: str, how: str) -> None:
    text = _clean(text)
    if not text:
        return
    if kind == "assumption":
        found.assumptions.append(text)
        return
    parts = _alternative(text)
    if parts is None:
        return
    reading, value, said = parts
    if kind == "stated":
        reading, said = f"the figure stated in {reading}", f"{STATED_HOW}: {said}" if said else STATED_HOW
    found.alternatives.append(Alternative(reading, value, said or how))


def _clean(text: str) -> str:
    text = re.sub(r"\*\*|__", "", " ".join(str(text).split())).strip()
    if len(text) <= MAX_CHARS:
        return text
    cut = text[: MAX_CHARS - 6].rsplit(" ", 1)[0]  # whole words, and a mark that says it was cut
    return cut + " […]"


def _alternative(text: str) -> tuple[str, str, str] | None:
    """Read '<reading> = <value> (<how>)' as (reading, value, how); None without a reading or a value."""
    # The value follows the last arrow before the '(how)': a reading may itself hold '=' ("EJ share = column X,
    # absent towns as 0% = 9.76"), a value hardly ever does.
    body, said = _trailing_parens(text)
    for arrow in ARROWS:
        found = list(re.finditer(arrow, body))
        if found:
            reading, value = body[: found[-1].start()], body[found[-1].end():]
            break
    else:
        return None
    reading, value = (p.strip().strip("`").strip() for p in (reading, value))
    if not reading or not value:
        return None
    return reading, value, said


def _trailing_parens(text: str) -> tuple[str, str]:
    """Split 'value (how it was computed)' at its last balanced parenthesis; ('value', '') when there is none."""
    body = text.rstrip().rstrip(".").rstrip()
    if not body.endswith(")"):
        return text, ""
    depth = 0
    for i in range(len(body) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(body[i], 0)
        if depth == 0:
            value, how = body[:i].strip(), body[i + 1:-1].strip()
            # An acronym after a name is part of the name ("Damon Pond Beach (DCR)"), not how it was found; a
            # lower-case word is a how ("Queens (min)").
            if " " not in how and how.isupper() and _number(value.rsplit("=", 1)[-1]) is None:
                return text, ""
            return (value, how) if value and how else (text, "")
    return text, ""


def plan_assumptions(plan: list[str]) -> list[str]:
    """Return the Assumption lines the planner wrote into the plan's steps, in order."""
    return parse_readings("\n".join(plan)).assumptions


def settle(answer: str, sources: list[Readings], plan: list[str], printed: Readings | None = None) -> Readings:
    """Return the readings an answer rests on: the latest role's that named any, and what the script printed.

    sources go from the latest role to the earliest (finalyzer, then the last verifier); the plan's own
    assumptions are the last resort. Alternatives the script printed are added. An alternative whose value
    is the answer's, or repeats a reading or a value already kept, is dropped.
    """
    assumptions = next((s.assumptions for s in sources if s.assumptions), None) or plan_assumptions(plan)
    named = next((s.alternatives for s in sources if s.alternatives), [])
    kept: list[Alternative] = []
    values = [answer] if answer.strip() else []
    readings: set[str] = set()
    for alternative in [*named, *(printed.alternatives if printed else [])]:
        if (_key(alternative.reading) in readings or any(_same(alternative.value, v) for v in values)
                or _restates(answer, alternative.value)):
            continue
        readings.add(_key(alternative.reading))
        values.append(alternative.value)
        kept.append(alternative)
    return Readings(distinct(assumptions)[:MAX_ITEMS], kept[:MAX_ITEMS])


def distinct(assumptions: list[str]) -> list[str]:
    """Return assumptions without repeats: one that says what another already says (its words, in order, inside
    the other's) gives way to the fuller one, where the first of them stood.

    The planner and verifier restate each other ("Acres = the acres column" and "Acres = the acres column, summed
    over every state"): the finalyzer was shown both, and the record kept both.
    """
    kept: list[str] = []
    keys: list[str] = []
    for text in assumptions:
        key = " ".join(w.strip(".-") for w in _key(text).split())  # a sentence's full stop is not a word's
        if not key:
            continue
        inside = next((i for i, k in enumerate(keys) if f" {key} " in f" {k} "), None)
        if inside is not None:
            continue
        holds = [i for i, k in enumerate(keys) if f" {k} " in f" {key} "]
        if holds:
            kept[holds[0]], keys[holds[0]] = text, key
            for i in reversed(holds[1:]):
                del kept[i], keys[i]
            continue
        kept.append(text)
        keys.append(key)
    return kept


def _restates(answer: str, value: str) -> bool:
    """Tell whether an alternative's value is a text answer with more around it: "('Ashby', 'Damon Pond Beach
    (DCR)') 0.5833" gives the answer "Damon Pond Beach (DCR)" again, keyed differently, and reads as a rival.

    Numbers are left to _same: 10.2 inside "10.24" is another value.
    """
    if not answer.strip() or _number(answer) is not None:
        return False
    return f" {_key(answer)} " in f" {_key(value)} "


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w.%-]+", " ", text.casefold()).split())


def _same(a: str, b: str) -> bool:
    """Tell whether two values are one: equal text, or numbers equal at the precision of the rounder one."""
    if _key(a) == _key(b):
        return True
    x, y = _number(a), _number(b)
    if x is None or y is None:
        return False
    decimals = min(_decimals(a), _decimals(b))
    # 12.3 is 12.34 printed with less precision; 5 is not 5.4 (an integer is a count more often than a rounding).
    return x == y or (decimals > 0 and round(x, decimals) == round(y, decimals))


def _number(text: str) -> float | None:
    try:
        return float(re.sub(r"[,$%\s]", "", text))
    except ValueError:
        return None


def _decimals(text: str) -> int:
    found = re.search(r"\.(\d+)", text)
    return len(found[1]) if found else 0


def as_text(readings: Readings) -> str:
    """Return readings in the lines they were read from (for a prompt); '' when there are none."""
    lines = [f"Assumption: {a}" for a in readings.assumptions]
    lines += [f"Alternative: {a.reading} = {a.value}" + (f" ({a.how})" if a.how else "")
              for a in readings.alternatives]
    return "\n".join(lines)


def to_record(readings: Readings) -> tuple[list[str], list[dict[str, str]]]:
    """Return (assumptions, alternatives) as the state and answer.json keep them."""
    return list(readings.assumptions), [a.to_dict() for a in readings.alternatives]


def from_record(assumptions: list[str], alternatives: list[dict[str, Any]]) -> Readings:
    """Rebuild readings kept in the state."""
    return Readings(list(assumptions or []), [Alternative.from_dict(a) for a in alternatives or []
                                              if isinstance(a, dict)])
