"""The `--json` contract (docs/json.md): one object per command, named by a schema, with ISO 8601 times and rounded timings.

Every command prints one JSON object whose first key is `schema`, "dslake.<command>/<version>" (for example
"dslake.search/1", "dslake.runs.show/1"); a command whose result is a list puts it under one key
(LIST_KEYS). The library's own data stays as it is (epoch seconds, float timings): this module turns it into
the contract on the way out, by key name, so that every command follows the same rules:

- a time (a key `at` or ending in `_at`, in epoch seconds) becomes an ISO 8601 string in UTC, to the
  millisecond, ending in Z; `mtime_ns` (nanoseconds) becomes `mtime`, the same way;
- a duration in seconds (`seconds`, or a key ending in `_seconds` or `_s`) is rounded to 3 places;
- a duration in milliseconds (a key ending in `_ms`) becomes a whole number.

Bumping a schema's version is for removing or renaming a key or changing its meaning; adding a key is not.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

SCHEMA_PREFIX = "dslake."
# Each command's schema version (every command not named here is at version 1).
VERSIONS: dict[str, int] = {}
# Commands whose result is a list: the key it goes under.
LIST_KEYS = {"config": "settings", "runs list": "runs"}
# Keys whose values are keyed by names dslake does not choose (formats, setting names): copied as they are.
OPAQUE_KEYS = frozenset({"profile", "formats", "overrides", "value", "values"})


def schema_name(command: str) -> str:
    """Return the schema id of a command path such as "runs show": "dslake.runs.show/1"."""
    return f"{SCHEMA_PREFIX}{command.replace(' ', '.')}/{VERSIONS.get(command, 1)}"


def command_path(ctx: Any) -> str:
    """Return the path of the click command running in ctx, without the program's name ("eval retrieval")."""
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.command.name)
        ctx = ctx.parent
    return " ".join(reversed(names))


def iso_time(epoch_seconds: float) -> str:
    """Return an epoch time as ISO 8601 in UTC, to the millisecond: 2026-11-25T12:28:00.123Z."""
    moment = dt.datetime.fromtimestamp(epoch_seconds, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_time_key(key: str) -> bool:
    return key == "at" or key.endswith("_at")


def _is_seconds_key(key: str) -> bool:
    return key == "seconds" or key.endswith(("_seconds", "_s"))


def normalize(value: Any, key: str | None = None) -> Any:
    """Return JSON-ready data with times as ISO 8601 and timings rounded (the rules of this module's docstring)."""
    if isinstance(value, dict):
        if key in OPAQUE_KEYS:
            return {str(k): _plain(v) for k, v in value.items()}
        out: dict[str, Any] = {}
        for k, v in value.items():
            name = str(k)
            if name == "mtime_ns" and _is_number(v):
                out["mtime"] = iso_time(v / 1e9)
            else:
                out[name] = normalize(v, name)
        return out
    if isinstance(value, list | tuple):
        return [normalize(v, key) if isinstance(v, dict | list | tuple) else _leaf(v, None) for v in value]
    return _leaf(value, key)


def _leaf(value: Any, key: str | None) -> Any:
    if key is not None and _is_number(value):
        if _is_time_key(key):
            return iso_time(value)
        if key.endswith("_ms"):
            return int(round(value))
        if _is_seconds_key(key):
            return round(float(value), 3)
    return _plain(value)


def _plain(value: Any) -> Any:
    """Return a value json can write (anything unknown as its text, as `default=str` would)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def envelope(command: str, data: Any) -> dict[str, Any]:
    """Return a command's result as its one JSON object: the schema first, then the result's keys."""
    body = normalize(data)
    if not isinstance(body, dict):
        body = {LIST_KEYS.get(command, "items"): body}
    if "schema" in body:  # a result's own schema (status: the manifest's last migration) keeps its value
        body = {("manifest_schema" if k == "schema" else k): v for k, v in body.items()}
    return {"schema": schema_name(command), **body}


ERROR_SCHEMA = f"{SCHEMA_PREFIX}error/1"  # what every command's --json prints instead of its result when it fails


def error_dumps(message: str, hint: str | None, exit_code: int) -> str:
    """Return the one JSON object a failing command prints under --json: the error's line, its advice and the code
    the process exits with."""
    return json.dumps({"schema": ERROR_SCHEMA, "error": message, "hint": hint, "exit_code": exit_code}, indent=2,
                      ensure_ascii=False)


def dumps(command: str, data: Any) -> str:
    """Return a command's JSON output (indented, UTF-8 characters kept)."""
    return json.dumps(envelope(command, data), indent=2, ensure_ascii=False)
