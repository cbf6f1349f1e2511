"""Lake: the one facade that cli.py, tests and notebooks call (open, index, status, show, search)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dsstar_lake.catalog_errors import disk_full, manifest_errors, read_only
from dsstar_lake.errors import CatalogError, CatalogLocked, LakeNotFound, UsageError, is_disk_full
from dsstar_lake.settings import USER_CONFIG_PATH, Settings
from index import catalog as catalog_db

CATALOG_CONFIG = "config.toml"
CHROMA_DIR = "chroma"

Progress = Callable[[str, dict[str, Any]], None]


@dataclass
class LakeStatus:
    """What the catalog holds and how it compares with the lake right now."""

    lake: str
    catalog: str
    schema: str | None
    files: int
    entries: int
    families: int
    bytes: int
    formats: dict[str, int]
    failed: list[tuple[str, str]]
    stale: list[str]
    new: list[str]
    removed: list[str]
    catalog_bytes: int
    last_index_at: float | None
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the status as JSON-ready data."""
        return asdict(self)


def _dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class Lake:
    """A data lake and its catalog."""

    def __init__(self, root: Path | None, catalog_dir: Path, settings: Settings) -> None:
        self.root = root
        self.catalog_dir = catalog_dir
        self.settings = settings
        self._readonly: bool | None = None  # None: decided on first use, from whether the folder is writable
        # One connection and one retriever per thread: report answers sub-questions in parallel threads,
        # and a SQLite connection must not interleave two threads' transactions.
        self._local = threading.local()

    @property
    def _conn(self) -> sqlite3.Connection | None:
        return getattr(self._local, "conn", None)

    @_conn.setter
    def _conn(self, conn: sqlite3.Connection | None) -> None:
        self._local.conn = conn

    # ---- opening -------------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        catalog: str | os.PathLike[str] | None = None,
        settings: Settings | None = None,
        overrides: dict[str, Any] | None = None,
        readonly: bool | None = None,
    ) -> Lake:
        """Open a lake (and its catalog, default <lake>/.dslake); either path or catalog must be given.

        readonly: never write to the catalog (None: so when its folder is not writable, e.g. a read-only mount).
        """
        if path is None and catalog is None:
            raise UsageError("give a lake folder or --catalog DIR")
        root = None
        if path is not None:
            root = Path(path).expanduser()
            if not root.exists():
                raise LakeNotFound(f"lake not found: {root}")
            if not root.is_dir():
                raise LakeNotFound(f"lake is not a folder: {root}", hint="point dslake at the folder that holds the files")
            root = root.resolve()
        base = settings or Settings.load()
        catalog_dir = Path(catalog).expanduser().resolve() if catalog else root / base["catalog.dirname"]
        if root is not None and catalog_dir == root:
            # Its manifest, config and vectors would be indexed as lake files, and changed by every run.
            raise UsageError(f"the catalog cannot be the lake folder itself: {root}",
                             hint="leave --catalog out (the catalog goes in LAKE/.dslake) or choose another folder")
        files = [USER_CONFIG_PATH, catalog_dir / CATALOG_CONFIG]
        resolved = settings if settings is not None else Settings.load(
            overrides=overrides, config_files=files, guarded_files=(catalog_dir / CATALOG_CONFIG,))
        if settings is not None and overrides:
            resolved = settings.with_overrides(overrides)
        lake = cls(root, catalog_dir, resolved)
        lake._readonly = readonly
        if lake.root is None:
            lake.root = lake._stored_root()
        return lake

    def _stored_root(self) -> Path | None:
        if not self.db_path.exists():
            return None
        value = catalog_db.get_meta(self.connection(), "lake_root")
        return Path(value) if value else None

    @property
    def readonly(self) -> bool:
        """Return whether this catalog is used without writing (its folder is not writable, or it was asked)."""
        if self._readonly is None:
            self._readonly = self.catalog_dir.is_dir() and not catalog_db.writable(self.catalog_dir)
        return self._readonly

    @property
    def db_path(self) -> Path:
        """Return the manifest's path."""
        return self.catalog_dir / catalog_db.MANIFEST_NAME

    def _create_catalog(self) -> None:
        try:
            self.catalog_dir.mkdir(parents=True, exist_ok=True)
            probe = self.catalog_dir / ".write-test"
            probe.write_text("")
            probe.unlink()
        except OSError as exc:
            if is_disk_full(exc):
                raise disk_full(self.catalog_dir) from None
            raise CatalogError(
                f"cannot write the catalog at {self.catalog_dir}: {exc.strerror or exc}",
                hint="choose a writable place with --catalog DIR",
            ) from None

    def connection(self) -> sqlite3.Connection:
        """Return the manifest connection, migrating the schema on first use."""
        if self._conn is None:
            if not self.db_path.exists():
                raise CatalogError(f"no catalog at {self.catalog_dir}", hint="run `dslake index LAKE` first")
            self._conn = self._connect()
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        try:
            if self.readonly:
                conn = catalog_db.connect(self.db_path, readonly=True)
                if catalog_db.pending_migrations(conn):
                    conn.close()
                    raise read_only(self.catalog_dir, "was written by an older dslake (its schema needs an update)")
                return conn
            conn = catalog_db.connect(self.db_path)
            catalog_db.migrate(conn)
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc):
                raise disk_full(self.catalog_dir) from None
            raise CatalogError(
                f"the catalog manifest {self.db_path} is damaged ({exc})",
                hint="run `dslake index LAKE --rebuild` to rebuild it from the lake, keeping valid cached descriptions",
            ) from None
        return conn

    def close(self) -> None:
        """Close this thread's manifest connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._local.retriever = None

    # ---- derived stores --------------------------------------------------------------------------------------

    def chroma_url(self) -> str | None:
        """Return the Chroma server URL in use, or None for the embedded store."""
        return self.settings["catalog.chroma_url"] or None

    def vector_store(self) -> Any:
        """Open the vector store (embedded in the catalog, or the configured Chroma server)."""
        from index.vectors import VectorStore

        url = self.chroma_url()
        path = None if url else self.catalog_dir / CHROMA_DIR
        return VectorStore.open(path=path, url=url, collection=self.settings["catalog.collection"],
                                readonly=self.readonly)

    def embedder(self) -> Any:
        """Return the process-wide embedding model (loaded on first encode)."""
        from index.embed import get_embedder

        return get_embedder(self.settings.section("embed"))

    def index_embedder(self) -> Any:
        """Return the embedding model for indexing: embedding runs after profiling, so it may use every core."""
        from index.embed import get_embedder

        section = dict(self.settings.section("embed"))
        section["threads"] = int(section.get("index_threads") or 0) or (os.cpu_count() or 1)
        return get_embedder(section)

    def scope_of(self, paths: list[str]) -> list[str] | None:
        """Return the lake-relative scope of paths given on the command line (None: scan the whole lake).

        A relative path is read from the current folder when it lies inside the lake from there, else from the
        lake root: `dslake index lake lake/a.csv` and `dslake index lake a.csv` name the same file.
        """
        from index.scan import lake_relative, rescan_scope

        if self.root is None:
            raise UsageError("indexing needs the lake folder", hint="dslake index LAKE [PATH]...")
        rels = []
        for path in paths:
            rel = lake_relative(self.root, path)
            if rel is None and not os.path.isabs(path):
                rel = lake_relative(self.root, self.root / path)
            if rel is None:
                raise UsageError(f"not inside the lake {self.root}: {path}")
            rels.append(rel)
        return rescan_scope(rels)

    # ---- commands ----------------------------------------------------------------------------------------------

    @manifest_errors
    def index(self, progress: Progress | None = None, rebuild: bool = False, analyzer: str | None = None,
              provider: Any = None, paths: list[str] | None = None) -> Any:
        """Bring the catalog up to date with the lake; return an IndexSummary.

        analyzer: profile | llm | auto (None: agent.analyzer); llm and auto add the paper's LLM analysis to the
        descriptions of the files that want one (dsstar_lake/analyze.py), and a model's summary to the cards of
        entries that carry no words a question uses (dsstar_lake/summarize.py); provider replaces the configured
        model.
        paths: lake-relative files or folders known to have changed (a watcher's events): only they are looked at,
        so a change costs the same in a lake of any size. None scans the whole lake.
        """
        from dsstar_lake.analyze import resolve_mode
        from index.indexer import IndexOptions, refresh_entries, run_index
        from index.profilers.base import Limits
        from index.scan import scan_lake
        from index.sync import sync_vectors
        from index.vector_check import check_and_repair, record_stamp

        if self.root is None:
            raise UsageError("indexing needs the lake folder", hint="dslake index LAKE [--catalog DIR]")
        mode = resolve_mode(self.settings, analyzer, provider)
        if self.readonly:
            raise read_only(self.catalog_dir, "indexing writes to it")
        self._create_catalog()
        try:
            with catalog_db.writer_lock(self.catalog_dir):
                if rebuild:
                    self._prepare_rebuild()
                conn = self._conn or self._connect()
                self._conn = conn
                with catalog_db.transaction(conn):
                    catalog_db.set_meta(conn, "lake_root", str(self.root))
                self._persist_catalog_settings()
                drift = check_and_repair(conn, self._vector_stamp(), self.vector_store)
                scan = scan_lake(self.root, self.catalog_dir, bool(self.settings["index.follow_symlinks"]),
                                 only=None if rebuild else paths)
                options = IndexOptions(
                    jobs=int(self.settings["index.jobs"]) or (os.cpu_count() or 1),
                    limits=Limits.from_settings(self.settings.section("profile")),
                    timeout_s=float(self.settings["profile.timeout_s"]),
                    memory_mb=int(self.settings["profile.memory_mb"]),
                    hash_algorithm=self.settings["index.hash_algorithm"],
                    write_batch=int(self.settings["index.write_batch"]),
                    min_members=int(self.settings["families.min_members"]),
                    max_members_listed=int(self.settings["families.max_members_listed"]),
                )
                report = progress or (lambda event, data: None)
                sync = lambda c, p: sync_vectors(c, self.vector_store, self.index_embedder, p)  # noqa: E731
                warming = _Prewarm(self.index_embedder)
                try:
                    summary = run_index(conn, self.db_path, self.root, scan, options, sync, report,
                                        on_work=warming.start)
                finally:
                    warming.stop()  # after Ctrl-C too: waits for one short step at most
                if mode != "profile":
                    from dsstar_lake.analyze import run_analyzer

                    analysis = run_analyzer(self, mode, provider=provider, progress=report)
                    summary.analysis = analysis.to_dict()
                    if analysis.analyzed:
                        summary.embedded += refresh_entries(conn, options, sync, report)
                    from dsstar_lake.ask import CACHE_NAME
                    from dsstar_lake.summarize import run_summarizer

                    cache = self.catalog_dir / CACHE_NAME if str(self.settings["llm.cache"]).lower() != "off" else None
                    summaries = run_summarizer(conn, self.settings, self.catalog_dir, provider, report,
                                               spent=analysis.cost_usd, cache_path=cache)
                    summary.summaries = summaries.to_dict()
                    if summaries.written:
                        summary.embedded += refresh_entries(conn, options, sync, report)
                record_stamp(conn, self._vector_stamp())
                if drift.total:
                    summary.vectors_repaired = drift.total
                    summary.notes.append(f"the vector store had drifted from the manifest ({drift.describe()}): "
                                         "re-embedded from the manifest's cards, nothing profiled again")
                return summary
        except catalog_db.CatalogLockHeld as exc:
            raise CatalogLocked(
                f"another dslake index is running on {self.catalog_dir} ({exc})",
                hint="wait for it to finish; the catalog stays usable for search meanwhile",
            ) from None

    def _persist_catalog_settings(self) -> None:
        """Record where the vectors live, so search from another machine needs only the catalog's settings."""
        path = self.catalog_dir / CATALOG_CONFIG
        url = self.settings["catalog.chroma_url"]
        collection = self.settings["catalog.collection"]
        text = f"[catalog]\nchroma_url = {json.dumps(url)}\ncollection = {json.dumps(collection)}\n"
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(path)

    def _vector_stamp(self) -> Any:
        """Return the embedded store's cheap stamp (index.vector_check), or None for a server or an unknown layout."""
        from index.vector_check import local_stamp

        if self.chroma_url():
            return None
        return local_stamp(self.catalog_dir / CHROMA_DIR, self.settings["catalog.collection"])

    def _prepare_rebuild(self) -> None:
        from index.rebuild import rebuild_catalog

        self.close()
        rebuild_catalog(self.catalog_dir, self.db_path, self.vector_store)

    @manifest_errors
    def status(self, check_vectors: bool = False) -> LakeStatus:
        """Summarise the catalog, and compare it with the lake (stale, new, removed files)."""
        from index.scan import scan_lake
        from index.sync import check_consistency

        conn = self.connection()
        files = {row["path"]: row for row in conn.execute("SELECT path, size, mtime_ns, status, error, format FROM files")}
        stale: list[str] = []
        new: list[str] = []
        present: set[str] = set()
        if self.root is not None and self.root.is_dir():
            for f in scan_lake(self.root, self.catalog_dir, bool(self.settings["index.follow_symlinks"])).files:
                present.add(f.path)
                row = files.get(f.path)
                if row is None:
                    new.append(f.path)
                elif row["size"] != f.size or row["mtime_ns"] != f.mtime_ns or row["status"] == "stale":
                    stale.append(f.path)
        removed = sorted(set(files) - present) if self.root is not None else []
        formats: dict[str, int] = {}
        for row in files.values():
            key = row["format"] or "unknown"
            formats[key] = formats.get(key, 0) + 1
        store = None
        problems: list[str] = []
        if self.chroma_url() is None and not (self.catalog_dir / CHROMA_DIR).exists() and files:
            problems.append("the vector store folder is missing; a plain `dslake index LAKE` re-embeds every entry "
                            "from the manifest's cards (nothing is profiled again)")
        elif check_vectors:
            store = self.vector_store()
        else:
            from index.vector_check import count_problems

            problems.extend(count_problems(conn, self._vector_stamp()))
        problems.extend(check_consistency(conn, store))
        entries, families = conn.execute("SELECT count(*), coalesce(sum(kind = 'family'), 0) FROM entries").fetchone()
        last = catalog_db.get_meta(conn, "last_index_at")
        return LakeStatus(
            lake=str(self.root) if self.root else "",
            catalog=str(self.catalog_dir),
            schema=catalog_db.schema_version(conn),
            files=len(files),
            entries=entries,
            families=families,
            bytes=sum(row["size"] for row in files.values() if row["size"] > 0),
            formats=dict(sorted(formats.items(), key=lambda kv: -kv[1])),
            failed=[(p, r["error"] or "") for p, r in sorted(files.items()) if r["status"] == "failed"],
            stale=sorted(stale),
            new=sorted(new),
            removed=removed,
            catalog_bytes=_dir_size(self.catalog_dir),
            last_index_at=float(last) if last else None,
            problems=problems,
        )

    @manifest_errors
    def show(self, path: str) -> dict[str, Any]:
        """Return the stored record, description and card of one file (or of a family by its pattern)."""
        conn = self.connection()
        rel = self._relative(path)
        row = conn.execute("SELECT * FROM files WHERE path = ?", (rel,)).fetchone()
        entry = None
        if row is not None and row["entry_id"]:
            entry = conn.execute("SELECT * FROM entries WHERE id = ?", (row["entry_id"],)).fetchone()
        elif row is None:
            entry = conn.execute("SELECT * FROM entries WHERE path = ? OR id = ?", (rel, rel)).fetchone()
        if row is None and entry is None:
            raise UsageError(f"not in the catalog: {rel}", hint="check the path (relative to the lake) or run dslake index")
        result: dict[str, Any] = {"path": rel}
        if row is not None:
            result["file"] = {k: row[k] for k in row.keys()}
        if entry is not None:
            result["entry"] = {k: entry[k] for k in entry.keys()}
            result["members"] = [r[0] for r in conn.execute(
                "SELECT path FROM files WHERE entry_id = ? ORDER BY path", (entry["id"],))]
        return result

    def _relative(self, path: str) -> str:
        """Accept a lake-relative path, or a path (absolute or from the cwd) to a file inside the lake."""
        candidate = Path(path).expanduser()
        if self.root is not None and (candidate.is_absolute() or candidate.exists()):
            try:
                return candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                pass
        return candidate.as_posix()

    def retriever(self) -> Any:
        """Return the hybrid retriever over this catalog (model loaded on first search)."""
        from index.retrieve import Retriever

        retriever = getattr(self._local, "retriever", None)
        if retriever is None and not self.db_path.exists() and self.chroma_url():
            # Another machine, with only the catalog's settings: search the shared store dense-only.
            from index.remote import RemoteRetriever

            retriever = RemoteRetriever(self.vector_store, self.embedder, self.settings.section("retrieve"))
            self._local.retriever = retriever
        if retriever is None:
            retriever = Retriever(self.connection(), self.vector_store, self.embedder, self.settings.section("retrieve"))
            self._local.retriever = retriever
        return retriever

    @manifest_errors
    def search(self, query: str, k: int | None = None) -> list[Any]:
        """Return the top-k entries for a question."""
        if not query.strip():
            raise UsageError("the search question is empty")
        return self.retriever().search(query, k)

    @manifest_errors
    def members(self, entry_id: str) -> list[str]:
        """Return the lake-relative paths of an entry's files."""
        return [row[0] for row in self.connection().execute(
            "SELECT path FROM files WHERE entry_id = ? ORDER BY path", (entry_id,))]

    def _need_writable(self, why: str) -> None:
        if self.readonly:
            raise read_only(self.catalog_dir, why)

    # ---- questions: the DS-STAR loop and its run records (dsstar_lake/ask.py, dsstar_lake/runs.py) -------------

    def ask(
        self,
        question: str,
        *,
        k: int | None = None,
        files: list[str] | None = None,
        guidelines: str | None = None,
        max_rounds: int | None = None,
        overrides: dict[str, Any] | None = None,
        provider: Any = None,
        progress: Progress | None = None,
    ) -> Any:
        """Answer a question with the DS-STAR loop over retrieved files (or exactly `files`); return an Answer."""
        from dsstar_lake.ask import ask

        self._need_writable("`ask` keeps its run record in it")
        flags = {"retrieve.k": k, "agent.guidelines": guidelines, "agent.max_rounds": max_rounds, **(overrides or {})}
        return ask(self, question, files=files, overrides=flags, provider=provider, progress=progress)

    def runs(self) -> list[dict[str, Any]]:
        """List this catalog's runs, newest first."""
        from dsstar_lake.runs import list_runs

        return list_runs(self.catalog_dir)

    def run(self, run_id: str) -> dict[str, Any]:
        """Return one run: plan, rounds, verdicts and routes, answer, calls and cost by role."""
        from dsstar_lake.runs import RunRecord, show_run

        return show_run(RunRecord.open(self.catalog_dir, run_id))

    def resume(
        self, run_id: str, *, overrides: dict[str, Any] | None = None, provider: Any = None,
        progress: Progress | None = None,
    ) -> Any:
        """Continue an interrupted run from its last completed round; return its Answer."""
        from dsstar_lake.ask import resume

        self._need_writable("`runs resume` adds to the run's record in it")
        return resume(self, run_id, overrides=overrides, provider=provider, progress=progress)

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
        provider: Any = None,
        progress: Progress | None = None,
    ) -> Any:
        """Write a cited report for an open-ended request (DS-STAR+); return a Report."""
        from dsstar_lake.report.pipeline import build_report

        self._need_writable("`report` keeps its runs' records in it")
        flags = {"report.rounds": rounds, "report.max_questions": max_questions, "report.jobs": jobs,
                 "report.k": k, "report.format": format, **(overrides or {})}
        return build_report(self, request, out=out, overrides=flags, provider=provider, progress=progress)


class _Prewarm:
    """Import Chroma and get the embedding model ready in the background while the profilers run.

    A one-file change otherwise pays for them one after the other once profiling is done (~1.5 s on 2 cores).
    stop() (on Ctrl-C too) skips what has not begun. A thread cannot be interrupted: one left importing Chroma
    when the process exits is harmless, but one in a model's native code can crash it (SIGSEGV, abort seen).
    So a first ONNX export (15-55 s) runs in a child process that stop() kills, and only opening the exported
    model (~0.3 s) runs here, which stop() waits for. Failures are ignored here: the real calls raise them with
    their proper messages.
    """

    def __init__(self, embedder: Callable[[], Any]) -> None:
        self._embedder = embedder
        self._thread: threading.Thread | None = None
        self._state = threading.Lock()
        self._stopped = False
        self._loading = False
        self._child: Any = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dslake-prewarm", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                import chromadb  # noqa: F401  (importing it is most of opening the store)
            embedder = self._embedder()
            if embedder.needs_export():
                self._export(embedder)
            with self._state:
                if self._stopped:
                    return
                self._loading = True
            if embedder.loads_quickly():
                embedder.load()
        except Exception:  # noqa: BLE001 - reported by the real open/encode
            pass

    def _export(self, embedder: Any) -> None:
        from index.embed import export_onnx
        from index.indexer import start_in_child

        with self._state:
            if self._stopped:
                return
            self._child = start_in_child(export_onnx, str(embedder.cache_dir), embedder.threads)
        self._child.join()

    def stop(self) -> None:
        """Skip the steps not begun, end an export under way (the next run starts it again), wait for a load."""
        with self._state:
            self._stopped = True
            loading, child = self._loading, self._child
        if child is not None and child.is_alive():
            child.terminate()
            child.join()
        if loading and self._thread is not None:
            self._thread.join()
