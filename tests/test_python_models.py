"""The Python API's model choice (Lake.open(lake, llm=..., manual_dir=..., model_for=...)) and typed answer values."""

from __future__ import annotations

import json

import pytest
from agent_helpers import FAST, SUM_WIDGETS, fenced, rules_file

from dsstar_lake.agent.answer_value import typed_value
from dsstar_lake.agent.state import Answer
from dsstar_lake.base.errors import UsageError
from dsstar_lake.lake import Lake
from dsstar_lake.llm.flags import LlmFlags

# ---- Lake.open's model keywords ----------------------------------------------------------------------------------


def test_a_manual_model_is_chosen_with_keywords(indexed, tmp_path):
    lake = Lake.open(indexed, llm="manual", manual_dir=tmp_path / "prompts")
    assert lake.settings.llm.provider == "manual" and lake.settings.llm.manual_dir == str(tmp_path / "prompts")
    # Kept as every run's overrides, as the command line's flags are.
    assert lake.run_overrides == {"llm.provider": "manual", "llm.manual_dir": str(tmp_path / "prompts")}
    lake.close()


def test_provider_model_base_url_and_a_model_per_role(indexed):
    lake = Lake.open(indexed, llm="openai", model="llama3.1", base_url="http://127.0.0.1:11434/v1",
                     model_for={"selector": "llama3.2:1b"}, max_llm_calls=12, max_cost=0.5)
    llm = lake.settings.llm
    assert (llm.provider, llm.base_url, llm.max_llm_calls, llm.max_cost) == (
        "openai", "http://127.0.0.1:11434/v1", 12, 0.5)
    # model= names every role's model; model_for= wins for its role, as --model and --model-for do.
    assert llm.models["selector"] == "llama3.2:1b"
    assert {model for role, model in llm.models.items() if role != "selector"} == {"llama3.1"}
    assert Lake.model_configuration(catalog=str(lake.catalog_dir), llm=LlmFlags(provider="openai"))
    lake.close()


def test_the_keywords_give_what_the_cli_flags_give(indexed):
    by_keywords = Lake.open(indexed, llm="openai", model="m1", model_for={"coder": "m2"})
    by_flags = Lake.open(indexed, llm=LlmFlags(provider="openai", model="m1", role_models={"coder": "m2"}))
    assert by_keywords.run_overrides == by_flags.run_overrides
    assert by_keywords.settings.values == by_flags.settings.values
    by_keywords.close()
    by_flags.close()


def test_no_model_keyword_leaves_the_settings_as_configured(indexed):
    lake = Lake.open(indexed)
    assert lake.run_overrides == {}
    lake.close()


@pytest.mark.parametrize(("keywords", "said"), [
    ({"llm": "claude"}, "llm= must be one of gemini, openai, manual, not 'claude'"),
    ({"llm": "openai", "model_for": {"painter": "m"}}, "model_for: unknown role 'painter'; roles: analyzer"),
    ({"model_for": {"coder": ""}}, "model_for: the model for coder must be a model's name, not ''"),
    ({"cache": "sometimes"}, "cache= must be one of off, record, replay, not 'sometimes'"),
    ({"llm": LlmFlags(provider="manual"), "model": "m"}, "give the model either as an LlmFlags or as keywords"),
    ({"llm": 3}, "llm= takes a provider's name, not int"),
])
def test_a_wrong_model_keyword_is_one_line_in_python_terms(indexed, keywords, said):
    with pytest.raises(UsageError) as caught:
        Lake.open(indexed, **keywords)
    assert str(caught.value).startswith(said) and "\n" not in str(caught.value) and "--" not in str(caught.value)


def test_an_ask_with_a_model_chosen_by_keywords_returns_a_number(indexed, tmp_path):
    rules = rules_file(tmp_path / "rules.jsonl",
                       {"role": "planner", "response": "Sum the units of the widget rows in data/sales.csv."},
                       {"role": "coder", "response": fenced(SUM_WIDGETS)},
                       {"role": "verifier", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced(SUM_WIDGETS)})
    lake = Lake.open(indexed, llm="scripted", scripted_file=rules)
    answer = lake.ask("How many widget units were sold in total?", overrides=FAST)
    lake.close()
    assert answer.value == 14 and isinstance(answer.value, int) and answer.text == "14"
    # Every record keeps the printed text under "value", as before: answer.json, --json, runs show, the web page.
    assert answer.to_dict()["value"] == "14" and "text" not in answer.to_dict()
    stored = json.loads((lake.catalog_dir / "runs" / answer.run_id / "answer.json").read_text())
    assert stored["value"] == "14"
    again = Answer.from_dict(stored)
    assert again.text == "14" and again.value == 14 and again.to_dict() == stored


# ---- typed values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [
    ("14", 14),
    ("  20.58\n", 20.58),
    ("-3", -3),
    ("\u22120.5", -0.5),
    ("1.2e-5", 1.2e-5),
    (".5", 0.5),
    ("7,805,421", 7805421),
    ("38.42%", 38.42),
    ("[2003, 2011]", [2003, 2011]),
    ('["California", "Nevada"]', ["California", "Nevada"]),
    ("['California', 'Nevada']", ["California", "Nevada"]),  # a Python list as print() shows it
    ("(1, 'a')", [1, "a"]),
    ("[np.float64(1.5), np.int64(2)]", [1.5, 2]),  # numpy 2's scalars inside a printed list
    ("np.float64(0.25)", 0.25),
    ('{"answer": 0.519}', 0.519),
    ('{"answer": [1, 2]}', [1, 2]),
])
def test_numbers_and_lists_are_typed(text, value):
    got = typed_value(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text", [
    "Wyoming", "Kings 12", "4.5 million", "12.5 ppm", "$2,089M", "True", "null", "100, 200", "1,23", "nan",
    '{"a": 1, "b": 2}', "14\n15", "[unclosed", "",
])
def test_anything_else_stays_its_text(text):
    assert typed_value(text) == text.strip()


def test_answer_value_reads_the_text_each_time():
    answer = Answer.from_dict({"value": "[1, 2]", "run_id": "r", "question": "q", "files_used": [], "context": [],
                               "rounds": 1, "verified": True, "re_retrievals": 0, "backtracks": 0,
                               "input_tokens": 0, "output_tokens": 0, "llm_calls": 0, "cost_usd": 0.0,
                               "seconds": 0.0})
    assert answer.value == [1, 2] and answer.text == "[1, 2]"
    answer.text = "Nevada"
    assert answer.value == "Nevada"


def test_the_readme_model_lines_open_the_lake_as_they_say(tmp_path, monkeypatch):
    import re
    import shutil
    import textwrap

    from conftest import REPO

    section = (REPO / "README.md").read_text().split("## Using it from Python", 1)[1].split("\n## ", 1)[0]
    block = textwrap.dedent(re.findall(r"```python\n(.*?)```", section, re.S)[1])
    opening = block.split("answer = lake.ask", 1)[0]  # the ask itself needs a model
    shutil.copytree(REPO / "data_samples", tmp_path / "data_samples", ignore=shutil.ignore_patterns(".dslake"))
    monkeypatch.chdir(tmp_path)
    found: dict[str, object] = {"Lake": Lake}
    exec(compile(opening, "README.md", "exec"), found)
    lake = found["lake"]
    assert lake.settings.llm.provider == "openai" and lake.settings.llm.models["selector"] == "llama3.2:1b"
    assert "answer.value" in block and "answer.text" in block
