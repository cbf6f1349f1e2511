"""Readings: the choices of reading a question that change its answer, and what the other readings give.

A question like "what share of all reports came from states?" can be read several ways (which denominator,
whether territories count as states); the answer is only as good as its reading. Planner, verifier and
finalyzer name theirs in lines after their usual answer, and scripts print the values of other readings:

    Assumption: <the reading the answer takes, one short sentence>
    Alternative: <another reading> = <its value> (<how it was computed>)
    Stated: <where the data states the figure> = <the stated value>
    Rejected: <a reading noted so far> (<why the result shows it is wrong>)    (the verifier's)

A line that does not read as one of these is left alone, never an error; lines inside code fences are code.
A `Stated:` figure is evidence of its own kind, never a candidate answer. An alternative is kept only when it
answers the question in the answer's form and differs from it (settle): junk values (NaN), repeats, half of a
pair and an answer restated are noise the finalyzer and the chooser should not weigh. Values printed as numpy's
repr (`np.float64(1.5)`) read as the number; numbers compare in any notation, equal at the rounder one's precision.
The run keeps what the roles named as one record (reading_record.py); this module reads and filters the lines.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_ITEMS = 6  # of each kind in a record: more is noise, not a reading
MAX_CHARS = 600  # of an assumption or a how (a reading often names its alternative in the same line); labels are whole
REL_TOL = 1e-9  # two numbers this close are one value printed twice (float noise), in any notation
FIELD = re.compile(r"^[\s>*_`#-]*(?:\d+[.)]\s*)?[*_`]*(?P<kind>assumptions?|alternatives?|stated|rejected)[*_`]*"
                   r"\s*(?:[:\-–—][*_`]*\s*|$)(?P<rest>.*)$", re.I)
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
OPENING = re.compile(r"^\s*(```|~~~)")
# Spaced first (a reading may hold a bare '='), and '=' before an arrow: "2019 -> 2020 change = 5" is a change.
ARROWS = (r"\s+=\s+", r"\s+(?:→|->)\s+", r"\s*=\s*", r"\s*(?:→|->)\s*")
STATED_HOW = "stated in the data, not computed"
GIVES_THE_ANSWER = "gives the answer's value"  # an alternative that merges into the answer's reading
# Values that are no answer at all: a failed computation printed, not a reading.
JUNK = {"nan", "none", "null", "n/a", "na", "inf", "-inf", "infinity", "undefined", "unknown", "nat", "?", "-", "",
        "[]", "{}", "()"}
# A word of two letters or more: what a list of names has and a list of numbers (1e-3, 2.5) has not.
WORD = re.compile(r"[^\W\d_]{2,}")
LABELLED = re.compile(r"^(?P<label>.*[^\W\d_].*?)\s*[:=]?\s+(?P<number>[-+]?[$]?\d[\d,]*(?:\.\d+)?%?)$")


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
    # Figures the data itself states (`Stated:` lines): evidence for choosing a reading, never a candidate.
    # reading = where the data states it, value = the figure as stated.
    stated: list[Alternative] = field(default_factory=list)
    # Readings a role (the verifier) says the result shows wrong (`Rejected:` lines): reading, value (may be
    # empty), how = why.
    rejected: list[Alternative] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.assumptions or self.alternatives or self.stated or self.rejected)


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
            kind = kind if kind in ("stated", "rejected") else kind.rstrip("s")
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
        found.assumptions.append(_cut(text))
        return
    if kind == "rejected":
        body, why = _trailing_parens(text)
        parts = _alternative(body)
        reading, value = (parts[0], parts[1]) if parts else (body.strip().rstrip("."), "")
        found.rejected.append(Alternative(reading, value, _cut(why)))
        return
    parts = _alternative(text)
    if parts is None:
        return
    reading, value, said = parts
    said = _cut(said)
    if kind == "stated":
        found.stated.append(Alternative(reading, value, f"{STATED_HOW}: {said}" if said else STATED_HOW))
        return
    found.alternatives.append(Alternative(reading, value, said or how))


# Markdown bold around words ('**Assumption:** ...'), never inside an expression: '2**x' stays a power, and
# underscores are left alone ('__init__', 'col__a' are names more often than bold).
_MARKDOWN_BOLD = re.compile(r"(?:(?<=^)|(?<=\s))\*\*(?=\S)|(?<=\S)\*\*(?=$|[\s.,;:!?)])")


# numpy's repr of a scalar, as a script prints one inside a list or a tuple: np.float64(1.5), numpy.int64(3),
# np.str_('a'). What it holds is the value.
_NUMPY = re.compile(r"\b(?:np|numpy)\.(?:float|int|uint|bool|str|complex)_?\d*_?\((?P<inner>[^()]*)\)")


def plain_values(text: str) -> str:
    """Return a text with numpy's scalar reprs replaced by their values ('np.float64(1.5)' -> '1.5')."""
    return _NUMPY.sub(lambda m: m["inner"].strip(), text)


def _clean(text: str) -> str:
    return plain_values(_MARKDOWN_BOLD.sub("", " ".join(str(text).split())).strip())


def _cut(text: str) -> str:
    """Cut a runaway sentence (one repeated) between words, with a mark that says so; a reading's label and value
    are never cut (what is cut of them reads as another reading)."""
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 6].rsplit(" ", 1)[0] + " […]"


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
            if re.search(r"(?:=|→|->)$", value):  # "pair = (11.2, 1964)": the parentheses are the value
                return text, ""
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
    assumptions are the last resort. Alternatives the script printed are added. Kept are only alternatives that
    answer in the answer's form and differ from it and from each other (the rest is noise: module docstring);
    stated figures are gathered from every source as evidence.
    """
    assumptions = next((s.assumptions for s in sources if s.assumptions), None) or plan_assumptions(plan)
    named = next((s.alternatives for s in sources if s.alternatives), [])
    kept: list[Alternative] = []
    values = [answer] if answer.strip() else []
    readings: set[str] = set()
    for alternative in [*named, *(printed.alternatives if printed else [])]:
        alternative = unlabel(answer, alternative)
        if _key(alternative.reading) in readings or dropped(answer, alternative.value, values):
            continue
        readings.add(_key(alternative.reading))
        values.append(alternative.value)
        kept.append(alternative)
    stated: list[Alternative] = []
    for figure in [*(f for s in sources for f in s.stated), *(printed.stated if printed else [])]:
        if not _junk(figure.value) and not any(_same(figure.value, f.value) and _key(figure.reading) == _key(f.reading)
                                               for f in stated):
            stated.append(figure)
    return Readings(distinct(assumptions)[:MAX_ITEMS], kept[:MAX_ITEMS], stated[:MAX_ITEMS])


def dropped(answer: str, value: str, kept: list[str]) -> str:
    """Return why an alternative's value is no reading to weigh beside an answer ('' when it is one).

    kept holds the values already weighed (the answer's first): a value equal to one of them merges with it.
    """
    if _junk(value):
        return "no value (a failed computation printed)"
    if not _fits(answer, value):
        return "not in the answer's form (another quantity)"
    if answer.strip() and (_same(value, answer) or _restates(answer, value)):
        return GIVES_THE_ANSWER
    if any(_same(value, v) for v in kept):
        return "gives the value of another reading"
    return ""


def _junk(value: str) -> bool:
    """Tell a value that is no answer (NaN, None, an empty list) from a reading's value."""
    words = re.findall(r"[^\s,;()\[\]{}'\"]+", value.casefold())
    return not words or all(w.strip("%$.") in JUNK for w in words)


def _shape(value: str) -> int | None:
    """Return how many items a list, tuple or pair value holds (JSON or Python brackets); None for one value."""
    text = value.strip()
    if not (text[:1] in "[(" and text[-1:] in "])"):
        # "1964, 1976" is a pair printed without brackets; "1,204" is one number
        items = text.split(", ")
        return len(items) if len(items) > 1 and all(_number(i) is not None for i in items) else None
    depth, items = 0, 1
    for char in text[1:-1]:
        depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(char, 0)
        items += char == "," and depth == 0
    return items if text[1:-1].strip() else 0


def _fits(answer: str, value: str) -> bool:
    """Tell whether a value answers in the answer's form: a pair for a pair, a number for a number.

    Half of a pair, or a row count beside a list, is another quantity, not another reading of the question. A
    list of names is no pair: another reading may name more or fewer (folding two sites into one beach).
    """
    if not answer.strip():
        return True  # before the final answer there is no form to hold a value to
    shape = _shape(answer)
    if shape is not None and shape > 1:
        if _names(answer):
            return _names(value) and bool(_shape(value))
        return _shape(value) == shape
    if _number(answer) is not None:
        return _shape(value) is None and re.search(r"\d", value) is not None
    return True


def _names(value: str) -> bool:
    """Tell a bracketed list of names from a list of numbers (NaN and None are no names)."""
    return value.strip()[:1] == "[" and any(w.casefold() not in JUNK for w in WORD.findall(value))


def unlabel(answer: str, alternative: Alternative) -> Alternative:
    """Split a value that is a label and a number ("Active Duty Service Member 920") into the part that answers.

    A numeric answer keeps the number (the label joins the reading); a text answer keeps the label (the number
    joins how it was found). A number alone, or text alone, is left as it is.
    """
    found = LABELLED.match(alternative.value.strip())
    if not found or not answer.strip() or _shape(alternative.value) is not None:
        return alternative
    if _number(answer) is None and LABELLED.match(answer.strip()):
        return alternative  # the answer is a label with its number too ("Northwest, 2020"): the value is in its form
    label, number = found["label"].strip(" :=,"), found["number"]
    if _number(answer) is not None:
        return Alternative(f"{alternative.reading} ({label})", number, alternative.how)
    if number.isdigit() and len(number) == 1:  # "FIGO grade 2", "Stage 4": a one-digit number ends a name
        return alternative
    how = f"{alternative.how}; {number}" if alternative.how else number
    return Alternative(alternative.reading, label, how)


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


def same_value(a: str, b: str) -> bool:
    """Tell whether two values are one (equal text, or numbers within the rounder one's precision)."""
    return _same(a, b)


def reading_key(text: str) -> str:
    """Return a text folded for comparing readings: case, punctuation and spacing aside."""
    return _key(text)


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w.%-]+", " ", text.casefold()).split())


def _same(a: str, b: str) -> bool:
    """Tell whether two values are one: equal text, or numbers equal at the precision of the rounder one.

    A number with its unit ("14 units") is the number; a percentage is its fraction (45.2% is 0.452). Numbers
    compare in any notation: 8.1e-13 is 8.097943e-13 printed with less precision, 8.021472e-13 is another value
    (a tolerance in decimal places would call every tiny number equal).
    """
    if _key(a) == _key(b):
        return True
    x, y = _number(a), _number(b)
    if x is None or y is None:
        x, y = _only_number(a), _only_number(b)
    if x is None or y is None:
        return False
    if ("%" in a) != ("%" in b):
        (percent, text), fraction = ((x, a), y) if "%" in a else ((y, b), x)
        return _within(fraction * 100, percent, _step(text) or 1.0)  # a whole percentage is a rounded one
    # 12.3 is 12.34 printed with less precision; 5 is not 5.4 (an integer is a count more often than a rounding).
    steps = [step for step in (_step(a), _step(b)) if step]
    return _within(x, y, max(steps) if steps else 0.0)


def _within(x: float, y: float, step: float) -> bool:
    """Tell whether y is x rounded to a step (half a unit of its last digit either way), or x itself."""
    return math.isclose(x, y, rel_tol=REL_TOL) or abs(x - y) <= step / 2 * (1 + REL_TOL)


NUMBER_TEXT = re.compile(r"[-+]?\d[\d,]*(?:\.(?P<decimals>\d+))?(?:[eE](?P<exponent>[-+]?\d+))?")


def _step(text: str) -> float:
    """Return the unit of a printed number's last digit (0.1 for '12.3', 1e-19 for '8.021472e-13'); 0 for an
    integer or no number (an integer is exact)."""
    found = NUMBER_TEXT.search(text)
    if not found or (not found["decimals"] and not found["exponent"]):
        return 0.0
    return 10.0 ** (int(found["exponent"] or 0) - len(found["decimals"] or ""))


def _number(text: str) -> float | None:
    try:
        value = float(re.sub(r"[,$%\s]", "", text))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _only_number(text: str) -> float | None:
    """Return the one number a short value holds ("14 units"); None with none, or more than one."""
    found = [m[0] for m in NUMBER_TEXT.finditer(text)]
    return _number(found[0]) if len(found) == 1 else None


def as_text(readings: Readings) -> str:
    """Return readings in the lines they were read from (for a prompt); '' when there are none."""
    lines = [f"Assumption: {a}" for a in readings.assumptions]
    lines += [f"Alternative: {a.reading} = {a.value}" + (f" ({a.how})" if a.how else "")
              for a in readings.alternatives]
    lines += [f"Stated: {a.reading} = {a.value}" for a in readings.stated]
    return "\n".join(lines)


def stated_record(readings: Readings) -> list[dict[str, str]]:
    """Return the stated figures as the state and answer.json keep them ({"reading": where, "value", "how"})."""
    return [a.to_dict() for a in readings.stated]


def to_record(readings: Readings) -> tuple[list[str], list[dict[str, str]]]:
    """Return (assumptions, alternatives) as the state and answer.json keep them."""
    return list(readings.assumptions), [a.to_dict() for a in readings.alternatives]


def from_record(assumptions: list[str], alternatives: list[dict[str, Any]],
                stated: list[dict[str, Any]] | None = None) -> Readings:
    """Rebuild readings kept in the state."""
    return Readings(list(assumptions or []), [Alternative.from_dict(a) for a in alternatives or []
                                              if isinstance(a, dict)],
                    [Alternative.from_dict(a) for a in stated or [] if isinstance(a, dict)])
