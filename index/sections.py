"""The settings sections index/ reads, typed: frozen dataclasses with no defaults of their own.

dsstar_lake's Settings resolves default.toml < a catalog's config < the user's < DSLAKE_* < flags and builds each
section once (`settings.retrieve`, `settings.embed`...); the values already have their declared types, so nothing
here casts, and default.toml stays the one place a default is written (tests/test_settings_types.py checks that
each class has exactly its section's keys). index/ knows nothing of settings files: it is handed a SettingsView.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol, TypeVar

Section = TypeVar("Section")


def typed_section(cls: type[Section], section: Mapping[str, Any]) -> Section:
    """Build a section's dataclass from its resolved values; a missing key is a bug (the defaults declare all)."""
    return cls(**{f.name: section[f.name] for f in fields(cls)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class CatalogSettings:
    """[catalog]: where the catalog and its vectors live."""

    dirname: str
    chroma_url: str
    collection: str
    trusted_servers: list[str]


@dataclass(frozen=True)
class IndexSettings:
    """[index]: how an index run scans, hashes, writes and profiles."""

    jobs: int
    follow_symlinks: bool
    hash_algorithm: str
    write_batch: int
    watch_debounce_ms: int
    cluster: str


@dataclass(frozen=True)
class ProfileSettings:
    """[profile]: the bounds of one profiler process and what it reads (profilers.base.Limits takes the rest)."""

    timeout_s: float
    memory_mb: int
    head_bytes: int
    sample_rows: int
    max_rows_scanned: int
    max_columns: int
    max_sheets: int
    max_examples: int
    max_bytes_full_read: int


@dataclass(frozen=True)
class FamiliesSettings:
    """[families]: when files form a family and how many of its members a description lists."""

    min_members: int
    max_members_listed: int


@dataclass(frozen=True)
class EmbedSettings:
    """[embed]: the embedding model's backend, threads and weights."""

    backend: str
    batch_size: int
    threads: int
    index_threads: int
    cache_dir: str
    weights: str


@dataclass(frozen=True)
class RetrieveSettings:
    """[retrieve]: the hybrid retriever's ranking and fusion."""

    k: int
    dense_weight: float
    fulltext_weight: float
    fusion: str
    rrf_k: int
    candidates: int
    complete_scores: bool
    collapse_kin: bool
    folder_weight: float


class ScriptMemory(Protocol):
    """What the index reads of the [sandbox] section: a script's memory decides which files are big, and its
    backend where the profilers run (index/confined_pool.py)."""

    @property
    def memory_mb(self) -> int: ...

    @property
    def backend(self) -> str: ...


class SettingsView(Protocol):
    """What index/ reads of the resolved settings (dsstar_lake's Settings): its typed sections."""

    @property
    def catalog(self) -> CatalogSettings: ...

    @property
    def index(self) -> IndexSettings: ...

    @property
    def profile(self) -> ProfileSettings: ...

    @property
    def families(self) -> FamiliesSettings: ...

    @property
    def embed(self) -> EmbedSettings: ...

    @property
    def retrieve(self) -> RetrieveSettings: ...

    @property
    def sandbox(self) -> ScriptMemory: ...


INDEX_SECTIONS: dict[str, type] = {"catalog": CatalogSettings, "index": IndexSettings, "profile": ProfileSettings,
                                   "families": FamiliesSettings, "embed": EmbedSettings, "retrieve": RetrieveSettings}
