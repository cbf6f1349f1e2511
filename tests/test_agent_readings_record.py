"""The run's readings as one record the loop keeps (issue 41 §1), and the final script verified (§2).

Runs are real scripted asks over the small lake (tests/conftest.py): only the model's answers are scripted.
"""

from __future__ import annotations

import io
import json

from agent_helpers import FAST, SUM_WIDGETS, fenced, prompts, run_dir, scripted, trace
from rich.console import Console

from dsstar_lake.agent.final_check import carried
from dsstar_lake.agent.reading_record import Reading, from_records, note, reject, settle
from dsstar_lake.agent.readings import Alternative, Readings, parse_readings, same_value
from dsstar_lake.agent.state import AgentState
from dsstar_lake.terminal.runs import print_answer

QUESTION = "How many widget units were sold in total?"
NORTH_TOO = SUM_WIDGETS + "print('Alternative: north region only = 10')\n"
NORTH_ONLY = """
import csv
rows = list(csv.DictReader(open('data/sales.csv')))
print(sum(int(r['units']) for r in rows if r['product'] == 'widget' and r['region'] == 'north'))
"""


def record_of(lake, answer) -> list[Reading]:
    stored = json.loads((run_dir(lake, answer.run_id) / "answer.json").read_text())
    return from_records(stored["readings"])


def test_numbers_compare_in_any_notation_at_the_rounder_ones_precision():
    assert not same_value("8.097943e-13", "8.021472e-13")  # 1% apart: two values, however tiny
    assert same_value("8.1e-13", "8.097943e-13") and same_value("8.10E-13", "0.00000000000081")
    assert same_value("12.3", "12.34") and not same_value("5", "5.4") and same_value("14", "14.0")
    assert same_value("0.30000000000000004", "0.3") and same_value("45.2%", "0.452")
    record: list[Reading] = []
    note(record, parse_readings("Alternative: reports per state = 8.097943e-13"), "verifier round 1")
    assert [a.value for a in settle(record, "8.021472e-13").alternatives] == ["8.097943e-13"]


def test_numpy_reprs_read_as_plain_numbers_and_a_long_label_is_never_cut():
    found = parse_readings("Alternative: mean of the north rows = np.float64(1.5)\n"
                           "Alternative: counts by year = [np.int64(3), numpy.int64(4)]\n"
                           "Stated: the total row = np.float64(15.0)")
    assert [a.value for a in found.alternatives] == ["1.5", "[3, 4]"] and found.stated[0].value == "15.0"
    label = "same denominator as the answer but " + "with every territory and district counted " * 20
    long = parse_readings(f"Alternative: {label.strip()} = 52 (all rows)").alternatives[0]
    assert long.reading == label.strip() and long.value == "52" and "[…]" not in long.reading


def test_repeats_merge_with_who_named_them_and_a_rejected_reading_stays_rejected():
    record: list[Reading] = []
    note(record, parse_readings("Alternative: north region only = 10 (north rows)"), "verifier round 1")
    note(record, parse_readings("Alternative: North region only = 10\nAlternative: the north = 10.0"),
         "script round 1")
    assert [(r.label, r.by) for r in record] == [("north region only", ["verifier round 1", "script round 1"])]
    reject(record, "north region only", "", "verifier round 2: the question asks for every region")
    note(record, parse_readings("Alternative: north region only = 10"), "final script")
    assert record[0].status == "rejected" and record[0].reason.startswith("verifier round 2")
    assert settle(record, "14").alternatives == []
    # a rejection named before the reading is kept, so that the reading does not come in later
    record = []
    note(record, Readings(rejected=[Alternative("south only", "4", "no south rows count")]), "verifier round 1")
    note(record, parse_readings("Alternative: south only = 4"), "script round 2")
    assert [(r.status, r.reason) for r in record] == [("rejected", "verifier round 1: no south rows count")]
    # a rejection names a planner's reading, not the other reading written beside it
    record = []
    note(record, parse_readings("Assumption: every region counts; other reading: the north region only"),
         "planner round 1")
    reject(record, "the north region only", "", "verifier round 1")
    assert record[0].status == "open"
    reject(record, "Every region counts.", "", "verifier round 1: the south rows are returns")
    assert record[0].status == "rejected"
    note(record, parse_readings("Alternative: the north region only = 10"), "script round 2")
    assert [(r.label, r.status) for r in record][1:] == [("the north region only", "rejected")]
    note(record, parse_readings("Alternative: north rows only = 10\nAlternative: every region counts = 14"), "script")
    assert [(r.label, r.status) for r in record][2:] == [("north rows only", "open")]


def test_a_verifier_alternative_of_an_earlier_round_reaches_the_finalyzer(lake):
    provider = scripted(
        ("planner", "Load data/sales.csv and print its rows."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No\nAlternative: north region only = 10 (the north rows)"),
        ("router", "Add Step"),
        ("planner", "Sum the widget units."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 1 because the question asks for the total"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14"
    assert "Alternative: north region only = 10 (the north rows)" in prompts(provider, "finalyzer")[0]
    assert answer.alternatives == [{"reading": "north region only", "value": "10", "how": "the north rows"}]
    reading = next(r for r in record_of(lake, answer) if r.kind == "alternative")
    assert (reading.by, reading.status) == (["verifier round 1"], "open")


def test_a_rejected_reading_does_not_come_back_from_a_scripts_printed_line(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH_TOO)),
        ("verifier", "No\nRejected: north region only (the question asks for every region)"),
        ("router", "Add Step"),
        ("planner", "Print the total again."),
        ("coder", fenced(NORTH_TOO)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(NORTH_TOO)),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.alternatives == [] and answer.chosen == {}
    assert "north region only" not in prompts(provider, "finalyzer")[0].split("# Readings noted so far")[1]
    [north] = [r for r in record_of(lake, answer) if r.label == "north region only"]
    assert north.status == "rejected" and north.reason == "verifier round 1: the question asks for every region"
    assert north.by == ["script round 2", "final script"]


def test_a_planner_assumption_the_run_disproved_is_not_noted_at_the_end(lake):
    provider = scripted(
        ("planner", "Sum the north widget units in data/sales.csv.\nAssumption: only the north region counts"),
        ("coder", fenced(NORTH_ONLY)),
        ("verifier", "No"),
        ("router", "Step 1"),
        ("planner", "Sum the widget units of every region.\nAssumption: every region counts"),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14" and answer.assumptions == ["every region counts"]
    assert "only the north region" not in prompts(provider, "finalyzer")[0].split("# Readings noted so far")[1]
    statuses = {r.label: (r.status, r.reason) for r in record_of(lake, answer)}
    assert statuses["only the north region counts"] == ("rejected", "the router judged step 1 wrong after round 1")
    assert statuses["every region counts"] == ("chosen", "the answer's reading")


def test_an_alternative_giving_the_answer_merges_into_it_and_repeats_are_one(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH_TOO)),
        ("verifier", "Yes\nAssumption: every region counts\nAlternative: all rows = 14.0 (every row)\n"
                     "Alternative: north region only = 10 (north rows)"),
        ("finalyzer", fenced(SUM_WIDGETS) + "\nAlternative: North region only = 10"),
        ("chooser", "Chosen: 1 because the question asks for the total"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.alternatives == [{"reading": "north region only", "value": "10", "how": "north rows"}]
    by_label = {r.label: r for r in record_of(lake, answer)}
    assert (by_label["all rows"].status, by_label["all rows"].reason) == ("chosen", "gives the answer's value")
    assert by_label["north region only"].by == ["verifier round 1", "script round 1", "finalyzer"]
    assert by_label["every region counts"].status == "chosen"
    assert trace(lake, answer.run_id, "readings")[0]["record"] == [r.to_dict() for r in record_of(lake, answer)]


def test_a_final_script_that_changes_the_method_is_shown_to_the_verifier_and_set_aside(lake, indexed):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(NORTH_ONLY)),  # rewrites the method: only the north rows
        ("verifier", "No"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14"  # what the verified round printed
    assert answer.overridden == {"by": "verifier", "final_script": "10", "answer": "14",
                                 "reason": "the verifier did not accept the final script, which computed what the "
                                           "verified script did not"}
    second = prompts(provider, "verifier")[1]
    assert "Final step: print the answer" in second and "'north'" in second
    assert [e["sufficient"] for e in trace(lake, answer.run_id, "final_check")] == [False]
    assert trace(lake, answer.run_id, "answer_overridden")[0]["final_script"] == "10"
    stored = json.loads((run_dir(lake, answer.run_id) / "answer.json").read_text())
    assert stored["overridden"] == answer.overridden
    out = io.StringIO()
    print_answer(Console(file=out, width=200), answer)
    assert "answer overridden by the verifier: the final script printed 10;" in out.getvalue()


def test_a_final_script_that_only_reprints_is_not_checked_and_an_accepted_change_stands(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS.replace("print(sum(", "print('%.1f' % sum("))),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "14.0" and answer.overridden == {}
    assert len(prompts(provider, "verifier")) == 1 and trace(lake, answer.run_id, "final_check") == []
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(NORTH_ONLY)),
        ("verifier", "Yes"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "10" and answer.overridden == {}
    assert [e["sufficient"] for e in trace(lake, answer.run_id, "final_check")] == [True]


def test_the_chooser_overriding_the_final_scripts_value_is_said_everywhere(lake):
    from serve_helpers import Server, fetch

    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(NORTH_TOO)),
        ("verifier", "Yes\nAlternative: north region only = 10 (north rows)"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        ("chooser", "Chosen: 2 because the data's own figures win\nAnswer: 10"),
    )
    answer = lake.ask(QUESTION, provider=provider, overrides=FAST)
    assert answer.text == "10"
    assert answer.overridden == {"by": "chooser", "final_script": "14", "answer": "10",
                                 "reason": "the data's own figures win"}
    event = trace(lake, answer.run_id, "answer_overridden")[0]
    assert (event["by"], event["final_script"], event["answer"]) == ("chooser", "14", "10")
    statuses = {(r.label, r.value): r.status for r in record_of(lake, answer)}
    assert statuses[("north region only", "10")] == "chosen"
    assert statuses[("the reading the final script took", "14")] == "open"
    with Server(lake) as server:
        code, page, _ = fetch(server.url(f"/runs/{answer.run_id}"))
    assert code == 200 and '<p id="overridden">answer overridden by the chooser: the final script printed 14;' in page
    assert "answer overridden" in lake.run(answer.run_id)._repr_html_()


def test_an_answer_is_carried_by_a_printed_output_in_its_printed_forms():
    printed = "total widget units: 14\nshare north: 0.7142857\nbeaches: ['Ashby Beach', 'Damon Pond']"
    assert carried("14", printed) and carried("71.43%", printed) and carried("0.71", printed)
    assert carried("['Ashby Beach', 'Damon Pond']", printed) and carried("Damon Pond", printed)
    assert not carried("10", printed) and not carried("Walden Pond", printed)


def test_a_state_saved_before_the_record_rebuilds_and_keeps_it():
    state = AgentState("q", readings=[Reading("alternative", "north", "10", by=["verifier round 1"])])
    again = AgentState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.readings == state.readings
    assert AgentState.from_dict({"question": "q"}).readings == []
