"""Index the same generated lake from local disk and from a real S3-compatible server on 127.0.0.1 (issue 19).

usage: python benchmarks/objectstore_bench.py [--files 2000] [--seed 7] [--big-mb 8] [--scratch DIR] [--jobs N]
Generates the lake with make_lake.py (cached in the scratch folder), starts moto's S3 server in this process,
uploads the lake into a bucket, then runs `dslake index` as a user would: a first index and a no-change re-index of
the folder, and the same two of s3://bucket/lake (each into its own catalog). Prints wall seconds and files/s.
The server keeps objects in memory and answers from a thread of this process: the figures bound what listing and
download cost over HTTP, not a cloud store's latency (tens of ms per request, which the download of each new object
pays once).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = str(HERE.parent / "cli.py")
sys.path.insert(0, str(HERE))

from scale_bench import cached_lake  # noqa: E402  (benchmarks/ is not a package)


def index(location: str, catalog: Path, env: dict[str, str], jobs: int | None) -> tuple[float, dict]:
    """Run `dslake index LOCATION --catalog CATALOG --json` in a fresh process; return (wall seconds, summary)."""
    extra = ["--jobs", str(jobs)] if jobs else []
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, CLI, "index", location, "--catalog", str(catalog), "--json", *extra],
                          capture_output=True, text=True, env=env, cwd=HERE.parent)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"dslake index {location} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "dslake-bench")
    args = parser.parse_args()
    try:
        import s3fs
        from moto.server import ThreadedMotoServer
    except ImportError:
        sys.exit("needs s3fs and moto[server]: pip install -e '.[dev]'")

    args.scratch.mkdir(parents=True, exist_ok=True)
    lake, _, generated = cached_lake(args.files, args.seed, args.big_mb, args.scratch)
    files = [p for p in lake.rglob("*") if p.is_file() and not any(part.startswith(".") for part in
                                                                     p.relative_to(lake).parts)]
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"lake: {len(files):,} files, {size_mb:,.0f} MB ({lake}; generated in {generated:.1f} s)")

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    os.environ.update({k: v for k, v in env.items() if k.startswith("AWS_")})
    try:
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir("bench")
        started = time.perf_counter()
        fs.put(str(lake) + "/", "bench/lake/", recursive=True)
        print(f"upload to the loopback server: {time.perf_counter() - started:.1f} s")

        with tempfile.TemporaryDirectory(prefix="dslake-objbench-") as tmp:
            rows = []
            for name, location in (("local disk", str(lake)), ("S3 on loopback", "s3://bench/lake")):
                catalog = Path(tmp) / name.replace(" ", "-")
                first, summary = index(location, catalog, env, args.jobs)
                again, second = index(location, catalog, env, args.jobs)
                indexed = summary["added"] + summary["changed"]
                if second["added"] + second["changed"]:
                    sys.exit(f"{name}: the re-index found changes: {second}")
                if summary["failed"]:
                    print(f"{name}: {summary['failed']} files failed, e.g. {summary['failures'][:3]}")
                rows.append((name, indexed, summary["entries"], first, again))
        print()
        print(f"{'source':<16} {'files':>7} {'entries':>8} {'first index s':>14} {'files/s':>8} {'no-change s':>12}")
        for name, indexed, entries, first, again in rows:
            print(f"{name:<16} {indexed:>7,} {entries:>8,} {first:>14.1f} {indexed / first:>8.1f} {again:>12.2f}")
        if rows[0][2] != rows[1][2]:
            print(f"warning: the two catalogs differ in entries ({rows[0][2]} vs {rows[1][2]})")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
