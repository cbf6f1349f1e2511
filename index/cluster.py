"""`dslake index --cluster ADDRESS`: profile on an existing Dask distributed cluster; this process stays the writer.

The coordinator (this process) scans, plans, and keeps the one manifest; the cluster only profiles. Files go out
in small batches (index/cluster_task.py runs them in each worker's bounded pool) and their results come back to
the same ResultWriter as the local pool's, so a catalog built on a cluster equals one built locally. A worker that
dies loses only its in-flight batches: the scheduler runs them again elsewhere. Embedding stays here: the vectors
reach the one store through this process anyway, and each worker would load the model.
"""

from __future__ import annotations

import logging
import math
import queue
import re
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.errors import DslakeError, UsageError
from dslake_index.interrupt import ctrl_c_deferred, raise_if_pressed
from dslake_index.profilers.base import PROFILER_VERSION
from dslake_index.progress import Progress
from dslake_index.scan import FileStat

if TYPE_CHECKING:
    from dslake_index.collect import ResultWriter

_ADDRESS = re.compile(r"^(?:(?P<scheme>tcp|tls)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>\d{1,5})$")
CONNECT_S = 5.0  # to reach the scheduler and find a worker; an address that answers nothing fails after this
NO_WORKERS_S = 60.0  # a run whose cluster has had no worker this long stops (what was profiled is kept)
# Files per task: one per task costs the scheduler about as much as profiling a small file (benchmarks/
# cluster_bench.py); a few per task make that negligible, while a dead worker still loses only a few files.
MAX_BATCH = 8
INSTALL_HINT = "install the cluster extra (in the clone: pip install -e '.[cluster]'), which brings distributed"


@dataclass
class ClusterSession:
    """A connected Dask client, checked to run the same dslake as this process."""

    address: str
    client: Any
    log_levels: dict[str, int] | None = None  # distributed's, given back on close

    def close(self) -> None:
        """Disconnect from the scheduler (the cluster itself keeps running)."""
        try:
            if self.client is not None:
                self.client.close(timeout=2)
        except Exception:  # a cluster that went away cannot be disconnected from politely; nothing is left open
            pass
        for name, level in (self.log_levels or {}).items():
            logging.getLogger(name).setLevel(level)

    def workers(self) -> dict[str, Any]:
        """Return the scheduler's workers (address: info)."""
        return dict(self.client.scheduler_info().get("workers", {}))


def parse_address(address: str) -> tuple[str, str, int]:
    """Return (scheme, host, port) of tcp://HOST:PORT, tls://HOST:PORT or HOST:PORT; raise UsageError otherwise."""
    match = _ADDRESS.match(address.strip())
    if match is None or not 0 < int(match["port"]) < 65536:
        raise UsageError(f"not a Dask scheduler address: {address!r}",
                         hint="give tcp://HOST:PORT (what `dask scheduler` prints as 'Scheduler at')")
    return match["scheme"] or "tcp", match["host"].strip("[]"), int(match["port"])


def open_cluster(address: str, root: Path | None, connect_s: float = CONNECT_S) -> ClusterSession | None:
    """Connect to the Dask scheduler at address and check its workers (None when address is empty).

    root: the lake folder, which every worker must see at the same path (None: a lake in object storage).
    Called before the catalog is touched: a bad address or cluster writes nothing.
    """
    if not address:
        return None
    scheme, host, port = parse_address(address)
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("indexing on a cluster needs the package distributed, which is not installed",
                         hint=INSTALL_HINT) from None
    url = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
    _reachable(url, host, port, connect_s)
    levels = _quiet_distributed()
    try:
        client = Client(url, timeout=connect_s, set_as_default=False)
    except Exception as exc:  # the port answers but no scheduler does (or TLS settings are missing)
        ClusterSession(url, None, levels).close()
        raise DslakeError(f"no Dask scheduler answered at {url}: {_line(exc)}",
                          hint="check that `dask scheduler` runs there (and the TLS settings for tls://)") from None
    session = ClusterSession(url, client, levels)
    try:
        _check_workers(session, root, connect_s)
    except BaseException:
        session.close()
        raise
    return session


def _quiet_distributed() -> dict[str, int]:
    """Silence distributed's loggers, returning their levels: it logs a lost connection with tracebacks, and
    here a lost cluster is one line. Its config gives some children levels of their own (distributed.client)."""
    names = ["distributed"] + [name for name in logging.root.manager.loggerDict if name.startswith("distributed.")]
    levels = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return levels


def _reachable(url: str, host: str, port: int, connect_s: float) -> None:
    """Fail at once with one line when nothing listens at the address (Dask itself retries until its timeout)."""
    try:
        socket.create_connection((host, port), timeout=connect_s).close()
    except socket.gaierror:
        raise DslakeError(f"cannot reach the cluster at {url}: unknown host {host}") from None
    except TimeoutError:
        raise DslakeError(f"cannot reach the cluster at {url}: no answer within {connect_s:g} s",
                          hint="check the address and that the scheduler's port is open to this machine") from None
    except OSError as exc:
        raise DslakeError(f"cannot reach the cluster at {url}: {exc.strerror or exc}",
                          hint="start one with `dask scheduler`, then `dask worker ADDRESS` on each machine") from None


def _check_workers(session: ClusterSession, root: Path | None, connect_s: float) -> None:
    """Require a worker, the same dslake on every worker, and the lake folder where this process sees it."""
    from dslake_index.cluster_task import CODE_DIGEST, probe

    try:
        session.client.wait_for_workers(1, timeout=connect_s)
    except Exception:
        raise DslakeError(f"the scheduler at {session.address} has no workers",
                          hint="start some with `dask worker ADDRESS`") from None
    try:
        answers = session.client.run(probe, str(root) if root is not None else None)
    except (ImportError, AttributeError) as exc:
        raise DslakeError(f"dslake is not installed on the cluster's workers ({_line(exc)})",
                          hint="install the same dslake on every worker's machine") from None
    for worker, answer in sorted(answers.items()):
        if (answer.get("profiler"), answer.get("code")) != (PROFILER_VERSION, CODE_DIGEST):
            raise DslakeError(f"worker {worker} runs other dslake code than this process (profiler version "
                              f"{answer.get('profiler')}, code {answer.get('code')}; here {PROFILER_VERSION}, "
                              f"{CODE_DIGEST})", hint="install the same dslake on every worker's machine, and "
                              "restart the workers after an upgrade (they keep the code they imported)")
        if not answer["sees_lake"]:
            raise DslakeError(f"worker {worker} does not see the lake at {root}",
                              hint="the lake must be on a filesystem every worker mounts at the same path")


def _line(exc: BaseException) -> str:
    return (str(exc).split("\n")[0] or type(exc).__name__)[:200]


def profile_on_cluster(
    conn: sqlite3.Connection,
    session: ClusterSession,
    lake: Path | Any,  # a folder, or an objectstore.ObjectLake
    todo: list[FileStat],
    new_paths: set[str],
    options: Any,  # IndexOptions
    summary: Any,  # IndexSummary
    progress: Progress,
) -> None:
    """Profile todo on the cluster and record every result here, as the local pool's are recorded."""
    try:
        tasks = _submit(conn, session, lake, todo, options)
    except DslakeError:
        raise
    except Exception as exc:  # the connection broke since the checks on connecting
        raise _lost(session, exc) from None
    summary.cluster = {"address": session.address, "workers": len(session.workers()), "tasks": len(tasks.batches),
                       "files": len(todo)}
    from dslake_index.collect import ResultWriter  # the pool's collector: loaded only with work to do

    writer = ResultWriter(conn, new_paths, options, summary, progress)
    with ctrl_c_deferred() as pressed:
        try:
            lost = _collect(session, tasks, writer, pressed)
        except BaseException:
            writer.flush()  # keep what was profiled; the rest waits for the next index
            _cancel(session.client, list(tasks.running))
            raise
        finally:
            _cancel(session.client, [tasks.known])
        writer.flush()
    if lost:
        count, reason = sum(lost.values()), "; ".join(lost)
        summary.notes.append(f"{count} files were not profiled: the cluster failed on them ({reason}); the next "
                             "index profiles them")


def _lost(session: ClusterSession, exc: BaseException | None = None) -> DslakeError:
    why = f" ({_line(exc)})" if exc is not None else ""
    return DslakeError(f"lost the connection to the cluster at {session.address}{why}; what was profiled is kept, "
                       "and the next index continues from there")


class _Tasks:
    """This run's batches, handed to the cluster a window at a time, as the local pool is handed files
    (index/collect.py): a future keeps its batch's arguments and then its profiles until recorded, so submitting
    a 100k-file lake at once held every profile on the scheduler's side and here until the run ended."""

    def __init__(self, client: Any, batches: list[list[FileStat]], start: Any, known: Any, window: int) -> None:
        self.client = client
        self.batches = batches
        self.window = window
        self.known = known  # the future of the scattered hashes, every task's
        self.running: dict[Any, list[FileStat]] = {}  # submitted, not yet recorded
        self._start = start
        self._next = 0

    def start_next(self, finished: queue.SimpleQueue[Any]) -> None:
        """Submit the next batch, if any, its future reporting to finished when done."""
        if self._next < len(self.batches):
            batch = self.batches[self._next]
            self._next += 1
            future = self._start(batch)
            self.running[future] = batch
            future.add_done_callback(finished.put)


def _submit(conn: sqlite3.Connection, session: ClusterSession, lake: Path | Any, todo: list[FileStat],
            options: Any) -> _Tasks:
    """Check the workers see the files, send them the known hashes, and cut todo into batches to submit."""
    from dslake_index.cluster_task import hash_keys, profile_batch, sees
    from dslake_index.collect import AHEAD_PER_WORKER

    client = session.client
    target = str(lake) if isinstance(lake, Path) else _without_keys_if_signed(lake, todo)
    if isinstance(lake, Path):
        first = str(lake / todo[0].path)
        blind = sorted(worker for worker, seen in client.run(sees, first).items() if not seen)
        if blind:  # the folder is there (checked on connecting) but empty: a mount that is missing on that machine
            raise DslakeError(f"worker {blind[0]} does not see the lake's files ({first})",
                              hint="the lake must be on a filesystem every worker mounts at the same path")
    known = hash_keys(row[0] for row in conn.execute(
        "SELECT hash FROM profiles WHERE profiler_version = ?", (PROFILER_VERSION,)))
    # One copy per worker, read by each of its tasks (a worker cannot open this process's manifest).
    [known_future] = client.scatter([known], broadcast=True, hash=False)
    threads = _threads(session)
    size = _batch_size(len(todo), threads)

    def start(batch: list[FileStat]) -> Any:
        return client.submit(profile_batch, _batch_files(lake, batch), lake=target, known=known_future,
                             known_key=known_future.key, limits=options.limits, algorithm=options.hash_algorithm,
                             timeout_s=options.timeout_s, memory_mb=options.memory_mb, pure=False, retries=1)

    # As many files ahead per worker thread as the local pool's window, and at least a batch per thread.
    window = max(threads, AHEAD_PER_WORKER * threads // size)
    return _Tasks(client, _batches(todo, size), start, known_future, window)


def _without_keys_if_signed(lake: Any, todo: list[FileStat]) -> Any:
    """Return the ObjectLake the tasks carry: without the store settings (keys) when the store signs URLs, since
    workers then fetch by URL alone and keys need not cross the cluster's network."""
    from dataclasses import replace

    from dslake_index.objectstore import signed_urls

    return replace(lake, env=()) if signed_urls(lake, [todo[0].path]) else lake


def _batch_files(lake: Path | Any, batch: list[FileStat]) -> list[tuple[str, int, int, str | None]]:
    """Return a batch as its task takes it: each file with a signed URL when the lake is a store that signs them."""
    urls: list[str] | None = None
    if not isinstance(lake, Path):
        from dslake_index.objectstore import signed_urls

        urls = signed_urls(lake, [f.path for f in batch])
    return [(f.path, f.size, f.mtime_ns, urls[i] if urls else None) for i, f in enumerate(batch)]


def _cancel(client: Any, futures: list[Any]) -> None:
    """Drop this run's tasks and data from the cluster (nothing to drop when it went away)."""
    if client.status == "running":
        try:
            client.cancel(futures, asynchronous=False)
        except Exception:  # the connection broke meanwhile: the scheduler forgets a gone client's tasks itself
            pass


def _collect(session: ClusterSession, tasks: _Tasks, writer: ResultWriter, pressed: Any) -> dict[str, int]:
    """Record batches as they finish, submitting the next in each one's place; return what could not be profiled
    (reason: files), which stays unrecorded."""
    from distributed import KilledWorker

    finished: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for _ in range(tasks.window):
        tasks.start_next(finished)
    lost: dict[str, int] = {}
    watch = _WorkerWatch(session)
    while tasks.running:
        future = _next(finished, pressed, watch)
        batch = tasks.running.pop(future)
        if future.status == "cancelled" or session.client.status not in ("running", "connecting"):
            raise _lost(session)
        try:
            results = future.result()
        except KilledWorker:
            reason = "a worker died running them again and again"
            lost[reason] = lost.get(reason, 0) + len(batch)
            results = None
        except Exception as exc:  # a worker's own failure (its pool could not start): not the files' fault
            reason = f"{type(exc).__name__}: {_line(exc)}"
            lost[reason] = lost.get(reason, 0) + len(batch)
            results = None
        for f, result in zip(batch, results or [], strict=results is not None):
            writer.add(f, result)
        del future  # the last reference: the scheduler forgets the batch's profiles, now recorded
        tasks.start_next(finished)
    return lost


class _WorkerWatch:
    """Notice a cluster left without workers: its tasks would wait forever."""

    def __init__(self, session: ClusterSession) -> None:
        self.session = session
        self.since: float | None = None
        self.checked = time.monotonic()

    def check(self) -> None:
        now = time.monotonic()
        if now - self.checked < 5.0:
            return
        self.checked = now
        try:
            workers = self.session.workers()
        except Exception as exc:  # the scheduler cannot be asked: it is gone
            raise _lost(self.session, exc) from None
        if workers:
            self.since = None
        elif self.since is None:
            self.since = now
        elif now - self.since > NO_WORKERS_S:
            raise DslakeError(f"the cluster at {self.session.address} has had no workers for {NO_WORKERS_S:g} s; "
                              "what was profiled is kept, and the next index continues from there")


def _next(finished: queue.SimpleQueue[Any], pressed: Any, watch: _WorkerWatch) -> Any:
    """Return the next finished future, looking at Ctrl-C every 0.1 s and at the workers while none is."""
    while True:
        raise_if_pressed(pressed)
        try:
            return finished.get(timeout=0.1)
        except queue.Empty:
            watch.check()


def _threads(session: ClusterSession) -> int:
    """Return the worker threads the cluster has now (at least one)."""
    return sum(w.get("nthreads", 1) for w in session.workers().values()) or 1


def _batch_size(files: int, threads: int) -> int:
    """Return files per task: enough tasks to keep every worker thread busy to the end, at most MAX_BATCH."""
    return max(1, min(MAX_BATCH, math.ceil(files / (threads * 8))))


def _batches(todo: list[FileStat], size: int) -> list[list[FileStat]]:
    return [todo[i:i + size] for i in range(0, len(todo), size)]

