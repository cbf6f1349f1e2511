"""What a Dask worker runs for `dslake index --cluster` (index/cluster.py is the coordinator's side).

A worker keeps the local guarantees: each file is profiled in a worker-local pebble pool, started once per worker
process from the same fork server as the local pool, with the same memory cap; a profiler past the time limit is
killed, and a timeout or a dead child is the same error dict as locally. No worker opens the catalog: the content
hashes that already have a current profile arrive once per worker (scattered by the coordinator) and are looked up
from a worker-local file, which the pool's processes map read-only.
"""

from __future__ import annotations

import atexit
import hashlib
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dslake_index.profile_task import crash_result, limit_memory, timeout_result
from dslake_index.profilers.base import PROFILER_VERSION, Limits

HASH_BYTES = 16  # content hashes are looked up by their first 128 bits: no collision in any lake, 16 bytes each

_lock = threading.RLock()
_pools: dict[tuple[int, int], Any] = {}
_known_files: dict[str, str] = {}
_scratch: list[str] = []


def hash_keys(hashes: Iterable[str]) -> Any:
    """Return content hashes as a sorted numpy array of their first 128 bits (what a worker searches)."""
    import numpy as np

    keys = np.array([bytes.fromhex(h[:HASH_BYTES * 2]) for h in hashes], dtype=f"S{HASH_BYTES}")
    keys.sort()
    return keys


@dataclass(frozen=True)
class KnownHashes:
    """Answer whether a content hash has a current profile, from a worker-local .npy file (picklable: a path)."""

    path: str

    def __call__(self, content_hash: str) -> bool:
        import numpy as np

        keys = _loaded.get(self.path)
        if keys is None:
            _loaded.clear()  # an earlier run's file, deleted since: this long-lived process lets it go
            keys = _loaded[self.path] = np.load(self.path, mmap_mode="r")
        if not len(keys):
            return False
        key = np.array([bytes.fromhex(content_hash[:HASH_BYTES * 2])], dtype=f"S{HASH_BYTES}")
        i = int(np.searchsorted(keys, key)[0])
        return i < len(keys) and keys[i] == key[0]


_loaded: dict[str, Any] = {}


def _code_digest() -> str:
    """Return a digest of dslake_index's sources: the profilers a worker runs must be this process's, byte for
    byte (a version number stays the same across edits, and a long-lived worker keeps the code it imported)."""
    digest = hashlib.blake2b(digest_size=8)
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


CODE_DIGEST = _code_digest()  # at import: the code this process runs, not what lies on disk later


def probe(root: str | None) -> dict[str, Any]:
    """Tell the coordinator what this worker runs and whether it sees the lake (run once on every worker)."""
    return {"profiler": PROFILER_VERSION, "code": CODE_DIGEST, "sees_lake": root is None or os.path.isdir(root)}


def sees(path: str) -> bool:
    """Return whether this worker sees one lake file (a shared filesystem mounted at the same path)."""
    return os.path.exists(path)


def profile_batch(files: list[tuple[str, int, int, str | None]], lake: Any, known: Any, known_key: str, limits: Limits,
                  algorithm: str, timeout_s: float, memory_mb: int) -> list[dict[str, Any]]:
    """Profile files of the lake (a folder's absolute path, or an ObjectLake) in this worker's bounded pool.

    files: (lake-relative path, size, mtime_ns, signed URL or None) each; the results come back in the same order.
    An object with a signed URL is fetched with the standard library: the worker needs no store client (whose
    ~180 MB would count against the profiler's memory cap) and no credentials.
    """
    from dslake_index.objectranges import profile_footer_task, read_by_footer
    from dslake_index.objectstore import profile_object_task, profile_url_task
    from dslake_index.profile_task import profile_file_task
    from pebble import ProcessExpired

    pool = _pool(memory_mb, _threads())
    cache = KnownHashes(_known_file(known_key, known))
    futures = []
    for rel, size, mtime_ns, url in files:
        if isinstance(lake, str):
            task, args = profile_file_task, (os.path.join(lake, rel), cache, limits, algorithm)
        elif url and read_by_footer(rel):  # Parquet: its footer by ranges, as on the coordinator
            task, args = profile_footer_task, (url, rel, size, mtime_ns, cache, limits, algorithm)
        elif url:  # downloads go to a folder of this worker, not to the coordinator's catalog
            task, args = profile_url_task, (url, _scratch_dir(), rel, size, mtime_ns, cache, limits, algorithm)
        else:
            task, args = profile_object_task, (replace(lake, tmp_dir=_scratch_dir()), rel, size, mtime_ns, cache,
                                               limits, algorithm)
        futures.append(pool.schedule(task, args=args, timeout=timeout_s))
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except FutureTimeout:
            results.append(timeout_result(timeout_s))
        except ProcessExpired as exc:
            results.append(crash_result(exc))
    return results


def _threads() -> int:
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):  # not inside a worker (called directly)
        return 1


def _pool(memory_mb: int, size: int) -> Any:
    """Return this worker's profiler pool, started on first use: one process per worker thread."""
    from dslake_index.worker_context import profiler_context
    from pebble import ProcessPool

    with _lock:
        pool = _pools.get((memory_mb, size))
        if pool is None or not pool.active:
            # A nanny starts its worker as a daemonic process, which multiprocessing forbids to have children
            # (so they cannot outlive it). The pool's processes die with the worker anyway: an idle one ends when
            # its pipe closes, and _child_init has the kernel kill a busy one when its parent goes.
            multiprocessing.current_process()._config["daemon"] = False  # type: ignore[attr-defined]
            pool = ProcessPool(max_workers=size, initializer=_child_init, initargs=(memory_mb,),
                               context=profiler_context())
            _pools[(memory_mb, size)] = pool
        return pool


def _child_init(memory_mb: int) -> None:
    """Set up one profiler process of a worker: killed when its parent (the fork server) ends, memory capped."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    limit_memory(memory_mb)


def _known_file(key: str, known: Any) -> str:
    """Return the worker-local file holding one run's known hashes, writing it on the run's first task."""
    import numpy as np

    with _lock:
        path = _known_files.get(key)
        if path is None:
            for old in _known_files.values():  # an earlier run's: its tasks are done
                Path(old).unlink(missing_ok=True)
                _loaded.pop(old, None)
            _known_files.clear()
            name = hashlib.blake2b(key.encode(), digest_size=8).hexdigest()
            path = os.path.join(_scratch_dir(), f"known-{name}.npy")
            np.save(path, np.asarray(known, dtype=f"S{HASH_BYTES}"))
            _known_files[key] = path
        return path


def _scratch_dir() -> str:
    """Return this worker process's own temporary folder (downloads, the known hashes)."""
    with _lock:
        if not _scratch:
            # Inside the worker's own local directory, which Dask removes when a killed worker leaves it behind.
            _scratch.append(tempfile.mkdtemp(prefix="dslake-", dir=_local_directory()))
            atexit.register(shutil.rmtree, _scratch[0], True)
        return _scratch[0]


def _local_directory() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().local_directory)
    except (ImportError, ValueError, AttributeError):  # not inside a worker (called directly)
        return None
