"""RunSetup: everything a use case (ask, resume, report, eval, the analyzer) needs, built once by the facade.

The facade is the top: use cases never call back into Lake. They get the catalog (connection, retriever, members,
path relativiser), the settings resolved once (the catalog's settings with the run's overrides), the model (the
one place a run's provider and LLM call site are wired, with the response cache), and the sandbox from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.front_door import Catalog

from dsstar_lake.base.errors import CatalogError, UsageError

if TYPE_CHECKING:
    import sqlite3

    from dsstar_lake.base.settings import Settings
    from dsstar_lake.llm.base import Provider
    from dsstar_lake.llm.call import LLM
    from dsstar_lake.sandbox import Sandbox

CACHE_NAME = "llm_cache.sqlite"


@dataclass(frozen=True)
class RunSetup:
    """One run's catalog, settings, model and sandbox; made by run_setup(), shared by the threads of a run."""

    access: Catalog  # the catalog (index/'s front door), shared with the facade and the other runs
    settings: Settings  # the catalog's settings with `overrides` applied
    overrides: dict[str, Any] = field(default_factory=dict)  # the run's own settings, None values dropped
    provider: Provider | None = None  # a given provider (tests, a report's shared budget); None: from settings

    # ---- the catalog -------------------------------------------------------------------------------------

    @property
    def root(self) -> Path | None:
        """Return the lake folder, or None when only the catalog is known."""
        return self.access.root

    @property
    def catalog_dir(self) -> Path:
        """Return the catalog folder."""
        return self.access.catalog_dir

    def lake_dir(self) -> Path | None:
        """Return the lake folder when it exists on this machine, else None (also for a lake in object storage)."""
        root = self.access.root
        return Path(root) if root is not None and Path(root).is_dir() else None

    def lake_location(self, what: str) -> str:
        """Return where the lake is (its folder, or its URL once the store answers); what: who needs it, for errors."""
        remote = self.access.remote
        if self.access.root is None and remote is not None:
            from dslake_index.objectstore import check_access, object_lake

            check_access(object_lake(remote, self.catalog_dir))  # wrong keys or a gone bucket: one line, no run
            return remote
        root = self.lake_dir()
        if root is None:
            raise UsageError(f"{what} needs the lake folder", hint="give --lake LAKE (and --catalog DIR if elsewhere)",
                             api_hint="open the catalog with its lake: Lake.open(lake, catalog=DIR)")
        return str(root)

    def lake_files(self) -> list[str]:
        """Return every file of the lake, lake-relative and sorted: the files on disk, or the catalog's objects."""
        return self.access.lake_files()

    def connection(self) -> sqlite3.Connection:
        """Return this thread's manifest connection (CatalogError when there is no catalog)."""
        return self.access.connection()

    def retriever(self) -> Any:
        """Return this thread's retriever."""
        return self.access.retriever()

    def vector_store(self) -> Any:
        """Open the vector store."""
        return self.access.vector_store()

    def members(self, entry_id: str) -> list[str]:
        """Return an entry's member paths ([] when the catalog cannot be read)."""
        try:
            return self.access.members(entry_id)
        except CatalogError:
            return []

    def relative(self, path: str) -> str:
        """Return a lake-relative path for a path given by the user."""
        return self.access.relative(path)

    def require_writable(self, why: str) -> None:
        """Raise the read-only error when the catalog must not be written."""
        self.access.require_writable(why)

    def close(self) -> None:
        """Close this thread's catalog connection."""
        self.access.close()

    # ---- the model and the sandbox ---------------------------------------------------------------------

    def with_overrides(self, overrides: dict[str, Any], provider: Provider | None = None) -> RunSetup:
        """Return the setup of a run inside this one (a report's sub-question, a benchmark task): more overrides."""
        return run_setup(self.access, {**self.overrides, **overrides},
                         provider=provider if provider is not None else self.provider)

    def check_model(self) -> None:
        """Raise ModelNotConfigured before any work when no provider was given and none is configured."""
        if self.provider is None:
            from dsstar_lake.llm import check_configured

            check_configured(self.settings)

    def make_provider(self) -> Provider:
        """Return the given provider, else a new one from the settings."""
        if self.provider is not None:
            return self.provider
        from dsstar_lake.llm import make_provider

        return make_provider(self.settings)

    @property
    def cache_path(self) -> Path | None:
        """Return the response cache's file, or None when llm.cache is off."""
        return self.catalog_dir / CACHE_NAME if self.settings.llm.cache.lower() != "off" else None

    def llm(self, recorder: Callable[[Any], None] | None, run_id: str | None, *,
            settings: Settings | None = None, provider: Provider | None = None) -> LLM:
        """Return the call site of one run: its provider, the response cache, its recorder and budget."""
        from dsstar_lake.llm import LLM, make_provider

        chosen = settings or self.settings
        provider = provider or self.provider or make_provider(chosen)
        return LLM(chosen, provider=provider, recorder=recorder, cache_path=self.cache_path, run_id=run_id)

    def sandbox(self, volatile: tuple[str, ...] = ()) -> Sandbox:
        """Return the sandbox for scripts over this lake: the catalog hidden (bwrap) or watched (without).

        volatile: catalog-relative names dslake itself writes while scripts run, left out of that watch; runs/
        (every run's record) and the response cache always are.
        """
        from dsstar_lake.sandbox import Sandbox

        names = ("runs", CACHE_NAME, *volatile)
        view = None
        if self.access.root is None and self.access.remote is not None:
            from dsstar_lake.runs.lakeview import BLOBS, VIEWS, LakeView

            # data/ is a per-run folder filled from the blob cache
            view = LakeView(self.access.remote, self.catalog_dir, self.settings, self.access.file_hashes(),
                            self.access.dataset_roots())
            names += (VIEWS, BLOBS)  # other runs (a report's sub-questions) fetch into them meanwhile
        return Sandbox(self.settings.sandbox, view.root if view else Path(self.access.root or "."),
                       private=[self.catalog_dir], volatile=[self.catalog_dir / name for name in names], view=view)


def run_setup(access: Catalog, overrides: dict[str, Any] | None = None,
              provider: Provider | None = None) -> RunSetup:
    """Build a run's setup: the catalog's settings with the run's overrides (None values dropped), resolved once."""
    kept = {k: v for k, v in (overrides or {}).items() if v is not None}
    return RunSetup(access=access, settings=access.settings.with_overrides(kept), overrides=kept, provider=provider)


__all__ = ["CACHE_NAME", "RunSetup", "run_setup"]
