"""The providers in one dict, each declaring itself; pick the one settings name, say what is configured, and fail
early when nothing usable is.

A provider class declares its name, the variables it reads a key from, whether it needs one, its endpoint, how it
is built from settings, where its credentials come from and its own fix (llm/base.py, DeclaredProvider): adding a
provider is a class, a line in PROVIDERS and its name in modelnames.py (which the CLI reads), with no branch here.
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any

from dsstar_lake.base.errors import ConfigError, ModelNotConfigured
from dsstar_lake.llm.base import HOW_TO_CONFIGURE, ROLES, DeclaredProvider, Provider
from dsstar_lake.llm.gemini import GeminiProvider
from dsstar_lake.llm.manual import ManualProvider
from dsstar_lake.llm.openai_compat import OpenAICompatProvider
from dsstar_lake.llm.record import price_for
from dsstar_lake.llm.scripted import ScriptedProvider

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings

# Name -> provider class, in the order help and hints list them (modelnames.PROVIDERS names the same, for the CLI
# to offer without importing this; a test keeps the two equal).
PROVIDERS: dict[str, DeclaredProvider] = {
    cls.name: cls for cls in (GeminiProvider, OpenAICompatProvider, ManualProvider, ScriptedProvider)
}


def provider_name(settings: Settings) -> str:
    """Return llm.provider, checked."""
    name = settings.llm.provider.strip().lower()
    if name not in PROVIDERS:
        raise ConfigError(f"unknown llm.provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    return name


def make_provider(settings: Settings) -> Provider:
    """Build the provider llm.provider names (no network; SDK clients are made on first use)."""
    return PROVIDERS[provider_name(settings)].from_settings(settings)


def base_url(settings: Settings, name: str) -> str | None:
    """Return the endpoint a provider calls: --base-url, else its declared variable, else its default."""
    declared = PROVIDERS[name]
    if declared.base_url_var is None:
        return None
    return settings.llm.base_url or os.environ.get(declared.base_url_var) or declared.default_base_url


# Providers where no model of ours answers: a person (manual). Unless a model is named for them, the record
# names the provider, and such calls cost nothing.
UNPRICED = ("manual",)


@cache
def _packaged_role_models() -> tuple[str, dict[str, str]]:
    """Return the packaged default provider and the per-role models the packaged defaults name for it."""
    from dsstar_lake.base.settings import read_defaults

    llm = read_defaults()["llm"]
    return str(llm["provider"]), dict(llm.get("models") or {})


def model_for(settings: Settings, role: str) -> str:
    """Return the model a role uses: llm.models.<role>, else llm.model (else the provider, for a person).

    A per-role model the packaged defaults name (a cheap one for the summarizer) belongs to the packaged provider:
    with another provider that role uses llm.model, unless a config file, or a flag, names a model for it.
    """
    models = dict(settings.llm.models)
    provider = settings.llm.provider
    default_provider, default_models = _packaged_role_models()
    if (provider != default_provider and role in default_models
            and settings.sources.get(f"llm.models.{role}", "default") == "default"):
        models.pop(role, None)
    if provider in UNPRICED and not models.get(role) and settings.sources.get("llm.model", "default") == "default":
        return provider  # not the default gemini-2.5-pro: nobody called it
    model = (models.get(role) or settings.llm.model).strip()
    if not model:
        raise ModelNotConfigured(f"no model for role {role!r}; set llm.model (--model) or llm.models.{role}")
    return model


def describe_configuration(settings: Settings) -> dict[str, Any]:
    """Describe the model setup for `dslake models`: provider, per-role models, credentials (never values), prices."""
    name = provider_name(settings)
    usable, source = PROVIDERS[name].credentials(settings)
    pricing = settings.llm.pricing
    models = settings.llm.models
    roles = list(ROLES) + sorted(r for r in models if r not in ROLES)
    rows = []
    for role in roles:
        model = model_for(settings, role)
        price = price_for(pricing, model)
        rows.append({
            "role": role,
            "provider": name,
            "model": model,
            "input_usd_per_mtok": price[0] if price else None,
            "output_usd_per_mtok": price[1] if price else None,
        })
    return {
        "provider": name,
        "base_url": base_url(settings, name),
        "credentials_present": usable,
        "credentials_source": source,
        "key_variables": list(PROVIDERS[name].key_vars),
        "needs_key": PROVIDERS[name].needs_key,
        "roles": rows,
        "pricing": {k: list(v) for k, v in sorted(pricing.items())},
        "cache": settings.llm.cache,
        "max_llm_calls": settings.llm.max_llm_calls,
        "max_cost": settings.llm.max_cost,
        "max_retries": settings.llm.max_retries,
    }


def check_configured(settings: Settings) -> None:
    """Raise ModelNotConfigured, listing the ways to configure a model, when the provider cannot work."""
    name = provider_name(settings)
    usable, source = PROVIDERS[name].credentials(settings)
    if not usable:
        # A provider with one fix of its own (a person off a terminal) says it, not the list of other providers.
        hint = PROVIDERS[name].fix_hint or HOW_TO_CONFIGURE
        raise ModelNotConfigured(f"no usable model: provider {name} has {source}", hint=hint)
    for role in ROLES:
        model_for(settings, role)


def llm_flag_overrides(settings: Settings, **flags: Any) -> dict[str, Any]:
    """Turn model flags (the names of dsstar_lake/base/modelflags.py's table, and role_models) into overrides.

    `model` names the model of every role, so it also replaces per-role models that came from config files;
    `role_models` ({role: model}, from --model-for) are applied after it and win for their role. A value of None
    leaves its setting as configured.
    """
    from dsstar_lake.base.modelflags import MODEL_FLAGS, ROLE_SETTING

    role_models = flags.pop("role_models", None) or {}
    by_name = {flag.name: flag for flag in MODEL_FLAGS}
    unknown = sorted(set(flags) - set(by_name))
    if unknown:
        raise TypeError(f"unknown model flag(s): {', '.join(unknown)}")
    overrides: dict[str, Any] = {}
    for name, value in flags.items():
        flag = by_name[name]
        if value is None:
            continue
        if flag.kind == "choice" and value not in flag.choices + flag.unadvertised:
            raise ConfigError(f"{flag.flag} must be one of {', '.join(flag.choices)}, not {value!r}")
        overrides[flag.setting] = value
    if flags.get("model"):
        for role in settings.llm.models:
            overrides[f"{ROLE_SETTING}.{role}"] = flags["model"]
    for role, role_model in role_models.items():
        if role_model:
            overrides[f"{ROLE_SETTING}.{role}"] = role_model
    return overrides
