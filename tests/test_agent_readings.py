"""Readings (issue 21): the assumptions an answer rests on and the alternatives' values, parsed from every role."""

from __future__ import annotations

import json

from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, run_dir, scripted, trace

from dsstar_lake.agent import finalyzer, verifier
from dsstar_lake.agent.planner import parse_step, plan_text
from dsstar_lake.agent.readings import Alternative, Readings, distinct, parse_readings, settle, split_readings


def test_lines_of_each_kind_are_read_and_removed_from_the_answer():
    text = ("Yes\nAssumption: Territories are not states.\n"
            "Alternative: counting territories = 52 (all rows of reports.csv)\n"
            "Stated: the table's total row = 12.3%\n")
    found, rest = split_readings(text)
    assert rest == "Yes"
    assert found.assumptions == ["Territories are not states."]
    assert found.alternatives == [Alternative("counting territories", "52", "all rows of reports.csv")]
    # A stated figure is evidence of its own kind, never a candidate answer.
    assert found.stated == [Alternative("the table's total row", "12.3%", "stated in the data, not computed")]


def test_a_long_assumption_keeps_its_other_reading_and_a_cut_one_says_so():
    long = ("Assumption: cost per acre = total federal suppression cost divided by the human-caused acres of the same "
            "year; other reading: total suppression cost divided by all acres burned (the 'Acres' column of the cost "
            "table), or cost apportioned by the human share of acres, which reduces to the same ratio.")
    found, _ = split_readings("Yes\n" + long)
    assert found.assumptions[0].endswith("reduces to the same ratio.")
    runaway = "Assumption: " + "every year counts " * 60
    cut = split_readings("Yes\n" + runaway)[0].assumptions[0]
    assert cut.endswith(" […]") and "every year counts" in cut and not cut.endswith("cou […]")


def test_headers_bullets_and_markdown_are_read():
    text = ("**Assumptions:**\n- Rounded after multiplying.\n* Reports, not reporters\n\n"
            "1. **Alternative:** reporters = 1,204\n- Alternatives:\n  - rounding first → 7.1\n")
    found = parse_readings(text, how="default")
    assert found.assumptions == ["Rounded after multiplying.", "Reports, not reporters"]
    assert found.alternatives == [Alternative("reporters", "1,204", "default"),
                                  Alternative("rounding first", "7.1", "default")]



def test_bold_marks_go_but_a_power_in_a_reading_stays():
    # '2**x - 1' lost its '**' with the bold marks, and the finalyzer read 'variants per Mbp = 2x - 1'
    text = ("**Assumption:** Log2_variant_per_Mbp = log2(v + 1), so v = 2**x - 1; other reading: v = 2**x\n"
            "**Alternative**: plain log2 = 2.6563 (median of 2**x)\n")
    found = parse_readings(text, how="default")
    assert found.assumptions == ["Log2_variant_per_Mbp = log2(v + 1), so v = 2**x - 1; other reading: v = 2**x"]
    assert found.alternatives == [Alternative("plain log2", "2.6563", "median of 2**x")]

def test_a_reading_that_holds_an_equals_sign_keeps_it_and_the_value_is_what_follows_the_last_one():
    # Seen with a model: the reading named a column and a rule, each with '='.
    found = parse_readings("Alternative: EJ share = 'Percent of EJ block groups', absent towns as 0% = 9.76 "
                           "(14.63% - 4.86% = 9.76)")
    assert found.alternatives == [Alternative("EJ share = 'Percent of EJ block groups', absent towns as 0%",
                                              "9.76", "14.63% - 4.86% = 9.76")]


def test_malformed_alternatives_are_dropped_not_errors():
    text = ("Alternative: no value given\nAlternative: = 5\nAlternative: reading =\nAlternative:\n"
            "Assumption:\nAlternatives: not a list\nAlternative: ratio a=b = 0.5 (sum(a) / len(b))\n"
            "Alternative: share = 3 (unclosed\n")
    found = parse_readings(text)
    assert found.assumptions == []
    assert found.alternatives == [Alternative("ratio a=b", "0.5", "sum(a) / len(b)"),
                                  Alternative("share", "3 (unclosed", "")]


def test_no_readings_and_code_inside_fences_is_left_alone():
    assert not parse_readings("Yes")
    assert not parse_readings("")
    code = "```python\nAssumption: int = 3\nprint('Alternative: x = 1')\n```"
    found, rest = split_readings(code + "\nAssumption: the year is 2024")
    assert rest == code and found.assumptions == ["the year is 2024"]
    capped = parse_readings("Assumption: " + "x" * 1000).assumptions[0]
    assert len(capped) <= 600 and capped.endswith(" […]")


def test_planner_keeps_its_assumptions_under_the_step():
    step = parse_step("**Step 1:** Count the reports per state.\n"
                      "Assumption: territories are not states; other reading: include PR and GU")
    assert step == ("Count the reports per state.\n"
                    "Assumption: territories are not states; other reading: include PR and GU")
    assert parse_step("Assumption: only this") is None  # no step: the planner is asked again
    assert plan_text([step, "Divide."]) == ("1. Count the reports per state.\n   Assumption: territories are not "
                                            "states; other reading: include PR and GU\n2. Divide.")


def test_verifier_reads_the_verdict_apart_from_the_readings():
    found = verifier.parse("Assumption: there are no territories in the data\nAlternative: none = 0\nYes")
    assert found.sufficient is True
    assert found.readings.assumptions == ["there are no territories in the data"]
    assert verifier.parse("No\nAssumption: yes-votes only").sufficient is False
    assert verifier.parse("Yes").readings == Readings()
    assert verifier.parse("Assumption: a\nAlternative: b = 1") is None  # readings but no verdict


def test_finalyzer_reads_the_script_apart_from_the_readings():
    code, found = finalyzer.parse(fenced("print(14)") + "\nAssumption: all regions count\n"
                                  "Alternative: north only = 10 (one region)")
    assert code == "print(14)\n" and found.assumptions == ["all regions count"]
    code, found = finalyzer.parse("print(14)\nAssumption: all regions count")
    assert code == "print(14)\n" and found.assumptions == ["all regions count"]
    assert finalyzer.parse(fenced("print(14)"))[1] == Readings()
    assert finalyzer.parse("Assumption: all regions count") is None


def test_settle_prefers_the_latest_role_and_drops_repeats_and_the_answer_itself():
    final = Readings(["A final"], [Alternative("x", "1", "f")])
    verdict = Readings(["A verifier"], [Alternative("y", "2", "v")])
    printed = Readings([], [Alternative("x", "9", "p"), Alternative("z", "14.0", "p"), Alternative("w", "3", "p")])
    plan = ["Step one\nAssumption: A plan"]
    settled = settle("14", [final, verdict], plan, printed)
    assert settled.assumptions == ["A final"]
    assert settled.alternatives == [Alternative("x", "1", "f"), Alternative("w", "3", "p")]
    assert settle("14", [Readings(), verdict], plan).assumptions == ["A verifier"]
    assert settle("14", [Readings(), Readings()], plan) == Readings(["A plan"], [])
    assert settle("12.34", [], [], Readings([], [Alternative("rounded", "12.3", "")])).alternatives == []


ALTERNATIVES = SUM_WIDGETS + "print('Alternative: north region only = 10')\nprint('Stated: a total row = 15')\n"


def test_an_assumption_restated_in_more_words_is_kept_once_in_its_fuller_form():
    said = ["Acres = the **acres** column.", "Years run 2000 to 2024",
            "Acres = the acres column, summed over every state", "acres = the acres column", "Years run 2000 to 2024."]
    assert distinct(said) == ["Acres = the acres column, summed over every state", "Years run 2000 to 2024"]
    # Words inside another word are not the same reading: "area" is not in "areas burned".
    assert distinct(["Area in hectares", "Areas in hectares burned"]) == ["Area in hectares",
                                                                          "Areas in hectares burned"]
    noted = settle("", [Readings(said, [])], [])
    assert noted.assumptions == ["Acres = the acres column, summed over every state", "Years run 2000 to 2024"]


def test_a_name_ending_in_a_bracketed_word_keeps_it_and_a_number_keeps_its_how():
    found = parse_readings("Alternative: pooled rate = Damon Pond Beach (DCR)\n"
                           "Alternative: by state = 12.5 (pooled)\n"
                           "Alternative: fewest days = Queens (min)\n"
                           "Alternative: by town = Boston (pooled rate over towns)")
    assert [(a.reading, a.value, a.how) for a in found.alternatives] == [
        ("pooled rate", "Damon Pond Beach (DCR)", ""), ("by state", "12.5", "pooled"), ("fewest days", "Queens", "min"),
        ("by town", "Boston", "pooled rate over towns")]


def test_an_alternative_that_gives_a_text_answer_again_with_more_around_it_is_dropped():
    printed = Readings([], [Alternative("pooled rate, Beach Name", "Damon Pond Beach (DCR) 0.5833", "printed"),
                            Alternative("(Community, Beach Name)", "('Ashby', 'Damon Pond Beach (DCR)') 0.5808", "x"),
                            Alternative("by mean of yearly rates", "Wollaston Beach", "x")])
    kept = settle("Damon Pond Beach (DCR)", [printed], [])
    assert [a.value for a in kept.alternatives] == ["Wollaston Beach"]
    # A number inside a longer number is another value, not the answer again.
    numbers = Readings([], [Alternative("absent dropped", "10.87", "x"), Alternative("per mille", "110.24", "x")])
    assert [a.value for a in settle("10.24", [numbers], []).alternatives] == ["10.87", "110.24"]


def test_readings_flow_from_the_roles_into_the_answer_and_the_run_record(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv.\n"
                    "Assumption: every region counts; other reading: the north region only"),
        ("coder", fenced(ALTERNATIVES)),
        ("verifier", "Yes\nAssumption: Every region is counted.\n"
                     "Alternative: north region only = 10 (widget rows of the north region)"),
        ("finalyzer", fenced(SUM_WIDGETS) + "\nAssumption: Every region is counted, north and south."),
        ("chooser", "Chosen: 1. every region because the question's words ask for the total\nAnswer: 14"),
    )
    answer = lake.ask("How many widget units were sold in total?", provider=provider, overrides=FAST)
    assert answer.text.splitlines()[0] == "14"
    assert answer.assumptions == ["Every region is counted, north and south."]
    assert answer.alternatives == [
        {"reading": "north region only", "value": "10", "how": "widget rows of the north region"}]
    assert answer.stated == [{"reading": "a total row", "value": "15", "how": "stated in the data, not computed"}]
    # The coder saw the planner's assumption in the plan; the finalyzer saw what was noted so far.
    assert "Assumption: every region counts; other reading: the north region only" in prompts(provider, "coder")[0]
    final_prompt = prompts(provider, "finalyzer")[0]
    assert "Assumption: Every region is counted." in final_prompt
    assert "Alternative: north region only = 10 (widget rows of the north region)" in final_prompt
    stored = json.loads((run_dir(lake, answer.run_id) / "answer.json").read_text())
    assert stored["assumptions"] == answer.assumptions and stored["alternatives"] == answer.alternatives
    verdict = trace(lake, answer.run_id, "verdict")[0]
    assert verdict["assumptions"] == ["Every region is counted."]
    assert trace(lake, answer.run_id, "readings")[0]["alternatives"] == answer.alternatives
    # Readings that differ (14 against 10) cost one call to choose between them, and the choice is recorded.
    assert [c["role"] for c in trace(lake, answer.run_id, "llm_call")] == ["planner", "coder", "verifier",
                                                                            "finalyzer", "chooser"]
    assert answer.chosen == {"reading": "Every region is counted, north and south.",
                             "because": "the question's words ask for the total", "value": "14"}


def test_roles_that_name_nothing_leave_the_plan_and_the_printed_values(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv.\nAssumption: every region counts"),
        ("coder", fenced(ALTERNATIVES)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 1 because the question asks for the total"),
    )
    answer = lake.ask("How many widget units were sold in total?", provider=provider, overrides=FAST)
    assert answer.assumptions == ["every region counts"]
    assert [a["value"] for a in answer.alternatives] == ["10"]
    assert [a["value"] for a in answer.stated] == ["15"]
    assert answer.alternatives[0]["how"] == "printed by the round 1 script"


def test_reading_lines_a_final_script_prints_are_kept_out_of_the_answer(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(ALTERNATIVES)),
        ("chooser", "Chosen: 1 because the question asks for the total"),
    )
    answer = lake.ask("How many widget units were sold in total?", provider=provider, overrides=FAST)
    assert answer.text == "14"  # a scorer reads the last line: it must be the answer
    assert answer.alternatives[0] == {"reading": "north region only", "value": "10",
                                      "how": "printed by the final script"}
    assert "Alternative: north region only = 10" in (run_dir(lake, answer.run_id) / "solution.out").read_text()


def test_an_answer_with_no_readings_records_empty_lists(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes\nAlternative: nothing to compare\nAssumptions:\n"),
        ("finalyzer", fenced(SUM_WIDGETS) + "\nAlternative: the same = 14"),
    )
    answer = lake.ask("How many widget units were sold in total?", provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.assumptions == [] and answer.alternatives == []
    assert "(none noted)" in prompts(provider, "finalyzer")[0]
