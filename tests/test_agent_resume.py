"""A real provider client failing mid-run (HTTP 500s from a loopback server), then `runs resume` finishing the run."""

from __future__ import annotations

import json

from agent_helpers import FAST, SUM_WIDGETS, fenced, run_dir, trace
from conftest import write_table_lake

from dsstar_lake.lake import Lake
from dsstar_lake.llm.testing import LLM_ENV_VARS, FakeLLMServer


def test_openai_endpoint_down_mid_run_then_resume(tmp_path, monkeypatch):
    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
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
        assert first.resumable and first.value == ""
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
        assert done.value == "14" and done.verified and done.error is None
        assert len(server.requests) == 6
        assert [e["name"] for e in trace(lake, first.run_id, "exec")] == ["round_00", "solution"]
        assert done.input_tokens > calls[0]["input_tokens"] + calls[1]["input_tokens"]
