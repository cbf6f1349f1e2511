"""A load hint as data: an allow-listed reader, literal arguments and a few post-steps; parsed, rendered, run.

A profile keeps each table's load line as text (`pd.read_csv({path}, sep=';', skiprows=2)`): it is what the
prompts show the coder, byte for byte. That text comes from a catalog, and a catalog may come from someone else
(a shared one, or one a script could write), so it is never evaluated as Python in dslake's process. `parse` reads
it with `ast` into a LoadHint (reader name, keyword arguments whose names are allow-listed per reader and whose
values are literals, and the post-steps the profilers write) and refuses anything else with a HintRefused naming
what it refused; `run` calls the allow-listed functions directly; `render` gives back the text.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dslake_index.member_reads import FOLDER_READERS, MemberRefused, read_members

FORM_VERSION = 1  # bump when this grammar changes: `dslake index` then re-checks every stored hint (indexer.py)
MAX_HINT_CHARS = 100_000  # a workbook's names=[...] list is long; nothing a profiler writes comes near this
MAX_RANGE = 1_000_000  # `skiprows=[*range(N), N + 1]` (a markdown table's rows above it): N stays a line count

_CSV_KW = frozenset({"sep", "skiprows", "header", "names", "usecols", "encoding", "comment", "skipinitialspace",
                     "decimal", "thousands", "na_values", "nrows", "compression", "engine", "dtype"})
# reader -> keyword names it may be given. Only what the profilers write (index/profilers/*), nothing more.
READERS: dict[str, frozenset[str]] = {
    "pd.read_csv": _CSV_KW,
    "pd.read_fwf": _CSV_KW,
    "pd.read_excel": frozenset({"sheet_name", "header", "skiprows", "names", "usecols", "nrows"}),
    "pd.read_json": frozenset({"typ", "lines"}),
    # a file, or a dataset's folder (partition columns from its key=value folders); filters: [(col, op, value)]
    # ignore_prefixes: file names a folder read skips (files of another schema beside the dataset's own)
    "pd.read_parquet": frozenset({"filters", "columns", "ignore_prefixes"}),
    "pd.read_html": frozenset(),
    "np.load": frozenset({"allow_pickle"}),
    "open": frozenset({"encoding"}),  # open({path}[, encoding=...]).read(): read-only text
    "gzip.open": frozenset({"encoding"}),  # gzip.open({path}, 'rt').read()
    "json.load": frozenset({"encoding"}),  # json.load(open({path}[, encoding=...]))
    "xml.etree.ElementTree.parse": frozenset(),
    "cdflib.CDF": frozenset(),  # cdflib.CDF(str({path}))
    # Table formats and engines that stream (index/dataset_entries.py writes these): a Delta table's folder, an
    # Iceberg table's metadata file, a pyarrow dataset's folder, and DuckDB relations (lazy: nothing is read until
    # a script asks for rows, so a file bigger than memory is queried where it lies).
    "DeltaTable": frozenset({"version"}),  # DeltaTable({path}[, version=N]).to_pandas()
    "StaticTable.from_metadata": frozenset(),  # StaticTable.from_metadata({path}).scan().to_pandas()
    "ds.dataset": frozenset({"format", "partitioning", "ignore_prefixes"}),  # ds.dataset({path}, format='csv', partitioning='hive')
    "duckdb.read_parquet": frozenset({"hive_partitioning", "union_by_name"}),
    "duckdb.read_csv": frozenset({"hive_partitioning", "union_by_name", "header"}),
}
ROW_LIMITED = frozenset({"pd.read_csv", "pd.read_fwf", "pd.read_excel"})  # readers that take nrows
# method post-steps: name -> (positional argument count, keyword names)
METHODS: dict[str, tuple[int, frozenset[str]]] = {
    "getroot": (0, frozenset()),
    "varget": (1, frozenset()),
    "splitlines": (0, frozenset()),
    "droplevel": (1, frozenset({"axis"})),
    "rename_axis": (1, frozenset()),
    "reset_index": (0, frozenset({"name"})),
    "to_pandas": (0, frozenset()),  # a Delta table, an Iceberg scan, an Arrow table
    "to_table": (0, frozenset()),  # a pyarrow dataset
    "scan": (0, frozenset()),  # an Iceberg table
    "to_pyarrow_dataset": (0, frozenset()),  # a Delta table too big for memory: DuckDB scans it batch by batch
    "to_arrow_batch_reader": (0, frozenset()),  # an Iceberg scan too big for memory, likewise
}
_FORMATS = ("parquet", "csv")
_FILTER_OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")
_ENGINES = ("c", "python")
_LITERAL_TYPES = (str, int, float, bool, type(None))


class HintRefused(ValueError):
    """A load hint that is not of the safe form; the message says what was refused."""


@dataclass(frozen=True)
class Arg:
    """One argument: its keyword (None when positional), its literal value, and its text as written."""

    name: str | None
    value: Any
    text: str


@dataclass(frozen=True)
class Step:
    """A post-step: a method call (`.splitlines()`), an index (`[0]`), a column slice (`.iloc[:, 1:-1]`) or
    `pd.json_normalize(...)` around what came before."""

    kind: str  # method | index | columns | normalize
    name: str = ""
    args: tuple[Arg, ...] = ()


@dataclass(frozen=True)
class LoadHint:
    """A reader of READERS, its arguments after the path, and the post-steps, in order."""

    reader: str
    args: tuple[Arg, ...] = ()
    steps: tuple[Step, ...] = field(default=())

    def kwargs(self) -> dict[str, Any]:
        """Return the keyword arguments as values."""
        return {a.name: a.value for a in self.args if a.name is not None}

    def render(self) -> str:
        """Return the hint's text, with the `{path}` placeholder (what the prompts show)."""
        return render(self)


def parse(text: str) -> LoadHint:
    """Read a stored hint into a LoadHint, or raise HintRefused naming what is not allowed. Nothing is evaluated."""
    if not isinstance(text, str) or not text.strip():
        raise HintRefused("an empty load hint")
    if len(text) > MAX_HINT_CHARS:
        raise HintRefused(f"a load hint of {len(text):,} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise HintRefused(f"a load hint that is not an expression ({exc.msg})") from None
    reader, args, steps = _chain(tree.body, text)
    return LoadHint(reader, tuple(args), tuple(steps))


def render(hint: LoadHint) -> str:
    """Return the text of a hint: what parse() read, in the form the profilers write."""
    path = "str({path})" if hint.reader == "cdflib.CDF" else "{path}"
    inner = ", ".join([path] + [_arg_text(a) for a in hint.args])
    if hint.reader in ("open", "gzip.open"):
        out = f"{hint.reader}({inner}).read()"
    elif hint.reader == "json.load":
        out = f"json.load(open({inner}))"
    else:
        out = f"{hint.reader}({inner})"
    for step in hint.steps:
        if step.kind == "normalize":
            out = f"pd.json_normalize({out})"
        elif step.kind == "index":
            out += f"[{step.args[0].text}]"
        elif step.kind == "columns":
            out += f".iloc[:, {step.args[0].text}:{step.args[1].text}]"
        else:
            out += f".{step.name}({', '.join(_arg_text(a) for a in step.args)})"
    return out


def _arg_text(a: Arg) -> str:
    return a.text if a.name is None else f"{a.name}={a.text}"


def run(hint: LoadHint, path: str | Path, nrows: int | None = None, max_chars: int | None = None,
        overrides: dict[str, Any] | None = None, members: list[Path] | None = None) -> Any:
    """Load path the way the hint says, calling the allow-listed reader directly (never eval).

    nrows caps the rows a row-limited reader reads (a preview); max_chars caps what a text reader reads.
    overrides: keyword arguments dslake itself adds (the hint checker's dtype=str), never from a catalog.
    members: a dataset's checked member files (member_reads.member_files), read instead of its folder; a folder
    reader given no members reads a single file only. A table is opened through table_io.py (the FileIO dslake
    picks, nothing read outside the table's folder).
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a DtypeWarning is not a failure of the hint
        value = _read(hint, str(path), nrows, max_chars, overrides or {}, members)
        for step in hint.steps:
            value = _apply(step, value)
    return value


def _read(hint: LoadHint, path: str, nrows: int | None, max_chars: int | None, overrides: dict[str, Any],
          members: list[Path] | None = None) -> Any:
    kw = {**hint.kwargs(), **overrides}
    reader = hint.reader
    if reader in FOLDER_READERS and members is not None:
        return read_members(reader, kw, Path(path), members)
    if reader in FOLDER_READERS and not os.path.isfile(path):
        # pyarrow and DuckDB would list the folder (or glob) themselves and follow the links inside it
        raise MemberRefused(f"{reader} of {path}, not a file: dslake reads a dataset from its catalog members")
    if reader.startswith("pd."):
        import pandas as pd

        if nrows is not None and reader in ROW_LIMITED:
            kw["nrows"] = min(nrows, kw.get("nrows") or nrows)
        elif nrows is not None and reader == "pd.read_json" and kw.get("lines"):
            kw["nrows"] = nrows
        return getattr(pd, reader[3:])(path, **kw)
    if reader == "np.load":
        import numpy as np

        return np.load(path, allow_pickle=False)
    if reader == "open":
        with open(path, encoding=kw.get("encoding")) as handle:  # noqa: PTH123 - the hint's own form
            return handle.read(-1 if max_chars is None else max_chars)
    if reader == "gzip.open":
        import gzip

        with gzip.open(path, "rt", encoding=kw.get("encoding")) as handle:
            return handle.read(-1 if max_chars is None else max_chars)
    if reader == "json.load":
        import json

        with open(path, encoding=kw.get("encoding")) as handle:  # noqa: PTH123
            return json.load(handle)
    if reader == "xml.etree.ElementTree.parse":
        import xml.etree.ElementTree as ElementTree

        return ElementTree.parse(path)  # noqa: S314 - the standard parser resolves no external entities
    if reader == "cdflib.CDF":
        import cdflib

        return cdflib.CDF(path)
    return _read_table(reader, path, kw)


def _read_table(reader: str, path: str, kw: dict[str, Any]) -> Any:
    """Open a table format or a lazy engine relation (the readers after cdflib in READERS)."""
    if reader == "DeltaTable":
        from dslake_index.table_io import open_delta

        return open_delta(path, version=kw.get("version"))
    if reader == "StaticTable.from_metadata":
        from dslake_index.table_io import open_iceberg

        return open_iceberg(path)
    if reader == "ds.dataset":
        import pyarrow.dataset as ds

        return ds.dataset(path, format=kw.get("format", "parquet"), partitioning=kw.get("partitioning"),
                          ignore_prefixes=kw.get("ignore_prefixes", [".", "_"]))
    if reader in ("duckdb.read_parquet", "duckdb.read_csv"):
        import duckdb

        return getattr(duckdb, reader[7:])(path, **kw)
    raise HintRefused(f"the reader {reader!r} is not allowed")  # a LoadHint built by hand, not by parse()


def _apply(step: Step, value: Any) -> Any:
    if step.kind == "index":
        return value[step.args[0].value]
    if step.kind == "columns":
        return value.iloc[:, step.args[0].value:step.args[1].value]
    if step.kind == "normalize":
        import pandas as pd

        return pd.json_normalize(value)
    if step.kind != "method" or step.name not in METHODS:
        raise HintRefused(f"the step {step.kind} {step.name!r} is not allowed")
    if step.name == "splitlines" and not isinstance(value, str):
        raise HintRefused(f"splitlines() of a {type(value).__name__}")
    positional = [a.value for a in step.args if a.name is None]
    keywords = {a.name: a.value for a in step.args if a.name is not None}
    return getattr(value, step.name)(*positional, **keywords)  # the name is one of METHODS


# ---- parsing: the syntax tree is read, never compiled ----

def _dotted(node: ast.AST) -> str | None:
    """Return 'pd.read_csv' for the name or attribute chain pd.read_csv, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_path(node: ast.AST) -> bool:
    return (isinstance(node, ast.Set) and len(node.elts) == 1 and isinstance(node.elts[0], ast.Name)
            and node.elts[0].id == "path")


def _what(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name is None and isinstance(node.func, ast.Attribute):
            name = f".{node.func.attr}()"
        return f"a call of {name or type(node.func).__name__}"
    return f"a {type(node).__name__} expression"


def _chain(node: ast.AST, source: str) -> tuple[str, list[Arg], list[Step]]:
    """Read a reader call and the steps after it (innermost first)."""
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, ast.Attribute) and node.value.attr == "iloc":
            reader, args, steps = _chain(node.value.value, source)
            return reader, args, [*steps, _columns(node.slice, source)]
        reader, args, steps = _chain(node.value, source)
        key = _literal(node.slice, source, "an index")
        if not isinstance(key.value, (int, str)) or isinstance(key.value, bool):
            raise HintRefused(f"an index {key.text} (only a number or a name)")
        return reader, args, [*steps, Step("index", args=(key,))]
    if not isinstance(node, ast.Call):
        raise HintRefused(_what(node) + " (only an allow-listed reader with literal arguments is run)")
    name = _dotted(node.func)
    if name == "pd.json_normalize":
        if len(node.args) != 1 or node.keywords:
            raise HintRefused("pd.json_normalize with other than one argument")
        reader, args, steps = _chain(node.args[0], source)
        return reader, args, [*steps, Step("normalize")]
    if name in READERS and name not in ("open", "gzip.open"):
        return name, *_reader(name, node, source)
    if isinstance(node.func, ast.Attribute):
        inner = node.func.value
        if node.func.attr == "read" and isinstance(inner, ast.Call) and _dotted(inner.func) in ("open", "gzip.open"):
            if node.args or node.keywords:
                raise HintRefused(".read() with arguments")
            reader = _dotted(inner.func)
            return reader, *_reader(reader, inner, source)
        if node.func.attr in METHODS:
            reader, args, steps = _chain(inner, source)
            return reader, args, [*steps, _method(node, source)]
    raise HintRefused(_what(node) + " (not an allowed reader or step)")


def _reader(name: str, node: ast.Call, source: str) -> tuple[list[Arg], list[Step]]:
    """Read the arguments of an allowed reader: the path placeholder first, then allow-listed literals."""
    given = list(node.args)
    if name == "json.load":  # json.load(open({path}[, encoding=...])): the open is the reader's own
        if len(given) != 1 or node.keywords or not isinstance(given[0], ast.Call) or _dotted(given[0].func) != "open":
            raise HintRefused("json.load of other than open({path})")
        node, given = given[0], list(given[0].args)
    if name == "cdflib.CDF":
        first = given[0] if given else None
        if not (isinstance(first, ast.Call) and _dotted(first.func) == "str" and len(first.args) == 1
                and not first.keywords and _is_path(first.args[0])):
            raise HintRefused("cdflib.CDF of other than str({path})")
        given[0] = first.args[0]
    if not given or not _is_path(given[0]):
        raise HintRefused(f"{name} whose first argument is not the {{path}} placeholder")
    args: list[Arg] = []
    if name == "gzip.open":
        mode = _literal(given[1], source, "a mode") if len(given) == 2 else None
        if mode is None or mode.value != "rt":
            raise HintRefused("gzip.open in other than mode 'rt'")
        args.append(mode)
    elif len(given) > 1:
        raise HintRefused(f"{name} with a positional argument after the path")
    for kw in node.keywords:
        if kw.arg is None or kw.arg not in READERS[name]:
            raise HintRefused(f"the argument {kw.arg or '**'}= of {name}")
        value = _skip_lines(kw.value, source) if kw.arg == "skiprows" else None
        value = _text_columns(kw.value, source) if kw.arg == "dtype" else value
        value = _filters(kw.value, source) if kw.arg == "filters" else value
        arg = value or _literal(kw.value, source, f"{kw.arg}=")
        _check_value(name, Arg(kw.arg, arg.value, arg.text))
        args.append(Arg(kw.arg, arg.value, arg.text))
    return args, []


def _check_value(reader: str, arg: Arg) -> None:
    if reader == "np.load" and arg.value is not False:
        raise HintRefused("np.load with allow_pickle other than False")
    if arg.name == "engine" and arg.value not in _ENGINES:
        raise HintRefused(f"engine={arg.text}")
    if arg.name in ("encoding", "sep", "comment", "decimal", "thousands", "typ", "name") \
            and not isinstance(arg.value, str):
        raise HintRefused(f"{arg.name}={arg.text} (not a string)")
    if arg.name == "format" and arg.value not in _FORMATS:
        raise HintRefused(f"format={arg.text}")
    if arg.name == "partitioning" and arg.value != "hive":
        raise HintRefused(f"partitioning={arg.text} (only 'hive')")
    if arg.name == "version" and (type(arg.value) is not int or arg.value < 0):
        raise HintRefused(f"version={arg.text} (not a table version)")
    if (arg.name in ("hive_partitioning", "union_by_name") or (arg.name == "header" and reader.startswith("duckdb.")))\
            and type(arg.value) is not bool:
        raise HintRefused(f"{arg.name}={arg.text} (not True or False)")
    if arg.name == "ignore_prefixes" and not (isinstance(arg.value, list)
                                              and all(isinstance(c, str) and c for c in arg.value)):
        raise HintRefused(f"ignore_prefixes={arg.text} (not a list of names)")
    if arg.name == "columns" and not (isinstance(arg.value, list) and all(isinstance(c, str) for c in arg.value)):
        raise HintRefused(f"columns={arg.text} (not a list of names)")


def _method(node: ast.Call, source: str) -> Step:
    name = node.func.attr  # type: ignore[attr-defined]
    count, keywords = METHODS[name]
    if len(node.args) != count:
        raise HintRefused(f".{name}() with {len(node.args)} positional argument(s)")
    args = [_literal(a, source, f"an argument of .{name}()") for a in node.args]
    for kw in node.keywords:
        if kw.arg not in keywords:
            raise HintRefused(f"the argument {kw.arg or '**'}= of .{name}()")
        lit = _literal(kw.value, source, f"{kw.arg}=")
        args.append(Arg(kw.arg, lit.value, lit.text))
    return Step("method", name, tuple(args))


def _columns(node: ast.AST, source: str) -> Step:
    """`.iloc[:, a:b]`: all rows, a literal column slice (a markdown table's border columns left out)."""
    if not (isinstance(node, ast.Tuple) and len(node.elts) == 2 and isinstance(node.elts[0], ast.Slice)
            and node.elts[0].lower is node.elts[0].upper is node.elts[0].step is None
            and isinstance(node.elts[1], ast.Slice) and node.elts[1].step is None):
        raise HintRefused(".iloc other than [:, a:b]")
    bounds = []
    for bound in (node.elts[1].lower, node.elts[1].upper):
        lit = Arg(None, None, "") if bound is None else _literal(bound, source, "a column bound")
        if lit.value is not None and (not isinstance(lit.value, int) or isinstance(lit.value, bool)):
            raise HintRefused(f"a column bound {lit.text}")
        bounds.append(lit)
    return Step("columns", args=tuple(bounds))


def _skip_lines(node: ast.AST, source: str) -> Arg | None:
    """`[*range(N), N + 1]` as the markdown profiler writes it, as the list it stands for; None if not that form."""
    if not isinstance(node, ast.List) or not any(isinstance(e, ast.Starred) for e in node.elts):
        return None
    values: list[int] = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            call = e.value
            if not (isinstance(call, ast.Call) and _dotted(call.func) == "range" and len(call.args) == 1
                    and not call.keywords and isinstance(call.args[0], ast.Constant)
                    and type(call.args[0].value) is int and 0 <= call.args[0].value <= MAX_RANGE):
                raise HintRefused("skiprows with other than [*range(N), ...]")
            values += range(call.args[0].value)
        elif isinstance(e, ast.Constant) and type(e.value) is int:
            values.append(e.value)
        else:
            raise HintRefused("skiprows with other than whole numbers")
    return Arg(None, values, ast.get_source_segment(source.strip(), node) or "")


def _filters(node: ast.AST, source: str) -> Arg:
    """`filters=[('year', '=', 2024), ...]` (pyarrow's partition filters): (name, operator, literal) triples."""
    if not isinstance(node, ast.List) or not node.elts:
        raise HintRefused("filters= other than a list of (column, operator, value)")
    triples = []
    for e in node.elts:
        if not isinstance(e, ast.Tuple) or len(e.elts) != 3:
            raise HintRefused("filters= other than a list of (column, operator, value)")
        name, op, value = (_literal(x, source, "a filter") for x in e.elts)
        if not isinstance(name.value, str) or op.value not in _FILTER_OPS:
            raise HintRefused(f"a filter ({name.text}, {op.text}, …)")
        triples.append((name.value, op.value, value.value))
    return Arg(None, triples, ast.get_source_segment(source.strip(), node) or "")


def _text_columns(node: ast.AST, source: str) -> Arg:
    """`dtype={'zip': str, ...}` as the profilers write it for codes with leading zeros: column names to str."""
    if not (isinstance(node, ast.Dict) and node.keys
            and all(isinstance(k, ast.Constant) and type(k.value) in (str, int) for k in node.keys)
            and all(isinstance(v, ast.Name) and v.id == "str" for v in node.values)):
        raise HintRefused("dtype= other than {column: str, ...}")
    columns = {k.value: str for k in node.keys}  # type: ignore[union-attr]
    return Arg(None, columns, ast.get_source_segment(source.strip(), node) or "")


def _literal(node: ast.AST, source: str, what: str) -> Arg:
    """A literal (string, number, True/False/None, or a list or tuple of them), read without evaluating."""
    try:
        value = ast.literal_eval(node)  # reads literals only; it calls nothing
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise HintRefused(f"{what} that is not a literal ({_what(node)})") from None
    if not _plain(value):
        raise HintRefused(f"{what} of type {type(value).__name__}")
    return Arg(None, value, ast.get_source_segment(source.strip(), node) or repr(value))


def _plain(value: Any, depth: int = 0) -> bool:
    if isinstance(value, _LITERAL_TYPES):
        return True
    if isinstance(value, (list, tuple)) and depth == 0:
        return all(_plain(v, 1) for v in value)
    return False
