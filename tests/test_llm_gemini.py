"""The Gemini provider: the real google-genai client against a loopback server speaking generateContent."""

from __future__ import annotations

import socket

import pytest
from llm_harness import LLM_ENV_VARS, FakeLLMServer, gemini_bad_key_body, llm_settings

from dsstar_lake.base.errors import ModelNotConfigured, ProviderError
from dsstar_lake.llm import LLM


@pytest.fixture(autouse=True)
def gemini_env(monkeypatch):
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")


@pytest.fixture
def server():
    with FakeLLMServer(responder=lambda request: f"echo: {request.prompt}") as fake:
        yield fake


def make_llm(server, records=None, **llm):
    settings = llm_settings(provider="gemini", base_url=server.url, **llm)
    return LLM(settings, recorder=None if records is None else records.append)


def test_success_returns_text_and_token_counts(server):
    llm = make_llm(server)
    completion = llm.complete("planner", "hello there", system="be brief")
    assert completion.text == "echo: hello there"
    assert completion.provider == "gemini" and completion.model == "gemini-2.5-pro"
    # the fake counts 1 token per 4 characters of system + prompt, and of the answer
    assert completion.input_tokens == (len("be brief" + "hello there") + 3) // 4
    assert completion.output_tokens == (len("echo: hello there") + 3) // 4
    request = server.requests[0]
    assert request.path.endswith("/models/gemini-2.5-pro:generateContent")
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.system == "be brief"
    config = request.body["generationConfig"]
    assert config["temperature"] == 1.0 and config["maxOutputTokens"] == 8192


def test_role_model_and_google_gemini_base_url(server, monkeypatch):
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    settings = llm_settings(provider="gemini", **{"models.coder": "gemini-2.5-flash"})
    completion = LLM(settings).complete("coder", "write code")
    assert completion.model == "gemini-2.5-flash"
    assert server.requests[0].model == "gemini-2.5-flash"


def test_429_then_success_is_retried(server):
    records = []
    server.push(429)
    completion = make_llm(server, records).complete("planner", "q")
    assert completion.text == "echo: q"
    assert len(server.requests) == 2
    assert records[0].attempts == 2
    assert "429" in records[0].retry_errors[0]


def test_bad_key_is_one_clear_error_without_retry(server):
    server.push(400, body=gemini_bad_key_body())
    with pytest.raises(ProviderError) as info:
        make_llm(server).complete("planner", "q")
    message = str(info.value)
    assert "gemini gemini-2.5-pro" in message and "GEMINI_API_KEY" in message
    assert "\n" not in message
    assert len(server.requests) == 1


@pytest.mark.parametrize("body", ["this is not json", {"unexpected": 1}])
def test_malformed_body_is_a_clear_error(server, body):
    server.push(200, body=body)
    with pytest.raises(ProviderError, match="not a Gemini response.*base_url"):
        make_llm(server).complete("planner", "q")
    assert len(server.requests) == 1


def test_unknown_model_is_not_retried(server):
    server.push(404)
    with pytest.raises(ProviderError, match="model not found.*--model"):
        make_llm(server).complete("planner", "q")
    assert len(server.requests) == 1


def test_blocked_prompt(server):
    server.push(200, body={"promptFeedback": {"blockReason": "SAFETY"}})
    with pytest.raises(ProviderError, match="prompt was blocked \\(SAFETY\\)"):
        make_llm(server).complete("planner", "q")
    assert len(server.requests) == 1


def test_server_errors_give_up_after_max_retries(server):
    for _ in range(3):
        server.push(500)
    records = []
    with pytest.raises(ProviderError, match="gave up after 3 attempts"):
        make_llm(server, records, max_retries=2).complete("planner", "q")
    assert len(server.requests) == 3
    assert records[0].error and records[0].response is None


def test_thinking_tokens_count_as_output(server):
    server.push(200, body={
        "candidates": [{"content": {"parts": [{"text": "42"}], "role": "model"}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "thoughtsTokenCount": 30},
    })
    completion = make_llm(server).complete("planner", "q")
    assert (completion.text, completion.input_tokens, completion.output_tokens) == ("42", 10, 32)


def test_empty_candidate_is_retried(server):
    server.push(200, body={"candidates": [{"content": {"parts": [], "role": "model"}, "finishReason": "STOP"}]})
    assert make_llm(server).complete("planner", "q").text == "echo: q"
    assert len(server.requests) == 2


def test_refused_connection_is_retried_then_reported(server):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = llm_settings(provider="gemini", base_url=f"http://127.0.0.1:{port}", max_retries=1)
    with pytest.raises(ProviderError, match="connection failed.*gave up after 2 attempts"):
        LLM(settings).complete("planner", "q")


def test_missing_key_says_how_to_configure(server, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ModelNotConfigured, match="GEMINI_API_KEY.*--llm openai --base-url.*--llm manual"):
        make_llm(server).complete("planner", "q")
    assert server.requests == []


def test_gemini_api_key_wins_over_google_api_key(server, monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "other-key")
    make_llm(server).complete("planner", "q")
    assert server.requests[0].headers["x-goog-api-key"] == "test-key"
