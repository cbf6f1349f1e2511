"""The generic profile for anything no format profiler took: size, detected type, a printable head."""

from __future__ import annotations

import re

from dslake_index.profilers.base import Profile

_RUNS = re.compile(rb"[\x20-\x7e]{4,}")
HEAD_CHARS = 600

DETECTED = {
    "zip": "zip archive",
    "gzip": "gzip-compressed data",
    "hdf5": "HDF5 container (read with h5py or pandas.read_hdf)",
    "netcdf": "netCDF classic file (read with netCDF4 or xarray)",
    "ole2": "OLE2 compound document (old .xls/.doc; pandas needs xlrd for .xls)",
    "pdf": "PDF document",
    "png": "PNG image",
    "jpeg": "JPEG image",
    "gif": "GIF image",
    "sqlite": "SQLite database (read with sqlite3 or pandas.read_sql)",
    "bzip2": "bzip2-compressed data",
    "xz": "xz-compressed data",
    "zstd": "zstd-compressed data",
    "7z": "7-Zip archive",
    "arrow": "Arrow IPC file (pyarrow.ipc / pandas.read_feather)",
    "avro": "Avro container",
    "cdf": "NASA CDF file",
    "npy": "NumPy array",
    "parquet": "Parquet file",
}

# Kinds whose bytes are compressed or pixels: their printable runs are chance characters, as in random bytes.
WORDLESS_KINDS = frozenset({"gzip", "bzip2", "xz", "zstd", "7z", "png", "jpeg", "gif"})


def strings_of(head: bytes, limit: int = HEAD_CHARS) -> str:
    """Return the printable ASCII runs of binary data, like the `strings` tool, cut to limit characters."""
    text = " ".join(m.decode("ascii") for m in _RUNS.findall(head[:65536]))
    return text[:limit]


def empty_profile() -> Profile:
    """Return the profile of an empty file."""
    return Profile(format="empty", size=0, notes=["the file is empty (0 bytes)"])


def binary_profile(head: bytes, size: int, kind: str | None, notes: list[str] | None = None) -> Profile:
    """Return the profile of a binary file no profiler can read: its detected type and, where the format keeps
    words (names, metadata), its printable strings.

    Bytes of no known format (random bytes, a truncated download, an encrypted blob behind a `.csv` name) and
    compressed or image data are said to be binary, with their size and no sample: the printable runs of such bytes
    are chance characters, which a sample would pass off as the file's words in its description and card.
    """
    detected = DETECTED.get(kind or "", "unrecognised binary data")
    prof = Profile(format="binary", size=size, structure={"detected_type": detected, "magic": head[:8].hex()},
                   notes=list(notes or []))
    if kind not in DETECTED or kind in WORDLESS_KINDS:
        what = detected if kind in DETECTED else "no format dslake knows"
        prof.notes.append(f"binary content, not text ({size:,} bytes): {what}; no profiler reads it")
        return prof
    prof.notes.append(f"binary content ({detected}); no profiler reads it")
    prof.text_sample = strings_of(head) or None
    return prof


def text_fallback(text: str, size: int, encoding: str | None, notes: list[str] | None = None) -> Profile:
    """Return a plain text profile with a printable head when a format profiler could not read the text."""
    from dslake_index.profilers.textio import printable

    return Profile(format="text", size=size, encoding=encoding, text_sample=printable(text, HEAD_CHARS),
                   notes=list(notes or []), read_hint=f"open({{path}}, encoding={encoding or 'utf-8'!r}).read()")
