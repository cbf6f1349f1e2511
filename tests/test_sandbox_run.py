"""The sandbox's contract with the agent loop: run a script in a work folder with the lake at data/."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from dslake_index import bwrap_binds
from sandbox_helpers import BACKENDS, BWRAP_REASON, lake_snapshot, make_lake, sandbox

from dsstar_lake.base.errors import ConfigError, UsageError
from dsstar_lake.sandbox import ExecResult, Sandbox
from dsstar_lake.sandbox import bwrap as bw


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    return make_lake(tmp_path / "lake")


@pytest.mark.parametrize("backend", BACKENDS)
def test_script_reads_lake_writes_workdir_and_prints(backend, lake, tmp_path):
    work = tmp_path / "work"
    sb = sandbox(backend, lake)
    code = (
        "import os, pandas as pd\n"
        "df = pd.read_csv('data/sales.csv')\n"
        "df.to_csv('out.csv', index=False)\n"
        "print('total', df['units'].sum(), os.getcwd())\n"
    )
    res = sb.run(code, work, name="step1.py")
    assert res.ok, res.stderr
    assert res.backend == sb.backend == backend
    assert res.stdout.split()[:2] == ["total", "14"]
    assert res.stdout.split()[2] == str(work.resolve())
    assert res.script_name == "step1.py" and not (work / "step1.py").exists()  # never written where it runs
    assert (work / "out.csv").read_text().startswith("region,units")
    assert res.lake_modified == [] and res.killed_by is None and not res.timed_out


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_script_gives_traceback(backend, lake, tmp_path):
    res = sandbox(backend, lake).run("x = 1\nprint('before')\n1 / 0\n", tmp_path / "w")
    assert not res.ok and res.returncode == 1
    assert res.stdout == "before\n"
    assert res.traceback is not None and res.traceback.startswith("Traceback (most recent call last):")
    assert res.traceback.rstrip().endswith("ZeroDivisionError: division by zero")
    assert res.killed_by is None
    assert "exit 1" in res.describe()
    json.dumps(res.to_dict())  # goes into trace.jsonl as is


@pytest.mark.parametrize("backend", BACKENDS)
def test_output_is_capped_keeping_head_and_tail(backend, lake, tmp_path):
    code = "print('FIRST')\nfor i in range(20000): print('line', i)\nprint('LAST')\n"
    res = sandbox(backend, lake, max_output_bytes=2000).run(code, tmp_path / "w")
    assert res.ok
    assert res.stdout.startswith("FIRST\n") and res.stdout.rstrip().endswith("LAST")
    assert res.stdout_bytes > 200000
    assert f"{res.stdout_bytes - 2000} bytes cut" in res.stdout
    assert len(res.stdout) < 2200


@pytest.mark.parametrize("backend", BACKENDS)
def test_timeout_argument_overrides_setting(backend, lake, tmp_path):
    res = sandbox(backend, lake, timeout_s=60).run("import time\nprint('up', flush=True)\ntime.sleep(60)\n",
                                                   tmp_path / "w", timeout_s=1)
    assert res.timed_out and res.killed_by == "timeout" and res.returncode is None
    assert res.stdout == "up\n"  # output printed before the kill is kept
    assert not res.ok and "time limit" in res.describe()


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_inside_catalog_workdir_are_not_lake_changes(backend, lake, tmp_path):
    # The default catalog lives inside the lake; a run's work folder is under it.
    work = lake / ".dslake" / "runs" / "r1"
    res = sandbox(backend, lake).run("open('fig.txt', 'w').write('x' * 1000)\n", work)
    assert res.ok, (res.stderr, res.lake_modified)
    assert (work / "fig.txt").stat().st_size == 1000


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_runs_from_threads(backend, lake, tmp_path):
    sb = sandbox(backend, lake)
    results: dict[int, ExecResult] = {}

    def go(i: int) -> None:
        results[i] = sb.run(f"print(open('data/sales.csv').read().count('\\n') + {i})\n", tmp_path / f"w{i}")

    threads = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: r.stdout.strip() for i, r in results.items()} == {i: str(3 + i) for i in range(4)}


def test_subprocess_backend_links_data_and_detects_any_change(lake, tmp_path):
    sb = sandbox("subprocess", lake)
    assert sb.warning and "not write-protected" in sb.warning
    work = tmp_path / "w"
    # Reset mtime after writing: the ctime in the fingerprint still gives it away.
    code = ("import os\np = 'data/sub/notes.txt'\nst = os.stat(p)\nopen(p, 'a').write('!')\n"
            "os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))\n")
    res = sb.run(code, work)
    links = {p.name: p.resolve() for p in (work / "data").iterdir()}
    assert all(p.is_symlink() for p in (work / "data").iterdir())
    assert links == {p.name: p.resolve() for p in lake.iterdir() if not p.name.startswith(".")}
    assert res.lake_modified == ["sub/notes.txt"]
    assert not res.ok and "modified the lake" in res.describe()


def test_watch_covers_context_files_beyond_the_bounded_walk(lake, tmp_path):
    for i in range(30):
        (lake / f"a{i:02d}.txt").write_text("x")
    sb = sandbox("subprocess", lake, fingerprint_files=5)
    code = "open('data/sub/notes.txt', 'w').write('changed')\n"
    assert sb.run(code, tmp_path / "w1").lake_modified == []  # beyond the bound and not watched
    res = sb.run(code + "\n", tmp_path / "w2", watch=["sub/notes.txt"])
    assert res.lake_modified == ["sub/notes.txt"]


@pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")
def test_bwrap_mounts_lake_read_only(lake, tmp_path):
    before = lake_snapshot(lake)
    res = sandbox("bwrap", lake).run("open('data/sales.csv', 'a').write('evil')\n", tmp_path / "w")
    assert "Read-only file system" in res.stderr
    assert lake_snapshot(lake) == before and res.lake_modified == []
    assert (tmp_path / "w" / "data").is_dir() and not (tmp_path / "w" / "data").is_symlink()


def test_auto_falls_back_with_warning_and_bwrap_demand_fails(lake, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    bw.probe.cache_clear()
    try:
        sb = Sandbox({"backend": "auto"}, lake)
        assert sb.backend == "subprocess"
        assert "bwrap is not installed" in sb.warning and "network" in sb.warning
        with pytest.raises(ConfigError) as err:
            Sandbox({"backend": "bwrap"}, lake)
        assert "apt-get install -y bubblewrap" in err.value.hint
    finally:
        bw.probe.cache_clear()


@pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")
def test_a_passed_bwrap_trial_is_kept_until_what_it_depends_on_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(bwrap_binds, "_USERNS", {})
    ran, real = [], bw._trial
    monkeypatch.setattr(bw, "_trial", lambda *args: ran.append(args) or real(*args))
    python = sys.executable
    try:
        bw.probe.cache_clear()
        assert bw.probe(python, 64) is None and len(ran) == 1  # tried, passed, kept
        bw.probe.cache_clear()  # as in a later process
        assert bw.probe(python, 64) is None and len(ran) == 1
        bw.probe.cache_clear()
        assert bw.probe(python, 32) is None and len(ran) == 2  # something it depends on changed (here /tmp's size)
        assert bw.probe(python, 64, fresh=True) is None and len(ran) == 3  # dslake doctor: always the trial
        # Nothing but the --disable-userns flags is ever taken from the kept file into bwrap's command line.
        kept = next((tmp_path / "cache" / "dslake" / "sandbox-trial").glob("*.json"))
        kept.write_text(json.dumps({**json.loads(kept.read_text()), "userns_flags": ["--bind", "/", "/"]}))
        monkeypatch.setattr(bwrap_binds, "_USERNS", {})
        bw.probe.cache_clear()
        assert bw.probe(python, 64) is None and "--bind" not in bw.userns_flags(shutil.which("bwrap"))
        # A trial that fails is never kept, and forgets the pass it contradicts: the next process tries again.
        monkeypatch.setattr(bw, "_trial", lambda *args: ran.append(args) or "bwrap trial failed: no")
        bw.probe.cache_clear()
        assert bw.probe(python, 64, fresh=True) == "bwrap trial failed: no"
        bw.probe.cache_clear()
        assert bw.probe(python, 64) == "bwrap trial failed: no" and len(ran) == 5
    finally:
        bw.probe.cache_clear()


@pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")
def test_auto_picks_bwrap_when_it_works(lake):
    sb = Sandbox({}, lake)
    assert sb.backend == "bwrap" and sb.warning is None
    assert sb.protections["network"].startswith("none")


def test_bad_settings_and_names_are_user_errors(lake, tmp_path):
    with pytest.raises(ConfigError):
        Sandbox({"backend": "docker"}, lake)
    sb = sandbox("subprocess", lake)
    for bad in ("../x.py", "a/b.py", "", "data"):
        with pytest.raises(UsageError):
            sb.run("print(1)", tmp_path / "w", name=bad)



@pytest.mark.parametrize("backend", BACKENDS)
def test_data_folder_left_by_a_script_is_moved_aside(backend, lake, tmp_path):
    sb = sandbox(backend, lake)
    work = tmp_path / "w"
    (work / "data").mkdir(parents=True)
    (work / "data" / "mine.csv").write_text("x")
    res = sb.run("print(open('data/sales.csv').read().splitlines()[0])\n", work)
    assert res.ok and res.stdout == "region,units\n"
    assert (work / "data.moved-1" / "mine.csv").read_text() == "x"
    assert res.notes == ["work folder had its own data/ folder; moved to data.moved-1"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_size_limit(backend, lake, tmp_path):
    code = "open('big.bin', 'wb').write(b'x' * 3_000_000)\n"
    res = sandbox(backend, lake, file_mb=1).run(code, tmp_path / "w")
    assert res.killed_by == "file size" and "File too large" in res.stderr
    assert (tmp_path / "w" / "big.bin").stat().st_size <= 1024 * 1024


@pytest.mark.parametrize("backend", BACKENDS)
def test_cpu_limit(backend, lake, tmp_path):
    res = sandbox(backend, lake, cpu_s=1).run("while True: pass\n", tmp_path / "w", timeout_s=8)
    assert res.killed_by == "cpu" and not res.timed_out and res.returncode == -24


def test_environment_is_built_from_scratch(lake, tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("SOME_API_TOKEN", "t0k")
    sb = sandbox("subprocess", lake, env_passthrough="TZ,SOME_API_TOKEN,NOT_SET")
    code = "import os, json\nprint(json.dumps([dict(os.environ), os.listdir(os.environ['HOME'])]))\n"
    env, home_files = json.loads(sb.run(code, tmp_path / "w").stdout)
    assert env["TZ"] == "UTC" and "SOME_API_TOKEN" not in env and "NOT_SET" not in env
    assert env["MPLBACKEND"] == "Agg" and env["OMP_NUM_THREADS"] == "1"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] != os.environ["HOME"] and home_files == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_are_traced_whatever_way_the_script_opens_them(backend, lake, tmp_path):
    (lake / ".dslake").mkdir()
    (lake / ".dslake" / "manifest.sqlite").write_text("not for scripts")
    code = (
        "import glob, subprocess, sys, pandas as pd\n"
        "pd.read_csv('data/sales.csv')\n"
        "for path in glob.glob('data/**/*.txt', recursive=True):\n"  # a glob: no literal name in the code
        "    open(path).read()\n"
        f"open({str(lake / 'sales.csv')!r}, 'rb').read()\n"  # the lake by its absolute path
        "subprocess.run([sys.executable, '-c', \"open('data/sub/notes.txt').read()\"], check=True)\n"
        "try:\n    open('data/.dslake/manifest.sqlite').read()\nexcept OSError:\n    pass\n"
        "open('mine.csv', 'w').write('x')\nopen('mine.csv').read()\n"
    )
    res = sandbox(backend, lake).run(code, tmp_path / "work")
    assert res.ok, res.stderr
    assert res.reads == ["sales.csv", "sub/notes.txt"]  # once each, first-read order; no catalog, no own files


SIGKILLED = "import os, signal\nprint('before', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n"
SHM_PAST_MEMORY = """
print('before', flush=True)
for i in range(64):
    with open(f'/dev/shm/fill-{i}', 'wb') as fh:
        fh.write(b'x' * (8 << 20))
"""


def _ended_by_sigkill_alone(res: ExecResult) -> None:
    """A script that died by SIGKILL shows as that, with nothing of the launcher's in its output."""
    assert res.stdout == "before\n"
    assert "Traceback" not in res.stderr and "_launch.py" not in res.stderr, res.stderr
    assert res.returncode == -9 and not res.ok


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sigkilled_script_leaves_no_launcher_traceback(backend, lake, tmp_path):
    res = sandbox(backend, lake).run(SIGKILLED, tmp_path / "w")
    _ended_by_sigkill_alone(res)
    assert res.killed_by == "signal 9"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_script_the_memory_cgroup_kills_leaves_no_launcher_traceback(backend, lake, tmp_path):
    box = sandbox(backend, lake, memory_mb=256)
    if not box.memory_cgroup:
        pytest.skip("no memory cgroup on this machine: only the per-process bound applies")
    res = box.run(SHM_PAST_MEMORY, tmp_path / "w")
    _ended_by_sigkill_alone(res)
    assert res.killed_by == "memory"
