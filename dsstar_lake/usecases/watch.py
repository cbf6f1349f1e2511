"""`dslake index --watch`: re-index when files change, debounced."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console


def prepare_watch(lake: Any) -> None:
    """Start the profilers' server, load the embedding model and the vector index now: changes are rare and
    small, and should land fast.

    Call it before reporting the first index, so that whoever waits for that report finds the watcher ready.
    """
    from dslake_index.indexer import start_profiler_server

    start_profiler_server()
    vector = lake.index_embedder().encode(["warm up"])[0]
    lake.vector_store().query(vector, 1)  # loads the collection's index, which Chroma keeps for this process


def watch_lake(lake: Any, failures: Iterable[tuple[str, str]], report: Callable[[Any, list[tuple[str, str]]], None],
               console: Console) -> None:
    """Block, re-indexing the lake after each burst of changes, until Ctrl-C.

    failures: (path, error) of the files that failed when the watch began (the first index reported them). Each
    pass is reported with its summary and the failures to list (new_failures): a file that keeps failing is listed
    when it fails first and when it is changed, not again at every change elsewhere in the lake.
    """
    from watchfiles import watch

    catalog = os.path.join(os.path.realpath(lake.catalog_dir), "")
    debounce = lake.settings.index.watch_debounce_ms
    console.print(f"watching {lake.root} (Ctrl-C to stop)")

    def outside_catalog(change: Any, path: str) -> bool:
        # By its real path: a link in the lake may lead into the catalog (`history -> .dslake/runs`).
        return not os.path.join(os.path.realpath(path), "").startswith(catalog)

    known = dict(failures)
    try:
        for changes in watch(lake.root, watch_filter=outside_catalog, debounce=debounce, step=200):
            touched = changed_paths(Path(lake.root), {path for _, path in changes})
            summary = lake.index(paths=touched)
            fresh, known = new_failures(known, summary.failures, touched or [])
            report(summary, fresh)
    except KeyboardInterrupt:
        console.print("stopped watching")


def changed_paths(root: Path, paths: Iterable[str]) -> list[str] | None:
    """Return the lake-relative paths behind a burst of events, or None when the whole lake must be scanned."""
    from dslake_index.scan import lake_relative, rescan_scope

    base = root.resolve()
    rels = [rel for rel in (lake_relative(base, path) for path in paths) if rel is not None]  # None: outside
    return rescan_scope(rels)


def new_failures(known: dict[str, str], failures: list[tuple[str, str]],
                 touched: list[str]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Return the failures to list after a pass, and what is known after it.

    Listed: a file that did not fail before (a fixed file that fails again included), one whose error changed, and
    one the pass looked at because it changed (touched: lake-relative files and folders), which still fails.
    """
    def in_touched(path: str) -> bool:
        return any(path == rel or path.startswith(rel.rstrip("/") + "/") for rel in touched)

    fresh = [(path, error) for path, error in failures
             if path not in known or known[path] != error or in_touched(path)]
    return fresh, dict(failures)
