"""The scripted provider: rules from JSONL (role, substring, regex, times, fallback), callables, errors."""

from __future__ import annotations

import json

import pytest
from llm_harness import llm_settings

from dsstar_lake.base.errors import ConfigError, ModelNotConfigured, ProviderError
from dsstar_lake.llm import LLM
from dsstar_lake.llm.scripted import Rule, ScriptedProvider, load_rules


def write_rules(path, rules):
    path.write_text("# a scripted run\n\n" + "\n".join(json.dumps(r) for r in rules) + "\n")
    return path


def test_a_whole_multi_round_run_is_scripted_from_a_file(tmp_path):
    rules = write_rules(tmp_path / "run.jsonl", [
        {"role": "planner", "match": "Question:", "response": "1. load the csv", "times": 1},
        {"role": "planner", "response": "2. group by county"},
        {"role": "coder", "match": "/group by \\w+/", "response": "print(df.groupby('county'))"},
        {"role": "coder", "response": "import pandas"},
        {"role": "verifier", "response": "No", "times": 1},
        {"role": "verifier", "response": "Yes"},
        {"match": "/FINAL/i", "response": "the answer is 42"},
    ])
    settings = llm_settings(provider="scripted", scripted_file=str(rules))
    llm = LLM(settings)
    asked = [
        ("planner", "Question: which county?"),
        ("coder", "1. load the csv"),
        ("verifier", "is it enough?"),
        ("planner", "next step please"),
        ("coder", "steps: load, group by county"),
        ("verifier", "is it enough now?"),
        ("finalyzer", "write the final answer"),
    ]
    answers = [llm.complete(role, prompt).text for role, prompt in asked]
    assert answers == [
        "1. load the csv", "import pandas", "No", "2. group by county",
        "print(df.groupby('county'))", "Yes", "the answer is 42",
    ]
    assert llm.provider.unused() == []
    assert [role for role, _ in llm.provider.calls] == [role for role, _ in asked]


def test_unmatched_prompt_names_the_role_and_shows_the_prompt(tmp_path):
    provider = ScriptedProvider([Rule(role="planner", response="a plan")])
    llm = LLM(llm_settings(provider="scripted"), provider=provider)
    with pytest.raises(ProviderError, match="no rule answers role 'router'; prompt starts: 'Route this: now'"):
        llm.complete("router", "Route this:   \n now")


def test_used_up_rule_falls_to_the_next_then_errors():
    provider = ScriptedProvider([Rule(response="once", times=1)])
    assert provider.complete("m", "q", None, role="coder").text == "once"
    assert provider.unused() == []
    with pytest.raises(ProviderError, match="no rule answers"):
        provider.complete("m", "q", None, role="coder")


def test_callable_answers_what_no_rule_does():
    provider = ScriptedProvider(
        [Rule(role="verifier", response="Yes")],
        responder=lambda role, prompt, system: f"{role}:{prompt.upper()}",
    )
    assert provider.complete("m", "plan", None, role="planner").text == "planner:PLAN"
    assert provider.complete("m", "done?", None, role="verifier").text == "Yes"


def test_error_rules_drive_retries_at_the_call_site():
    provider = ScriptedProvider([
        Rule(response="429 rate limited", error="retryable", times=2),
        Rule(response="fine"),
    ])
    records = []
    llm = LLM(llm_settings(provider="scripted"), provider=provider, recorder=records.append)
    assert llm.complete("coder", "q").text == "fine"
    assert records[0].attempts == 3 and len(records[0].retry_errors) == 2


def test_token_counts_can_be_scripted():
    provider = ScriptedProvider([Rule(response="x", input_tokens=1000, output_tokens=10)])
    completion = provider.complete("m", "q", None, role="coder")
    assert (completion.input_tokens, completion.output_tokens) == (1000, 10)


def test_bad_rules_file_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"response": "ok"}\n{"respons": "typo"}\n')
    with pytest.raises(ConfigError, match="line 2"):
        load_rules(path)
    path.write_text('{"response": "ok", "times": 0}\n')
    with pytest.raises(ConfigError, match="times"):
        load_rules(path)


def test_missing_rules_file_is_not_configured(tmp_path):
    settings = llm_settings(provider="scripted", scripted_file=str(tmp_path / "nope.jsonl"))
    with pytest.raises(ModelNotConfigured, match="nope.jsonl"):
        LLM(settings)
