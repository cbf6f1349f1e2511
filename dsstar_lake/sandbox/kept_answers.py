"""Answers the sandbox finds slowly (a probe, a trial run), kept on disk with the key they were found under.

Each answer is a JSON file under the user's cache (`$XDG_CACHE_HOME` or ~/.cache, then dslake/<kind>/<name>.json)
holding {"key": ..., plus the answer's fields}; it is read back only while its key is the caller's key now, and
written whole then renamed over the old one. Nothing here ever fails its caller: a file that cannot be read,
written or found (no home folder) only costs finding the answer again.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def _file(kind: str, name: str) -> Path:
    try:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    except RuntimeError as exc:  # no home to be found: nothing is kept
        raise OSError(str(exc)) from exc
    return Path(base) / "dslake" / kind / f"{name}.json"


def kept(kind: str, name: str, key: Any) -> dict[str, Any] | None:
    """Return the fields kept under name when they were found under this very key, else None."""
    try:
        answer = json.loads(_file(kind, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and answer.get("key") == key else None


def keep(kind: str, name: str, key: Any, fields: dict[str, Any]) -> None:
    """Keep fields under name with the key they were found under."""
    try:
        path = _file(kind, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as fh:
            json.dump({"key": key, **fields}, fh)
        os.replace(fh.name, path)
    except OSError:
        pass


def drop(kind: str, name: str) -> None:
    """Forget what is kept under name."""
    try:
        _file(kind, name).unlink()
    except OSError:
        pass
