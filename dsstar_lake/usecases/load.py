"""`lake.load(...)`: run an entry's load lines against the real files, so what the agent is told is what a user gets.

A description tells the coder how to read each table (`load: df = pd.read_csv('data/x.csv', sep=';')`); those lines
come from the profile's read hints, kept in the catalog with the `{path}` placeholder. A catalog is data: each hint
is parsed into its safe form (index/load_hint.py: an allow-listed reader, literal arguments) and that reader is
called with the file's real path; a hint of any other form is refused, and nothing is evaluated as Python.
Given a Lake's ConfinedLoader (usecases/confined_load.py), the readers run in its confined worker and only plain
data comes back; the hints whose value is a handle on the file run here (load_transfer.stays_in_process).
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.front_door import Catalog

from dsstar_lake.base.errors import DslakeError, LoadError, UsageError
from dsstar_lake.views.userpaths import in_user_terms, lake_root_text, user_path

if TYPE_CHECKING:
    from dslake_index.load_hint import LoadHint

    from dsstar_lake.usecases.confined_load import ConfinedLoader


def load(access: Catalog, target: Any, limit: int | None = None, loader: ConfinedLoader | None = None, *,
         lazy: bool = False, max_memory_mb: int | None = None) -> Any:
    """Load a Hit, an entry path (a family's pattern) or a lake file: a DataFrame, or a dict of them.

    A file of one table gives its DataFrame; a file of several (a workbook's sheets) a dict by table name; a file
    without tables what its own load line returns (a dict from JSON, arrays from npz). A family gives a dict from
    member path to what that member gives, in path order, the first `limit` members only when limit is given.
    loader: where the reads run (None: in this process, as a confined worker itself does).
    lazy: a DuckDB relation over the file or dataset where it lies instead (usecases/lazy_load.py), nothing read yet.
    max_memory_mb: the memory this load may use (None: this machine's, machine_memory_mb; 0: no limit). As in the
    sandbox, a whole load whose DataFrame would take more than half of it is refused, naming what streams instead.
    """
    if max_memory_mb is not None and max_memory_mb < 0:
        raise UsageError(f"max_memory_mb must be 0 (no limit) or more, not {max_memory_mb}")
    family, files = plan(access, target, limit, lazy=lazy)
    if lazy:
        from dsstar_lake.usecases.lazy_load import relations

        return relations(family, files)
    memory_mb = machine_memory_mb() if max_memory_mb is None else max_memory_mb
    _refuse_too_big(files, memory_mb, lake_root_text(access.root, access.remote), chosen=max_memory_mb is not None)
    if loader is None:
        return run_plan(family, files)
    loader.bound(memory_mb)
    return run_plan_confined(family, files, loader)


def machine_memory_mb() -> int:
    """Return this machine's physical memory in MB: what lake.load may use in the user's own process (the
    sandbox's sandbox.memory_mb bounds the agent's scripts, not a notebook's loads); 0 when it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):  # a platform without these names: no limit
        return 0


def _refuse_too_big(files: list[FileLoad], memory_mb: int, root: str, chosen: bool) -> None:
    """Refuse a whole load that would not fit the memory a load may use, naming the user's own lines that query
    the file where it lies instead (a load that filled this process's memory would end it, not fail)."""
    from dslake_index.bigfiles import load_bytes, size_text, too_big

    whose = "max_memory_mb" if chosen else "this machine's memory; max_memory_mb= sets another"
    for f in files:
        if f.size and too_big(f.format, f.size, memory_mb):
            shown = user_path(f.rel, root)
            raise LoadError(
                f"{shown} is too big to load whole: {size_text(f.size)} on disk, about "
                f"{size_text(load_bytes(f.format, f.size))} as a DataFrame, more than half the {memory_mb:,} MB a "
                f"load may use ({whose})", hint=f"query it where it lies instead: {in_user_terms(f.stream, root)}",
                api_hint=f"query it where it lies with lake.load({shown!r}, lazy=True) (a DuckDB relation that "
                         f"reads only what a query needs), or load it whole anyway with max_memory_mb=0")


def plan(access: Catalog, target: Any, limit: int | None = None,
         lazy: bool = False) -> tuple[bool, list[FileLoad]]:
    """Return what loading target reads, without reading it: (is a family, each file's checked load hints).
    lazy: a dataset too big for a whole load is planned too (its relation needs no whole-load line).

    Every hint is parsed into its safe form here (index/load_hint.py): one that is not is refused with a LoadError
    naming the entry, before anything runs. The web preview runs the plan in a bounded worker process.
    """
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be 1 or more, not {limit}")
    if access.root is None:
        raise UsageError("loading needs the lake folder", hint="give --lake LAKE (and --catalog DIR if elsewhere)",
                         api_hint="open the catalog with its lake: Lake.open(lake, catalog=DIR)")
    entry_id = getattr(target, "entry_id", None)
    if entry_id is not None:
        entry = access.entry_record(entry_id)
        if entry is None:
            raise UsageError(f"the hit {getattr(target, 'path', entry_id)!r} is no longer in the catalog",
                             api_hint="search again: the catalog changed since this hit was found")
        return _plan_entry(access, entry, limit, lazy)
    if not isinstance(target, (str, os.PathLike)):
        raise UsageError(f"cannot load a {type(target).__name__}: give a search hit, an entry path or a lake file")
    rel = access.relative(os.fspath(target))
    row = access.file_record(rel)
    if row is not None:
        return False, [_plan_file(access, row)]
    entry = access.entry_named(rel)
    if entry is None:
        raise UsageError(f"not in the catalog: {rel}", hint="check the path (relative to the lake) or run dslake index",
                         api_hint="check the path (relative to the lake) or run lake.index()")
    return _plan_entry(access, entry, limit, lazy)


@dataclass
class FileLoad:
    """One file's load: its lake path, its real path, and its (table name, hint) pairs, already validated."""

    rel: str
    path: Path
    hints: list[tuple[str, LoadHint]]
    format: str = ""  # what a whole load's memory is estimated from (index/bigfiles.py)
    size: int = 0
    stream: str = ""  # the line that queries it without loading it whole
    members: list[Path] | None = None  # a dataset's member files, checked, read instead of its folder
    kind: str = "file"  # or a dataset's kind: hive, parts, delta, iceberg


def run_plan(family: bool, files: list[FileLoad], nrows: int | None = None, max_chars: int | None = None) -> Any:
    """Run a plan: what lake.load returns (nrows and max_chars bound a preview)."""
    if not family:
        return run_file(files[0], nrows, max_chars)
    # Each member by its own load lines: the family's shared reader is a summary of them, the members' own are exact.
    return {f.rel: run_file(f, nrows, max_chars) for f in files}


def run_file(load: FileLoad, nrows: int | None = None, max_chars: int | None = None) -> Any:
    """Run one file's hints: a table's value, or a dict by table name when the file holds several."""
    from dslake_index.load_hint import run

    loaded: dict[str, Any] = {}
    for name, hint in load.hints:
        key = name if name not in loaded else f"{name} ({len(loaded) + 1})"
        try:
            loaded[key] = run(hint, load.path, nrows=nrows, max_chars=max_chars, members=load.members)
        except Exception as exc:  # the hint is the catalog's: its failure on this file is a finding to report
            raise _failed(load, name, type(exc).__name__, str(exc)) from exc
    return next(iter(loaded.values())) if len(loaded) == 1 else loaded


def run_plan_confined(family: bool, files: list[FileLoad], loader: ConfinedLoader) -> Any:
    """run_plan with the readers in the loader's confined worker, all of a plan's lines in one call; a handle's
    line, and a file a link puts outside the lake, run here. Same values, same failures as run_plan."""
    from dslake_index.load_hint import run
    from dslake_index.load_transfer import stays_in_process

    jobs: list[tuple[str, Any, list[Path] | None]] = []
    where: list[int | None] = []  # per (file, hint), in order: its job's index, None when it runs here
    for f in files:
        confined = loader.covers(f.path) and all(loader.covers(m) for m in f.members or [])
        for _, hint in f.hints:
            where.append(None if stays_in_process(hint) or not confined else len(jobs))
            if where[-1] is not None:
                jobs.append((str(f.path), hint, f.members))
    read = loader.read(jobs) if jobs else []
    slots = iter(where)
    result: dict[str, Any] = {}
    for f in files:
        loaded: dict[str, Any] = {}
        for name, hint in f.hints:
            key = name if name not in loaded else f"{name} ({len(loaded) + 1})"
            slot = next(slots)
            if slot is None:
                try:
                    loaded[key] = run(hint, f.path, members=f.members)
                except Exception as exc:  # as run_file: the catalog's hint failing on this file is a finding
                    raise _failed(f, name, type(exc).__name__, str(exc)) from exc
                continue
            value, error = read[slot]
            if error is not None:
                raise _failed(f, name, *error)
            loaded[key] = value
        result[f.rel] = next(iter(loaded.values())) if len(loaded) == 1 else loaded
    return result if family else result[files[0].rel]


def _failed(load: FileLoad, name: str, kind: str, message: str) -> LoadError:
    return LoadError(f"the load line of {load.rel} ({name}) failed: {kind}: {message}",
                     api_hint="the file may have changed since it was indexed: run lake.index()")


def _plan_entry(access: Catalog, entry: sqlite3.Row, limit: int | None,
                lazy: bool = False) -> tuple[bool, list[FileLoad]]:
    members = access.members(entry["id"])
    if not members:
        raise LoadError(f"the entry {entry['path']} has no files left in the catalog",
                        api_hint="run lake.index() to bring the catalog up to date")
    if entry["kind"] == "dataset":
        return False, [_plan_dataset(access, entry, members, lazy)]
    rows = [access.file_record(path) for path in members[:limit]]
    if entry["kind"] != "family":
        return False, [_plan_file(access, rows[0])]
    return True, [_plan_file(access, row) for row in rows if row is not None]


def _plan_file(access: Catalog, row: sqlite3.Row) -> FileLoad:
    from dslake_index.load_hint import HintRefused, parse
    from dslake_index.profilers.base import Profile

    rel = row["path"]
    if row["status"] == "failed":
        raise LoadError(f"{rel} could not be described ({row['error']}), so it has no load line")
    stored = access.stored_profile(row["hash"]) if row["hash"] else None
    if stored is None:
        raise LoadError(f"{rel} is not described yet", hint="run `dslake index LAKE`",
                        api_hint="run lake.index() first")
    profile = Profile.from_dict(json.loads(stored))
    path = _inside(access, rel)
    hints = [(t.name or f"table {i + 1}", t.read_hint) for i, t in enumerate(profile.tables) if t.read_hint]
    if not hints and profile.read_hint:
        hints = [("file", profile.read_hint)]
    if not hints:
        raise LoadError(f"{rel} ({profile.format}) has no load line: it is not a table dslake knows how to read",
                        api_hint=f"read it yourself from {path}")
    checked: list[tuple[str, LoadHint]] = []
    for name, hint in hints:
        try:
            checked.append((str(name), parse(hint)))
        except HintRefused as exc:  # a catalog is data: a line that is not a plain reader call is never run
            raise LoadError(f"the load line of {rel} ({name}) was refused: {exc}",
                            hint="`dslake index` re-profiles the file if its catalog is an old one",
                            api_hint="the catalog holds a load line dslake does not run; re-index the lake") from None
    from dslake_index.bigfiles import stream_hint
    from dslake_index.cards import HINT_PREFIX

    stream = stream_hint(profile.format).replace("{path}", repr(HINT_PREFIX + rel))
    return FileLoad(rel, path, checked, profile.format, int(row["size"] or 0), f"rel = {stream}")


def _plan_dataset(access: Catalog, entry: sqlite3.Row, members: list[str], lazy: bool = False) -> FileLoad:
    """Plan a dataset's or table's load: its one hint, given the dataset's folder (or a table's metadata file).

    A Hive dataset or a folder of parts is read from its members (each checked by real path to lie in the lake and
    outside the catalog), never by its folder; a table through index/table_io.py, confined to its own folder."""
    from dslake_index.cards import HINT_PREFIX
    from dslake_index.load_hint import HintRefused, parse

    record = access.dataset_record(entry["id"])
    name = entry["path"]
    if record is None:
        raise LoadError(f"{name} is not described yet", hint="run `dslake index LAKE`", api_hint="run lake.index()")
    if record.error:
        raise LoadError(f"the {record.kind} table {name} cannot be read: {record.error}",
                        api_hint="repair the table, then run lake.index()")
    stream = (record.stream or "").replace("{path}", repr(HINT_PREFIX + (record.stream_target or "")))
    if record.target is None:
        raise LoadError(f"{name} has no load line", api_hint="run lake.index() to bring the catalog up to date")
    # Too big for the sandbox's scripts, the catalog keeps no whole-load line; the user's process may have the
    # memory (checked by the caller), so the line is the one a smaller dataset of its kind gets
    whole = record.hint or _whole_line(record.kind, record.format)
    hints: list[tuple[str, LoadHint]] = []
    try:
        hints = [(record.kind, parse(whole))] if whole is not None and not lazy else []
    except HintRefused as exc:
        raise LoadError(f"the load line of {name} was refused: {exc}",
                        api_hint="the catalog holds a load line dslake does not run; re-index the lake") from None
    if not hints and not lazy:
        raise LoadError(f"the {record.kind} dataset {name} has no whole-load line",
                        api_hint=f"lake.load({name!r}, lazy=True) gives a DuckDB relation over it")
    path = _inside(access, record.target, folder=record.kind in ("hive", "parts", "delta"))
    files = None
    if record.kind in ("hive", "parts"):
        try:
            files = access.dataset_files(record.target, members)
        except DslakeError as exc:  # a member outside the lake or inside the catalog, or gone
            raise LoadError(f"{name}: {exc.message}", api_hint="run lake.index() to bring the catalog up to date") \
                from None
    # The estimate is the whole load's memory: expressed as parquet bytes, since that is what load_bytes scales.
    return FileLoad(name, path, hints, "parquet" if record.format != "csv" else "csv",
                    _on_disk(record), stream, files, record.kind)


def _whole_line(kind: str, fmt: str | None) -> str | None:
    """Return the whole-load line index/dataset_entries.py writes for a dataset of this kind and format (a
    folder's stray files need no ignore_prefixes here: a dataset is read from its member files)."""
    if kind == "delta":
        return "DeltaTable({path}).to_pandas()"
    if kind == "iceberg":
        return "StaticTable.from_metadata({path}).scan().to_pandas()"
    if kind in ("hive", "parts"):
        if fmt == "parquet":
            return "pd.read_parquet({path})"
        partitioning = ", partitioning='hive'" if kind == "hive" else ""
        return f"ds.dataset({{path}}, format='csv'{partitioning}).to_table().to_pandas()"
    return None


def _on_disk(record: Any) -> int:
    from dslake_index.bigfiles import EXPANSION

    return int(record.load_bytes / EXPANSION.get(record.format if record.format == "csv" else "parquet", 1.0))


def _inside(access: Catalog, rel: str, folder: bool = False) -> Path:
    """Return the file's (or a dataset's folder's) path in the lake, refusing one that a link or '..' takes
    outside it or into the catalog."""
    try:
        path = access.lake_file(rel)
    except DslakeError as exc:  # a link or '..' out of the lake, or into the catalog
        raise LoadError(exc.message) from None
    real = os.path.realpath(path)
    if not (os.path.isdir(real) if folder else os.path.isfile(real)):
        raise LoadError(f"{rel} is no longer in the lake", api_hint="run lake.index() to bring the catalog up to date")
    return path
