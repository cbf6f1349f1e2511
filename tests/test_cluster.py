"""dslake index --cluster (issue 19): profiling on a real Dask cluster on 127.0.0.1 (a scheduler and two workers)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.lake import Lake

distributed = pytest.importorskip("distributed")

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Dask scheduler and two one-thread workers (each under its nanny), as `dask scheduler`/`dask worker` run."""
    work = tmp_path_factory.mktemp("dask")
    info = work / "scheduler.json"
    logs = [open(work / f"{name}.log", "w") for name in ("scheduler", "worker-1", "worker-2")]
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
                              stdout=logs[0], stderr=subprocess.STDOUT, cwd=work, start_new_session=True)]
    procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(info),
                                "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--local-directory",
                                str(work / f"w{i}")], stdout=log, stderr=subprocess.STDOUT, cwd=work,
                               start_new_session=True)
              for i, log in enumerate(logs[1:])]
    client = None
    try:
        for _ in range(600):  # the scheduler writes its address once it listens
            if info.exists() and info.stat().st_size:
                break
            time.sleep(0.05)
        client = distributed.Client(json.loads(info.read_text())["address"], timeout=30, set_as_default=False)
        client.wait_for_workers(2, timeout=60)
        yield client
    finally:
        if client is not None:
            client.close()
        for proc in procs:  # each in its own group: a nanny's worker and its profilers go with it
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for log in logs:
            log.close()


def address(client) -> str:
    return client.scheduler.address


def snapshot(catalog: Path) -> dict[str, list]:
    """What a catalog says about its lake: file rows, profiles, entries with their cards and members."""
    conn = sqlite3.connect(catalog / "manifest.sqlite")
    try:
        return {
            "files": sorted(conn.execute("SELECT path, size, mtime_ns, hash, status, error_kind, format, entry_id "
                                         "FROM files")),
            "profiles": sorted(conn.execute("SELECT hash, profiler_version, format, signature, profile FROM profiles")),
            "entries": sorted(conn.execute("SELECT id, kind, folder, path, format, content_hash, member_count, "
                                           "description, card, card_hash FROM entries")),
        }
    finally:
        conn.close()


def two_copies(src: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Copy a lake twice with its files' times, so both catalogs must record the same rows."""
    return shutil.copytree(src, tmp_path / "on-cluster"), shutil.copytree(src, tmp_path / "local")


def test_cluster_index_equals_a_local_index_entry_for_entry(cluster, samples_lake, tmp_path):
    # The same copy of data_samples as the session's locally indexed samples_lake (files, times and all).
    on_cluster = shutil.copytree(SAMPLES, tmp_path / "lake", ignore=shutil.ignore_patterns(".dslake"))
    remote = Lake.open(on_cluster).index(cluster=address(cluster))
    assert remote.added > 20 and remote.notes == []
    assert remote.cluster["workers"] == 2 and remote.cluster["files"] == remote.added  # failed ones are among them
    assert remote.cluster["tasks"] >= 2  # enough tasks to keep both workers busy
    assert remote.failed == len(Lake.open(samples_lake).status().failed)
    assert snapshot(on_cluster / ".dslake") == snapshot(samples_lake / ".dslake")
    again = Lake.open(on_cluster).index(cluster=address(cluster))  # nothing changed: nothing sent
    assert (again.added, again.changed, again.profiled, again.cluster) == (0, 0, 0, None)
    (on_cluster / "copy_of_sales.csv").write_bytes((on_cluster / "sales.csv").read_bytes())
    # its content's profile was known to the workers; the text line says where the work went
    reused = CliRunner().invoke(cli, ["index", str(on_cluster), "--cluster", address(cluster)])
    assert reused.exit_code == 0, reused.output
    assert "1 added" in reused.stdout and "profiled 0, reused 1" in reused.stdout
    assert f"cluster {address(cluster)}: 2 workers, 1 task for 1 file" in reused.stdout


def write_small_lake(root: Path, n: int) -> Path:
    for i in range(n):
        folder = root / f"site_{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        if i % 3 == 0:
            (folder / f"record_{i}.json").write_text(json.dumps({"id": i, "items": [{"x": i * 0.5}]}))
        else:
            (folder / f"table_{i}.csv").write_text(f"id,value_{i % 4},label\n" + "".join(
                f"{r},{r * i % 97},l{r % 3}\n" for r in range(30)))
    return root


def test_batches_go_to_the_cluster_a_window_at_a_time(cluster, tmp_path, monkeypatch):
    from dslake_index import cluster as cluster_module

    on_cluster, local = two_copies(write_small_lake(tmp_path / "src", 160), tmp_path)
    monkeypatch.setattr("dslake_index.collect.AHEAD_PER_WORKER", 1)  # a window of one batch per worker thread
    in_flight: list[int] = []
    real_start = cluster_module._Tasks.start_next

    def counting_start(self, finished):
        real_start(self, finished)
        in_flight.append(len(self.running))

    monkeypatch.setattr(cluster_module._Tasks, "start_next", counting_start)
    summary = Lake.open(on_cluster).index(cluster=address(cluster))
    assert (summary.added, summary.failed, summary.notes) == (160, 0, [])
    assert summary.cluster["tasks"] == 20 and max(in_flight) == 2  # 20 batches of 8, two at a time
    Lake.open(local).index()
    assert snapshot(on_cluster / ".dslake") == snapshot(local / ".dslake")


def test_a_worker_killed_mid_run_loses_nothing(cluster, tmp_path):
    on_cluster, local = two_copies(write_small_lake(tmp_path / "src", 160), tmp_path)
    pids = cluster.run(os.getpid)
    killed: list[int] = []

    def kill_one_worker(event: str, data: dict) -> None:
        if event == "file" and not killed:  # results are arriving: both workers hold tasks
            busy = [w for w, keys in cluster.processing().items() if keys] or list(pids)
            killed.append(pids[busy[0]])
            os.kill(pids[busy[0]], signal.SIGKILL)

    summary = Lake.open(on_cluster).index(progress=kill_one_worker, cluster=address(cluster))
    assert killed
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)
    assert (summary.added, summary.failed, summary.notes) == (160, 0, [])
    Lake.open(local).index()
    assert snapshot(on_cluster / ".dslake") == snapshot(local / ".dslake")
    cluster.wait_for_workers(2, timeout=60)  # its nanny started it again


def test_a_stuck_file_times_out_on_the_worker_and_is_recorded(cluster, tmp_path):
    lake_dir = write_small_lake(tmp_path / "lake", 4)
    stuck = lake_dir / "site_0" / "table_stuck.csv"
    stuck.write_text("a,b\n1,2\n")

    def swap_for_a_pipe(event: str, data: dict) -> None:
        if event == "plan":  # scanned as a file; a profiler that opens it now waits for a writer forever
            stuck.unlink()
            os.mkfifo(stuck)

    lake = Lake.open(lake_dir, overrides={"profile.timeout_s": 1.0})
    summary = lake.index(progress=swap_for_a_pipe, cluster=address(cluster))
    assert summary.added == 5 and summary.failed == 1
    row = lake.connection().execute("SELECT status, error_kind FROM files WHERE path = ?",
                                    ("site_0/table_stuck.csv",)).fetchone()
    assert tuple(row) == ("failed", "timeout")
    assert lake.connection().execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0] == 4


def test_bad_cluster_addresses_are_one_line_and_write_nothing(tmp_path, monkeypatch):
    import socket

    lake_dir = write_small_lake(tmp_path / "lake", 2)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    runner = CliRunner()
    unreachable = runner.invoke(cli, ["index", str(lake_dir), "--cluster", f"tcp://127.0.0.1:{closed}"])
    malformed = runner.invoke(cli, ["index", str(lake_dir), "--cluster", "ray://head:10001"])
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    missing = runner.invoke(cli, ["index", str(lake_dir)], env={"DSLAKE_INDEX_CLUSTER": "tcp://127.0.0.1:8786"})
    for result, code, words in ((unreachable, 1, "cannot reach the cluster"), (malformed, 2, "not a Dask scheduler"),
                                (missing, 2, "indexing on a cluster needs the package")):
        assert result.exit_code == code, result.output
        assert result.output.startswith(f"error: {words}") and "Traceback" not in result.output
    assert not (lake_dir / ".dslake").exists()


def test_a_lake_in_object_storage_is_profiled_on_the_workers(cluster, tmp_path, monkeypatch):
    moto_server = pytest.importorskip("moto.server")
    s3fs = pytest.importorskip("s3fs")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        for name, value in {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
                            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                            "AWS_EC2_METADATA_DISABLED": "true"}.items():
            monkeypatch.setenv(name, value)  # the workers get them with the lake, not from their environment
        s3 = s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)
        s3.mkdir("cluster-lake")
        for key, sample in {"tables/sales.csv": "sales.csv", "parks.json": "city/parks.json"}.items():
            s3.put_file(str(SAMPLES / sample), f"cluster-lake/lake/{key}")
        # A generous time limit: a worker's first object imports s3fs and botocore, slow on a busy 2-core machine.
        slow = {"profile.timeout_s": 300.0}
        remote = Lake.open("s3://cluster-lake/lake", catalog=tmp_path / "on-cluster", overrides=slow).index(
            cluster=address(cluster))
        here = Lake.open("s3://cluster-lake/lake", catalog=tmp_path / "local", overrides=slow).index()
    finally:
        server.stop()
    assert (remote.added, remote.profiled, remote.failed) == (here.added, here.profiled, here.failed) == (2, 2, 0), \
        remote.failures
    assert snapshot(tmp_path / "on-cluster") == snapshot(tmp_path / "local")
    assert not (tmp_path / "on-cluster" / "tmp-objects").exists()  # downloaded on the workers, not into the catalog
