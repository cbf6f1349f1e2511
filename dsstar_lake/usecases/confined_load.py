"""Where `lake.load` reads: a worker of a confined profile server, one per Lake, started on the first load.

A notebook's process holds the user's keys, home and network, so the parsers a load line drives (pandas' C CSV
reader, openpyxl, lxml, pyarrow, cdflib, ...) do not run there: the load's jobs go to a worker of the index's
confined server (index/confined_pool.py: bubblewrap with the lake read-only, no catalog, no home, no network, or
the scrubbed plain process of `sandbox.backend = "subprocess"`), pickled in the trusted direction. The worker
writes what it loaded into a scratch folder dslake made and bound writable for the server (index/load_transfer.py:
frames as Arrow IPC, arrays as .npy, text and JSON inline) and answers with JSON; dslake rebuilds the values
from those, never unpickling anything the server sends.

Not confined, by design (docs/safety.md, "lake.load reads confined"): hints whose value is a handle the user asked
for (an ElementTree, a cdflib.CDF, a DuckDB relation, a Delta or Iceberg table or pyarrow dataset left lazy), a
lake in a bucket (as the index's readers), and files a followed link puts outside the lake.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from dsstar_lake.base.errors import DslakeError, LoadError

READ_PRELOAD = ["pandas", "pyarrow", "dslake_index.load_transfer"]


class ConfinedLoader:
    """One confined server for one lake's loads, with its scratch folder; close() ends both."""

    def __init__(self, root: Path, catalog_dir: Path, backend: str, memory_mb: int) -> None:
        self.root, self.catalog_dir, self.backend, self.memory_mb = root, catalog_dir, backend, memory_mb
        self.pool: Any = None
        self.scratch: Path | None = None
        self._calls = itertools.count(1)
        self._lock = threading.Lock()

    def bound(self, memory_mb: int) -> None:
        """Use memory_mb (0: no limit) from the next read on: a server started with another bound is ended (the
        next read starts one), since its worker's limit is set when it starts."""
        with self._lock:
            if memory_mb == self.memory_mb:
                return
            self.memory_mb = memory_mb
            if self.pool is not None:
                self.pool.stop()
                self.pool = None

    def covers(self, path: Path) -> bool:
        """True when path's real location is in this lake (a file a link takes outside it is read in-process)."""
        return Path(path).resolve().is_relative_to(self.root.resolve())

    def read(self, jobs: list[tuple[str, Any, list[Path] | None]]) -> list[tuple[Any, tuple[str, str] | None]]:
        """Run each (path, hint, members) job in a confined worker; return (value, None) or (None, (error type,
        message)) per job, in order."""
        from dslake_index.load_transfer import TransferError, decode

        pool = self._server()
        call = self.scratch / f"call-{next(self._calls)}"
        call.mkdir()
        try:
            answer = pool.call("dslake_index.load_transfer:read_encoded", (jobs, str(call)), None)
            if "value" not in answer:
                why = answer.get("crash") or answer.get("timeout") or "no answer"
                over = f" (over {2 * self.memory_mb:,} MB of memory?)" if self.memory_mb else ""
                raise LoadError(f"the confined reader failed: {str(why)[:300]}{over}",
                                api_hint="the file may be too big for the memory a load may use: give "
                                         "lake.load max_memory_mb= (0: no limit), or lazy=True")
            answers = answer["value"]
            if not isinstance(answers, list) or len(answers) != len(jobs):
                raise LoadError("the confined reader sent an answer that is not one value per load line")
            out: list[tuple[Any, tuple[str, str] | None]] = []
            for item in answers:
                if isinstance(item, dict) and "error" in item:
                    kind, message = (item["error"] + ["", ""])[:2] if isinstance(item["error"], list) else ("", "")
                    out.append((None, (str(kind), str(message))))
                    continue
                try:
                    out.append((decode(item.get("value") if isinstance(item, dict) else None, call), None))
                except TransferError as exc:
                    out.append((None, (type(exc).__name__, str(exc))))
            return out
        finally:
            shutil.rmtree(call, ignore_errors=True)  # a memory map or npz keeps its unlinked file until let go

    def _server(self) -> Any:
        from dslake_index.confined_pool import ConfinedPool

        with self._lock:
            if self.pool is not None and self.pool.process.poll() is None:
                return self.pool
            if self.pool is not None:
                self.pool.close()
            if self.scratch is None:
                self.scratch = Path(tempfile.mkdtemp(prefix="dslake-load-"))
            pool = ConfinedPool(self.root, [self.catalog_dir], self.backend, READ_PRELOAD, scratch=self.scratch)
            try:
                # the worker holds the frame and its Arrow copy while it writes: twice a script's memory
                pool.start(1, 2 * self.memory_mb, {}, "blake2b", [])
            except DslakeError:
                pool.close()
                raise
            if pool.note:  # auto fell back to a plain process: said once, as the index's summary says it
                import warnings

                warnings.warn(f"lake.load: {pool.note}", RuntimeWarning, stacklevel=4)
            self.pool = pool
            return pool

    def close(self) -> None:
        """End the server and remove the scratch folder."""
        with self._lock:
            if self.pool is not None:
                self.pool.stop()
                self.pool = None
            if self.scratch is not None:
                shutil.rmtree(self.scratch, ignore_errors=True)
                self.scratch = None
