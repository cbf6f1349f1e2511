"""The entry page's data preview: a few rows of what `lake.load` gives, read in a bounded, confined worker.

A GET may come from any page of any origin (`<img src=http://127.0.0.1:8765/entries/big.csv>`), so what it
triggers is bounded and runs nothing from the catalog: the load lines are parsed into their safe form in the server
(loading.plan: a line of another form is refused with one line naming the entry), then a worker process reads at
most `serve.preview_rows` rows of each table, and files whose reader cannot stop after N rows (parquet, JSON,
HTML, arrays) only when they fit `serve.preview_bytes`. The worker has the profilers' bounds ([profile] timeout_s
and memory_mb): a file past them stops the preview, never the server. For a local lake it is a worker of the
index's confined profile server (index/confined_pool.py: bubblewrap, the lake read-only, no catalog, no home, no
network), which sends back each table's rows as Arrow IPC inside JSON; the HTML is made here, escaped, so a
parser gone wrong cannot put markup on the page nor run code in the server.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.load_hint import ROW_LIMITED

from dsstar_lake.base.errors import DslakeError

if TYPE_CHECKING:
    # Typing only: the front doors sit above the facade they serve (tests/test_layers.py).
    from dsstar_lake.lake import Lake

PREVIEW_TABLES = 3  # a workbook's first sheets, a family's first members
TEXT_CHARS = 4000  # characters of a non-table value (text, a dict, arrays) shown
HTML_COLUMNS = 30


class Previewer:
    """Runs previews in one worker process, started on first use and stopped by close()."""

    def __init__(self, rows: int, max_bytes: int, timeout_s: float, memory_mb: int, backend: str = "auto") -> None:
        self.rows, self.max_bytes = max(1, rows), max(1, max_bytes)
        self.timeout_s, self.memory_mb, self.backend = timeout_s, memory_mb, backend
        self._pool: Any = None
        self._confined: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any) -> Previewer:
        """Build one from [serve] preview_rows, preview_bytes, the [profile] time and memory bounds and where
        readers run ([sandbox] backend, as the index's profilers)."""
        return cls(settings.serve.preview_rows, settings.serve.preview_bytes, settings.profile.timeout_s,
                   settings.profile.memory_mb, settings.sandbox.backend)

    def preview(self, lake: Lake, path: str, sort: str | None = None, desc: bool = False, where: str | None = None,
                has: str | None = None) -> dict[str, Any]:
        """Return {"error": reason or None, "tables": [...]} for an entry: escaped HTML tables or short text.

        sort, desc, where and has arrange the rows read (never more than the preview's bound): sorted by the column
        sort, and only rows whose column `where` (any column when None) contains `has`, case aside."""
        from concurrent.futures import TimeoutError as FutureTimeout

        from pebble import ProcessExpired

        from dsstar_lake.usecases.load import plan

        try:
            family, files = plan(lake.catalog, path, limit=PREVIEW_TABLES)
        except DslakeError as exc:  # no load line, a refused one, a broken file, a catalog opened without its lake
            return {"error": exc.message, "tables": []}
        too_big = [f for f in files if any(h.reader not in ROW_LIMITED for _, h in f.hints)
                   and _size(f.path) > self.max_bytes]
        if too_big:
            f = too_big[0]
            return {"error": f"{f.rel} is {_size(f.path):,} bytes, over the preview's {self.max_bytes:,}: "
                             "load it with `lake.load` to see it", "tables": []}
        arrange = {"sort": sort, "desc": desc, "where": where, "has": has}
        root = lake.root
        if root is not None and all(Path(f.path).resolve().is_relative_to(root.resolve()) for f in files):
            return self._preview_confined(lake, (family, files, self.rows, self.max_bytes, arrange))
        # A lake in a bucket (its files in the blob cache) or a file that lies outside the lake: the plain worker.
        future = self._worker().schedule(preview_files, args=(family, files, self.rows, self.max_bytes, arrange),
                                         timeout=self.timeout_s)
        try:
            return future.result()
        except FutureTimeout:
            return {"error": f"the preview took over {self.timeout_s:g} s and was stopped", "tables": []}
        except ProcessExpired:
            return {"error": f"the preview's process died (over {self.memory_mb} MB of memory?)", "tables": []}
        except Exception as exc:  # a page shows one line about its preview, never a traceback
            return {"error": f"the preview failed: {type(exc).__name__}: {str(exc)[:200]}", "tables": []}

    def _preview_confined(self, lake: Lake, args: tuple[Any, ...]) -> dict[str, Any]:
        from dslake_index.confined_pool import ConfinedPool

        import dsstar_lake

        with self._lock:
            if self._confined is None or self._confined.process.poll() is not None:
                pool = ConfinedPool(lake.root, [lake.catalog_dir], self.backend, ["pandas", "pyarrow"],
                                    code=[Path(dsstar_lake.__file__).parent])
                try:
                    pool.start(1, self.memory_mb, {}, "blake2b", [])
                except DslakeError as exc:  # bwrap asked for and not working
                    pool.close()
                    return {"error": f"the preview's reader could not start: {exc.message}", "tables": []}
                self._confined = pool
            pool = self._confined
        try:
            answer = pool.call("dsstar_lake.web.preview:preview_data", args, self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - the server ended: a page shows one line, the next GET starts one
            return {"error": f"the preview failed: {type(exc).__name__}: {str(exc)[:200]}", "tables": []}
        if "timeout" in answer:
            return {"error": f"the preview took over {self.timeout_s:g} s and was stopped", "tables": []}
        if "value" not in answer:
            return {"error": f"the preview's process died (over {self.memory_mb} MB of memory?)", "tables": []}
        return from_data(answer["value"])

    def _worker(self) -> Any:
        from dslake_index.worker_context import worker_context
        from pebble import ProcessPool

        with self._lock:
            if self._pool is None or not self._pool.active:
                ctx = worker_context(["pandas", "dsstar_lake.web.preview"])
                self._pool = ProcessPool(max_workers=1, initializer=_child_init, initargs=(self.memory_mb,),
                                         context=ctx)
            return self._pool

    def close(self) -> None:
        """Stop the worker process, if one was started."""
        with self._lock:
            if self._pool is not None:
                self._pool.stop()
                self._pool.join()
                self._pool = None
            if self._confined is not None:
                self._confined.stop()
                self._confined = None


def _size(path: Any) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _child_init(memory_mb: int) -> None:
    """A preview process: killed when the server goes, its address space capped like a profiler's."""
    from dslake_index.profile_task import limit_memory

    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    limit_memory(memory_mb)


def preview_files(family: bool, files: list[Any], rows: int, max_chars: int,
                  arrange: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run in the worker: read the planned files with at most `rows` rows each, sort and filter those rows as
    `arrange` asks, and return small, escaped tables."""
    return _read_tables(family, files, rows, max_chars, arrange, _table)


def preview_data(family: bool, files: list[Any], rows: int, max_chars: int,
                 arrange: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run in a confined worker: preview_files with each table's rows as Arrow IPC (base64) in place of its HTML,
    which from_data makes on the server's side."""
    return _read_tables(family, files, rows, max_chars, arrange, _table_data)


def _read_tables(family: bool, files: list[Any], rows: int, max_chars: int, arrange: dict[str, Any] | None,
                 make: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """Read the planned files (at most `rows` rows each) and make each of the first tables with make(name, value,
    rows, arrange): a workbook's sheets are tables of their own (the first two)."""
    from dsstar_lake.usecases.load import run_plan

    try:
        loaded = run_plan(family, files, nrows=rows, max_chars=max_chars)
    except DslakeError as exc:
        return {"error": exc.message, "tables": []}
    items = loaded.items() if isinstance(loaded, dict) else [("", loaded)]
    tables = []
    for name, value in list(items)[:PREVIEW_TABLES]:
        if isinstance(value, dict) and value and all(hasattr(v, "to_html") for v in value.values()):
            tables += [make(f"{name} / {k}" if name else str(k), v, rows, arrange) for k, v in list(value.items())[:2]]
        else:
            tables.append(make(str(name), value, rows, arrange))
    return {"error": None, "tables": tables}


def _table_data(name: str, value: Any, rows: int, arrange: dict[str, Any] | None) -> dict[str, Any]:
    """A table as data: its first rows as Arrow IPC, its shapes; anything else as its text (as _table makes it)."""
    if not (hasattr(value, "head") and hasattr(value, "to_html")):
        return {**_table(name, value, rows), "arrow": None}
    read = list(getattr(value, "shape", ()) or ()) or None
    if arrange and hasattr(value, "columns"):
        value = arranged(value.head(rows), **arrange)
    shape = list(getattr(value, "shape", ()) or ()) or None
    return {"name": name, "html": None, "shape": shape, "read": read, "text": None, "arrow": _arrow(value.head(rows)),
            "columns": [str(c) for c in getattr(value, "columns", [])][:HTML_COLUMNS]}


def _arrow(frame: Any) -> str:
    """Return a frame's rows as a base64 Arrow IPC stream; columns Arrow cannot type (mixed values) as text."""
    import base64

    import pandas as pd
    import pyarrow as pa

    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    try:
        table = pa.Table.from_pandas(frame, preserve_index=True)
    except (pa.ArrowException, TypeError, ValueError):
        plain = frame.copy()
        plain.columns = [str(c) for c in plain.columns]
        plain.index = plain.index.astype(str)
        table = pa.Table.from_pandas(plain.astype(str), preserve_index=True)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")


def from_data(value: Any) -> dict[str, Any]:
    """Return the page's preview from a confined worker's answer: each table's HTML made here from its Arrow rows
    (escaped by pandas), every other field checked to be text or numbers."""
    import base64

    import pyarrow as pa

    def text(x: Any) -> str | None:
        return x if isinstance(x, str) else None

    def redacted(x: str | None) -> str | None:
        from dslake_index.profilers.redaction import redact_text

        return redact_text(x)[0] if x else x

    def shape(x: Any) -> tuple[int, ...] | None:
        return tuple(x) if isinstance(x, list) and all(isinstance(n, int) for n in x) and x else None

    if not isinstance(value, dict) or not isinstance(value.get("tables"), list):
        return {"error": "the preview's worker sent no preview", "tables": []}
    tables = []
    for item in value["tables"][:2 * PREVIEW_TABLES]:
        if not isinstance(item, dict):
            continue
        html = None
        if isinstance(item.get("arrow"), str):
            try:
                frame = pa.ipc.open_stream(base64.b64decode(item["arrow"])).read_all().to_pandas()
            except (pa.ArrowException, ValueError, TypeError) as exc:
                return {"error": f"the preview's worker sent unreadable rows ({type(exc).__name__})", "tables": []}
            # Secrets are redacted here, in dslake's process, as profiles are (the worker's side is not trusted);
            # to_html escapes cell text and column names by default (escape=True): a cell cannot become markup.
            html = without_secrets(frame).to_html(escape=True, border=0, max_cols=HTML_COLUMNS)
        columns = item.get("columns") if isinstance(item.get("columns"), list) else []
        tables.append({"name": text(item.get("name")) or "", "html": html, "shape": shape(item.get("shape")),
                       "read": shape(item.get("read")), "text": None if html else redacted(text(item.get("text"))),
                       "columns": [c for c in columns if isinstance(c, str)][:HTML_COLUMNS]})
    return {"error": text(value.get("error")), "tables": tables}


def arranged(frame: Any, sort: str | None = None, desc: bool = False, where: str | None = None,
             has: str | None = None) -> Any:
    """Return the frame's rows filtered (column `where`, or any column, containing `has`, case aside) and sorted
    by the column `sort`; a column it does not have is ignored. Mixed types sort as text."""
    if has:
        columns = [c for c in frame.columns if str(c) == where] or list(frame.columns)
        wanted = has.lower()
        keep = frame[columns].astype("string").apply(lambda col: col.str.lower().str.contains(wanted, regex=False))
        frame = frame[keep.fillna(False).any(axis=1)]
    column = next((c for c in frame.columns if str(c) == sort), None)
    if column is not None:
        try:
            frame = frame.sort_values(column, ascending=not desc, na_position="last", kind="stable")
        except TypeError:
            frame = frame.sort_values(column, ascending=not desc, na_position="last", kind="stable",
                                      key=lambda col: col.astype("string"))
    return frame


def without_secrets(frame: Any) -> Any:
    """Return the frame's rows with the secrets a profile would redact redacted (a copy only when one changed).

    The page shows the lake's own bytes, and shows them as the catalog does (index/profilers/redaction.py)."""
    from dslake_index.profilers.redaction import redact_value

    if not hasattr(frame, "columns"):
        return without_secrets(frame.to_frame()).iloc[:, 0]
    redacted = frame
    for i, column in enumerate(frame.columns):
        cells = frame.iloc[:, i]
        if cells.dtype.kind in "OSU" or str(cells.dtype).startswith("str"):
            shown = cells.map(lambda cell, name=str(column): redact_value(name, cell))
            if not shown.equals(cells):
                redacted = redacted.copy() if redacted is frame else redacted
                redacted.iloc[:, i] = shown
    return redacted


def _table(name: str, value: Any, rows: int, arrange: dict[str, Any] | None = None) -> dict[str, Any]:
    from dslake_index.profilers.redaction import redact_text

    if hasattr(value, "head") and hasattr(value, "to_html"):
        read = tuple(getattr(value, "shape", ()) or ()) or None
        if arrange and hasattr(value, "columns"):
            value = arranged(value.head(rows), **arrange)
        value = without_secrets(value.head(rows))
        shape = tuple(getattr(value, "shape", ()) or ()) or None
        # to_html escapes cell text and column names by default (escape=True): a cell cannot become markup.
        return {"name": name, "html": value.head(rows).to_html(escape=True, border=0, max_cols=HTML_COLUMNS),
                "shape": shape, "read": read, "text": None,
                "columns": [str(c) for c in getattr(value, "columns", [])][:HTML_COLUMNS]}
    text = redact_text(repr(value))[0]  # a text file's or a document's words, redacted as its profile's are
    cut = text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + f"\n… ({len(text) - TEXT_CHARS} more characters)"
    return {"name": name, "html": None, "shape": None, "read": None, "text": cut, "columns": []}
