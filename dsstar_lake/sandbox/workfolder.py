"""The work folder is hostile ground: scripts write there, so dslake reads it without following links.

Every name in a work folder may be a link a script planted (to a host file, a lake file, the catalog's
config). dslake never writes there, and what it reads back (figures, the folder's size) is opened relative
to a descriptor of the folder with O_NOFOLLOW, so a link is never followed out of it.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NOFOLLOW_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
BUDGET_EVERY_S = 0.5  # how often the work folder's size is measured while a script runs
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_regular(folder: Path, name: str, max_bytes: int) -> bytes | None:
    """Return the bytes of folder/name when it is a regular file of at most max_bytes, else None.

    A link, a folder, a FIFO or a device (which would block or never end) is refused, not followed.
    """
    if not name or "/" in name or name in (".", ".."):
        return None
    try:
        dir_fd = os.open(folder, DIR_FLAGS)
    except OSError:
        return None
    try:
        fd = os.open(name, NOFOLLOW_READ, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_bytes + 1)
        return data if len(data) <= max_bytes else None
    finally:
        os.close(fd)


def regular_files(folder: Path) -> list[str]:
    """Return the names of the regular files at the top of folder (links and folders left out), sorted."""
    try:
        with os.scandir(folder) as it:
            return sorted(e.name for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        return []


@dataclass
class Usage:
    """What a work folder holds: bytes on disk (allocated blocks, so sparse files count as written) and entries."""

    bytes: int = 0
    files: int = 0

    @property
    def mib(self) -> float:
        """Return the bytes in MiB."""
        return self.bytes / (1024 * 1024)


def usage(folder: Path, stop_bytes: int = 0, stop_files: int = 0, skip: tuple[str, ...] = ("data",)) -> Usage:
    """Measure folder without following links; stop early once past stop_bytes or stop_files (0 = no stop).

    skip: top-level names left out (data/ is the lake's mount point or links to it, not the script's).
    """
    found = Usage()
    stack = [str(folder)]
    top = str(folder)
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            if current == top and entry.name in skip:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found.files += 1
            found.bytes += st.st_blocks * 512
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
            if (stop_files and found.files > stop_files) or (stop_bytes and found.bytes > stop_bytes):
                return found
    return found


def remove_changed_since(folder: Path, since_ns: int, skip: tuple[str, ...] = ("data",)) -> int:
    """Remove every entry of folder whose inode changed at or after since_ns (what one script wrote).

    ctime, unlike mtime, cannot be set back by a script. Folders go only once empty. Return entries removed.
    """
    removed = 0
    top = str(folder)

    def walk(path: str) -> None:
        nonlocal removed
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            return
        for entry in entries:
            if path == top and entry.name in skip:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    walk(entry.path)
                    if st.st_ctime_ns >= since_ns:
                        os.rmdir(entry.path)
                        removed += 1
                elif st.st_ctime_ns >= since_ns:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue

    walk(top)
    return removed


def clean(folder: Path, keep: Callable[[Path], bool]) -> list[str]:
    """Empty a finished run's work folder but for the top-level regular files keep() accepts; return those.

    Links are removed as links (never followed); shutil.rmtree removes sub-folders with descriptors, safe
    against links swapped in underneath.
    """
    kept = []
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return kept
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            elif entry.is_file(follow_symlinks=False) and keep(Path(entry.path)):
                kept.append(entry.name)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
    return sorted(kept)


class DiskBudget:
    """The work folder's disk and entry budget, measured while a script runs; what it wrote goes if over."""

    def __init__(self, workdir: Path, disk_mb: int, max_files: int) -> None:
        self.workdir = workdir
        self.max_bytes = max(disk_mb, 0) * 1024 * 1024
        self.max_files = max(max_files, 0)
        self.started_ns = time.time_ns()
        self.next_at = time.monotonic() + BUDGET_EVERY_S
        self.seen = Usage()
        self.removed = 0

    def check(self, force: bool = False) -> bool:
        """Return True when the folder is over budget (measured at most every BUDGET_EVERY_S unless forced)."""
        if not (self.max_bytes or self.max_files) or (not force and time.monotonic() < self.next_at):
            return False
        self.next_at = time.monotonic() + BUDGET_EVERY_S
        self.seen = usage(self.workdir, self.max_bytes, self.max_files)
        return bool((self.max_bytes and self.seen.bytes > self.max_bytes)
                    or (self.max_files and self.seen.files > self.max_files))

    def explain(self) -> str:
        """Remove what the stopped script wrote, and say so in words the debugger can act on."""
        self.removed = remove_changed_since(self.workdir, self.started_ns)
        return (f"\nsandbox: stopped: the work folder held over {self.seen.mib:.0f} MiB or {self.seen.files} "
                f"entries, past its budget of {self.max_bytes // 2**20} MiB and {self.max_files} entries "
                f"(sandbox.disk_mb, sandbox.max_files); the {self.removed} files and folders this script wrote "
                "were removed. Write less: aggregate in memory, save only small results.\n")
