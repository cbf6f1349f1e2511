"""The benchmark runner end to end: scripted model through the real call site, real sandbox, real catalog."""

from __future__ import annotations

import json

import pytest
from agent_helpers import FAST, SUM_WIDGETS, WORST_COUNTY, fenced, prompts, run_dir, trace
from conftest import write_table_lake
from llm_harness import llm_settings

from dsstar_lake.base.errors import CatalogError, UsageError
from dsstar_lake.eval.filescore import coverage
from dsstar_lake.eval.judge import make_judge
from dsstar_lake.eval.runner import (
    BenchmarkOptions,
    benchmark_guidelines,
    load_benchmark,
    score_answer,
)
from dsstar_lake.eval.tasks import Task
from dsstar_lake.lake import Lake
from dsstar_lake.llm.scripted import Rule, ScriptedProvider

WIDGETS = Task(
    id="tiny-easy-1",
    query="How many widget units were sold in total?",
    domain="tiny",
    answer=14,
    answer_type="numeric_exact",
    data_sources=["sales.csv"],
)
COUNTY = Task(
    id="tiny-easy-2",
    query="Which county had the most unhealthy days?",
    domain="tiny",
    answer="Kings",
    answer_type="string_exact",
    data_sources=["ozone_by_county.csv"],
)
REGION = Task(
    id="other-hard-1",
    query="Which region sold the most units?",
    domain="other",
    answer="north",
    answer_type="string_exact",
    data_sources=["sales.csv"],
)
ABSENT = Task(
    id="tiny-hard-2",
    query="What was the rainfall in March?",
    domain="tiny",
    answer=3.5,
    answer_type="numeric_exact",
    data_sources=["rainfall.csv"],
)
PRINT_QUEENS = "print('Queens')"


def model() -> ScriptedProvider:
    """Right about widgets, wrong about the county, and dead on the region question."""
    return ScriptedProvider(
        [
            Rule(
                role="planner",
                match="How many widget units",
                response="Sum the widget units in data/sales.csv.",
            ),
            Rule(
                role="planner",
                match="most unhealthy days",
                response="Find the worst county in data/ozone_by_county.csv.",
            ),
            Rule(role="planner", match="region sold", response="the model server crashed", error="fatal"),
            Rule(role="coder", match="Sum the widget units", response=fenced(SUM_WIDGETS)),
            Rule(role="coder", match="worst county", response=fenced(WORST_COUNTY)),
            Rule(role="verifier", response="Yes"),
            Rule(role="finalyzer", match="How many widget units", response=fenced(SUM_WIDGETS)),
            Rule(role="finalyzer", match="most unhealthy days", response=fenced(PRINT_QUEENS)),
        ]
    )


def options(**kw):
    return BenchmarkOptions(overrides=dict(FAST), missing=["rainfall.csv"], **kw)


def rows_of(path):
    return {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_right_wrong_and_erroring_tasks_are_scored_and_written(lake, tmp_path):
    out = tmp_path / "results.jsonl"
    events = []
    report = lake.benchmark(
        [WIDGETS, COUNTY, REGION, ABSENT],
        options(out=out, jobs=3),
        provider=model(),
        progress=lambda event, data: events.append((event, data)),
    )
    rows = rows_of(out)
    assert set(rows) == {"tiny-easy-1", "tiny-easy-2", "other-hard-1"}
    right, wrong, failed = rows["tiny-easy-1"], rows["tiny-easy-2"], rows["other-hard-1"]

    assert (right["score"], right["metric"], right["method"]) == (1.0, "success", "rule")
    assert (
        right["answer"] == "14" and right["parsed"] == 14 and right["truth"] == 14 and right["error"] is None
    )
    assert right["files_used"] == ["sales.csv"] and right["gold"] == ["sales.csv"] and right["recall"] == 1.0
    assert "sales.csv" in right["context"] and right["context_recall"] == 1.0
    assert right["llm_calls"] == 4 and right["tokens"] == right["input_tokens"] + right["output_tokens"] > 0
    assert right["cost_usd"] > 0 and right["verified"] and not right["oracle"]
    stored = json.loads((run_dir(lake, right["run_id"]) / "answer.json").read_text())
    assert stored["value"] == "14" and stored["question"] == WIDGETS.query

    assert (wrong["score"], wrong["method"], wrong["answer"], wrong["parsed"]) == (
        0.0,
        "rule",
        "Queens",
        "Queens",
    )
    assert wrong["truth"] == "Kings" and wrong["error"] is None
    assert wrong["files_used"] == ["ozone_by_county.csv"] and wrong["recall"] == 1.0  # read by the last round

    assert (failed["score"], failed["method"], failed["metric"]) == (0.0, "error", "success")
    assert "the model server crashed" in failed["error"] and failed["run_id"]
    assert json.loads((run_dir(lake, failed["run_id"]) / "run.json").read_text())["status"] == "interrupted"

    assert report.skipped == [("tiny-hard-2", "sources absent from the lake: ['rainfall.csv']")]
    assert [r.id for r in report.results] == ["tiny-easy-1", "tiny-easy-2", "other-hard-1"]  # task order
    summary = report.summary()
    assert summary["overall"]["n"] == 3 and summary["overall"]["score"] == round(1 / 3, 4)
    assert summary["tiny"]["score"] == 0.5 and summary["other"]["errors"] == 1
    assert summary["overall"]["recall"] == round(2 / 3, 4)  # the failed run read nothing
    assert list(summary) == ["other", "tiny", "overall"]
    assert events[0] == ("plan", {"tasks": 3, "todo": 3, "resumed": 0, "skipped": 1, "jobs": 3})
    assert sorted(data["done"] for event, data in events if event == "task") == [1, 2, 3]
    # No eval.judge_model: the run's own model would judge string_approximate answers (none here).
    assert report.judge["model"] == lake.settings["llm.model"] and report.judge["calls"] == 0
    assert all(r.judged_by is None for r in report.results)


def test_resume_skips_finished_tasks_without_calling_the_model(lake, tmp_path):
    out = tmp_path / "results.jsonl"
    provider = model()
    lake.benchmark([WIDGETS, COUNTY], options(out=out), provider=provider)
    calls = len(provider.calls)
    assert calls > 0

    again = lake.benchmark([WIDGETS, COUNTY], options(out=out, resume=True), provider=provider)
    assert len(provider.calls) == calls
    assert again.resumed == 2 and [r.score for r in again.results] == [1.0, 0.0]

    with open(out, "a") as fh:
        fh.write('{"id": "other-hard-1", "sco')  # a row torn by a kill: redone, and the file stays readable
    third = lake.benchmark([WIDGETS, COUNTY, REGION], options(out=out, resume=True), provider=provider)
    assert [role for role, _ in provider.calls[calls:]] == ["planner"]  # only the region task ran
    assert third.resumed == 2 and [r.id for r in third.results] == [
        "tiny-easy-1",
        "tiny-easy-2",
        "other-hard-1",
    ]
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[-1])["id"] == "other-hard-1"

    with pytest.raises(UsageError, match="already holds results"):
        lake.benchmark([WIDGETS], options(out=out), provider=provider)
    with pytest.raises(UsageError, match="written without --oracle"):
        lake.benchmark([WIDGETS], options(out=out, resume=True, oracle=True), provider=provider)


def test_an_interrupted_benchmark_keeps_finished_rows_and_resumes_the_rest(lake, tmp_path):
    out = tmp_path / "results.jsonl"
    provider = model()

    def stop_after_first(event, data):
        if event == "task":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lake.benchmark([WIDGETS, COUNTY], options(out=out), provider=provider, progress=stop_after_first)
    # The first row is kept; the second task is either dropped or, if the worker had already taken it,
    # finished and kept while the interrupt waited for it.
    kept = list(rows_of(out))
    assert kept in (["tiny-easy-1"], ["tiny-easy-1", "tiny-easy-2"])
    calls = len(provider.calls)
    report = lake.benchmark([WIDGETS, COUNTY], options(out=out, resume=True), provider=provider)
    assert report.resumed == len(kept) and [r.score for r in report.results] == [1.0, 0.0]
    assert len(provider.calls) - calls == 4 * (2 - len(kept))  # only what was not kept ran again


def test_oracle_gives_exactly_the_resolved_files_without_an_index(tmp_path):
    root = write_table_lake(tmp_path / "lake")  # never indexed: --oracle needs no catalog
    question = "What was the mean temperature on the first two days? Round your answer to 2 decimal places."
    task = Task(
        id="tiny-medium-1",
        query=question,
        domain="tiny",
        answer=12.75,
        answer_type="numeric_approximate",
        data_sources=["sensors/daily/readings_2024-01-0[12].csv"],
    )
    script = fenced("""
import csv
vals = [float(r['temperature_c']) for name in ('data/sensors/daily/readings_2024-01-01.csv',
        'data/sensors/daily/readings_2024-01-02.csv') for r in csv.DictReader(open(name))]
print(round(sum(vals) / len(vals), 2))
""")
    provider = ScriptedProvider(
        [
            Rule(role="planner", response="Average temperature_c over both files."),
            Rule(role="coder", response=script),
            Rule(role="verifier", response="Yes"),
            Rule(role="finalyzer", response=script),
        ]
    )
    handle = Lake.open(root)
    report = handle.benchmark([task], options(oracle=True), provider=provider)
    row = report.results[0]
    gold = ["sensors/daily/readings_2024-01-01.csv", "sensors/daily/readings_2024-01-02.csv"]
    assert row.gold == gold and row.context == gold and row.files_used == gold
    assert (row.score, row.metric, row.oracle, row.recall, row.context_recall) == (
        1.0,
        "rae_score",
        True,
        1.0,
        1.0,
    )
    stored = json.loads((run_dir(handle, row.run_id) / "answer.json").read_text())
    assert stored["context"] == gold and stored["value"] == "12.75"
    assert trace(handle, row.run_id, "context_given")[0]["entries"] == gold
    assert trace(handle, row.run_id, "retrieval") == []
    assert "# Given data: " + ", ".join(f'"data/{g}"' for g in gold) + "\n" in prompts(provider, "planner")[0]
    finalyzer = prompts(provider, "finalyzer")[0]
    assert "Print only the final answer, on one line" in finalyzer  # the eval's guidelines, then the form's rules
    assert "The answer's form, read from the question's words: a number." in finalyzer
    assert "Round the number to exactly 2 decimal places, as the question asks." in finalyzer
    assert "JSON list" not in finalyzer  # a number's question gets no list rule


def test_retrieval_without_a_catalog_is_one_clear_error(tmp_path):
    handle = Lake.open(write_table_lake(tmp_path / "lake"))
    with pytest.raises(CatalogError, match="no catalog"):
        handle.benchmark([WIDGETS], options(out=tmp_path / "r.jsonl"), provider=model())
    assert not (tmp_path / "r.jsonl").exists()


def test_a_bug_met_by_one_task_is_recorded_and_the_rest_still_run(lake):
    def responder(role, prompt, system):
        if "region sold" in prompt:
            raise RuntimeError("boom in a provider")
        return model().complete("m", prompt, system, role=role).text

    report = lake.benchmark([REGION, WIDGETS], options(), provider=ScriptedProvider(responder=responder))
    region, widgets = report.results
    assert (
        region.method == "error" and region.error == "RuntimeError: boom in a provider" and region.score == 0
    )
    assert widgets.score == 1.0


# ---------------------------------------------------------------- scoring, judge, guidelines, loading

PARAPHRASE = Task(
    id="w-1",
    query="Which agency reported the most fires?",
    domain="w",
    answer="The Bureau of Land Management",
    answer_type="string_approximate",
)


def test_llm_judge_decides_string_approximate_through_the_call_site():
    provider = ScriptedProvider(
        [
            Rule(
                role="judge",
                match="/Reference answer\\s+<reference tag=\\w+>\\s+The Bureau of Land Management/",
                response="Yes, both name the BLM.",
            )
        ]
    )
    settings = llm_settings(provider="scripted").with_overrides({"eval.judge_model": "judge-1"})
    judge = make_judge(settings, provider=provider)
    parsed, score, problem = score_answer(PARAPHRASE, "BLM (Bureau of Land Management)", judge, 0.8)
    assert parsed == "BLM (Bureau of Land Management)" and problem is None
    assert (score.value, score.metric, score.method) == (1.0, "llm_paraphrase", "judge")
    role, prompt = provider.calls[0]
    assert role == "judge" and PARAPHRASE.query in prompt and "BLM (Bureau of Land Management)" in prompt
    assert judge.totals()["model"] == "judge-1" and judge.totals()["calls"] == 1


def test_no_judge_falls_back_to_labelled_fuzzy_matching():
    assert make_judge(llm_settings(provider="scripted")) is None
    _, score, _ = score_answer(PARAPHRASE, "the bureau of land managment", None, 0.8)
    assert (score.value, score.metric, score.method) == (1.0, "fuzzy_paraphrase", "fuzzy")


def test_a_failing_judge_falls_back_to_fuzzy_and_says_so():
    provider = ScriptedProvider([Rule(role="judge", response="quota gone", error="fatal")])
    settings = llm_settings(provider="scripted").with_overrides({"eval.judge_model": "judge-1"})
    _, score, problem = score_answer(
        PARAPHRASE, "Forest Service", make_judge(settings, provider=provider), 0.8
    )
    assert (score.value, score.method, score.metric) == (0.0, "fuzzy", "fuzzy_paraphrase")
    assert "judge failed" in problem and "quota gone" in problem


def test_benchmark_guidelines_ask_for_an_answer_that_parses_and_leave_the_form_to_the_agent():
    text = benchmark_guidelines(extra="Use SI units.")
    assert text.startswith("Print only the final answer")
    assert text.splitlines()[-1] == "Use SI units."
    assert "Round" not in text and "JSON list" not in text  # the agent composes these from the question's form
    assert benchmark_guidelines() == benchmark_guidelines("  ")


def test_coverage_counts_family_globs_and_missing_files():
    gold = ["s/daily/r_2024-01-01.csv", "s/daily/r_2024-01-02.csv", "a[1].csv"]
    assert coverage(gold, ["s/daily/r_*.csv"]) == round(2 / 3, 4)
    assert coverage(gold, ["a[1].csv", "s/daily/r_2024-01-02.csv"]) == round(2 / 3, 4)
    assert coverage(gold, []) == 0.0 and coverage([], ["x"]) is None


def test_load_benchmark_selects_ids_and_reads_missing_lists_with_spaces(tmp_path):
    tasks = [
        {
            "id": f"legal-easy-{i}",
            "query": f"q{i}",
            "answer": i,
            "answer_type": "numeric_exact",
            "data_sources": ["x.csv"],
        }
        for i in range(1, 4)
    ]
    path = tmp_path / "tasks" / "legal.json"
    path.parent.mkdir()
    path.write_text(json.dumps(tasks))
    (tmp_path / "missing_blobs.txt").write_text("legal/State MSA Fraud data/Ohio.csv\nlegal/b.csv\n")
    chosen, missing = load_benchmark([path], ["legal-easy-3,legal-easy-1"])
    assert [t.id for t in chosen] == ["legal-easy-1", "legal-easy-3"]
    assert missing == ["legal/State MSA Fraud data/Ohio.csv", "legal/b.csv"]
    with pytest.raises(UsageError, match="no task with id legal-easy-9"):
        load_benchmark([path], ["legal-easy-9"])
    with pytest.raises(UsageError, match="more than one tasks file"):
        load_benchmark([path, path])
