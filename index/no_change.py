"""The no-change check: whether a whole-lake index of a local lake would change nothing, answered with the
standard library and sqlite3 only.

A `dslake index` that finds nothing changed is all start-up: the pipeline's code, click and rich cost more than
the work. The pipeline (indexer.run_index) also does things that code and files decide, not the lake: a new render
version rebuilds every entry, a new load-hint grammar or profiler version re-profiles, a new full-text rule refills
the full text, another embedding model re-embeds. Rather than import that code to ask, every index that finishes
records a *settled* stamp (record_settled): the meta values it left and a signature (names, sizes, modification
times) of the index package's source files and of the embedding model's files. check() answers only while that
stamp holds, nothing is left to render or embed, and the lake's files are the manifest's; anything else (None) is
the pipeline's to do, and it does all of it as if check() had never run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dslake_index.catalog import get_meta, set_meta, transaction
from dslake_index.plan import plan_changes
from dslake_index.scan import ScanResult
from dslake_index.vector_check import STAMP_KEY, Stamp

SETTLED_KEY = "settled"
# Meta values code decides, as the pipeline leaves them: the rendering code's version (render_stamp.py), the full
# text's rule (fulltext.VERSION), the load-hint grammar it checked (hint_sweep.META_KEY), the model its vectors come
# from (sync.py). While the code's files are the same, equal values mean the pipeline would find nothing to redo.
SETTLED_META = ("render_version", "fulltext_version", "load_hint_form", "embed_model")
_PACKAGE = Path(__file__).resolve().parent

# What sync_vectors would do: vectors no entry owns, entries without an up-to-date vector, vectors not copied into
# the manifest (the same conditions as its three queries).
_VECTOR_WORK = """
SELECT EXISTS (SELECT 1 FROM vectors v LEFT JOIN entries e ON e.id = v.entry_id WHERE e.id IS NULL)
    OR EXISTS (SELECT 1 FROM entries e LEFT JOIN vectors v ON v.entry_id = e.id
               WHERE v.entry_id IS NULL OR v.card_hash != e.card_hash OR v.state != 'ok')
    OR EXISTS (SELECT 1 FROM vectors v JOIN entries e ON e.id = v.entry_id AND e.card_hash = v.card_hash
               WHERE v.state = 'ok' AND v.embedding IS NULL)
"""


@dataclass
class NoChange:
    """What a no-change index reports (the fields of IndexSummary it prints; the rest are zero)."""

    unchanged: int
    entries: int
    families: int
    failed: int
    failures: list[tuple[str, str]] = field(default_factory=list)
    skipped_files: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0


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


def record_settled(conn: sqlite3.Connection, model_folder: str | None, profiler_version: str) -> None:
    """Record, after an index finished, what check() needs to trust that code and model have not changed since."""
    folders = [str(_PACKAGE)] + ([model_folder] if model_folder else [])
    value = json.dumps({"folders": folders, "signature": files_signature(folders),
                        "profiler_version": profiler_version,
                        "meta": {key: get_meta(conn, key) for key in SETTLED_META}})
    with transaction(conn):
        set_meta(conn, SETTLED_KEY, value)


def settled(conn: sqlite3.Connection) -> str | None:
    """Return the profiler version of the last finished index while the code, the model and the meta values are
    those it recorded; else None."""
    try:
        stamp = json.loads(get_meta(conn, SETTLED_KEY) or "null")
        folders, signature, meta = stamp["folders"], stamp["signature"], stamp["meta"]
        version = str(stamp["profiler_version"])
    except (TypeError, ValueError, KeyError):
        return None
    if folders[:1] != [str(_PACKAGE)] or any(get_meta(conn, key) != value for key, value in meta.items()):
        return None
    return version if files_signature(folders) == signature else None


def check(conn: sqlite3.Connection, scan: ScanResult, stamp: Stamp) -> NoChange | None:
    """Return what a whole-lake index would report when it would change nothing, else None (nothing written).

    conn: the manifest, under the writer lock, its schema current; stamp: the embedded vector store's (local_stamp).
    """
    started = time.perf_counter()
    profiler_version = settled(conn) if scan.scope is None else None
    if profiler_version is None:
        return None
    if str(stamp) != get_meta(conn, STAMP_KEY):  # the store may have drifted: vector_check compares it
        return None
    if conn.execute("SELECT EXISTS (SELECT 1 FROM dirty_folders) OR EXISTS "
                    "(SELECT 1 FROM summaries WHERE text != '')").fetchone()[0]:
        return None  # entries to render, or stored summaries to apply again (wordless.apply_summaries)
    if conn.execute(_VECTOR_WORK).fetchone()[0]:
        return None
    new, changed, removed, unchanged = plan_changes(conn, scan, profiler_version)
    if new or changed or removed:
        return None
    entries, families = conn.execute("SELECT count(*), coalesce(sum(kind = 'family'), 0) FROM entries").fetchone()
    failures = [(row[0], row[1]) for row in conn.execute(
        "SELECT path, error FROM files WHERE status != 'ok' ORDER BY path")]
    return NoChange(unchanged=unchanged, entries=entries, families=families, failed=len(failures),
                    failures=failures, skipped_files=list(scan.skipped),
                    seconds=round(time.perf_counter() - started, 3))


def finish(conn: sqlite3.Connection, stamp: Stamp) -> None:
    """Write what a no-change index of the pipeline writes: the time of the index, the store's stamp again."""
    with transaction(conn):
        set_meta(conn, STAMP_KEY, str(stamp))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_index_at', ?)", (str(time.time()),))
