"""The settings sections above index/, typed: frozen dataclasses with no defaults of their own.

Settings (settings.py) builds each once from the resolved values (`settings.llm`, `settings.agent`...), which
already have their declared types; default.toml stays the one place a default is written
(tests/test_settings_types.py checks that each class has exactly its section's keys). Where each value came from
stays with Settings (`settings.sources`, `dslake config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class LlmSettings:
    """[llm] with its tables [llm.models] (role -> model) and [llm.pricing] (model -> [input, output] USD/M)."""

    provider: str
    model: str
    base_url: str
    timeout_s: float
    max_retries: int
    backoff_initial_s: float
    backoff_max_s: float
    temperature: float
    max_output_tokens: int
    cache: str
    max_llm_calls: int
    max_cost: float
    manual_dir: str
    manual_timeout_s: float
    scripted_file: str
    models: Mapping[str, str]
    pricing: Mapping[str, list[float]]


@dataclass(frozen=True)
class AgentSettings:
    """[agent]: the loop's rounds and budgets, and how files are described at index time."""

    max_rounds: int
    max_debug: int
    k_extra: int
    analyzer: str
    guidelines: str
    max_result_chars: int
    summarize_over_chars: int
    description_chars: int
    context_tokens: int
    menu_k: int
    view_cap_tokens: int
    first_step: str


@dataclass(frozen=True)
class SandboxSettings:
    """[sandbox]: how scripts are contained (the user's alone: a catalog's config may not set it)."""

    backend: str
    timeout_s: float
    memory_mb: int
    cpu_s: int
    max_output_bytes: int
    output_limit_mb: int
    max_procs: int
    file_mb: int
    tmp_mb: int
    disk_mb: int
    max_files: int
    fingerprint_files: int
    python: str
    env_passthrough: str
    prestart: int
    preload: str


@dataclass(frozen=True)
class RemoteSettings:
    """[remote]: the local cache of a lake in object storage and what a run fetches."""

    cache_mb: int
    cache_dir: str
    family_files: int
    fetch_files: int


@dataclass(frozen=True)
class ReportSettings:
    """[report]: DS-STAR+'s open-ended reports."""

    k: int
    max_questions: int
    rounds: int
    jobs: int
    format: str
    description_chars: int
    max_figures: int


@dataclass(frozen=True)
class ServeSettings:
    """[serve]: the web page's data preview."""

    preview_rows: int
    preview_bytes: int


@dataclass(frozen=True)
class EvalSettings:
    """[eval]: benchmark runs and their judge."""

    judge_model: str
    fuzzy_threshold: float
    jobs: int


AGENT_SECTIONS: dict[str, type] = {"llm": LlmSettings, "agent": AgentSettings, "sandbox": SandboxSettings,
                                   "remote": RemoteSettings, "report": ReportSettings, "serve": ServeSettings,
                                   "eval": EvalSettings}
