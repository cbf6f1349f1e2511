"""A local, content-addressed cache of a remote lake's objects: what scripts read at data/ comes from here.

A blob is named by its content hash (the manifest's), so two objects with the same bytes are one blob and a
renamed object is not fetched again. An object is streamed to a temporary file in the cache, hashed on the way,
and renamed into place only when its hash is the one the catalog recorded (or, for an object indexed by its
identity rather than its bytes, when the store still gives it that size and change stamp): a dropped connection or an object
changed since the index never leaves a partial or wrong blob behind. The cache is kept under a size limit by
removing the least recently used blobs (each use sets a blob's mtime).

The folder can be one the user names (remote.cache_dir), so the cache deletes only what is its own: regular files
with content-digest names in its two-hex-digit subfolders, and its own downloads in tmp/, in a folder that carries
its marker (a CACHEDIR.TAG that says it is dslake's). It writes the marker into a folder that is new, empty, or
holds nothing but an older cache's blobs; a folder with anything else and no marker is refused before anything is
written. Whatever else lies in a marked folder is left alone and named (BlobCache.left_alone).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dslake_index.errors import ConfigError
from dslake_index.objectranges import identity_hash
from dslake_index.objectstore import ObjectLake, bad_store, change_stamp

CHUNK = 1 << 20
LOCAL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)  # writing the blob failed, not the store
TMP = "tmp"  # downloads in progress, inside the cache (same filesystem: the rename is atomic)
_LOCK = threading.Lock()  # the runs of one process (a report's sub-questions) share one cache
MARKER = "CACHEDIR.TAG"  # the Cache Directory Tagging convention: backup tools skip the folder too
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
_OURS = "# dslake blob cache"
MARKER_TEXT = (f"{_SIGNATURE}\n{_OURS}: a remote lake's objects, named by content hash (index/blobcache.py).\n"
               "# dslake deletes only those blobs here and its own downloads in tmp/; it leaves anything else alone.\n")
SUBFOLDER = re.compile(r"[0-9a-f]{2}")
DIGEST = re.compile(r"[0-9a-f]{32,256}")  # a hex digest of any hashlib algorithm dslake may use (index.hash_algorithm)
DOWNLOAD = re.compile(r"[0-9a-f]{32}\.part")
SHOWN = 5  # names of what is left alone that a note lists


class ObjectChanged(Exception):
    """The object is gone or its bytes differ from what the catalog recorded: it changed since the index."""


@dataclass(frozen=True)
class Wanted:
    """One object to fetch: its lake-relative path and what the catalog recorded of it."""

    path: str
    size: int
    hash: str


class BlobCache:
    """Blobs named by content hash under one folder, at most limit_bytes in all (least recently used go first)."""

    def __init__(self, folder: Path, limit_bytes: int, algorithm: str = "blake2b") -> None:
        self.folder = Path(folder)
        self.limit_bytes = max(int(limit_bytes), 0)
        self.algorithm = algorithm
        self.left_alone: list[str] = []  # what the last usage() found in the folder that is not the cache's
        self._claimed = False

    def claim(self) -> None:
        """Make sure the folder is this cache's: marked, or new, empty or holding only an older cache's blobs (then
        marked now). ConfigError names a folder that holds anything else, before anything is written there."""
        if self._claimed:
            return
        marker = self.folder / MARKER
        if not _is_marker(marker):
            foreign = [name for name in _names(self.folder) if not _older_cache_part(self.folder, name)]
            if foreign:
                shown = ", ".join(sorted(foreign)[:SHOWN]) + (f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else "")
                raise ConfigError(
                    f"the blob cache folder {self.folder} (remote.cache_dir) holds files that are not dslake's "
                    f"({shown}) and no dslake marker; dslake deletes blobs in its cache, so it will not use it",
                    hint="set remote.cache_dir to a new or empty folder (or leave it empty: <catalog>/blobs)")
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                tmp = self.folder / f".{MARKER}.{uuid.uuid4().hex}"
                tmp.write_text(MARKER_TEXT, encoding="utf-8")
                os.replace(tmp, marker)
            except OSError as exc:
                if exc.errno in LOCAL_ERRNOS:
                    raise
                raise ConfigError(f"cannot make the blob cache folder {self.folder}: {exc.strerror or exc}",
                                  hint="set remote.cache_dir to a folder you can write") from None
        self._claimed = True

    def blob(self, digest: str) -> Path:
        """Return where the blob of a content hash lives (two levels, so no folder holds millions of names)."""
        if not digest or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a hex content hash: {digest!r}")
        return self.folder / digest[:2] / digest

    def cached(self, digest: str) -> Path | None:
        """Return the blob of a content hash when it is in the cache, marking it used; else None."""
        path = self.blob(digest)
        try:
            os.utime(path)
        except FileNotFoundError:
            return None
        return path

    def fetch(self, lake: ObjectLake, fs: Any, item: Wanted) -> Path:
        """Return the blob of item, downloading and verifying it first when it is not cached.

        ObjectChanged: the object is gone or holds other bytes. DslakeError: the store refused or failed.
        """
        hit = self.cached(item.hash)
        if hit is not None:
            return hit
        self.claim()
        tmp_dir = self.folder / TMP
        tmp_dir.mkdir(parents=True, exist_ok=True)
        tmp = tmp_dir / f"{uuid.uuid4().hex}.part"
        digest = hashlib.new(self.algorithm)
        try:
            try:
                with fs.open(lake.object_url(item.path).partition("://")[2], "rb") as src, open(tmp, "wb") as dst:
                    while chunk := src.read(CHUNK):
                        digest.update(chunk)
                        dst.write(chunk)
            except FileNotFoundError as exc:
                raise ObjectChanged(f"{item.path} is no longer in {lake.url}") from exc
            except Exception as exc:  # the store's errors (refused keys, a dropped connection); not our disk's
                if isinstance(exc, OSError) and exc.errno in LOCAL_ERRNOS:
                    raise
                raise bad_store(lake, exc, f"cannot fetch {item.path} from") from None
            if digest.hexdigest() != item.hash and not self._same_identity(lake, fs, item):
                raise ObjectChanged(f"{item.path} in {lake.url} holds other bytes than when it was indexed")
            tmp.chmod(0o444)  # scripts read blobs through links: nothing may write them
            target = self.blob(item.hash)
            target.parent.mkdir(exist_ok=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return target

    def _same_identity(self, lake: ObjectLake, fs: Any, item: Wanted) -> bool:
        """Tell whether an object indexed by its identity (a Parquet object profiled from its footer, whose bytes
        were never hashed) is still the one the catalog recorded: same size and change stamp in the store."""
        try:
            info = fs.info(lake.object_url(item.path).partition("://")[2])
        except Exception:  # gone or refused since the read: not the recorded object
            return False
        return identity_hash(int(info.get("size") or 0), change_stamp(info), self.algorithm) == item.hash

    def usage(self) -> tuple[int, list[tuple[float, int, Path]]]:
        """Return the bytes the blobs take and (last use, size, path) of each; what else lies in the folder is
        listed in self.left_alone (folder-relative names), never counted or touched."""
        blobs = []
        total = 0
        other: list[str] = []
        for name in _names(self.folder):
            sub = self.folder / name
            if name == MARKER or (name == TMP and _plain(sub, stat.S_ISDIR)):
                continue  # tmp/'s downloads are _sweep_tmp's
            if not (SUBFOLDER.fullmatch(name) and _plain(sub, stat.S_ISDIR)):
                other.append(name)
                continue
            for blob in _names(sub):
                path = sub / blob
                st = _lstat(path)
                if st is None:
                    continue
                if not (DIGEST.fullmatch(blob) and blob.startswith(name) and stat.S_ISREG(st.st_mode)):
                    other.append(f"{name}/{blob}")
                    continue
                blobs.append((st.st_mtime, st.st_size, path))
                total += st.st_size
        self.left_alone = sorted(other)
        return total, blobs

    def evict(self) -> int:
        """Remove the least recently used blobs until the cache is within its limit; return how many went.

        A blob a running script reads through a hard link stays readable: removing the name frees the bytes only
        once the last link goes.
        """
        if not _is_marker(self.folder / MARKER):
            return 0  # never claimed (nothing fetched into it): nothing here is known to be the cache's
        with _LOCK:
            total, blobs = self.usage()
            removed = 0
            for _, size, path in sorted(blobs, key=lambda b: b[0]):
                if total <= self.limit_bytes:
                    break
                path.unlink(missing_ok=True)
                total -= size
                removed += 1
            self._sweep_tmp()
            return removed

    def _sweep_tmp(self, older_than_s: float = 24 * 3600) -> None:
        """Remove downloads a killed process left behind (a running one renames or deletes its own)."""
        tmp_dir = self.folder / TMP
        now = time.time()
        for name in _names(tmp_dir) if _plain(tmp_dir, stat.S_ISDIR) else []:
            st = _lstat(tmp_dir / name)
            if st is None or not DOWNLOAD.fullmatch(name) or not stat.S_ISREG(st.st_mode):
                continue  # not a download of ours
            try:
                if now - st.st_mtime > older_than_s:
                    (tmp_dir / name).unlink()
            except OSError:
                continue


def _names(folder: Path) -> list[str]:
    """Return the names in a folder (none when it is missing or not a folder)."""
    try:
        return os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _plain(path: Path, kind: Any) -> bool:
    """Tell whether path is of that kind (stat.S_ISDIR, S_ISREG) itself, not through a link."""
    st = _lstat(path)
    return st is not None and bool(kind(st.st_mode))


def _is_marker(path: Path) -> bool:
    """Tell whether path is this cache's marker: a regular file (not a link) that says it is dslake's."""
    if not _plain(path, stat.S_ISREG):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.startswith(_SIGNATURE) and _OURS in head


def _older_cache_part(folder: Path, name: str) -> bool:
    """Tell whether a name in an unmarked folder is what a cache made before the marker existed: tmp/ with
    downloads in it, or a two-hex-digit folder of blobs named by their digest."""
    path = folder / name
    if name == TMP and _plain(path, stat.S_ISDIR):
        return all(DOWNLOAD.fullmatch(part) and _plain(path / part, stat.S_ISREG) for part in _names(path))
    if not (SUBFOLDER.fullmatch(name) and _plain(path, stat.S_ISDIR)):
        return False
    return all(DIGEST.fullmatch(blob) and blob.startswith(name) and _plain(path / blob, stat.S_ISREG)
               for blob in _names(path))


__all__ = ["BlobCache", "ObjectChanged", "Wanted"]
