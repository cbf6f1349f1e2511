"""Pick the provider that settings name, say what is configured, and fail early when nothing usable is."""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsstar_lake.errors import ConfigError, ModelNotConfigured
from dsstar_lake.llm.base import HOW_TO_CONFIGURE, PROVIDERS, ROLES, Provider
from dsstar_lake.llm.record import price_for

if TYPE_CHECKING:
    from dsstar_lake.settings import Settings

def provider_name(settings: Settings) -> str:
    """Return llm.provider, checked."""
    name = str(settings["llm.provider"]).strip().lower()
    if name not in PROVIDERS:
        raise ConfigError(f"unknown llm.provider {name!r}; choose one of {', '.join(PROVIDERS)}")
    return name


def make_provider(settings: Settings) -> Provider:
    """Build the provider llm.provider names (no network; SDK clients are made on first use)."""
    name = provider_name(settings)
    if name == "gemini":
        from dsstar_lake.llm.gemini import GeminiProvider

        return GeminiProvider(settings)
    if name == "openai":
        from dsstar_lake.llm.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(settings)
    if name == "manual":
        from dsstar_lake.llm.manual import ManualProvider

        return ManualProvider.from_settings(settings)
    from dsstar_lake.llm.scripted import ScriptedProvider

    return ScriptedProvider.from_settings(settings)


# Providers where no model of ours answers: a person (manual). Unless a model is named for them, the record
# names the provider, and such calls cost nothing.
UNPRICED = ("manual",)


@cache
def _packaged_role_models() -> tuple[str, dict[str, str]]:
    """Return the packaged default provider and the per-role models the packaged defaults name for it."""
    from dsstar_lake.settings import read_defaults

    llm = read_defaults()["llm"]
    return str(llm["provider"]), dict(llm.get("models") or {})


def model_for(settings: Settings, role: str) -> str:
    """Return the model a role uses: llm.models.<role>, else llm.model (else the provider, for a person).

    A per-role model the packaged defaults name (a cheap one for the summarizer) belongs to the packaged provider:
    with another provider that role uses llm.model, unless a config file, or a flag, names a model for it.
    """
    models = dict(settings.get("llm.models") or {})
    provider = str(settings["llm.provider"])
    default_provider, default_models = _packaged_role_models()
    if (provider != default_provider and role in default_models
            and settings.sources.get(f"llm.models.{role}", "default") == "default"):
        models.pop(role, None)
    if provider in UNPRICED and not models.get(role) and settings.sources.get("llm.model", "default") == "default":
        return provider  # not the default gemini-2.5-pro: nobody called it
    model = str(models.get(role) or settings["llm.model"] or "").strip()
    if not model:
        raise ModelNotConfigured(f"no model for role {role!r}; set llm.model (--model) or llm.models.{role}")
    return model


def _credentials(settings: Settings, name: str) -> tuple[bool, str]:
    """Return (usable, where from) without ever reading a secret's value into the answer."""
    if name == "gemini":
        from dsstar_lake.llm.gemini import key_source

        source = key_source()
        return (source is not None, source or "none: set GEMINI_API_KEY or GOOGLE_API_KEY, or `dslake keys set gemini`")
    if name == "openai":
        from dsstar_lake.llm.openai_compat import MISSING, openai_installed

        if not openai_installed():
            return False, MISSING
        base_url = settings["llm.base_url"] or os.environ.get("OPENAI_BASE_URL", "")
        if os.environ.get("OPENAI_API_KEY"):
            return True, "OPENAI_API_KEY"
        from dsstar_lake.llm import keys

        if keys.stored_key("openai"):
            return True, keys.source_label()
        if base_url:
            return True, f"no key (fine for a local server at {base_url})"
        return False, "none: set OPENAI_API_KEY, or --base-url URL for a local server"
    if name == "manual":
        if settings["llm.manual_dir"]:
            return True, f"a person, through files in {settings['llm.manual_dir']}"
        if sys.stdin.isatty():
            return True, "a person, on this terminal"
        return False, "none: stdin is not a terminal; set llm.manual_dir (--manual-dir DIR)"
    path = settings["llm.scripted_file"]
    if path and Path(path).is_file():
        return True, f"rules in {path}"
    return False, f"none: llm.scripted_file {path!r} is not a file" if path else "none: set llm.scripted_file"


def _base_url(settings: Settings, name: str) -> str | None:
    if name == "gemini":
        return settings["llm.base_url"] or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None
    if name == "openai":
        return settings["llm.base_url"] or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return None


def describe_configuration(settings: Settings) -> dict[str, Any]:
    """Describe the model setup for `dslake models`: provider, per-role models, credentials (never values), prices."""
    name = provider_name(settings)
    usable, source = _credentials(settings, name)
    pricing = settings.get("llm.pricing") or {}
    models = settings.get("llm.models") or {}
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
        "base_url": _base_url(settings, name),
        "credentials_present": usable,
        "credentials_source": source,
        "roles": rows,
        "pricing": {k: list(v) for k, v in sorted(pricing.items())},
        "cache": settings["llm.cache"],
        "max_llm_calls": settings["llm.max_llm_calls"],
        "max_cost": settings["llm.max_cost"],
        "max_retries": settings["llm.max_retries"],
    }


def check_configured(settings: Settings) -> None:
    """Raise ModelNotConfigured, listing the ways to configure a model, when the provider cannot work."""
    name = provider_name(settings)
    usable, source = _credentials(settings, name)
    if not usable:
        raise ModelNotConfigured(f"no usable model: provider {name} has {source}", hint=HOW_TO_CONFIGURE)
    for role in ROLES:
        model_for(settings, role)


def llm_flag_overrides(
    settings: Settings,
    *,
    provider: str | None = None,
    model: str | None = None,
    role_models: dict[str, str | None] | None = None,
    base_url: str | None = None,
    manual_dir: str | None = None,
    cache: str | None = None,
    max_llm_calls: int | None = None,
    max_cost: float | None = None,
) -> dict[str, Any]:
    """Turn the CLI's --llm/--model/--model-ROLE/--base-url/... flags into Settings.with_overrides() keys.

    `--model` names the model of every role, so it also replaces per-role models that came from config
    files; `--model-ROLE` flags are applied after it and win for their role.
    """
    overrides: dict[str, Any] = {
        "llm.provider": provider,
        "llm.base_url": base_url,
        "llm.manual_dir": manual_dir,
        "llm.cache": cache,
        "llm.max_llm_calls": max_llm_calls,
        "llm.max_cost": max_cost,
    }
    if model:
        overrides["llm.model"] = model
        for role in settings.get("llm.models") or {}:
            overrides[f"llm.models.{role}"] = model
    for role, role_model in (role_models or {}).items():
        if role_model:
            overrides[f"llm.models.{role}"] = role_model
    if cache is not None and cache not in ("off", "record", "replay"):
        raise ConfigError(f"--cache must be off, record or replay, not {cache!r}")
    return {k: v for k, v in overrides.items() if v is not None}
