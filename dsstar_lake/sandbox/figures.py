"""Figures a script saved in its work folder: real images by extension and first bytes, read without links."""

from __future__ import annotations

from pathlib import Path

from dsstar_lake.sandbox.workfolder import read_regular

# What a script may save as a figure, by extension, with the bytes such a file starts with.
IMAGE_MAGIC = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",),
               ".gif": (b"GIF87a", b"GIF89a"), ".svg": (b"<svg", b"<?xml")}
MAX_FIGURE_BYTES = 8 * 1024 * 1024


def read_figure(work: Path, name: str) -> bytes | None:
    """Return the bytes of work/name when it is a regular image file (never a link), else None."""
    suffix = Path(name).suffix.lower()
    magic = IMAGE_MAGIC.get(suffix)
    if magic is None:
        return None
    data = read_regular(work, name, MAX_FIGURE_BYTES)
    if not data:
        return None
    if suffix == ".svg":
        return data if b"<svg" in data[:1024] else None  # an SVG's tag may follow an XML prolog or a comment
    return data if data.startswith(magic) else None
