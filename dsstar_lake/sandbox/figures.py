"""Figures a script saved in its work folder: real images by extension and first bytes, read without links."""

from __future__ import annotations

import os
from pathlib import Path

from dsstar_lake.sandbox.workfolder import read_regular

# What a script may save as a figure, by extension, with the bytes such a file starts with.
IMAGE_MAGIC = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",), ".jpeg": (b"\xff\xd8\xff",),
               ".gif": (b"GIF87a", b"GIF89a"), ".svg": (b"<svg", b"<?xml")}
MAX_FIGURE_BYTES = 8 * 1024 * 1024
MAX_FIGURES_PER_SCRIPT = 10  # kept in the run record per script: a chart loop is not an image dump
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
        ".svg": "image/svg+xml"}


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


def image_files(work: Path) -> dict[str, tuple[int, int, int]]:
    """Return the image files at the top of work (by extension, links left out): name -> (inode, size, mtime)."""
    found: dict[str, tuple[int, int, int]] = {}
    try:
        with os.scandir(work) as it:
            for entry in it:
                if Path(entry.name).suffix.lower() in IMAGE_MAGIC and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    found[entry.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        pass
    return found


def saved_figures(work: Path, before: dict[str, tuple[int, int, int]]) -> dict[str, bytes]:
    """Return the real images a script saved or rewrote in work since `before` (image_files), by name."""
    out: dict[str, bytes] = {}
    for name, seen in sorted(image_files(work).items()):
        if len(out) >= MAX_FIGURES_PER_SCRIPT:
            break
        data = read_figure(work, name) if before.get(name) != seen else None
        if data is not None:
            out[name] = data
    return out
