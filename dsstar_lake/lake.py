"""Lake: the one facade that cli.py, tests and notebooks call (open, index, status, show, search, ask, ...).

The catalog itself (manifest, full text, vectors, embedder, retriever, the index pipeline) is index/'s front door,
dslake_index.front_door.Catalog, which the facade and every run setup share as `lake.catalog`; the facade adds
what lies above index/: settings, the model passes as the index's enrichers, the use cases (ask, report, eval).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.catalog_errors import manifest_errors
from dslake_index.front_door import CATALOG_CONFIG, CHROMA_DIR, Catalog, catalog_caught
from dslake_index.progress import Progress

from dsstar_lake.base.errors import ConfigError, LakeNotFound, UsageError
from dsstar_lake.base.settings import USER_CONFIG_PATH, Settings
from dsstar_lake.base.settings_inputs import same_but_for, settings_inputs
from dsstar_lake.runs.setup import RunSetup, run_setup
from dsstar_lake.usecases.prewarm import Prewarm
from dsstar_lake.views.status import LakeStatus, lake_status

if TYPE_CHECKING:
    from dslake_index.enrich import Enricher
    from dslake_index.front_door import Embedder, IndexSummary, Retriever, SearchTiming, VectorStore

    from dsstar_lake.agent.state import Answer
    from dsstar_lake.eval.results import BenchmarkReport
    from dsstar_lake.eval.retrieval import RetrievalReport
    from dsstar_lake.eval.runner import BenchmarkOptions
    from dsstar_lake.eval.tasks import Task
    from dsstar_lake.llm.base import Provider
    from dsstar_lake.llm.flags import LlmFlags
    from dsstar_lake.report.pipeline import Report
    from dsstar_lake.usecases.ask import Pick
    from dsstar_lake.usecases.doctor import DoctorReport
    from dsstar_lake.views.notebook import RunList, RunView, SearchResults, ShowView

__all__ = ["CATALOG_CONFIG", "CHROMA_DIR", "Lake", "LakeStatus"]

_JUDGE: Any = object()  # Lake.benchmark's judge left out: eval.runner.FROM_SETTINGS (imported only when used)



class Lake:
    """A data lake and its catalog."""

    def __init__(self, root: Path | None, catalog_dir: Path, settings: Settings,
                 readonly: bool | None = None, run_overrides: dict[str, Any] | None = None) -> None:
        # The catalog (one connection and one retriever per thread, the index pipeline) is index/'s front door,
        # which every run setup shares: use cases reach the catalog through it, never through the facade.
        self.catalog = Catalog(root, catalog_dir, settings, readonly)
        # The model flags the lake was opened with, as overrides every run keeps in its record, so that a
        # resumed run takes the flags given now over the ones it was started with.
        self.run_overrides = dict(run_overrides or {})
        # What Lake.open read the settings from (base/settings_inputs.py; None: settings given): a plain index
        # records it, so that the next no-change `dslake index` can trust its settings without resolving them.
        self.settings_inputs: str | None = None
        self.config_files: list[str] = []
        self._loader: Any = None  # lake.load's confined server (usecases/confined_load.py), started on first load

    @property
    def root(self) -> Path | None:
        """Return the lake folder (None: only the catalog is known)."""
        return self.catalog.root

    @property
    def catalog_dir(self) -> Path:
        """Return the catalog folder."""
        return self.catalog.catalog_dir

    @property
    def settings(self) -> Settings:
        """Return the catalog's settings (defaults < catalog config < user config < environment < flags)."""
        return self.catalog.settings  # type: ignore[return-value]  # a Settings, seen by index/ as a SettingsView

    # ---- opening -------------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        catalog: str | os.PathLike[str] | None = None,
        settings: Settings | None = None,
        overrides: dict[str, Any] | None = None,
        readonly: bool | None = None,
        llm: str | LlmFlags | None = None,
        *,
        model: str | None = None,
        model_for: dict[str, str] | None = None,
        base_url: str | None = None,
        manual_dir: str | os.PathLike[str] | None = None,
        max_llm_calls: int | None = None,
        max_cost: float | None = None,
        cache: str | None = None,
        scripted_file: str | os.PathLike[str] | None = None,
    ) -> Lake:
        """Open a lake (and its catalog, default <lake>/.dslake); either path or catalog must be given.

        readonly: never write to the catalog (None: so when its folder is not writable, e.g. a read-only mount).
        llm and the keywords after it: the model, as the command line's model flags choose it (--llm, --model,
        --model-for ROLE=MODEL as model_for={ROLE: MODEL}, --base-url, --manual-dir, budgets, --cache), applied to the
        settings and kept as every run's overrides; llm is a provider's name ("gemini", "openai", "manual") or the
        LlmFlags the CLI builds.
        """
        chosen = {"model": model, "base_url": base_url, "manual_dir": manual_dir, "max_llm_calls": max_llm_calls,
                  "max_cost": max_cost, "cache": cache, "scripted_file": scripted_file}
        if llm is not None or model_for or any(value is not None for value in chosen.values()):
            # Only then: a search or an index (no model) does not load the LLM layer.
            from dsstar_lake.llm.flags import model_keywords

            for name in ("manual_dir", "scripted_file"):
                chosen[name] = None if chosen[name] is None else str(chosen[name])
            llm = model_keywords(llm, model_for, **chosen)
        if path is None and catalog is None:
            raise UsageError("give a lake folder or a catalog folder", hint="give LAKE, or --catalog DIR",
                             api_hint="Lake.open(lake) or Lake.open(catalog=DIR)")
        root = None
        remote = None  # a URL in object storage (index/objectstore.py), or None
        if path is not None and "://" in str(path):  # only a URL has one: a folder's open skips the module
            from dslake_index.objectstore import remote_lake

            remote = remote_lake(path, catalog)
        if path is not None and remote is None:
            root = Path(path).expanduser()
            if not root.exists():
                raise LakeNotFound(f"lake not found: {root}")
            if not root.is_dir():
                raise LakeNotFound(f"lake is not a folder: {root}", hint="point dslake at the folder that holds the files")
            root = root.resolve()
        base = settings or Settings.load()
        catalog_dir = Path(catalog).expanduser().resolve() if catalog else root / base.catalog.dirname
        if root is not None and catalog_dir == root:
            # Its manifest, config and vectors would be indexed as lake files, and changed by every run.
            raise UsageError(f"the catalog cannot be the lake folder itself: {root}",
                             hint="leave --catalog out (the catalog goes in LAKE/.dslake) or choose another folder",
                             api_hint="leave catalog= out (the catalog goes in LAKE/.dslake) or choose another folder")
        # The catalog's config first: it is data (base/catalog_config.py), and the user's own config wins over it. A
        # catalog a script was caught changing: its config is not read at all (every read of the catalog refuses, and
        # a rebuild writes config.toml again from the user's own settings).
        caught = catalog_caught(catalog_dir)
        files = ([] if caught else [catalog_dir / CATALOG_CONFIG]) + [USER_CONFIG_PATH]
        # What the settings are read from, before they are read (a file changed meanwhile is then noticed).
        inputs = settings_inputs([str(f) for f in files]) if settings is None else None
        resolved = settings if settings is not None else Settings.load(
            overrides=overrides, config_files=files, catalog_files=(catalog_dir / CATALOG_CONFIG,))
        if settings is not None and overrides:
            resolved = settings.with_overrides(overrides)
        flagged = llm.overrides(resolved) if llm is not None else {}
        if llm is not None:
            # Applied as flags, not as the changed values: where a flag names the value a default already has,
            # its source still says "flag" (a per-role model given for another provider counts, llm/registry.py).
            resolved = llm.applied(resolved)
        lake = cls(root, catalog_dir, resolved, readonly, flagged)
        lake.settings_inputs = inputs
        lake.config_files = [str(f) for f in files]
        if lake.root is None and remote is None:
            lake.catalog.root = lake.catalog.stored_root()
        lake.catalog.remote = remote or (lake.catalog.stored_remote() if lake.root is None else None)
        return lake

    @property
    def readonly(self) -> bool:
        """Return whether this catalog is used without writing (its folder is not writable, it was asked, or a newer
        dslake wrote it)."""
        return self.catalog.readonly

    def catalog_warning(self) -> str | None:
        """Return what a reader of this catalog should hear before its results, or None: a catalog a newer dslake
        wrote is read as it is and never written (index and ask refuse it)."""
        return self.catalog.newer_warning()

    @property
    def db_path(self) -> Path:
        """Return the manifest's path."""
        return self.catalog.db_path

    def connection(self) -> sqlite3.Connection:
        """Return the manifest connection, migrating the schema on first use."""
        return self.catalog.connection()

    def close(self) -> None:
        """Close this thread's manifest connection and end lake.load's confined reader, if one was started."""
        self.catalog.close()
        if self._loader is not None:
            self._loader.close()
            self._loader = None

    def setup(self, overrides: dict[str, Any] | None = None, provider: Provider | None = None) -> RunSetup:
        """Return what a use case needs (catalog, settings with these overrides, model, sandbox): the run setup."""
        return run_setup(self.catalog, {**self.run_overrides, **(overrides or {})}, provider)

    @classmethod
    def _checked_settings(cls, path: str | None, catalog: str | None) -> Settings:
        """Return a lake's settings (its catalog's config included), else the user's; a caught catalog refuses."""
        if not (path or catalog):
            return Settings.load()
        lake = cls.open(path, catalog=catalog)
        lake.catalog.check_not_caught()
        return lake.settings

    @classmethod
    def setting_rows(cls, path: str | None = None, catalog: str | None = None) -> list[dict[str, Any]]:
        """Return every setting with its value and where it came from (a lake's, else the user's)."""
        settings = cls._checked_settings(path, catalog)
        return [{"key": k, "value": v, "source": s} for k, v, s in settings.items()]

    @classmethod
    def model_configuration(cls, path: str | None = None, catalog: str | None = None,
                            llm: LlmFlags | None = None) -> dict[str, Any]:
        """Describe the provider and model per role, credentials (present or not) and prices, flags applied."""
        from dsstar_lake.llm import describe_configuration

        settings = cls._checked_settings(path, catalog)
        return describe_configuration(llm.applied(settings) if llm is not None else settings)

    # ---- the catalog's handles (dslake_index.front_door.Catalog) ---------------------------------------------

    def chroma_url(self) -> str | None:
        """Return the Chroma server URL in use, or None for the embedded store."""
        return self.catalog.chroma_url()

    def vector_store(self) -> VectorStore:
        """Open the vector store (embedded in the catalog, or the configured Chroma server)."""
        return self.catalog.vector_store()

    def embedder(self) -> Embedder:
        """Return the process-wide embedding model (loaded on first encode)."""
        return self.catalog.embedder()

    def index_embedder(self) -> Embedder:
        """Return the embedding model for indexing: embedding runs after profiling, so it may use every core."""
        return self.catalog.index_embedder()

    # ---- commands ----------------------------------------------------------------------------------------------

    @manifest_errors
    def index(self, progress: Progress | None = None, rebuild: bool = False, analyzer: str | None = None,
              provider: Provider | None = None, paths: list[str] | None = None, given: list[str] | None = None,
              cluster: str | None = None) -> IndexSummary:
        """Bring the catalog up to date with the lake; return an IndexSummary (Catalog.index, the pipeline).

        analyzer: profile | llm | auto (None: agent.analyzer); llm and auto add the paper's LLM analysis to the
        descriptions of the files that want one (dsstar_lake/enrichers/analyzer_pass.py), and a model's summary to the cards of
        entries that carry no words a question uses (dsstar_lake/enrichers/summarizer_pass.py); provider replaces the configured
        model. Both are the index's enrichers: every changed card is embedded once, after them.
        paths: lake-relative files or folders known to have changed (a watcher's events): only they are looked at,
        so a change costs the same in a lake of any size. None scans the whole lake.
        given: paths as a user gives them (from the current folder or the lake root): the command line's PATHS.
        cluster: tcp://HOST:PORT of a Dask scheduler to profile on (None: index.cluster; empty: local processes).
        """
        from dsstar_lake.enrichers.analyzer_pass import model_passes, resolve_mode

        modes: list[str] = []

        def enrichers() -> list[Enricher]:
            modes.append(resolve_mode(self.settings, analyzer, provider))
            return model_passes(self.setup(provider=provider), modes[-1])

        def settled_inputs() -> str | None:
            """The settings' inputs, when this index ran with the settings a plain `dslake index` resolves and
            nothing but the catalog's config (which the index writes) changed since they were read."""
            plain = (self.settings_inputs is not None and modes == ["profile"] and cluster is None
                     and not any(source == "flag" for _, _, source in self.settings.items()))
            if not plain:
                return None
            now = settings_inputs(self.config_files)
            catalog_config = str(self.catalog_dir / CATALOG_CONFIG)
            return now if same_but_for(self.settings_inputs, now, catalog_config) else None  # type: ignore[arg-type]

        self._trust_named_server()
        return self.catalog.index(progress, rebuild=rebuild, paths=paths, given=given, cluster=cluster,
                                  enrichers=enrichers, prewarm=Prewarm, settled_inputs=settled_inputs)

    def _trust_named_server(self) -> None:
        """Add the Chroma server this index writes to, when the user named it (a flag, DSLAKE_*, their config), to
        catalog.trusted_servers in the user's config: the catalog's config.toml remembers the server, and a
        command without the flag then finds it trusted. A server the catalog's own config names is never added."""
        from dsstar_lake.base.trusted_servers import is_trusted, trust_server

        url = self.settings.catalog.chroma_url.strip()
        origin = self.settings.origin("catalog.chroma_url")
        if not url or origin in ("default", str(self.catalog_dir / CATALOG_CONFIG)):
            return
        if is_trusted(url, self.settings.catalog.trusted_servers):
            return
        try:
            trust_server(USER_CONFIG_PATH, url)
        except OSError as exc:
            raise ConfigError(f"cannot record {url} as a trusted server in {USER_CONFIG_PATH}: {exc.strerror or exc}",
                              hint=f'add [catalog] trusted_servers = ["{url}"] to your config yourself, or make '
                                   "it writable; nothing was indexed") from None

    @manifest_errors
    def status(self, check_vectors: bool = False) -> LakeStatus:
        """Summarise the catalog, and compare it with the lake (stale, new, removed files)."""
        return lake_status(self.catalog, check_vectors)

    @manifest_errors
    def show(self, path: str, *, absolute: bool = False) -> ShowView:
        """Return the stored record, description and card of one file (or of a family by its pattern): a dict
        that shows as tables in Jupyter.

        The description's load lines name the files as this process does (views/userpaths.py): relative to the
        current folder when the lake lies under it, else absolute (always, with absolute=True), or the bucket's URL.
        """
        from dsstar_lake.views.notebook import ShowView
        from dsstar_lake.views.userpaths import in_user_terms, lake_root_text

        shown = self.catalog.show(path)
        entry = shown.get("entry")
        if entry and entry.get("description"):
            root = lake_root_text(self.catalog.root, self.catalog.remote, absolute)
            entry["description"] = in_user_terms(entry["description"], root)
        return ShowView(shown)

    def retriever(self) -> Retriever:
        """Return this thread's hybrid retriever over this catalog (model loaded on first search)."""
        return self.catalog.retriever()

    @manifest_errors
    def search(self, query: str, k: int | None = None) -> SearchResults:
        """Return the top-k entries for a question."""
        if not query.strip():
            raise UsageError("the search question is empty")
        from dsstar_lake.views.notebook import SearchResults

        hits = self.retriever().search(query, k)
        # No hit at all: the catalog holds no entry, and the results say why (an index running, none finished yet).
        return SearchResults(hits, query, empty_state=None if hits else self.catalog.emptiness())

    @manifest_errors
    def timed_search(self, query: str, k: int | None = None) -> tuple[SearchResults, SearchTiming]:
        """Return the top-k entries for a question, and the time each part of the search took (ms)."""
        hits = self.search(query, k)
        return hits, self.retriever().last_timing

    @manifest_errors
    def entries(self) -> list[dict[str, Any]]:
        """Return every entry, by path: path, kind, format, files, rows and columns (None where the card does not
        say) and what it holds (the search hit's summary lines)."""
        return self.catalog.entries()

    @manifest_errors
    def members(self, entry_id: str) -> list[str]:
        """Return the lake-relative paths of an entry's files."""
        return self.catalog.members(entry_id)

    # ---- questions: the DS-STAR loop and its run records (dsstar_lake/usecases/ask.py, dsstar_lake/runs/record.py) -------------

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        files: list[str] | None = None,
        guidelines: str | None = None,
        max_rounds: int | None = None,
        overrides: dict[str, Any] | None = None,
        provider: Provider | None = None,
        progress: Progress | None = None,
        clarify: bool | Pick | None = None,
    ) -> Answer:
        """Answer a question with the DS-STAR loop.

        clarify: when readings give different answers, a person picks: True asks with input() (a notebook's
        answer box), or a callable (question, readings) -> the number picked, or None to let the model choose.
        """
        from dsstar_lake.usecases.ask import ask

        if clarify is True:
            from dsstar_lake.views.notebook import prompt_pick

            clarify = prompt_pick()
        flags = {"retrieve.k": k, "agent.guidelines": guidelines, "agent.max_rounds": max_rounds, **(overrides or {})}
        return ask(self.setup(flags, provider), question, files=files, progress=progress, clarify=clarify)

    def runs(self) -> RunList:
        """List this catalog's runs, newest first (a list of dicts that shows as a table in Jupyter)."""
        from dsstar_lake.runs.record import list_runs
        from dsstar_lake.views.notebook import RunList

        return RunList(list_runs(self.catalog_dir))

    def run(self, run_id: str) -> RunView:
        """Return one run: plan, rounds, verdicts and routes, answer, calls and cost by role (a dict)."""
        from dsstar_lake.runs.record import RunRecord, show_run
        from dsstar_lake.views.notebook import RunView

        return RunView(show_run(RunRecord.open(self.catalog_dir, run_id)))

    def resume(
        self, run_id: str, *, overrides: dict[str, Any] | None = None, provider: Provider | None = None,
        progress: Progress | None = None,
    ) -> Answer:
        """Continue an interrupted run from its last completed round; return its Answer."""
        from dsstar_lake.usecases.ask import resume

        return resume(self.setup(overrides, provider), run_id, progress=progress)

    def report(
        self,
        request: str,
        *,
        rounds: int | None = None,
        max_questions: int | None = None,
        jobs: int | None = None,
        k: int | None = None,
        out: str | os.PathLike[str] | None = None,
        format: str | None = None,
        overrides: dict[str, Any] | None = None,
        provider: Provider | None = None,
        progress: Progress | None = None,
    ) -> Report:
        """Write a cited report for an open-ended request (DS-STAR+); return a Report."""
        from dsstar_lake.report.pipeline import build_report

        flags = {"report.rounds": rounds, "report.max_questions": max_questions, "report.jobs": jobs,
                 "report.k": k, "report.format": format, **(overrides or {})}
        return build_report(self.setup(flags, provider), request, out=out, progress=progress)

    # ---- evaluation (dsstar_lake/eval) ---------------------------------------------------------------------

    def benchmark(self, tasks: list[Task], options: BenchmarkOptions | None = None, *,
                  provider: Provider | None = None, judge: Any = _JUDGE,
                  progress: Progress | None = None) -> BenchmarkReport:
        """Answer and score benchmark tasks (eval.runner.BenchmarkOptions); return a BenchmarkReport.

        judge: left out, built from the settings (eval.judge_model, else the run's model); see run_benchmark.
        """
        from dsstar_lake.eval.runner import FROM_SETTINGS, BenchmarkOptions, run_benchmark

        options = options or BenchmarkOptions()
        return run_benchmark(self.setup(options.overrides, provider), tasks, options,
                             judge=FROM_SETTINGS if judge is _JUDGE else judge, progress=progress)

    def kramabench(self, task_files: list[str], *, ids: list[str] | tuple[str, ...] = (), missing: str | None = None,
                   oracle: bool = False, jobs: int | None = None, k: int | None = None,
                   max_rounds: int | None = None, out: str | None = None, resume: bool = False,
                   judge: bool = True, progress: Progress | None = None) -> BenchmarkReport:
        """Read KramaBench task files (the ids asked for), answer and score them (judge=False: no model judges)."""
        from dsstar_lake.eval.runner import BenchmarkOptions, load_benchmark

        tasks, absent = load_benchmark(task_files, ids, missing)
        options = BenchmarkOptions(oracle=oracle, jobs=jobs, k=k, max_rounds=max_rounds, missing=absent,
                                   out=Path(out) if out else None, resume=resume, judge=judge)
        return self.benchmark(tasks, options, progress=progress)

    @manifest_errors
    def evaluate_retrieval(self, task_files: list[str], ks: list[int], missing: str | None = None,
                           select: bool | None = None) -> RetrievalReport:
        """Measure recall@K, all-found@K and context size of the retriever on the tasks of these files, and the
        first planner prompt a run builds without a selection.

        missing: a file of lake files known to be absent (default: missing_blobs.txt beside the first tasks file).
        select: also ask the selector once per task and score its choice (True: a model must be configured; None:
        when one is; False: never).
        """
        from dsstar_lake.base.errors import ModelNotConfigured
        from dsstar_lake.eval.resolve import read_missing
        from dsstar_lake.eval.retrieval import default_missing_list, evaluate_retrieval
        from dsstar_lake.eval.tasks import load_tasks

        tasks = [task for path in task_files for task in load_tasks(path)]
        absent = read_missing(missing) if missing else default_missing_list(Path(task_files[0]).resolve().parent)
        setup = self.setup()
        if select is not False:
            try:
                setup.check_model()
                select = True
            except ModelNotConfigured:
                if select:
                    raise
                select = False
        return evaluate_retrieval(setup, tasks, ks, absent, select=select)

    # ---- dslake doctor (dsstar_lake/usecases/doctor.py) ---------------------------------------------------------------

    @classmethod
    def doctor(cls, path: str | None = None, catalog: str | None = None) -> DoctorReport:
        """Check the sandbox, model credentials, embedding model and science packages, and the catalog when a
        lake or catalog is given; return a DoctorReport."""
        from dsstar_lake.usecases.doctor import diagnose

        lake = cls.open(path, catalog=catalog) if (path or catalog) else None
        return diagnose(lake.settings if lake else Settings.load(), lake.catalog if lake else None)

    # ---- notebooks: load what an entry describes (dsstar_lake/usecases/load.py) ------------------------------------

    @manifest_errors
    def load(self, target: Any, limit: int | None = None, *, lazy: bool = False,
             max_memory_mb: int | None = None) -> Any:  # what the entry's load lines give: any object
        """Load a search hit, an entry path or a lake file (lake-relative, or its path from here) by running its load
        lines on the real file.

        A table gives a pandas DataFrame; a workbook of several tables a dict of them by sheet or table name; a
        family a dict from member path to what each member gives (limit: only its first members, by path).
        lazy: a DuckDB relation instead, over a CSV, TSV or Parquet file or a dataset or table, read only as a
        query needs it (rel.filter(...), rel.aggregate(...), rel.limit(5).df()).
        max_memory_mb: the memory a whole load may use (default: this machine's physical memory; 0: no limit); one
        whose DataFrame would take more than half of it is refused, naming the lazy line instead.
        """
        from dsstar_lake.usecases.load import load

        loader = None if lazy else self._confined_loader()
        return load(self.catalog, target, limit, loader, lazy=lazy, max_memory_mb=max_memory_mb)

    def _confined_loader(self) -> Any:
        """Return this lake's confined reader (one server per Lake, kept for the next load), or None for a lake in a
        bucket (its files in the blob cache are read here, as the index reads them) or without its folder."""
        if self.root is None or self.catalog.remote is not None:
            return None
        if self._loader is None:
            import weakref

            from dsstar_lake.usecases.confined_load import ConfinedLoader
            from dsstar_lake.usecases.load import machine_memory_mb

            # the user's own process: the machine's memory bounds a load, not the sandbox's sandbox.memory_mb
            self._loader = ConfinedLoader(self.root, self.catalog.catalog_dir, self.settings.sandbox.backend,
                                          machine_memory_mb())
            weakref.finalize(self, self._loader.close)  # a notebook that never closes its Lake
        return self._loader
