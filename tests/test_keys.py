"""Model keys kept in a private file: `dslake keys`, mode 0600, the environment first, the real clients use them."""

from __future__ import annotations

import json
import os
import stat

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from llm_harness import LLM_ENV_VARS, FakeLLMServer, llm_settings

from dsstar_lake.base.errors import ConfigError
from dsstar_lake.llm import LLM, keys
from dsstar_lake.llm.gemini import key_source

SECRET = "AIza-stored-key-0123456789"


@pytest.fixture(autouse=True)
def no_key_variables(monkeypatch):
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def test_set_from_a_pipe_keeps_the_key_private_and_never_prints_it():
    result = CliRunner().invoke(cli, ["keys", "set", "gemini"], input=SECRET + "\n")
    assert result.exit_code == 0, result.output
    path = keys.keys_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"gemini": SECRET}
    listed = CliRunner().invoke(cli, ["keys", "list", "--json"])
    assert json.loads(listed.output)["providers"] == ["gemini"] and SECRET not in listed.output
    assert SECRET not in result.output and SECRET not in CliRunner().invoke(cli, ["models"]).output
    removed = CliRunner().invoke(cli, ["keys", "remove", "gemini"])
    assert "removed the gemini key" in removed.output and keys.stored_providers() == []


def test_the_environment_wins_over_the_file(monkeypatch):
    keys.set_key("gemini", SECRET)
    assert key_source() == keys.source_label()
    monkeypatch.setenv("GEMINI_API_KEY", "from-the-environment")
    assert key_source() == "GEMINI_API_KEY"


def test_the_real_gemini_client_sends_the_stored_key():
    keys.set_key("gemini", SECRET)
    with FakeLLMServer(responder=lambda request: "ok") as server:
        LLM(llm_settings(provider="gemini", base_url=server.url)).complete("planner", "hello")
        assert server.requests[0].headers["x-goog-api-key"] == SECRET


def test_the_real_openai_client_sends_the_stored_key():
    keys.set_key("openai", "sk-stored")
    with FakeLLMServer(responder=lambda request: "ok") as server:
        LLM(llm_settings(provider="openai", base_url=server.url + "/v1", model="m")).complete("coder", "hello")
        assert server.requests[0].headers["authorization"] == "Bearer sk-stored"


def test_a_keys_file_others_can_read_is_refused_with_its_fix():
    path = keys.set_key("gemini", SECRET)
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="can be read by other users"):
        keys.stored_key("gemini")
    result = CliRunner().invoke(cli, ["keys", "list"])
    assert result.exit_code == 2 and f"chmod 600 {path}" in result.output
    assert "Traceback" not in result.output


def test_a_link_planted_at_the_keys_file_is_replaced_not_written_through(tmp_path):
    victim = tmp_path / "elsewhere.json"  # a private file of keys the link points at
    victim.write_text('{"gemini": "kept"}')
    victim.chmod(0o600)
    path = keys.keys_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, path)
    keys.set_key("openai", "sk-new")
    assert victim.read_text() == '{"gemini": "kept"}' and not path.is_symlink()
    assert keys.stored_key("openai") == "sk-new" and keys.stored_key("gemini") == "kept"


def test_an_unknown_provider_or_an_empty_key_is_a_clear_error():
    assert CliRunner().invoke(cli, ["keys", "set", "claude"], input="x").exit_code == 2
    empty = CliRunner().invoke(cli, ["keys", "set", "gemini"], input="\n")
    assert empty.exit_code != 0 and "empty key" in empty.output and not keys.keys_path().exists()
