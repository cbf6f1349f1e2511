"""A local, content-addressed cache of a remote lake's objects: what scripts read at data/ comes from here.

A blob is named by its content hash (the manifest's), so two objects with the same bytes are one blob and a
renamed object is not fetched again. An object is streamed to a temporary file in the cache, hashed on the way,
and renamed into place only when its hash is the one the catalog recorded (or, for an object indexed by its
identity rather than its bytes, when the store still gives it that size and change stamp): a dropped connection or an object
changed since the index never leaves a partial or wrong blob behind. The cache is kept under a size limit by
removing the least recently used blobs (each use sets a blob's mtime).
"""

from __future__ import annotations

import errno
import hashlib
import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dslake_index.objectranges import identity_hash
from dslake_index.objectstore import ObjectLake, bad_store, change_stamp

CHUNK = 1 << 20
LOCAL_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)  # writing the blob failed, not the store
TMP = "tmp"  # downloads in progress, inside the cache (same filesystem: the rename is atomic)
_LOCK = threading.Lock()  # the runs of one process (a report's sub-questions) share one cache


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
        """Return the bytes the blobs take and (last use, size, path) of each."""
        blobs = []
        total = 0
        for sub in self.folder.iterdir() if self.folder.is_dir() else []:
            if sub.name == TMP or not sub.is_dir():
                continue
            for path in sub.iterdir():
                try:
                    st = path.stat()
                except FileNotFoundError:
                    continue
                blobs.append((st.st_mtime, st.st_size, path))
                total += st.st_size
        return total, blobs

    def evict(self) -> int:
        """Remove the least recently used blobs until the cache is within its limit; return how many went.

        A blob a running script reads through a hard link stays readable: removing the name frees the bytes only
        once the last link goes.
        """
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
        for path in tmp_dir.iterdir() if tmp_dir.is_dir() else []:
            try:
                if now - path.stat().st_mtime > older_than_s:
                    path.unlink()
            except OSError:
                continue


__all__ = ["BlobCache", "ObjectChanged", "Wanted"]
