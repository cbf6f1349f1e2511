"""Models for the agent's roles: providers behind one protocol, and LLM, the one call site around them.

    from dsstar_lake.llm import LLM, JsonlRecorder
    llm = LLM(settings, recorder=JsonlRecorder(run_dir / "trace.jsonl"), cache_path=catalog / "llm_cache.sqlite")
    answer = llm.complete("planner", prompt, system=None).text
    llm.totals  # calls, tokens, cost so far

SDKs (google-genai, openai) are imported only when a provider first calls them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsstar_lake.llm.base import ROLES, Completion, Provider, RetryableError
    from dsstar_lake.llm.call import LLM
    from dsstar_lake.llm.record import CallRecord, JsonlRecorder, Totals
    from dsstar_lake.llm.registry import (
        check_configured,
        describe_configuration,
        llm_flag_overrides,
        make_provider,
        model_for,
    )

# Each name's module, loaded on first use: importing one submodule (the CLI's llm.flags, keys) runs this file,
# and the call site with its retry machinery is not needed by a command that never calls a model.
_HOMES = {
    "ROLES": "base", "Completion": "base", "Provider": "base", "RetryableError": "base", "LLM": "call",
    "CallRecord": "record", "JsonlRecorder": "record", "Totals": "record", "check_configured": "registry",
    "describe_configuration": "registry", "llm_flag_overrides": "registry", "make_provider": "registry",
    "model_for": "registry",
}

__all__ = [
    "LLM",
    "ROLES",
    "CallRecord",
    "Completion",
    "JsonlRecorder",
    "Provider",
    "RetryableError",
    "Totals",
    "check_configured",
    "describe_configuration",
    "llm_flag_overrides",
    "make_provider",
    "model_for",
]


def __getattr__(name: str) -> Any:
    """Return a public name, importing its submodule the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
