"""`dslake index --watch`: re-index when files change, debounced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console


def watch_lake(lake: Any, report: Callable[[Any], None], console: Console) -> None:
    """Block, re-indexing the lake after each burst of changes, until Ctrl-C."""
    from watchfiles import watch

    catalog = str(lake.catalog_dir)
    debounce = int(lake.settings["index.watch_debounce_ms"])
    console.print(f"watching {lake.root} (Ctrl-C to stop)")

    def outside_catalog(change: Any, path: str) -> bool:
        return not path.startswith(catalog)

    try:
        for _changes in watch(lake.root, watch_filter=outside_catalog, debounce=debounce, step=200):
            report(lake.index())
    except KeyboardInterrupt:
        console.print("stopped watching")
