"""`dslake index`: stat, hash only what changed, profile only new content, rebuild dirty entries, sync vectors."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index import fulltext
from dslake_index.catalog import set_meta, transaction
from dslake_index.enrich import Enricher
from dslake_index.interrupt import ctrl_c_deferred
from dslake_index.plan import plan_changes
from dslake_index.profilers.base import PROFILER_VERSION, Limits, Profile
from dslake_index.progress import Progress
from dslake_index.scan import FileStat, ScanResult
from dslake_index.sections import SettingsView
from dslake_index.timings import phase, recording

if TYPE_CHECKING:
    import multiprocessing.context
    import multiprocessing.process

    from dslake_index.entries import EntryRow
    from dslake_index.families import Group, Member


@dataclass
class IndexSummary:
    """What one index run did."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    failed: int = 0
    profiled: int = 0  # files whose content was actually profiled (the rest reused a cached profile)
    reused: int = 0
    entries: int = 0
    families: int = 0
    embedded: int = 0
    skipped: int = 0
    skipped_files: list[tuple[str, str]] = field(default_factory=list)  # (path, why): links leaving the lake, …
    seconds: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)
    analysis: dict[str, Any] | None = None  # what the optional analyzer added (its Enrichment's report)
    summaries: dict[str, Any] | None = None  # what the optional summarizer added (its Enrichment's report)
    vectors_repaired: int = 0  # vectors the store had lost or changed behind the manifest's back (re-embedded)
    notes: list[str] = field(default_factory=list)  # what else the user should hear about this run
    cluster: dict[str, Any] | None = None  # where --cluster profiled: address, workers, tasks, files (None: here)
    phases: dict[str, dict[str, float]] = field(default_factory=dict)  # where the time went (index/timings.py)

    def to_dict(self) -> dict[str, Any]:
        """Return the summary as JSON-ready data."""
        return asdict(self)


@dataclass
class IndexOptions:
    """Knobs for one index run, resolved from settings and flags."""

    jobs: int
    limits: Limits
    timeout_s: float
    memory_mb: int
    hash_algorithm: str
    write_batch: int
    min_members: int
    max_members_listed: int
    script_memory_mb: int  # a script's memory (sandbox.memory_mb): a dataset or file past it gets a streaming line
    cluster: Any = None  # a connected ClusterSession (index/cluster.py): profile there, not in the local pool
    confine: str = "auto"  # where a local lake's profilers run (sandbox.backend): index/confined_pool.py
    read_table: Any = None  # how a local table's log or metadata is read (confined_pool.ConfinedTables; None: here)
    lake_root: Path | None = None  # a local lake: tables (Delta, Iceberg) are read from their log or metadata there

    @classmethod
    def from_settings(cls, settings: SettingsView, cluster: Any = None) -> IndexOptions:
        """Read the options from the resolved settings' typed sections (dsstar_lake's Settings)."""
        return cls(
            jobs=settings.index.jobs or (os.cpu_count() or 1),
            limits=Limits.from_settings(asdict(settings.profile)),
            timeout_s=settings.profile.timeout_s,
            memory_mb=settings.profile.memory_mb,
            hash_algorithm=settings.index.hash_algorithm,
            write_batch=settings.index.write_batch,
            min_members=settings.families.min_members,
            max_members_listed=settings.families.max_members_listed,
            cluster=cluster,
            script_memory_mb=settings.sandbox.memory_mb,
            confine=settings.sandbox.backend,
        )


def _noop(event: str, data: dict[str, Any]) -> None:
    return None


def run_index(
    conn: sqlite3.Connection,
    db_path: Path,
    lake: Path | Any,
    scan: ScanResult,
    options: IndexOptions,
    sync_vectors: Callable[[sqlite3.Connection, Progress], int],
    progress: Progress = _noop,
    on_work: Callable[[], None] | None = None,
    enrichers: Sequence[Enricher] = (),
) -> IndexSummary:
    """Bring the manifest, the full-text index and the vectors up to date with the scanned lake.

    on_work is called once, before profiling, when files were added, changed or removed: the caller may start
    loading what embedding will need while the profilers run. enrichers (index/enrich.py) run in order on the
    rendered entries; what they change is rendered again, and every changed card is embedded once, at the end.
    """
    tables = None
    if isinstance(lake, Path) and options.cluster is None and options.read_table is None:
        from dslake_index.confined_tables import ConfinedTables

        # Tables' metadata (pyiceberg builds a FileIO from what it says) is read where the profilers are: confined.
        tables = ConfinedTables(lake, [db_path.parent], options.confine, options.timeout_s, options.memory_mb)
        options = replace(options, read_table=tables)
    try:
        with recording() as clock:
            clock.add("scan", scan.seconds, scan.cpu_seconds, len(scan.files))
            summary = _run_index(conn, db_path, lake, scan, options, sync_vectors, progress, on_work, enrichers)
    finally:
        if tables is not None:
            tables.close()
        pool_module = sys.modules.get("dslake_index.confined_pool")  # not imported: no server was started
        if isinstance(lake, Path) and pool_module is not None:
            pool_module.join_closing()  # the profile server closed after profiling has exited by now: none outlives the index
    if tables is not None and tables.note and tables.note not in summary.notes:
        summary.notes.append(tables.note)
    summary.phases = clock.to_dict()
    return summary


def _run_index(
    conn: sqlite3.Connection,
    db_path: Path,
    lake: Path | Any,
    scan: ScanResult,
    options: IndexOptions,
    sync_vectors: Callable[[sqlite3.Connection, Progress], int],
    progress: Progress,
    on_work: Callable[[], None] | None,
    enrichers: Sequence[Enricher],
) -> IndexSummary:
    started = time.perf_counter()
    summary = IndexSummary(skipped=len(scan.skipped), skipped_files=list(scan.skipped))
    if isinstance(lake, Path) and options.lake_root is None:
        options = replace(options, lake_root=lake)
    from dslake_index.hint_sweep import recheck_hints

    with phase("plan"):
        # An old catalog's load hints that no longer parse: those files are profiled again (and the no-change
        # check's plan, made before, is not taken).
        outdated = recheck_hints(conn)
        new, changed, removed, unchanged = plan_changes(conn, scan, PROFILER_VERSION, reuse=not outdated)
    summary.unchanged = unchanged
    summary.removed = len(removed)
    if removed:
        with transaction(conn):
            conn.executemany("INSERT OR IGNORE INTO dirty_folders (folder) VALUES (?)",
                             [(p.rpartition("/")[0],) for p in removed])
            conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in removed])
    todo = new + changed
    if todo and options.cluster is None:
        # Its imports (~1 CPU-s) overlap what comes before the first profiler: the render check, the prewarm's start.
        # A console script's hand-over has started it already, with what its files need (index/no_change.py).
        if isinstance(lake, Path):
            from dslake_index.confined_pool import start_server_early

            start_server_early(lake, [db_path.parent], options.confine)
        else:
            from dslake_index.worker_context import start_profiler_server_early

            start_profiler_server_early()
    new_render = _rendering_changed(conn)
    if (todo or removed) and on_work is not None:
        on_work()
    progress("plan", {"total": len(todo), "new": len(new), "changed": len(changed), "removed": len(removed)})
    if todo:
        with phase("profile: whole pool (wall)", len(todo)):
            _profile_all(conn, db_path, lake, todo, {f.path for f in new}, options, summary, progress)
    with phase("entries: whole rebuild"):
        _rebuild_dirty_entries(conn, options, progress, force=new_render is not None)
    from dslake_index.wordless import apply_summaries

    apply_summaries(conn)  # a rebuilt entry gets its stored model summary back before its card is embedded
    if new_render is not None:
        with transaction(conn):
            set_meta(conn, "render_version", new_render)
    fulltext.refill_if_outdated(conn)  # cards indexed by an older rule (their own label words matched as content)
    try:
        _enrich(conn, enrichers, options, summary, progress)
    except Exception:
        # A pass that failed outright (not a spent budget or a provider's refusal, which stop it quietly): the
        # entries rendered so far are still embedded, so search sees them, and the error is reported.
        summary.embedded = sync_vectors(conn, progress)
        raise
    with phase("vectors: whole sync"):
        summary.embedded = sync_vectors(conn, progress)
    summary.entries, summary.families = conn.execute(
        "SELECT count(*), coalesce(sum(kind = 'family'), 0) FROM entries"
    ).fetchone()
    summary.failed = conn.execute("SELECT count(*) FROM files WHERE status != 'ok'").fetchone()[0]
    summary.failures = [
        (row[0], row[1]) for row in conn.execute("SELECT path, error FROM files WHERE status != 'ok' ORDER BY path")
    ]
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_index_at', ?)", (str(time.time()),))
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _enrich(conn: sqlite3.Connection, enrichers: Sequence[Enricher], options: IndexOptions, summary: IndexSummary,
            progress: Progress) -> None:
    """Run each enricher on the rendered entries; render again the entries one changed, before the next runs."""
    from dslake_index.wordless import apply_summaries

    for enricher in enrichers:
        done = enricher.enrich(conn, progress)
        setattr(summary, done.name, done.report)
        if done.wrote:
            _rebuild_dirty_entries(conn, options, progress)
            apply_summaries(conn)


def _rendering_changed(conn: sqlite3.Connection) -> str | None:
    """Return the new render version when descriptions or cards are written differently since the last run.

    Every folder is then marked dirty and rebuilt one transaction at a time, so a concurrent search keeps
    seeing the old entries until each folder's new ones replace them (never an empty catalog).
    """
    from dslake_index.catalog import get_meta
    from dslake_index.render_stamp import render_version  # the rendering code's files, none of it imported

    version = render_version()
    if get_meta(conn, "render_version") == version:
        return None
    with transaction(conn):
        conn.execute("INSERT OR IGNORE INTO dirty_folders (folder) SELECT DISTINCT folder FROM files")
    return version


def _pool_context() -> multiprocessing.context.BaseContext:
    from dslake_index.worker_context import profiler_context

    return profiler_context()


def start_in_child(target: Callable[..., None], *args: Any) -> multiprocessing.process.BaseProcess:
    """Run target(*args) in a process forked from the profilers' server: a clean one, which Ctrl-C leaves alone
    (its parent ends it) and which can be killed where a thread in native code cannot be stopped."""
    from dslake_index.worker_context import start_preloaded_server_early

    # The profilers now run in the confined profile server, so this process's fork server is started here, for
    # this child only: deaf to Ctrl-C while its interpreter starts (a Ctrl-C then printed "Fatal Python error:
    # init_import_site" with a traceback), and with nothing preloaded that the child does not need.
    start_preloaded_server_early(["dslake_index.fork_server"])
    process = _pool_context().Process(target=target, args=args, name="dslake-child", daemon=True)
    process.start()
    return process


def start_profiler_server() -> None:
    """Start the process profilers fork from and wait until it has imported them (~1 s on 2 cores).

    Every pool forks from it, so only the first pool of a process pays this: a watcher pays it up front.
    """
    process = _pool_context().Process(target=int, name="dslake-warm-up")  # int(): a picklable no-op
    process.start()
    process.join()


def _profile_all(
    conn: sqlite3.Connection,
    db_path: Path,
    lake: Path | Any,  # a folder, or an objectstore.ObjectLake
    todo: list[FileStat],
    new_paths: set[str],
    options: IndexOptions,
    summary: IndexSummary,
    progress: Progress,
) -> None:
    # The pool, its result collector and the profilers' task are imported here, where there is work: a
    # no-change index never loads them (tests/test_startup_imports.py).
    from dslake_index.collect import collect
    from dslake_index.profile_task import limit_memory
    from pebble import ProcessPool

    if options.cluster is not None:
        from dslake_index.cluster import profile_on_cluster

        profile_on_cluster(conn, options.cluster, lake, todo, new_paths, options, summary, progress)
        return
    jobs = options.jobs or os.cpu_count() or 1
    if isinstance(lake, Path):
        _profile_confined(conn, db_path, lake, todo, new_paths, options, summary, progress, jobs)
        return
    # A lake in a bucket: its profilers need the store's network, so they run here as before (docs/safety.md).
    with ctrl_c_deferred() as pressed, ProcessPool(
            max_workers=min(jobs, len(todo)), initializer=limit_memory, initargs=(options.memory_mb,),
            context=_pool_context()) as pool:
        try:
            collect(conn, _jobs(pool, lake, todo, db_path, options), _window(jobs), new_paths, options, summary,
                    progress, pressed)
            if len(todo) > 1:
                _retry_alone(conn, db_path, lake, todo, new_paths, options, summary, progress, pressed)
        except BaseException:
            # Ctrl-C or a write that failed (a full disk): leaving the block without stop() waits for every
            # file still queued.
            pool.stop()
            if pressed.is_set():  # a pool that broke because Ctrl-C ended its fork server is Ctrl-C, too
                raise KeyboardInterrupt from None
            raise


def _profile_confined(conn: sqlite3.Connection, db_path: Path, lake: Path, todo: list[FileStat],
                      new_paths: set[str], options: IndexOptions, summary: IndexSummary, progress: Progress,
                      jobs: int) -> None:
    """Profile a local lake's files in the confined profile server (index/confined_pool.py); then once more, alone,
    those stopped at the time limit."""
    from dslake_index.collect import collect
    from dslake_index.confined_pool import folders_outside, take_server
    from dslake_index.known_hashes import known_hashes
    from dslake_index.timeouts import time_limit, timed_out

    outside = folders_outside(lake, (f.path for f in todo))  # links followed out of the lake (--follow-symlinks)

    def run(files: list[FileStat], workers: int, pressed: Any) -> None:
        server = take_server(lake, [db_path.parent], options.confine, outside)
        try:
            server.start(min(workers, len(files)), options.memory_mb, asdict(options.limits),
                         options.hash_algorithm, known_hashes(conn, files, PROFILER_VERSION))
            if server.note and server.note not in summary.notes:
                summary.notes.append(server.note)
            jobs_ = ((f, lambda f=f: server.schedule({"task": "file", "path": str(lake / f.path)},
                                                     time_limit(options.timeout_s, f.size))) for f in files)
            collect(conn, jobs_, _window(workers), new_paths, options, summary, progress, pressed)
        except BaseException:
            server.stop()  # Ctrl-C or a write that failed (a full disk): nothing queued is waited for
            if pressed.is_set():  # a server that broke because Ctrl-C ended it is Ctrl-C, too
                raise KeyboardInterrupt from None
            raise
        server.close_soon()  # it exits while the entries are rendered; run_index joins it before returning

    with ctrl_c_deferred() as pressed:
        run(todo, jobs, pressed)
        if len(todo) > 1:
            again = set(timed_out(conn, [f.path for f in todo]))
            if again:
                counted = (summary.added, summary.changed)  # each file was counted once already
                run([f for f in todo if f.path in again], 1, pressed)
                summary.added, summary.changed = counted


def _retry_alone(conn: sqlite3.Connection, db_path: Path, lake: Path | Any, todo: list[FileStat], new_paths: set[str],
                 options: IndexOptions, summary: IndexSummary, progress: Progress, pressed: Any) -> None:
    """Profile again, one at a time in a pool of one, the files this pass stopped at the time limit: a big file
    that shared the disk and the cores with its siblings often fits the limit alone (index/timeouts.py)."""
    from dslake_index.collect import collect
    from dslake_index.profile_task import limit_memory
    from dslake_index.timeouts import timed_out
    from pebble import ProcessPool

    again = set(timed_out(conn, [f.path for f in todo]))
    if not again:
        return
    retry = [f for f in todo if f.path in again]
    counted = (summary.added, summary.changed)  # each file was counted once already
    with ProcessPool(max_workers=1, initializer=limit_memory, initargs=(options.memory_mb,),
                     context=_pool_context()) as pool:
        try:
            collect(conn, _jobs(pool, lake, retry, db_path, options), _window(1), new_paths, options, summary,
                    progress, pressed)
        except BaseException:
            pool.stop()
            raise
    summary.added, summary.changed = counted


def _window(workers: int) -> int:
    """How many files are handed to the pool ahead of the results recorded: enough that no worker waits."""
    from dslake_index.collect import AHEAD_PER_WORKER

    return AHEAD_PER_WORKER * workers


def _jobs(pool: Any, lake: Path | Any, todo: list[FileStat], db_path: Path,
          options: IndexOptions) -> Iterator[tuple[FileStat, Callable[[], Any]]]:
    """Yield each file with the call that hands it to the pool (collect() makes it when a place is free)."""
    from dslake_index.timeouts import time_limit

    for f, (task, args) in zip(todo, _tasks(lake, todo), strict=True):
        yield f, lambda task=task, args=args, size=f.size: pool.schedule(
            task, args=(*args, str(db_path), options.limits, options.hash_algorithm),
            timeout=time_limit(options.timeout_s, size))


def _tasks(lake: Path | Any, todo: list[FileStat]) -> Iterator[tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]]:
    """Yield the profiler task of each file and its first arguments: a local path, or an object to download."""
    if isinstance(lake, Path):
        from dslake_index.profile_task import profile_file_task

        return ((profile_file_task, (str(lake / f.path),)) for f in todo)
    from dslake_index.objectstore import object_tasks

    return object_tasks(lake, todo)


def _rebuild_dirty_entries(
    conn: sqlite3.Connection, options: IndexOptions, progress: Progress, force: bool = False
) -> None:
    folders = [row[0] for row in conn.execute("SELECT folder FROM dirty_folders ORDER BY folder")]
    if folders:
        progress("entries", {"folders": len(folders)})
    for key, (unit, dirty) in _units(conn, folders).items():
        with transaction(conn):
            _rebuild_folder(conn, key, sorted(unit), options, force)
            conn.executemany("DELETE FROM dirty_folders WHERE folder = ?", [(f,) for f in dirty])


def _units(conn: sqlite3.Connection, dirty: list[str]) -> dict[str, tuple[set[str], list[str]]]:
    """Return, per folder pattern, the sibling folders rebuilt together (families form across them) and which of
    them were dirty. A folder without digits or dates in its path is a unit of its own."""
    if not dirty:
        return {}
    from dslake_index.datasets import dataset_root, folders_under, table_roots
    from dslake_index.families import folder_pattern

    tables = table_roots(conn) if dirty else {}
    roots = {folder: root for folder in dirty if (root := dataset_root(folder, tables)) is not None}
    # A dataset's or table's folders are rebuilt together, all of them: its one entry sums up every file.
    keys = {folder: roots.get(folder) or folder_pattern(folder) for folder in dirty}
    patterned = {key for folder, key in keys.items() if key != folder and folder not in roots}
    siblings: dict[str, set[str]] = defaultdict(set)
    if patterned:
        if len(patterned) > 32:  # a full index: one pass over every folder beats a query per pattern
            rows = conn.execute("SELECT DISTINCT folder FROM files")
        else:
            # GLOB walks the folder index from the pattern's fixed start; the exact pattern is checked below.
            rows = (row for key in patterned for row in conn.execute(
                "SELECT DISTINCT folder FROM files WHERE folder GLOB ?", (_glob_escape(key),)))
        for (folder,) in rows:
            key = folder_pattern(folder)
            if key in patterned and (not roots or dataset_root(folder, tables) is None):
                siblings[key].add(folder)
    for root in set(roots.values()):
        siblings[root] |= folders_under(conn, root)
    units: dict[str, tuple[set[str], list[str]]] = {}
    for folder in dirty:
        unit, listed = units.setdefault(keys[folder], ({folder}, []))
        unit.update(siblings.get(keys[folder], ()))
        listed.append(folder)
    return units


def _subtree(key: str, folders: list[str]) -> tuple[str, str]:
    """Return the range of folders below a dataset's root (where an older catalog kept its files' families), or
    an empty range for an ordinary unit."""
    if key and key in folders and any(f.startswith(key + "/") for f in folders):
        return key + "/", key + "0"
    return "", ""


def _glob_escape(pattern: str) -> str:
    # Only '*' stays a wildcard; '[' and '?' in folder names are literal.
    return "".join(f"[{c}]" if c in "[]?" else c for c in pattern)


def _member(row: sqlite3.Row) -> Member:
    """Build a family candidate from a file's row: its grouping signature and the facts its family sums up."""
    from dslake_index.families import Member, layout_signature

    path = row["path"]
    structure = json.loads(row["structure"]) if row["structure"] else None
    tables = [(t[0], bool(t[1]), t[2]) for t in json.loads(row["tables"] or "[]")]
    return Member(path, path.rpartition("/")[2], layout_signature(row["signature"], structure), row["size"], tables)


_MEMBER_QUERY = (
    "SELECT f.path, f.hash, f.size, p.signature, "
    "(SELECT json_group_array(json_array(json_extract(t.value, '$.n_rows'), json_extract(t.value, '$.n_rows_exact'), "
    "json_extract(t.value, '$.read_hint'))) FROM json_each(p.profile, '$.tables') t) AS tables, "
    # the layout of files without columns (an XML header's fields, a CDF's variables) is their schema
    "CASE WHEN instr(p.signature, char(31)) = 0 THEN json_extract(p.profile, '$.structure') END AS structure "
    "FROM files f JOIN profiles p ON p.hash = f.hash WHERE f.folder IN ({marks}) AND f.status = 'ok'"
)


def _with_layout(row: EntryRow, layout: tuple[str, dict] | None) -> EntryRow:
    if layout is None:
        return row
    from dslake_index.layouts import with_layout

    description, card = with_layout(row.description, row.card, *layout)
    return dataclasses.replace(row, description=description, card=card)


def _rebuild_folder(conn: sqlite3.Connection, key: str, folders: list[str], options: IndexOptions,
                    force: bool = False) -> None:
    """Rebuild the entries of sibling folders (one folder pattern): families may span them."""
    # The rendering code, imported where entries are written: a no-change index rebuilds none and never loads it.
    from dslake_index.entries import family_entry, file_entry, with_relations
    from dslake_index.families import file_entry_id, group_files
    from dslake_index.family_stats import member_facts
    from dslake_index.layouts import layout_docs, linked_layout
    from dslake_index.stored_json import loads

    marks = ",".join("?" * len(folders))
    with phase("entries: read members"):
        rows = conn.execute(_MEMBER_QUERY.format(marks=marks), folders).fetchall()
    hashes = {row["path"]: row["hash"] for row in rows}
    analyses = {
        row["hash"]: (row["text"], row["source"])
        for row in conn.execute("SELECT hash, text, source FROM analyses WHERE text != '' AND hash IN "
                                f"(SELECT hash FROM files WHERE folder IN ({marks}) AND status = 'ok')", folders)
    }
    members = [_member(row) for row in rows]
    existing = {
        row["id"]: row
        for row in conn.execute(f"SELECT id, kind, content_hash, card_hash FROM entries WHERE folder IN ({marks}, ?)"
                                " OR (folder >= ? AND folder < ?)", (*folders, key, *_subtree(key, folders)))
    }
    wanted: dict[str, EntryRow | None] = {}
    profiles: dict[str, Profile] = {}

    def load(content_hash: str) -> Profile:
        if content_hash not in profiles:
            text = conn.execute("SELECT profile FROM profiles WHERE hash = ?", (content_hash,)).fetchone()[0]
            profiles[content_hash] = Profile.from_dict(loads(text))
        return profiles[content_hash]

    def related(group: Group) -> Profile:
        return load(hashes[group.members[0].path])

    from dslake_index.dataset_build import build_datasets, parts_entry, streamed

    docs = layout_docs(rows)  # format documents that name the columns of header-less tables beside them
    with phase("entries: datasets and tables"):
        datasets, members = build_datasets(conn, key, folders, members, hashes, load, options)
    wanted.update({row.id: row for row, _ in datasets})
    from dslake_index.timeouts import timed_out_entries

    wanted.update({row.id: row for row in timed_out_entries(conn, folders, options.script_memory_mb)})
    with phase("entries: family grouping"):
        groups = group_files(members, options.min_members)
    with phase("entries: folder totals"):
        yearly, folder_notes = _folder_totals(conn, folders, groups, hashes, load)
    for group in groups:
        layout = linked_layout(group.members, docs)
        parts = parts_entry(group, rows, load, options)
        if parts is not None:
            datasets.append(parts)
            wanted[parts[0].id] = parts[0]
        elif group.is_family:
            first = group.members[0].path
            with phase("entries: descriptions and cards"):
                facts = member_facts(conn, [(m.path, hashes[m.path]) for m in group.members])
                row = family_entry(group, load(hashes[first]), options.max_members_listed,
                                   analyses.get(hashes[first]), related, facts, _id_periods(conn, group, facts))
            wanted[row.id] = _with_layout(row, layout)
        else:
            path = group.members[0].path
            folder = group.members[0].folder
            entry_id = file_entry_id(path)
            old = existing.get(entry_id)
            linked = bool(group.sidecars) or group.documents is not None or layout is not None
            # An analysed or linked file is always rebuilt: its analysis or its partner may be newer than its row;
            # so is every file when descriptions and cards are written differently (force: a new render version).
            # A file with yearly sums is rebuilt too: a sibling's change may add or take away its folder note.
            if (not force and old is not None and old["kind"] == "file" and old["content_hash"] == hashes[path]
                    and hashes[path] not in analyses and not linked and path not in yearly):
                wanted[entry_id] = None  # unchanged single file: keep its row as it is
                conn.execute("UPDATE files SET entry_id = ? WHERE path = ?", (entry_id, path))
                continue
            with phase("entries: descriptions and cards"):
                profile = load(hashes[path])
                if path in folder_notes:
                    profile = dataclasses.replace(profile, notes=profile.notes + folder_notes[path])
                row = streamed(file_entry(path, folder, hashes[path], profile,
                                          analyses.get(hashes[path])), group.members[0], options.script_memory_mb)
                wanted[entry_id] = _with_layout(with_relations(row, group, related) if linked else row, layout)
    with phase("entries: manifest rows and full text"):
        _write_entries(conn, existing, wanted, [record for _, record in datasets])


def _id_periods(conn: sqlite3.Connection, group: Group, facts: list[Any]) -> list[Any]:
    """Return the other families under this family's parent folder whose member names hold its ids ('wu001'), with
    each shared id's two time coverages (id_periods.py). Their profiles are read from the manifest, not the files."""
    from dslake_index.families import folder_pattern, name_pattern
    from dslake_index.family_stats import member_facts
    from dslake_index.id_periods import MIN_SHARED, IdPeriods, id_of, literal_glob, member_ids, prefix_of
    from dslake_index.name_dates import content_span

    ids = member_ids([m.path.rpartition("/")[2] for m in group.members])
    if not ids:
        return []
    own = {m.path for m in group.members}
    parent = group.members[0].folder.rpartition("/")[0]
    prefixes = prefix_of(ids)
    candidates: dict[str, dict[str, tuple[str, str]]] = {}
    folders: dict[str, set[str]] = {}
    rows = conn.execute("SELECT path, hash, folder FROM files WHERE status = 'ok' AND (folder = ? OR folder GLOB ?)",
                        (parent, _glob_escape(parent) + "/*" if parent else "*"))
    for path, content_hash, folder in rows:
        if path in own:
            continue
        name = path.rpartition("/")[2]
        token = id_of(name, prefixes)
        if token in ids:
            glob = f"{folder_pattern(folder)}/{name_pattern(name)}".lstrip("/")
            candidates.setdefault(glob, {})[token] = (path, content_hash)
            folders.setdefault(glob, set()).add(folder)
    spans = {m.path.rpartition("/")[2]: content_span(m.tables, m.time_span, m.sampled) for m in facts}
    found = []
    for glob, by_id in sorted(candidates.items()):
        if len(by_id) < max(MIN_SHARED, min(len(ids), len(by_id)) // 2):
            continue
        theirs = member_facts(conn, list(by_id.values()))
        pairs = {}
        for token, fact in zip(by_id, theirs, strict=True):
            mine = spans.get(ids[token])
            other = content_span(fact.tables, fact.time_span, fact.sampled)
            if mine is not None and other is not None:
                pairs[token] = (mine, other)
        where = glob.rpartition("/")[0] if len(folders[glob]) > 1 else next(iter(folders[glob]))
        name = literal_glob([path.rpartition("/")[2] for path, _ in by_id.values()])
        found.append(IdPeriods(f"{where}/{name}".lstrip("/"), pairs))
    return found


def _folder_totals(conn: sqlite3.Connection, folders: list[str], groups: list[Group], hashes: dict[str, str],
                   load: Callable[[str], Profile]) -> tuple[set[str], dict[str, list[str]]]:
    """Return the single files of these folders whose profiles keep yearly sums, and the lines on yearly sums
    that disagree between them, per path (folder_totals.py). Only profiles that hold yearly sums are decoded."""
    from dslake_index.folder_totals import disagreements, year_tables

    singles = {g.members[0].path for g in groups if not g.is_family}
    marks = ",".join("?" * len(folders))
    yearly = {row[0] for row in conn.execute(
        f"SELECT f.path FROM files f JOIN profiles p ON p.hash = f.hash WHERE f.folder IN ({marks}) "
        "AND f.status = 'ok' AND instr(p.profile, '\"year_sums\": {') > 0", folders) if row[0] in singles}
    if len(yearly) < 2:
        return yearly, {}
    by_folder: dict[str, list[Any]] = {}
    for path in sorted(yearly):
        by_folder.setdefault(path.rpartition("/")[0], []).extend(year_tables(path, load(hashes[path]).tables))
    notes: dict[str, list[str]] = {}
    for found in by_folder.values():
        notes.update(disagreements(found))
    return yearly, notes


def _write_entries(conn: sqlite3.Connection, existing: dict[str, Any], wanted: dict[str, EntryRow | None],
                   dataset_records: list[Any]) -> None:
    from dslake_index.dataset_build import write_records

    stale = [entry_id for entry_id in existing if entry_id not in wanted]
    if stale:
        conn.executemany("DELETE FROM entries WHERE id = ?", [(i,) for i in stale])
        fulltext.delete_rows(conn, stale)
    write_records(conn, dataset_records, stale)
    changed = [row for row in wanted.values() if row is not None]
    now = time.time()
    for row in changed:
        conn.execute(
            "INSERT OR REPLACE INTO entries (id, kind, folder, path, format, content_hash, member_count, description, "
            "card, card_hash, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.kind, row.folder, row.path, row.format, row.content_hash, row.member_count,
             row.description, row.card, row.card_hash, now),
        )
        conn.executemany("UPDATE files SET entry_id = ? WHERE path = ?", [(row.id, m) for m in row.members])
    fulltext.replace_rows(conn, [(row.id, row.card) for row in changed])
