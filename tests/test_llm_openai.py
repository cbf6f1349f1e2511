"""The OpenAI-compatible provider: the real openai client against a loopback /v1/chat/completions server."""

from __future__ import annotations

import sys

import pytest
from llm_harness import LLM_ENV_VARS, FakeLLMServer, llm_settings

from dsstar_lake.base.errors import ModelNotConfigured, ProviderError
from dsstar_lake.llm import LLM, describe_configuration

pytest.importorskip("openai")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server():
    with FakeLLMServer(responder=lambda request: f"echo: {request.prompt}") as fake:
        yield fake


def make_llm(server, **llm):
    settings = llm_settings(provider="openai", base_url=server.url + "/v1", model="qwen2.5-coder", **llm)
    return LLM(settings)


def test_success_with_a_local_server_and_no_key(server):
    completion = make_llm(server).complete("coder", "print 1", system="you write python")
    assert completion.text == "echo: print 1"
    assert completion.provider == "openai" and completion.model == "qwen2.5-coder"
    assert completion.input_tokens == (len("you write python" + "print 1") + 3) // 4
    assert completion.output_tokens == (len("echo: print 1") + 3) // 4
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer none"
    assert request.system == "you write python"
    # local servers understand max_tokens, not max_completion_tokens
    assert request.body["max_tokens"] == 8192 and "max_completion_tokens" not in request.body


def test_key_from_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    make_llm(server).complete("coder", "q")
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


def test_500_then_success_is_retried(server):
    server.push(500)
    assert make_llm(server).complete("coder", "q").text == "echo: q"
    assert len(server.requests) == 2


def test_rejected_key_is_not_retried(server):
    server.push(401)
    with pytest.raises(ProviderError, match="openai qwen2.5-coder: the API key was rejected.*OPENAI_API_KEY"):
        make_llm(server).complete("coder", "q")
    assert len(server.requests) == 1


def test_malformed_body_is_a_clear_error(server):
    server.push(200, body="<html>not an API</html>")
    with pytest.raises(ProviderError, match="not a chat completion.*--base-url"):
        make_llm(server).complete("coder", "q")
    assert len(server.requests) == 1


def test_content_filter_is_fatal(server):
    server.push(200, body={"choices": [{"index": 0, "message": {"role": "assistant", "content": None},
                                        "finish_reason": "content_filter"}]})
    with pytest.raises(ProviderError, match="blocked"):
        make_llm(server).complete("coder", "q")
    assert len(server.requests) == 1


def test_missing_package_says_how_to_install(server, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` raise ImportError
    with pytest.raises(ModelNotConfigured, match=r"pip install -e '\.\[openai\]'"):
        make_llm(server).complete("coder", "q")
    assert server.requests == []


def test_describe_without_key_for_local_server(server):
    settings = llm_settings(provider="openai", base_url=server.url + "/v1", model="qwen2.5-coder")
    described = describe_configuration(settings)
    assert described["credentials_present"] is True
    assert described["base_url"] == server.url + "/v1"
    assert {row["model"] for row in described["roles"]} == {"qwen2.5-coder"}
