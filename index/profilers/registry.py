"""Pick a profiler by sniffed content and extension; bad content falls back to a generic profile, never a crash.

Every profile leaves here with its secrets redacted (profilers/redaction.py): this is the one place a file's
words enter the catalog, so no description, card, vector or prompt can show a password the file holds.
"""

from __future__ import annotations

import gzip
import zipfile
import zlib
from pathlib import Path

from dslake_index.profilers.base import Limits, Profile, ProfileError
from dslake_index.profilers.fallback import DETECTED, binary_profile, empty_profile, text_fallback
from dslake_index.profilers.redaction import redact_profile
from dslake_index.profilers.textio import decode_head, file_size, looks_binary, read_head, sniff_magic

DELIMITED_EXT = {".csv", ".tsv", ".tab", ".psv", ".ssv"}
EXCEL_EXT = {".xlsx", ".xlsm"}
JSON_EXT = {".json", ".geojson"}
JSONL_EXT = {".jsonl", ".ndjson"}
PARQUET_EXT = {".parquet", ".pq"}
MD_EXT = {".md", ".markdown"}
HTML_EXT = {".html", ".htm", ".xhtml"}
XML_EXT = {".xml", ".kml", ".gpx", ".svg"}
# formats whose content is binary by definition: random bytes there are corrupt data, not "some binary file"
BINARY_EXT = EXCEL_EXT | PARQUET_EXT | {".npz", ".npy", ".cdf"}
TEXTUAL_EXT = DELIMITED_EXT | JSON_EXT | JSONL_EXT | MD_EXT | HTML_EXT | XML_EXT | {".txt", ".dat", ".text"}


def profile_path(path: Path, limits: Limits) -> Profile:
    """Profile one file; raise ProfileError only when it cannot be read or is corrupt data of a known format."""
    path = Path(path)
    size = file_size(path)
    head = read_head(path, limits.head_bytes)
    if size == 0 or not head:
        return empty_profile()
    ext = path.suffix.lower()
    kind = sniff_magic(head)
    try:
        prof = _dispatch(path, head, size, ext, kind, limits)
    except (ProfileError, MemoryError):
        raise
    except FileNotFoundError as exc:
        raise ProfileError("file vanished while it was being profiled", kind="changed") from exc
    except PermissionError as exc:
        raise ProfileError(f"permission denied: {exc.strerror}", kind="unreadable") from exc
    except Exception as exc:  # a profiler that trips on odd content must not lose the file: describe it generically
        reason = f"the format profiler could not read it ({type(exc).__name__}: {str(exc)[:160]})"
        if looks_binary(head):
            prof = binary_profile(head, size, kind, [reason])
        else:
            prof = text_fallback(decode_head(head, "utf-8", len(head) >= size), size, None, [reason])
    prof.size = size
    return redact_profile(prof, path.name)


def _zip_names(path: Path) -> list[str] | None:
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError):
        return None  # RuntimeError: encrypted; NotImplementedError: an unsupported zip version or method


def _dispatch(path: Path, head: bytes, size: int, ext: str, kind: str | None, limits: Limits) -> Profile:
    from dslake_index.profilers import arrays, delimited, excel, jsonfile, markup, parquet, text

    if kind == "zip":
        names = _zip_names(path)
        if names is None:
            if ext in BINARY_EXT:
                raise ProfileError(f"corrupt zip container: {ext} file cannot be opened as a zip archive")
            return binary_profile(head, size, kind, ["corrupt or truncated zip archive"])
        if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
            prof = excel.profile_xlsx(path, size, limits)
            if ext not in EXCEL_EXT:
                prof.notes.insert(0, f"the content is an Excel workbook although the extension is '{ext}'")
            return prof
        if names and all(n.endswith(".npy") for n in names):
            return arrays.profile_npz(path, size, limits)
        if ext in EXCEL_EXT:
            raise ProfileError("zip archive without an Excel workbook in it (no xl/ part)")
        if ext == ".npz":
            raise ProfileError("zip archive that holds files other than .npy arrays")
        prof = binary_profile(head, size, kind)
        prof.format = "zip"
        prof.structure["members"] = names[:50]
        prof.notes.append(f"zip archive with {len(names)} member(s): read with zipfile.ZipFile")
        return prof
    if kind == "parquet":
        return parquet.profile_parquet(path, size, limits)
    if kind == "npy":
        return arrays.profile_npy(path, size, limits)
    if kind == "cdf":
        return arrays.profile_cdf(path, size, limits)
    if kind == "gzip":
        return _profile_gzip(path, head, size, limits)
    if ext in BINARY_EXT and (kind is not None or looks_binary(head)):
        what = DETECTED.get(kind or "", "unrecognised binary data")
        raise ProfileError(f"not a valid {ext} file: the content is {what}")
    if kind is not None or looks_binary(head):
        notes = [f"the extension '{ext}' suggests text, but the content is binary"] if ext in TEXTUAL_EXT else []
        if kind == "ole2" and ext == ".xls":
            notes.append("old binary Excel (.xls): pandas.read_excel needs the xlrd package, which is not installed")
        return binary_profile(head, size, kind, notes)
    start = head[:512].decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n").lower()
    if ext in BINARY_EXT:
        prof = _profile_text_by_content(path, head, size, ext, start, limits)
        prof.notes.insert(0, f"the extension is '{ext}' but the content is text")
        return prof
    if ext in DELIMITED_EXT:
        return delimited.profile_delimited(path, head, size, limits, ext)
    if ext in JSONL_EXT:
        return jsonfile.profile_jsonl(path, head, size, limits)
    if ext in JSON_EXT:
        return jsonfile.profile_json(path, head, size, limits)
    if ext in MD_EXT:
        return text.profile_markdown(path, head, size, limits)
    if ext in HTML_EXT:
        return markup.profile_html(path, head, size, limits)
    if ext in XML_EXT:
        return markup.profile_xml(path, head, size, limits)
    return _profile_text_by_content(path, head, size, ext, start, limits)


def _profile_text_by_content(path: Path, head: bytes, size: int, ext: str, start: str, limits: Limits) -> Profile:
    from dslake_index.profilers import delimited, jsonfile, markup, text

    if start.startswith("<?xml") and "<html" not in start:
        return markup.profile_xml(path, head, size, limits)
    if start.startswith(("<!doctype html", "<html")):
        return markup.profile_html(path, head, size, limits)
    if start.startswith(("{", "[")) and ext not in text.CODE_EXT:
        prof = jsonfile.profile_json(path, head, size, limits)
        if prof.format in ("json", "jsonl"):
            return prof
    if ext not in text.CODE_EXT:
        lines = head[:65536].decode("utf-8", errors="replace").splitlines()[:200]
        sep, fields, share = delimited.sniff_delimiter(lines, ext)
        if sep != delimited.WHITESPACE and fields >= 2 and share >= 0.9 and len(lines) >= 3:
            return delimited.profile_delimited(path, head, size, limits, ext)
    return text.profile_text(path, head, size, limits, ext)


def _profile_gzip(path: Path, head: bytes, size: int, limits: Limits) -> Profile:
    """Profile a gzip file by its decompressed head (delimited text or plain text), or describe it as binary."""
    from dslake_index.profilers import delimited

    try:
        with gzip.open(path, "rb") as fh:
            inner = fh.read(limits.head_bytes)
            whole = not fh.read(1)
    except (OSError, EOFError, zlib.error) as exc:
        return binary_profile(head, size, "gzip", [f"corrupt gzip data: {exc}"])
    inner_name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    note = f"gzip-compressed {inner_name}; pandas decompresses it (compression inferred from '.gz')"
    if not inner or looks_binary(inner):
        prof = binary_profile(inner or head, size, None, [note])
        prof.format = "gzip"
        return prof
    inner_ext = Path(inner_name).suffix.lower()
    lines = inner[:65536].decode("utf-8", errors="replace").splitlines()[:200]
    sep, fields, share = delimited.sniff_delimiter(lines, inner_ext)
    if inner_ext in DELIMITED_EXT or (fields >= 2 and share >= 0.9):
        inner_size = len(inner) if whole else len(inner) + 1
        prof = delimited.profile_delimited(None, inner, inner_size, limits, inner_ext, extra_notes=[note])
        prof.format = f"{prof.format}.gz"
        prof.sampled = prof.sampled or not whole
        if not whole:
            prof.tables[0].n_rows, prof.tables[0].n_rows_exact = None, False
        return prof
    prof = text_fallback(decode_head(inner, "utf-8", whole), size, "utf-8", [note])
    prof.format = "gzip"
    prof.read_hint = "gzip.open({path}, 'rt').read()"
    return prof
