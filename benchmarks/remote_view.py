"""Fill a run's view of a lake in object storage: first from the store (downloads), then from the blob cache.

usage: python benchmarks/remote_view.py FOLDER
Uploads FOLDER to an S3 server (moto's server mode) on 127.0.0.1, indexes it into a temporary catalog, then
times LakeView.prepare over every file twice: a first view downloads each object, hashes it against the manifest
and links it in; a second view finds every blob in the cache. Never run by CI (moto, and a lake of some size).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path


def main(src: Path) -> None:
    """Print the index time and the two view times for the lake folder src."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    base = Path(tempfile.mkdtemp(prefix="dslake-remote-bench-"))
    os.environ.update(AWS_ENDPOINT_URL=f"http://{host}:{port}", AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
                      AWS_SHARED_CREDENTIALS_FILE=str(base / "none"), AWS_CONFIG_FILE=str(base / "none"))
    logging.disable(logging.INFO)  # moto's request log
    import s3fs
    from dslake_index import lookup

    from dsstar_lake.lake import Lake
    from dsstar_lake.runs.lakeview import LakeView

    fs = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
    fs.mkdir("bench-lake")
    files = sorted(p for p in src.rglob("*") if p.is_file() and not p.name.startswith("."))
    for path in files:
        fs.put_file(str(path), f"bench-lake/lake/{path.relative_to(src).as_posix()}")
    size = sum(p.stat().st_size for p in files)
    started = time.perf_counter()
    lake = Lake.open("s3://bench-lake/lake", catalog=base / "catalog")
    summary = lake.index()
    print(f"index: {len(files)} objects, {size / 2**20:.1f} MiB, {time.perf_counter() - started:.1f} s "
          f"({summary.failed} failed to profile)")
    for path, error in summary.failures:
        print(f"  failed: {path}: {error[:200]}")
    rows = lookup.file_hashes(lake.catalog.connection())
    settings = lake.settings.with_overrides({"remote.fetch_files": len(rows)})
    for label in ("first view (downloads)", "second view (cache)"):
        view = LakeView("s3://bench-lake/lake", lake.catalog_dir, settings, rows)
        started = time.perf_counter()
        notes = view.prepare("", [path for path, _, _ in rows])
        print(f"{label}: {time.perf_counter() - started:.2f} s; {'; '.join(notes)}")
    server.stop()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n")[2])
    main(Path(sys.argv[1]))
