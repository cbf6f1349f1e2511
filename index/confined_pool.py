"""Where the index's profilers read lake bytes: a profile server confined by bubblewrap, or a plain one where it
cannot be, that dslake's process hears from in JSON only.

A parser bug (pyiceberg, delta-rs, openpyxl, lxml, cdflib, pyarrow...) on a hostile file must not be able to read,
write or run anything outside the lake. So `dslake index` on a local lake hands its files to one server process
per pool (index/profile_server.py, the pool of today inside it) and reads back one JSON object a line: never a
pickle, which a compromised parser could craft to run code in dslake's process.

- `bwrap`: the host allow-list scripts get (index/bwrap_binds.py: system folders, the interpreter, private /tmp
  and /dev/shm, own /proc, no network, pid/IPC/UTS namespaces, no capabilities, no new user namespaces, dies
  with dslake), dslake's own index/ package read-only (an editable install's source, nothing else of it), and
  the lake read-only at its own path with the catalog inside it and what the index skips (hidden names,
  `.dslakeignore`d paths: index/lakemask.py) blanked. Homes, the catalog, /run, the rest of
  the host's files and every socket do not exist there.
- `subprocess` (no usable bwrap): the same server as a plain process in its own session, its environment built
  from scratch (no keys), HOME an empty folder, its own network namespace when the kernel allows it, the
  workers' memory and time bounds as before. It can read and write what your user can.

`auto` takes bwrap when the server comes up under it, and says once when it fell back.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from dslake_index.errors import ConfigError

TMP_MB = 512  # the server's private /tmp: the known hashes' file, what a profiler unpacks to read
SHM_MB = 64  # its /dev/shm: the pool's semaphores
TABLE_READERS = ["dslake_index.fork_server", "dslake_index.tables", "pyarrow", "pyiceberg.table", "deltalake"]
_RESULT_TEXT = ("hash", "profile", "error", "error_kind", "format", "signature")
_RESULT_INT = ("size", "mtime_ns")


def _source_folder() -> Path:
    """Return the folder the dslake_index package is imported from (an editable install's source folder)."""
    return Path(__file__).resolve().parent


def server_argv(backend: str, python: str, lake: Path, hidden: list[Path], preload: list[str],
                outside: list[Path] = (), code: list[Path] = (), scratch: Path | None = None) -> list[str]:
    """Return the command that starts the profile server on this backend (bwrap: wrapped in its confinement).

    outside: folders outside the lake that files to profile lie in (links followed out of it with
    --follow-symlinks, the user's choice), bound read-only as well. code: more of dslake's own packages the
    server's tasks import (the serve preview's), bound read-only like index/ when not installed in site-packages.
    scratch: a folder dslake made, bound writable, where a worker leaves what it hands back as files (lake.load's
    frames as Arrow IPC); the only place outside the server's own /tmp it can write.
    """
    from dslake_index.bwrap_binds import closing_argv, host_argv, under
    from dslake_index.lakemask import skipped_names

    command = [python, "-I", "-m", "dslake_index.profile_server", "--preload=" + ",".join(preload)]
    if backend != "bwrap":
        return [*command[:4], "--own-network", command[4]]
    bwrap = shutil.which("bwrap") or "bwrap"
    lake = lake.resolve()
    argv = host_argv(bwrap, python, TMP_MB, SHM_MB)
    installed = [Path(p) for p in sys.path if p and "site-packages" in p]
    for source in (_source_folder(), *(Path(c).resolve() for c in code)):
        if not under(source, installed):
            argv += ["--ro-bind", str(source), str(source)]  # an editable install: the package's folder only
    argv += ["--ro-bind", str(lake), str(lake)]
    for folder in outside:
        argv += ["--ro-bind", str(folder), str(folder)]
    if scratch is not None:
        argv += ["--bind", str(scratch.resolve()), str(scratch.resolve())]
    blanked = [p.resolve() for p in hidden if p.is_dir() and under(p.resolve(), [lake]) and p.resolve() != lake]
    masks = skipped_names(lake, blanked)  # what the index never reads (.env, .git, .dslakeignore'd): blanked too
    for rel in masks.files:
        argv += ["--ro-bind", "/dev/null", str(lake / rel)]
    blanked += [lake / rel for rel in masks.folders]
    for folder in blanked:  # the catalog inside the lake and the skipped folders: empty and read-only
        argv += ["--tmpfs", str(folder)]
    for folder in blanked:
        argv += ["--remount-ro", str(folder)]
    return argv + closing_argv(bwrap, Path("/tmp")) + command


def _relay_stderr(stream: Any) -> None:
    """Pass what the server's libraries print on stderr (a parser's warning) on to dslake's, each line with its
    control characters replaced: the server reads hostile files, and its stderr would otherwise be the user's
    terminal, open to an escape sequence (an OSC 52 clipboard write, a clear-screen)."""
    from dslake_index.profilers.textio import printable

    for line in stream:
        try:
            sys.stderr.write(printable(line.rstrip("\n"), 2000) + "\n")
        except (OSError, ValueError):  # dslake's stderr closed: keep draining, so the server never blocks on it
            continue


class ConfinedPool:
    """One profile server: tasks go in as JSON lines, each comes back as a Future of its plain result dict."""

    def __init__(self, lake: Path, hidden: list[Path], backend: str, preload: list[str],
                 outside: list[Path] = (), code: list[Path] = (), scratch: Path | None = None) -> None:
        self.lake, self.hidden, self.requested, self.outside = lake, list(hidden), backend, list(outside)
        self.code, self.scratch = list(code), scratch
        self.preload = preload
        self.note: str | None = None  # why auto fell back to a plain process
        self.pending: dict[int, tuple[Future, Callable[[Any], Any]]] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.started = False
        self.home = Path(tempfile.mkdtemp(prefix="dslake-profile-home-"))
        self._launch("subprocess" if backend == "subprocess" or not shutil.which("bwrap") else "bwrap")

    def _launch(self, backend: str) -> None:
        self.backend = backend
        self.hello: Future = Future()
        env = {"PATH": "/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8"), "PYTHONDONTWRITEBYTECODE": "1",
               "HOME": "/tmp/home" if backend == "bwrap" else str(self.home)}
        if os.environ.get("TZ"):
            env["TZ"] = os.environ["TZ"]
        argv = server_argv(backend, sys.executable, self.lake, self.hidden, self.preload, self.outside, self.code,
                           self.scratch)
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=env, cwd=str(self.home), start_new_session=True, text=True,
                                        encoding="utf-8", errors="replace",
                                        bufsize=1)  # its own session: a terminal's Ctrl-C is dslake's to decide
        self.reader = threading.Thread(target=self._read, args=(self.process, self.hello), daemon=True,
                                       name="dslake-profile-server")
        self.reader.start()
        threading.Thread(target=_relay_stderr, args=(self.process.stderr,), daemon=True,
                         name="dslake-profile-server-stderr").start()

    def _read(self, process: subprocess.Popen, hello: Future) -> None:
        """Resolve each task's Future from the server's lines; every pending one breaks when the server ends."""
        for line in process.stdout:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):  # RecursionError: nesting deeper than the decoder goes
                break  # not the protocol: the server is not to be believed any further
            if not isinstance(message, dict):
                break
            if "hello" in message and not hello.done():
                hello.set_result(message["hello"] if isinstance(message["hello"], dict) else {})
                continue
            with self.lock:
                waiting = self.pending.pop(message.get("id"), None) if isinstance(message.get("id"), int) else None
            if waiting is None:
                continue
            future, check = waiting
            if "broken" in message:
                future.set_exception(BrokenProcessPool(str(message["broken"])[:300]))
            else:
                future.set_result(check(message.get("result")))
        if not hello.done():
            hello.set_exception(BrokenProcessPool("the profile server did not start"))
        if process is self.process:
            self._break_pending("the profile server ended")

    def _break_pending(self, why: str) -> None:
        with self.lock:
            pending, self.pending = self.pending, {}
        for future, _ in pending.values():
            future.set_exception(BrokenProcessPool(why))

    def start(self, workers: int, memory_mb: int, limits: dict[str, Any], algorithm: str,
              known: Iterable[str]) -> None:
        """Hand the server the run's bounds and the hashes with a current profile; fall back from bwrap (auto) when
        the server did not come up under it."""
        try:
            self.hello.result()
        except BrokenProcessPool:
            self.process.wait()
            if self.backend != "bwrap" or self.requested == "bwrap":
                raise ConfigError(f"the profilers' server could not start ({self.backend}, exit "
                                  f"{self.process.returncode})",
                                  hint="set sandbox.backend = \"subprocess\" to profile without bubblewrap"
                                  if self.backend == "bwrap" else "") from None
            self.note = ("bubblewrap did not start the profilers; they run as plain processes (no file or network "
                         "confinement: install or fix bwrap)")
            self._launch("subprocess")
            self.hello.result()
        self._send({"start": {"workers": workers, "memory_mb": memory_mb, "limits": limits, "algorithm": algorithm,
                              "known": list(known)}})
        self.started = True

    def schedule(self, task: dict[str, Any], timeout: float,
                 check: Callable[[Any], Any] | None = None) -> Future:
        """Send one task ({"task": "file", "path": ...} or a probe's); return the Future of its result, as check
        (default: plain_result, a profiler's result) makes it of the server's JSON."""
        future: Future = Future()
        with self.lock:
            self.next_id += 1
            self.pending[self.next_id] = (future, check or plain_result)
            message = {**task, "id": self.next_id, "timeout": timeout}
        try:
            self._send(message)
        except OSError:
            with self.lock:
                self.pending.pop(message["id"], None)
            future.set_exception(BrokenProcessPool("the profile server ended"))
        return future

    def call(self, function: str, args: tuple[Any, ...], timeout: float) -> dict[str, Any]:
        """Run module:name(*args) in a worker; return {"value": its JSON answer}, {"timeout": why} or {"crash": why}.
        The arguments go pickled (this process to the server: the trusted direction); the answer is JSON."""
        return self.submit(function, args, timeout).result()

    def submit(self, function: str, args: tuple[Any, ...], timeout: float) -> Future:
        """call's Future: the answer once the worker sends it."""
        import base64
        import pickle

        payload = base64.b64encode(pickle.dumps(args)).decode("ascii")
        return self.schedule({"task": "call", "function": function, "args": payload}, timeout,
                             check=lambda raw: raw if isinstance(raw, dict) else {"crash": "the worker sent no answer"})

    def _send(self, message: dict[str, Any]) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        """End the server and its whole pool now (Ctrl-C, a failed write)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        """Close the channel (the server ends its pool and exits), wait for it, remove its HOME."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.reader.join(timeout=5)
        self._break_pending("the profile server ended")
        shutil.rmtree(self.home, ignore_errors=True)

    def close_soon(self) -> None:
        """Close the channel and let the server wind down (its pool stopped, its workers reaped) while this process
        gets on: a one-file index renders and embeds meanwhile (~0.1 s of its wall). The wait and the removal of
        its HOME happen in a thread that the index joins before it returns (join_closing, also at this process's
        exit), so no server outlives the index."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        closing = threading.Thread(target=self.close, name="dslake-profile-server-close")
        closing.start()
        _closing.append(closing)
        _join_closing_at_exit()

    def __enter__(self) -> ConfinedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plain_result(raw: Any) -> dict[str, Any]:
    """Return a server's result as the plain dict the result writer takes, or a crash record when it is not one:
    text, numbers and a profile that decodes to a JSON object, nothing else."""
    from dslake_index.profile_task import crash_result

    if not isinstance(raw, dict):
        return crash_result(ValueError("the profiler sent something that is not a result"))
    result: dict[str, Any] = {}
    for key in _RESULT_TEXT:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            return crash_result(ValueError(f"the profiler sent a malformed {key}"))
        result[key] = value
    for key in _RESULT_INT:
        if key in raw:
            if not isinstance(raw[key], int) or isinstance(raw[key], bool):
                return crash_result(ValueError(f"the profiler sent a malformed {key}"))
            result[key] = raw[key]
    laps = raw.get("work_seconds")  # index/timings.py: {step: [wall, cpu]}
    if isinstance(laps, dict):
        result["work_seconds"] = {str(k): [float(v[0]), float(v[1])] for k, v in laps.items()
                                  if isinstance(v, list) and len(v) == 2
                                  and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)}
    if result["profile"] is not None:
        try:
            decoded = json.loads(result["profile"])
        except (ValueError, RecursionError):
            decoded = None
        if not isinstance(decoded, dict) or not result["hash"]:
            return crash_result(ValueError("the profiler sent a profile that is not a JSON object"))
    return result


def probe_outcome(raw: Any) -> dict[str, str]:
    """Return a probe task's answer (what a worker could reach) as text by text, whatever the server sent."""
    if not isinstance(raw, dict):
        return {"error": "not a probe's answer"}
    return {str(k): str(v)[:300] for k, v in raw.items()}


_early: ConfinedPool | None = None
_closing: list[threading.Thread] = []  # servers closed with close_soon whose exit is not waited for yet
_joining = False  # join_closing is registered with atexit once


def join_closing() -> None:
    """Wait until every server closed with close_soon has exited and its HOME is gone."""
    while _closing:
        _closing.pop().join()


def _join_closing_at_exit() -> None:
    global _joining
    if not _joining:
        _joining = True
        import atexit

        atexit.register(join_closing)


def start_server_early(lake: Path, hidden: list[Path], backend: str = "auto",
                       paths: Iterable[str] | None = None) -> None:
    """Start the profile server now (its fork server imports the profilers while dslake loads): the next pool
    over the same lake takes it (take_server). Nothing when one is waiting already."""
    global _early
    if _early is not None:
        return
    from dslake_index.worker_context import profiler_preload

    _early = ConfinedPool(lake, hidden, backend, profiler_preload(paths))
    import atexit

    atexit.register(_end_early)


def take_server(lake: Path, hidden: list[Path], backend: str, outside: list[Path] = ()) -> ConfinedPool:
    """Return the server started early for this lake and backend, or a new one (outside: see server_argv)."""
    global _early
    early, _early = _early, None
    if early is not None:
        same = (early.lake.resolve() == lake.resolve()
                and [p.resolve() for p in early.hidden] == [p.resolve() for p in hidden]
                and (backend == "auto" or early.requested == backend or early.backend == backend))
        if same and not outside:
            early.requested = backend  # "bwrap" asked for: no falling back to a plain process
            return early
        early.stop()
    from dslake_index.worker_context import profiler_preload

    return ConfinedPool(lake, hidden, backend, profiler_preload(), outside)


def folders_outside(lake: Path, paths: Iterable[str]) -> list[Path]:
    """Return the folders, outside the lake, of the lake-relative paths whose real path leaves it (links)."""
    root = lake.resolve()
    found: set[Path] = set()
    for rel in paths:
        real = (lake / rel).resolve()
        if not real.is_relative_to(root):
            found.add(real.parent)
    return sorted(p for p in found if not any(q != p and q in p.parents for q in found))


def _end_early() -> None:
    if _early is not None:
        _early.stop()
