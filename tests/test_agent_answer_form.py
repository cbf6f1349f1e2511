"""The answer's form and rules read from each way the development questions word them (never their answers)."""

from __future__ import annotations

import pytest

from dsstar_lake.agent.answer_form import form_of, options, rounding
from dsstar_lake.agent.guidelines import form_rules


@pytest.mark.parametrize(("question", "offered"), [
    ("Did lightning or humans cause more fires? Answer with **only** 'Lightning' or 'Human'. No explanation.",
     ["Lightning", "Human"]),
    ("Are there more fires in Democratic states or Republican states? Answer **only** with 'Democratic' or "
     "'Republican'.", ["Democratic", "Republican"]),
    ("Are the size of a fire and the wind speed strongly correlated? The answer should be Yes or No.",
     ["Yes", "No"]),
    ("Is Boston's rainfall correlated with Chatham's? Answer with True or False.", ["True", "False"]),
    ("Has the distribution shifted earlier or later? Answer with **only** 'Yes' or 'No'.", ["Yes", "No"]),
    ("Which county had the most unhealthy days?", []),
    ("Which region out of Boston, Chatham or Amherst had the most rain?", []),
])
def test_offered_options(question, offered):
    assert options(question) == offered


@pytest.mark.parametrize(("question", "rule"), [
    ("What is the average? Round your answer to 4 decimal places.", "exactly 4 decimal places"),
    ("What percentage (to 2 decimal places) of wildfires ...?", "exactly 2 decimal places"),
    ("What is the correlation? Answer to three decimal places.", "exactly 3 decimal places"),
    ("What was the cost per acre, rounded to the nearest cent?", "exactly 2 decimal places"),
    ("How many more fires? Round to the nearest whole number.", "an integer, no decimal point"),
    ("Give it to one decimal place.", "exactly 1 decimal place"),
    ("How many unique sources were used?", None),
])
def test_rounding(question, rule):
    assert rounding(question) == rule


def test_method_sentences_never_become_rules():
    question = ("A sample meets the standard if it contains fewer than 104 counts of Enterococcus per 100 "
                "milliliters of water. Impute missing values with the median of the month.")
    assert form_of(question).kind == "open" and form_rules(form_of(question))[1:] == []


@pytest.mark.parametrize(("question", "offered"), [
    # Issue 28: a list of suffixes to ignore is no choice of answers.
    ("Which metro area had the most? Give its name, ignoring suffixes like 'Metropolitan Statistical Area' or "
     "'MSA'.", []),
    ("Which of 'Boston', 'Chatham' or 'Amherst' had the most rain?", ["Boston", "Chatham", "Amherst"]),
    ("Count rows whose status is 'open' or 'pending'.", []),
    ("Is the trend significant? True or False.", ["True", "False"]),
    ("Respond with either \"north\" or \"south\".", ["north", "south"]),
])
def test_options_come_only_from_choice_wording(question, offered):
    assert options(question) == offered


def test_every_rounding_and_unit_the_question_states_reaches_the_rules():
    question = ("What was the total, rounded to the nearest thousand, and the share as a percentage to 2 decimal "
                "places?")
    rules = form_rules(form_of(question))
    assert rules[1:] == [
        "Give the value as a percentage, as the question asks (a share of 0.452 is 45.2).",
        "Round the number to the nearest thousand (a multiple of 1000, printed in full as an integer), as the "
        "question asks.",
        "Round the number to exactly 2 decimal places, as the question asks.",
    ]
    assert form_rules(form_of("What percentage of fires were human-caused?"))[1:] == []  # asks no percent form
