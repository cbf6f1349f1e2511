"""What a question says about its answer's form, read as rules, not as sentences picked by a keyword.

Two things are read from the question's words: the kind of answer it asks for (`form_of`: a number, a name,
Yes or No, one of the options it offers, a list, or a composite of several parts; "open" when the words do not
say), and the rules it states (the options, every rounding and unit). The guidelines are composed from both
(agent/guidelines.py), so a number's question gets no rule for names and a Yes/No question no rounding.
The words are the source for every run, `ask` and `eval` alike: a benchmark measures what a user's question
gets, and the eval's answer_type could not tell a name from Yes/No or a composite anyway.

A keyword filter over sentences used to drop "The answer should be Yes or No" (no keyword) and to quote method
sentences that happened to say "units"; rules extract only what they recognise and say nothing otherwise.
Options are read only from choice wording ("Yes or No", "True or False", "answer with 'A' or 'B'", "which of
'A', 'B' or 'C'"): "ignoring suffixes like 'MSA' or 'Metro'" names no choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


# The kinds of answer a question asks for; "open" is a question whose words do not say.
KINDS = ("number", "name", "yes/no", "choice", "list", "composite", "open")
YES_NO = ({"yes", "no"}, {"true", "false"})
# Two things asked in one question: "Which area…, and what year…?", "Answer with the area and year".
COMPOSITE = re.compile(
    r"\b(?:which|what|who|when|where|how\s+many|how\s+much)\b[^?.]*?,?\s+and\s+"
    r"(?:in\s+)?(?:which|what|who|when|where|how\s+many|how\s+much)\b"
    r"|\banswer\s+with\s+(?:the\s+|a\s+|an\s+|its\s+)?[\w-]+(?:\s+[\w-]+){0,3}?\s+and\s+"
    r"(?:the\s+|a\s+|an\s+|its\s+)?[\w-]+", re.I)
# A question that opens (after a leading clause) with the verb of a Yes/No question, and offers no " or ".
AUXILIARY = re.compile(r"^(?P<lead>[^?]*?,\s*)?(?:is|are|does|do|did|was|were|has|have|had|can|could|will|would|"
                       r"should)\s[^?]*\?", re.I)
# A list: "which/what are", "list the", "top 3"; else, after the numeric wording, a plural noun asked for
# ("which years", "which US states"; not "what percentage of samples").
LISTED = re.compile(r"\b(?:which|what)\s+(?:are|were)\b|\blist\s+(?:the|all|every)\b|\btop\s+(?:\d+|two|three|four|five"
                    r"|ten)\b", re.I)
PLURAL = re.compile(r"\b(?:which|what)\s+(?:(?!of\b)[\w-]+\s+){0,2}?[\w-]{3,}(?<!s)s\b(?!\s+of\b)", re.I)
NUMERIC = re.compile(
    r"\bhow\s+(?:many|much)\b|\bwhat\s+(?:percentage|percent|proportion|share|fraction)\b"
    r"|\bwhat\s+(?:is|was|are|were)\s+the\s+(?:[\w-]+\s+){0,2}?(?:average|mean|median|total|sum|number|count|"
    r"percentage|percent|proportion|share|ratio|rate|correlation|difference|amount|age|value|maximum|minimum|"
    r"standard\s+deviation|variance|score|cost|distance|elevation|latitude|longitude|population)\b"
    r"|^\s*(?:count|calculate|compute)\b", re.I)
ASKS_FOR_A_THING = re.compile(r"\b(?:which|who|what)\b", re.I)


@dataclass(frozen=True)
class Form:
    """The answer's form as the question's words give it: its kind, the options offered, the rules stated."""

    kind: str
    options: tuple[str, ...] = ()
    roundings: tuple[str, ...] = ()
    percent: bool = False

    @property
    def names_matter(self) -> bool:
        """Tell whether the answer may print names from the data (so their qualifiers are worth showing)."""
        return self.kind in ("name", "list", "composite", "open")


def _asked(question: str) -> str:
    """Return the sentence that asks (the last one ending in '?'), else the whole question."""
    asked = re.findall(r"(?:[^.?!]|\.(?=\S))*\?", question)  # a '.' inside "0.1" or "i.e." ends no sentence
    return asked[-1] if asked else question


def form_of(question: str) -> Form:
    """Return the form of the answer the question asks for, read from its words."""
    offered = tuple(options(question))
    rounded = tuple(roundings(question))
    percent = bool(PERCENT.search(question))
    if offered:
        kind = "yes/no" if {o.lower() for o in offered} in YES_NO else "choice"
        return Form(kind, offered)
    if COMPOSITE.search(question):
        return Form("composite", roundings=rounded, percent=percent)
    asked = _asked(question)
    verb = AUXILIARY.match(asked.strip())
    if verb and not ASKS_FOR_A_THING.search(verb["lead"] or "") and not re.search(r"\bor\b", asked):
        return Form("yes/no", ("Yes", "No"))
    if LISTED.search(asked):
        return Form("list", roundings=rounded, percent=percent)
    if NUMERIC.search(asked) or ((rounded or percent) and not ASKS_FOR_A_THING.search(asked)):
        return Form("number", roundings=rounded, percent=percent)
    if PLURAL.search(asked):
        return Form("list", roundings=rounded, percent=percent)
    if ASKS_FOR_A_THING.search(asked):
        return Form("name")
    return Form("open", roundings=rounded, percent=percent)
