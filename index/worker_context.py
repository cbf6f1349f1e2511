"""A forkserver context whose processes never import the caller's `__main__` (issue 18: plain scripts).

Every start method but fork prepares a child by importing the parent's main module again (as `__mp_main__`), so
that functions defined there can be unpickled. dslake's workers only ever run functions of its own modules, yet a
user's plain script (`lake.index()` at top level, no `if __name__ == "__main__":` guard) was run again in every
profiler, which then tried to start a pool of its own and broke the index. fork would not re-import, but forking a
parent that holds torch or Chroma threads can deadlock; so the children still start from the fork server (clean,
with the profilers preloaded) and only the instruction to import `__main__` is left out of what they are sent.

The one method below mirrors `multiprocessing.popen_forkserver.Popen._launch` (CPython 3.11 to 3.14) with that one
change; a test runs a guard-less script through `lake.index()` to keep it honest.
"""

from __future__ import annotations

import io
import multiprocessing
import os
from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util
from typing import Any

_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")


class _Popen(popen_forkserver.Popen):
    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in _MAIN_KEYS:  # the only change: the child does not run the caller's main module again
            prep_data.pop(key, None)
        buf = io.BytesIO()
        context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            context.set_spawning_popen(None)
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        # A duplicate of the data pipe's write end: the child's sentinel of its parent, as in the standard Popen.
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _Popen:
        return _Popen(process_obj)


class _Context(context.ForkServerContext):
    Process = _Process  # type: ignore[assignment]


def worker_context(preload: list[str]) -> multiprocessing.context.BaseContext:
    """Return a forkserver context with these modules preloaded whose children leave `__main__` alone."""
    ctx = _Context()
    ctx.set_forkserver_preload(preload)
    return ctx


def profiler_context() -> multiprocessing.context.BaseContext:
    """Return the context profiler processes start from (the local pool's, and each cluster worker's pool)."""
    # forkserver: workers start from a clean process with the profilers preloaded, never from a parent
    # that may hold torch threads or open Chroma handles.
    # Their children never import the caller's __main__: lake.index() works from a script without a main guard.
    # index.fork_server first: a Ctrl-C while the server imports the rest ends it quietly, not with a traceback.
    return worker_context(["dslake_index.fork_server", "dslake_index.profilers.registry", "pandas", "openpyxl",
                           "pyarrow.parquet"])
