"""Lakes in object storage (s3://, gs://, az://) through fsspec: list objects, and fetch one to profile it.

The listing plays the part of a local walk's stat: size and a change stamp per object, so an unchanged object
costs nothing beyond the listing. A new or changed object is downloaded once, by a profiler process, to a
temporary file in the catalog and profiled there by the same profilers as a local file (they read a head and
strides of a path); the file is deleted as soon as it is profiled. A Parquet object is never downloaded: its
footer is read by ranges (index/objectranges.py), which is all a dataset's or a table's entry needs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dslake_index.errors import DslakeError, LakeNotFound, UsageError
from dslake_index.objectranges import profile_footer_task, read_by_footer
from dslake_index.scan import IGNORE_FILE, FileStat, ScanResult

if TYPE_CHECKING:
    from dslake_index.profilers.base import Limits

SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")
# Which package reads which scheme: named in the line a user sees when it is missing.
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
             "abfss": "adlfs"}
# What a profiler process needs from the environment to reach the store: it forks from a server started earlier,
# whose environment may predate the caller's (an endpoint or keys set since).
_ENV_PREFIXES = ("AWS_", "FSSPEC_", "GOOGLE_", "AZURE_")


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    """Return whether a lake location is an object-store URL rather than a folder."""
    if location is None or isinstance(location, Path):
        return False
    scheme, sep, _ = str(location).partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def normalize(url: str) -> str:
    """Return the lake URL without a trailing slash (s3://bucket/prefix), the form the catalog records."""
    scheme, _, rest = url.partition("://")
    rest = rest.strip("/")
    if not rest:
        raise UsageError(f"no bucket in {url}", hint="give s3://BUCKET or s3://BUCKET/PREFIX")
    return f"{scheme.lower()}://{rest}"


def remote_lake(location: str | os.PathLike[str] | None, catalog: str | os.PathLike[str] | None) -> str | None:
    """Return the normalized URL when location names a lake in object storage (None: a folder, or nothing).

    Such a lake needs a catalog on local disk: there is no folder to put `.dslake` in.
    """
    if not is_remote(location):
        return None
    url = normalize(str(location))
    if catalog is None:
        raise UsageError(f"a lake in object storage needs a local catalog: {url}",
                         hint=f"dslake index {url} --catalog DIR", api_hint=f"Lake.open({url!r}, catalog=DIR)")
    return url


@dataclass(frozen=True)
class ObjectLake:
    """A lake in object storage, as a profiler process gets it (picklable)."""

    url: str  # normalized: scheme://bucket[/prefix]
    env: tuple[tuple[str, str], ...]  # the credentials and endpoint settings in force when the index started
    tmp_dir: str  # where an object is downloaded to be profiled (inside the catalog)

    @property
    def scheme(self) -> str:
        """Return the URL's scheme (s3, gs, az…)."""
        return self.url.partition("://")[0]

    def object_url(self, rel: str) -> str:
        """Return the URL of one lake-relative object."""
        return f"{self.url}/{rel}"


def object_lake(url: str, tmp_dir: Path) -> ObjectLake:
    """Return an ObjectLake for url, carrying this process's store settings to the profiler processes."""
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)))
    return ObjectLake(normalize(url), env, str(tmp_dir))


_filesystems: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}


def filesystem(lake: ObjectLake) -> Any:
    """Return this process's fsspec filesystem for the lake, made with exactly the store settings the lake carries."""
    try:
        import fsspec
    except ImportError:
        fsspec = None
    if fsspec is not None:
        try:
            fsspec.get_filesystem_class(lake.scheme)
        except ImportError:
            fsspec = None
    if fsspec is None:
        package = _PACKAGES.get(lake.scheme, "fsspec")
        raise UsageError(f"reading {lake.scheme}:// lakes needs the package {package}, which is not installed",
                         hint=f"pip install {package}" + (" (in the clone: pip install -e '.[s3]')" if package == "s3fs" else ""))
    key = (lake.scheme, lake.env)
    if key in _filesystems:
        return _filesystems[key]
    # Our own instance per store settings, without a listing cache: fsspec caches instances by their arguments, not
    # by the environment, so its cached one could point at an endpoint or keys changed since, and list what it saw
    # before. One per process, not one per object: each holds a client and its connection pool, which a profiler
    # process ran out of its memory cap with after a few hundred objects.
    saved = {k: v for k, v in os.environ.items() if k.startswith(_ENV_PREFIXES)}
    # Exactly the lake's store settings while the client is made (a profiler process forks from a server that may
    # hold older ones), then the caller's environment back: a notebook's own AWS_* settings are not ours to change.
    _set_store_env(dict(lake.env))
    try:
        fs = fsspec.filesystem(lake.scheme, skip_instance_cache=True, use_listings_cache=False)
        connect = getattr(fs, "connect", None)  # s3fs makes its client lazily: make it now, under these settings
        if callable(connect):
            try:
                connect()
            except Exception:  # noqa: S110  (the first real request fails the same way, and says so in one line)
                pass
    finally:
        _set_store_env(saved)
    _filesystems[key] = fs
    return fs


def _set_store_env(values: dict[str, str]) -> None:
    for name in [k for k in os.environ if k.startswith(_ENV_PREFIXES) and k not in values]:
        del os.environ[name]
    os.environ.update(values)


def change_stamp(info: dict[str, Any]) -> int:
    """Return the change stamp of a listed object, kept in the manifest's mtime_ns column.

    Object stores give whole-second times, so the nanoseconds carry 29 bits of the ETag's digest: an object
    rewritten within the same second with the same size still reads as changed, and no schema change is needed.
    """
    modified = info.get("LastModified") or info.get("last_modified") or info.get("mtime") or info.get("updated")
    seconds = 0
    if hasattr(modified, "timestamp"):
        seconds = int(modified.timestamp())
    elif isinstance(modified, int | float):
        seconds = int(modified)
    elif isinstance(modified, str):
        from datetime import datetime

        seconds = int(datetime.fromisoformat(modified.replace("Z", "+00:00")).timestamp())
    etag = str(info.get("ETag") or info.get("etag") or info.get("md5Hash") or "")
    tag = int.from_bytes(hashlib.blake2b(etag.encode(), digest_size=4).digest(), "big") % 500_000_000
    return seconds * 1_000_000_000 + tag


def bad_store(lake: ObjectLake, exc: BaseException, doing: str = "cannot list") -> DslakeError:
    """Turn what the store answered into one line the user can act on (doing: what failed, before the URL)."""
    name = type(exc).__name__
    text = str(exc).split("\n")[0][:200]
    if isinstance(exc, FileNotFoundError) or "NoSuchBucket" in text:
        return LakeNotFound(f"bucket not found: {lake.url}", hint="check the bucket's name and the endpoint "
                            "(AWS_ENDPOINT_URL)")
    if isinstance(exc, PermissionError) or name in ("NoCredentialsError", "PartialCredentialsError",
                                                    "ProfileNotFound", "ClientError"):
        return UsageError(f"access to {lake.url} refused: {text or name}",
                          hint="check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, "
                               "~/.aws/credentials)")
    return DslakeError(f"{doing} {lake.url}: {text or name}",
                       hint="check the endpoint (AWS_ENDPOINT_URL) and the connection; the catalog is unchanged")


def _ignore_spec(lake: ObjectLake, fs: Any, key: str) -> Any:
    """Return the patterns of the .dslakeignore object at the lake's prefix, read as scan.py reads the local one."""
    import pathspec

    try:
        text = fs.cat_file(key).decode("utf-8", errors="replace")
    except Exception as exc:  # the listing answered a moment ago: a failure here is the store's
        raise bad_store(lake, exc, f"cannot read {IGNORE_FILE} of") from None
    return pathspec.PathSpec.from_lines("gitignore", text.splitlines())


def scan_objects(lake: ObjectLake) -> ScanResult:
    """List every object under the lake URL as a FileStat (size and change stamp), skipping hidden and ignored names."""
    fs = filesystem(lake)
    root = lake.url.partition("://")[2]
    bucket = root.split("/")[0]
    try:
        fs.ls(bucket)  # a missing bucket lists as empty below; asking for it by name tells the two apart
        listed = fs.find(root, detail=True, withdirs=False)
    except Exception as exc:  # every failure of the store (or of reaching it) becomes one line
        raise bad_store(lake, exc) from None
    spec = _ignore_spec(lake, fs, f"{root}/{IGNORE_FILE}") if f"{root}/{IGNORE_FILE}" in listed else None
    result = ScanResult()
    for key, info in listed.items():
        rel = key[len(root):].lstrip("/") if key.startswith(root) else ""
        if not rel or info.get("type") == "directory" or key.endswith("/"):
            continue
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts):
            continue
        # As a local walk does: a file matching a pattern, or under a folder that matches one, is left out.
        if spec is not None and (spec.match_file(rel) or any(spec.match_file("/".join(parts[:i]) + "/")
                                                                for i in range(1, len(parts)))):
            continue
        result.files.append(FileStat(rel, int(info.get("size") or 0), change_stamp(info)))
    result.files.sort(key=lambda f: f.path)
    return result


def check_access(lake: ObjectLake) -> Any:
    """Return the lake's filesystem once the store answers for it (one request); a refusal or a gone bucket raises."""
    fs = filesystem(lake)
    try:
        fs.info(lake.url.partition("://")[2])  # not exists(), which reads refused keys as "not there"
    except Exception as exc:  # every failure of the store (or of reaching it) becomes one line
        raise bad_store(lake, exc, "cannot read") from None
    return fs


def profile_object_task(lake: ObjectLake, rel: str, size: int, stamp: int, db_path: Any, limits: Limits,
                        algorithm: str) -> dict[str, Any]:
    """Download one object through the store's client, profile it, delete it; report a failure as data."""

    def open_object() -> Any:
        return filesystem(lake).open(lake.object_url(rel).partition("://")[2], "rb")

    def failure(exc: Exception) -> tuple[str, str]:
        return f"{type(exc).__name__}: {exc}", "changed" if isinstance(exc, FileNotFoundError) else "unreadable"

    return _download_and_profile(open_object, failure, lake.tmp_dir, rel, size, stamp, db_path, limits, algorithm)


# How long a signed URL stays good: the last file of a big first index is fetched long after the first (100k new
# objects at ~46 files/s take ~40 minutes).
_URL_LIFETIME_S = 24 * 3600
_SIGN_BATCH = 256


def object_tasks(lake: ObjectLake, files: list[FileStat]) -> Iterator[tuple[Callable[..., dict[str, Any]],
                                                                           tuple[Any, ...]]]:
    """Yield the profiler task of each file, in order: a download by signed URL where the store signs them, and
    for a Parquet object a read of its footer by ranges over that URL (index/objectranges.py).

    The coordinator signs (it holds the store's client); a profiler process then needs only the standard library
    to fetch, not a store client of its own (~180 MB of address space, after which its memory cap failed parquet
    and CSV files), and a worker on another machine needs no credentials. A store that cannot sign (anonymous
    access, a filesystem without signing) gets the download through fsspec in the profiler process.
    """
    for start in range(0, len(files), _SIGN_BATCH):
        chunk = files[start:start + _SIGN_BATCH]
        urls = signed_urls(lake, [f.path for f in chunk])
        for i, f in enumerate(chunk):
            if urls is None:
                yield profile_object_task, (lake, f.path, f.size, f.mtime_ns)
            elif read_by_footer(f.path):  # Parquet: its footer by ranges, never the data pages
                yield profile_footer_task, (urls[i], f.path, f.size, f.mtime_ns)
            else:
                yield profile_url_task, (urls[i], lake.tmp_dir, f.path, f.size, f.mtime_ns)


def signed_urls(lake: ObjectLake, rels: list[str]) -> list[str] | None:
    """Return a signed GET URL per lake-relative object, or None where the store cannot sign them."""
    try:
        return _sign(lake, rels)
    except Exception:  # no signing here: each profiler process downloads with a client of its own
        return None


def _sign(lake: ObjectLake, rels: list[str]) -> list[str]:
    """Return a signed GET URL per lake-relative object, signed in one batch on S3 (~0.6 ms each, not ~2.3)."""
    fs = filesystem(lake)
    paths = [lake.object_url(rel).partition("://")[2] for rel in rels]
    if lake.scheme in ("s3", "s3a") and hasattr(fs, "split_path"):
        import asyncio

        from fsspec.asyn import sync

        async def sign_all() -> list[str]:
            keys = [fs.split_path(p)[:2] for p in paths]
            clients = {bucket: await fs.get_s3(bucket) for bucket, _ in keys}
            return list(await asyncio.gather(*(clients[bucket].generate_presigned_url(
                "get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=_URL_LIFETIME_S)
                for bucket, key in keys)))

        return sync(fs.loop, sign_all)
    return [fs.sign(p, expiration=_URL_LIFETIME_S) for p in paths]


def profile_url_task(url: str, tmp_dir: str, rel: str, size: int, stamp: int, db_path: Any, limits: Limits,
                     algorithm: str) -> dict[str, Any]:
    """Download one object by its signed URL, profile it, delete it; report a failure as data."""
    import urllib.error
    import urllib.request

    def failure(exc: Exception) -> tuple[str, str]:
        if isinstance(exc, urllib.error.HTTPError):
            return f"HTTP {exc.code} {exc.reason}", "changed" if exc.code == 404 else "unreadable"
        return f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}", "unreadable"

    return _download_and_profile(lambda: urllib.request.urlopen(url, timeout=60), failure, tmp_dir, rel, size, stamp,
                                 db_path, limits, algorithm)


def _download_and_profile(open_source: Callable[[], Any], failure: Callable[[Exception], tuple[str, str]],
                          tmp_dir: str, rel: str, size: int, stamp: int, db_path: Any, limits: Limits,
                          algorithm: str) -> dict[str, Any]:
    """Copy an object to a temporary file, hash and profile it there, delete it.

    failure(exc) names a failed download and its kind ("changed": the object is gone; else "unreadable"): a
    dropped connection or a vanished object fails this file, not the index.
    """
    from dslake_index.profile_task import profile_file_task

    # The suffix keeps the profilers' choice by extension; the name is dslake's own, never the object's.
    tmp = Path(tmp_dir) / f"{uuid.uuid4().hex}{Path(rel).suffix}"
    try:
        tmp.parent.mkdir(exist_ok=True)  # inside the catalog (or a worker's scratch folder), which exists by now
        with open_source() as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        reason, kind = failure(exc)
        return {"hash": None, "profile": None, "error": f"cannot download: {reason}"[:500], "error_kind": kind,
                "size": size, "mtime_ns": stamp}
    try:
        result = profile_file_task(str(tmp), db_path, limits, algorithm)
    finally:
        tmp.unlink(missing_ok=True)
    # The record keeps the listing's size and stamp, which the next listing is compared with.
    result["size"], result["mtime_ns"] = size, stamp
    return result


def list_objects(url: str, catalog_dir: Path) -> tuple[ObjectLake, ScanResult]:
    """Return the ObjectLake the profilers download from (into the catalog's tmp-objects/) and its listing."""
    lake = object_lake(url, catalog_dir / "tmp-objects")
    return lake, scan_objects(lake)


class ObjectTables:
    """A lake in S3 as the Delta and Iceberg readers need it (index/tables.py's TableStore): the URLs of its
    objects and the store settings each reader takes in its own form (delta-rs and pyiceberg do not read fsspec's)."""

    def __init__(self, lake: ObjectLake) -> None:
        self.lake = lake
        self.env = dict(lake.env)

    def url(self, rel: str) -> str:
        """Return the s3:// URL of a lake-relative path (delta-rs and pyiceberg know s3, not s3a)."""
        return "s3://" + self.lake.object_url(rel).partition("://")[2]

    def delta_options(self) -> dict[str, str]:
        """Return delta-rs's storage options: the endpoint (plain HTTP allowed when it is one), keys and region."""
        names = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_PROFILE")
        options = {k: self.env[k] for k in names if self.env.get(k)}
        endpoint = self.env.get("AWS_ENDPOINT_URL_S3") or self.env.get("AWS_ENDPOINT_URL", "")
        if endpoint:
            options["AWS_ENDPOINT_URL"] = endpoint
            options["AWS_ALLOW_HTTP"] = "true" if endpoint.startswith("http://") else "false"
        return options

    def iceberg_io(self) -> Any:
        """Return the pyiceberg FileIO dslake reads the store with: its fsspec one (s3fs, which dslake already reads
        the store with), built here from the store's settings; a table's metadata never names it."""
        from pyiceberg.io.fsspec import FsspecFileIO

        props: dict[str, str] = {}
        for key, name in (("s3.endpoint", "AWS_ENDPOINT_URL"), ("s3.access-key-id", "AWS_ACCESS_KEY_ID"),
                          ("s3.secret-access-key", "AWS_SECRET_ACCESS_KEY"), ("s3.session-token", "AWS_SESSION_TOKEN"),
                          ("s3.region", "AWS_REGION"), ("s3.region", "AWS_DEFAULT_REGION")):
            if self.env.get(name) and key not in props:
                props[key] = self.env[name]
        if self.env.get("AWS_ENDPOINT_URL_S3"):
            props["s3.endpoint"] = self.env["AWS_ENDPOINT_URL_S3"]
        return FsspecFileIO(props)

    def read_text(self, rel: str) -> str:
        """Return a small object's text."""
        key = self.lake.object_url(rel).partition("://")[2]
        return filesystem(self.lake).cat_file(key).decode("utf-8", errors="replace")


def object_tables(url: str) -> ObjectTables | None:
    """Return the table access of a lake in S3 (the settings in force now), or None for another store."""
    lake = object_lake(url, Path("."))
    return ObjectTables(lake) if lake.scheme in ("s3", "s3a") else None
