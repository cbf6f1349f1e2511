"""The DS-STAR loop end to end: scripted model through the real call site, real sandbox, real catalog."""

from __future__ import annotations

import json
import shutil

import pytest
from agent_helpers import (
    FAST,
    PRINT_SALES,
    SUM_WIDGETS,
    TOP_REGION_ONLY,
    UNITS_BY_REGION,
    WORST_COUNTY,
    fenced,
    prompts,
    run_dir,
    scripted,
    trace,
)
from conftest import write_table_lake
from sandbox_helpers import BWRAP_REASON, processes_with

from dsstar_lake.lake import Lake


def ask(lake, question, provider, **kw):
    overrides = {**FAST, **kw.pop("overrides", {})}
    return lake.ask(question, provider=provider, overrides=overrides, **kw)


def test_one_round_verified_at_once(lake):
    provider = scripted(
        ("planner", "Sum the units of the widget rows in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider)
    assert answer.text == "14"
    assert answer.verified and answer.rounds == 1 and answer.stop_reason == "verified" and answer.error is None
    assert answer.files_used == ["sales.csv"]
    assert "sales.csv" in answer.context
    folder = run_dir(lake, answer.run_id)
    assert (folder / "round_00.out").read_text().startswith("14")
    assert "csv.DictReader" in (folder / "solution.py").read_text()
    assert json.loads((folder / "answer.json").read_text())["value"] == "14"
    assert json.loads((folder / "run.json").read_text())["status"] == "done"
    roles = [c["role"] for c in trace(lake, answer.run_id, "llm_call")]
    assert roles == ["planner", "coder", "verifier", "finalyzer"]
    assert answer.llm_calls == 4 and answer.input_tokens > 0 and answer.cost_usd > 0
    retrieval = trace(lake, answer.run_id, "retrieval")[0]
    assert "sales.csv" in retrieval["entries"]
    # The coder saw the lake as data/ with lake-relative paths.
    assert '<data path="data/sales.csv" tag=' in prompts(provider, "coder")[0]
    assert provider.unused() == []


def test_a_sandbox_that_cannot_be_made_fails_the_ask_with_its_own_error(lake):
    """The sandbox is made in a thread while the context is retrieved: its error still ends the ask, as one line."""
    from dsstar_lake.base.errors import ConfigError

    provider = scripted(("planner", "Sum the units in data/sales.csv."))
    with pytest.raises(ConfigError, match="sandbox.backend must be one of"):
        ask(lake, "How many units were sold?", provider, overrides={"sandbox.backend": "docker"})
    assert provider.calls == []  # no model was asked before the sandbox was known


def test_without_a_selector_the_relevance_order_decides_and_every_role_sees_one_view(lake):
    provider = scripted(
        ("planner", "Sum the units of the widget rows in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider)
    # No rule answers the selector: it is not asked, and the record says the relevance order chose.
    assert prompts(provider, "selector") == [] and answer.selected_by == "relevance"
    assert answer.selection and all("by relevance" in item["reason"] for item in answer.selection)
    assert trace(lake, answer.run_id, "selection")[0]["why"] == "no model answers the selector role"
    # The planner, the coder and the finalyzer see the same files at the same levels (the verifier sees no data).
    blocks = {role: given_block(prompts(provider, role)[0]) for role in ("planner", "coder", "finalyzer")}
    assert len(set(blocks.values())) == 1
    assert 'path="data/sales.csv"' in blocks["planner"]


def given_block(prompt):
    """Return a prompt's given data: the line of file names and the framed descriptions (not the template's words)."""
    section = prompt.split("# Given data", 1)[1].split("\n# ", 1)[0]
    names, rest = section.split("\n", 1)
    return names + rest[rest.index('<data path="'):]


def test_two_step_plan_rewrites_the_whole_script(lake):
    provider = scripted(
        ("planner", "Load data/sales.csv and print its rows."),
        ("coder", fenced(PRINT_SALES)),
        ("verifier", "No, the totals per region are not computed yet."),
        ("router", "Add Step"),
        ("planner", "**Next step:** Sum the units per region and print the region with the most units."),
        ("coder", fenced(UNITS_BY_REGION)),
        ("verifier", "Yes."),
        ("finalyzer", fenced(TOP_REGION_ONLY)),
    )
    answer = ask(lake, "Which region sold the most units?", provider)
    assert answer.text == "north"
    assert answer.rounds == 2 and answer.verified and answer.backtracks == 0
    assert answer.plan == ["Load data/sales.csv and print its rows.",
                           "Sum the units per region and print the region with the most units."]
    plan_md = (run_dir(lake, answer.run_id) / "plan.md").read_text()
    assert "1. Load data/sales.csv" in plan_md and "2. Sum the units per region" in plan_md
    assert "top region: north" in (run_dir(lake, answer.run_id) / "round_01.out").read_text()
    # Round 1's coder got round 0's script as its base code, and the planner got round 0's output.
    assert "for r in rows:" in prompts(provider, "coder")[1]
    assert "'region': 'north'" in prompts(provider, "planner")[1]


def test_backtrack_truncates_the_plan_and_resamples(lake):
    wrong = "Sum the price column of the widget rows."
    provider = scripted(
        ("planner", "Load data/sales.csv and print its rows."),
        ("coder", fenced(PRINT_SALES)),
        ("verifier", "No"),
        ("router", "Add Step"),
        ("planner", wrong),
        ("coder", fenced("import csv\nprint(sum(float(r['price']) for r in csv.DictReader(open('data/sales.csv'))"
                         " if r['product'] == 'widget'))")),
        ("verifier", "No"),
        ("router", "The second step is wrong: step two."),
        ("planner", "Sum the units column of the widget rows."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider)
    assert answer.text == "14" and answer.backtracks == 1 and answer.rounds == 3
    back = trace(lake, answer.run_id, "backtrack")
    assert len(back) == 1
    assert back[0]["wrong_step"] == 2
    assert back[0]["plan_before"] == ["Load data/sales.csv and print its rows.", wrong]
    assert back[0]["plan_after"] == ["Load data/sales.csv and print its rows."]
    assert answer.plan == ["Load data/sales.csv and print its rows.", "Sum the units column of the widget rows."]
    assert wrong not in (run_dir(lake, answer.run_id) / "plan.md").read_text()
    # The planner resampled from the truncated plan (it never saw the wrong step as part of the plan).
    assert wrong not in prompts(provider, "planner")[2].split("# Current plans")[1].split("# Obtained")[0]


def test_missing_data_brings_in_a_file_absent_from_the_first_retrieval(lake):
    question = "How many widget units were sold?"
    first = lake.search(question, k=1)
    assert [h.path for h in first] == ["sales.csv"]  # so the ozone file starts outside the context
    provider = scripted(
        ("planner", "Load data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("router", "Missing data: ozone air quality, unhealthy days per county"),
        ("planner", "Find the county with the most unhealthy days in data/ozone_by_county.csv."),
        ("coder", fenced(WORST_COUNTY)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(WORST_COUNTY)),
    )
    answer = ask(lake, question, provider, k=1)
    assert answer.text == "Kings 12"
    assert answer.re_retrievals == 1
    assert "ozone_by_county.csv" in answer.context and "ozone_by_county.csv" in answer.files_used
    item = trace(lake, answer.run_id, "re_retrieval")[0]
    assert "ozone_by_county.csv" in item["added"] and "sales.csv" not in item["added"]
    # The router's words, and the question's words no given entry names ('units' is a column of sales.csv).
    assert item["query"].startswith("ozone air quality, unhealthy days per county")
    assert "units" not in item["query"].split() and "widget" in item["query"].split()
    coder_prompts = prompts(provider, "coder")
    assert "data/ozone_by_county.csv" not in coder_prompts[0]
    assert '<data path="data/ozone_by_county.csv" tag=' in coder_prompts[1]
    assert "missing data after round 0" in (run_dir(lake, answer.run_id) / "plan.md").read_text()


def test_failing_script_is_fixed_by_the_debugger(lake):
    buggy = SUM_WIDGETS.replace("r['units']", "r['unit']")
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(buggy)),
        ("debugger", "KeyError: 'unit' at line 3 of round_00.py"),
        ("debugger", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider,
                 overrides={"agent.summarize_over_chars": 10})
    assert answer.text == "14" and answer.rounds == 1
    folder = run_dir(lake, answer.run_id)
    assert "KeyError" in (folder / "round_00.out").read_text()
    assert (folder / "round_00_fix1.out").read_text().startswith("14")
    runs = trace(lake, answer.run_id, "exec")
    assert [(e["name"], e["ok"]) for e in runs[:2]] == [("round_00", False), ("round_00_fix1", True)]
    assert "KeyError" in runs[0]["traceback"]
    summarise, fix = prompts(provider, "debugger")
    assert summarise.startswith("# Error report") and "KeyError: 'unit'" in summarise
    assert "KeyError: 'unit' at line 3 of round_00.py" in fix and "r['unit']" in fix
    # The verifier judged the fixed script and its output.
    assert "r['units']" in prompts(provider, "verifier")[0] and "14" in prompts(provider, "verifier")[0]


def test_round_limit_finalizes_anyway(lake):
    provider = scripted(
        ("planner", "Load data/sales.csv and print its rows."),
        ("coder", fenced(PRINT_SALES)),
        ("planner", "Sum the units per region."),
        ("coder", fenced(UNITS_BY_REGION)),
        ("finalyzer", fenced(TOP_REGION_ONLY)),
        fallback={"verifier": "No", "router": "Add Step"},
    )
    answer = ask(lake, "Which region sold the most units?", provider, max_rounds=2)
    assert answer.text == "north"
    assert answer.rounds == 2 and not answer.verified and answer.stop_reason == "max_rounds"
    assert len(prompts(provider, "verifier")) == 2 and len(prompts(provider, "router")) == 1
    assert (run_dir(lake, answer.run_id) / "solution.py").exists()


def test_unparseable_answers_are_retried_then_treated_conservatively(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", "I would read the file with the csv module and add up the units."),
        ("coder", SUM_WIDGETS),  # unfenced code is fine
        ("verifier", "Hard to say."),
        ("verifier", "It depends."),  # still unreadable: counts as insufficient
        ("router", "banana"),
        ("router", "apple"),  # still unreadable: Add Step
        ("planner", "Print the total."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "**Yes** - the total is printed."),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider)
    assert answer.text == "14" and answer.rounds == 2 and answer.verified
    events = trace(lake, answer.run_id, "unparseable")
    assert [(e["role"], e["action"]) for e in events] == [
        ("coder", "retry"), ("verifier", "retry"), ("verifier", "fallback"), ("router", "retry"), ("router", "fallback")]
    assert events[2]["fallback"].startswith("Verdict(sufficient=False") and events[4]["fallback"] == "Route(kind='add', step=None, missing=None)"
    assert trace(lake, answer.run_id, "route")[0]["route"]["kind"] == "add"
    retry = prompts(provider, "coder")[1]
    assert retry.endswith("Answer with a single markdown Python code block (```python ... ```) only.\n")


def test_finalyzer_follows_the_guidelines(lake):
    ratio = "import csv\nrows = list(csv.DictReader(open('data/sales.csv')))\nprint(sum(int(r['units']) for r in rows) / 3)"
    provider = scripted(
        ("planner", "Compute the mean units per row of data/sales.csv."),
        ("coder", fenced(ratio)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(ratio.replace("print(sum(", "print(round(sum(").replace(" / 3)", " / 3, 2))"))),
    )
    answer = ask(lake, "What is the mean number of units per sale?", provider, guidelines="round to 2 decimals")
    assert answer.text == "7.0"
    assert (run_dir(lake, answer.run_id) / "round_00.out").read_text().startswith("7.0")
    final_prompt = prompts(provider, "finalyzer")[0]
    assert "# Guidelines\nround to 2 decimals" in final_prompt
    assert "# Execution result of reference code\n<output tag=" in final_prompt
    assert final_prompt.split("# Execution result of reference code\n")[1].split("\n")[1] == "7.0"


def test_default_guidelines_and_a_failing_final_script(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "Yes"),
        ("finalyzer", fenced("raise SystemExit('no')")),
        fallback={"debugger": fenced("import sys\nsys.exit(3)")},
    )
    answer = ask(lake, "How many widget units were sold in total?", provider, overrides={"agent.max_debug": 1})
    assert "Print only the answer" in prompts(provider, "finalyzer")[0]
    assert answer.text == "14"  # the last round's output stands in for the answer
    assert "final script did not print an answer" in answer.error
    assert (run_dir(lake, answer.run_id) / "solution_fix1.py").exists()


def test_provider_failure_mid_run_then_resume_completes(lake):
    failing = scripted(
        ("planner", "Load data/sales.csv and print its rows."),
        ("coder", fenced(PRINT_SALES)),
        ("verifier", "No"),
        ("router", "Add Step"),
        ("planner", "Sum the units per region."),
        ("coder", fenced(UNITS_BY_REGION)),
        ("verifier", "!fatal"),
    )
    first = ask(lake, "Which region sold the most units?", failing)
    assert first.resumable and "connection reset by peer" in first.error and first.text == ""
    folder = run_dir(lake, first.run_id)
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
    calls = trace(lake, first.run_id, "llm_call")
    assert calls[-1]["role"] == "verifier" and "connection reset" in calls[-1]["error"]
    assert (folder / "round_01.py").exists() and json.loads((folder / "state.json").read_text())["round"] == 1
    # The sandbox started ahead for the script that never came was killed with the run: nothing of it is left.
    assert processes_with(str(folder / "work")) == []
    listed = {r["id"]: r["status"] for r in lake.runs()}
    assert listed[first.run_id] == "interrupted"

    healthy = scripted(("verifier", "Yes"), ("finalyzer", fenced(TOP_REGION_ONLY)))
    done = lake.resume(first.run_id, provider=healthy, overrides=FAST)
    assert done.run_id == first.run_id and done.text == "north" and done.verified and done.rounds == 2
    assert done.llm_calls == 6 + 2  # answered calls of both sessions (the failed one is in the trace)
    names = [e["name"] for e in trace(lake, first.run_id, "exec")]
    assert names == ["round_00", "round_01", "solution"]  # no completed round was run again
    assert json.loads((folder / "run.json").read_text())["status"] == "done"
    assert [e["type"] for e in trace(lake, first.run_id) if e["type"] in ("interrupted", "resume", "done")] == [
        "interrupted", "resume", "done"]
    again = lake.resume(first.run_id)  # a finished run just returns its answer
    assert again.text == "north"


def test_budget_stops_refining_and_finalizes(lake):
    provider = scripted(
        ("planner", "Sum the widget units in data/sales.csv."),
        ("coder", fenced(SUM_WIDGETS)),
        ("verifier", "No"),
        ("finalyzer", fenced(SUM_WIDGETS)),
        fallback={"router": "Add Step"},
    )
    answer = ask(lake, "How many widget units were sold in total?", provider, overrides={"llm.max_llm_calls": 3})
    assert answer.text == "14" and answer.stop_reason == "budget" and "budget" in answer.error
    assert prompts(provider, "router") == []  # the fourth call was refused; only the finalyzer went over
    assert [c["role"] for c in trace(lake, answer.run_id, "llm_call")] == ["planner", "coder", "verifier", "finalyzer"]
    if BWRAP_REASON is None:  # both scripts' sandboxes were started ahead, and both were used
        assert ahead(lake, answer.run_id) == [(2, 2)]


def ahead(lake, run_id):
    """Return (started, taken) of the run's sandboxes started ahead, as its trace says (once, at its end)."""
    return [(e["started"], e["taken"]) for e in trace(lake, run_id, "sandboxes_ahead")]


def test_a_budget_that_cannot_reach_a_script_starts_no_sandbox_ahead(lake):
    provider = scripted(("planner", "Sum the widget units in data/sales.csv."), ("coder", fenced(SUM_WIDGETS)))
    answer = ask(lake, "How many widget units were sold in total?", provider, overrides={"llm.max_llm_calls": 1})
    assert answer.stop_reason == "budget" and answer.text == "" and prompts(provider, "coder") == []
    assert not (run_dir(lake, answer.run_id) / "round_00.py").exists()
    assert ahead(lake, answer.run_id) == ([(0, 0)] if BWRAP_REASON is None else [])


PRELOADED = "import sys\nprint('pandas' in sys.modules)\n" + SUM_WIDGETS


@pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")
@pytest.mark.parametrize(("prestart", "preloaded", "expected"), [(2, "True", [(2, 2)]), (0, "False", [])])
def test_prestart_starts_scripts_ahead_with_the_preload_and_0_starts_each_when_it_goes(lake, prestart, preloaded,
                                                                                       expected):
    """sandbox.prestart = 0 is the path without sandboxes started ahead: each script's own starts when it goes."""
    provider = scripted(
        ("planner", "Sum the units of the widget rows in data/sales.csv."),
        ("coder", fenced(PRELOADED)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(SUM_WIDGETS)),
    )
    answer = ask(lake, "How many widget units were sold in total?", provider,
                 overrides={"sandbox.prestart": prestart, "sandbox.preload": "pandas"})
    assert answer.text == "14" and answer.verified and answer.files_used == ["sales.csv"]
    folder = run_dir(lake, answer.run_id)
    # The interpreter started ahead imported pandas before the script came; one started when it went did not.
    assert (folder / "round_00.out").read_text().splitlines()[:2] == [preloaded, "14"]
    assert ahead(lake, answer.run_id) == expected
    assert processes_with(str(folder / "work")) == []


def test_given_files_replace_retrieval(lake):
    provider = scripted(
        ("planner", "Find the worst county."),
        ("coder", fenced(WORST_COUNTY)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(WORST_COUNTY)),
    )
    answer = ask(lake, "Which county had the most unhealthy days?", provider, files=["ozone_by_county.csv"])
    assert answer.context == ["ozone_by_county.csv"] and answer.text == "Kings 12"
    assert trace(lake, answer.run_id, "retrieval") == []
    assert trace(lake, answer.run_id, "context_given")[0]["entries"] == ["ozone_by_county.csv"]
    assert "county,year,unhealthy_days" in prompts(provider, "coder")[0] or "unhealthy_days" in prompts(
        provider, "coder")[0]


@pytest.mark.parametrize("backend", ["subprocess", "auto"])
def test_a_script_writing_into_the_lake(tmp_path, backend):
    from sandbox_helpers import BWRAP_REASON

    from dsstar_lake.agent.errors import LakeModified

    if backend == "auto" and BWRAP_REASON is not None:
        pytest.skip(BWRAP_REASON)
    root = write_table_lake(tmp_path / "lake")
    original = (root / "sales.csv").read_bytes()
    vandal = "open('data/sales.csv', 'a').write('east,widget,1000,1\\n')\nprint('done')"
    provider = scripted(
        ("planner", "Add a row to data/sales.csv."),
        ("coder", fenced(vandal)),
        ("verifier", "Yes"),
        ("finalyzer", fenced(vandal)),
        fallback={"debugger": fenced(vandal)},
    )
    lake = Lake.open(root)
    overrides = {**FAST, "sandbox.backend": backend, "agent.max_debug": 1}
    if backend == "subprocess":
        with pytest.raises(LakeModified, match="changed the lake"):
            lake.ask("Add a row", files=["sales.csv"], provider=provider, overrides=overrides)
        (run,) = lake.runs()
        assert run["status"] == "aborted" and "sales.csv" in run["error"]
        shutil.copy(root / "sales.csv", tmp_path / "vandalised.csv")
        assert (tmp_path / "vandalised.csv").read_bytes() != original  # detected, not prevented
    else:
        answer = lake.ask("Add a row", files=["sales.csv"], provider=provider, overrides=overrides)
        assert (root / "sales.csv").read_bytes() == original
        failed = trace(lake, answer.run_id, "exec")[0]
        assert not failed["ok"] and "Read-only file system" in failed["traceback"]
