"""The confined side of the profilers' pool: `python -m dslake_index.profile_server`, tasks in, results out as JSON.

index/confined_pool.py starts this process under bubblewrap (or, where bwrap does not work, as a plain process
with a scrubbed environment and its own network namespace when the kernel allows) and talks to it over its
stdin and stdout, one JSON object a line. Inside, today's pool runs as it did in dslake's process: a pebble
ProcessPool over the forkserver context with the profilers preloaded (index/worker_context.py), each worker's
memory capped, each file's time bounded. Its workers exchange pickles with this process, never with dslake's:
what leaves here is JSON, which cannot run code where it is read.

In:  {"start": {"workers", "memory_mb", "limits", "algorithm", "known"}}  once, first;
     {"id", "task": "file", "path", "timeout"}  profile one file (profile_task.profile_file_task);
     {"id", "task": "table", "root", "kind", "timeout"}  a Delta or Iceberg table's facts (tables.read_table);
     {"id", "task": "call", "function", "args", "timeout"}  module:name(*args), its answer JSON (call_task);
     {"id", "task": "probe", "read", "write", "connect", "timeout"}  report what a worker here can reach.
Out: {"hello": {"network_namespace"}} at once, {"id", "result"} per task, {"id", "broken"} when the pool broke.
The manifest is not here: "known" is the content hashes that have a current profile, kept in a SQLite file on
this side's own /tmp, where a worker looks a hash up as it would in the manifest, and to which each profiled
file's hash is added as its result goes out.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from concurrent.futures import Future

# Only what main() needs before it starts the fork server is imported at the top: the rest (sqlite3, tempfile,
# socket, concurrent.futures, pebble, the task's code) waits until the fork server is importing its preloads,
# the one step every profiled file waits for (a one-file index: ~0.1 s sooner on a quiet machine).

CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000


def own_network_namespace() -> bool:
    """Enter a fresh network namespace (loopback only, down); False where the kernel does not let this user."""
    import ctypes

    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNET if uid == 0 else CLONE_NEWNET | CLONE_NEWUSER
    if ctypes.CDLL(None, use_errno=True).unshare(flags) != 0:
        return False
    if uid != 0:  # an unprivileged user's namespace maps only itself
        for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{path}", "w") as fh:
                fh.write(text)
    return True


def call_task(function: str, payload: str) -> Any:
    """Run `module:name` with the arguments dslake pickled (dslake to server is the trusted direction; what
    comes back is JSON). How the serve preview runs lake.load's plan here (dsstar_lake/web/preview.py)."""
    import base64
    import importlib
    import pickle

    module, _, name = function.partition(":")
    args = pickle.loads(base64.b64decode(payload))  # noqa: S301 - written by dslake's own process
    return getattr(importlib.import_module(module), name)(*args)


def probe_task(read: str, write: str, connect: list[Any]) -> dict[str, str]:
    """Try what a parser gone wrong would: read a host file, write a file, connect to a server; say what happened.

    The parent names the targets (dslake doctor's and the tests' check of the confinement, run by a real worker of
    the real pool); each outcome is "ok: ..." or the error's name and message.
    """
    outcome: dict[str, str] = {}
    try:
        with open(read, "rb") as fh:
            outcome["read"] = "ok: " + fh.read(200).decode("utf-8", "replace")
    except OSError as exc:
        outcome["read"] = f"{type(exc).__name__}: {exc}"
    try:
        with open(write, "w") as fh:
            fh.write("written by a profiler\n")
        outcome["write"] = "ok"
    except OSError as exc:
        outcome["write"] = f"{type(exc).__name__}: {exc}"
    import socket

    try:
        with socket.create_connection((str(connect[0]), int(connect[1])), timeout=5) as conn:
            conn.sendall(b"reached from a profiler\n")
        outcome["connect"] = "ok"
    except OSError as exc:
        outcome["connect"] = f"{type(exc).__name__}: {exc}"
    return outcome


class Server:
    """The pool and the known hashes of one index run, and the channel back to dslake."""

    def __init__(self, out: TextIO, scratch: Path) -> None:
        import sqlite3

        self.out, self.lock = out, threading.Lock()
        self.known_path = scratch / "known.sqlite"
        self.known = sqlite3.connect(self.known_path, check_same_thread=False, isolation_level=None)
        # Without rowid: the hashes, sent in order, go in as one growing B-tree (100k of them in ~0.1 s).
        self.known.execute("CREATE TABLE profiles (hash TEXT PRIMARY KEY, profiler_version TEXT) WITHOUT ROWID")
        self.pool: Any = None
        self.limits: Any = None
        self.algorithm = "blake2b"

    def send(self, message: dict[str, Any]) -> None:
        """Write one message (a line of JSON) back to dslake. ASCII: a lone surrogate a decoder let through travels
        escaped, where UTF-8 could not carry it (and the task's answer would never arrive)."""
        line = json.dumps(message, default=str) + "\n"
        with self.lock:
            self.out.write(line)
            self.out.flush()

    def start(self, spec: dict[str, Any]) -> None:
        """Start the pool (its fork server is running or importing already), then take the run's hashes and
        bounds: the pool asks the fork server for its workers while the hashes go in (100k of them at 100k files)."""
        from dslake_index.profile_task import limit_memory
        from dslake_index.profilers.base import PROFILER_VERSION, Limits
        from dslake_index.worker_context import profiler_context
        from pebble import ProcessPool

        self.version = PROFILER_VERSION
        self.limits = Limits(**spec["limits"])
        self.algorithm = spec["algorithm"]
        self.pool = ProcessPool(max_workers=max(1, int(spec["workers"])), initializer=limit_memory,
                                initargs=(int(spec["memory_mb"]),), context=profiler_context())
        with self.lock:  # no task is read before start() returns: no worker looks a hash up before they are in
            # One transaction: each insert its own (autocommit) cost ~0.15 ms, 0.25 s of a one-file index of
            # KramaBench's 1,724 hashes and ~14 s of one at 100k files.
            self.known.execute("BEGIN")
            self.known.executemany("INSERT OR IGNORE INTO profiles VALUES (?, ?)",
                                   ((h, PROFILER_VERSION) for h in spec.get("known", [])))
            self.known.execute("COMMIT")

    def run(self, task: dict[str, Any]) -> None:
        """Schedule one task on the pool; its result goes back when it finishes."""
        from dslake_index.profile_task import profile_file_task

        if task["task"] == "call":
            future = self.pool.schedule(call_task, args=(task["function"], task["args"]), timeout=task["timeout"])
        elif task["task"] == "table":
            from dslake_index.tables import read_table_plain

            future = self.pool.schedule(read_table_plain, args=(task["root"], task["kind"]), timeout=task["timeout"])
        elif task["task"] == "probe":
            future = self.pool.schedule(probe_task, args=(task["read"], task["write"], task["connect"]),
                                        timeout=task["timeout"])
        else:
            future = self.pool.schedule(profile_file_task, args=(task["path"], str(self.known_path), self.limits,
                                                                 self.algorithm), timeout=task["timeout"])
        future.add_done_callback(lambda done, task=task: self.answer(task, done))

    def answer(self, task: dict[str, Any], future: Future) -> None:
        """finished(), or, when even that fails, the task's crash: dslake waits for an answer to every task."""
        try:
            self.finished(task, future)
        except Exception as exc:  # noqa: BLE001 - the answer itself could not be made or sent
            from dslake_index.profile_task import crash_result

            failure = crash_result(exc)
            self.send({"id": task["id"], "result": {"crash": failure["error"]} if task["task"] == "call"
                       else failure})

    def finished(self, task: dict[str, Any], future: Future) -> None:
        """Send a task's result: the profile, or the timeout's or the crash's record of it."""
        from concurrent.futures import TimeoutError as FutureTimeout
        from concurrent.futures.process import BrokenProcessPool

        from dslake_index.profile_task import crash_result, timeout_result

        try:
            value = future.result()
        except BrokenProcessPool as exc:
            self.send({"id": task["id"], "broken": str(exc) or "the pool's processes could not start"})
            return
        except FutureTimeout:
            failure: tuple[str, dict[str, Any]] | None = ("timeout", timeout_result(task["timeout"]))
        except Exception as exc:  # noqa: BLE001 - ProcessExpired or a task's own error: that file's failure
            failure = ("crash", crash_result(exc))
        else:
            failure = None
        if task["task"] == "call":  # a call's caller words its own timeout and crash
            self.send({"id": task["id"], "result": {"value": value} if failure is None
                       else {failure[0]: failure[1]["error"]}})
            return
        result = value if failure is None else failure[1]
        if result.get("profile") and result.get("hash"):
            with self.lock:
                self.known.execute("INSERT OR IGNORE INTO profiles VALUES (?, ?)", (result["hash"], self.version))
        self.send({"id": task["id"], "result": result})


def prepare() -> None:
    """Import what start() and the first task need, while dslake's process is still loading its own code (the
    start comes from there): ~0.15 CPU-s, most of it pebble, otherwise spent after the start arrived."""
    import dslake_index.profile_task  # noqa: F401 - imported for the start's sake
    import dslake_index.profilers.base  # noqa: F401
    import pebble  # noqa: F401


def main() -> None:
    """Serve one index run: read tasks until dslake closes the channel (or dies), then end the pool."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever a library prints goes to stderr; only this module writes the channel
    netns = "--own-network" in sys.argv and own_network_namespace()
    preload = [name for arg in sys.argv if arg.startswith("--preload=") for name in arg[10:].split(",") if name]
    from dslake_index.worker_context import start_preloaded_server_early

    # The fork server imports what dslake named (the profilers a run's files need) while dslake gets on with its
    # own start (what quick_index overlaps).
    start_preloaded_server_early(preload or ["dslake_index.fork_server"])
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dslake-profile-server-") as scratch:
        server = Server(channel, Path(scratch))
        server.send({"hello": {"network_namespace": netns, "pid": os.getpid()}})
        prepare()
        try:
            for line in sys.stdin:
                message = json.loads(line)
                if "start" in message:
                    server.start(message["start"])
                else:
                    server.run(message)
        finally:
            if server.pool is not None:
                server.pool.stop()  # dslake closed the channel: nothing is waited for any more
                server.pool.join()


if __name__ == "__main__":
    # Run as the module's own name: a worker unpickles probe_task by it (the pool's workers never import __main__).
    from dslake_index.profile_server import main as served_main

    served_main()
