"""`dslake index --analyzer` from the command line: a scripted rules file, JSON and human output, no-model error."""

from __future__ import annotations

import json

import pytest
from agent_helpers import fenced
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli

FAMILY_FIRST = "sensors/daily/readings_2024-01-01.csv"
BLOB_SCRIPT = "data = open('data/blob.bin', 'rb').read()\nprint('a blob of', len(data), 'bytes, first', data[:4].hex())"
FAMILY_SCRIPT = f"import csv\nrows = list(csv.reader(open('data/{FAMILY_FIRST}')))\nprint('daily readings:', rows[0])"


@pytest.fixture
def lake(tmp_path, monkeypatch):
    root = write_table_lake(tmp_path / "lake")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)
    return root


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_index_auto_with_a_scripted_model_then_show(lake, tmp_path):
    rules = tmp_path / "rules.jsonl"
    rules.write_text("\n".join(json.dumps(r) for r in [
        {"role": "analyzer", "match": '"data/blob.bin".', "response": fenced(BLOB_SCRIPT)},
        {"role": "analyzer", "match": f'"data/{FAMILY_FIRST}".', "response": fenced(FAMILY_SCRIPT)},
    ]) + "\n")
    done = invoke("index", lake, "--analyzer", "auto", "--llm", "scripted", "--scripted-file", rules,
                  "--model", "rules-v1", "--json")
    assert done.exit_code == 0, done.output
    analysis = json.loads(done.stdout)["analysis"]
    assert analysis["mode"] == "auto" and analysis["analyzed"] == 2 and analysis["llm_calls"] == 2
    shown = invoke("show", "blob.bin", "--lake", lake)
    assert "Analysis (llm:rules-v1;" in shown.stdout and "a blob of 2048 bytes, first 00010203" in shown.stdout
    family = json.loads(invoke("show", FAMILY_FIRST, "--lake", lake, "--json").stdout)["entry"]["description"]
    assert "daily readings: ['timestamp', 'sensor_id', 'temperature_c']" in family
    again = invoke("index", lake, "--analyzer", "auto", "--llm", "scripted", "--scripted-file", rules,
                   "--model", "rules-v1")
    assert again.exit_code == 0
    assert "analyzer (auto): 0 analysed, 0 failed" in again.stdout and "0 LLM calls" in again.stdout


def test_index_llm_without_a_model_is_one_message_and_exit_2(lake):
    result = invoke("index", lake, "--analyzer", "llm")
    assert result.exit_code == 2
    assert "no usable model" in result.stderr and "GEMINI_API_KEY" in result.stderr
    assert "Traceback" not in result.output and not (lake / ".dslake").exists()
