"""LlmFlags: the model choice a command was given (--llm, --model, --model-for, budgets), as one value.

The CLI collects the flags into an LlmFlags and hands it to a Lake method; the facade turns it into the run's
setting overrides once, against the catalog's own settings (so `--model` also replaces per-role models that came
from config files).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsstar_lake.base.settings import Settings


@dataclass(frozen=True)
class LlmFlags:
    """Model flags of one command; None (or an empty role_models) leaves the setting as configured.

    The fields are the names of dsstar_lake/base/modelflags.py's table, plus role_models (tests/test_cli_options.py
    keeps the two equal): the table says which setting each one overrides.
    """

    provider: str | None = None
    model: str | None = None
    role_models: dict[str, str] = field(default_factory=dict)
    base_url: str | None = None
    manual_dir: str | None = None
    scripted_file: str | None = None
    cache: str | None = None
    max_llm_calls: int | None = None
    max_cost: float | None = None

    @property
    def given(self) -> bool:
        """True when any model flag was given."""
        return bool(self.role_models) or any(getattr(self, f.name) is not None for f in fields(self)
                                             if f.name != "role_models")

    def applied(self, settings: Settings) -> Settings:
        """Return settings with these flags applied."""
        given = {f.name: getattr(self, f.name) for f in fields(self)}
        given["role_models"] = dict(self.role_models)
        if not self.given:
            # No model flag given (every index, search, status): nothing to override, and the providers'
            # registry (with every provider module) stays unloaded.
            return settings.with_overrides({})
        from dsstar_lake.llm.registry import llm_flag_overrides

        return settings.with_overrides(llm_flag_overrides(settings, **given))

    def overrides(self, settings: Settings) -> dict[str, Any]:
        """Return the dotted keys these flags change in settings, with their new values (a run's overrides)."""
        return changed_settings(settings, self.applied(settings))


def changed_settings(before: Settings, after: Settings) -> dict[str, Any]:
    """Return the dotted keys whose values differ (how flags applied to settings become run overrides)."""
    return {k: v for k, v in after.values.items() if before.values.get(k) != v}


def model_keywords(llm: str | LlmFlags | None = None, model_for: dict[str, str] | None = None,
                   **keywords: Any) -> LlmFlags | None:
    """Return the LlmFlags of the Python API's model keywords, checked with advice in Python terms.

    llm is the provider's name (`Lake.open(lake, llm="manual", manual_dir="prompts")`) or an LlmFlags as the CLI
    builds it; model_for is --model-for as a dict ({"selector": "gemini-2.5-flash-lite"}); the other keywords are
    the fields of LlmFlags (model, base_url, manual_dir, cache, max_llm_calls, max_cost, scripted_file), None
    leaving a setting as configured. None when nothing was chosen.
    """
    from dsstar_lake.base.errors import UsageError
    from dsstar_lake.base.modelflags import MODEL_FLAGS
    from dsstar_lake.base.modelnames import ROLES

    given = {name: value for name, value in keywords.items() if value is not None}
    if isinstance(llm, LlmFlags):
        if given or model_for:
            raise UsageError("give the model either as an LlmFlags or as keywords, not both",
                             api_hint='e.g. Lake.open(lake, llm="openai", model="llama3.1", base_url=URL)')
        return llm
    if llm is not None and not isinstance(llm, str):
        raise UsageError(f"llm= takes a provider's name, not {type(llm).__name__}")
    if llm is None and not given and not model_for:
        return None
    by_name = {flag.name: flag for flag in MODEL_FLAGS}
    for name, value in [("provider", llm), *given.items()]:
        flag = by_name[name]
        if flag.kind == "choice" and value is not None and value not in flag.choices + flag.unadvertised:
            keyword = "llm" if name == "provider" else name
            raise UsageError(f"{keyword}= must be one of {', '.join(flag.choices)}, not {value!r}")
    for role, role_model in (model_for or {}).items():
        if role not in ROLES:
            raise UsageError(f"model_for: unknown role {role!r}; roles: {', '.join(ROLES)}")
        if not isinstance(role_model, str) or not role_model.strip():
            raise UsageError(f"model_for: the model for {role} must be a model's name, not {role_model!r}")
    return LlmFlags(provider=llm, role_models=dict(model_for or {}), **given)
