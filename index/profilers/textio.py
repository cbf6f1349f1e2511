"""Bytes to text for profilers: read a bounded head, sniff magic bytes, pick an encoding, count lines."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from dslake_index.profilers.base import ProfileError

# Magic bytes of formats we recognise by content, whatever the extension says.
MAGIC: list[tuple[bytes, str]] = [
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # empty zip archive
    (b"PAR1", "parquet"),
    (b"\x1f\x8b", "gzip"),
    (b"\x93NUMPY", "npy"),
    (b"\xcd\xf3\x00\x01", "cdf"),
    (b"\xcd\xf2\x60\x02", "cdf"),
    (b"\xcc\xcc\x00\x01", "cdf"),
    (b"\x0e\xd6\x96\x0e\xfe\xa5\x00\x00", "cdf"),
    (b"\x89HDF\r\n\x1a\n", "hdf5"),
    (b"CDF\x01", "netcdf"),
    (b"CDF\x02", "netcdf"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole2"),  # old .xls / .doc
    (b"%PDF", "pdf"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF8", "gif"),
    (b"SQLite format 3\x00", "sqlite"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"(\xb5/\xfd", "zstd"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"ARROW1", "arrow"),
    (b"Obj\x01", "avro"),
]


_TEXT_BYTES = bytes([9, 10, 12, 13, 27]) + bytes(range(32, 256))
_ASCII = bytes(range(128))
# The share of bytes above 0x7f from which a head that holds control bytes and is not UTF-8 is binary (random bytes:
# one half; Latin-1 text: its accented letters, a few in a hundred).
NON_ASCII_SHARE = 0.3


def read_head(path: Path, n: int) -> bytes:
    """Return the first n bytes of a file, as ProfileError when the file cannot be read at all."""
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except FileNotFoundError as exc:
        raise ProfileError("file vanished before it could be read", kind="changed") from exc
    except PermissionError as exc:
        raise ProfileError(f"permission denied: {exc.strerror}", kind="unreadable") from exc
    except IsADirectoryError as exc:
        raise ProfileError("is a folder, not a file", kind="changed") from exc
    except OSError as exc:
        raise ProfileError(f"cannot read: {exc.strerror or exc}", kind="unreadable") from exc


def read_at(path: Path, offset: int, n: int) -> bytes:
    """Return n bytes of a file from offset."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(n)


def sniff_magic(head: bytes) -> str | None:
    """Return the kind of a known binary format from its first bytes, or None."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return None


def looks_binary(head: bytes) -> bool:
    """Return True when the bytes are not text: NUL bytes, many control characters, or control characters among
    many bytes above 0x7f that are not UTF-8."""
    sample = head[:65536]
    if not sample:
        return False
    if sample.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if b"\x00" in sample:
        return True
    control = len(sample.translate(None, _TEXT_BYTES))  # what is left after deleting text bytes
    if control > max(2, len(sample) // 100):
        return True
    # A small file of random bytes can hold too few control bytes for the share above (a 32-byte one did, one time
    # in three). Text in a one-byte code page (Cyrillic cp1251: most letters above 0x7f, not UTF-8 either) holds no
    # control byte, and Latin-1 text few bytes above 0x7f: control bytes among many such bytes that are not UTF-8
    # say binary.
    if not control or len(sample.translate(None, _ASCII)) < NON_ASCII_SHARE * len(sample):
        return False
    return not _decodes(sample, "utf-8", final=False)


def _decodes(data: bytes, encoding: str, final: bool) -> bool:
    try:
        codecs.getincrementaldecoder(encoding)().decode(data, final=final)
        return True
    except UnicodeDecodeError:
        return False


def _whole_file_is_utf8(path: Path, skip: int) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as fh:
            fh.seek(skip)
            while chunk := fh.read(1 << 22):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        return True
    except UnicodeDecodeError:
        return False


def detect_encoding(path: Path | None, head: bytes, size: int, max_full: int) -> tuple[str, list[str]]:
    """Pick the encoding pandas should use (utf-8, utf-8-sig, utf-16, cp1252 or latin-1) and notes on it."""
    if head.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", ["text is UTF-16 (byte-order mark): pass encoding='utf-16'"]
    else:
        encoding = "utf-8"
    whole = len(head) >= size
    ok = _decodes(head, "utf-8-sig", final=whole)
    if ok and not whole and path is not None and size <= max_full:
        # a stray byte past the head would make pandas fail, so check the whole (bounded) file
        ok = _whole_file_is_utf8(path, len(head) - (len(head) % 4096))
    if ok:
        notes = [] if whole or size <= max_full else ["encoding checked on the head of the file only"]
        return encoding, notes
    if any(0x80 <= b <= 0x9F for b in head) and _decodes(head, "cp1252", final=True):
        # bytes 0x80-0x9f are printable only in Windows-1252 (curly quotes, dashes, euro sign)
        return "cp1252", ["text is not valid UTF-8; it decodes as Windows-1252 (cp1252): pass encoding='cp1252'"]
    return "latin-1", ["text is not valid UTF-8; decoded as latin-1: pass encoding='latin-1'"]


def decode_head(head: bytes, encoding: str, whole: bool) -> str:
    """Decode the head, dropping a character cut at the end and the last partial line when not whole."""
    text = codecs.getincrementaldecoder(encoding)(errors="replace").decode(head, final=whole)
    if not whole:
        cut = text.rfind("\n")
        text = text[: cut + 1] if cut >= 0 else text
    return text


def count_lines(path: Path, size: int) -> int:
    """Count physical lines by streaming the file in binary (a last line without newline counts)."""
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (1 if size and last != b"\n" else 0)


def printable(text: str, limit: int) -> str:
    """Return text with control characters replaced, cut to limit characters (between words when a space or line
    break falls in the last half: a sample that ends 'Acceleration e' reads as a word of its own)."""
    out = "".join(ch if ch.isprintable() or ch in "\n\t" else "\ufffd" for ch in word_head(text, limit))
    return out + ("…" if len(text) > limit else "")


def word_head(text: str, limit: int) -> str:
    """Return the first limit characters of text, ending before a word cut in half when a space or line break falls
    in the last half (the text itself when it fits)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace():
        space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if space >= limit // 2:
            head = head[:space]
    return head.rstrip()


def clip(text: str, limit: int) -> str:
    """Return text whole when it fits, else cut at a word boundary with a visible mark of the cut."""
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 12)]
    if " " in cut[len(cut) // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + " … [cut]"


def file_size(path: Path) -> int:
    """Return the size of a file, as ProfileError when it cannot be stat'ed."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError as exc:
        raise ProfileError("file vanished before it could be read", kind="changed") from exc
    except OSError as exc:
        raise ProfileError(f"cannot stat: {exc.strerror or exc}", kind="unreadable") from exc
