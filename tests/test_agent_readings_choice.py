"""Choosing the reading (issue 28): readings that give different answers are chosen between by the principles in
one prompt file, with one model call, and none when they agree; what the finalyzer and the chooser see stays clean."""

from __future__ import annotations

import json

from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, run_dir, scripted, trace

from dsstar_lake.agent import chooser
from dsstar_lake.agent.prompts import PROMPTS_DIR
from dsstar_lake.agent.readings import Alternative, Readings, parse_readings, settle

QUESTION = "How many widget units were sold in total?"
NORTH = SUM_WIDGETS + "print('Alternative: north region only = 10')\n"


def roles(lake, answer):
    return [c["role"] for c in trace(lake, answer.run_id, "llm_call")]


def test_readings_that_differ_cost_one_call_and_the_chosen_alternative_becomes_the_answer(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv.\nAssumption: every region counts"),
        ("coder", fenced(NORTH)),
        ("verifier", "Yes\nAssumption: Every region is counted.\n"
                     "Alternative: north region only = 10 (north rows)\nStated: the north total row = 10"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 2. north region only because the data's own figures win over a recomputation\n"
                    "Answer: 10"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert roles(lake, answer) == ["planner", "coder", "verifier", "finalyzer", "chooser"]
    assert answer.text == "10"
    assert answer.chosen == {"reading": "north region only", "value": "10",
                             "because": "the data's own figures win over a recomputation"}
    assert answer.assumptions == ["north region only"]
    # The final script's own answer is kept as the reading set aside.
    assert answer.alternatives == [{"reading": "Every region is counted.", "value": "14",
                                    "how": "the final script's answer"}]
    # The chooser saw the principles, the numbered readings, and the stated figure as evidence, not a candidate.
    prompt = prompts(provider, "chooser")[0]
    assert chooser.principles() in prompt
    assert "1. Every region is counted. = 14 (the final script's answer)" in prompt
    assert "2. north region only = 10 (north rows)" in prompt
    assert "- the north total row = 10" in prompt and "3." not in prompt.split("# Figures")[0].split("# Readings")[1]
    stored = json.loads((run_dir(lake, answer.run_id) / "answer.json").read_text())
    assert stored["value"] == "10" and stored["chosen"] == answer.chosen
    assert stored["stated"] == [{"reading": "the north total row", "value": "10",
                                 "how": "stated in the data, not computed"}]
    chosen = trace(lake, answer.run_id, "chosen")[0]
    assert chosen["answer_before"] == "14" and chosen["reading"] == "north region only"


def test_the_chosen_reading_shows_on_the_web_run_page_and_in_the_notebook_view(lake):
    from serve_helpers import Server, fetch

    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH)),
        ("verifier", "Yes\nAssumption: every <region> counts\nStated: the <total> row = 15"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 1 because the question's <words> decide"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.chosen["because"] == "the question's <words> decide"
    view = lake.run(answer.run_id)._repr_html_()
    assert "chosen reading" in view and "every &lt;region&gt; counts because the question&#x27;s &lt;words&gt;" \
        in view.replace("&#39;", "&#x27;")
    assert "north region only: 10" in view
    with Server(lake) as server:
        code, page, _ = fetch(server.url(f"/runs/{answer.run_id}"))
    assert code == 200 and '<p id="chosen">chosen reading: every &lt;region&gt; counts because' in page
    assert "north region only: 10" in page and "the &lt;total&gt; row: 15" in page and "<words>" not in page


def test_readings_that_agree_cost_no_extra_call(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS + "print('Alternative: rounded = 14.0')\n")),
        ("verifier", "Yes\nAssumption: every region counts\nAlternative: total in units = 14 units (same sum)"),
        ("finalyzer", fenced(SUM_WIDGETS) + "\nAlternative: as a list = NaN"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.alternatives == [] and answer.chosen == {}
    assert roles(lake, answer) == ["planner", "coder", "verifier", "finalyzer"]  # as many calls as before
    assert answer.llm_calls == 4


def test_an_unreadable_choice_keeps_the_answer_and_is_not_asked_again(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Both readings have merit."),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.chosen == {}
    assert roles(lake, answer).count("chooser") == 1
    assert trace(lake, answer.run_id, "unparseable")[0]["role"] == "chooser"
    assert [a["value"] for a in answer.alternatives] == ["10"]


def test_alternatives_from_a_rejected_round_are_not_readings(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH)),
        ("verifier", "No"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides={**FAST, "agent.max_rounds": 1})
    assert answer.verified is False and answer.text == "14"
    assert answer.alternatives == [] and "chooser" not in roles(lake, answer)
    assert "(none noted)" in prompts(provider, "finalyzer")[0]


def test_the_principles_are_one_prompt_file_the_finalyzer_sees_too(lake):
    text = (PROMPTS_DIR / "reading_principles.txt").read_text()
    assert chooser.principles() == text.strip()
    for principle in ("literal words and units", "figure the data states", "denominator", "taken as it is given"):
        assert principle in text
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert text.strip() in prompts(provider, "finalyzer")[0]


def test_a_choice_is_read_by_number_or_by_words_and_its_answer_must_carry_the_value():
    options = chooser.options("14", Readings(["all regions"], [Alternative("north only", "0.4523", "x"),
                                                               Alternative("south only", "4", "y")]))
    picked = chooser.parse("**Chosen:** 2. north only because the table's own denominator\nAnswer: 45.23", options)
    assert (picked.number, picked.value, picked.because) == (2, "45.23", "the table's own denominator")
    assert chooser.parse("Chosen: south only, because the data is taken as given", options).number == 3
    # An answer line that carries another value is not trusted: the computed value stands.
    assert chooser.parse("Chosen: 2 because units\nAnswer: 17", options).value == "0.4523"
    assert chooser.parse("Chosen: 2 because units\nAnswer: 0.45", options).value == "0.45"
    assert chooser.parse("Chosen: 9 because nothing", options) is None
    assert chooser.parse("I cannot tell.", options) is None


# ---- each kind of noise the finalyzer was shown (issue 28, section 2)

def test_an_alternative_equal_to_the_answer_in_other_words_or_units_is_dropped():
    found = Readings([], [Alternative("in units", "14 units", ""), Alternative("as a share", "45.2%", ""),
                          Alternative("as a fraction", "0.452", ""), Alternative("north", "10", "")])
    assert [a.value for a in settle("14", [found], []).alternatives] == ["45.2%", "10"]
    assert [a.value for a in settle("0.452", [found], []).alternatives] == ["14 units", "10"]


def test_alternatives_recorded_twice_in_different_words_are_kept_once():
    found = Readings([], [Alternative("north only", "10", "a"), Alternative("only the north region", "10.0", "b"),
                          Alternative("North only", "11", "c")])
    assert settle("14", [found], []).alternatives == [Alternative("north only", "10", "a")]


def test_stated_figures_are_evidence_never_candidates():
    found = parse_readings("Stated: the report's percentage = 45.2%\nAlternative: reporters = 12")
    settled = settle("40", [found], [])
    assert [a.value for a in settled.alternatives] == ["12"]
    assert settled.stated == [Alternative("the report's percentage", "45.2%", "stated in the data, not computed")]


def test_junk_values_are_dropped():
    found = parse_readings("Alternative: by mean = NaN\nAlternative: by median = nan%\nAlternative: pair = [nan, None]\n"
                           "Alternative: by state = None\nAlternative: by county = 12.5")
    assert [a.value for a in settle("10", [found], []).alternatives] == ["12.5"]


def test_half_of_a_pair_is_not_a_reading_of_a_question_that_asks_for_a_pair():
    found = parse_readings("Alternative: first year only = 1964\nAlternative: other years = [1970, 1976]\n"
                           "Alternative: three years = [1964, 1970, 1976]")
    assert [a.value for a in settle("[1964, 1976]", [found], []).alternatives] == ["[1970, 1976]"]
    # A pair printed without brackets is still a pair; one number with a thousands separator is one number.
    bare = parse_readings("Alternative: other years = 1970, 1976\nAlternative: count = 1,204")
    assert [a.value for a in settle("[1964, 1976]", [bare], []).alternatives] == ["1970, 1976"]
    assert [a.value for a in settle("7", [bare], []).alternatives] == ["1,204"]
    # And a list is not a reading of a question that asks for one number.
    assert [a.value for a in settle("7", [found], []).alternatives] == ["1964"]


def test_a_list_of_names_keeps_a_reading_that_names_more_or_fewer():
    found = parse_readings('Alternative: two sites as one beach = ["City Point Beach", "Pleasure Bay Beach"] (folded)\n'
                           "Alternative: count of beaches = 2\nAlternative: the first = City Point Beach")
    kept = settle('["Castle Island Beach", "Pleasure Bay Beach", "City Point Beach"]', [found], []).alternatives
    assert [a.value for a in kept] == ['["City Point Beach", "Pleasure Bay Beach"]']
    # A pair of numbers with a NaN in it is still a pair of numbers: half of it is no reading.
    half = parse_readings("Alternative: first only = [0.4]\nAlternative: other pair = [0.4, 0.7]")
    assert [a.value for a in settle("[0.5, nan]", [half], []).alternatives] == ["[0.4, 0.7]"]


def test_a_structured_value_stays_structured():
    found = parse_readings("Alternative: mean and years = (11.2, [1964, 1976])\n"
                           "Alternative: by year = {'1964': 11.2, '1976': 9.8} (grouped)")
    assert [(a.value, a.how) for a in found.alternatives] == [("(11.2, [1964, 1976])", ""),
                                                              ("{'1964': 11.2, '1976': 9.8}", "grouped")]


def test_a_label_after_the_equals_sign_is_not_taken_as_the_value():
    found = parse_readings("Alternative: largest group = Active Duty Service Member 920")
    numeric = settle("1204", [found], []).alternatives
    assert numeric == [Alternative("largest group (Active Duty Service Member)", "920", "")]
    named = settle("Veteran", [found], []).alternatives
    assert named == [Alternative("largest group", "Active Duty Service Member", "920")]
    grade = parse_readings("Alternative: the grade column = FIGO grade 2 (mode among the 17 tumours)")
    assert settle("IA", [grade], []).alternatives == [Alternative("the grade column", "FIGO grade 2",
                                                                  "mode among the 17 tumours")]


def test_a_name_and_a_number_stay_one_value_when_the_answer_is_a_name_and_a_number_too():
    """wildfire-hard-7 in the model's seat: 'Eastern Area, 2011' was cut to 'Eastern Area,' beside 'Northwest, 2020'."""
    found = parse_readings("Alternative: lightning-caused acres only = Eastern Area, 2011 (top |Z| over the file)")
    assert settle("Northwest, 2020", [found], []).alternatives == [
        Alternative("lightning-caused acres only", "Eastern Area, 2011", "top |Z| over the file")]
    assert settle("Veteran", [found], []).alternatives == [  # a name alone still keeps the name
        Alternative("lightning-caused acres only", "Eastern Area", "top |Z| over the file; 2011")]


def test_the_chooser_lists_a_reading_that_already_ends_in_its_value_once():
    readings = [Alternative("the median of the 13 samples = 2.4241", "2.4241", chooser.OWN_HOW),
                Alternative("without the excluded case", "2.6563", "")]
    listed = chooser._listed(readings)
    assert listed.splitlines() == ["1. the median of the 13 samples = 2.4241 (the final script's answer)",
                                   "2. without the excluded case = 2.6563"]


def test_an_equals_sign_wins_over_an_arrow_inside_a_reading():
    found = parse_readings("Alternative: 2019 -> 2020 change = 5\nAlternative: by county -> Suffolk")
    assert [(a.reading, a.value) for a in found.alternatives] == [("2019 -> 2020 change", "5"),
                                                                  ("by county", "Suffolk")]


def test_the_coder_is_told_what_differs_in_pandas_3_when_that_is_what_imports(lake):
    import pandas

    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    lake.ask(QUESTION, provider=provider, overrides=FAST)
    coder_prompt = prompts(provider, "coder")[0]
    assert f"pandas {pandas.__version__}" in coder_prompt  # the sandbox runs this interpreter's packages
    said = "`astype(str)` keeps missing values as NaN" in coder_prompt
    assert said == (int(pandas.__version__.split(".")[0]) >= 3)
    assert said == ("`astype(str)` keeps missing values as NaN" in prompts(provider, "finalyzer")[0])


def test_a_budget_spent_before_the_choice_keeps_the_written_answer(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 2 because never asked"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides={**FAST, "llm.max_llm_calls": 4})
    assert answer.text == "14" and answer.chosen == {} and [a["value"] for a in answer.alternatives] == ["10"]
    assert roles(lake, answer) == ["planner", "coder", "verifier", "finalyzer"]  # not finalized a second time
    assert trace(lake, answer.run_id, "budget")[0]["role"] == "chooser"
