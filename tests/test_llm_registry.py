"""Provider choice, `dslake models` data (credentials never shown), check_configured, and CLI flag overrides."""

from __future__ import annotations

import json

import pytest
from llm_harness import LLM_ENV_VARS, llm_settings

from dsstar_lake.base.errors import ConfigError, ModelNotConfigured
from dsstar_lake.llm import ROLES, check_configured, describe_configuration, llm_flag_overrides, make_provider
from dsstar_lake.llm.gemini import GeminiProvider
from dsstar_lake.llm.manual import ManualProvider
from dsstar_lake.llm.openai_compat import OpenAICompatProvider
from dsstar_lake.llm.scripted import ScriptedProvider

SECRET = "AIza-very-secret-value"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in LLM_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


def test_make_provider_by_name(tmp_path):
    rules = tmp_path / "r.jsonl"
    rules.write_text('{"response": "x"}\n')
    assert isinstance(make_provider(llm_settings(provider="gemini")), GeminiProvider)
    assert isinstance(make_provider(llm_settings(provider="openai")), OpenAICompatProvider)
    assert isinstance(make_provider(llm_settings(provider="manual", manual_dir=str(tmp_path / "m"))), ManualProvider)
    assert isinstance(make_provider(llm_settings(provider="scripted", scripted_file=str(rules))), ScriptedProvider)
    with pytest.raises(ConfigError, match="unknown llm.provider 'claude'"):
        make_provider(llm_settings(provider="claude"))


def test_describe_lists_roles_models_prices_and_never_the_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    settings = llm_settings(provider="gemini", **{"models.coder": "gemini-2.5-flash", "models.judge": "my-model"})
    described = describe_configuration(settings)
    assert SECRET not in json.dumps(described)
    assert described["credentials_present"] is True and described["credentials_source"] == "GEMINI_API_KEY"
    rows = {row["role"]: row for row in described["roles"]}
    assert set(rows) == set(ROLES) | {"judge"}
    assert rows["planner"]["model"] == "gemini-2.5-pro" and rows["planner"]["input_usd_per_mtok"] == 1.25
    assert rows["coder"]["model"] == "gemini-2.5-flash" and rows["coder"]["output_usd_per_mtok"] == 2.5
    assert rows["judge"]["input_usd_per_mtok"] is None
    assert described["pricing"]["gemini-2.5-pro"] == [1.25, 10.0]


def test_vertex_counts_as_credentials(monkeypatch):
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    described = describe_configuration(llm_settings(provider="gemini"))
    assert described["credentials_present"] is True and "Vertex" in described["credentials_source"]


def test_check_configured_lists_the_ways_to_configure():
    with pytest.raises(ModelNotConfigured) as info:
        check_configured(llm_settings(provider="gemini"))
    text = f"{info.value} {info.value.hint}"
    for way in ("GEMINI_API_KEY", "--llm openai --base-url", "--llm manual"):
        assert way in text


def test_check_configured_accepts_a_local_server_without_key():
    pytest.importorskip("openai")
    check_configured(llm_settings(provider="openai", base_url="http://127.0.0.1:11434/v1", model="llama3"))
    with pytest.raises(ModelNotConfigured, match="OPENAI_API_KEY"):
        check_configured(llm_settings(provider="openai"))


def test_check_configured_scripted_and_manual(tmp_path):
    with pytest.raises(ModelNotConfigured, match="scripted_file"):
        check_configured(llm_settings(provider="scripted"))
    check_configured(llm_settings(provider="manual", manual_dir=str(tmp_path)))


def test_flag_overrides_model_for_all_roles_then_per_role():
    base = llm_settings(provider="gemini", **{"models.coder": "from-config", "models.writer": "from-config"})
    overrides = llm_flag_overrides(base, provider="openai", model="m-all", role_models={"writer": "m-writer"},
                                   base_url="http://127.0.0.1:8000/v1", max_llm_calls=30, max_cost=1.5)
    settings = base.with_overrides(overrides)
    rows = {row["role"]: row["model"] for row in describe_configuration(settings)["roles"]}
    assert rows["coder"] == "m-all" and rows["planner"] == "m-all" and rows["writer"] == "m-writer"
    assert settings["llm.provider"] == "openai" and settings["llm.base_url"] == "http://127.0.0.1:8000/v1"
    assert (settings["llm.max_llm_calls"], settings["llm.max_cost"]) == (30, 1.5)
    assert llm_flag_overrides(base) == {}
    with pytest.raises(ConfigError):
        llm_flag_overrides(base, cache="sometimes")


def test_every_provider_declares_itself_and_the_names_agree():
    from dsstar_lake.base.modelnames import KEYED_PROVIDERS
    from dsstar_lake.base.modelnames import PROVIDERS as NAMES
    from dsstar_lake.llm.registry import PROVIDERS, base_url

    assert tuple(PROVIDERS) == NAMES  # the CLI offers the names without importing the providers
    assert KEYED_PROVIDERS == tuple(name for name, cls in PROVIDERS.items() if cls.key_vars)
    for name, cls in PROVIDERS.items():
        assert cls.name == name and isinstance(cls.needs_key, bool) and callable(cls.from_settings)
        assert cls.base_url_var is not None or cls.default_base_url is None
    settings = llm_settings(provider="openai")
    assert base_url(settings, "openai") == "https://api.openai.com/v1" and base_url(settings, "manual") is None
    assert base_url(llm_settings(base_url="http://127.0.0.1:8000/v1"), "openai") == "http://127.0.0.1:8000/v1"


def test_a_key_is_read_from_the_declared_variables_in_order_then_the_keys_file(monkeypatch):
    from dsstar_lake.llm import keys

    described = lambda: describe_configuration(llm_settings(provider="gemini"))  # noqa: E731
    assert described()["credentials_present"] is False and described()["key_variables"] == ["GEMINI_API_KEY",
                                                                                           "GOOGLE_API_KEY"]
    keys.set_key("gemini", SECRET)
    assert described()["credentials_source"] == keys.source_label()
    monkeypatch.setenv("GOOGLE_API_KEY", "other")
    assert described()["credentials_source"] == "GOOGLE_API_KEY"
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    assert described()["credentials_source"] == "GEMINI_API_KEY" and SECRET not in json.dumps(described())


def test_one_table_of_model_flags_makes_llmflags_and_the_overrides():
    from dataclasses import fields

    from dsstar_lake.base.modelflags import MODEL_FLAGS
    from dsstar_lake.base.settings import read_defaults
    from dsstar_lake.llm.flags import LlmFlags

    assert {f.name for f in fields(LlmFlags)} == {flag.name for flag in MODEL_FLAGS} | {"role_models"}
    defaults = read_defaults()
    for flag in MODEL_FLAGS:  # each flag overrides a setting that default.toml declares
        section, key = flag.setting.split(".")
        assert key in defaults[section], flag.setting
    given = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1", "manual_dir": "/tmp/p",
             "scripted_file": "/tmp/r.jsonl", "cache": "record", "max_llm_calls": 3, "max_cost": 0.5}
    assert set(given) == {flag.name for flag in MODEL_FLAGS}
    settings = LlmFlags(**given).applied(llm_settings())
    assert {flag.setting: settings[flag.setting] for flag in MODEL_FLAGS} == {
        flag.setting: given[flag.name] for flag in MODEL_FLAGS}
    with pytest.raises(TypeError, match="unknown model flag"):
        llm_flag_overrides(llm_settings(), temperature=0.2)
