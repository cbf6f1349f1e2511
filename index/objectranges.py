"""Parquet objects in a store profiled from their footers, read by HTTP ranges: no data file is downloaded whole.

A Parquet file says its rows, schema and per-row-group min/max/nulls in its footer, at the end of the file; a
dataset's or a table's entry is built from exactly those facts. So an object lake's Parquet objects are read
through a seekable file over the object's signed URL that fetches only the byte ranges pyarrow asks for (the
footer: one or two GETs of a few KB), never the data pages.

Without the whole object there is no content hash, so such an object is named by its identity in the store: the
listing's size and change stamp (the ETag's digest and the modification time), hashed into the same hex form.
The blob cache accepts a fetched object whose content hash differs from that name when the store still gives it
that identity (index/blobcache.py).
"""

from __future__ import annotations

import hashlib
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dslake_index.profilers.base import Limits

FOOTER_FORMATS = (".parquet", ".parq")
_READ_AHEAD = 64 * 1024  # bytes fetched per range at least: a footer is usually inside the last 64 KB
_TIMEOUT_S = 60


def identity_hash(size: int, stamp: int, algorithm: str = "blake2b") -> str:
    """Return the hex name of an object known by its size and change stamp rather than by its bytes."""
    return hashlib.new(algorithm, f"dslake object identity {size} {stamp}".encode()).hexdigest()


def read_by_footer(rel: str) -> bool:
    """Tell whether an object in a store is profiled from its footer (Parquet) rather than downloaded."""
    return rel.lower().endswith(FOOTER_FORMATS)


class RangeReader(io.RawIOBase):
    """A read-only, seekable file over a URL of known size that fetches each read as an HTTP range request."""

    def __init__(self, url: str, size: int) -> None:
        super().__init__()
        self.url, self.size, self.pos = url, size, 0
        self.requests = 0
        self.fetched = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        import urllib.request  # with its http and ssl modules, a third of a no-change index's imports: load on use

        end = min(self.size, self.pos + len(buffer))
        if end <= self.pos:
            return 0
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end - 1}"})
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:  # noqa: S310 - a URL we signed
            if response.status != 206 and self.pos > 0:
                raise OSError("the store ignored a range request (it would send the whole object)")
            data = response.read(end - self.pos)
        self.requests += 1
        self.fetched += len(data)
        buffer[:len(data)] = data
        self.pos += len(data)
        return len(data)


def profile_footer_task(url: str, rel: str, size: int, stamp: int, db_path: Any, limits: Limits,
                        algorithm: str) -> dict[str, Any]:
    """Profile one Parquet object from its footer through its signed URL; report a failure as data."""
    import urllib.error

    from dslake_index.profile_task import cached_profile, profile_json
    from dslake_index.profilers.base import ProfileError
    from dslake_index.profilers.parquet import profile_parquet

    result: dict[str, Any] = {"hash": identity_hash(size, stamp, algorithm), "profile": None, "error": None,
                              "error_kind": None, "size": size, "mtime_ns": stamp}
    try:
        if cached_profile(db_path, result["hash"]):
            return result
        raw = RangeReader(url, size)
        with io.BufferedReader(raw, buffer_size=_READ_AHEAD) as source:
            profile = profile_parquet(source, size, limits, sample=False)
        profile.size = size
        result["profile"] = profile_json(profile)  # the text json.dumps(profile.to_dict(), ...) gives, less CPU
        result["format"], result["signature"] = profile.format, profile.signature()
    except urllib.error.HTTPError as exc:
        result.update(hash=None, error=f"cannot read its footer: HTTP {exc.code} {exc.reason}",
                      error_kind="changed" if exc.code == 404 else "unreadable")
    except ProfileError as exc:
        result.update(error=str(exc), error_kind=getattr(exc, "kind", "corrupt"))
    except OSError as exc:
        result.update(hash=None, error=f"cannot read its footer: {exc}"[:500], error_kind="unreadable")
    except Exception as exc:  # a profiler bug on one odd object must not stop the index; it is recorded instead
        result.update(error=f"profiler error: {type(exc).__name__}: {exc}"[:500], error_kind="crash")
    return result
