"""A run's selection on the surfaces that show a run (issue 45): `runs show` (terminal and --json), the notebook's
run view and MCP's ask result say who chose the first round's entries and why each one.

The runs are real scripted asks over the small lake, the selector's answer scripted like every other role's.
"""

from __future__ import annotations

import json

from agent_helpers import FAST, SUM_WIDGETS, fenced, scripted
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.agent.state import AgentState, Answer
from dsstar_lake.mcp.server import ask_result
from dsstar_lake.runs.record import RunRecord, show_run

QUESTION = "How many widget units were sold in total?"
ENTRIES = [
    {"path": "sales.csv", "reason": "units by product and region: the [bold]widget[/bold] rows"},
    {"path": "sensors/daily/readings_*.csv", "reason": "not needed\x1b]52;c;aGk=\x07 but near"},
]
MENU = ["sales.csv", "sensors/daily/readings_*.csv", "ozone_by_county.csv", "notes.md"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


CHOICE = ("data/sales.csv — units by product and region: the [bold]widget[/bold] rows\n"
          "data/sensors/daily/readings_*.csv — not needed\x1b]52;c;aGk=\x07 but near")


def asked(lake, selector: str | None = CHOICE, **kw) -> Answer:
    rules = [("selector", selector)] if selector else []
    model = scripted(*rules, ("planner", "Sum the widget units in data/sales.csv."), ("coder", fenced(SUM_WIDGETS)),
                     ("verifier", "Yes"), ("finalyzer", fenced(SUM_WIDGETS)))
    answer = lake.ask(QUESTION, overrides=FAST, provider=model, **kw)
    assert answer.text == "14"
    return answer


def test_runs_show_says_who_selected_and_each_entry_with_its_reason(lake, indexed):
    run_id = asked(lake).run_id
    shown = invoke("runs", "show", run_id, "--lake", indexed)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    at = lines.index("selection (chosen by the selector model): 2 of 4 candidates")
    assert lines[at - 1].startswith("context: ")
    # One plain line per entry (a pipe gets no frame); a model's markup and control characters stay inert text.
    assert lines[at + 1:at + 3] == [
        "  - sales.csv: units by product and region: the [bold]widget[/bold] rows",
        "  - sensors/daily/readings_*.csv: not needed\\x1b]52;c;aGk=\\x07 but near",
    ]
    data = json.loads(invoke("runs", "show", run_id, "--lake", indexed, "--json").stdout)
    assert (data["selection"]["by"], data["selection"]["entries"]) == ("selector", ENTRIES)
    assert sorted(data["selection"]["menu"]) == sorted(MENU)
    assert (data["answer"]["selection"], data["answer"]["selected_by"]) == (ENTRIES, "selector")
    view = lake.run(run_id)  # the notebook's run view lists them too
    page = view._repr_html_()
    assert "selection (chosen by the selector model): 2 of 4 candidates" in page
    assert "sales.csv: units by product and region" in page


def test_given_files_and_the_relevance_fallback_are_said_as_such(lake, indexed):
    run_id = asked(lake, None, files=["sales.csv"]).run_id
    lines = invoke("runs", "show", run_id, "--lake", indexed).stdout.splitlines()
    at = lines.index("selection (given by the user): 1 entry")
    assert lines[at + 1] == "  - sales.csv: given"
    run_id = asked(lake, None).run_id  # no rule answers the selector: the relevance order chose
    shown = invoke("runs", "show", run_id, "--lake", indexed).stdout
    assert "selection (by relevance (no model choice)): 4 of 4 candidates" in shown
    assert "ranked 1 by relevance (no model answers the selector role)" in shown


def test_a_run_from_before_the_selection_shows_none_and_its_answer_still_loads(lake, indexed):
    run_id = asked(lake).run_id
    record = RunRecord.open(lake.catalog_dir, run_id)
    old = {k: v for k, v in (record.answer() or {}).items() if k not in ("selection", "selected_by")}
    record.write_answer(old)
    record.save_state({k: v for k, v in (record.load_state() or {}).items() if k not in ("selection", "selected_by")})
    record.trace_path.write_text("".join(json.dumps(e) + "\n" for e in record.trace() if e["type"] != "selection"))
    shown = invoke("runs", "show", run_id, "--lake", indexed)
    assert shown.exit_code == 0 and "selection (" not in shown.stdout and "files used: sales.csv" in shown.stdout
    assert json.loads(invoke("runs", "show", run_id, "--lake", indexed, "--json").stdout)["selection"] is None
    loaded = Answer.from_dict(old)
    assert (loaded.selection, loaded.selected_by) == ([], "")


def test_a_running_run_shows_the_traces_selection_and_a_bad_record_is_read_not_trusted(tmp_path):
    running = RunRecord.create(tmp_path, {"question": "q"})
    running.event("selection", by="selector", menu=["a.csv", 7, "b.csv"],
                  entries=[{"path": "a.csv", "reason": "the sales"}, "b.csv", {"reason": "no path"}, {"path": "c"}])
    assert show_run(running)["selection"] == {"by": "selector", "menu": ["a.csv", "b.csv"],
                                              "entries": [{"path": "a.csv", "reason": "the sales"},
                                                          {"path": "c", "reason": ""}]}
    given = RunRecord.create(tmp_path, {"question": "q"})  # files given: no event, the saved state says it
    given.save_state({**AgentState(question="q").to_dict(), "selected_by": "given",
                      "selection": [{"path": "a.csv", "reason": "given"}]})
    assert show_run(given)["selection"] == {"by": "given", "entries": [{"path": "a.csv", "reason": "given"}],
                                            "menu": []}
    lost = RunRecord.create(tmp_path, {"question": "q"})  # neither the event nor a state: the answer's selection
    lost.write_answer({"value": "1", "selection": [{"path": "a.csv", "reason": "r"}], "selected_by": "relevance"})
    assert show_run(lost)["selection"] == {"by": "relevance", "entries": [{"path": "a.csv", "reason": "r"}],
                                           "menu": []}


def test_mcps_ask_result_carries_the_selection_of_the_runs_answer(lake):
    run_id = asked(lake).run_id
    stored = RunRecord.open(lake.catalog_dir, run_id).answer()
    result = ask_result(Answer.from_dict(stored)).model_dump()
    assert (result["selection"], result["selected_by"], result["answer"]) == (ENTRIES, "selector", "14")
