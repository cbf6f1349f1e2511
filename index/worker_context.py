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

import atexit
import io
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable
from multiprocessing import context, forkserver, popen_forkserver, reduction, resource_tracker, spawn, util
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


# What every profiler process imports first: index.fork_server first (a Ctrl-C while the server imports the rest
# ends it quietly, not with a traceback), then the registry, every format profiler its dispatch imports (numpy
# through them), and the task and pool code each worker runs: what a forked profiler imported itself, before its
# first file, in `python -X importtime` of a one-file index (~0.1 s on a loaded machine).
_FIRST = ("dslake_index.fork_server", "dslake_index.profilers.registry", "dslake_index.profilers.arrays",
          "dslake_index.profilers.delimited", "dslake_index.profilers.excel", "dslake_index.profilers.jsonfile",
          "dslake_index.profilers.markup", "dslake_index.profilers.parquet", "dslake_index.profilers.text",
          "dslake_index.profilers.family_layout", "dslake_index.profilers.stacked", "dslake_index.profile_task",
          "pebble.pool.process", "encodings.utf_8_sig",
          # the secret detector every profile passes through (profilers/redaction.py: ~0.12 s of imports)
          "dslake_index.profilers.redaction", "detect_secrets.core.plugins.util",
          "detect_secrets.plugins.keyword", "detect_secrets.plugins.high_entropy_strings",
          "detect_secrets.filters.heuristic")
# The third-party readers, the most costly part (pandas ~0.8 CPU-s here, openpyxl and pyarrow.parquet ~0.4 more):
# the full set, and what a file's extension says its profiler needs. Text formats all go through pandas, whose
# string columns are pyarrow's (pyarrow.pandas_compat and its version helper: imported at the first read otherwise).
_READERS = ("pandas", "pyarrow.pandas_compat", "pyarrow.vendored.version", "openpyxl", "pyarrow.parquet")
_PANDAS = ("pandas", "pyarrow.pandas_compat", "pyarrow.vendored.version")
_NEEDS_BY_EXTENSION = {".xlsx": (*_PANDAS, "openpyxl"), ".xlsm": (*_PANDAS, "openpyxl"),
                       ".parquet": (*_PANDAS, "pyarrow.parquet"), ".pq": (*_PANDAS, "pyarrow.parquet")}
_NEEDS_OTHERWISE = _PANDAS


def profiler_preload(paths: Iterable[str] | None = None) -> list[str]:
    """Return what the profilers' server imports before it forks a profiler: all the readers (paths None: a
    watcher, a cluster worker, whatever comes next), or those the files' extensions call for.

    The server lives as long as its process, so a one-shot index preloads what its files need: a changed CSV does
    not wait for openpyxl and pyarrow.parquet. A guess that misses costs time, never a result: a profiler imports
    what its file needs itself (an .xlsx named .dat is profiled as a workbook all the same).
    """
    if paths is None:
        return [*_FIRST, *_READERS]
    needed: set[str] = set()
    for path in paths:
        suffix = os.path.splitext(path)[1].lower()
        needed.update(_NEEDS_BY_EXTENSION.get(suffix, _NEEDS_OTHERWISE))
    return [*_FIRST, *(name for name in _READERS if name in needed)]


def profiler_context(paths: Iterable[str] | None = None) -> multiprocessing.context.BaseContext:
    """Return the context profiler processes start from (the local pool's, and each cluster worker's pool); paths:
    the files it will profile, when known (profiler_preload)."""
    # forkserver: workers start from a clean process with the profilers preloaded, never from a parent
    # that may hold torch threads or open Chroma handles.
    # Their children never import the caller's __main__: lake.index() works from a script without a main guard.
    return worker_context(profiler_preload(paths))


def start_profiler_server_early(paths: Iterable[str] | None = None) -> None:
    """Start the profilers' server now, without waiting for it: it imports its preloads while this process gets on
    with its own work (a console script's hand-over imports the CLI meanwhile, ~0.5 s), and the first pool that
    forks a profiler finds it running, or still importing and nearer done.

    Nothing when it runs already (a watcher's, an earlier index's in this process). A server no pool ends up using
    costs nothing visible: it is ended, and reaped, as this process exits (_end_server).
    """
    start_preloaded_server_early(profiler_preload(paths))


def start_preloaded_server_early(preload: list[str]) -> None:
    """start_profiler_server_early with the modules to preload named (profiler_preload's answer, handed over by
    dslake's process to the confined profile server: index/profile_server.py)."""
    if forkserver._forkserver._forkserver_pid is not None:  # noqa: SLF001 - multiprocessing has no public test
        return
    worker_context(preload)  # sets the server's preload (a process-wide setting of multiprocessing's)
    _spawn_deaf_to_ctrl_c(forkserver.ensure_running)
    _end_at_exit()


def _spawn_deaf_to_ctrl_c(spawn_server: Callable[[], None]) -> None:
    """Start the server with Ctrl-C ignored, which it inherits through exec: Python then raises no
    KeyboardInterrupt in it until index.fork_server, its first import, ends it quietly on Ctrl-C instead. Started
    this early (a hand-over's first 0.1 s), a Ctrl-C soon after the command began caught it importing that very
    module and printed a traceback. This process ignores Ctrl-C only for the spawn itself (a few milliseconds)."""
    if threading.current_thread() is not threading.main_thread():
        # Handlers can only be changed from the main thread, but a thread's signal mask is its own, and a child
        # inherits it through fork and exec: the server starts with Ctrl-C blocked (the embedding warm-up starts it
        # from its thread; a Ctrl-C then caught the new interpreter in `site` and printed a fatal error). The
        # resource tracker is started first: starting it unblocks Ctrl-C in this thread when it is done.
        resource_tracker.ensure_running()
        previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            spawn_server()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        spawn_server()
    finally:
        signal.signal(signal.SIGINT, previous)


_ending = False  # _end_server is registered with atexit once


def _end_at_exit() -> None:
    global _ending
    if not _ending:
        _ending = True
        atexit.register(_end_server)


def _end_server() -> None:
    """End the profilers' server as its process exits. It would end by itself once it saw this process gone, but
    only after the imports it may still be busy with (a run that found nothing to profile): up to a CPU-second
    spent for nothing, behind the user's prompt."""
    pid = forkserver._forkserver._forkserver_pid  # noqa: SLF001
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)  # reaped here: no zombie while the rest of this process winds down
    except (OSError, ChildProcessError):
        pass
