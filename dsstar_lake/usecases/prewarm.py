"""Get Chroma, the vector store and the embedding model ready in the background while an index's profilers run."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any


class Prewarm:
    """Import Chroma, open the vector store and get the embedding model ready in the background while the
    profilers run.

    A one-file change otherwise pays for them one after the other once profiling is done (~1.5 s on 2 cores).
    Opening the store is mostly waiting (Chroma's first open of a folder creates its database with dozens of
    fsyncs: 0.3-2 s of wall time at 0.2 CPU-s in a first index); opened here, the index's own open finds Chroma's
    client for that folder already made.
    stop() (on Ctrl-C too) skips what has not begun. A thread cannot be interrupted: one left importing Chroma
    when the process exits is harmless, but one in a model's native code can crash it (SIGSEGV, abort seen).
    So a first ONNX export (15-55 s) runs in a child process that stop() kills, and only opening the exported
    model (~0.3 s) runs here, which stop() waits for. Failures are ignored here: the real calls raise them with
    their proper messages.
    """

    def __init__(self, embedder: Callable[[], Any], store: Callable[[], Any] | None = None) -> None:
        self._embedder = embedder
        self._store = store
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
            if self._store is not None:  # None: the index leaves the store lagging (index/vector_lag.py)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    import chromadb  # noqa: F401  (importing it is most of opening the store)
            if self._store is not None and self._begin():
                try:
                    self._store()  # Chroma's native code: stop() waits for it, as for the model's load
                finally:
                    with self._state:
                        self._loading = False
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

    def _begin(self) -> bool:
        """Mark a step in native code as under way (stop() then waits for it); False once stop() was called."""
        with self._state:
            if self._stopped:
                return False
            self._loading = True
            return True

    def _export(self, embedder: Any) -> None:
        from dslake_index.embed import export_onnx
        from dslake_index.indexer import start_in_child

        with self._state:
            if self._stopped:
                return
            self._child = start_in_child(export_onnx, str(embedder.cache_dir), embedder.threads,
                                         getattr(embedder, "weights", "fp32"))
        self._child.join()

    # How long stop() waits for a load under way. A load takes ~0.3 s; one that takes longer is waiting, not
    # loading: e.g. on an import lock that the thread calling stop() took when Ctrl-C caught it mid-import (a
    # one-file index hung so about one Ctrl-C in 14). Past this the process exits beside it: a rare crash beats a
    # certain hang.
    load_wait_s = 5.0

    def stop(self) -> None:
        """Skip the steps not begun, end an export under way (the next run starts it again), wait for a load
        (at most load_wait_s)."""
        with self._state:
            self._stopped = True
            loading, child = self._loading, self._child
        if child is not None and child.is_alive():
            child.terminate()
            child.join()
        if loading and self._thread is not None:
            self._thread.join(timeout=self.load_wait_s)
