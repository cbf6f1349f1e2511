"""Guidelines composed from the answer's form (issue 41, item 4): a number, a name, Yes/No, a list or a composite
each get their own rules and only those; names' qualifiers are shown only where names may be the answer."""

from __future__ import annotations

import pytest
from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, scripted

from dsstar_lake.agent.answer_form import form_of
from dsstar_lake.agent.guidelines import compose
from dsstar_lake.agent.prompts import template

# Prints names that carry a qualifier (a type suffix), so the finalyzer's "Names in the result" could apply.
COUNTIES = """
import csv
for r in csv.DictReader(open('data/ozone_by_county.csv')):
    print(f"{r['county']} County: {r['unhealthy_days']} days in {r['year']}")
"""
NAMES = "# Names in the result"


def finalyzer_prompt(lake, question: str, script: str, guidelines: str | None = None) -> str:
    """Run a question with a scripted model and return the prompt the finalyzer was sent."""
    provider = scripted(("planner", "Read the file."), ("coder", fenced(script)), ("verifier", "Yes"),
                        ("finalyzer", fenced(script)))
    lake.ask(question, provider=provider, overrides=FAST, guidelines=guidelines)
    return prompts(provider, "finalyzer")[0]


def section(prompt: str) -> str:
    """Return the finalyzer prompt's # Guidelines section."""
    return prompt.split("# Guidelines\n")[1].split("\n# Readings noted so far")[0]


@pytest.mark.parametrize(("question", "kind", "present", "absent"), [
    ("How many unhealthy days were there in total, as a percentage of the year to 2 decimal places?", "number",
     ["A number: print it plainly", "Give the value as a percentage",
      "Round the number to exactly 2 decimal places"], ["JSON list", "Print exactly one of", "A name", NAMES]),
    ("Did Kings have more unhealthy days than Queens, as a percentage of the year? Answer Yes or No.", "yes/no",
     ["print exactly one of Yes or No"], ["Give the value as a percentage", "Round", "A number", NAMES]),
    ("Which county had the most unhealthy days?", "name",
     ["A name or other text: print it as it appears in the data", NAMES, "'Kings County'"],
     ["JSON list", "A number", "Print exactly one of"]),
    ("Which counties had more than 5 unhealthy days?", "list",
     ["print a JSON list on one line", NAMES], ["A number:", "Print exactly one of"]),
    ("Which county had the most unhealthy days, and in what year?", "composite",
     ["Several parts: print them on one line, in the order the question asks for them",
      '["1990-1999", [1991, 1995], [1993, 1997]]', NAMES], ["Print exactly one of", "Give the value as a"]),
])
def test_each_form_gets_its_own_rules_and_only_those(lake, question, kind, present, absent):
    assert form_of(question).kind == kind
    prompt = finalyzer_prompt(lake, question, COUNTIES)
    guidelines = section(prompt)
    assert guidelines.strip() == compose(question)
    assert guidelines.startswith(template("guidelines_default").strip())
    print(f"--- {kind}: the finalyzer's guidelines\n{guidelines}")  # each case's prompt, shown with -s
    for text in present:
        assert text in prompt, text
    for text in absent:  # the rules are the guidelines'; the names section is the prompt's
        assert text not in (prompt if text == NAMES else guidelines), text


def test_given_guidelines_come_first_and_win_over_the_forms_rules(lake):
    prompt = finalyzer_prompt(lake, "How many widget units were sold?", SUM_WIDGETS,
                              guidelines="Answer with the number and its unit")
    guidelines = section(prompt)
    assert guidelines.splitlines()[:2] == [
        "Answer with the number and its unit",
        "The answer's form, read from the question's words: a number. Where the guidelines above say otherwise, "
        "they win."]
    assert template("guidelines_default").strip() not in guidelines


def test_a_question_whose_words_do_not_say_gets_every_kinds_rule():
    text = compose("Report the unhealthy days.")
    assert "not said by the question" in text and "a list as a JSON list" in text and "prints plainly" in text


def test_the_chooser_is_shown_the_same_composed_guidelines(lake):
    question = "How many widget units were sold in total? Round to the nearest whole number."
    provider = scripted(
        ("planner", "Sum the widget units."),
        ("coder", fenced(SUM_WIDGETS + "print('Alternative: north region only = 10')\n")),
        ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 1 because the question's literal words decide\nAnswer: 14"),
    )
    lake.ask(question, provider=provider, overrides=FAST)
    chooser = prompts(provider, "chooser")[0]
    printed = chooser.split("# How the answer is printed\n")[1].split("\n# Your task")[0].strip()
    assert printed == compose(question) and "Round the number to an integer, no decimal point" in printed
    assert NAMES not in chooser and "JSON list" not in printed
