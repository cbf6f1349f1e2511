"""The benchmark counts file choice (issue 45): precision, recall and F1 against the gold files of the entries a run
selected for its first round and of the files its scripts read, per task, per domain and overall."""

from __future__ import annotations

import io
import json
import re

import pytest
from agent_helpers import FAST, SUM_WIDGETS, fenced, run_dir
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.eval.filescore import FileScore, coverage, file_score, selection_score
from dsstar_lake.eval.results import BenchmarkReport, TaskResult
from dsstar_lake.eval.runner import BenchmarkOptions
from dsstar_lake.eval.tasks import Task
from dsstar_lake.llm.scripted import Rule, ScriptedProvider
from dsstar_lake.terminal.console import CliConsole
from dsstar_lake.terminal.results import print_benchmark_report

GOLD = ["s/daily/r_2024-01-01.csv", "s/daily/r_2024-01-02.csv", "trips/year=2024/part-0.parquet", "a[1].csv"]
WIDGETS = "How many widget units were sold in total?"


def test_a_glob_or_a_dataset_folder_covers_every_gold_file_it_holds():
    # A family glob covers two gold files, a dataset's folder one, notes.md none; a repeat counts once.
    score = file_score(GOLD, ["s/daily/r_*.csv", "trips", "notes.md", "s/daily/r_*.csv"])
    assert score == FileScore(precision=0.6667, recall=0.75, f1=0.7059)
    assert coverage(GOLD, ["trips/"]) == 0.25 and coverage(GOLD, ["trip"]) == 0.0  # a folder, not a name's prefix
    assert coverage(GOLD, ["a[1].csv"]) == 0.25 and coverage(GOLD, ["a?1?.csv"]) == 0.0  # brackets are literal
    assert file_score(GOLD, []) == FileScore(precision=None, recall=0.0, f1=0.0)  # nothing listed: no precision
    assert file_score(GOLD, ["x.csv"]) == FileScore(precision=0.0, recall=0.0, f1=0.0)
    assert file_score([], ["x.csv"]) is None  # no gold files: nothing to score against


def test_only_a_selection_the_agent_made_is_scored():
    picked = [{"path": "s/daily/r_*.csv", "reason": "the daily readings"}, {"path": "a[1].csv", "reason": "b"}]
    assert selection_score(GOLD, picked, "selector") == FileScore(precision=1.0, recall=0.75, f1=0.8571)
    assert selection_score(GOLD, picked[:1], "relevance") == FileScore(precision=1.0, recall=0.5, f1=0.6667)
    assert selection_score(GOLD, picked, "given") is None  # --files / --oracle: the user chose
    assert selection_score(GOLD, [], "") is None  # a run from before the selection existed
    assert selection_score(GOLD, [], "selector") == FileScore(precision=None, recall=0.0, f1=0.0)  # chose nothing


def row(task_id: str, domain: str, gold: list[str], read: list[str], selection: list[dict[str, str]],
        by: str) -> TaskResult:
    result = TaskResult(id=task_id, domain=domain, query="q", answer="1", parsed=1, truth=1,
                        answer_type="numeric_exact", score=1.0, metric="success", method="rule", run_id="r",
                        files_used=read, context=[], gold=gold, recall=coverage(gold, read),
                        context_recall=None, oracle=False, selection=selection, selected_by=by)
    result.score_files()
    return result


def test_rows_with_and_without_a_selection_are_summed_per_domain_and_printed():
    chose = row("x-1", "x", ["a.csv"], ["a.csv", "notes.md"],
                [{"path": "a.csv", "reason": "the sales"}, {"path": "b.csv", "reason": "the prices"}], "selector")
    given = row("x-2", "x", ["a.csv"], ["a.csv"], [{"path": "a.csv", "reason": ""}], "given")
    old = TaskResult.from_dict({  # a row written before rows carried a selection or file scores
        "id": "y-1", "domain": "y", "query": "q", "answer": "1", "parsed": 1, "truth": 2,
        "answer_type": "numeric_exact", "score": 0.0, "metric": "success", "method": "rule", "run_id": None,
        "files_used": ["b.csv", "c.csv"], "context": [], "gold": ["b.csv"], "recall": 1.0, "context_recall": None,
        "oracle": False})
    assert (chose.selection_precision, chose.selection_recall, chose.selection_f1) == (0.5, 1.0, 0.6667)
    assert (chose.reads_precision, chose.reads_recall, chose.reads_f1) == (0.5, 1.0, 0.6667)
    assert (given.selection_precision, given.selection_recall, given.selection_f1) == (None, None, None)
    assert (given.reads_precision, given.reads_recall, given.reads_f1) == (1.0, 1.0, 1.0)
    assert old.selected_by == "" and old.selection_f1 is None  # null, not 0: it made no selection
    assert (old.reads_precision, old.reads_recall, old.reads_f1) == (0.5, 1.0, 0.6667)  # scored from its reads

    report = BenchmarkReport([chose, given, old], [], 0, False, None)
    summary = report.summary()
    assert (summary["x"]["selected"], summary["x"]["selection_f1"], summary["x"]["reads_f1"]) == (1, 0.6667, 0.8334)
    assert (summary["y"]["selected"], summary["y"]["selection_precision"], summary["y"]["reads_precision"]) == (
        0, None, 0.5)
    overall = summary["overall"]
    assert (overall["selected"], overall["selection_precision"], overall["selection_recall"]) == (1, 0.5, 1.0)
    assert (overall["reads_precision"], overall["reads_recall"], overall["reads_f1"]) == (0.6667, 1.0, 0.7778)
    data = json.loads(json.dumps(report.to_dict()))
    first = data["results"][0]
    assert first["selection"] == chose.selection and first["selected_by"] == "selector"
    assert (first["selection_f1"], data["results"][1]["selection_f1"]) == (0.6667, None)

    out = io.StringIO()
    print_benchmark_report(CliConsole(file=out, width=100), report)  # piped: a table kept whole, no colour
    cells = [re.split(" {2,}", line.strip()) for line in out.getvalue().splitlines()]  # piped: plain columns
    lines = {cell[0]: cell for cell in cells if len(cell) > 10}
    header = lines["domain"]
    selected, read = header.index("selected P/R/F1 %"), header.index("read P/R/F1 %")
    assert (lines["x"][selected], lines["x"][read]) == ("50/100/67 (1)", "75/100/83")
    assert (lines["y"][selected], lines["y"][read]) == ("-", "50/100/67")
    assert (lines["overall"][selected], lines["overall"][read]) == ("50/100/67 (1)", "67/100/78")


def widgets_model() -> ScriptedProvider:
    return ScriptedProvider([
        Rule(role="planner", response="Sum the widget units in data/sales.csv."),
        Rule(role="coder", response=fenced(SUM_WIDGETS)),
        Rule(role="verifier", response="Yes"),
        Rule(role="finalyzer", response=fenced(SUM_WIDGETS)),
        Rule(role="selector", response="data/sales.csv — the units sold, by product"),
    ])


@pytest.mark.parametrize("oracle", [False, True])
def test_each_row_carries_the_runs_selection_and_the_scores_of_its_selection_and_reads(lake, oracle):
    task = Task(id="tiny-sel-1", query=WIDGETS, domain="tiny", answer=14, answer_type="numeric_exact",
                data_sources=["sales.csv"])
    result = lake.benchmark([task], BenchmarkOptions(overrides=dict(FAST), oracle=oracle),
                            provider=widgets_model()).results[0]
    assert result.score == 1.0 and result.files_used == ["sales.csv"]
    stored = json.loads((run_dir(lake, result.run_id) / "answer.json").read_text())
    # The row keeps what the run's answer.json says was selected, and by whom.
    assert (result.selection, result.selected_by) == (stored["selection"], stored["selected_by"])
    expected = selection_score(result.gold, result.selection, result.selected_by)
    assert result.selection_f1 == (expected.f1 if expected else None)
    if oracle:
        assert result.selected_by in ("", "given") and result.selection_f1 is None  # the user gave the files
    elif result.selected_by == "selector":  # the selector chose exactly the task's file
        assert result.selection == [{"path": "sales.csv", "reason": "the units sold, by product"}]
        assert (result.selection_precision, result.selection_recall, result.selection_f1) == (1.0, 1.0, 1.0)
    assert (result.reads_precision, result.reads_recall, result.reads_f1) == (1.0, 1.0, 1.0)


def test_the_command_prints_the_file_scores_per_task_and_per_domain_and_json_keeps_them(indexed, tmp_path):
    (tmp_path / "tasks.json").write_text(json.dumps([{"id": "tiny-sel-2", "query": WIDGETS, "answer": 14,
                                                      "answer_type": "numeric_exact",
                                                      "data_sources": ["sales.csv"]}]))
    rules = [{"role": "planner", "response": "Sum the widget units in data/sales.csv."},
             {"role": "coder", "response": fenced(SUM_WIDGETS)}, {"role": "verifier", "response": "Yes"},
             {"role": "finalyzer", "response": fenced(SUM_WIDGETS)}]
    (tmp_path / "rules.jsonl").write_text("\n".join(json.dumps(r) for r in rules) + "\n")
    out = tmp_path / "results.jsonl"
    base = ["eval", "kramabench", "--tasks", tmp_path / "tasks.json", "--lake", indexed, "--missing",
            tmp_path / "tasks.json", "--llm", "scripted", "--scripted-file", tmp_path / "rules.jsonl", "--oracle",
            "--out", out]
    done = CliRunner().invoke(cli, [str(a) for a in base], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "tiny-sel-2: 1.00" in done.stderr and "read F1 1.00" in done.stderr
    assert "selected F1" not in done.stderr  # oracle files are given: no selection to score
    flat = " ".join(done.stdout.split())
    assert "selected P/R/F1 %" in flat and "read P/R/F1 %" in flat and "100/100/100" in flat
    again = CliRunner().invoke(cli, [str(a) for a in [*base, "--resume", "--json"]], catch_exceptions=False)
    report = json.loads(again.stdout)
    overall = report["summary"]["overall"]
    assert (overall["selected"], overall["selection_f1"], overall["reads_f1"]) == (0, None, 1.0)
    written = json.loads(out.read_text().splitlines()[0])
    assert (written["selection_precision"], written["reads_precision"], written["reads_recall"]) == (None, 1.0, 1.0)
