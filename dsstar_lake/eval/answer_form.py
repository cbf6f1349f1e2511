"""What a question says about its answer's form, read as rules, not as sentences picked by a keyword.

The finalyzer always sees the whole question; what this adds is a short, unambiguous restatement of the
parts a model most often gets wrong: a closed set of options to print one of, and the roundings and units it
asks for (every one it states). A keyword filter over sentences used to drop "The answer should be Yes or No"
(no keyword) and to quote method sentences that happened to say "units"; rules extract only what they
recognise and say nothing otherwise. Options are read only from choice wording ("Yes or No", "True or
False", "answer with 'A' or 'B'", "which of 'A', 'B' or 'C'"): "ignoring suffixes like 'MSA' or 'Metro'"
names no choice.
"""

from __future__ import annotations

import re

WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_QUOTED = r"(?:'[^'\n]{1,40}'|\"[^\"\n]{1,40}\"|\*\*[^*\n]{1,40}\*\*)"
QUOTED_LIST = re.compile(_QUOTED + r"(?:\s*,\s*" + _QUOTED + r")*,?\s+or\s+" + _QUOTED)
ITEM = re.compile(r"'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"|\*\*([^*\n]{1,40})\*\*")
BARE = re.compile(r"\b(Yes|True)\s+or\s+(No|False)\b|\b(No|False)\s+or\s+(Yes|True)\b", re.I)
# The words that offer a choice, close before the options and in the same sentence.
CHOICE = re.compile(r"\b(?:answer(?:ed)?|respond|reply|choose|pick|select|one\s+of|either|which\s+of|"
                    r"whether)\b[^.?!\n]{0,30}$", re.I)
DECIMALS = re.compile(r"\b(\d+|zero|one|two|three|four|five|six|seven|eight)\s+decimal\s+places?\b", re.I)
NEAREST = re.compile(r"\bnearest\s+(cent|whole\s+number|integer|tenth|hundredth|thousandth|ten|hundred|thousand|"
                     r"million|billion)\b", re.I)
NEAREST_DECIMALS = {"cent": 2, "whole number": 0, "integer": 0, "tenth": 1, "hundredth": 2, "thousandth": 3}
NEAREST_MULTIPLE = {"ten": 10, "hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
SIGNIFICANT = re.compile(r"\b(\d+|one|two|three|four|five|six)\s+significant\s+(?:digits|figures)\b", re.I)
PERCENT = re.compile(r"\b(?:as|in)\s+(?:a\s+)?percent(?:age)?s?\b|\bpercentage\s+points?\b", re.I)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def options(question: str) -> list[str]:
    """Return the closed set of answers the question offers ('Lightning' or 'Human', Yes or No), else []."""
    for match in QUOTED_LIST.finditer(question):
        if CHOICE.search(question[: match.start()]):
            found = [next(g for g in item.groups() if g) for item in ITEM.finditer(match[0])]
            if len({f.lower() for f in found}) == len(found) >= 2:
                return found
    bare = BARE.search(question)
    return [g for g in bare.groups() if g] if bare else []


def roundings(question: str) -> list[str]:
    """Return every rounding and unit the question asks for, as instructions, in the order it states them."""
    found: list[tuple[int, str]] = []
    for match in DECIMALS.finditer(question):
        found.append((match.start(), _places(_number(match[1]))))
    for match in NEAREST.finditer(question):
        unit = " ".join(match[1].lower().split())
        if unit in NEAREST_MULTIPLE:
            found.append((match.start(), f"the nearest {unit} (a multiple of {NEAREST_MULTIPLE[unit]}, printed in "
                                         "full as an integer)"))
        else:
            found.append((match.start(), _places(NEAREST_DECIMALS[unit])))
    for match in SIGNIFICANT.finditer(question):
        found.append((match.start(), f"{_number(match[1])} significant digits"))
    rules = [text for _, text in sorted(found)]
    return list(dict.fromkeys(rules))


def rounding(question: str) -> str | None:
    """Return the first rounding the question asks for, as an instruction, else None."""
    found = roundings(question)
    return found[0] if found else None


def _places(n: int) -> str:
    return "an integer, no decimal point" if n == 0 else f"exactly {n} decimal place{'s' * (n != 1)}"


def form_rules(question: str) -> list[str]:
    """Return the answer-form rules this question states, each one line (empty when it states none)."""
    rules = []
    offered = options(question)
    if offered:
        rules.append("Print exactly one of: " + " or ".join(offered) + " (spelled as given, nothing else).")
    if PERCENT.search(question):
        rules.append("Give the value as a percentage, as the question asks (a share of 0.452 is 45.2).")
    rules += [f"Round the number to {text}, as the question asks." for text in roundings(question)]
    return rules
