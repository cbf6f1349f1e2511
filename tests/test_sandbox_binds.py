"""What a script can see under bubblewrap (the allow-list `dslake doctor` prints), and the work folder's limits.

The allow-list is checked from inside: each listed system path exists there and a host file outside it does
not. The work folder is a tmpfs of sandbox.disk_mb under bubblewrap whose files outlive each script on the
host; without bubblewrap its budget counts files held open after deletion and folders a script made mode 000.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from sandbox_helpers import BACKENDS, BWRAP_REASON, make_lake, sandbox

from dsstar_lake.sandbox import bwrap
from dsstar_lake.sandbox.workfolder import clean, held_open_deleted, remove_changed_since, usage

needs_bwrap = pytest.mark.skipif(BWRAP_REASON is not None, reason=f"{BWRAP_REASON}")


@pytest.fixture
def host_file():
    """A world-readable file outside /tmp, homes and every bind (the host's /tmp is replaced inside anyway)."""
    folder = Path(tempfile.mkdtemp(prefix="dslake-binds-", dir="/var/tmp"))
    (folder / "notes.txt").write_text("host data\n")
    yield folder / "notes.txt"
    shutil.rmtree(folder)


@needs_bwrap
def test_a_script_sees_the_listed_paths_and_not_a_host_file_outside_them(tmp_path, host_file):
    listed = [b.path for b in bwrap.system_binds(sys.executable)]
    assert "/usr/lib" in listed and str(Path(sys.prefix).resolve()) in listed
    code = f"import os, json\nprint(json.dumps({{p: os.path.exists(p) for p in {[*listed, str(host_file)]!r}}}))\n"
    result = sandbox("bwrap", make_lake(tmp_path / "lake")).run(code, tmp_path / "work")
    seen = json.loads(result.stdout)
    assert seen.pop(str(host_file)) is False and host_file.read_text() == "host data\n"
    assert all(seen.values()), [p for p, ok in seen.items() if not ok]


@needs_bwrap
def test_doctor_prints_what_a_script_can_see_and_the_limits(monkeypatch):
    monkeypatch.delenv("DSLAKE_SANDBOX_BACKEND", raising=False)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    files = checks["sandbox files"]["detail"]
    assert files.startswith("a script sees only: ") and "/usr/lib (read-only)" in files
    assert "/tmp (tmpfs of" in files and "<work folder> (tmpfs of" in files
    assert not any(f"; {top} (" in files for top in ("/home", "/root", "/run", "/srv", "/var"))
    limits = checks["sandbox limits"]["detail"]
    assert limits.startswith("memory: ") and ("memory cgroup" in limits or "RLIMIT_AS" in limits)


@pytest.mark.parametrize("backend", BACKENDS)
def test_work_files_outlive_each_script_and_deletions_reach_the_host(backend, tmp_path):
    sb = sandbox(backend, make_lake(tmp_path / "lake"))
    work = tmp_path / "work"
    first = sb.run("import os\nos.makedirs('sub', exist_ok=True)\nopen('sub/a.csv', 'w').write('1')\n"
                   "open('gone.txt', 'w').write('x')\nos.symlink('/etc/hostname', 'link')\n", work)
    assert first.ok, first.stderr
    assert (work / "sub" / "a.csv").read_text() == "1" and (work / "gone.txt").exists()
    second = sb.run("import os\nprint(open('sub/a.csv').read())\nos.remove('gone.txt')\n", work)
    assert second.ok and second.stdout == "1\n", second.stderr
    assert not (work / "gone.txt").exists() and (work / "sub" / "a.csv").read_text() == "1"
    if backend == "bwrap":  # only regular files and folders come back out of the tmpfs
        assert not (work / "link").is_symlink()


@needs_bwrap
def test_the_work_folder_is_a_tmpfs_of_disk_mb(tmp_path):
    code = "import os\nst = os.statvfs('.')\nprint(st.f_blocks * st.f_frsize // 2**20)\n"
    result = sandbox("bwrap", make_lake(tmp_path / "lake"), disk_mb=24).run(code, tmp_path / "work")
    assert result.stdout.strip() == "24"


def test_a_deleted_file_held_open_counts(tmp_path):
    # A fresh process, so that no other test's open files count: it deletes its file, writes 3 MiB, waits.
    code = ("import os, sys\nfh = open(sys.argv[1], 'wb')\nos.unlink(sys.argv[1])\nfh.write(b'x' * (3 << 20))\n"
            "fh.flush()\nos.fsync(fh.fileno())\nprint('ready', flush=True)\nsys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "held.bin")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        assert held_open_deleted([proc.pid]) >= 3 << 20
        assert not (tmp_path / "held.bin").exists() and usage(tmp_path).bytes < 1 << 20  # a walk cannot see it
    finally:
        proc.communicate("")
    assert held_open_deleted([proc.pid]) == 0


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_a_mode_000_folder_is_measured_and_removed_as_a_normal_user(host_file):
    work = host_file.parent / "work"  # pytest's tmp_path lies in a folder only root may enter
    (work / "locked").mkdir(parents=True)
    (work / "locked" / "big.bin").write_bytes(b"x" * (2 << 20))
    for path in (host_file.parent, work, work / "locked", work / "locked" / "big.bin"):
        os.chown(path, 65534, 65534)
    (work / "locked").chmod(0)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # as nobody: a normal user cannot list a mode-000 folder without giving its bits back
        try:
            os.setgid(65534)
            os.setuid(65534)
            seen = usage(work).bytes
            removed = remove_changed_since(work, 0)
            os.write(write_fd, json.dumps([seen, removed, clean(work, lambda p: False)]).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    os.waitpid(pid, 0)
    seen, removed, kept = json.loads(os.read(read_fd, 1000))
    os.close(read_fd)
    assert seen >= 2 << 20 and removed == 2 and kept == [] and list(work.iterdir()) == []
