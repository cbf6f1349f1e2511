"""Gemini through google-genai: Google AI Studio keys, or Vertex AI when google-genai's own variables say so."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ModelNotConfigured, ProviderError
from dsstar_lake.llm.base import (
    HOW_TO_CONFIGURE,
    Completion,
    RetryableError,
    fatal,
    is_transient,
    parse_retry_after,
    short,
)

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
VERTEX_VARS = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE")
BLOCKED_FINISH = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def vertex_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Tell whether google-genai will use Vertex AI (its GOOGLE_GENAI_USE_VERTEXAI variable is true)."""
    env = os.environ if environ is None else environ
    return any(env.get(var, "").strip().lower() in ("1", "true") for var in VERTEX_VARS)


def key_source(environ: Mapping[str, str] | None = None) -> str | None:
    """Name the environment variable or mode that supplies Gemini credentials, or None."""
    env = os.environ if environ is None else environ
    if vertex_enabled(env):
        return "Vertex AI (" + ", ".join(v for v in VERTEX_VARS if env.get(v)) + ")"
    from dsstar_lake.llm import keys

    found = keys.find_key("gemini", KEY_VARS, env)
    return found[1] if found else None


class GeminiProvider:
    """Call generateContent with the SDK's retries off, so the call site's retries are the only ones."""

    # What the registry (llm/registry.py) and `dslake models` know of this provider, declared here.
    name = "gemini"
    key_vars = KEY_VARS  # read in this order, then the keys file (`dslake keys set gemini`)
    needs_key = True  # or Vertex AI, which google-genai's own variables switch on
    base_url_var = "GOOGLE_GEMINI_BASE_URL"  # a proxy; --base-url (llm.base_url) wins
    default_base_url = None  # google-genai's own endpoint
    fix_hint = None  # the ways to configure any provider (llm/base.py, HOW_TO_CONFIGURE)

    @classmethod
    def from_settings(cls, settings: Settings) -> GeminiProvider:
        """Build from llm.base_url and llm.timeout_s (the client is made on the first call)."""
        return cls(settings)

    @classmethod
    def credentials(cls, settings: Settings) -> tuple[bool, str]:
        """Return (usable, where the credentials come from), never the key itself."""
        source = key_source()
        return (source is not None,
                source or f"none: set {' or '.join(cls.key_vars)}, or `dslake keys set {cls.name}`")

    def __init__(self, settings: Settings, api_key: str | None = None, base_url: str | None = None) -> None:
        self._api_key = api_key
        self._base_url = base_url or settings.llm.base_url or None
        self._timeout_ms = max(1, int(settings.llm.timeout_s * 1000))
        self._client: Any = None
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> Any:
        if not self._api_key and key_source() is None:
            raise ModelNotConfigured(f"gemini: no credentials; {HOW_TO_CONFIGURE}")
        from google import genai
        from google.genai import types

        http_options = types.HttpOptions(
            timeout=self._timeout_ms,
            # attempts=1: the SDK must not retry underneath the call site's bounded retries.
            retry_options=types.HttpRetryOptions(attempts=1),
            base_url=self._base_url,
        )
        api_key = self._api_key
        if not api_key and not vertex_enabled():
            # Passed explicitly so GEMINI_API_KEY wins over GOOGLE_API_KEY, as `dslake models` reports it.
            from dsstar_lake.llm import keys

            found = keys.find_key(self.name, self.key_vars)
            api_key = found[0] if found else None
        try:
            return genai.Client(api_key=api_key or None, http_options=http_options)
        except ValueError as exc:
            raise ModelNotConfigured(f"gemini: {short(exc)}; {HOW_TO_CONFIGURE}") from exc

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings, role: str = ""
    ) -> Completion:
        """Send one prompt and return the first candidate's text with its token counts."""
        from google.genai import errors, types

        client = self._get_client()
        config = types.GenerateContentConfig(
            system_instruction=system or None,
            temperature=settings.llm.temperature,
            max_output_tokens=settings.llm.max_output_tokens,
        )
        start = time.perf_counter()
        try:
            response = client.models.generate_content(model=model, contents=prompt, config=config)
        except errors.APIError as exc:
            raise _classify(exc, model) from exc
        except ValueError as exc:  # JSON that does not parse, or does not validate as a response
            raise _malformed(model, exc) from exc
        except Exception as exc:
            if is_transient(exc):
                raise RetryableError(self.name, model, f"connection failed ({type(exc).__name__}: {short(exc)})") from exc
            raise
        latency = time.perf_counter() - start
        text = _text_of(response, model, settings)
        usage = response.usage_metadata
        output = (getattr(usage, "candidates_token_count", 0) or 0) + (getattr(usage, "thoughts_token_count", 0) or 0)
        return Completion(
            text=text,
            input_tokens=(getattr(usage, "prompt_token_count", 0) or 0),
            output_tokens=output,  # thinking tokens are billed as output
            latency_s=latency,
            model=model,
            provider=self.name,
        )

    def close(self) -> None:
        """Close the HTTP client."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _classify(exc: Any, model: str) -> Exception:
    """Map a google-genai APIError to a retryable or a fatal error."""
    code = int(getattr(exc, "code", 0) or 0)
    status = getattr(exc, "status", None) or ""
    message = short(getattr(exc, "message", None) or exc)
    if code in (408, 429) or code >= 500:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        retry_after = parse_retry_after(headers.get("retry-after") if hasattr(headers, "get") else None)
        return RetryableError("gemini", model, f"{code} {status}: {message}", retry_after)
    details = str(getattr(exc, "details", ""))
    if code == 400 and ("API_KEY_INVALID" in details or "API key not valid" in details):
        return fatal("gemini", model, f"the API key was rejected ({code} {status})",
                     "set GEMINI_API_KEY (or GOOGLE_API_KEY) to a valid key from https://aistudio.google.com/apikey")
    if code in (401, 403):
        return fatal("gemini", model, f"not authorized ({code} {status}: {message})",
                     "check the key, or that the Gemini / Vertex AI API is enabled for its project")
    if code == 404:
        return fatal("gemini", model, f"model not found ({code} {status}: {message})",
                     "check the model name (llm.model, --model or --model-ROLE), e.g. gemini-2.5-pro")
    return fatal("gemini", model, f"request rejected ({code} {status}: {message})",
                 "check the model name and `dslake config` (llm.*)")


def _malformed(model: str, exc: object) -> ProviderError:
    return fatal("gemini", model, f"the endpoint's answer is not a Gemini response ({short(exc, 120)})",
                 "check llm.base_url / GOOGLE_GEMINI_BASE_URL points at the Gemini API")


def _text_of(response: Any, model: str, settings: Settings) -> str:
    """Return the answer text, or raise: blocked prompt, blocked answer, cut off, empty or malformed."""
    feedback = getattr(response, "prompt_feedback", None)
    block = getattr(feedback, "block_reason", None)
    if block:
        reason = getattr(block, "value", block)
        raise fatal("gemini", model, f"the prompt was blocked ({reason})",
                    "rephrase the question or use another model")
    candidates = getattr(response, "candidates", None)
    if not candidates:
        raise _malformed(model, "no candidates")
    finish = getattr(candidates[0], "finish_reason", None)
    finish_name = str(getattr(finish, "value", finish) or "")
    text = response.text
    if text:
        return text
    if finish_name in BLOCKED_FINISH:
        raise fatal("gemini", model, f"the answer was blocked ({finish_name})",
                    "rephrase the question or use another model")
    if finish_name == "MAX_TOKENS":
        limit = settings.llm.max_output_tokens
        raise fatal("gemini", model, f"no answer text within llm.max_output_tokens={limit} (thinking used them up)",
                    "raise llm.max_output_tokens")
    # Gemini now and then returns an empty STOP candidate; a fresh sample usually has text.
    raise RetryableError("gemini", model, f"empty answer (finish reason {finish_name or 'none'})")
