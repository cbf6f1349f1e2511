"""The qualifiers the data attaches to names (a state code, a type suffix), found in what a script printed.

A name answer is judged in the form the data gives it; the finalyzer most often slips by dropping a qualifier
from some names and not others, or by adding one the data never had. It is shown which qualifiers the names it
is about to print carry, with examples, so it can keep them (or, when the question asks, drop them) alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dsstar_lake.base.untrusted import frame

STATE_CODES = frozenset(
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK "
    "OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR GU VI AS MP".split())
# Suffixes that say what kind of place a name is, longest first so "Metropolitan Statistical Area" wins over "Area".
TYPE_SUFFIXES = ("Metropolitan Statistical Area", "Micropolitan Statistical Area", "Combined Statistical Area",
                 "Metropolitan Division", "Metro Area", "Micro Area", "Census Area", "MSA", "CSA", "County",
                 "Parish", "Borough", "Municipality", "Township")
# A place name: capitalised words (hyphens, periods, apostrophes inside), then ", " and one or more state codes.
STATE_QUALIFIED = re.compile(r"\b([A-Z][\w.'’]*(?:[ -][A-Z][\w.'’]*)*), ([A-Z]{2}(?:-[A-Z]{2})*)\b")
SUFFIXED = re.compile(r"\b([A-Z][\w.'’-]*(?:[ ,-]+[A-Z][\w.'’-]*)*?) (" + "|".join(map(re.escape, TYPE_SUFFIXES))
                      + r")\b")
SCANNED_CHARS = 20_000
EXAMPLES = 2


def name_qualifiers(printed: str) -> list[str]:
    """Return one line per kind of qualifier the names in a script's output carry, with examples; [] if none."""
    text = printed[:SCANNED_CHARS]
    lines = []
    coded = _examples(f"{m[1]}, {m[2]}" for m in STATE_QUALIFIED.finditer(text)
                      if all(code in STATE_CODES for code in m[2].split("-")))
    if coded:
        lines.append("a state code after a comma: " + ", ".join(repr(name) for name in coded))
    suffixes = list(dict.fromkeys(m[2] for m in SUFFIXED.finditer(text)))
    if suffixes:
        named = _examples(f"{m[1]} {m[2]}" for m in SUFFIXED.finditer(text))
        lines.append("a type suffix (" + ", ".join(repr(s) for s in suffixes[:4]) + "): "
                     + ", ".join(repr(name) for name in named))
    return lines


def qualifier_section(printed: str) -> str:
    """Return the finalyzer's section on name qualifiers, or '' when the output's names carry none.

    The examples are the data's own text, so they are framed as output; the rule around them is the prompt's.
    """
    found = name_qualifiers(printed)
    if not found:
        return ""
    listed = frame("\n".join(f"- {line}" for line in found), "output")
    return ("\n# Names in the result\nThe names in the execution result carry qualifiers the data attaches:\n"
            f"{listed}\nPrint each name in the form the data gives it, qualifiers included, unless the question "
            "says to leave them out; either way, treat every name in the answer alike.\n")


def _examples(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))[:EXAMPLES]
