"""The provider protocol, the completion it returns, and the two ways a provider call can fail."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dsstar_lake.base.errors import ProviderError

# Re-exported: defined in a module that imports nothing, so the CLI can offer them without loading the LLM layer.
from dsstar_lake.base.modelnames import PROVIDERS as PROVIDERS
from dsstar_lake.base.modelnames import ROLES as ROLES

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings


@dataclass(frozen=True)
class Completion:
    """One model answer with what it cost."""

    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    model: str
    provider: str
    cached: bool = False


# The run the model call under way belongs to. The call site sets it around each provider call, so a provider that
# shows its prompts to a person (manual) can name the run, without every provider taking an argument it ignores.
CALLING_RUN: ContextVar[str | None] = ContextVar("dslake_calling_run", default=None)


@runtime_checkable
class Provider(Protocol):
    """A way to reach a model; the call site adds retries, budget, cache and trace around it."""

    name: str

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings, role: str = ""
    ) -> Completion:
        """Return the model's answer to one prompt, or raise RetryableError / ProviderError."""
        ...


class DeclaredProvider(Protocol):
    """What a provider class declares about itself, as llm's models declare needs_key and key_env_var; the
    registry (llm/registry.py) reads only this."""

    name: str
    key_vars: tuple[str, ...]  # environment variables a key is read from, in order (then `dslake keys`' file)
    needs_key: bool  # whether it cannot work without one
    base_url_var: str | None  # the environment variable of its endpoint (None: it has none)
    default_base_url: str | None
    fix_hint: str | None  # the fix to name when its credentials are missing, if it has one of its own

    def from_settings(self, settings: Settings) -> Provider:
        """Build the provider from resolved settings (no network)."""
        ...

    def credentials(self, settings: Settings) -> tuple[bool, str]:
        """Return (usable, where the credentials come from), never a secret's value."""
        ...


class RetryableError(Exception):
    """A failure that may pass on retry: rate limit, 5xx, timeout, dropped connection."""

    def __init__(self, provider: str, model: str, what: str, retry_after_s: float | None = None) -> None:
        super().__init__(f"{provider} {model}: {what}")
        self.provider = provider
        self.model = model
        self.what = what
        self.retry_after_s = retry_after_s


def fatal(provider: str, model: str, what: str, todo: str) -> ProviderError:
    """Build the one-line error for a failure retrying will not fix: who, what happened, what to do."""
    label = f"{provider} {model}".strip()
    return ProviderError(f"{label}: {what}; {todo}")


def estimate_tokens(text: str) -> int:
    """Estimate a token count from characters (about 4 per token) where no tokenizer reports one."""
    return (len(text) + 3) // 4


def parse_retry_after(value: str | None) -> float | None:
    """Read a Retry-After header given in seconds; None when absent or a date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


# (top-level module, class name) of exceptions that mean the connection failed or timed out; matched by
# name so that no HTTP library has to be imported to classify an error.
_TRANSIENT = {
    ("httpx", "TransportError"),
    ("httpx2", "TransportError"),
    ("requests", "ConnectionError"),
    ("requests", "Timeout"),
    ("builtins", "ConnectionError"),
    ("builtins", "TimeoutError"),
}
# Transport errors that come from a bad configuration, not a bad moment.
_NOT_TRANSIENT = {"UnsupportedProtocol", "ProxyError", "LocalProtocolError"}


def is_transient(exc: BaseException) -> bool:
    """Tell whether an exception is a timeout or a failed/dropped connection worth retrying."""
    if type(exc).__name__ in _NOT_TRANSIENT:
        return False
    return any((cls.__module__.split(".")[0], cls.__name__) in _TRANSIENT for cls in type(exc).__mro__)


HOW_TO_CONFIGURE = (
    "set GEMINI_API_KEY (or GOOGLE_API_KEY) for Gemini, or keep it with `dslake keys set gemini`; or use a "
    "local OpenAI-compatible server with `--llm openai --base-url URL` (OPENAI_API_KEY for api.openai.com); or "
    "answer prompts yourself with `--llm manual` (on a terminal, or with `--manual-dir DIR` for prompt and answer "
    "files)"
)


def short(text: object, limit: int = 200) -> str:
    """Return the first line of a message, cut to a length that fits one error line."""
    line = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
