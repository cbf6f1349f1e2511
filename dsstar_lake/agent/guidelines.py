"""The finalyzer's and the chooser's guidelines, composed from the answer's form: only the rules that apply.

The form is read from the question's words (agent/answer_form.py): a number gets the number's rule and the
roundings and percentage the question states; Yes/No and a choice of options get "print exactly one of" and
nothing about rounding or percentages (the number behind a Yes is not the answer); a list, a name, a composite
(a period and two lists of years) each get their own format. Where the words do not say, the rules for every kind
are given, as before. The form lines are one file a user can read and change (prompts/answer_forms.txt).

The guidelines given for the run (the user's --guidelines, agent.guidelines, the eval's or a report's) come first
and win where they differ from the form's lines; without them, the default (prompts/guidelines_default.txt).
"""

from __future__ import annotations

from functools import cache

from dsstar_lake.agent.answer_form import Form, form_of
from dsstar_lake.agent.prompts import template

SAYS = {"number": "a number", "name": "a name", "yes/no": "Yes or No", "choice": "one of the options it offers",
        "list": "a list", "composite": "several parts at once", "open": "not said by the question"}


@cache
def _form_lines() -> dict[str, str]:
    """Return each form's line from prompts/answer_forms.txt ("kind: line")."""
    lines = {}
    for raw in template("answer_forms").splitlines():
        kind, sep, text = raw.partition(": ")
        if sep and kind.strip():
            lines[kind.strip()] = text.strip()
    return lines


def form_rules(form: Form) -> list[str]:
    """Return the rules for an answer of this form, each one line: its format, then what the question states."""
    line = _form_lines()[form.kind].replace("{options}", " or ".join(form.options))
    rules = [line]
    if form.kind in ("number", "open"):
        if form.percent:
            rules.append("Give the value as a percentage, as the question asks (a share of 0.452 is 45.2).")
        rules += [f"Round the number to {text}, as the question asks." for text in form.roundings]
    elif form.kind == "composite":
        rules += [f"Round its numbers to {text} where the question asks it of them." for text in form.roundings]
    return rules


def compose(question: str, given: str = "") -> str:
    """Return the guidelines for a question: the given ones (else the default), then its form's rules."""
    head = given.strip() or template("guidelines_default").strip()
    form = form_of(question)
    said = SAYS[form.kind]
    intro = (f"The answer's form, read from the question's words: {said}."
             + (" Where the guidelines above say otherwise, they win." if given.strip() else ""))
    return "\n".join([head, intro, *(f"- {rule}" for rule in form_rules(form))])
