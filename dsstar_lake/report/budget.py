"""One model and one budget for a whole report: its own calls and every sub-question run share them."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import BudgetExceeded
from dsstar_lake.llm.base import Completion, estimate_tokens
from dsstar_lake.llm.record import cost_usd, price_for

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings
    from dsstar_lake.llm.base import Provider

# Roles let through after the budget is spent: a sub-question run's finalyzer turns its last round into an
# answer (as `ask` does), and the writer must still write the report from the evidence gathered.
OVER_BUDGET_ROLES = frozenset({"finalyzer", "writer"})


class SharedBudget:
    """Wrap a provider: count every answer against llm.max_llm_calls and llm.max_cost for the whole report.

    The sub-question runs get this wrapper as their provider (with their own per-run budgets off), so
    parallel runs share one purse. Answers are counted when they arrive, so parallel calls already under
    way may take the total past the call budget by at most the number of jobs. It has no close(): each
    sub-question run closes its LLM, and that must not close the shared client; call shutdown() at the end.
    """

    def __init__(self, provider: Provider, settings: Settings) -> None:
        self.provider = provider
        self.name = provider.name
        self.max_calls = max(0, settings.llm.max_llm_calls)
        self.max_cost = max(0.0, settings.llm.max_cost)
        self.pricing = dict(settings.llm.pricing)
        self._lock = threading.Lock()
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0

    def answers(self, role: str) -> bool:
        """Tell whether the wrapped provider can answer this role (see LLM.answers)."""
        can = getattr(self.provider, "answers", None)
        return True if can is None else bool(can(role))

    def complete(
        self, model: str, prompt: str, system: str | None, settings: Settings, role: str = ""
    ) -> Completion:
        """Answer through the wrapped provider unless the report's budget is spent (for this role)."""
        if role not in OVER_BUDGET_ROLES:
            self._check(model, prompt, system)
        completion = self.provider.complete(model, prompt, system, settings, role=role)
        with self._lock:
            self.calls += 1
            self.input_tokens += completion.input_tokens
            self.output_tokens += completion.output_tokens
            self.cost_usd += cost_usd(price_for(self.pricing, model), completion.input_tokens,
                                      completion.output_tokens) or 0.0
        return completion

    def _check(self, model: str, prompt: str, system: str | None) -> None:
        with self._lock:
            if self.max_calls and self.calls >= self.max_calls:
                raise BudgetExceeded(f"report call budget reached: {self.calls} of llm.max_llm_calls="
                                     f"{self.max_calls}", hint="raise --max-llm-calls (0 = unlimited)")
            projected = self.cost_usd + (cost_usd(price_for(self.pricing, model),
                                                  estimate_tokens((system or "") + prompt), 0) or 0.0)
            if self.max_cost and projected > self.max_cost:
                raise BudgetExceeded(
                    f"report cost budget reached: ${self.cost_usd:.4f} spent of "
                    f"llm.max_cost=${self.max_cost:g}",
                    hint="raise --max-cost (0 = unlimited)")

    def exhausted(self) -> bool:
        """Tell whether no further (non-final) call would be let through."""
        with self._lock:
            return bool(self.max_calls and self.calls >= self.max_calls) or bool(
                self.max_cost and self.cost_usd >= self.max_cost)

    def spent(self) -> dict[str, Any]:
        """Return the calls, tokens and cost of the whole report so far (cache hits are free)."""
        with self._lock:
            return {"llm_calls": self.calls, "input_tokens": self.input_tokens,
                    "output_tokens": self.output_tokens, "cost_usd": round(self.cost_usd, 6)}

    def shutdown(self) -> None:
        """Close the wrapped provider's client."""
        closer = getattr(self.provider, "close", None)
        if callable(closer):
            closer()
