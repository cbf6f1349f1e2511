"""JSON (a depth-bounded structure tree; tabular records become a Table) and JSON lines (streamed head)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dslake_index.profilers.base import Limits, Profile, Table
from dslake_index.profilers.fallback import text_fallback
from dslake_index.profilers.repeats import duplicate_rows_note
from dslake_index.profilers.stats import describe_columns, jsonable, row_facts, sample_rows
from dslake_index.profilers.textio import count_lines, decode_head, detect_encoding

JSON_FULL_BYTES = 32 << 20  # json up to this size is parsed whole; beyond, records are decoded from the head
MAX_DEPTH = 6
MAX_KEYS = 40
ITEMS_MERGED = 50  # array items whose structures are merged into one item schema


def tree(value: Any, depth: int = 0) -> dict[str, Any]:
    """Return a structure tree: types, keys, array lengths and example scalars, bounded in depth and width."""
    if isinstance(value, dict):
        node: dict[str, Any] = {"type": "object", "n_keys": len(value)}
        if depth < MAX_DEPTH:
            node["keys"] = {str(k): tree(v, depth + 1) for k, v in list(value.items())[:MAX_KEYS]}
        return node
    if isinstance(value, list):
        node = {"type": "array", "length": len(value)}
        if value and depth < MAX_DEPTH:
            types = sorted({_tname(v) for v in value[:ITEMS_MERGED]})
            node["item_types"] = types
            if types == ["object"]:
                keys: dict[str, Any] = {}
                for item in value[:ITEMS_MERGED]:
                    for k, v in item.items():
                        if k not in keys and len(keys) < MAX_KEYS:
                            keys[str(k)] = tree(v, depth + 2)
                node["item"] = {"type": "object", "keys": keys}
            else:
                node["item"] = tree(value[0], depth + 1)
        return node
    return {"type": _tname(value), "example": jsonable(value)}


def _tname(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _flatten(records: list[dict[str, Any]]) -> Any:
    import pandas as pd

    df = pd.json_normalize(records, max_level=1)
    for c in df.columns:
        if df[c].map(lambda v: isinstance(v, (list, dict))).any():
            df[c] = df[c].map(lambda v: json.dumps(v, ensure_ascii=False)[:200] if isinstance(v, (list, dict)) else v)
    return df


def _records_table(records: list[Any], total: int | None, exact: bool, hint: str, limits: Limits,
                   name: str | None = None, notes: list[str] | None = None) -> Table | None:
    """Return the records (dicts) as a described table, or None; notes gets how many repeat an earlier one."""
    dicts = [r for r in records if isinstance(r, dict)]
    if not dicts or len(dicts) < 0.9 * len(records):
        return None
    df = _flatten(dicts[: limits.max_rows_scanned])
    table = Table(name=name, n_rows=total, n_rows_exact=exact, n_cols=len(df.columns), read_hint=hint)
    describe_columns(table, df, limits)
    table.duplicate_rows, table.row_hashes = row_facts(df)
    table.sample_rows = sample_rows(df, limits)
    if notes is not None:
        notes += duplicate_rows_note(table.duplicate_rows, len(df), whole=exact and total == len(df))
    return table


def find_table(data: Any, limits: Limits, notes: list[str] | None = None) -> Table | None:
    """Return the tabular part of parsed JSON: a records list, a dict of columns, a mapping, or a nested list."""
    import pandas as pd

    if isinstance(data, list):
        return _records_table(data, len(data), True, "pd.read_json({path})", limits, notes=notes)
    if not isinstance(data, dict) or not data:
        return None
    values = list(data.values())
    if all(isinstance(v, list) for v in values) and len({len(v) for v in values}) == 1 and len(values[0]) > 1:
        df = pd.DataFrame({str(k): v for k, v in list(data.items())[:500]})
        table = Table(n_rows=len(df), n_cols=len(data), read_hint="pd.read_json({path})")
        describe_columns(table, df, limits)
        table.sample_rows = sample_rows(df, limits)
        return table
    if all(not isinstance(v, (list, dict)) for v in values) and len(values) >= 3:
        df = pd.DataFrame({"key": [str(k) for k in data], "value": values})
        hint = "pd.read_json({path}, typ='series').rename_axis('key').reset_index(name='value')"
        table = Table(name="mapping", n_rows=len(df), n_cols=2, read_hint=hint)
        describe_columns(table, df, limits)
        table.sample_rows = sample_rows(df, limits)
        return table
    for key, v in data.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v[:50]):
            hint = f"pd.json_normalize(json.load(open({{path}}))[{key!r}])"
            return _records_table(v, len(v), True, hint, limits, name=str(key), notes=notes)
    return None


def _head_records(text: str) -> list[Any]:
    """Decode the complete items at the start of a top-level JSON array that was cut off."""
    dec = json.JSONDecoder()
    i = text.find("[")
    items: list[Any] = []
    if i < 0:
        return items
    i += 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return items
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            return items
        items.append(obj)


def profile_json(path: Path, head: bytes, size: int, limits: Limits) -> Profile:
    """Profile a JSON document: structure tree, tabular part with a hint, or text fallback if invalid."""
    encoding, notes = detect_encoding(path, head, size, limits.max_bytes_full_read)
    prof = Profile(format="json", size=size, encoding=encoding, notes=notes, read_hint="json.load(open({path}))")
    if size <= JSON_FULL_BYTES:
        raw = head if len(head) >= size else path.read_bytes()
        text = raw.decode(encoding, errors="replace").lstrip("\ufeff")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            lines = [ln for ln in text.splitlines() if ln.strip()][:20]
            if len(lines) > 1 and all(_is_json_line(ln) for ln in lines):
                return profile_jsonl(path, head, size, limits, note="a .json file holding JSON lines")
            return text_fallback(text, size, encoding, notes + [f"not valid JSON: {str(exc)[:120]}"])
        prof.structure = tree(data)
        table = find_table(data, limits, prof.notes)
    else:
        text = decode_head(head, encoding, False)
        records = _head_records(text)
        prof.sampled = True
        prof.notes.append(f"large JSON: {len(records)} records decoded from the first {len(head):,} bytes")
        prof.structure = tree(records)
        prof.structure["note"] = "top-level array, cut after the sampled records"
        table = _records_table(records, None, False, "pd.read_json({path})", limits, notes=prof.notes)
    if table is not None:
        prof.tables.append(table)
        prof.read_hint = table.read_hint
    if isinstance(prof.structure, dict) and prof.structure.get("type") == "object":
        prof.structure["keys_list"] = list(prof.structure.get("keys", {}))[:MAX_KEYS]
    return prof


def _is_json_line(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except json.JSONDecodeError:
        return False


def profile_jsonl(path: Path, head: bytes, size: int, limits: Limits, note: str | None = None) -> Profile:
    """Profile JSON lines from the head: records table, line count, bad lines."""
    encoding, notes = detect_encoding(path, head, size, limits.max_bytes_full_read)
    whole = len(head) >= size
    text = decode_head(head, encoding, whole).lstrip("\ufeff")
    records, bad = [], 0
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in lines[: limits.max_rows_scanned]:
        try:
            records.append(json.loads(ln))
        except json.JSONDecodeError:
            bad += 1
    prof = Profile(format="jsonl", size=size, encoding=encoding, notes=notes + ([note] if note else []),
                   read_hint="pd.read_json({path}, lines=True)", sampled=not whole)
    if bad:
        prof.notes.append(f"{bad} of the first {len(lines)} lines are not valid JSON")
    if whole:
        total, exact = len(lines), True
    elif size <= limits.max_bytes_full_read:
        total, exact = count_lines(path, size), True
    else:
        total, exact = int(size / max(1, len(head) / max(1, len(lines)))), False
    prof.structure = tree(records[:ITEMS_MERGED])
    table = _records_table(records, total, exact, prof.read_hint, limits, notes=prof.notes)
    if table is not None:
        prof.tables.append(table)
    if not whole:
        prof.notes.append(f"stats from the first {len(records):,} lines")
    return prof
