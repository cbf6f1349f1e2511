"""Readings through the command line (issue 21): ask prints them under the answer, --json and runs show keep them;
a person answering through --llm manual can follow the formats the prompts state."""

from __future__ import annotations

import json
import threading

import pytest
from agent_helpers import SUM_WIDGETS, fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli

WITH_ALTERNATIVE = SUM_WIDGETS + "print('Alternative: north region only = 10')\n"
QUESTION = "How many widget units were sold in total?"


@pytest.fixture
def lake(tmp_path, monkeypatch):
    return write_table_lake(tmp_path / "lake")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_ask_prints_readings_under_the_answer_and_json_and_runs_show_keep_them(lake, tmp_path):
    rules = rules_file(
        tmp_path / "rules.jsonl",
        {"role": "planner", "response": "Sum the widget units in data/sales.csv.\n"
                                        "Assumption: all regions; other reading: north only"},
        {"role": "coder", "response": fenced(WITH_ALTERNATIVE)},
        {"role": "verifier", "response": "Yes\nAssumption: Both regions are counted.\n"
                                         "Alternative: north region only = 10 (north rows only)"},
        {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
        {"role": "chooser", "response": "Chosen: 1. both regions because the question's words ask for the total\n"
                                        "Answer: 14"},
    )
    args = ("ask", QUESTION, "--lake", lake, "--files", "sales.csv", "--llm", "scripted", "--scripted-file", rules)
    text = invoke(*args)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    start = lines.index("assumptions:")
    assert lines[start:start + 4] == ["assumptions:", "  - Both regions are counted.", "other readings:",
                                      "  - north region only: 10 (north rows only)"]
    assert start < next(i for i, line in enumerate(lines) if line.startswith("files used:"))
    # The readings differed (14 against 10): the chosen one is printed with the answer, and why.
    assert lines[start - 1] == "chosen reading: Both regions are counted. because the question's words ask for the total"

    answer = json.loads(invoke(*args, "--json").stdout)
    assert answer["value"] == "14" and answer["assumptions"] == ["Both regions are counted."]
    assert answer["alternatives"] == [{"reading": "north region only", "value": "10", "how": "north rows only"}]
    assert answer["chosen"] == {"reading": "Both regions are counted.", "value": "14",
                                "because": "the question's words ask for the total"}

    shown = invoke("runs", "show", answer["run_id"], "--lake", lake)
    assert shown.exit_code == 0 and "Both regions are counted." in shown.stdout
    assert "north region only: 10" in shown.stdout
    # The planner's assumption stays under its step in the plan, on a line of its own.
    assert "  1. Sum the widget units in data/sales.csv.\n     Assumption: all regions; other reading: north only" \
        in shown.stdout
    plan_md = (lake / ".dslake" / "runs" / answer["run_id"] / "plan.md").read_text()
    assert "1. Sum the widget units in data/sales.csv.\n   Assumption: all regions; other reading: north only" \
        in plan_md
    stored = json.loads(invoke("runs", "show", answer["run_id"], "--lake", lake, "--json").stdout)["answer"]
    assert stored["assumptions"] == answer["assumptions"] and stored["alternatives"] == answer["alternatives"]
    assert stored["chosen"] == answer["chosen"] and "chosen reading: Both regions are counted." in shown.stdout


def test_an_answer_without_readings_prints_no_reading_lines(lake, tmp_path):
    rules = rules_file(
        tmp_path / "rules.jsonl",
        {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
        {"role": "coder", "response": fenced(SUM_WIDGETS)},
        {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
    )
    done = invoke("ask", QUESTION, "--lake", lake, "--files", "sales.csv", "--llm", "scripted",
                  "--scripted-file", rules)
    assert done.exit_code == 0, done.output
    assert "assumptions:" not in done.stdout and "other readings:" not in done.stdout


class Person(threading.Thread):
    """Answer prompt files as a person would: by the role in the file name, in the format the prompt states."""

    FORMATS = {  # what each prompt must say about its answer for a person to follow it
        "planner": "`Assumption: <your reading>; other reading: <the main alternative>`",
        "coder": "`Alternative: <reading> = <value>`",
        "verifier": "Alternative: <another reading> = <its value, only if the result shows it and it differs",
        "finalyzer": "Alternative: <another reading> = <its value> (<how it was computed>)",
        "chooser": "Chosen: <the reading's number>. <the reading, in a few words> because <the principle",
    }
    ANSWERS = {
        "planner": "Sum the widget units in data/sales.csv.\nAssumption: all regions; other reading: north only",
        "coder": fenced(WITH_ALTERNATIVE),
        "verifier": "Yes\nAssumption: Both regions are counted.",
        "finalyzer": fenced(SUM_WIDGETS) + "\nAssumption: Both regions are counted (north and south).\n"
                     "Alternative: north region only = 10 (the north rows of sales.csv)",
        "chooser": "Chosen: 1. both regions because the question asks for the total\nAnswer: 14",
    }

    def __init__(self, folder):
        super().__init__(daemon=True)
        self.folder, self.stop, self.problems = folder, threading.Event(), []

    def run(self):
        while not self.stop.is_set():
            for prompt in sorted(self.folder.glob("*.prompt.md")) if self.folder.is_dir() else []:
                response = prompt.with_name(prompt.name.replace(".prompt.md", ".response.md"))
                if response.exists():
                    continue
                role = prompt.name.split("-", 1)[1].removesuffix(".prompt.md")
                if self.FORMATS[role] not in prompt.read_text():
                    self.problems.append(f"{prompt.name} does not state {self.FORMATS[role]!r}")
                response.write_text(self.ANSWERS[role])
            self.stop.wait(0.02)


def test_a_person_answering_through_manual_files_can_give_readings(lake, tmp_path):
    folder = tmp_path / "manual"
    person = Person(folder)
    person.start()
    try:
        done = invoke("ask", QUESTION, "--lake", lake, "--files", "sales.csv", "--llm", "manual",
                      "--manual-dir", folder, "--json")
    finally:
        person.stop.set()
    assert done.exit_code == 0, done.output
    assert person.problems == []
    answer = json.loads(done.stdout)
    assert answer["value"] == "14"
    assert answer["assumptions"] == ["Both regions are counted (north and south)."]
    assert answer["alternatives"] == [{"reading": "north region only", "value": "10",
                                       "how": "the north rows of sales.csv"}]
