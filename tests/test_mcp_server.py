"""`dslake mcp` driven by the official MCP client over stdio, as Claude Desktop or an IDE agent drives it.

The server is a real `dslake mcp` process; the client is the SDK's stdio_client + ClientSession. Only the model's
answers are scripted (the scripted provider, set through DSLAKE_* variables as a client's config would).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from agent_helpers import SUM_WIDGETS, fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
# What the server process gets besides the client's safe defaults (HOME, PATH, ...): the tests' isolated config
# and, when set, the embedding model's cache; never a model key.
PASSED = ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def lake_files(root: Path) -> dict[str, tuple[int, int]]:
    """Return every lake file (the catalog left out) with its size and mtime."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
            if p.is_file() and ".dslake" not in p.relative_to(root).parts}


def session_run(root: Path, stderr: Path, calls: Any, env: dict[str, str] | None = None) -> Any:
    """Start `dslake mcp --lake ROOT`, initialize, run `calls(session)`, and return what it returns.

    Anything that is not a protocol message on the server's stdout reaches the client as an exception: they
    are collected, and a test asserts there were none.
    """
    server_env = {name: os.environ[name] for name in PASSED if name in os.environ} | (env or {})
    params = StdioServerParameters(command=sys.executable, args=["-m", "cli", "mcp", "--lake", str(root)],
                                   env=server_env, cwd=str(REPO))
    garbage: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            garbage.append(message)

    async def main() -> Any:
        with open(stderr, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    await session.initialize()
                    return await calls(session)

    result = anyio.run(main)
    assert garbage == [], f"the server wrote something that is not MCP on stdout: {garbage}"
    return result


def text(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


def test_search_show_status_and_a_bad_path_over_stdio(indexed, tmp_path):
    before = lake_files(indexed)

    async def calls(session: ClientSession) -> dict[str, Any]:
        listed = await session.list_tools()
        return {
            "tools": {tool.name: tool for tool in listed.tools},
            "search": await session.call_tool("search", {"query": "widget units sold per region", "k": 3}),
            "show": await session.call_tool("show", {"path": "sales.csv"}),
            "family": await session.call_tool("show", {"path": "sensors/daily/readings_2024-01-03.csv"}),
            "missing": await session.call_tool("show", {"path": "no/such/file.csv"}),
            "bad_k": await session.call_tool("search", {"query": "units", "k": 0}),
            "status": await session.call_tool("status", {}),
            "after": await session.call_tool("search", {"query": "river sensor maintenance notes"}),
        }

    got = session_run(indexed, tmp_path / "stderr.txt", calls)
    tools = got["tools"]
    assert set(tools) == {"search", "show", "status"}  # no model configured: no ask
    for tool in tools.values():  # written for a model to read: what it does, and what each argument is
        assert len(tool.description) > 100 and tool.annotations.read_only_hint
        assert tool.output_schema and all(p.get("description") for p in tool.input_schema["properties"].values())
    assert tools["search"].input_schema["required"] == ["query"] and tools["show"].input_schema["required"] == ["path"]

    hits = got["search"].structured_content["hits"]
    assert not got["search"].is_error and len(hits) == 3 and hits[0]["path"] == "sales.csv"
    assert hits[0]["kind"] == "file" and hits[0]["format"] == "csv" and hits[0]["score"] > hits[-1]["score"]
    assert hits[0]["summary"].splitlines()[1] == "columns: region, product, units, price" and hits[0]["folded"] == []
    assert json.loads(text(got["search"]))["hits"][0]["path"] == "sales.csv"  # the same, as text for the model

    shown = got["show"].structured_content
    assert shown["status"] == "ok" and shown["members"] == ["sales.csv"]
    assert "pd.read_csv" in shown["description"] and "'units': int" in shown["description"]
    assert f"pd.read_csv({str(indexed / 'sales.csv')!r})" in shown["description"]  # the client runs it as written
    family = got["family"].structured_content
    assert family["kind"] == "family" and family["member_count"] == 5 and len(family["members"]) == 5

    assert got["missing"].is_error and "not in the catalog: no/such/file.csv" in text(got["missing"])
    assert got["bad_k"].is_error and "greater than or equal to 1" in text(got["bad_k"])
    status = got["status"].structured_content
    assert (status["files"], status["problems"], status["changed"]) == (8, [], [])
    assert status["lake"] == str(indexed) and status["last_index_at"].endswith("Z")
    # the server lived through both errors
    assert not got["after"].is_error and got["after"].structured_content["hits"][0]["path"] == "notes.md"

    assert lake_files(indexed) == before  # nothing wrote the lake
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "ask is not offered: no usable model" in stderr and "Traceback" not in stderr


def test_ask_is_offered_with_a_model_and_answers_end_to_end(tmp_path):
    root = write_table_lake(tmp_path / "lake")
    assert CliRunner().invoke(cli, ["index", str(root)]).exit_code == 0
    before = lake_files(root)
    rules = rules_file(
        tmp_path / "rules.jsonl",
        {"role": "verifier", "match": "per zebra", "response": "server went away", "error": "fatal"},
        {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
        {"role": "coder", "response": fenced(SUM_WIDGETS)},
        {"role": "verifier", "response": "Yes"},
        {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
    )
    env = {"DSLAKE_LLM_PROVIDER": "scripted", "DSLAKE_LLM_SCRIPTED_FILE": rules, "DSLAKE_LLM_MAX_RETRIES": "0",
           "DSLAKE_SANDBOX_TIMEOUT_S": "60", "DSLAKE_SANDBOX_MEMORY_MB": "1024"}

    async def calls(session: ClientSession) -> Any:
        names = [tool.name for tool in (await session.list_tools()).tools]
        result = await session.call_tool("ask", {"question": "How many widget units were sold?"})
        stopped = await session.call_tool("ask", {"question": "How many widget units per zebra?"})
        return names, result, stopped

    names, result, stopped = session_run(root, tmp_path / "stderr.txt", calls, env)
    assert names == ["search", "show", "status", "ask"]
    assert not result.is_error, text(result)
    answer = result.structured_content
    assert answer["answer"] == "14" and answer["verified"] and answer["files_used"] == ["sales.csv"]
    assert answer["stop_reason"] == "verified"
    record = json.loads((root / ".dslake" / "runs" / answer["run_id"] / "answer.json").read_text())
    assert record["value"] == "14"  # the run is on disk, as `dslake ask` leaves it
    assert (answer["selection"], answer["selected_by"]) == (record["selection"], record["selected_by"])
    assert (answer["readings"], answer["overridden"]) == (record["readings"], record["overridden"])
    assert answer["overridden"] == {}  # the final script's print stood
    # a run the model's provider stopped is a tool error that says how to go on, and the server goes on
    assert stopped.is_error and "stopped: " in text(stopped) and "server went away" in text(stopped)
    assert "dslake runs resume" in text(stopped)
    assert lake_files(root) == before


def test_a_lake_without_a_catalog_is_a_startup_error(tmp_path):
    root = write_table_lake(tmp_path / "lake")
    result = CliRunner().invoke(cli, ["mcp", "--lake", str(root)])
    assert result.exit_code == 3 and "Traceback" not in result.output
    assert f"no catalog at {root / '.dslake'}" in result.stderr and result.stdout == ""
    assert not (root / ".dslake").exists()  # nothing created
    gone = CliRunner().invoke(cli, ["mcp", "--lake", str(tmp_path / "nowhere")])
    assert gone.exit_code == 2 and "lake not found" in gone.stderr
