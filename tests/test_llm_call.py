"""The one call site: model per role, accounting, budget, cache record/replay, retries, trace, threads."""

from __future__ import annotations

import json
import threading

import pytest
from llm_harness import llm_settings

from dsstar_lake.base.errors import BudgetExceeded, ConfigError, ProviderError
from dsstar_lake.llm import LLM, JsonlRecorder
from dsstar_lake.llm.scripted import Rule, ScriptedProvider

PRICED = {"model": "test-model", "pricing.test-model": [1.0, 2.0]}  # USD per million tokens in, out


def scripted(*rules, responder=None):
    return ScriptedProvider(list(rules), responder=responder)


def test_model_per_role():
    settings = llm_settings(provider="scripted", model="base", **{"models.coder": "fast"})
    provider = scripted(Rule(response="x"))
    llm = LLM(settings, provider=provider)
    assert llm.complete("coder", "q").model == "fast"
    assert llm.complete("planner", "q").model == "base"


def test_tokens_and_cost_add_up_across_calls(tmp_path):
    provider = scripted(
        Rule(role="planner", response="plan", input_tokens=1000, output_tokens=100),
        Rule(role="coder", response="code", input_tokens=3000, output_tokens=500),
    )
    trace = tmp_path / "run" / "trace.jsonl"
    llm = LLM(llm_settings(provider="scripted", **PRICED), provider=provider, recorder=JsonlRecorder(trace),
              run_id="r1")
    llm.complete("planner", "p1")
    llm.complete("coder", "c1", system="sys")
    llm.complete("planner", "p2")
    totals = llm.totals
    assert (totals.calls, totals.provider_calls, totals.failed_calls) == (3, 3, 0)
    assert (totals.input_tokens, totals.output_tokens) == (5000, 700)
    assert totals.cost_usd == pytest.approx((5000 * 1.0 + 700 * 2.0) / 1e6)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["seq"] for line in lines] == [1, 2, 3]
    assert {line["type"] for line in lines} == {"llm_call"}
    assert (lines[1]["role"], lines[1]["prompt"], lines[1]["system"], lines[1]["response"]) == ("coder", "c1", "sys", "code")
    assert lines[1]["cost_usd"] == pytest.approx((3000 + 500 * 2) / 1e6)
    assert lines[1]["model"] == "test-model" and lines[1]["provider"] == "scripted" and lines[1]["run_id"] == "r1"
    assert sum(line["cost_usd"] for line in lines) == pytest.approx(totals.cost_usd)


def test_unpriced_model_is_counted_but_not_costed():
    llm = LLM(llm_settings(provider="scripted", model="local-llama"), provider=scripted(Rule(response="x")))
    llm.complete("coder", "q")
    assert llm.totals.unpriced_calls == 1 and llm.totals.cost_usd == 0.0


def test_price_by_longest_prefix():
    settings = llm_settings(provider="scripted", model="gemini-2.5-flash-lite-preview")
    records = []
    llm = LLM(settings, provider=scripted(Rule(response="x", input_tokens=1_000_000, output_tokens=0)),
              recorder=records.append)
    llm.complete("coder", "q")
    assert records[0].cost_usd == pytest.approx(0.10)  # flash-lite's price, not flash's


def test_call_budget_stops_before_the_call():
    provider = scripted(Rule(response="x"))
    llm = LLM(llm_settings(provider="scripted", max_llm_calls=2), provider=provider)
    llm.complete("planner", "1")
    llm.complete("planner", "2")
    with pytest.raises(BudgetExceeded, match="2 of llm.max_llm_calls=2"):
        llm.complete("planner", "3")
    assert len(provider.calls) == 2
    assert llm.complete("finalyzer", "final", allow_over_budget=True).text == "x"


def test_cost_budget_stops_before_the_call():
    provider = scripted(Rule(response="x", input_tokens=1000, output_tokens=1000))  # $0.003 per call
    llm = LLM(llm_settings(provider="scripted", max_cost=0.005, **PRICED), provider=provider)
    llm.complete("planner", "1")
    with pytest.raises(BudgetExceeded):
        llm.complete("planner", "2" * 10_000_000)  # its input alone would pass the budget
    llm.complete("planner", "3")
    with pytest.raises(BudgetExceeded, match="cost budget"):
        llm.complete("planner", "4")
    assert len(provider.calls) == 2


def test_cache_record_then_replay_without_the_provider(tmp_path):
    cache = tmp_path / "llm_cache.sqlite"
    recording = scripted(Rule(response="first", times=1, input_tokens=10), Rule(response="second", input_tokens=10))
    llm = LLM(llm_settings(provider="scripted", cache="record", **PRICED), provider=recording, cache_path=cache)
    assert [llm.complete("planner", "same", system="s").text for _ in range(2)] == ["first", "second"]
    llm.close()

    def must_not_run(role, prompt, system):
        raise AssertionError("the provider was called during replay")

    records = []
    replay = LLM(llm_settings(provider="scripted", cache="replay", max_llm_calls=1, **PRICED),
                 provider=scripted(responder=must_not_run), cache_path=cache, recorder=records.append)
    again = [replay.complete("planner", "same", system="s") for _ in range(2)]
    assert [c.text for c in again] == ["first", "second"]  # same order: the call index is part of the key
    assert all(c.cached for c in again) and all(r.cached and r.attempts == 0 for r in records)
    assert (replay.totals.cached_calls, replay.totals.provider_calls, replay.totals.cost_usd) == (2, 0, 0.0)


def test_replay_miss_asks_the_provider_and_stores(tmp_path):
    cache = tmp_path / "llm_cache.sqlite"
    provider = scripted(Rule(response="fresh"))
    llm = LLM(llm_settings(provider="scripted", cache="replay"), provider=provider, cache_path=cache)
    assert llm.complete("coder", "new").cached is False
    assert llm.cache.count() == 1
    other_role = LLM(llm_settings(provider="scripted", cache="replay"), provider=provider, cache_path=cache)
    assert other_role.complete("planner", "new").cached is False  # role is part of the key


def test_cache_mode_needs_a_path():
    with pytest.raises(ConfigError, match="needs a catalog"):
        LLM(llm_settings(provider="scripted", cache="record"), provider=scripted(Rule(response="x")))


def test_fatal_error_is_recorded_and_not_retried():
    provider = scripted(Rule(response="model is gone", error="fatal"))
    records = []
    llm = LLM(llm_settings(provider="scripted"), provider=provider, recorder=records.append)
    with pytest.raises(ProviderError, match="model is gone"):
        llm.complete("coder", "q")
    assert len(provider.calls) == 1
    assert records[0].error and records[0].attempts == 1
    assert llm.totals.failed_calls == 1


def test_retries_are_bounded_with_growing_capped_delays():
    provider = scripted(Rule(response="503 unavailable", error="retryable"))
    delays = []
    settings = llm_settings(provider="scripted", max_retries=4, backoff_initial_s=0.5, backoff_max_s=3.0)
    llm = LLM(settings, provider=provider, sleep=delays.append)
    with pytest.raises(ProviderError, match="503 unavailable; gave up after 5 attempts"):
        llm.complete("coder", "q")
    assert len(provider.calls) == 5 and len(delays) == 4
    assert all(0.5 <= d <= 3.0 for d in delays)
    assert delays[-1] >= 2.0  # 0.5 * 2**2 at least, before the cap


def test_no_retries_means_one_attempt_and_no_wait():
    # The first attempt is made before the retry loop exists: with llm.max_retries = 0 it is the only one.
    provider = scripted(Rule(response="503 unavailable", error="retryable"))
    delays, records = [], []
    llm = LLM(llm_settings(provider="scripted", max_retries=0), provider=provider, sleep=delays.append,
              recorder=records.append)
    with pytest.raises(ProviderError, match="503 unavailable; gave up after 1 attempts"):
        llm.complete("coder", "q")
    assert len(provider.calls) == 1 and delays == [] and records[0].attempts == 1 and records[0].retry_errors == []


def test_parallel_calls_are_counted_exactly():
    provider = scripted(responder=lambda role, prompt, system: prompt[::-1])
    records = []
    llm = LLM(llm_settings(provider="scripted", max_llm_calls=200, **PRICED), provider=provider,
              recorder=records.append)

    def work(worker):
        for i in range(25):
            assert llm.complete("subquestion", f"w{worker}-{i}").text == f"w{worker}-{i}"[::-1]

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert llm.totals.calls == 200
    assert sorted(r.seq for r in records) == list(range(1, 201))
    assert llm.totals.input_tokens == sum(r.input_tokens for r in records)
    with pytest.raises(BudgetExceeded):
        llm.complete("subquestion", "one more")
