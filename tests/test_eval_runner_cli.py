"""`dslake eval kramabench` from the command line: scripted rules, judge, table, results file, resume."""

from __future__ import annotations

import json

import pytest
from agent_helpers import SUM_WIDGETS, WORST_COUNTY, fenced
from click.testing import CliRunner
from dslake_cli.cli import cli

TASKS = [
    {
        "id": "tiny-easy-1",
        "query": "How many widget units were sold in total?",
        "answer": 14,
        "answer_type": "numeric_exact",
        "data_sources": ["sales.csv"],
        "subtasks": [],
    },
    {
        "id": "tiny-easy-2",
        "query": "Which county had the most unhealthy days?",
        "answer": "Kings County",
        "answer_type": "string_approximate",
        "data_sources": ["ozone_by_county.csv"],
    },
    {
        "id": "tiny-hard-1",
        "query": "What was the rainfall in March?",
        "answer": 3.5,
        "answer_type": "numeric_exact",
        "data_sources": ["rainfall.csv"],
    },
]
RULES = [
    {"role": "planner", "match": "widget units", "response": "Sum the widget units in data/sales.csv."},
    {
        "role": "planner",
        "match": "unhealthy days",
        "response": "Find the worst county in data/ozone_by_county.csv.",
    },
    {"role": "coder", "match": "Sum the widget units", "response": fenced(SUM_WIDGETS)},
    {"role": "coder", "match": "worst county", "response": fenced(WORST_COUNTY)},
    {"role": "verifier", "response": "Yes"},
    {"role": "finalyzer", "match": "How many widget units", "response": fenced(SUM_WIDGETS)},
    {"role": "finalyzer", "match": "most unhealthy days", "response": fenced("print('Kings')")},
    {"role": "judge", "match": "Kings County", "response": "Yes"},
]


@pytest.fixture
def setup(indexed, tmp_path, monkeypatch):
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    (tmp_path / "missing.txt").write_text("rainfall.csv\n")
    (tmp_path / "rules.jsonl").write_text("\n".join(json.dumps(r) for r in RULES) + "\n")
    base = [
        "eval",
        "kramabench",
        "--tasks",
        tmp_path / "tasks.json",
        "--lake",
        indexed,
        "--missing",
        tmp_path / "missing.txt",
        "--llm",
        "scripted",
        "--scripted-file",
        tmp_path / "rules.jsonl",
    ]
    return indexed, tmp_path, base


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def runs(lake):
    return sorted(p.name for p in (lake / ".dslake" / "runs").iterdir())


def test_benchmark_table_results_file_judge_and_resume(setup):
    lake, tmp, base = setup
    out = tmp / "results.jsonl"
    done = invoke(*base, "--judge-model", "judge-1", "--out", out, "--jobs", "2")
    assert done.exit_code == 0, done.output
    assert "KramaBench (retrieval)" in done.stdout and "overall" in done.stdout and "100.00" in done.stdout
    assert "skipped 1 task(s)" in done.stdout and "tiny-hard-1" in done.stdout
    assert "judged by judge-1: 1 call(s)" in done.stdout
    assert "2 task(s) to run, 2 at a time; 1 skipped" in done.stderr and "[2/2]" in done.stderr
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"tiny-easy-1", "tiny-easy-2"}
    assert (rows["tiny-easy-1"]["score"], rows["tiny-easy-1"]["method"]) == (1.0, "rule")
    judged = rows["tiny-easy-2"]
    assert (judged["answer"], judged["score"], judged["metric"], judged["method"]) == (
        "Kings",
        1.0,
        "llm_paraphrase",
        "judge",
    )
    calls = [json.loads(line) for line in (tmp / "results.judge.jsonl").read_text().splitlines()]
    assert [(c["role"], c["model"], c["response"]) for c in calls] == [("judge", "judge-1", "Yes")]

    before = runs(lake)
    resumed = invoke(*base, "--judge-model", "judge-1", "--out", out, "--resume", "--json")
    assert resumed.exit_code == 0, resumed.output
    report = json.loads(resumed.stdout)
    assert runs(lake) == before  # nothing was asked again
    assert report["resumed"] == 2 and report["summary"]["overall"] == {
        **report["summary"]["overall"],
        "score": 1.0,
    }
    assert [r["id"] for r in report["results"]] == ["tiny-easy-1", "tiny-easy-2"]
    assert report["skipped"] == [["tiny-hard-1", "sources absent from the lake: ['rainfall.csv']"]]

    again = invoke(*base, "--out", out)
    assert again.exit_code == 2 and "already holds results" in again.stderr and "--resume" in again.stderr


def test_the_runs_own_model_judges_ids_and_oracle_from_the_command_line(setup):
    lake, tmp, base = setup
    result = invoke(*base, "--ids", "tiny-easy-2", "--model", "run-model", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    row = data["results"][0]
    # No --judge-model: the run's provider and model judge ("Kings" is too short for the fuzzy rule).
    assert (row["score"], row["metric"], row["method"], row["judged_by"]) == (1.0, "llm_paraphrase", "judge", "run-model")
    assert data["summary"]["overall"]["fuzzy"] == 0
    text = invoke(*base, "--ids", "tiny-easy-2", "--model", "run-model")
    assert "judged by run-model: 1 call(s)" in text.stdout and "0 row(s) scored by fuzzy matching" in text.stdout

    oracle = invoke(*base, "--ids", "tiny-easy-1", "--oracle", "--json")
    assert oracle.exit_code == 0, oracle.output
    data = json.loads(oracle.stdout)
    assert data["oracle"] is True and [r["id"] for r in data["results"]] == ["tiny-easy-1"]
    assert data["results"][0]["context"] == ["sales.csv"] and data["results"][0]["score"] == 1.0

    unknown = invoke(*base, "--ids", "nope-1")
    assert unknown.exit_code == 2 and "no task with id nope-1" in unknown.stderr


def test_no_model_configured_stops_before_any_task(setup):
    lake, tmp, _ = setup
    result = invoke(
        "eval", "kramabench", "--tasks", tmp / "tasks.json", "--lake", lake, "--out", tmp / "r.jsonl"
    )
    assert result.exit_code == 2 and "no usable model" in result.stderr
    assert not (tmp / "r.jsonl").exists()
