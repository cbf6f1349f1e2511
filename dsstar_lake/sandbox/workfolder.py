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
from typing import BinaryIO

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


def open_up(path: str, st: os.stat_result) -> None:
    """Give a folder of ours back its owner's read, write and search bits before walking or removing it.

    A script (same uid, no bubblewrap) can chmod a folder to 000: a normal user then cannot list it, so its
    files would hide from the budget and survive the cleanup. Root needs no bits; a link is never changed.
    """
    uid = os.getuid()
    if uid != 0 and st.st_uid == uid and st.st_mode & 0o700 != 0o700:
        try:
            os.chmod(path, stat.S_IMODE(st.st_mode) | 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass


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
                open_up(entry.path, st)
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
                    open_up(entry.path, st)
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
                usage(Path(entry.path), skip=())  # gives every folder of ours its owner bits back on the way
                shutil.rmtree(entry.path)
            elif entry.is_file(follow_symlinks=False) and keep(Path(entry.path)):
                kept.append(entry.name)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
    return sorted(kept)


class DiskBudget:
    """The work folder's disk and entry budget, measured while a script runs; what it wrote goes if over.

    inside: where a tmpfs work folder can be measured (its size the kernel bounds; its entries we count);
    None until the sandbox is up. pids: the script's processes, whose deleted-but-open files count as well.
    """

    def __init__(self, workdir: Path, disk_mb: int, max_files: int,
                 inside: Callable[[], Path | None] | None = None, pids: Callable[[], list[int]] | None = None) -> None:
        self.workdir = workdir
        self.max_bytes = max(disk_mb, 0) * 1024 * 1024
        self.max_files = max(max_files, 0)
        self.inside, self.pids = inside, pids
        self.started_ns = time.time_ns()
        self.next_at = time.monotonic() + BUDGET_EVERY_S
        self.seen = Usage()
        self.removed = 0

    def check(self, force: bool = False) -> bool:
        """Return True when the folder is over budget (measured at most every BUDGET_EVERY_S unless forced)."""
        if not (self.max_bytes or self.max_files) or (not force and time.monotonic() < self.next_at):
            return False
        self.next_at = time.monotonic() + BUDGET_EVERY_S
        folder = self.inside() if self.inside else self.workdir
        if folder is None:
            return False
        seen = usage(folder, self.max_bytes, self.max_files)
        if self.pids is not None:
            seen.bytes += held_open_deleted(self.pids())
        self.seen = seen if (seen.files or not self.inside) else self.seen  # a gone namespace reads as empty
        return bool((self.max_bytes and self.seen.bytes > self.max_bytes)
                    or (self.max_files and self.seen.files > self.max_files))

    def explain(self) -> str:
        """Remove what the stopped script wrote, and say so in words the debugger can act on."""
        budget = (f"its budget of {self.max_bytes // 2**20} MiB and {self.max_files} entries "
                  "(sandbox.disk_mb, sandbox.max_files)")
        if self.inside is not None:
            return (f"\nsandbox: the work folder is a {self.max_bytes // 2**20} MiB space of its own; this script "
                    f"filled it or went past {budget} (held {self.seen.files} entries), and what it wrote is gone. "
                    "Write less: aggregate in memory, save only small results.\n")
        self.removed = remove_changed_since(self.workdir, self.started_ns)
        return (f"\nsandbox: stopped: the work folder held over {self.seen.mib:.0f} MiB or {self.seen.files} "
                f"entries (files the script deleted but kept open included), past {budget}; the {self.removed} "
                "files and folders this script wrote were removed. Write less: aggregate in memory, save only "
                "small results.\n")


def mirror(stream: BinaryIO, folder: Path, max_entries: int = 0) -> bool:
    """Make folder what _launch.py sent (files written fresh, folders made, the rest removed); False if cut short.

    folder is the host side of a tmpfs work folder: no script ever sees it, yet every path is still checked,
    parents are opened without following links, and each file is written fresh and renamed over its name. A
    stream that ended early (the launcher killed with its script) writes what arrived whole and removes nothing.
    max_entries: read no more entries than that (0 = no bound); the stream's bytes are bounded by its reader.
    """
    present: set[str] = set()
    complete = False
    dir_fd = os.open(folder, DIR_FLAGS)
    try:
        while line := stream.readline(1 << 16):
            try:
                kind, size, raw = line.split()
                rel = bytes.fromhex(raw.decode()).decode("utf-8", "surrogateescape") if kind != b"E" else ""
                size = int(size)
            except (ValueError, UnicodeDecodeError):
                break
            if kind == b"E":
                complete = True
                break
            if max_entries and len(present) >= max_entries:
                break
            parts = rel.split("/")
            if not rel or any(p in ("", ".", "..") for p in parts) or (len(parts) == 1 and parts[0] == "data"):
                break
            if kind == b"F" and not _receive_file(dir_fd, parts, stream, size):
                break
            if kind == b"D":
                os.close(_parent_fd(dir_fd, [*parts, ""]))
            present.add(rel)
    finally:
        os.close(dir_fd)
    if complete:
        _remove_absent(folder, present)
    return complete


def _parent_fd(dir_fd: int, parts: list[str]) -> int:
    """Return a descriptor of the folder holding parts[-1], making the folders on the way (no link followed)."""
    fd = os.dup(dir_fd)
    for name in parts[:-1]:
        try:
            os.mkdir(name, 0o755, dir_fd=fd)
        except FileExistsError:
            pass
        try:
            nxt = os.open(name, DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def _receive_file(dir_fd: int, parts: list[str], stream: BinaryIO, size: int) -> bool:
    """Copy size bytes of stream into the file at parts; False when the stream ends first."""
    parent = _parent_fd(dir_fd, parts)
    tmp = f".{parts[-1]}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=parent)
        with os.fdopen(fd, "wb") as out:
            left = size
            while left and (chunk := stream.read(min(left, 1 << 20))):
                out.write(chunk)
                left -= len(chunk)
        if left:
            os.unlink(tmp, dir_fd=parent)
            return False
        os.rename(tmp, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
        return True
    finally:
        os.close(parent)


def _remove_absent(folder: Path, present: set[str]) -> None:
    """Remove what the folder holds that the stream did not list (deleted inside), links as links."""
    for current, dirs, files in os.walk(folder, topdown=False):
        rel_dir = os.path.relpath(current, folder)
        rel_dir = "" if rel_dir == "." else rel_dir
        for name in files + dirs:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel in present or (not rel_dir and name == "data"):
                continue
            path = os.path.join(current, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                continue


def inner_folder(pid: int | None, folder: Path) -> Path | None:
    """Return folder as the sandbox's mount namespace has it (/proc/PID/root/...), seen from a process below pid.

    A tmpfs work folder exists only in there; dslake measures it through the first descendant of bwrap that
    lives in another mount namespace. None while there is none yet.
    """
    if not pid:
        return None
    try:
        own = os.readlink("/proc/self/ns/mnt")
    except OSError:
        return None
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            if os.readlink(f"/proc/{current}/ns/mnt") != own:
                return Path(f"/proc/{current}/root") / folder.relative_to("/")
            with open(f"/proc/{current}/task/{current}/children") as fh:
                stack += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):
            continue
    return None


def held_open_deleted(pids: list[int]) -> int:
    """Return the bytes on disk of deleted regular files the given processes still hold open.

    A file opened, then deleted, takes disk until it is closed, and no walk of a folder finds it.
    """
    total, seen = 0, set()
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in names:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total
