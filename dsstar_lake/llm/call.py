"""The one call site: every model call goes through LLM.complete (model choice, budget, cache, retries, trace)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dsstar_lake.base.errors import BudgetExceeded, ConfigError, DslakeError, ProviderError
from dsstar_lake.llm.base import CALLING_RUN, Completion, Provider, RetryableError, estimate_tokens
from dsstar_lake.llm.cache import ResponseCache, prompt_hash
from dsstar_lake.llm.record import CallRecord, Totals, cost_usd, price_for
from dsstar_lake.llm.registry import UNPRICED, make_provider, model_for

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

log = logging.getLogger("dsstar_lake.llm")
Recorder = Callable[[CallRecord], None]
CACHE_MODES = ("off", "record", "replay")


class LLM:
    """Call models for the agent's roles with bounded retries, a budget, an optional cache and a record of each call.

    Cache modes (llm.cache): `off`; `record` always asks the provider and stores each answer; `replay`
    answers from the cache when it has the key and asks (and stores) otherwise. The key is provider,
    model, role, sha256 of system+prompt, and the how-many-th time this LLM saw that key, so a replayed
    run that asks the same thing twice gets the two recorded answers in order. Cache hits are free:
    they count in `calls` but not against llm.max_llm_calls or llm.max_cost.
    """

    def __init__(
        self,
        settings: Settings,
        provider: Provider | None = None,
        recorder: Recorder | None = None,
        cache_path: str | Path | None = None,
        run_id: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.provider = provider if provider is not None else make_provider(settings)
        self.recorder = recorder
        self.run_id = run_id
        self._sleep = sleep
        self.cache_mode = settings.llm.cache.lower()
        if self.cache_mode not in CACHE_MODES:
            raise ConfigError(f"llm.cache must be one of {', '.join(CACHE_MODES)}, not {self.cache_mode!r}")
        if self.cache_mode != "off" and cache_path is None:
            raise ConfigError(f"llm.cache={self.cache_mode} needs a catalog to keep the cache in")
        self.cache = ResponseCache(cache_path) if self.cache_mode != "off" and cache_path else None
        self._lock = threading.Lock()
        self._totals = Totals()
        self._seq = 0
        self._started = 0  # provider calls let through the budget
        self._seen: dict[tuple[str, str, str, str], int] = {}

    # -- public -------------------------------------------------------------------------------------

    def model_for(self, role: str) -> str:
        """Return the model a role uses: llm.models.<role>, else llm.model."""
        return model_for(self.settings, role)

    @property
    def totals(self) -> Totals:
        """Return a snapshot of the running totals."""
        with self._lock:
            return replace(self._totals)

    def answers(self, role: str) -> bool:
        """Tell whether the provider can answer this role (only a scripted provider without a rule for it cannot)."""
        can = getattr(self.provider, "answers", None)
        return True if can is None else bool(can(role))

    def complete(
        self, role: str, prompt: str, system: str | None = None, *, allow_over_budget: bool = False
    ) -> Completion:
        """Return the model's answer for one role's prompt; raise BudgetExceeded or ProviderError.

        allow_over_budget lets one last call (e.g. the finalyzer's) through after the budget is spent.
        """
        model = self.model_for(role)
        provider = self.provider.name
        started_at, t0 = time.time(), time.perf_counter()
        key, index = self._cache_key(provider, model, role, prompt, system)
        if self.cache is not None and self.cache_mode == "replay":
            hit = self.cache.get(provider, model, role, key, index)
            if hit is not None:
                self._finish(role, model, prompt, system, hit, started_at, t0, attempts=0, retry_errors=[])
                return hit
        self._reserve(model, prompt, system, allow_over_budget)
        attempts: list[int] = [0]
        retry_errors: list[str] = []
        try:
            completion = self._with_retries(role, model, prompt, system, attempts, retry_errors)
        except BaseException as exc:
            self._fail(role, model, prompt, system, exc, started_at, t0, attempts[0], retry_errors)
            raise
        if self.cache is not None:
            self.cache.put(provider, model, role, key, index, completion)
        self._finish(role, model, prompt, system, completion, started_at, t0, attempts[0], retry_errors)
        return completion

    def close(self) -> None:
        """Close the provider's client and the cache."""
        closer = getattr(self.provider, "close", None)
        if callable(closer):
            closer()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- steps ----------------------------------------------------------------------------------------

    def _cache_key(self, provider: str, model: str, role: str, prompt: str, system: str | None) -> tuple[str, int]:
        if self.cache is None:
            return "", 0
        key = prompt_hash(prompt, system)
        with self._lock:
            index = self._seen.get((provider, model, role, key), 0)
            self._seen[(provider, model, role, key)] = index + 1
        return key, index

    def _price(self, model: str) -> tuple[float, float] | None:
        """Return [input, output] USD per million tokens for a model; a person answering costs nothing."""
        if self.provider.name in UNPRICED:
            return (0.0, 0.0)
        return price_for(self.settings.llm.pricing, model)

    def _reserve(self, model: str, prompt: str, system: str | None, allow_over_budget: bool) -> None:
        """Count the call against the budget, or raise BudgetExceeded if it would go past it."""
        max_calls = self.settings.llm.max_llm_calls
        max_cost = self.settings.llm.max_cost
        with self._lock:
            if not allow_over_budget:
                if max_calls > 0 and self._started >= max_calls:
                    raise BudgetExceeded(
                        f"LLM call budget reached: {self._started} of llm.max_llm_calls={max_calls}",
                        hint="raise --max-llm-calls (0 = unlimited)",
                    )
                # The output is unknown before the call, so the check is spent + this prompt's input.
                price = self._price(model)
                projected = self._totals.cost_usd + (cost_usd(price, estimate_tokens((system or "") + prompt), 0) or 0)
                if max_cost > 0 and projected > max_cost:
                    raise BudgetExceeded(
                        f"LLM cost budget reached: ${self._totals.cost_usd:.4f} spent of llm.max_cost=${max_cost:g}",
                        hint="raise --max-cost (0 = unlimited)",
                    )
            self._started += 1

    def _with_retries(
        self, role: str, model: str, prompt: str, system: str | None, attempts: list[int], retry_errors: list[str]
    ) -> Completion:
        """Ask the provider, retrying only RetryableError with exponential backoff and jitter."""

        def attempt() -> Completion:
            attempts[0] += 1
            calling = CALLING_RUN.set(self.run_id)
            try:
                return self.provider.complete(model, prompt, system, self.settings, role=role)
            finally:
                CALLING_RUN.reset(calling)

        # The first attempt goes without tenacity, which nearly every call then never needs: importing it loads
        # tornado's glue and asyncio when tornado is installed (~0.1 CPU-s, on an ask's path to its first script).
        # A retryable failure becomes the first attempt of the retry loop below, as if tenacity had made it.
        try:
            return attempt()
        except RetryableError as exc:
            failed = exc
        return self._retry(role, attempt, failed, attempts, retry_errors)

    def _retry(self, role: str, attempt: Callable[[], Completion], failed: RetryableError, attempts: list[int],
               retry_errors: list[str]) -> Completion:
        """Go on after a first attempt that failed with `failed`: back off, retry, give up after llm.max_retries."""
        import tenacity

        max_retries = max(0, self.settings.llm.max_retries)
        initial = self.settings.llm.backoff_initial_s
        longest = self.settings.llm.backoff_max_s
        backoff = tenacity.wait_exponential_jitter(initial=initial, max=longest, jitter=initial)

        def wait(state: tenacity.RetryCallState) -> float:
            delay = backoff(state)
            outcome = state.outcome
            hinted = getattr(outcome.exception(), "retry_after_s", None) if outcome else None
            return max(delay, min(hinted, longest)) if hinted else delay

        def before_sleep(state: tenacity.RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            retry_errors.append(str(error))
            log.info("retrying %s after %s (attempt %d)", role, error, state.attempt_number)

        first = [failed]

        def replayed_then_attempt() -> Completion:
            if first:  # the attempt already made: its outcome, not a second call
                raise first.pop()
            return attempt()

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max_retries + 1),
            wait=wait,
            retry=tenacity.retry_if_exception_type(RetryableError),
            before_sleep=before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(replayed_then_attempt)
        except RetryableError as exc:
            raise ProviderError(
                f"{exc}; gave up after {attempts[0]} attempts; wait and run again, or raise llm.max_retries"
            ) from exc

    def _finish(
        self, role: str, model: str, prompt: str, system: str | None, completion: Completion,
        started_at: float, t0: float, attempts: int, retry_errors: list[str],
    ) -> None:
        price = self._price(model)
        cost = 0.0 if completion.cached else cost_usd(price, completion.input_tokens, completion.output_tokens)
        with self._lock:
            self._seq += 1
            seq = self._seq
            totals = self._totals
            totals.calls += 1
            totals.cached_calls += completion.cached
            totals.provider_calls += not completion.cached
            if not completion.cached:
                totals.input_tokens += completion.input_tokens
                totals.output_tokens += completion.output_tokens
            if cost is None:
                totals.unpriced_calls += 1
            else:
                totals.cost_usd += cost
        self._record(CallRecord(
            seq=seq, role=role, provider=completion.provider, model=model, prompt=prompt, system=system,
            response=completion.text, input_tokens=completion.input_tokens, output_tokens=completion.output_tokens,
            latency_s=completion.latency_s, elapsed_s=time.perf_counter() - t0, cost_usd=cost,
            cached=completion.cached, attempts=attempts, retry_errors=retry_errors, started_at=started_at,
            run_id=self.run_id,
        ))

    def _fail(
        self, role: str, model: str, prompt: str, system: str | None, exc: BaseException,
        started_at: float, t0: float, attempts: int, retry_errors: list[str],
    ) -> None:
        with self._lock:
            self._seq += 1
            seq = self._seq
            self._totals.failed_calls += 1
            self._totals.provider_calls += 1
        message = str(exc) if isinstance(exc, DslakeError) else f"{type(exc).__name__}: {exc}"
        self._record(CallRecord(
            seq=seq, role=role, provider=self.provider.name, model=model, prompt=prompt, system=system,
            response=None, elapsed_s=time.perf_counter() - t0, attempts=attempts, retry_errors=retry_errors,
            error=message, started_at=started_at, run_id=self.run_id,
        ))

    def _record(self, record: CallRecord) -> None:
        if self.recorder is not None:
            self.recorder(record)
