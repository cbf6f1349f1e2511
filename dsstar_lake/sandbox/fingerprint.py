"""Size/mtime fingerprint of a lake, to notice when a script without bwrap changed it."""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from collections.abc import Iterable
from pathlib import Path

Stamp = tuple[bool, int, int, int, int]  # is_dir, size, mtime_ns, ctime_ns, inode
MAX_REPORTED = 100
# SQLite's side files. The wal-index (-shm) changes whenever any connection reads (read marks), so it says nothing
# about content. The write-ahead log (-wal) and a rollback journal (-journal) are content: a commit left in the
# -wal, or a hot -journal, is what the next connection reads. Only commits write them; opening and closing a
# connection just creates or removes an empty one. Their ctime is noise too: SQLite run as root chowns them to the
# database's owner on every open. So they are stamped by size, mtime and a digest of their bytes.
SQLITE_INDEX = "-shm"
SQLITE_CONTENT = ("-wal", "-journal")
EMPTY: Stamp = (False, 0, 0, 0, 0)
DIGEST_WHOLE = 8 << 20  # ~10 ms; a larger log is digested by its header and last MiB (appends change its size)


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


def catalog_stamps(folder: Path, stamps: dict[str, Stamp]) -> dict[str, Stamp]:
    """Return a catalog folder's stamps fit to compare across a script's run.

    The wal-index is left out; an empty -wal or -journal is the same as none, so a reader elsewhere (`dslake
    serve`, a search) that opens and closes the manifest while a script runs is not tampering; a commit by the
    script (a non-empty -wal that appeared, grew or was rewritten, even with its mtime set back) is. Every file
    gets both side names, so a -wal that goes from none to full is a changed stamp, never a name one walk saw
    and the other did not (which `changed` forgives when the folder's times did not move).
    """
    out = {k: v for k, v in stamps.items() if not k.endswith(SQLITE_INDEX)}
    for key, stamp in list(out.items()):
        if key.endswith(SQLITE_CONTENT):
            out[key] = EMPTY if stamp[0] or stamp[1] == 0 else _content_stamp(folder / key, stamp)
        elif not stamp[0]:
            for suffix in SQLITE_CONTENT:
                out.setdefault(key + suffix, EMPTY)
    return out


def with_side_files(paths: Iterable[Path]) -> list[Path]:
    """Return paths and SQLite's side files of each: a database dslake writes while scripts run has them too."""
    return [Path(f"{p}{suffix}") for p in paths for suffix in ("", SQLITE_INDEX, *SQLITE_CONTENT)]


def _content_stamp(path: Path, stamp: Stamp) -> Stamp:
    """Stamp a SQLite log by size, mtime, inode and a digest of its bytes in place of the ctime.

    The catalog is the script's to write without bwrap: the name may now be a link, a FIFO or a device, so it is
    opened without following links or blocking, and read only up to the size stat gave. Anything but a regular
    file keeps its own stamp (which differs from the log's that was there before).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return stamp
    digest = hashlib.blake2b(digest_size=8)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return stamp
        size = stamp[1]
        spans = [(0, size)] if size <= DIGEST_WHOLE else [(0, 4096), (size - (1 << 20), 1 << 20)]
        for start, length in spans:
            for at in range(start, start + length, 1 << 20):
                digest.update(os.pread(fd, min(1 << 20, start + length - at), at))
    except OSError:
        return stamp
    finally:
        os.close(fd)
    return (False, stamp[1], stamp[2], int.from_bytes(digest.digest(), "big"), stamp[4])


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
