"""Reading model answers: code fenced or not, Yes/No in prose, routes in their many spellings, prompt templates."""

from __future__ import annotations

import pytest

from dsstar_lake.agent.parse import Route, clean_step, extract_code, parse_route, parse_verdict
from dsstar_lake.agent.prompts import PROMPTS_DIR, fill, variables


@pytest.mark.parametrize(("text", "code"), [
    ("```python\nprint(1)\n```", "print(1)\n"),
    ("Sure.\n```py\nimport csv\nprint(2)\n```\nDone.", "import csv\nprint(2)\n"),
    ("```\nx = 1\nprint(x)\n```", "x = 1\nprint(x)\n"),
    ("```python\nprint(3)\n", "print(3)\n"),  # the model stopped before closing the fence
    ("import os\nprint(os.getcwd())", "import os\nprint(os.getcwd())\n"),  # unfenced
    ("```text\nnot code\n```\n```python\nprint('a')\nprint('b')\n```", "print('a')\nprint('b')\n"),
    ("~~~python\nprint(4)\n~~~", "print(4)\n"),
])
def test_code_is_found(text, code):
    assert extract_code(text) == code


@pytest.mark.parametrize("text", ["", "Yes", "I will load the file and sum the units.", "```text\nhello\n```"])
def test_prose_is_not_code(text):
    assert extract_code(text) is None


@pytest.mark.parametrize(("text", "verdict"), [
    ("Yes", True), ("yes.", True), ("**Yes**", True), ("'Yes'", True), ("Yes, the result answers it.", True),
    ("No", False), ("No.", False), ("no - the totals are missing", False), ("Answer: No", False),
    ("The output shows the count. Yes.", True), ("The plan is insufficient.", False),
    ("Looking at it carefully...\nNo", False), ("It is not enough to answer.", False),
    ("Hard to say.", None), ("", None), ("Yes and no.", True),
])
def test_verdicts(text, verdict):
    assert parse_verdict(text) is verdict


@pytest.mark.parametrize(("text", "route"), [
    ("Add Step", Route("add")), ("add step.", Route("add")), ("**Add Step**", Route("add")),
    ("We should add a new step.", Route("add")),
    ("Step 2", Route("step", 2)), ("step three", Route("step", 3)), ("3", Route("step", 3)), ("'Step 1'", Route("step", 1)),
    ("I think Step 2 is wrong.", Route("step", 2)), ("The second step is wrong: step two.", Route("step", 2)),
    ("Missing data: ozone readings per county for 2024", Route("missing", missing="ozone readings per county for 2024")),
    ("missing data - the 2023 census table", Route("missing", missing="the 2023 census table")),
    ("**Missing data:** hourly\nwind speeds", Route("missing", missing="hourly wind speeds")),
])
def test_routes(text, route):
    assert parse_route(text, n_steps=3) == route


@pytest.mark.parametrize("text", ["Step 4", "7", "banana", "", "Missing data:", "step zero"])
def test_invalid_routes(text):
    assert parse_route(text, n_steps=3) is None


@pytest.mark.parametrize(("text", "step"), [
    ("Load data/sales.csv.", "Load data/sales.csv."),
    ("Step 2: Sum the units.", "Sum the units."),
    ("**Next step:** Sum the units.", "Sum the units."),
    ("1. Load the file", "Load the file"),
    ("```\nLoad it\n```", "Load it"),
    ("   ", None),
])
def test_planner_steps(text, step):
    assert clean_step(text) == step


def test_every_template_fills_and_checks_its_variables():
    for path in sorted(PROMPTS_DIR.glob("*.txt")):
        names = variables(path.stem)
        text = fill(path.stem, **{n: "{braces stay}" for n in names})
        assert "{braces stay}" in text or not names
    with pytest.raises(ValueError, match="missing"):
        fill("verifier", plan="p", code="c", result="r")
    with pytest.raises(ValueError, match="unexpected"):
        fill("debugger_shorten", bug="b", filename="f", extra="x")


def test_prompts_speak_of_the_data_folder():
    for role in ("coder_first", "coder_next", "debugger_fix", "finalyzer", "analyzer"):
        assert "data/" in fill(role, **{n: "X" for n in variables(role)})
