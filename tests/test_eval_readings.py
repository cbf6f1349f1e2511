"""The benchmark's reading diagnostic (issue 21): would an alternative the run recorded have matched the truth?

The score never changes; the row and the summary say how much of what was missed was the reading.
"""

from __future__ import annotations

import json

import pytest
from agent_helpers import FAST, SUM_WIDGETS, fenced
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.eval.results import BenchmarkReport, TaskResult
from dsstar_lake.eval.runner import BenchmarkOptions
from dsstar_lake.eval.tasks import Task
from dsstar_lake.llm.scripted import Rule, ScriptedProvider

WIDGETS = "How many widget units were sold in total?"
WITH_ALTERNATIVE = SUM_WIDGETS + "print('Alternative: north region only = 10')\n"
RULES = [
    {"role": "planner", "match": "widget units",
     "response": "Sum the widget units in data/sales.csv.\nAssumption: all regions; other reading: north only"},
    {"role": "coder", "response": fenced(WITH_ALTERNATIVE)},
    {"role": "verifier", "response": "Yes\nAssumption: Both regions are counted."},
    {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
    {"role": "chooser", "response": "Chosen: 1. both regions because the question's words ask for the total"},
]
TASKS = [
    {"id": "tiny-read-1", "query": WIDGETS, "answer": 10, "answer_type": "numeric_exact",
     "data_sources": ["sales.csv"]},
    {"id": "tiny-read-2", "query": WIDGETS, "answer": 14, "answer_type": "numeric_exact",
     "data_sources": ["sales.csv"]},
]


@pytest.fixture
def base(indexed, tmp_path, monkeypatch):
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    (tmp_path / "rules.jsonl").write_text("\n".join(json.dumps(r) for r in RULES) + "\n")
    return ["eval", "kramabench", "--tasks", tmp_path / "tasks.json", "--lake", indexed, "--missing",
            tmp_path / "tasks.json", "--llm", "scripted", "--scripted-file", tmp_path / "rules.jsonl"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_an_alternative_that_matches_is_counted_beside_an_unchanged_score(base, tmp_path):
    out = tmp_path / "results.jsonl"
    text = invoke(*base, "--out", out, "--jobs", "1")
    assert text.exit_code == 0, text.output
    assert "tiny-read-1: 0.00" in text.stderr and "an other reading matched" in text.stderr
    assert "tiny-read-2: 1.00" in text.stderr and text.stderr.count("an other reading matched") == 1
    assert "alt matched" in text.stdout and "50.00" in text.stdout
    assert "with the best reading of each task the score would be 100.00%" in " ".join(text.stdout.split())

    done = invoke(*base, "--out", out, "--resume", "--json")  # rows read back keep the diagnostic
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    rows = {r["id"]: r for r in report["results"]}
    missed, right = rows["tiny-read-1"], rows["tiny-read-2"]
    assert (missed["answer"], missed["score"]) == ("14", 0.0)  # the score is the chosen answer's, as before
    assert missed["alternatives"] == [{"reading": "north region only", "value": "10",
                                       "how": "printed by the round 1 script"}]
    assert missed["assumptions"] == ["Both regions are counted."]
    assert (missed["alternative_score"], missed["alternative_matched"]) == (1.0, True)
    assert (right["score"], right["alternative_score"], right["alternative_matched"]) == (1.0, None, False)
    overall = report["summary"]["overall"]
    assert overall["score"] == 0.5 and overall["alternative_matched"] == 1
    assert overall["with_alternatives"] == 2 and overall["score_any_reading"] == 1.0
    assert "in 1 task(s) the answer missed but an alternative reading" in report["readings"]
    # Per run: the reading chosen between the differing ones, and the share of wrong answers whose truth was an
    # alternative (issue 28).
    assert missed["chosen"] == {"reading": "Both regions are counted.", "value": "14",
                                "because": "the question's words ask for the total"}
    assert missed["overridden"] == right["overridden"] == {}  # the answers are what the final scripts printed
    assert (overall["wrong"], overall["truth_in_alternatives"], overall["chosen"]) == (1, 1.0, 2)
    assert "100% of the 1 wrong answer(s) had the truth among their alternatives" in report["readings"]
    flat = " ".join(text.stdout.split())
    assert "readings by run" in flat and "Both regions are counted. (the question's words ask for the total)" in flat


def test_rows_written_before_the_diagnostic_read_back_without_it():
    row = TaskResult.from_dict({
        "id": "t-1", "domain": "t", "query": "q", "answer": "1", "parsed": 1, "truth": 2, "answer_type": "numeric_exact",
        "score": 0.0, "metric": "success", "method": "rule", "run_id": None, "files_used": [], "context": [],
        "gold": [], "recall": None, "context_recall": None, "oracle": False,
    })
    assert row.alternatives == [] and row.alternative_score is None and not row.alternative_matched
    report = BenchmarkReport([row], [], 1, False, None)
    assert report.summary()["overall"]["alternative_matched"] == 0
    assert "in 0 task(s)" in report.readings_note()
    assert BenchmarkReport([], [], 0, False, None).readings_note() == "no task was scored"


def test_alternatives_are_scored_by_the_answers_own_judge_and_a_failing_one_costs_nothing(lake):
    county = Task(id="tiny-read-3", query="Which county had the most unhealthy days?", domain="tiny",
                  answer="Queens County", answer_type="string_approximate", data_sources=["ozone_by_county.csv"])
    provider = ScriptedProvider([
        Rule(role="planner", response="Find the worst county in data/ozone_by_county.csv."),
        Rule(role="coder", response=fenced("print('Kings')")),
        Rule(role="verifier", response="Yes"),
        Rule(role="finalyzer", response=fenced("print('Kings')") + "\nAlternative: fewest days = Queens (min)"),
        Rule(role="chooser", response="Chosen: 1 because the question's words ask for the most days"),
    ])
    asked = []

    def judge(predicted, truth):
        asked.append(predicted)
        return truth.startswith(predicted)

    report = lake.benchmark([county], BenchmarkOptions(overrides=dict(FAST)), provider=provider, judge=judge)
    row = report.results[0]
    assert (row.score, row.alternative_score, row.alternative_matched) == (0.0, 1.0, True)
    assert asked == ["Kings", "Queens"]

    def broken(predicted, truth):
        if predicted == "Queens":
            raise RuntimeError("a bug in the judge")
        return False

    row = lake.benchmark([county], BenchmarkOptions(overrides=dict(FAST)), provider=provider,
                        judge=broken).results[0]
    assert (row.score, row.error, row.alternative_score, row.alternative_matched) == (0.0, None, 0.0, False)


def test_no_judge_asks_no_model_and_a_withheld_truth_is_run_but_never_scored(indexed, tmp_path, monkeypatch):
    county = "Which county had the most unhealthy days?"
    tasks = [{"id": "tiny-judge-1", "query": county, "answer": "Queens County", "answer_type": "string_approximate",
              "data_sources": ["ozone_by_county.csv"]},
             {"id": "tiny-judge-2", "query": county, "answer_type": "string_approximate",
              "data_sources": ["ozone_by_county.csv"]}]  # the truth withheld
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    rules = [{"role": "planner", "response": "Find the worst county in data/ozone_by_county.csv."},
             {"role": "coder", "response": fenced("print('Queens')")},
             {"role": "verifier", "response": "Yes"},
             {"role": "finalyzer", "response": fenced("print('Queens')")}]  # no rule answers a judge
    (tmp_path / "rules.jsonl").write_text("\n".join(json.dumps(r) for r in rules) + "\n")
    done = invoke("eval", "kramabench", "--tasks", tmp_path / "tasks.json", "--lake", indexed, "--missing",
                  tmp_path / "tasks.json", "--llm", "scripted", "--scripted-file", tmp_path / "rules.jsonl",
                  "--no-judge", "--jobs", "1", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    rows = {r["id"]: r for r in report["results"]}
    assert report["judge"] is None
    assert (rows["tiny-judge-1"]["judged_by"], rows["tiny-judge-1"]["judge_error"]) == ("fuzzy", None)
    assert rows["tiny-judge-2"]["method"] == "withheld" and rows["tiny-judge-2"]["answer"] == "Queens"
    overall = report["summary"]["overall"]
    assert (overall["n"], overall["withheld"]) == (2, 1)
    assert overall["score"] == rows["tiny-judge-1"]["score"]  # the withheld task is not a zero in the score
