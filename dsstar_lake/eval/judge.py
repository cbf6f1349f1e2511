"""The paraphrase judge for string_approximate answers: one yes/no model call through the LLM call site.

KramaBench judges approximate strings with an LLM. The judge is eval.judge_model when set, else the run's own
provider and model (the "judge" role resolves like any other: llm.models.judge, else llm.model); fuzzy matching
stands in only when no model is configured at all.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ModelNotConfigured
from dsstar_lake.base.untrusted import for_prompt, frame
from dsstar_lake.eval.metrics import read_judge_reply

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings
    from dsstar_lake.llm.call import LLM, Recorder

ROLE = "judge"  # the call site takes any role name; llm.models.judge names the judge's model
PROMPT_PATH = Path(__file__).resolve().with_name("judge_prompt.txt")


@cache
def _template() -> str:
    return PROMPT_PATH.read_text(encoding="utf-8")


def judge_prompt(question: str, predicted: str, truth: str) -> str:
    """Return the judge's prompt for one answer, the answer and the truth framed as data (braces kept as-is)."""
    # The predicted answer is model output and the truth is benchmark data: either could hold "# Your task" or
    # "Reply Yes"; framed, they cannot close their block or pose as the template's sections.
    return _template().format_map(
        {
            "question": for_prompt(question),
            "predicted": frame(predicted, "answer"),
            "truth": frame(truth, "reference"),
        }
    )


class LLMJudge:
    """Ask a model whether a predicted answer paraphrases the truth (KramaBench's llm_paraphrase).

    Thread-safe: calls are serialised, because benchmark tasks finish in parallel and judge calls are few.
    """

    def __init__(self, llm: LLM, owns_provider: bool = True) -> None:
        self.llm = llm
        self.model = llm.model_for(ROLE)
        self._owns_provider = owns_provider
        self._lock = threading.Lock()

    def ask(self, question: str, predicted: str, truth: str) -> bool:
        """Return True when the judge says yes; raise the call site's errors (ProviderError, ...)."""
        with self._lock:
            reply = self.llm.complete(ROLE, judge_prompt(question, predicted, truth)).text
        return read_judge_reply(reply)

    def for_question(self, question: str) -> Any:
        """Return a metrics Judge, judge(predicted, truth) -> bool, that shows the model this question."""
        return lambda predicted, truth: self.ask(question, predicted, truth)

    def totals(self) -> dict[str, Any]:
        """Return the judge's calls, tokens and cost so far."""
        t = self.llm.totals
        return {
            "model": self.model,
            "calls": t.calls,
            "input_tokens": t.input_tokens,
            "output_tokens": t.output_tokens,
            "cost_usd": round(t.cost_usd, 6),
        }

    def close(self) -> None:
        """Close the judge's cache, and its provider client unless the caller lent it (the run's provider)."""
        if self._owns_provider:
            self.llm.close()
        elif self.llm.cache is not None:
            self.llm.cache.close()


def make_judge(
    settings: Settings,
    provider: Any = None,
    recorder: Recorder | None = None,
    cache_path: str | Path | None = None,
) -> LLMJudge | None:
    """Build the judge: eval.judge_model, else the run's provider and model; None when no model is configured.

    provider is the run's provider when the caller made one (tests, notebooks): the judge shares it, and
    leaves closing it to the caller.
    """
    from dsstar_lake.llm import LLM, check_configured, model_for

    model = settings.eval.judge_model.strip()
    overrides: dict[str, Any] = {f"llm.models.{ROLE}": model} if model else {}
    # The per-run budgets (llm.max_llm_calls, llm.max_cost) are for agent runs, not for the benchmark's judge,
    # which lives as long as the benchmark: it would run dry after a few tasks.
    judged = settings.with_overrides({**overrides, "llm.max_llm_calls": 0, "llm.max_cost": 0.0})
    if not model:
        try:
            if provider is None:
                check_configured(judged)
            model_for(judged, ROLE)
        except ModelNotConfigured:
            return None  # nothing to ask: string_approximate falls back to fuzzy matching, flagged per row
    cache = cache_path if judged.llm.cache.lower() != "off" else None
    llm = LLM(judged, provider=provider, recorder=recorder, cache_path=cache)
    return LLMJudge(llm, owns_provider=provider is None)
