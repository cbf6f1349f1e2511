"""Size/mtime fingerprint of a lake, to notice when a script without bwrap changed it."""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[bool, int, int, int, int]  # is_dir, size, mtime_ns, ctime_ns, inode
MAX_REPORTED = 100


def _stamp(st: os.stat_result, is_dir: bool, with_times: bool = True) -> Stamp:
    # ctime as well as mtime: a script can reset mtime with os.utime, but not ctime.
    if not with_times:
        return (is_dir, 0, 0, 0, st.st_ino)
    return (is_dir, 0 if is_dir else st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def fingerprint(
    lake: Path,
    max_entries: int,
    skip: Iterable[Path] = (),
    watch: Iterable[Path] = (),
) -> dict[str, Stamp]:
    """Stat the lake breadth-first (top level first) up to max_entries, plus every watched path.

    skip: folders left out entirely (the script's own work folder, dslake's catalog). Their ancestors are
    still walked, but without their mtime, since creating the work folder legitimately touches it.
    """
    lake = lake.resolve()
    root = str(lake)
    skipped = {str(Path(p).resolve()) for p in skip}
    ancestors = {str(a) for p in skipped for a in Path(p).parents}
    stamps: dict[str, Stamp] = {}
    try:
        st = lake.stat()
    except OSError:
        return {}  # the lake itself is gone: every path seen before counts as changed
    stamps["."] = _stamp(st, True, root not in ancestors)
    queue: deque[str] = deque([root])
    cut = len(root) + 1
    # Plain strings rather than Path objects: this runs twice per script over thousands of entries.
    while queue and len(stamps) < max_entries:
        folder = queue.popleft()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = entry.path
            if path in skipped:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            stamps[path[cut:]] = _stamp(st, is_dir, path not in ancestors)
            if is_dir:
                queue.append(path)
            if len(stamps) >= max_entries:
                break
    for item in watch:
        path = (lake / item) if not Path(item).is_absolute() else Path(item)
        try:
            rel = str(path.relative_to(lake))
            st = path.stat()
        except (OSError, ValueError):
            continue
        stamps[rel] = _stamp(st, stat.S_ISDIR(st.st_mode), str(path) not in ancestors)
    return stamps


def changed(before: dict[str, Stamp], after: dict[str, Stamp]) -> list[str]:
    """Return lake paths that appeared, vanished or changed between two fingerprints (at most 100)."""
    out = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if old is None or new is None:
            # Seen by one walk only. If its folder's times did not move, nothing was created or deleted
            # there: the bounded walk just stopped at a different point (it shifts when an earlier entry
            # appears or vanishes).
            parent = str(Path(key).parent)
            p_old, p_new = before.get(parent), after.get(parent)
            if p_old is not None and p_old == p_new and p_old[3] != 0:
                continue
        out.append(key)
    return out[:MAX_REPORTED]
