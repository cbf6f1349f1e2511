"""Settings declared once in default.toml, resolved as defaults < a catalog's config < the user's config <
environment < flags.

The package reads its own copy (dsstar_lake/default.toml, shipped in the wheel); configs/default.toml is the
documented copy in the repository, and a test keeps the two equal.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from dslake_index.sections import (
    CatalogSettings,
    EmbedSettings,
    FamiliesSettings,
    IndexSettings,
    ProfileSettings,
    RetrieveSettings,
    typed_section,
)

from dsstar_lake.base.catalog_config import check_server, refusal, refused_keys
from dsstar_lake.base.errors import ConfigError
from dsstar_lake.base.settings_inputs import DEFAULTS_FILE, ENV_PREFIX, user_config_path
from dsstar_lake.base.settings_sections import (
    AgentSettings,
    EvalSettings,
    LlmSettings,
    RemoteSettings,
    ReportSettings,
    SandboxSettings,
    ServeSettings,
)

# Where settings are read from is named in settings_inputs.py, which a no-change index loads without this module.
USER_CONFIG_PATH = Path(user_config_path())
# Sections whose keys are free-form (not declared in the defaults).
OPEN_SECTIONS = ("llm.models", "llm.pricing")
# DSLAKE_* variables that are not settings: the descriptor the sandbox's read tracer writes to, and the tests'
# own knobs (DSLAKE_TEST_KILLS...). Any other DSLAKE_* name that names no setting is an error, not silence.
# DSLAKE_TRACE_LATER and DSLAKE_PRELOAD: what a script's interpreter started ahead is told (sandbox/_warm.py).
OTHER_ENV = ("DSLAKE_TRACE_FD", "DSLAKE_TRACE_TOP", "DSLAKE_TRACE_LATER", "DSLAKE_PRELOAD", "DSLAKE_SERVE_TOKEN")  # the last: `dslake serve --allow-remote`'s token, a secret
# DSLAKE_DUCKDB_*: what dslake passes a script for DuckDB's limits (dsstar_lake/sandbox/env.py), not settings
OTHER_ENV_PREFIXES = ("DSLAKE_TEST_", "DSLAKE_DUCKDB_")


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and dotted not in OPEN_SECTIONS:
            flat.update(_flatten(value, dotted + "."))
        else:
            flat[dotted] = dict(value) if isinstance(value, Mapping) else value
    return flat


def read_defaults() -> dict[str, Any]:
    """Return the packaged defaults as a TOML tree (a missing file is a broken install, so it raises)."""
    # Beside this package, read as a plain file: importlib.resources would load zipfile (~13 ms of every command)
    # for a package that is never installed zipped (default.toml is package data in pyproject.toml).
    return tomllib.loads(Path(DEFAULTS_FILE).read_text(encoding="utf-8"))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc


def _coerce(key: str, raw: Any, default: Any) -> Any:
    """Convert a value from the environment or a flag to the type of its default."""
    if raw is None:
        return default
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if isinstance(default, str):
            return str(raw)
        if isinstance(default, list):  # a list of strings: comma-separated in a variable or a flag
            return [part.strip() for part in raw.split(",") if part.strip()] if isinstance(raw, str) else list(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {key} expects {type(default).__name__}, got {raw!r}") from exc
    return raw


def _typed(key: str, value: Any, default: Any, path: Path) -> Any:
    """Check a config file's value against its default's type (an int is taken where a float is declared).

    Every value then has its declared type once resolved, whichever layer set it, so no caller casts it.
    """
    if isinstance(default, list):
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        raise ConfigError(f"setting {key} in {path} expects a list of strings, got {value!r}",
                          hint="write it as the default is written (`dslake config` lists them)")
    if default is None or isinstance(default, dict):
        return value
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is type(default):
        return value
    raise ConfigError(f"setting {key} in {path} expects {type(default).__name__}, got {value!r}",
                      hint="write it as the default is written (`dslake config` lists them)")


@dataclass
class Settings:
    """Resolved settings, with where each value came from: each section typed (`settings.retrieve.k`, built once,
    on first use), every value also by dotted key (`settings["retrieve.k"]`, for `dslake config` and overrides)."""

    values: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        overrides: Mapping[str, Any] | None = None,
        config_files: list[Path] | None = None,
        environ: Mapping[str, str] | None = None,
        catalog_files: tuple[Path, ...] = (),
    ) -> Settings:
        """Resolve defaults, then config files in order, then DSLAKE_* environment, then explicit overrides.

        catalog_files: config files (a catalog's) that may set only what catalog_config.py allows, and name a
        Chroma server only when the user trusts it; give them before the user's config, which then wins.
        """
        defaults = _flatten(read_defaults())
        values = dict(defaults)
        sources = {key: "default" for key in values}
        files = [USER_CONFIG_PATH] if config_files is None else config_files
        for path in files:
            tree = _flatten(_read_toml(path))
            for key in tree:
                cls._check_known(key, defaults, str(path))
            if path in catalog_files and (refused := refused_keys(tree)):
                raise refusal(path, refused, USER_CONFIG_PATH)
            for key, value in tree.items():
                values[key] = _merge(values.get(key), _typed(key, value, defaults.get(key), path))
                sources[key] = str(path)
                if key in OPEN_SECTIONS and isinstance(value, Mapping):
                    sources.update({f"{key}.{name}": str(path) for name in value})  # who named each role's model
        env = os.environ if environ is None else environ
        check_environment(env, defaults)
        for key in defaults:
            name = env_name(key)
            if name in env and not isinstance(defaults[key], dict):
                values[key] = _coerce(key, env[name], defaults[key])
                sources[key] = f"env {name}"
        settings = cls(values, sources).with_overrides(overrides or {}, source="flag")
        check_server(settings.values, settings.sources, catalog_files, USER_CONFIG_PATH)
        return settings

    @staticmethod
    def _check_known(key: str, defaults: Mapping[str, Any], origin: str) -> None:
        if key in defaults or any(key.startswith(s + ".") or key == s for s in OPEN_SECTIONS):
            return
        raise ConfigError(f"unknown setting {key!r} in {origin}", hint="run `dslake config` to list settings")

    def with_overrides(self, overrides: Mapping[str, Any], source: str = "flag") -> Settings:
        """Return a copy with the given dotted keys replaced (None values are ignored)."""
        values = dict(self.values)
        sources = dict(self.sources)
        for key, raw in overrides.items():
            if raw is None:
                continue
            section_key = next((s for s in OPEN_SECTIONS if key.startswith(s + ".")), None)
            if section_key:
                merged = dict(values.get(section_key) or {})
                merged[key[len(section_key) + 1 :]] = raw
                values[section_key] = merged
                sources[section_key] = sources[key] = source
                continue
            if key not in values:
                raise ConfigError(f"unknown setting {key!r}")
            values[key] = _coerce(key, raw, values[key])
            sources[key] = source
        return Settings(values, sources)

    # ---- the typed sections (dslake_index.sections, dsstar_lake.base.settings_sections) ----------------------------

    @cached_property
    def catalog(self) -> CatalogSettings:
        return typed_section(CatalogSettings, self.section("catalog"))

    @cached_property
    def index(self) -> IndexSettings:
        return typed_section(IndexSettings, self.section("index"))

    @cached_property
    def profile(self) -> ProfileSettings:
        return typed_section(ProfileSettings, self.section("profile"))

    @cached_property
    def families(self) -> FamiliesSettings:
        return typed_section(FamiliesSettings, self.section("families"))

    @cached_property
    def embed(self) -> EmbedSettings:
        return typed_section(EmbedSettings, self.section("embed"))

    @cached_property
    def retrieve(self) -> RetrieveSettings:
        return typed_section(RetrieveSettings, self.section("retrieve"))

    @cached_property
    def llm(self) -> LlmSettings:
        return typed_section(LlmSettings, self.section("llm"))

    @cached_property
    def agent(self) -> AgentSettings:
        return typed_section(AgentSettings, self.section("agent"))

    @cached_property
    def sandbox(self) -> SandboxSettings:
        return typed_section(SandboxSettings, self.section("sandbox"))

    @cached_property
    def remote(self) -> RemoteSettings:
        return typed_section(RemoteSettings, self.section("remote"))

    @cached_property
    def report(self) -> ReportSettings:
        return typed_section(ReportSettings, self.section("report"))

    @cached_property
    def serve(self) -> ServeSettings:
        return typed_section(ServeSettings, self.section("serve"))

    @cached_property
    def eval(self) -> EvalSettings:
        return typed_section(EvalSettings, self.section("eval"))

    def origin(self, key: str) -> str:
        """Return where a setting's value came from: default, a config file's path, env NAME or flag."""
        return self.sources.get(key, "default")

    def __getitem__(self, key: str) -> Any:
        try:
            return self.values[key]
        except KeyError:
            raise KeyError(f"no setting {key!r}") from None

    def get(self, key: str, default: Any = None) -> Any:
        """Return a setting's value, or default when it is not declared."""
        return self.values.get(key, default)

    def section(self, name: str) -> dict[str, Any]:
        """Return the settings under one section as a plain dict without the prefix."""
        prefix = name + "."
        return {k[len(prefix) :]: v for k, v in self.values.items() if k.startswith(prefix)}

    def items(self) -> Iterator[tuple[str, Any, str]]:
        """Yield (key, value, source) for every setting, sorted by key."""
        for key in sorted(self.values):
            yield key, self.values[key], self.sources.get(key, "default")


def env_name(key: str) -> str:
    """Return the environment variable that sets a setting: retrieve.k -> DSLAKE_RETRIEVE_K."""
    return ENV_PREFIX + key.replace(".", "_").upper()


def check_environment(env: Mapping[str, str], defaults: Mapping[str, Any]) -> None:
    """Raise ConfigError for a DSLAKE_* variable that names no setting (with the closest name that does)."""
    names = {env_name(key): key for key in defaults}
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or name in OTHER_ENV or name.startswith(OTHER_ENV_PREFIXES):
            continue
        key = names.get(name)
        if key is not None and not isinstance(defaults[key], dict):
            continue
        if key is not None:  # [llm.models], [llm.pricing]: tables, which one variable cannot hold
            raise ConfigError(f"{name} names the table [{key}], which the environment cannot set",
                              hint=f"set [{key}] in {USER_CONFIG_PATH} (per-role models also with --model-ROLE)")
        settable = [n for n, k in names.items() if not isinstance(defaults[k], dict)]
        import difflib  # here: only a misspelt variable needs it, and every command loads settings

        close = difflib.get_close_matches(name, settable, n=1)
        raise ConfigError(f"{name} names no setting" + (f" (did you mean {close[0]}?)" if close else ""),
                          hint="each setting SECTION.KEY is read from DSLAKE_SECTION_KEY; `dslake config` lists "
                               "them")


def _merge(old: Any, new: Any) -> Any:
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **new}
    return new
