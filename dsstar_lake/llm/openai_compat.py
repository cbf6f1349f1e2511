"""Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio) via the openai client."""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ModelNotConfigured
from dsstar_lake.llm.base import Completion, RetryableError, fatal, is_transient, parse_retry_after, short

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

MISSING = "the openai package is not installed; install the openai extra (in the clone: pip install -e '.[openai]')"
BLOCKED_FINISH = {"content_filter"}


def openai_installed() -> bool:
    """Tell whether the optional openai package can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("openai") is not None


class OpenAICompatProvider:
    """Call /chat/completions with the client's retries off, so the call site's retries are the only ones."""

    # What the registry (llm/registry.py) and `dslake models` know of this provider, declared here.
    name = "openai"
    key_vars = ("OPENAI_API_KEY",)  # then the keys file (`dslake keys set openai`)
    needs_key = False  # api.openai.com needs one; a local server (--base-url) takes none
    base_url_var = "OPENAI_BASE_URL"  # the openai client's own variable; --base-url (llm.base_url) wins
    default_base_url = "https://api.openai.com/v1"
    fix_hint = None  # the ways to configure any provider (llm/base.py, HOW_TO_CONFIGURE)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatProvider:
        """Build from llm.base_url and llm.timeout_s (the client is made on the first call)."""
        return cls(settings)

    @classmethod
    def credentials(cls, settings: Settings) -> tuple[bool, str]:
        """Return (usable, where the credentials come from), never the key itself."""
        from dsstar_lake.llm import keys

        if not openai_installed():
            return False, MISSING
        found = keys.find_key(cls.name, cls.key_vars)
        if found:
            return True, found[1]
        own_server = settings.llm.base_url or os.environ.get(cls.base_url_var, "")
        if own_server:
            return True, f"no key (fine for a local server at {own_server})"
        return False, f"none: set {cls.key_vars[0]}, or --base-url URL for a local server"

    def __init__(self, settings: Settings, api_key: str | None = None, base_url: str | None = None) -> None:
        from dsstar_lake.llm import keys

        # Local servers take any key; the official client refuses to start without one.
        found = keys.find_key(self.name, self.key_vars)
        self._api_key = api_key or (found[0] if found else "none")
        # None lets the client read OPENAI_BASE_URL, then default to api.openai.com.
        self._base_url = base_url or settings.llm.base_url or None
        self._timeout_s = settings.llm.timeout_s
        self._client: Any = None
        self._lock = threading.Lock()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    from openai import OpenAI
                except ImportError as exc:
                    raise ModelNotConfigured(f"openai: {MISSING}") from exc
                self._client = OpenAI(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=self._timeout_s
                )
            return self._client

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings, role: str = ""
    ) -> Completion:
        """Send one chat turn and return the first choice's text with its token counts."""
        client = self._get_client()
        import openai

        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        limit = settings.llm.max_output_tokens
        # api.openai.com's newer models reject max_tokens; local servers know only max_tokens.
        limit_arg = {"max_tokens": limit} if self._custom_endpoint(client) else {"max_completion_tokens": limit}
        start = time.perf_counter()
        try:
            response = client.chat.completions.create(
                model=model, messages=messages, temperature=settings.llm.temperature, **limit_arg
            )
        except openai.APIStatusError as exc:
            raise _classify(exc, model, str(client.base_url)) from exc
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise RetryableError(self.name, model, f"cannot reach {client.base_url} ({short(exc)})") from exc
        except (openai.APIResponseValidationError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise _malformed(model, exc) from exc
        except Exception as exc:
            if is_transient(exc):
                raise RetryableError(self.name, model, f"connection failed ({type(exc).__name__})") from exc
            raise
        latency = time.perf_counter() - start
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise _malformed(model, "no choices")
        choice = choices[0]
        text = choice.message.content
        if choice.finish_reason in BLOCKED_FINISH or (not text and getattr(choice.message, "refusal", None)):
            raise fatal(self.name, model, f"the answer was blocked ({choice.finish_reason or 'refusal'})",
                        "rephrase the question or use another model")
        if not text:
            if choice.finish_reason == "length":
                raise fatal(self.name, model, f"no answer text within llm.max_output_tokens={limit}",
                            "raise llm.max_output_tokens")
            raise RetryableError(self.name, model, f"empty answer (finish reason {choice.finish_reason})")
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s=latency,
            model=model,
            provider=self.name,
        )

    def _custom_endpoint(self, client: Any) -> bool:
        return "api.openai.com" not in str(client.base_url)

    def close(self) -> None:
        """Close the HTTP client."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _classify(exc: Any, model: str, base_url: str) -> Exception:
    """Map an openai APIStatusError to a retryable or a fatal error."""
    code = int(getattr(exc, "status_code", 0) or 0)
    message = short(getattr(exc, "message", None) or exc)
    if code in (408, 409, 429) or code >= 500:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        return RetryableError("openai", model, f"{code}: {message}", parse_retry_after(headers.get("retry-after")))
    if code == 401:
        return fatal("openai", model, f"the API key was rejected ({code}: {message})",
                     f"set OPENAI_API_KEY to a key valid for {base_url}")
    if code == 403:
        return fatal("openai", model, f"not allowed ({code}: {message})",
                     f"check that the key may use this model at {base_url}")
    if code == 404:
        return fatal("openai", model, f"not found at {base_url} ({code}: {message})",
                     "check the model name (--model) and --base-url (it usually ends in /v1)")
    return fatal("openai", model, f"request rejected ({code}: {message})",
                 "check the model name and `dslake config` (llm.*)")


def _malformed(model: str, exc: object) -> Exception:
    return fatal("openai", model, f"the endpoint's answer is not a chat completion ({short(exc, 120)})",
                 "check --base-url points at an OpenAI-compatible /v1 endpoint")
