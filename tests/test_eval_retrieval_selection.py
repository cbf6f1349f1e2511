"""`dslake eval retrieval` with a model: the selector asked once per task over the run's menu, its choice scored
against the task's files and the first prompt built from it measured; without a model, the same figures as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_helpers import rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli

from dsstar_lake.lake import Lake

NORTH = "How many widget units were sold in the north region, and which county had the most unhealthy ozone days?"
OZONE = "Which county had the most unhealthy ozone days in 2024?"
SENSOR = "What was the mean temperature of sensor s1 on 2024-01-03?"


@pytest.fixture(scope="module")
def lake_and_tasks(tmp_path_factory) -> tuple[Path, Path]:
    """The small table lake, indexed, and three tasks with their files."""
    base = tmp_path_factory.mktemp("selretr")
    root = write_table_lake(base / "lake")
    Lake.open(root).index()
    tasks = base / "tasks.jsonl"
    rows = [{"id": "north-1", "query": NORTH, "files": ["sales.csv", "ozone_by_county.csv"]},
            {"id": "ozone-2", "query": OZONE, "files": ["ozone_by_county.csv"]},
            {"id": "sensor-3", "query": SENSOR, "files": ["sensors/daily/readings_2024-01-03.csv"]}]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root, tasks


def run(root: Path, tasks: Path, *extra: str):
    result = CliRunner().invoke(cli, ["eval", "retrieval", "--tasks", str(tasks), "--lake", str(root), "-k", "1,5",
                                      *extra])
    return result


def test_the_selector_s_choice_is_scored_and_its_first_prompt_measured(lake_and_tasks, tmp_path):
    root, tasks = lake_and_tasks
    rules = rules_file(
        tmp_path / "rules.jsonl",
        # One of the two files the task needs: precision 1, recall 1/2.
        {"role": "selector", "match": "north region", "response": "- data/sales.csv — units sold per region"},
        # The file needed and one not: precision 1/2, recall 1.
        {"role": "selector", "match": "ozone days in 2024",
         "response": "data/ozone_by_county.csv — unhealthy days per county\ndata/sales.csv — just in case"},
        # Never a candidate, not even after the reminder: the relevance order chooses, and says why.
        {"role": "selector", "match": "sensor s1", "response": "I would look at the weather."},
    )
    result = run(root, tasks, "--llm", "scripted", "--scripted-file", rules, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by_id = {t["id"]: t for t in report["tasks"]}

    north = by_id["north-1"]["selection"]
    assert north["selected_by"] == "selector" and north["selected"] == ["sales.csv"]
    assert (north["precision"], north["recall"], north["f1"]) == (1.0, 0.5, 0.6667)
    # What was chosen is whole; the other needed file is one line of the menu.
    assert north["levels"] == {"sales.csv": "whole", "ozone_by_county.csv": "named"}
    assert not north["all_whole"]

    ozone = by_id["ozone-2"]["selection"]
    assert ozone["selected"] == ["ozone_by_county.csv", "sales.csv"]
    assert (ozone["precision"], ozone["recall"], ozone["f1"]) == (0.5, 1.0, 0.6667)
    assert ozone["levels"] == {"ozone_by_county.csv": "whole"} and ozone["all_whole_strict"]
    assert ozone["prompt_tokens"] > 0

    sensor = by_id["sensor-3"]
    assert sensor["selection"]["selected_by"] == "relevance"
    assert sensor["selection"]["why"] == "the selector's answer named no candidate"
    # Without a choice the first prompt is the fallback's, as the model-free figures measure it.
    assert sensor["selection"]["levels"] == sensor["levels"]
    assert sensor["selection"]["prompt_tokens"] == sensor["prompt_tokens"]

    overall = report["summary"]["overall"]["selection"]
    assert overall["n"] == 3 and overall["by_selector"] == 2
    assert overall["f1"] == round((0.6667 + 0.6667 + sensor["selection"]["f1"]) / 3, 4)
    assert sum(overall["levels"].values()) == 4

    text = run(root, tasks, "--llm", "scripted", "--scripted-file", rules)
    assert text.exit_code == 0, text.output
    assert "selection per task" in text.stdout and "100/50/67" in text.stdout and "50/100/67" in text.stdout
    assert "the relevance order chose where the selector's answer named no candidate" in text.stdout


def test_without_a_model_nothing_is_asked_and_the_fallback_is_measured(lake_and_tasks):
    root, tasks = lake_and_tasks
    result = run(root, tasks, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert all("selection" not in t for t in report["tasks"])
    assert "selection" not in report["summary"]["overall"]
    # The first prompt without a selection: every file of this small lake fits whole.
    assert all(level == "whole" for t in report["tasks"] for level in t["levels"].values())
    overall = report["summary"]["overall"]
    assert overall["all_whole_strict"] == 1.0 and overall["prompt_tokens"] > 0
    text = run(root, tasks)
    assert text.exit_code == 0 and "selection per task" not in text.stdout and "prompt tok" in text.stdout


def test_a_model_flag_without_a_usable_model_is_one_clear_error(lake_and_tasks):
    root, tasks = lake_and_tasks
    result = run(root, tasks, "--llm", "openai")
    assert result.exit_code != 0
    assert "no usable model" in result.output and "Traceback" not in result.output
