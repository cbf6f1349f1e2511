"""Watch the lake's folders while a script runs (inotify, or fanotify as root): the files opened in them, whichever
library opened them.

The audit hook (_readtrace.py) sees what the script's Python opens; pyarrow, DuckDB, libxml2 (pd.read_html), HDF5
(h5py) and netCDF open their files in C, where no hook reaches, so an answer read through `pd.read_parquet` said
"files used: (none detected)". The kernel's inotify reports every open of a file in a watched folder, by any
process, through any mount of it: bubblewrap's read-only binds at data/ and at the lake's own path share the lake's
inodes, and without bubblewrap data/ holds links into the lake. So one watch per lake folder, set up on the host
before the script goes and read until it ended, sees those opens on both backends.

Chosen over the other ways to see opens done in C: strace/ptrace is not installed on a fresh machine and stops the
script at every system call; LD_PRELOAD needs a compiled library (and misses direct system calls); sampling
/proc/PID/fd misses a file opened and closed between two samples. inotify needs nothing installed (the system call
through ctypes) and costs the script nothing.

Which process opened a file: inotify cannot tell, so an open of a lake file by another process in the same window
(a second `ask` on the same lake, an index, a notebook) is counted as the script's; scripts of this same process
that run at the same time on the same lake (a report's sub-questions, an eval's tasks) are known to overlap
(`shared`), and the sandbox marks a script whose count rests on the watch then. Where dslake runs as root, the same
watch is made with fanotify, whose events carry the opener's pid: an open by dslake or by a live process outside the
script's cgroup is left out (one that ended before its event was read is counted, as inotify would). Unprivileged
fanotify reports no pid of other processes, so it would tell nothing more than inotify.

Bounded: at most MAX_FOLDERS folders are watched, and none past the user's limit (fs.inotify.max_user_watches,
fs.fanotify.max_user_marks); a script's opens in a folder left unwatched are seen only by the audit hook. Events past
the kernel's queue are dropped by the kernel and said so. Linux only: elsewhere `available()` is False and the audit
hook is all.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

FANOTIFY = True  # as root, watch with fanotify (openers' pids) rather than inotify; tests turn it off
MAX_FOLDERS = 20000  # lake folders watched per script (like lakemask's walk bound: a huge lake starts fast)
IN_OPEN = 0x00000020
IN_Q_OVERFLOW = 0x00004000
IN_ISDIR = 0x40000000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
FAN_CLASS_NOTIF, FAN_CLOEXEC, FAN_NONBLOCK = 0, 1, 2
FAN_MARK_ADD, FAN_MARK_DONTFOLLOW, FAN_MARK_ONLYDIR = 0x01, 0x04, 0x08
FAN_OPEN, FAN_Q_OVERFLOW, FAN_EVENT_ON_CHILD = 0x20, 0x4000, 0x08000000
AT_FDCWD = -100
# how fanotify opens each event's file for us: never blocking (a FIFO in the lake), never inherited
EVENT_FILE_FLAGS = os.O_RDONLY | os.O_LARGEFILE | os.O_NONBLOCK | os.O_CLOEXEC
FAN_EVENT = struct.Struct("IBBHQii")  # struct fanotify_event_metadata: len, vers, reserved, metadata_len, mask, fd, pid
EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then len bytes of NUL-padded name
SHARED = ("another script read the same lake at the same time: files it opened in C may be counted here (the open "
          "watch cannot tell processes apart)")
OVERFLOW = ("the lake's open watch overflowed (more opens than the kernel queues, max_queued_events): files read "
            "through a library in C may be missing")


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _libc()


def available() -> bool:
    """Tell whether opens done in C can be seen here (Linux's inotify)."""
    return _LIBC is not None


def by_pid() -> bool:
    """Tell whether the watch is made with fanotify here (root), so other processes' opens can be left out."""
    return FANOTIFY and _fanotify_works()


@functools.cache
def _fanotify_works() -> bool:
    if _LIBC is None or os.geteuid() != 0:
        return False
    fd = _LIBC.fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, EVENT_FILE_FLAGS)
    if fd < 0:  # root in a container without CAP_SYS_ADMIN, or a kernel without fanotify
        return False
    os.close(fd)
    return True


_LIVE: dict[Path, set[OpenWatch]] = {}  # the watches open now, by lake: to know when scripts' windows overlap
_LIVE_LOCK = threading.Lock()


class OpenWatch:
    """The lake files opened while it was open, lake-relative, in the order first opened.

    feed() takes what was read from fileno() (the sandbox's pump reads it with the script's pipes), close() reads
    what is left and returns the paths and what may be missing.
    """

    def __init__(self, lake: Path, skip: Iterable[Path] = (), skip_names: Iterable[str] = (),
                 mounts: Iterable[Path] = ()) -> None:
        """skip: folders not watched (the catalog, the work folder); skip_names: lake-relative folders the index
        skips (hidden, ignored: blanked under bubblewrap), not walked; mounts: other places the script sees the
        lake at (data/ in its work folder), by which fanotify may name a file."""
        assert _LIBC is not None, "OpenWatch needs inotify (check available() first)"
        self.lake = Path(lake).resolve()
        self.roots = [f"{root}{os.sep}" for root in (self.lake, *mounts)]
        self.fd = (_LIBC.fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, EVENT_FILE_FLAGS)
                   if by_pid() else -1)
        self.by_pid = self.fd >= 0  # fanotify: events carry the opener's pid
        if not self.by_pid:
            self.fd = _LIBC.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        self.cgroups: tuple[str, ...] = ()  # the script's cgroup folders' names (own()): opens from elsewhere left out
        self.others = 0  # opens of lake files by processes outside the script, left out
        self.folders: dict[int, str] = {}  # watch descriptor -> lake-relative folder ("" for the lake itself)
        self.opened: dict[str, None] = {}
        self.overflowed = False
        self.unwatched = ""  # why some folders are not watched, when some are not
        self.shared = False  # another watch of this process was open on the same lake at some time of this one's
        try:
            self._watch_all({p.resolve() for p in skip}, set(skip_names))
        except BaseException:
            os.close(self.fd)
            raise
        with _LIVE_LOCK:
            others = _LIVE.setdefault(self.lake, set())
            for other in others:
                other.shared = self.shared = True
            others.add(self)

    def _watch_all(self, skip: set[Path], skip_names: set[str]) -> None:
        stack = [("", self.lake)]
        while stack:
            rel, folder = stack.pop()
            if len(self.folders) >= MAX_FOLDERS:
                self.unwatched = f"only the first {MAX_FOLDERS} of the lake's folders are watched"
                return
            if self.by_pid:
                wd = _LIBC.fanotify_mark(self.fd, FAN_MARK_ADD | FAN_MARK_DONTFOLLOW | FAN_MARK_ONLYDIR,
                                         FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD, os.fsencode(folder))
                wd = len(self.folders) if wd == 0 else wd
            else:
                wd = _LIBC.inotify_add_watch(self.fd, os.fsencode(folder), IN_OPEN | IN_ONLYDIR | IN_DONT_FOLLOW)
            if wd < 0:
                err = ctypes.get_errno()
                if err == errno.ENOSPC:  # the user's watches are spent (fs.inotify.max_user_watches, or fanotify's)
                    kind = "fanotify marks (fs.fanotify.max_user_marks)" if self.by_pid else \
                        "inotify watches (fs.inotify.max_user_watches)"
                    self.unwatched = f"{len(self.folders)} of the lake's folders are watched: the user's {kind} ran out"
                    return
                continue  # gone meanwhile, or unreadable: nothing in it can be opened by the script either
            self.folders[wd] = rel
            try:
                with os.scandir(folder) as entries:
                    children = [(e.name, Path(e.path)) for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for name, path in sorted(children, reverse=True):
                child = f"{rel}/{name}" if rel else name
                if not name.startswith(".") and child not in skip_names and path not in skip:
                    stack.append((child, path))

    def fileno(self) -> int:
        return self.fd

    @property
    def attributed(self) -> bool:
        """Tell whether opens by other processes are told apart (fanotify, and the script's cgroup known)."""
        return self.by_pid and bool(self.cgroups)

    def own(self, cgroups: Iterable[Path]) -> None:
        """Name the script's cgroup folders: with fanotify, an open by a live process outside them is not counted."""
        self.cgroups = tuple(p.name for p in cgroups)

    def feed(self, chunk: bytes) -> None:
        """Take whole events read from the descriptor (the kernel never splits one between reads)."""
        if self.by_pid:
            self._feed_fanotify(chunk)
            return
        at = 0
        while at + EVENT.size <= len(chunk):
            wd, mask, _, size = EVENT.unpack_from(chunk, at)
            name = chunk[at + EVENT.size:at + EVENT.size + size].rstrip(b"\0")
            at += EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                self.overflowed = True
            elif mask & IN_OPEN and not mask & IN_ISDIR and name and wd in self.folders:
                folder = self.folders[wd]
                name_text = os.fsdecode(name)
                self.opened.setdefault(f"{folder}/{name_text}" if folder else name_text, None)

    def _feed_fanotify(self, chunk: bytes) -> None:
        at = 0
        while at + FAN_EVENT.size <= len(chunk):
            size, _, _, _, mask, fd, pid = FAN_EVENT.unpack_from(chunk, at)
            at += max(size, FAN_EVENT.size)
            if mask & FAN_Q_OVERFLOW:
                self.overflowed = True
            if fd < 0:
                continue
            try:
                if self._scripts(pid):
                    path = self._lake_path(fd)
                    if path is not None:
                        self.opened.setdefault(path, None)
                else:
                    self.others += 1
            finally:
                os.close(fd)

    def _scripts(self, pid: int) -> bool:
        """Tell whether an open by pid may be the script's: not when pid is alive in another cgroup, or dslake."""
        if pid == os.getpid():
            return False
        if not self.cgroups:
            return True
        try:
            with open(f"/proc/{pid}/cgroup", encoding="utf-8") as f:
                lines = f.read().splitlines()
            if any(name in line.rsplit(":", 1)[-1].split("/") for line in lines for name in self.cgroups):
                return True
            # An exiting process leaves its cgroups (for the root's) after its memory: no command line then.
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return not f.read(1)
        except OSError:
            return True  # it ended before its event was read: counted, as inotify would

    def _lake_path(self, fd: int) -> str | None:
        """Return the lake-relative path of a file fanotify handed over open, or None when it is not the lake's.

        The kernel names a file by its path on the host, by its path in the sandbox (data/ in the work folder), or
        from a bind's root (the lake) when that mount is not reachable from dslake's: the inode decides which.
        """
        try:
            shown, stat = os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd)
        except OSError:
            return None
        for rel in [shown[len(root):] for root in self.roots if shown.startswith(root)] + [shown.lstrip("/")]:
            try:
                here = os.stat(self.lake / rel, follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if rel and (here.st_dev, here.st_ino) == (stat.st_dev, stat.st_ino):
                return rel
        return None

    def close(self) -> tuple[list[str], list[str]]:
        """Read what is left, stop watching; return the files opened and what may be missing (empty: nothing)."""
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                self.feed(chunk)
        finally:
            os.close(self.fd)
            with _LIVE_LOCK:
                _LIVE.get(self.lake, set()).discard(self)
        return list(self.opened), [OVERFLOW] if self.overflowed else []
