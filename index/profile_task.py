"""The unit of work a profiler process runs for one file: stat, hash, reuse a cached profile or profile it."""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import PROFILER_VERSION, Limits
from dslake_index.scan import hash_file
from dslake_index.timings import Stopwatch

_readers: dict[str, sqlite3.Connection] = {}


def limit_memory(memory_mb: int) -> None:
    """Cap this process's address space so one pathological file cannot take the machine down."""
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _has_profile(db_path: str, content_hash: str) -> bool:
    conn = _readers.get(db_path)
    if conn is None:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
        _readers[db_path] = conn
    row = conn.execute(
        "SELECT 1 FROM profiles WHERE hash = ? AND profiler_version = ?", (content_hash, PROFILER_VERSION)
    ).fetchone()
    return row is not None


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """json.dumps' fallback: a dataclass as the dict of its fields, in order; anything else as its str."""
    cls = type(value)
    names = _FIELDS.get(cls)
    if names is None:
        if not dataclasses.is_dataclass(value) or isinstance(value, type):
            return str(value)
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
    return {name: getattr(value, name) for name in names}


def profile_json(profile: Any) -> str:
    """Return json.dumps(profile.to_dict(), default=str, ensure_ascii=False), the same text at a fraction of the CPU.

    dataclasses.asdict deep-copies every value of every column before the encoder walks them again (a tenth of a
    CSV's profiling); here the C encoder walks the profile itself and turns each dataclass into a dict when it
    meets it, so the keys, their order and every value's text are those of the copy.
    """
    return json.dumps(profile, default=_plain, ensure_ascii=False)


def timeout_result(timeout_s: float) -> dict[str, Any]:
    """Return the result recorded for a file whose profiler was stopped at the time limit."""
    return {"error": f"profiling took longer than {timeout_s:g} s and was stopped",
            "error_kind": "timeout", "hash": None, "profile": None}


def crash_result(exc: BaseException) -> dict[str, Any]:
    """Return the result recorded for a file whose profiler process died (most often the memory cap)."""
    return {"error": f"profiler process died ({exc}); likely out of memory",
            "error_kind": "crash", "hash": None, "profile": None}


def _stat(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def profile_file_task(abs_path: str, db_path: str | Callable[[str], bool], limits: Limits,
                      algorithm: str) -> dict[str, Any]:
    """Hash one file and profile it unless its content is already cached; report a failure as data.

    db_path: the manifest to look the content hash up in, or a callable that answers whether it has a current
    profile (a cluster worker cannot open the coordinator's manifest: index/cluster_task.py).
    """
    from dslake_index.profilers.base import ProfileError
    from dslake_index.profilers.registry import profile_path

    path = Path(abs_path)
    watch = Stopwatch()
    result: dict[str, Any] = {"hash": None, "profile": None, "error": None, "error_kind": None,
                              "work_seconds": watch.laps}  # index/timings.py: where this file's time went
    try:
        before = _stat(path)
        result["size"], result["mtime_ns"] = before
        result["hash"] = hash_file(path, algorithm)
        watch.lap("hash")
        cached = db_path(result["hash"]) if callable(db_path) else _has_profile(db_path, result["hash"])
        watch.lap("lookup")
        if not cached:
            profile = profile_path(path, limits)
            watch.lap("profile")
            result["profile"] = profile_json(profile)
            result["format"] = profile.format
            result["signature"] = profile.signature()
            watch.lap("serialize")
        if _stat(path) != before:
            result.update(error="file changed while it was being indexed", error_kind="changed", profile=None)
    except FileNotFoundError:
        result.update(error="file disappeared while it was being indexed", error_kind="changed")
    except PermissionError as exc:
        result.update(error=f"permission denied: {exc.strerror}", error_kind="unreadable")
    except IsADirectoryError:
        result.update(error="became a folder while it was being indexed", error_kind="changed")
    except OSError as exc:
        result.update(error=f"cannot read: {exc.strerror or exc}", error_kind="unreadable")
    except ProfileError as exc:
        result.update(error=str(exc), error_kind=getattr(exc, "kind", "corrupt"))
    except MemoryError:
        result.update(error="profiler ran out of memory", error_kind="crash", profile=None)
    except Exception as exc:  # a profiler bug on one odd file must not stop the index; it is recorded instead
        result.update(error=f"profiler error: {type(exc).__name__}: {exc}"[:500], error_kind="crash", profile=None)
    return result


def cached_profile(db_path: str | Callable[[str], bool], content_hash: str) -> bool:
    """Return whether the manifest (or the callable a cluster worker is given) has a current profile for a hash."""
    return db_path(content_hash) if callable(db_path) else _has_profile(db_path, content_hash)
