"""dslake ask and dslake runs through the command line: scripted rules file, given files, exit codes, JSON."""

from __future__ import annotations

import json

import pytest
from agent_helpers import SUM_WIDGETS, TOP_REGION_ONLY, fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli


@pytest.fixture
def lake(tmp_path, monkeypatch):
    return write_table_lake(tmp_path / "lake")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_ask_json_then_runs_list_and_show(lake, tmp_path):
    rules = rules_file(
        tmp_path / "rules.jsonl",
        {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
        {"role": "coder", "response": fenced(SUM_WIDGETS)},
        {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
    )
    done = invoke("ask", "How many widget units?", "--lake", lake, "--files", "sales.csv", "--llm", "scripted",
                  "--scripted-file", rules, "--json")
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["value"] == "14" and answer["verified"] and answer["files_used"] == ["sales.csv"]
    stored = json.loads((lake / ".dslake" / "runs" / answer["run_id"] / "answer.json").read_text())
    # --json is answer.json under the dslake.ask/1 schema, its seconds rounded (docs/json.md)
    assert answer.pop("schema") == "dslake.ask/1" and answer.pop("seconds") == round(stored.pop("seconds"), 3)
    assert stored == answer

    listed = json.loads(invoke("runs", "--lake", lake, "--json").stdout)["runs"]
    assert [(r["id"], r["status"], r["answer"]) for r in listed] == [(answer["run_id"], "done", "14")]
    shown = invoke("runs", "show", answer["run_id"], "--lake", lake)
    assert shown.exit_code == 0
    assert "Sum the widget units" in shown.stdout and "sufficient" in shown.stdout and "14" in shown.stdout
    text = invoke("ask", "How many widget units?", "--lake", lake, "--files", "sales.csv", "--llm", "scripted",
                  "--scripted-file", rules)
    assert text.exit_code == 0
    assert "14" in text.stdout and "files used: sales.csv" in text.stdout and "run 20" in text.stdout


def test_no_model_configured_is_one_message_and_exit_2(lake):
    result = invoke("ask", "How many widget units?", "--lake", lake)
    assert result.exit_code == 2
    assert "no usable model" in result.stderr
    assert "GEMINI_API_KEY" in result.stderr and "--llm openai --base-url" in result.stderr
    assert "--llm manual" in result.stderr and "Traceback" not in result.output


def test_interrupted_run_resumes_from_the_command_line(lake, tmp_path):
    broken = rules_file(
        tmp_path / "broken.jsonl",
        {"role": "planner", "response": "Sum the units per region of data/sales.csv."},
        {"role": "coder", "response": fenced(TOP_REGION_ONLY)},
        {"role": "verifier", "response": "server went away", "error": "fatal"},
    )
    first = invoke("ask", "Which region sold the most units?", "--lake", lake, "--files", "sales.csv",
                   "--llm", "scripted", "--scripted-file", broken)
    assert first.exit_code == 5
    run_id = json.loads(invoke("runs", "list", "--lake", lake, "--json").stdout)["runs"][0]["id"]
    assert f"dslake runs resume {run_id}" in first.stderr and "server went away" in first.stderr
    fixed = rules_file(
        tmp_path / "fixed.jsonl",
        {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": fenced(TOP_REGION_ONLY)},
    )
    resumed = invoke("runs", "resume", run_id, "--lake", lake, "--scripted-file", fixed, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["value"] == "north"
    missing = invoke("runs", "show", "nope", "--lake", lake)
    assert missing.exit_code == 2 and "no run 'nope'" in missing.stderr
