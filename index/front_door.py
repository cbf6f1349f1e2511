"""Catalog: the index package's one front door, for one lake's catalog.

It owns the manifest (this thread's SQLite connection, index/catalog.py), the full-text index that lives in it, the
vector store, the embedder, the retriever, and the index pipeline: scan → profile → group → render → enrich →
render what changed → full text → embed (indexer.run_index), with the lock, the rebuild of a damaged catalog, the
check of the vector store against the manifest and the settings the catalog keeps for other machines. dsstar_lake's
Lake facade and every run setup hold the same Catalog; the optional model passes come in as enrichers
(index/enrich.py), so nothing here calls a model or reaches above index/.

There is one connection and one retriever per thread: a report answers sub-questions and eval runs tasks in
parallel threads, and a SQLite connection must not interleave two threads' transactions.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index import catalog as catalog_db
from dslake_index import census, lookup
from dslake_index.catalog_errors import REBUILD_API_HINT, disk_full, read_only, too_new
from dslake_index.errors import CatalogError, CatalogLocked, ConfigError, UsageError, is_disk_full
from dslake_index.progress import Progress

if TYPE_CHECKING:
    # The value types of the door's handles: layers above name them from here (dslake_index.front_door), and
    # (imported when first named, by __getattr__ below) the status and the settings view.
    from dslake_index.catalog_status import CatalogStatus
    from dslake_index.dataset_entries import DatasetRecord
    from dslake_index.embed import Embedder as Embedder
    from dslake_index.enrich import Enricher
    from dslake_index.indexer import IndexSummary as IndexSummary
    from dslake_index.no_change import NoChange as NoChange
    from dslake_index.retrieve import Retriever as Retriever
    from dslake_index.retrieve import SearchTiming as SearchTiming
    from dslake_index.sections import SettingsView
    from dslake_index.vectors import VectorStore as VectorStore

CHROMA_DIR = "chroma"
MANIFEST_NAME = catalog_db.MANIFEST_NAME  # the manifest's file name in the catalog folder
CATALOG_CONFIG = "config.toml"  # what the catalog keeps of its settings: where its vectors live


class EnrichmentStore:
    """The manifest as the model passes (dsstar_lake's analyzer and summarizer enrichers) see it: which contents
    want words, the analyses and summaries stored by content hash, the profiles and descriptions they read.

    The SQL stays in index/analysis_store.py, summaries.py and lookup.py; a stored analysis marks its folders dirty, so
    the pipeline renders the entries again before it embeds.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn  # analyses and summaries are imported when used: a search needs neither

    def file_contents(self, skip_formats: Sequence[str]) -> list[tuple[str, str]]:
        """Return (content hash, path) of every single-file entry whose format is not skipped."""
        from dslake_index import analysis_store

        return analysis_store.file_contents(self._conn, skip_formats)

    def unread_contents(self, skip_formats: Sequence[str], fallback_formats: Sequence[str],
                        failed_note: str) -> list[tuple[str, str, str, bool]]:
        """Return (content hash, path, format, tripped) of the single files described as fallback formats or text."""
        from dslake_index import analysis_store

        return analysis_store.unread_contents(self._conn, skip_formats, fallback_formats, failed_note)

    def family_representatives(self, skip_formats: Sequence[str]) -> list[tuple[str, str]]:
        """Return (first member's path, its content hash) per family whose format is not skipped."""
        from dslake_index import analysis_store

        return analysis_store.family_representatives(self._conn, skip_formats)

    def stored_analyses(self) -> dict[str, tuple[str, str]]:
        """Return {content hash: (text, source)} of every stored analysis ('' text: a failed one)."""
        from dslake_index import analysis_store

        return analysis_store.stored_analyses(self._conn)

    def store_analysis(self, content_hash: str, text: str, source: str, ok: bool) -> None:
        """Write one analysis; a good one marks its files' folders dirty."""
        from dslake_index import analysis_store

        analysis_store.store_analysis(self._conn, content_hash, text, source, ok)

    def representative_hashes(self) -> list[tuple[str, str, str, str]]:
        """Return (entry id, kind, path shown, content hash) per entry: a file's own, a family's first member's."""
        from dslake_index import wordless

        return wordless.representative_hashes(self._conn)

    def stored_summaries(self) -> dict[str, tuple[str, str]]:
        """Return {content hash: (text, source)} of every stored summary ('' text: a failed one)."""
        from dslake_index import wordless

        return wordless.stored_summaries(self._conn)

    def store_summary(self, content_hash: str, text: str, source: str) -> None:
        """Write one summary (text '' with a failed:… source records a failure)."""
        from dslake_index import wordless

        wordless.store_summary(self._conn, content_hash, text, source)

    def is_wordless(self, content_hash: str) -> bool:
        """Tell whether the content's stored profile carries no words a question would use (False: no profile)."""
        from dslake_index.profilers.base import Profile
        from dslake_index.wordless import is_wordless

        profile = lookup.stored_profile(self._conn, content_hash)
        return profile is not None and is_wordless(Profile.from_dict(json.loads(profile)))

    def entry_description(self, entry_id: str) -> str | None:
        """Return an entry's description, or None when there is no such entry."""
        return lookup.entry_description(self._conn, entry_id)


class Catalog:
    """A lake (a folder, or a URL in object storage) and its catalog: the handles to read it and the pipeline that
    writes it."""

    def __init__(self, root: Path | None, catalog_dir: Path, settings: SettingsView,
                 readonly: bool | None = None) -> None:
        self.root = root
        self.remote: str | None = None  # the URL of a lake in object storage (then root is None)
        self.catalog_dir = catalog_dir
        self.settings = settings
        self._readonly = readonly  # None: decided on first use, from whether the folder is writable
        self._newer: list[str] | None = None  # the manifest's migrations this code does not know (newer_schema)
        self._rebuilding = False  # a rebuild reads nothing of the old catalog: the one time a caught one is opened
        self._mark_places: tuple[str, ...] | None = None  # where a caught catalog's mark would be (index/caught.py)
        import threading  # here: a no-change index imports this module and opens no Catalog

        self._local = threading.local()

    # ---- the manifest ------------------------------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        """Return the manifest's path."""
        return self.catalog_dir / catalog_db.MANIFEST_NAME

    @property
    def readonly(self) -> bool:
        """Return whether this catalog is used without writing (its folder is not writable, it was asked, or a newer
        dslake wrote it)."""
        if self._readonly is None:
            self._readonly = self.catalog_dir.is_dir() and not catalog_db.writable(self.catalog_dir)
        return self._readonly or bool(self.newer_schema())

    def newer_schema(self) -> list[str]:
        """Return the migrations the manifest records that this code does not know: a newer dslake wrote it, and
        this code reads it as it is but never writes to it (its migrations may have changed what writing means).
        [] for a catalog of this version or an older one (which the first connection migrates), or none yet.
        Read once per Catalog, without writing anything."""
        if self._newer is None:
            if not self.db_path.exists():
                return []  # not remembered: an index may create it
            self._newer = catalog_db.newer_schema(self.db_path)
        return self._newer

    def newer_warning(self) -> str | None:
        """Return the warning for a catalog a newer dslake wrote (newer_schema), or None."""
        from dslake_index.catalog_errors import newer_schema_words

        unknown = self.newer_schema()
        return f"{newer_schema_words(self.catalog_dir, unknown)}: read as it is, never written" if unknown else None

    def require_writable(self, why: str) -> None:
        """Raise the read-only error when this catalog must not be written (why: what would write it)."""
        if self.newer_schema():
            raise too_new(self.catalog_dir, self.newer_schema(), why)
        if self.readonly:
            raise read_only(self.catalog_dir, why)

    def open_connection(self) -> sqlite3.Connection | None:
        """Return this thread's connection if one is open, else None (never opens one)."""
        return getattr(self._local, "conn", None)

    def connection(self, create: bool = False) -> sqlite3.Connection:
        """Return this thread's manifest connection, migrating the schema on first use.

        create: open (and create) the manifest even when it does not exist yet, as the indexer does.
        """
        self.check_not_caught()  # every time: a long-lived reader (serve, mcp, a report's threads) stops too
        conn = self.open_connection()
        if conn is None:
            if not create and not self.db_path.exists():
                raise CatalogError(f"no catalog at {self.catalog_dir}", hint="run `dslake index LAKE` first",
                                   api_hint="build one with Lake.open(lake).index()")
            conn = self._connect()
            self._local.conn = conn
        return conn

    def check_not_caught(self) -> None:
        """Raise CatalogCaught when a script was caught changing this catalog and it was not rebuilt since
        (index/caught.py): nothing it may have written is read, on any thread, until `--rebuild`."""
        if self._rebuilding:
            return
        from dslake_index.caught import mark_places, refuse_if_caught

        if self._mark_places is None:
            self._mark_places = mark_places(self.catalog_dir)
        refuse_if_caught(self.catalog_dir, self._mark_places, self.rebuild_command)

    def rebuild_command(self) -> str:
        """Return the command line that rebuilds this catalog from its lake."""
        import shlex

        lake = shlex.quote(str(self.root)) if self.root is not None else (self.remote or "LAKE")
        default = self.root is not None and self.catalog_dir == self.root / self.settings.catalog.dirname
        named = "" if default else f" --catalog {shlex.quote(str(self.catalog_dir))}"
        return f"dslake index {lake}{named} --rebuild"

    def mark_caught(self, run_id: str, paths: list[str]) -> bool:
        """Record that a script of run_id changed the catalog (these paths): every read refuses until a rebuild.
        Return whether the mark is kept (index/caught.py)."""
        from dslake_index.caught import mark_caught

        return mark_caught(self.catalog_dir, run_id, paths)

    def _connect(self) -> sqlite3.Connection:
        try:
            if self.readonly:
                conn = catalog_db.connect(self.db_path, readonly=True)
                # A newer catalog holds every migration this code knows (they are append-only) and more.
                if not self.newer_schema() and catalog_db.pending_migrations(conn):
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
                api_hint=REBUILD_API_HINT,
            ) from None
        return conn

    def close(self) -> None:
        """Close this thread's manifest connection and forget its retriever."""
        conn = self.open_connection()
        if conn is not None:
            conn.close()
            self._local.conn = None
        self._local.retriever = None

    def stored_root(self) -> Path | None:
        """Return the lake folder the catalog was last indexed from, or None."""
        if not self.db_path.exists():
            return None
        value = catalog_db.get_meta(self.connection(), "lake_root")
        return Path(value) if value and "://" not in value else None

    def stored_remote(self) -> str | None:
        """Return the object-store URL the catalog was last indexed from, or None (a folder, or never indexed)."""
        if not self.db_path.exists():
            return None
        value = catalog_db.get_meta(self.connection(), "lake_root")
        return value if value and "://" in value else None

    def members(self, entry_id: str) -> list[str]:
        """Return the lake-relative paths of an entry's files."""
        return lookup.member_paths(self.connection(), entry_id)

    def lake_file(self, rel: str) -> Path:
        """Return a lake-relative path's path in the lake; raise member_reads.MemberRefused (a DslakeError) when its
        real path lies outside the lake or inside this catalog (a shared catalog can list any path)."""
        from dslake_index.member_reads import lake_path

        return lake_path(self._lake_folder(), rel, self.catalog_dir)

    def dataset_files(self, root: str, members: list[str]) -> list[Path]:
        """Return the member files a whole read of the dataset rooted at root takes, each checked like lake_file:
        what lake.load reads instead of the dataset's folder (member_reads.py)."""
        from dslake_index.member_reads import member_files

        return member_files(self._lake_folder(), root, members, self.catalog_dir)

    def _lake_folder(self) -> Path:
        if self.root is None:
            raise UsageError("reading lake files needs the lake folder")
        return Path(self.root)

    # ---- reads for the floors above: rows by path or id, on this thread's connection (the SQL is lookup.py's) --

    def file_record(self, path: str) -> sqlite3.Row | None:
        """Return the whole file record of lake file `path`, or None when the catalog does not know it."""
        return lookup.file_record(self.connection(), path)

    def entry_record(self, entry_id: str) -> sqlite3.Row | None:
        """Return the whole entry with this id, or None."""
        return lookup.entry_record(self.connection(), entry_id)

    def entry_named(self, key: str) -> sqlite3.Row | None:
        """Return the entry whose shown path (a family's pattern) or id is `key`, or None."""
        return lookup.entry_named(self.connection(), key)

    def entry_of_file(self, path: str) -> sqlite3.Row | None:
        """Return the entry (the file's own, or its family's) that describes lake file `path`, or None."""
        return lookup.entry_of_file(self.connection(), path)

    def stored_profile(self, content_hash: str) -> str | None:
        """Return the profile JSON cached for a content hash, or None."""
        return lookup.stored_profile(self.connection(), content_hash)

    def file_description(self, path: str) -> str | None:
        """Describe one lake file from its stored profile, as an entry of its own would be described (a family
        member's own words), or None when it has no stored profile."""
        from dslake_index.cards import describe
        from dslake_index.profilers.base import Profile

        row = self.file_record(path)
        profile = self.stored_profile(row["hash"]) if row is not None and row["hash"] else None
        return describe(Profile.from_dict(json.loads(profile)), path) if profile is not None else None

    def profiled_paths(self) -> list[str]:
        """Return the paths of the files that profiled without failure."""
        return lookup.profiled_paths(self.connection())

    def entry_of_paths(self) -> list[tuple[str, str]]:
        """Return (path, entry id) of every file that belongs to an entry."""
        return lookup.entry_of_paths(self.connection())

    def file_hashes(self) -> list[tuple[str, int, str | None]]:
        """Return (path, size, content hash) of every file the catalog records."""
        return lookup.file_hashes(self.connection())

    def dataset_roots(self) -> list[str]:
        """Return the root folders of the dataset and table entries (a run's view of a bucket fetches each whole)."""
        return lookup.dataset_roots(self.connection())

    def enrichment_store(self) -> EnrichmentStore:
        """Return what the model passes read and write, on this thread's connection (the index's own, while
        Catalog.index runs them as enrichers)."""
        return EnrichmentStore(self.connection())

    def dataset_record(self, entry_id: str) -> DatasetRecord | None:
        """Return a dataset entry's load record (what loading it runs), or None (not a dataset, not indexed yet)."""
        from dslake_index.dataset_build import stored_record

        return stored_record(self.connection(), entry_id)

    def relative(self, path: str) -> str:
        """Accept a lake-relative path, or a path (absolute or from the cwd) to a file inside the lake."""
        candidate = Path(path).expanduser()
        if self.root is not None and (candidate.is_absolute() or candidate.exists()):
            try:
                return candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                pass
        return candidate.as_posix()

    def lake_files(self) -> list[str]:
        """Return every file of the lake, lake-relative and sorted: the files on disk, or the catalog's objects."""
        if self.root is None and self.remote is not None:
            return [path for path, _, _ in self.file_hashes()]
        from dslake_index.scan import scan_lake

        # The files on disk, not the catalog's: a file that failed to profile is still there to read.
        scan = scan_lake(Path(self.root or "."), self.catalog_dir, self.settings.index.follow_symlinks)
        return sorted(f.path for f in scan.files)

    def show(self, path: str) -> dict[str, Any]:
        """Return the stored record, description and card of one file (or of a family by its pattern)."""
        conn = self.connection()
        rel = self.relative(path)
        row = lookup.file_record(conn, rel)
        entry = None
        if row is not None and row["entry_id"]:
            entry = lookup.entry_record(conn, row["entry_id"])
        elif row is None:
            entry = lookup.entry_named(conn, rel)
        if row is None and entry is None:
            raise UsageError(f"not in the catalog: {rel}", hint="check the path (relative to the lake) or run dslake index",
                             api_hint="check the path (relative to the lake) or run lake.index()")
        result: dict[str, Any] = {"path": rel}
        if row is not None:
            result["file"] = {k: row[k] for k in row.keys()}
        if entry is not None:
            result["entry"] = {k: entry[k] for k in entry.keys()}
            result["members"] = lookup.member_paths(conn, entry["id"])
        return result

    def entries(self) -> list[dict[str, Any]]:
        """Return every entry, by path: path, kind, format, files, rows and columns (None where the card does not
        say; rows_exact False when the rows were estimated) and what it holds (the search hit's summary lines)."""
        from dslake_index.gist import gist, table_size

        out = []
        for row in lookup.all_entries(self.connection()):
            size = table_size(row["card"] or "")
            out.append({"path": row["path"], "kind": row["kind"], "format": row["format"],
                        "files": row["member_count"], "rows": size.rows, "rows_exact": size.rows_exact,
                        "columns": size.columns, "summary": gist(row["card"] or "")})
        return out

    def emptiness(self) -> str | None:
        """Say why the catalog holds no entry, or None when it holds some (or has no manifest here: a catalog whose
        vectors are on a server): 'indexing' while an index runs that has written none yet (a first index),
        'unfinished' when a first index was cut off before it wrote any, 'empty' when the last index found nothing
        it could describe (an empty lake, or every file failed or was skipped)."""
        if not self.db_path.exists():
            return None
        conn = self.connection()
        if conn.execute("SELECT EXISTS (SELECT 1 FROM entries)").fetchone()[0]:
            return None
        if catalog_db.writer_running(self.catalog_dir):
            return "indexing"
        return "empty" if catalog_db.get_meta(conn, "last_index_at") else "unfinished"

    def status(self, check_vectors: bool = False) -> CatalogStatus:
        """Summarise the catalog, and compare it with the lake (stale, new, removed files).

        check_vectors: open the vector store and compare its ids and card hashes with the manifest (else the
        store's cheap stamp is compared).
        """
        from dslake_index.catalog_status import CatalogStatus, dir_size
        from dslake_index.scan import scan_lake
        from dslake_index.sync import check_consistency

        conn = self.connection()
        files = census.file_states(conn)
        stale: list[str] = []
        new: list[str] = []
        present: set[str] = set()
        listed = None
        if self.root is not None and self.root.is_dir():
            listed = scan_lake(self.root, self.catalog_dir, self.settings.index.follow_symlinks).files
        elif self.remote is not None:  # a lake in object storage: its listing, as an index would compare it
            from dslake_index.objectstore import list_objects

            listed = list_objects(self.remote, self.catalog_dir)[1].files
        for f in listed or ():
            present.add(f.path)
            row = files.get(f.path)
            if row is None:
                new.append(f.path)
            elif row["size"] != f.size or row["mtime_ns"] != f.mtime_ns or row["status"] == "stale":
                stale.append(f.path)
        removed = sorted(set(files) - present) if self.root is not None or listed is not None else []
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
            from dslake_index.vector_check import count_problems

            problems.extend(count_problems(conn, self.vector_stamp()))
        problems.extend(check_consistency(conn, store))
        entries, families = census.entry_counts(conn)
        last = catalog_db.get_meta(conn, "last_index_at")
        return CatalogStatus(
            lake=str(self.root) if self.root else (self.remote or ""),
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
            catalog_bytes=dir_size(self.catalog_dir),
            last_index_at=float(last) if last else None,
            problems=problems,
        )

    # ---- derived stores ------------------------------------------------------------------------------------

    def chroma_url(self) -> str | None:
        """Return the Chroma server URL in use, or None for the embedded store."""
        return self.settings.catalog.chroma_url or None

    def vector_store(self) -> VectorStore:
        """Open the vector store (embedded in the catalog, or the configured Chroma server) to read it: an embedded
        store is first brought in step with the manifest, or read through it while an index writes it
        (index/vector_lag.py)."""
        store = self._open_store()
        if self.chroma_url() is None and self.db_path.exists():
            from dslake_index.vector_lag import bring_in_step

            return bring_in_step(self.connection(), store, self.catalog_dir, self.catalog_dir / CHROMA_DIR,
                                 self.readonly)
        return store

    def _open_store(self) -> VectorStore:
        """Open the vector store as it is: for the index, which writes it under the store's write lock."""
        from dslake_index.vectors import VectorStore

        url = self.chroma_url()
        path = None if url else self.catalog_dir / CHROMA_DIR
        return VectorStore.open(path=path, url=url, collection=self.settings.catalog.collection,
                                readonly=self.readonly)

    def embedder(self) -> Embedder:
        """Return the process-wide embedding model (loaded on first encode)."""
        from dslake_index.embed import get_embedder

        return get_embedder(self.settings.embed)

    def index_embedder(self) -> Embedder:
        """Return the embedding model for indexing: embedding runs after profiling, so it may use every core."""
        from dataclasses import replace  # here: a no-change index imports this module, and no dataclasses

        from dslake_index.embed import get_embedder

        embed = self.settings.embed
        return get_embedder(replace(embed, threads=embed.index_threads or (os.cpu_count() or 1)))

    def retriever(self) -> Retriever:
        """Return this thread's hybrid retriever over the catalog (model loaded on first search)."""
        from dslake_index.retrieve import Retriever

        self.check_not_caught()  # a retriever keeps its connection: checked here as connection() checks
        retriever = getattr(self._local, "retriever", None)
        if retriever is None and not self.db_path.exists() and self.chroma_url():
            # Another machine, with only the catalog's settings: search the shared store dense-only.
            from dslake_index.remote import RemoteRetriever

            retriever = RemoteRetriever(self.vector_store, self.embedder, self.settings.retrieve)
            self._local.retriever = retriever
        if retriever is None:
            retriever = Retriever(self.connection(), self.vector_store, self.embedder, self.settings.retrieve)
            self._local.retriever = retriever
        return retriever

    def vector_stamp(self) -> Any:
        """Return the embedded store's cheap stamp (index.vector_check), or None for a server or an unknown layout."""
        from dslake_index.vector_check import local_stamp

        if self.chroma_url():
            return None
        return local_stamp(self.catalog_dir / CHROMA_DIR, self.settings.catalog.collection)

    # ---- the index pipeline ------------------------------------------------------------------------------

    def scope_of(self, paths: list[str]) -> list[str] | None:
        """Return the lake-relative scope of paths given on the command line (None: scan the whole lake).

        A relative path is read from the current folder when it lies inside the lake from there, else from the
        lake root: `dslake index lake lake/a.csv` and `dslake index lake a.csv` name the same file.
        """
        from dslake_index.scan import lake_relative, rescan_scope

        if self.root is None:
            raise UsageError("indexing needs the lake folder", hint="dslake index LAKE [PATH]...",
                             api_hint="open the lake with Lake.open(lake)")
        rels = []
        for path in paths:
            rel = lake_relative(self.root, path)
            if rel is None and not os.path.isabs(path):
                rel = lake_relative(self.root, self.root / path)
            if rel is None:
                raise UsageError(f"not inside the lake {self.root}: {path}")
            rels.append(rel)
        return rescan_scope(rels)

    def index(self, progress: Progress | None = None, rebuild: bool = False, paths: list[str] | None = None,
              given: list[str] | None = None, cluster: str | None = None,
              enrichers: Callable[[], Sequence[Enricher]] | None = None,
              prewarm: Callable[[Callable[[], Any], Callable[[], Any]], Any] | None = None,
              settled_inputs: Callable[[], str | None] | None = None) -> IndexSummary:
        """Bring the catalog up to date with the lake; return an IndexSummary.

        paths: lake-relative files or folders known to have changed (a watcher's events): only they are looked at,
        so a change costs the same in a lake of any size. None scans the whole lake.
        given: paths as a user gives them (from the current folder or the lake root), read with scope_of.
        cluster: tcp://HOST:PORT of a Dask scheduler to profile on (None: index.cluster; empty: local processes).
        enrichers: returns the optional passes over the rendered entries (called once the arguments are checked,
        before anything is written, so that a model that is not configured fails first).
        prewarm: given the index embedder's and the vector store's factories, returns an object whose start() gets
        both ready while the profilers run and whose stop() ends that (dsstar_lake.usecases.prewarm.Prewarm).
        settled_inputs: returns the inputs of the settings (dsstar_lake/base/settings_inputs.py) when they are
        those a plain `dslake index` resolves, else None: recorded, they let the next no-change index answer
        without the pipeline (index_if_unchanged).
        """
        from dslake_index.indexer import IndexOptions, run_index
        from dslake_index.scan import scan_lake
        from dslake_index.sync import sync_vectors
        from dslake_index.vector_check import check_and_repair, record_stamp
        from dslake_index.vector_lag import may_lag, write_lock

        remote = self.remote
        if self.root is None and remote is None:
            raise UsageError("indexing needs the lake folder", hint="dslake index LAKE [--catalog DIR]",
                             api_hint="open the lake with Lake.open(lake) or Lake.open(lake, catalog=DIR)")
        if (given or paths) and remote is not None:
            raise UsageError("a lake in object storage is indexed whole: give no PATHS with it")
        if given:
            paths = self.scope_of(given)
        passes = list(enrichers()) if enrichers is not None else []
        self.require_writable("indexing writes to it")
        from dslake_index.caught import caught, clear_caught

        was_caught = rebuild and caught(self.catalog_dir) is not None
        if not rebuild:
            self.check_not_caught()  # before anything is written
        # A remote lake is listed before the catalog is made: a missing bucket or refused keys leave nothing behind.
        listing = None
        if remote is not None:
            from dslake_index.objectstore import list_objects  # with the store's clients: only for a bucket

            listing = list_objects(remote, self.catalog_dir)
        # So is the cluster reached and checked: a bad address or a worker without the lake writes nothing.
        address = self.settings.index.cluster if cluster is None else cluster
        session = None
        if address:  # the cluster's client (sockets, the pool's collector) only for an index that uses one
            from dslake_index.cluster import open_cluster

            session = open_cluster(address, self.root if remote is None else None)
        self._create_folder()
        try:
            with catalog_db.writer_lock(self.catalog_dir):
                if rebuild:
                    self._rebuilding = was_caught
                    self._prepare_rebuild(salvage=not was_caught)
                conn = self.connection(create=True)
                with catalog_db.transaction(conn):
                    catalog_db.set_meta(conn, "lake_root", remote or str(self.root))
                self._persist_settings()
                with write_lock(self.catalog_dir, wait=True):
                    drift = check_and_repair(conn, self.vector_stamp(), self._open_store)
                lake_ref, scan = listing or (self.root, scan_lake(
                    self.root, self.catalog_dir, self.settings.index.follow_symlinks,
                    only=None if rebuild else paths))
                options = IndexOptions.from_settings(self.settings, cluster=session)
                report = progress or (lambda event, data: None)
                lagging = may_lag(None if self.chroma_url() else self.catalog_dir / CHROMA_DIR,
                                  self.settings.catalog.collection)

                def sync(c: sqlite3.Connection, p: Progress) -> int:
                    with write_lock(self.catalog_dir, wait=True):
                        return sync_vectors(c, self._open_store, self.index_embedder, p, may_lag=lagging)

                # A store a small change leaves lagging is not opened: the model alone is got ready.
                warming = (prewarm(self.index_embedder, None if lagging else self._open_store)
                           if prewarm is not None else None)
                try:
                    summary = run_index(conn, self.db_path, lake_ref, scan, options, sync, report,
                                        on_work=warming.start if warming is not None else None, enrichers=passes)
                finally:
                    if warming is not None:
                        warming.stop()  # after Ctrl-C too: waits for one short step at most
                record_stamp(conn, self.vector_stamp())
                if remote is None:
                    self._record_settled(conn, settled_inputs() if settled_inputs and not address else None)
                if was_caught:
                    clear_caught(self.catalog_dir)
                    summary.notes.append("the catalog a script had changed was rebuilt from the lake alone: "
                                         "nothing of its old manifest was kept")
                if not (summary.entries or summary.added or summary.changed or summary.unchanged):
                    summary.notes.append(empty_lake_note(summary.skipped))
                if drift.total:
                    summary.vectors_repaired = drift.total
                    summary.notes.append(f"the vector store had drifted from the manifest ({drift.describe()}): "
                                         "re-embedded from the manifest's cards, nothing profiled again")
                return summary
        except catalog_db.CatalogLockHeld as exc:
            raise CatalogLocked(
                f"another dslake index is running on {self.catalog_dir} ({exc})",
                hint="wait for it to finish; the catalog stays usable for search meanwhile",
                api_hint="wait for it to finish; the catalog stays usable for search meanwhile",
            ) from None
        finally:
            self._rebuilding = False
            if session is not None:
                session.close()

    def _record_settled(self, conn: sqlite3.Connection, inputs: str | None) -> None:
        """Record what index_if_unchanged needs to trust that the code, the model, the store and (inputs: those
        of the settings a plain index resolves, else None) the settings are those of this run."""
        from dslake_index.embed import model_dir
        from dslake_index.no_change import record_settled
        from dslake_index.profilers.base import PROFILER_VERSION

        try:
            folder: str | None = str(model_dir())
        except ConfigError:  # no packaged model: the code's signature alone
            folder = None
        plain = inputs is not None and self.root is not None and not self.chroma_url() and not self.settings.index.cluster
        settings = {"inputs": inputs, "root": str(self.root), "catalog": str(self.catalog_dir),
                    "dirname": self.settings.catalog.dirname,
                    "follow_symlinks": self.settings.index.follow_symlinks} if plain else None
        record_settled(conn, folder, PROFILER_VERSION, self.catalog_dir / CHROMA_DIR, settings)

    def _create_folder(self) -> None:
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
                api_hint="choose a writable place with Lake.open(lake, catalog=DIR)",
            ) from None

    def _persist_settings(self) -> None:
        """Record where the vectors live, so search from another machine needs only the catalog's settings."""
        path = self.catalog_dir / CATALOG_CONFIG
        url = self.settings.catalog.chroma_url
        collection = self.settings.catalog.collection
        text = f"[catalog]\nchroma_url = {json.dumps(url)}\ncollection = {json.dumps(collection)}\n"
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(path)

    def _prepare_rebuild(self, salvage: bool = True) -> None:
        from dslake_index.rebuild import rebuild_catalog

        self.close()
        rebuild_catalog(self.catalog_dir, self.db_path, self._open_store, salvage=salvage)


def empty_lake_note(skipped: int) -> str:
    """Return the note of an index that found no file to describe: "0 entries" alone reads like a failure."""
    why = f" ({skipped} skipped, each listed with why)" if skipped else ""
    return (f"the lake holds no file to index{why}: the catalog has no entries, and search finds nothing until "
            "files are added to the lake and indexed")


def index_if_unchanged(root: Path, catalog_dir: Path, inputs: str, named: bool,
                       accept: Callable[[NoChange], bool] = lambda report: True) -> NoChange | None:
    """Return what a plain `dslake index` of a local lake would report when it would change nothing, having
    written what it writes; else None, having written nothing: Catalog.index then does the whole run, and the
    lake's scan made here is handed to it. index/no_change.py says what is checked, and why; it loads neither the
    settings nor the pipeline, so the command line answers before it loads its own parser.

    root, catalog_dir: resolved; inputs: the settings' inputs now (dsstar_lake/base/settings_inputs.py); named:
    the catalog was given, else it is root/.dslake; accept may refuse a report (None then).
    """
    from dslake_index.caught import caught
    from dslake_index.no_change import answer_if_unchanged

    if caught(catalog_dir) is not None:
        return None  # the full CLI refuses it with its advice
    return answer_if_unchanged(root, catalog_dir, catalog_dir / CHROMA_DIR, inputs, named, accept)


def catalog_caught(catalog_dir: Path) -> bool:
    """Tell whether a script was caught changing this catalog and it was not rebuilt since (index/caught.py):
    Lake.open then reads none of the catalog's settings."""
    from dslake_index.caught import caught

    return caught(catalog_dir) is not None


def __getattr__(name: str) -> Any:
    # Re-exported on first use: a no-change index imports this module and needs neither (each holds dataclasses).
    if name == "CatalogStatus":
        from dslake_index.catalog_status import CatalogStatus

        return CatalogStatus
    if name == "SettingsView":
        from dslake_index.sections import SettingsView

        return SettingsView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CATALOG_CONFIG", "CHROMA_DIR", "MANIFEST_NAME", "Catalog", "CatalogStatus", "EnrichmentStore",
           "SettingsView", "catalog_caught", "index_if_unchanged"]


def embedder_for(embed: Any) -> Embedder:
    """Return the process-wide embedder for [embed] settings before any catalog is open: a cold search's question
    is embedded ahead with the packaged defaults (dsstar_lake/terminal/question_ahead.py)."""
    from dslake_index.embed import get_embedder

    return get_embedder(embed)
