"""The answer contract: what parse_answer makes of finalyzer-like output."""

from __future__ import annotations

import json

import pytest

from dsstar_lake.eval.answers import parse_answer, parse_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # bare numbers
        ("42", 42),
        ("42.", 42),
        ("-0.0059", -0.0059),
        ("8577.5298\n", 8577.5298),
        ("1.2e-5", 1.2e-5),
        ("+3", 3),
        ("\u22125", -5),
        (".5", 0.5),
        # thousands separators, currency, percent, units
        ("7,805,421", 7805421),
        ("$1,234.50", 1234.5),
        ("-$12", -12),
        ("38.42%", 38.42),
        ("38.42 %", 38.42),
        ("7,805,421 acres", 7805421),
        ("12.5 ppm.", 12.5),
        ("3.1 km/s", 3.1),
        ("4.5 million", 4.5),
        ("20 °C", 20),
        # labels and emphasis
        ("Answer: 42", 42),
        ("Final answer: 0.519", 0.519),
        ("The answer is 7,805,421", 7805421),
        ("**Answer:** Wyoming", "Wyoming"),
        ("**Answer**: 17.4274", 17.4274),
        ("Answer: **42**", 42),
        ("`Lightning`", "Lightning"),
        # strings
        ("Wyoming", "Wyoming"),
        ("  São Paulo  ", "São Paulo"),
        ("'Singapore'", "Singapore"),
        ('"Damon Pond Beach (DCR)"', "Damon Pond Beach (DCR)"),
        ("FIGO Grade 2", "FIGO Grade 2"),
        ("2014-2016", "2014-2016"),
        ("wu334 to wu335", "wu334 to wu335"),
        # JSON and Python literals
        ('["California", "Nevada"]', ["California", "Nevada"]),
        ("['California', 'Nevada']", ["California", "Nevada"]),
        ("[2003, 2011, 2015]", [2003, 2011, 2015]),
        ("(6.326, 0.787)", [6.326, 0.787]),
        ("[]", []),
        ('{"answer": 0.519}', 0.519),
        ('{"Answer": ["a", "b"]}', ["a", "b"]),
        ('{"region": "Northwest", "year": 2020}', {"region": "Northwest", "year": 2020}),
        ("true", True),
        ("False", False),
        ("None", None),
        ("null", None),
        # loose lists
        (
            "[Bucks Creek, Pleasant Street, Forest Street]",
            ["Bucks Creek", "Pleasant Street", "Forest Street"],
        ),
        (
            "Bucks Creek, Pleasant Street, and Forest Street",
            ["Bucks Creek", "Pleasant Street", "Forest Street"],
        ),
        ("2003, 2011, 2015", [2003, 2011, 2015]),
        ("100, 200", [100, 200]),
        ("CDK12; SMARCA4", ["CDK12", "SMARCA4"]),
        ("Northwest, 2020", ["Northwest", 2020]),
        # a sentence with a comma stays one string
        (
            "No, the correlation between the two series is weak and not significant",
            "No, the correlation between the two series is weak and not significant",
        ),
        # thousands separators win over lists: one number
        ("100,200", 100200),
        # empty output
        ("", None),
        ("   \n\n  ", None),
    ],
)
def test_single_values(text: str, expected: object) -> None:
    result = parse_answer(text)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Computing the total...\nDone.\n7805421", 7805421),
        ("The region and year:\nNorthwest, 2020\n", ["Northwest", 2020]),
        ("step 1 ok\n\nAnswer: Wyoming\n\n", "Wyoming"),
        ('```json\n["CDK12", "SMARCA4"]\n```', ["CDK12", "SMARCA4"]),
        ("Here it is:\n```\n0.0465\n```\nThanks", 0.0465),
        ('```python\nprint(1)\n```\nresult below\n```json\n{"answer": 60}\n```', 60),
        (
            '[\n  "Pleasure Bay Beach",\n  "Castle Island Beach"\n]',
            ["Pleasure Bay Beach", "Castle Island Beach"],
        ),
        ("The result:\n[1, 2,\n 3]", [1, 2, 3]),
        ('Result follows\n{\n  "answer": "IA"\n}', "IA"),
        ("- California\n- Washington\n- Idaho", ["California", "Washington", "Idaho"]),
        ("1. 6.326\n2. 0.787", [6.326, 0.787]),
        ("* North\n* East", ["North", "East"]),
        ("Regions:\n- North\n- East", ["North", "East"]),
        # one bullet at the end is a value, not a list
        ("Steps done.\n- 42", 42),
        # bullets above a last plain line do not count
        ("1. load\n2. compute\n0.75", 0.75),
    ],
)
def test_multi_line_output(text: str, expected: object) -> None:
    assert parse_answer(text) == expected


def test_whole_json_wins_over_last_line() -> None:
    value = {"answer": [1, 2], "note": "x"}
    assert parse_answer(json.dumps(value, indent=2)) == [1, 2]


def test_long_json_list_is_read_whole() -> None:
    names = [f"City {i}, São" for i in range(20000)]
    text = json.dumps(names)  # ensure_ascii escapes, and well over 200k characters
    assert parse_answer(text) == names


def test_python_literal_list_with_quotes_inside() -> None:
    assert parse_answer("['O\\'Hare', \"Bob's\"]") == ["O'Hare", "Bob's"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234", 1234),
        ("1,23", None),
        ("12 34", None),
        ("abc", None),
        ("1.2.3", None),
        ("--5", None),
        ("5e3", 5000.0),
    ],
)
def test_parse_number(text: str, expected: object) -> None:
    assert parse_number(text) == expected


def test_not_a_string_is_read_as_its_text() -> None:
    assert parse_answer(None) is None  # type: ignore[arg-type]
    assert parse_answer(12) == 12  # type: ignore[arg-type]
