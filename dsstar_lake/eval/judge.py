"""The paraphrase judge for string_approximate answers: one yes/no model call through the LLM call site."""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.eval.metrics import read_judge_reply

if TYPE_CHECKING:
    from dsstar_lake.llm.call import LLM, Recorder
    from dsstar_lake.settings import Settings

ROLE = "judge"  # the call site takes any role name; llm.models.judge names the judge's model
PROMPT_PATH = Path(__file__).resolve().with_name("judge_prompt.txt")


@cache
def _template() -> str:
    return PROMPT_PATH.read_text(encoding="utf-8")


def judge_prompt(question: str, predicted: str, truth: str) -> str:
    """Return the judge's prompt for one answer (values are inserted as-is, braces and all)."""
    return _template().format_map({"question": question, "predicted": predicted, "truth": truth})


class LLMJudge:
    """Ask a model whether a predicted answer paraphrases the truth (KramaBench's llm_paraphrase).

    Thread-safe: calls are serialised, because benchmark tasks finish in parallel and judge calls are few.
    """

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.model = llm.model_for(ROLE)
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
        """Close the judge's provider client and cache."""
        self.llm.close()


def make_judge(
    settings: Settings,
    provider: Any = None,
    recorder: Recorder | None = None,
    cache_path: str | Path | None = None,
) -> LLMJudge | None:
    """Build the judge from eval.judge_model on the configured provider; None when no judge model is set."""
    from dsstar_lake.llm import LLM

    model = str(settings["eval.judge_model"] or "").strip()
    if not model:
        return None
    # The per-run budgets (llm.max_llm_calls, llm.max_cost) are for agent runs, not for the benchmark's judge.
    judged = settings.with_overrides(
        {f"llm.models.{ROLE}": model, "llm.max_llm_calls": 0, "llm.max_cost": 0.0}
    )
    cache = cache_path if str(judged["llm.cache"]).lower() != "off" else None
    return LLMJudge(LLM(judged, provider=provider, recorder=recorder, cache_path=cache))
