"""Models for the agent's roles: providers behind one protocol, and LLM, the one call site around them.

    from dsstar_lake.llm import LLM, JsonlRecorder
    llm = LLM(settings, recorder=JsonlRecorder(run_dir / "trace.jsonl"), cache_path=catalog / "llm_cache.sqlite")
    answer = llm.complete("planner", prompt, system=None).text
    llm.totals  # calls, tokens, cost so far

SDKs (google-genai, openai) are imported only when a provider first calls them.
"""

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
