"""Run folders: ids, lookup by prefix, listing, a trace cut short by a crash, show."""

from __future__ import annotations

import json

import pytest

from dsstar_lake.agent.state import AgentState, ContextEntry
from dsstar_lake.base.errors import RunNotFound
from dsstar_lake.runs.record import RunRecord, list_runs, show_run


def test_create_open_list_and_show(tmp_path):
    first = RunRecord.create(tmp_path, {"question": "q1"})
    second = RunRecord.create(tmp_path, {"question": "q2"})
    assert first.id != second.id and first.work.is_dir()
    assert RunRecord.open(tmp_path, second.id).folder == second.folder
    with pytest.raises(RunNotFound, match="2 runs start with"):
        RunRecord.open(tmp_path, "20")
    state = AgentState(question="q2", entries=[ContextEntry("e1", "file", "a.csv", "desc")], plan=["load", "sum"])
    state.round, state.phase = 1, "verify"
    second.save_state(state.to_dict())
    second.event("exec", round=0, name="round_00", ok=True, outcome="exit 0", stdout_head="1")
    second.event("verdict", round=0, sufficient=False)
    second.event("route", round=0, route={"kind": "add", "step": None, "missing": None})
    second.event("exec", round=1, name="round_01", ok=True, outcome="exit 0", stdout_head="2")
    second.set_status("interrupted", "boom")
    runs = list_runs(tmp_path)
    assert [r["id"] for r in runs] == sorted([first.id, second.id], reverse=True)
    assert {r["id"]: r["status"] for r in runs}[second.id] == "interrupted"
    shown = show_run(second)
    assert shown["plan"] == ["load", "sum"] and shown["context"] == ["a.csv"]
    assert [r["round"] for r in shown["rounds"]] == [0, 1]
    assert shown["rounds"][0]["sufficient"] is False and shown["rounds"][0]["route"]["kind"] == "add"
    assert "1. load\n2. sum" in (second.folder / "plan.md").read_text()
    assert AgentState.from_dict(second.load_state()).plan == ["load", "sum"]


def test_unknown_or_unsafe_ids_are_user_errors(tmp_path):
    only = RunRecord.create(tmp_path, {"question": "q"})
    assert RunRecord.open(tmp_path, only.id[:8]).id == only.id  # a unique prefix is enough
    for bad in ("nope", "../x", "", "."):
        with pytest.raises(RunNotFound):
            RunRecord.open(tmp_path, bad)


def test_a_torn_last_trace_line_is_skipped(tmp_path):
    record = RunRecord.create(tmp_path, {"question": "q"})
    record.event("start", phase="start")
    with open(record.trace_path, "a") as fh:
        fh.write('{"type": "exec", "rou')  # the process died mid-write
    assert [e["type"] for e in record.trace()] == ["start"]
    record.event("resume", phase="start")
    assert [e["type"] for e in record.trace()][-1] == "resume"
    assert json.loads((record.folder / "run.json").read_text())["status"] == "running"
