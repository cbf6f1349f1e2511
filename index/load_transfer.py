"""What a confined reader hands back: a loaded value as plain data, files and JSON that cannot run code when read.

`lake.load` runs a file's load lines in a worker of the confined profile server (dsstar_lake/usecases/
confined_load.py). What the worker loaded must come back to the user's process without a pickle, so `encode`
(worker side) turns it into a JSON tree whose leaves are plain values or files in the folder dslake bound writable
for the call, and `decode` (dslake's side) rebuilds the value from that tree, checking each node's form:

- a DataFrame, a Series, an Arrow table: an Arrow IPC file (pandas' own metadata keeps dtypes, index and column
  labels); a column of mixed Python values Arrow cannot type travels as tagged JSON cells, rebuilt as objects;
- a numpy array: a .npy file, an npz archive: an .npz file, both read back with allow_pickle=False;
- text: a string; what json.load gives: JSON; dicts and lists of the above: nodes of nodes.

Anything else (a lazy handle: an ElementTree, a CDF file, a DuckDB relation) is refused by `encode`: those hints
are run in dslake's process by design (`stays_in_process`), never sent here.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

from dslake_index.load_hint import LoadHint, run

# Readers whose value is a handle on the file (lazy, or an object with methods over it): it cannot cross a data
# channel, so such a hint runs in dslake's process unless a step makes plain data of it.
HANDLE_READERS = frozenset({"xml.etree.ElementTree.parse", "cdflib.CDF", "DeltaTable", "StaticTable.from_metadata",
                            "ds.dataset", "duckdb.read_parquet", "duckdb.read_csv"})
MATERIALISING_STEPS = frozenset({"to_pandas", "to_table", "varget"})
MIXED_TAG = b"dslake.mixed_columns"  # the schema metadata key naming the columns sent as tagged JSON cells


class TransferError(ValueError):
    """A value that cannot travel as plain data, or an answer that is not of the form encode writes."""


def stays_in_process(hint: LoadHint) -> bool:
    """True when the hint's value is a handle (no step materialises it): it runs where the user holds it."""
    return hint.reader in HANDLE_READERS and not any(
        s.kind == "method" and s.name in MATERIALISING_STEPS for s in hint.steps)


def read_encoded(jobs: list[tuple[str, LoadHint, list[Path] | None]], folder: str) -> list[dict[str, Any]]:
    """Worker side: run each (path, hint, members) job and encode its value into folder; a job's failure is
    {"error": [its type's name, its message]}, as lake.load words it."""
    answers: list[dict[str, Any]] = []
    counter = iter(range(1 << 30))
    for path, hint, members in jobs:
        try:
            value = run(hint, path, members=members)
            answers.append({"value": encode(value, Path(folder), counter)})
        except Exception as exc:  # noqa: BLE001 - the hint's failure on this file is lake.load's finding to report
            answers.append({"error": [type(exc).__name__, str(exc)[:2000]]})
    return answers


def encode(value: Any, folder: Path, counter: Any) -> dict[str, Any]:
    """Return value as a node: {"frame"|"series"|"arrow"|"npy"|"npz": file name} or {"text"|"json"|"dict"|"list"}."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if isinstance(value, str):
        return {"text": value}
    if _plain_json(value):
        return {"json": value}
    if isinstance(value, pd.DataFrame):
        return {"frame": _write_frame(value, folder, next(counter))}
    if isinstance(value, pd.Series):
        name = value.name if isinstance(value.name, (str, int)) or value.name is None else str(value.name)
        return {"series": _write_frame(value.to_frame(name="series"), folder, next(counter)), "name": name}
    if isinstance(value, pa.Table):
        return {"arrow": _write_arrow(value, folder, next(counter))}
    if isinstance(value, np.ndarray):
        name = f"{next(counter)}.npy"
        np.save(folder / name, value, allow_pickle=False)
        return {"npy": name}
    if isinstance(value, np.lib.npyio.NpzFile):
        name = f"{next(counter)}.npz"
        np.savez(folder / name, **{k: value[k] for k in value.files})
        return {"npz": name}
    if isinstance(value, dict) and all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
        return {"dict": [[k, encode(v, folder, counter)] for k, v in value.items()]}
    if isinstance(value, list):
        return {"list": [encode(v, folder, counter) for v in value]}
    raise TransferError(f"a {type(value).__name__} cannot be handed back as data")


def decode(node: Any, folder: Path) -> Any:
    """dslake's side: rebuild a value from encode's node, reading its files from folder (nothing is unpickled)."""
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise TransferError("the reader sent something that is not a value")
    kind = next(iter(node))
    if kind == "text" and isinstance(node["text"], str):
        return node["text"]
    if kind == "json":
        return node["json"]
    if kind == "dict" and isinstance(node["dict"], list):
        return {_key(pair): decode(pair[1], folder) for pair in node["dict"]}
    if kind == "list" and isinstance(node["list"], list):
        return [decode(v, folder) for v in node["list"]]
    if kind not in ("frame", "series", "arrow", "npy", "npz"):
        raise TransferError(f"the reader sent an unknown value kind {kind!r}")
    path = _file(folder, node[kind])
    if kind == "npy":
        import numpy as np

        return np.load(path, allow_pickle=False)
    if kind == "npz":
        import numpy as np

        return np.load(path, allow_pickle=False)  # its archive stays open on the unlinked file, as np.load's does
    table = _read_arrow(path)
    if kind == "arrow":
        return table
    frame = _to_frame(table)
    if kind == "series":
        name = node.get("name")
        if name is not None and not isinstance(name, (str, int)):
            raise TransferError("the reader sent a malformed series name")
        return frame.iloc[:, 0].rename(name)
    return frame


def _key(pair: Any) -> str | int:
    if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (str, int))
            and not isinstance(pair[0], bool)):
        raise TransferError("the reader sent a malformed dict")
    return pair[0]


def _file(folder: Path, name: Any) -> Path:
    """Return the named file in folder: a bare name, never a path elsewhere."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise TransferError("the reader named a file outside its folder")
    path = folder / name
    if not path.is_file() or path.is_symlink():
        raise TransferError(f"the reader's file {name} is missing")
    return path


def _plain_json(value: Any, depth: int = 0) -> bool:
    """True for what json.load gives (dicts with text keys, lists, text, numbers, booleans, None): sent as JSON."""
    if depth > 200:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_plain_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v, depth + 1) for k, v in value.items())
    return False


# ---- frames as Arrow IPC ----

def _write_frame(frame: Any, folder: Path, number: int) -> str:
    import pyarrow as pa

    mixed: list[str] = []
    try:
        table = pa.Table.from_pandas(frame)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        frame, mixed = _tag_mixed(frame)
        table = pa.Table.from_pandas(frame)
    if mixed:
        table = table.replace_schema_metadata({**table.schema.metadata, MIXED_TAG: json.dumps(mixed).encode()})
    return _write_arrow(table, folder, number)


def _write_arrow(table: Any, folder: Path, number: int) -> str:
    import pyarrow as pa

    name = f"{number}.arrow"
    with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return name


def _read_arrow(path: Path) -> Any:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path), "r") as source:
            table = pa.ipc.open_file(source).read_all()
        table.validate(full=True)  # offsets and lengths checked before pandas touches a buffer the worker wrote
        return table
    except (pa.ArrowInvalid, OSError) as exc:
        raise TransferError(f"the reader's Arrow file is not readable: {exc}") from None


def _to_frame(table: Any) -> Any:
    import pandas as pd

    metadata = table.schema.metadata or {}
    try:
        mixed = json.loads(metadata.get(MIXED_TAG, b"[]"))
    except (ValueError, RecursionError):
        raise TransferError("the reader's Arrow file names its mixed columns in a malformed way") from None
    if not isinstance(mixed, list):
        raise TransferError("the reader's Arrow file names its mixed columns in a malformed way")
    try:
        frame = table.to_pandas()
    except Exception as exc:  # noqa: BLE001 - pandas' metadata in the file is the server's word: malformed is refused
        raise TransferError(f"the reader's Arrow file does not make a frame: {type(exc).__name__}") from None
    if not isinstance(frame, pd.DataFrame):
        raise TransferError("the reader's Arrow file is not a frame")
    for field in mixed:  # the field names pandas' metadata gave the tagged columns: their positions
        position = table.schema.get_field_index(str(field))
        if position < 0 or position >= frame.shape[1]:
            raise TransferError("the reader named a tagged column that is not there")
        frame.isetitem(position, pd.Series([_untag(c) for c in frame.iloc[:, position]], index=frame.index,
                                           dtype=object))
    return frame


def _tag_mixed(frame: Any) -> tuple[Any, list[str]]:
    """Return frame with each column Arrow cannot type (ints and text in one column, as a sheet often has) as
    JSON text of tagged cells, and those columns' Arrow field names (the column label as text)."""
    import pyarrow as pa

    frame = frame.copy()
    mixed: list[str] = []
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if column.dtype != object:
            continue
        try:
            pa.array(column, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            frame.isetitem(position, column.map(_tag).astype(object))
            mixed.append(str(frame.columns[position]))
    return frame, mixed


def _tag(cell: Any) -> str:
    import pandas as pd

    if cell is None:
        return json.dumps(["n"])
    if isinstance(cell, bool):
        return json.dumps(["b", cell])
    if isinstance(cell, int):
        return json.dumps(["i", str(cell)])
    if isinstance(cell, float):
        return json.dumps(["f", repr(cell) if math.isfinite(cell) else str(cell)])
    if isinstance(cell, str):
        return json.dumps(["s", cell])
    if isinstance(cell, pd.Timestamp):
        return json.dumps(["T", cell.isoformat()])
    if isinstance(cell, dt.datetime):
        return json.dumps(["t", cell.isoformat()])
    if isinstance(cell, dt.date):
        return json.dumps(["d", cell.isoformat()])
    if isinstance(cell, dt.time):
        return json.dumps(["h", cell.isoformat()])
    try:
        import numpy as np

        if isinstance(cell, np.generic):
            return _tag(cell.item())
    except ImportError:
        pass
    raise TransferError(f"a cell of type {type(cell).__name__} cannot be handed back as data")


def _untag(text: Any) -> Any:
    import pandas as pd

    try:
        tag = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise TransferError("the reader sent a malformed cell") from None
    kind, value = (tag[0], tag[1] if len(tag) > 1 else None) if isinstance(tag, list) and tag else (None, None)
    readers = {"n": lambda v: None, "b": bool, "i": int, "f": float, "s": str, "T": pd.Timestamp,
               "t": dt.datetime.fromisoformat, "d": dt.date.fromisoformat, "h": dt.time.fromisoformat}
    if kind not in readers or (kind != "n" and not isinstance(value, (str, bool))):
        raise TransferError("the reader sent a malformed cell")
    return readers[kind](value)
