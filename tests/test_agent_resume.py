"""Runs that stop early (a real client meeting HTTP 500s, Ctrl-C before the first round) and resume to the end."""

from __future__ import annotations

import json

import pytest
from agent_helpers import FAST, SUM_WIDGETS, fenced, run_dir, scripted, trace
from conftest import write_table_lake
from llm_harness import FakeLLMServer

from dsstar_lake.lake import Lake
from dsstar_lake.llm.scripted import ScriptedProvider


def test_openai_endpoint_down_mid_run_then_resume(tmp_path, monkeypatch):
    root = write_table_lake(tmp_path / "lake")
    with FakeLLMServer() as server:
        overrides = {**FAST, "llm.provider": "openai", "llm.base_url": server.url + "/v1", "llm.model": "gpt-4o-mini",
                     "llm.max_retries": 1}
        server.push(text="Sum the widget units in data/sales.csv.")
        server.push(text=fenced(SUM_WIDGETS))
        server.push(status=500)
        server.push(status=503)  # the retry fails too: the call site gives up
        lake = Lake.open(root)
        first = lake.ask("How many widget units were sold in total?", files=["sales.csv"], overrides=overrides)
        assert first.resumable and first.text == ""
        assert "gave up after 2 attempts" in first.error
        folder = run_dir(lake, first.run_id)
        assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
        assert (folder / "round_00.out").read_text().startswith("14")
        calls = trace(lake, first.run_id, "llm_call")
        assert [c["role"] for c in calls] == ["planner", "coder", "verifier"]
        assert calls[-1]["error"] and calls[-1]["attempts"] == 2 and len(calls[-1]["retry_errors"]) == 1

        server.push(text="Yes")
        server.push(text=fenced(SUM_WIDGETS))
        done = Lake.open(root).resume(first.run_id)  # the stored settings bring back the endpoint
        assert done.text == "14" and done.verified and done.error is None
        assert len(server.requests) == 6
        assert [e["name"] for e in trace(lake, first.run_id, "exec")] == ["round_00", "solution"]
        assert done.input_tokens > calls[0]["input_tokens"] + calls[1]["input_tokens"]


def test_interrupt_before_the_first_round_then_resume(tmp_path):
    root = write_table_lake(tmp_path / "lake")

    def ctrl_c(role, prompt, system):
        raise KeyboardInterrupt

    lake = Lake.open(root)
    interrupted = ScriptedProvider(scripted(("planner", "Sum the widget units.")).rules, responder=ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        lake.ask("How many widget units were sold in total?", files=["sales.csv"], provider=interrupted,
                 overrides=FAST)
    (run,) = lake.runs()
    assert run["status"] == "interrupted"
    assert json.loads((run_dir(lake, run["id"]) / "state.json").read_text())["phase"] == "start"
    healthy = scripted(("planner", "Sum the widget units."), ("coder", fenced(SUM_WIDGETS)), ("verifier", "Yes"),
                       ("finalyzer", fenced(SUM_WIDGETS)))
    done = lake.resume(run["id"][:10], provider=healthy, overrides=FAST)
    assert done.text == "14" and done.rounds == 1
    assert [e["name"] for e in trace(lake, run["id"], "exec")] == ["round_00", "solution"]
