"""The no-change check: whether a whole-lake index of a local lake would change nothing, answered with the
standard library and sqlite3 only, before the pipeline's code, the settings or the vector store are loaded.

A `dslake index` that finds nothing changed is all start-up. The pipeline (indexer.run_index) also redoes work
that code, files and settings decide, not the lake: a new render version rebuilds every entry, a new load-hint
grammar or profiler version re-profiles, a new full-text rule refills the full text, another embedding model
re-embeds, a vector store changed behind the manifest's back is repaired. Rather than import all that to ask,
every index that finishes records a *settled* stamp (record_settled): the meta values it left; a signature
(names, sizes, modification times) of the index package's source files and of the embedding model's files; the
stat of the vector store's database; and, for an index run with the settings a plain `dslake index` resolves,
those settings' inputs (dsstar_lake/base/settings_inputs.py) and the values check() needs. answer_if_unchanged()
answers only while all of that holds, nothing is left to render or embed, and the lake's files are the
manifest's; anything else (None) is the pipeline's to do, and it does all of it as if nothing had run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dslake_index import catalog as catalog_db
from dslake_index.catalog import get_meta, set_meta, transaction
from dslake_index.plan import hand_over_plan, plan_changes
from dslake_index.scan import FileStat, ScanResult, hand_over, scan_lake

SETTLED_KEY = "settled"
# Meta values code decides, as the pipeline leaves them: the rendering code's version (render_stamp.py), the full
# text's rule (fulltext.VERSION), the load-hint grammar it checked (hint_sweep.META_KEY), the model its vectors come
# from (sync.py) and the vector store's stamp (vector_check.STAMP_KEY). While the code's files and the store's
# database are the same, equal values mean the pipeline would find nothing to redo.
SETTLED_META = ("render_version", "fulltext_version", "load_hint_form", "embed_model", "vector_stamp")
STORE_FILES = ("chroma.sqlite3", "chroma.sqlite3-wal")  # the embedded store's database (vector_check reads it)
_PACKAGE = Path(__file__).resolve().parent

# What sync_vectors would do: entries without an up-to-date vector, vectors not copied into the manifest (the same
# conditions as its queries). The store's lag (index/vector_lag.py: vectors no entry owns, vectors the manifest
# holds ahead of the store) is no index's work: the store's next reader writes it.
_VECTOR_WORK = """
SELECT EXISTS (SELECT 1 FROM entries e LEFT JOIN vectors v ON v.entry_id = e.id
               WHERE v.entry_id IS NULL OR v.card_hash != e.card_hash OR v.state NOT IN ('ok', 'unstored'))
    OR EXISTS (SELECT 1 FROM vectors v JOIN entries e ON e.id = v.entry_id AND e.card_hash = v.card_hash
               WHERE v.state = 'ok' AND v.embedding IS NULL)
"""


class NoChange:
    """What a no-change index reports: the fields of IndexSummary it prints (the others are zero)."""

    added = changed = removed = profiled = reused = embedded = 0

    def __init__(self, unchanged: int, entries: int, families: int, failures: list[tuple[str, str]],
                 skipped_files: list[tuple[str, str]], seconds: float) -> None:
        self.unchanged, self.entries, self.families = unchanged, entries, families
        self.failures, self.failed = failures, len(failures)
        self.skipped_files, self.seconds = skipped_files, seconds
        self.phases: dict[str, dict[str, float]] = {}  # as IndexSummary's: the scan, and the check as the plan

    def to_dict(self) -> dict[str, object]:
        """Return the report as IndexSummary.to_dict() returns a no-change run's: the same keys, in its order."""
        return {"added": 0, "changed": 0, "removed": 0, "unchanged": self.unchanged, "failed": self.failed,
                "profiled": 0, "reused": 0, "entries": self.entries, "families": self.families, "embedded": 0,
                "skipped": len(self.skipped_files), "skipped_files": [list(row) for row in self.skipped_files],
                "seconds": self.seconds, "failures": [list(row) for row in self.failures], "analysis": None,
                "summaries": None, "vectors_repaired": 0, "notes": [], "cluster": None, "phases": self.phases}


def _timed(wall: float, cpu: float, n: int) -> dict[str, float]:
    """Return one phase's figures as index/timings.py writes them (that module's dataclasses are not loaded here)."""
    return {"wall": round(time.perf_counter() - wall, 3), "cpu": round(time.process_time() - cpu, 3), "n": n}


def files_signature(folders: Sequence[str]) -> str:
    """Return what identifies every file under the folders: relative names, sizes and modification times (stat
    only: ~100 files cost a millisecond). Kept whole, not hashed: a few kilobytes, and no hash module to load.
    Compiled caches are left out: running the code writes them."""
    parts = []
    for folder in folders:
        parts.append(f"\1{folder}")
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                parts.append(f"{os.path.relpath(path, folder)}\0{st.st_size}\0{st.st_mtime_ns}")
    return "\n".join(parts)


def store_signature(chroma_dir: Path) -> str:
    """Return the stat of the embedded store's database files (a write to the store changes it)."""
    parts = []
    for name in STORE_FILES:
        try:
            st = os.stat(chroma_dir / name)
        except OSError:
            parts.append(f"{name}\0missing")
            continue
        parts.append(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}")
    return "\n".join(parts)


def record_settled(conn: sqlite3.Connection, model_folder: str | None, profiler_version: str, chroma_dir: Path,
                   settings: dict[str, object] | None) -> None:
    """Record, after an index finished, what answer_if_unchanged needs to trust the code, the model, the store and
    (when given: the inputs, lake, catalog, dirname and follow_symlinks of a plain index) the settings."""
    folders = [str(_PACKAGE)] + ([model_folder] if model_folder else [])
    value = json.dumps({"folders": folders, "signature": files_signature(folders),
                        "profiler_version": profiler_version, "store": store_signature(chroma_dir),
                        "meta": {key: get_meta(conn, key) for key in SETTLED_META}, "settings": settings})
    with transaction(conn):
        set_meta(conn, SETTLED_KEY, value)


@contextmanager
def follow_store(conn: sqlite3.Connection, chroma_dir: Path) -> Iterator[None]:
    """Around a write to the store that changes nothing an index decides (index/vector_lag.py, a reader writing
    the store's lag): a settled stamp that held before still holds after, with the store's new stat and stamp."""
    before = store_signature(chroma_dir), get_meta(conn, "vector_stamp")
    yield
    stamp = json.loads(get_meta(conn, SETTLED_KEY) or "null")
    if not isinstance(stamp, dict) or (stamp.get("store"), stamp["meta"].get("vector_stamp")) != before:
        return  # none, or one that no longer held: the next index hands over anyway
    stamp["store"] = store_signature(chroma_dir)
    stamp["meta"]["vector_stamp"] = get_meta(conn, "vector_stamp")
    with transaction(conn):
        set_meta(conn, SETTLED_KEY, json.dumps(stamp))


def answer_if_unchanged(root: Path, catalog_dir: Path, chroma_dir: Path, inputs: str, named: bool,
                        accept: Callable[[NoChange], bool]) -> NoChange | None:
    """Return what a plain whole-lake index would report when it would change nothing, having written what it
    writes (the time of the index); else None, having written nothing (the lake's scan, when made, is handed to
    the index that follows, and when files are to be profiled the profilers' server is started for it).

    root, catalog_dir: resolved; named: the catalog was given (--catalog), else it is root/.dslake, which holds
    only if the settings' dirname says so; inputs: settings_inputs() of its config files, now; accept may still
    refuse a report (a terminal that would colour its failures).
    """
    db_path = catalog_dir / catalog_db.MANIFEST_NAME
    if not (os.access(db_path, os.R_OK | os.W_OK) and os.access(catalog_dir, os.W_OK)):
        return None  # none yet, or read-only: the pipeline says so
    if catalog_db.newer_schema(db_path):
        return None  # a newer dslake wrote it: not even the lock file is touched, the pipeline refuses it
    try:
        with catalog_db.writer_lock(catalog_dir):
            conn = catalog_db.connect(db_path)
            try:
                return _answer(conn, root, catalog_dir, chroma_dir, inputs, named, accept)
            finally:
                conn.close()
    except (catalog_db.CatalogLockHeld, sqlite3.Error, OSError):
        return None  # the pipeline says what is wrong (a lock held, a damaged manifest, a full disk)


def _answer(conn: sqlite3.Connection, root: Path, catalog_dir: Path, chroma_dir: Path, inputs: str, named: bool,
            accept: Callable[[NoChange], bool]) -> NoChange | None:
    if catalog_db.pending_migrations(conn):
        return None
    try:
        stamp = json.loads(get_meta(conn, SETTLED_KEY) or "null")
        folders, recorded = stamp["folders"], stamp["settings"]  # the values of a plain index's settings
        follow_symlinks = recorded["follow_symlinks"] is True
        if (recorded["inputs"] != inputs or recorded["root"] != str(root) or recorded["catalog"] != str(catalog_dir)
                or (not named and str(catalog_dir) != os.path.join(root, recorded["dirname"]))):
            return None  # other settings, or the catalog another one
    except (TypeError, ValueError, KeyError):
        return None  # no stamp, or one without settings: the last index had flags, a cluster, a server store
    if (get_meta(conn, "lake_root") != str(root) or stamp["store"] != store_signature(chroma_dir)
            or any(get_meta(conn, key) != value for key, value in stamp["meta"].items())
            or folders[:1] != [str(_PACKAGE)] or files_signature(folders) != stamp["signature"]):
        return None
    wall, cpu = time.perf_counter(), time.process_time()
    scan = scan_lake(root, catalog_dir, follow_symlinks)
    scanned = _timed(wall, cpu, len(scan.files))
    wall, cpu = time.perf_counter(), time.process_time()
    report = check(conn, scan, str(stamp["profiler_version"]), on_work=lambda files: _start_profilers(root, catalog_dir, files))
    if report is None or not accept(report):
        hand_over(scan, root, catalog_dir, follow_symlinks)
        return None
    report.phases = {"scan": scanned, "plan": _timed(wall, cpu, 1)}
    with transaction(conn):  # what a no-change run of the pipeline writes that differs from what it read
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_index_at', ?)", (str(time.time()),))
    return report


def _start_profilers(root: Path, catalog_dir: Path, files: list[FileStat]) -> None:
    """Start the profilers' server for the index the hand-over leads to: it imports what these files' profilers
    need while the full CLI loads (a changed CSV: pandas, not openpyxl nor pyarrow.parquet). This process ends
    with that index, so what the server does not preload is only imported by a profiler that needs it."""
    from dslake_index.confined_pool import start_server_early

    start_server_early(root, [catalog_dir], paths=[f.path for f in files])


def check(conn: sqlite3.Connection, scan: ScanResult, profiler_version: str,
          on_work: Callable[[list[FileStat]], None] | None = None) -> NoChange | None:
    """Return what a whole-lake index would report when the manifest has nothing left to do and the scan matches
    its files, else None; on_work is then given the files that index will profile, when the plan has some."""
    started = time.perf_counter()
    if scan.scope is not None:
        return None
    if conn.execute("SELECT EXISTS (SELECT 1 FROM dirty_folders) OR EXISTS "
                    "(SELECT 1 FROM summaries WHERE text != '')").fetchone()[0]:
        return None  # entries to render, or stored summaries to apply again (wordless.apply_summaries)
    if conn.execute(_VECTOR_WORK).fetchone()[0]:
        return None
    new, changed, removed, unchanged = plan = plan_changes(conn, scan, profiler_version)
    if (new or changed) and on_work is not None:
        on_work(new + changed)
    if new or changed or removed:
        hand_over_plan(conn, scan, profiler_version, plan)  # the index that follows need not plan again
        return None
    entries, families = conn.execute("SELECT count(*), coalesce(sum(kind = 'family'), 0) FROM entries").fetchone()
    failures = [(row[0], row[1]) for row in conn.execute(
        "SELECT path, error FROM files WHERE status != 'ok' ORDER BY path")]
    return NoChange(unchanged, entries, families, failures, list(scan.skipped),
                    round(time.perf_counter() - started, 3))
