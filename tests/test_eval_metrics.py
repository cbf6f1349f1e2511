"""KramaBench answer metrics against hand-computed cases, tolerance edges included."""

from __future__ import annotations

import pytest

from dsstar_lake.base.errors import UsageError
from dsstar_lake.eval.metrics import (
    ANSWER_TYPES,
    Score,
    fuzzy_match,
    list_approximate,
    list_exact,
    numbers_equal,
    numeric_approximate,
    numeric_exact,
    read_judge_reply,
    score,
    score_best,
    string_approximate,
    string_exact,
)

# ---------------------------------------------------------------- numeric_exact / success


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        (8577.5298, 8577.5298, 1.0),
        (8577.53, 8577.5298, 1.0),  # rounded to 2 decimals: diff 2e-4 < 1e-4 * 8577.53
        (8578.5, 8577.5298, 0.0),  # diff 0.97 > 0.858
        # the 1e-4-of-magnitude edge: max(|p|, |t|) * 1e-4 = 0.01000099 for p = 100.0099
        (100.0099, 100.0, 1.0),
        (100.0101, 100.0, 0.0),
        (1e-3 + 5e-10, 1e-3, 1.0),  # relative error 5e-7 < 1e-6
        (5e-7, 1e-9, 1.0),  # absolute difference below 1e-6
        (3e-6, 1e-9, 0.0),
        (5e-7, 0.0, 1.0),  # zero truth: |p| < 1e-6
        (2e-6, 0.0, 0.0),
        (274, 274, 1.0),
        (275, 274, 0.0),
        (7805000, 7805421, 0.0),  # two ints must be equal (KramaBench: no tolerance between ints)
        (7805421.0, 7805421, 1.0),
        (274.01, 274, 1.0),  # a float within rounding of an int truth
        ("7,805,421", 7805421, 1.0),
        ("38.42%", 38.42, 1.0),  # the percent sign is dropped, the value kept
        ("-1,039", -1039, 1.0),
        ([60], 60, 1.0),  # a one-item list
        ("Wollaston Beach", "Wollaston Beach", 1.0),  # KramaBench types some string answers numeric_exact
        ("abc", 5, 0.0),
        (True, 1, 0.0),  # a boolean is not a number
        (float("nan"), 1.0, 0.0),
        (None, 5, 0.0),
    ],
)
def test_numeric_exact(predicted: object, truth: object, expected: float) -> None:
    assert numeric_exact(predicted, truth) == expected


def test_numbers_equal_symmetry_of_magnitude() -> None:
    # The tolerance is relative to the larger magnitude, so it is symmetric in p and t.
    assert numbers_equal(100.0, 100.0099) and numbers_equal(100.0099, 100.0)
    assert not numbers_equal(float("inf"), 1.0)


# ---------------------------------------------------------------- string_exact


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        ("  singapore ", "Singapore", 1.0),
        ("SINGAPORE", "Singapore", 1.0),
        ("Singapur", "Singapore", 0.0),
        ("Wyoming.", "Wyoming", 1.0),
        ("Damon  Pond Beach (DCR)", "Damon Pond Beach (DCR)", 1.0),
        (True, "True", 1.0),
        ("false", "False", 1.0),
        ("0.50", "0.5", 1.0),  # numeric strings compare as numbers
        (["Northwest", 2020], "Northwest, 2020", 1.0),  # a comma-split answer is joined back
        ("Northwest,2020", "Northwest, 2020", 1.0),
        (
            ["bucks creek", "pleasant street", "forest street"],
            ["Bucks Creek", "Pleasant Street", "Forest Street"],
            1.0,
        ),
        (
            "Bucks Creek, Pleasant Street, Forest Street",
            ["Bucks Creek", "Pleasant Street", "Forest Street"],
            1.0,
        ),
        (
            ["Pleasant Street", "Bucks Creek", "Forest Street"],
            ["Bucks Creek", "Pleasant Street", "Forest Street"],
            0.0,
        ),
        (["Bucks Creek"], ["Bucks Creek", "Pleasant Street"], 0.0),
        ({"Start": "2015-06", "Acres": 780542}, '{\'Acres\': 780542, "Start": "2015-06"}', 1.0),
        (5, "Lightning", 0.0),
        ("", "Lightning", 0.0),
    ],
)
def test_string_exact(predicted: object, truth: object, expected: float) -> None:
    assert string_exact(predicted, truth) == expected


# ---------------------------------------------------------------- numeric_approximate


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        (0.519, 0.519, 1.0),
        (0.5, 0.519, 1 / (1 + 0.019 / 0.519)),
        (0.0059, -0.0059, 1 / 3),  # relative error 2
        (4830.9, 4830.9, 1.0),
        ("4,830.9", 4830.9, 1.0),
        (2 * 4830.9, 4830.9, 0.5),
        (0.0, 0.0, 1.0),  # t == 0: the absolute error stands in for the relative error
        (0.5, 0.0, 1 / 1.5),
        (-2.0, 0.0, 1 / 3),
        ("-0.01", "-0.01", 1.0),  # KramaBench stores some truths as strings
        ("51.9%", 0.519, 1 / (1 + (51.9 - 0.519) / 0.519)),  # read as written, not as 0.519
        ("n/a", 0.519, 0.0),
        (float("inf"), 0.519, 0.0),
        (None, 0.519, 0.0),
    ],
)
def test_numeric_approximate(predicted: object, truth: object, expected: float) -> None:
    assert numeric_approximate(predicted, truth) == pytest.approx(expected)


# ---------------------------------------------------------------- list_exact


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        ([2003, 2011, 2015], [2003, 2011, 2015, 2018], 2 * 1 * 0.75 / 1.75),
        ("2003, 2011, 2015, 2018", [2003, 2011, 2015, 2018], 1.0),
        (["Nevada", "CALIFORNIA"], ["California", "Nevada"], 1.0),  # order does not count
        ([6.3260001, 0.787], [6.326, 0.787], 1.0),  # within rounding
        ([6.33, 0.787], [6.326, 0.787], 0.5),  # 6.33 is not a rounding of 6.326
        (["6.326", "0.787"], [6.326, 0.787], 1.0),
        ([2003.0], [2003], 1.0),
        ([0, 0], [0, 0, 0], 2 * 1 * (2 / 3) / (1 + 2 / 3)),  # one-to-one: each predicted item counts once
        (["a", "b", "c", "d"], ["a"], 2 * 0.25 * 1 / 1.25),
        (["x"], ["a"], 0.0),
        ([], [], 1.0),
        ([], ["a"], 0.0),
        (["a"], [], 0.0),
        ("FIGO Grade 2", ["FIGO Grade 2"], 1.0),  # a bare value is a one-item list
        ([["Austria", "Austria", 1105, 1105]], ['["Austria", "Austria", 1105, 1105]'], 1.0),
        (["200001", "200002"], ["200001", "200002"], 1.0),
        ([200001, 200002], ["200001", "200002"], 1.0),
        ([True], ["True"], 1.0),
        (None, ["a"], 0.0),
    ],
)
def test_list_exact(predicted: object, truth: object, expected: float) -> None:
    assert list_exact(predicted, truth) == pytest.approx(expected)


def test_list_exact_is_fast_on_long_lists_of_repeated_values() -> None:
    truth = [0, 1] * 10000 + [f"name {i}" for i in range(10000)]
    predicted = list(reversed(truth))
    assert list_exact(predicted, truth) == 1.0
    assert list_exact(predicted[:15000], truth) == pytest.approx(2 * 1 * 0.5 / 1.5)


# ---------------------------------------------------------------- list_approximate


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        ([1.005, 2.0], [1.0, 2.0], 1.0),
        ([1.02, 2.0], [1.0, 2.0], 0.5),
        ([101, 50], [100, 50], 1.0),  # exactly 1 %: inside
        ([101.2, 50], [100, 50], 0.5),
        ([0.0], [0.0], 1.0),
        ([1e-13], [0.0], 0.0),  # 1 % of max(|t|, 1e-12)
        (["Great Basin", "Northern California"], ["Great Basin Area", "northern california"], 1.0),
        (["Northwest 2021"], ["Northwest 2020"], 0.0),
        (["Sao Paulo"], ["São Paulo"], 1.0),
        (["Wyomng"], ["Wyoming"], 1.0),  # typo-level similarity
        (["Texas"], ["Wyoming"], 0.0),
        (["_Tag", "_Enterococcus"], ["_Tag", "_Enterococcus"], 1.0),
        ([0.5, "x"], [0.5, "NaN"], 0.5),
    ],
)
def test_list_approximate(predicted: object, truth: object, expected: float) -> None:
    assert list_approximate(predicted, truth) == pytest.approx(expected)


def test_list_approximate_long_lists_of_strings() -> None:
    truth = [f"water-body-testing-{year}.csv" for year in range(2002, 2024)] * 20
    assert list_approximate(list(reversed(truth)), truth) == 1.0


# ---------------------------------------------------------------- string_approximate


def test_string_approximate_asks_the_judge_with_predicted_then_truth() -> None:
    calls: list[tuple[str, str]] = []

    def judge(predicted: str, truth: str) -> bool:
        calls.append((predicted, truth))
        return "less" in predicted

    truth = (
        "More aggressive suppression does not help fires end faster but helps fires affect less buildings."
    )
    good = "Suppression does not shorten fires, but fewer buildings are affected (less damage)."
    assert string_approximate(good, truth, judge) == (1.0, "judge")
    assert string_approximate("It helps a lot", truth, judge) == (0.0, "judge")
    assert calls == [(good, truth), ("It helps a lot", truth)]


def test_string_approximate_equal_strings_need_no_judge() -> None:
    def judge(predicted: str, truth: str) -> bool:
        raise AssertionError("judge must not be called")

    assert string_approximate("  great basin area ", "Great Basin Area", judge) == (1.0, "exact")
    assert string_approximate(["Northwest", 2020], "Northwest, 2020", judge) == (1.0, "exact")


@pytest.mark.parametrize(
    ("predicted", "truth", "expected"),
    [
        ("Great Basin", "Great Basin Area", 1.0),  # token F1 = 0.8
        ("Great Basin Coordination Center", "Great Basin Area", 0.0),  # token F1 = 4/7
        ("Northwest in 2020", "Northwest, 2020", 1.0),
        ("Northwest, 2021", "Northwest, 2020", 0.0),  # numbers must agree
        ("Yes", "No", 0.0),
        ("Not", "No", 0.0),
        ("It does not help", "It does help", 0.0),  # negation on one side only
        ("True", "true", 1.0),
    ],
)
def test_string_approximate_fuzzy_fallback(predicted: str, truth: str, expected: float) -> None:
    value, method = string_approximate(predicted, truth)
    assert value == expected
    assert method in ("fuzzy", "exact")


def test_fuzzy_match_threshold_is_a_parameter() -> None:
    assert fuzzy_match("Great Basin", "Great Basin Area", 0.8)
    assert not fuzzy_match("Great Basin", "Great Basin Area", 0.9)
    assert fuzzy_match("", "")
    assert not fuzzy_match("", "x")


# ---------------------------------------------------------------- score()


def test_score_names_kramabench_metrics_and_methods() -> None:
    assert score("numeric_exact", 42, 42) == Score(1.0, "success", "rule")
    assert score("string_exact", "ia", "IA") == Score(1.0, "success", "rule")
    assert score("numeric_approximate", 0.5, 1.0) == Score(pytest.approx(2 / 3), "rae_score", "rule")
    assert score("list_exact", ["a"], ["a", "b"]) == Score(pytest.approx(2 / 3), "f1", "rule")
    assert score("list_approximate", [1.0], [1.0]) == Score(1.0, "f1_approximate", "rule")
    assert score("list_approximate", ["a"], ["a"]).method == "fuzzy"
    assert score("string_approximate", "Great Basin", "Great Basin Area") == Score(
        1.0, "fuzzy_paraphrase", "fuzzy"
    )
    assert score("string_approximate", "x", "y", judge=lambda p, t: True) == Score(
        1.0, "llm_paraphrase", "judge"
    )
    assert score("string_approximate", "No", "no") == Score(1.0, "llm_paraphrase", "exact")


def test_score_of_no_answer_is_zero_for_every_type() -> None:
    for answer_type in ANSWER_TYPES:
        assert score(answer_type, None, "x").value == 0.0


def test_score_stays_in_unit_interval() -> None:
    for answer_type in ANSWER_TYPES:
        for predicted, truth in [(1e300, 1e-300), (-5, 3), ("a", 0), ([1, 2, 3], [1]), ({"k": 1}, "k")]:
            value = score(answer_type, predicted, truth).value
            assert 0.0 <= value <= 1.0


def test_unknown_answer_type() -> None:
    with pytest.raises(UsageError, match="unknown answer_type 'numeric'"):
        score("numeric", 1, 1)


def test_score_best_takes_the_best_accepted_answer() -> None:
    best = score_best("list_exact", ["North", "East", "West"], [["North", "East"], ["North", "East", "West"]])
    assert best == Score(1.0, "f1", "rule")
    with pytest.raises(UsageError):
        score_best("list_exact", ["a"], [])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", True),
        ("yes.", True),
        ("  YES - same meaning", True),
        ("No", False),
        ("no, yes-or-no", False),
        ("", False),
    ],
)
def test_read_judge_reply(reply: str, expected: bool) -> None:
    assert read_judge_reply(reply) is expected
