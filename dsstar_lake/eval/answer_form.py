"""What a question says about its answer's form, read as rules, not as sentences picked by a keyword.

The finalyzer always sees the whole question; what this adds is a short, unambiguous restatement of the
parts a model most often gets wrong: a closed set of options to print one of, and a rounding. A keyword
filter over sentences used to drop "The answer should be Yes or No" (no keyword) and to quote method
sentences that happened to say "units"; rules extract only what they recognise and say nothing otherwise.
"""

from __future__ import annotations

import re

WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_OPTION = r"(?:'([^'\n]{1,40})'|\"([^\"\n]{1,40})\"|\*\*([^*\n]{1,40})\*\*|\b(Yes|No|True|False)\b)"
OPTIONS = re.compile(_OPTION + r"\s+or\s+" + _OPTION, re.I)
DECIMALS = re.compile(r"\b(\d+|zero|one|two|three|four|five|six|seven|eight)\s+decimal\s+places?\b", re.I)
NEAREST = re.compile(r"\bnearest\s+(cent|whole\s+number|integer|tenth|hundredth|thousandth)\b", re.I)
NEAREST_DECIMALS = {"cent": 2, "whole number": 0, "integer": 0, "tenth": 1, "hundredth": 2, "thousandth": 3}
SIGNIFICANT = re.compile(r"\b(\d+|one|two|three|four|five|six)\s+significant\s+(?:digits|figures)\b", re.I)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else WORDS[word.lower()]


def options(question: str) -> list[str]:
    """Return the closed set of answers the question offers ('Lightning' or 'Human', Yes or No), else []."""
    match = OPTIONS.search(question)
    if not match:
        return []
    found = [g for g in match.groups() if g]
    return found if len(found) == 2 and found[0].lower() != found[1].lower() else []


def rounding(question: str) -> str | None:
    """Return the rounding the question asks for, as an instruction, else None."""
    if match := DECIMALS.search(question):
        n = _number(match[1])
        return "an integer, no decimal point" if n == 0 else f"exactly {n} decimal place{'s' * (n != 1)}"
    if match := NEAREST.search(question):
        n = NEAREST_DECIMALS[" ".join(match[1].lower().split())]
        return "an integer, no decimal point" if n == 0 else f"exactly {n} decimal place{'s' * (n != 1)}"
    if match := SIGNIFICANT.search(question):
        return f"{_number(match[1])} significant digits"
    return None


def form_rules(question: str) -> list[str]:
    """Return the answer-form rules this question states, each one line (empty when it states none)."""
    rules = []
    offered = options(question)
    if offered:
        rules.append("Print exactly one of: " + " or ".join(offered) + " (spelled as given, nothing else).")
    rounded = rounding(question)
    if rounded:
        rules.append(f"Round the number to {rounded}, as the question asks.")
    return rules
