"""Appended to the script's sitecustomize: DuckDB runs under the sandbox's limits when a script imports it.

DuckDB sizes itself from the machine (80% of its RAM, one thread per core, spill files beside the database),
not from the limits a script runs under: a query over a file bigger than memory would grow past the memory
bound and be killed rather than spill. So, when `duckdb` is imported, its default connection (duckdb.sql) and
every connection a script opens get memory_limit, threads and a temp_directory with a size cap inside the work
folder, from DSLAKE_DUCKDB_* set by dslake (dsstar_lake/sandbox/core.py). Extensions are never downloaded (the
sandbox has no network; a query that needs one fails at once instead of waiting). A script may still SET other
values: this is the default it starts from, not a wall; the wall is the sandbox's memory bound. Standard library
only.
"""

import importlib.abc
import importlib.util
import os
import sys


def _duckdb_settings() -> dict:
    memory = os.environ.get("DSLAKE_DUCKDB_MEMORY")
    if not memory:
        return {}
    settings = {"memory_limit": memory, "threads": os.environ.get("DSLAKE_DUCKDB_THREADS", "1"),
                "autoinstall_known_extensions": "false"}
    temp = os.environ.get("DSLAKE_DUCKDB_TEMP")
    if temp:
        settings["temp_directory"] = os.path.abspath(temp)  # the script's cwd is the work folder
        settings["max_temp_directory_size"] = os.environ.get("DSLAKE_DUCKDB_TEMP_MAX", "1GB")
    return settings


def _configure(duckdb, settings: dict) -> None:
    connect = duckdb.connect

    def limited_connect(database=":memory:", read_only=False, config=None, **kwargs):
        merged = dict(settings)
        merged.update(config or {})
        return connect(database, read_only=read_only, config=merged, **kwargs)

    duckdb.connect = limited_connect
    try:
        default = duckdb.default_connection() if callable(getattr(duckdb, "default_connection", None)) \
            else duckdb.default_connection
        for name, value in settings.items():
            default.execute(f"SET {name} = '{value}'")
    except Exception as exc:  # noqa: BLE001 - an older DuckDB: say so on stderr, never break the import
        sys.stderr.write(f"note: DuckDB's limits could not be set ({exc})\n")


class _DuckdbLimits(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "duckdb":
            return None
        sys.meta_path.remove(self)  # found once; the real finders do the finding
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        settings, run = _duckdb_settings(), spec.loader.exec_module

        def exec_module(module):
            run(module)
            _configure(module, settings)

        spec.loader.exec_module = exec_module
        return spec


if _duckdb_settings():
    sys.meta_path.insert(0, _DuckdbLimits())
