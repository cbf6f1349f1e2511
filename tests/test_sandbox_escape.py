"""Hostile scripts against each sandbox backend; prints a table of what was contained and how.

Each attempt is a script a misled or malicious model could write. Outcomes:
  blocked   the attempt failed (or saw nothing),
  detected  it happened but the run is told (lake_modified non-empty; the agent aborts the run),
  ESCAPED   it worked.
EXPECTED says what each backend claims; the summary test fails if any attempt does worse.
Set SANDBOX_TABLE_OUT=path to also write the table as Markdown (docs/safety.md is made from it).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_helpers import (
    BACKENDS,
    BWRAP_REASON,
    LIMITS,
    lake_snapshot,
    make_catalog,
    make_lake,
    processes_with,
    sandbox,
    survivors,
)

from dsstar_lake.sandbox import ExecResult, Sandbox

SECRETS = {"GEMINI_API_KEY": "gk-secret-1", "OPENAI_API_KEY": "sk-secret-2", "AWS_SECRET_ACCESS_KEY": "aws-3",
           "GOOGLE_APPLICATION_CREDENTIALS": "/x/creds.json", "MY_SERVICE_TOKEN": "tok-4",
           "DB_PASSWORD": "pw-5"}
BLOCKED, DETECTED, ESCAPED = "blocked", "detected", "ESCAPED"


@dataclass
class Ctx:
    """What an attempt's script and check need: the lake, a fake home, a token, a loopback server."""

    lake: Path
    work: Path
    home: Path
    outside: Path
    token: str
    port: int
    parent_pid: int
    before: dict[str, bytes]
    sb: Sandbox
    catalog: Path
    host: Path  # a folder outside /tmp, homes and every bind: /var/tmp/dslake-escape-*


@dataclass
class Attempt:
    name: str
    code: Callable[[Ctx], str]
    check: Callable[[ExecResult, Ctx], tuple[str, str]]
    timeout_s: float | None = None
    cgroups: bool = True  # False: act as if this machine allowed no pids cgroup
    then: Callable[[Ctx], tuple[str, str]] | None = None  # a second script (name, code) run after the first
    limits: dict | None = None  # sandbox settings for this attempt
    setup: Callable[[Ctx], None] | None = None  # prepares the catalog or host before the script runs
    backends: tuple[str, ...] = ("bwrap", "subprocess")  # where the attack applies


def _lake_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if lake_snapshot(ctx.lake, ctx.work) == ctx.before and not res.lake_modified:
        return BLOCKED, "read-only mount: " + (_error(res) or "nothing written")
    if res.lake_modified:
        return DETECTED, f"lake_modified lists {len(res.lake_modified)} paths; the run is aborted"
    return ESCAPED, "lake changed and nobody noticed"


def _error(res: ExecResult) -> str:
    """Return the script's final exception as 'Type [Errno N] text', without the path."""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    m = re.match(r"(\w+): (\[Errno \d+\] [^:]+)", lines[-1])
    return f"{m[1]} {m[2]}" if m else lines[-1][:60]


def _printed_secret(how: dict[str, str]) -> Callable[[ExecResult, Ctx], tuple[str, str]]:
    def check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
        leaked = [v for v in SECRETS.values() if v in res.stdout]
        leaked += ["the private key"] if "PRIVATE KEY" in res.stdout else []
        if leaked:
            return ESCAPED, f"read {leaked[0]}"
        return BLOCKED, how[ctx.sb.backend] + (f" ({_error(res)})" if _error(res) else "")
    return check


def _no_survivors(how: str) -> Callable[[ExecResult, Ctx], tuple[str, str]]:
    def check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
        alive = survivors(ctx.token)
        if alive:
            return ESCAPED, f"{len(alive)} processes outlived the run"
        return BLOCKED, how.format(r=res)
    return check


def _fork_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    alive = survivors(ctx.token)
    if alive:
        return ESCAPED, f"{len(alive)} processes outlived the run"
    bound = ctx.sb.protections["processes"].split(",")[0]
    if res.killed_by == "procs":
        return BLOCKED, f"{bound}: group frozen and killed at {res.peak_procs} tasks"
    if res.peak_procs is not None and res.peak_procs > LIMITS["max_procs"] + 1:
        return ESCAPED, f"reached {res.peak_procs} tasks"
    return BLOCKED, f"{bound}: peak {res.peak_procs} tasks, then {res.killed_by}; all killed"


def _outside_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if (ctx.outside / "owned.txt").exists():
        return ESCAPED, "wrote a file next to the lake"
    return BLOCKED, f"read-only root, private /tmp ({_error(res)})"


def _socket_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "CONNECTED" in res.stdout:
        return ESCAPED, "reached the loopback server"
    return BLOCKED, "own network namespace (" + res.stdout.strip()[:60] + ")"


def _environ_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "GOT" in res.stdout:
        return ESCAPED, "read dslake's launch environment (same uid)"
    return BLOCKED, f"pid namespace: dslake's pid does not exist inside ({_error(res) or res.stdout.strip()})"


def _supervisor_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    alive = survivors(ctx.token)
    if alive:
        return ESCAPED, "the daemon outlived the run (supervisor killed, no pids cgroup to sweep)"
    if ctx.sb.backend == "bwrap":
        return BLOCKED, "the supervisor is outside the pid namespace; namespace init ignores the kill"
    return BLOCKED, "supervisor died; the pids cgroup was emptied with SIGKILL"


def _memory_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if res.killed_by == "memory" or "MemoryError" in res.stderr:
        return BLOCKED, f"RLIMIT_AS {LIMITS['memory_mb']} MiB: MemoryError (killed_by={res.killed_by})"
    return ESCAPED, f"no memory limit hit ({res.describe()})"


def _output_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    kept = len(res.stdout.encode())
    if kept <= LIMITS["max_output_bytes"] + 200 and res.killed_by == "output":
        limit = LIMITS["output_limit_mb"]
        return BLOCKED, f"kept {kept} of {res.stdout_bytes} bytes; killed past {limit} MiB"
    return ESCAPED, f"kept {kept} bytes, killed_by={res.killed_by}"


def _timeout_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    alive = survivors(ctx.token)
    if res.timed_out and not alive:
        return BLOCKED, f"wall-clock timeout after {res.duration_s:.1f} s; group and descendants killed"
    return ESCAPED, f"timed_out={res.timed_out}, {len(alive)} survivors"


def _planted_check(victim: Callable[[Ctx], Path]) -> Callable[[ExecResult, Ctx], tuple[str, str]]:
    def check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
        path = victim(ctx)
        if path.read_bytes() != PRECIOUS.get(path.name, path.read_bytes()) or b"print(14)" in path.read_bytes():
            return ESCAPED, f"dslake wrote the next script into {path.name} through the link"
        if res.stdout.strip() != "14":
            return ESCAPED, f"the next script did not run as written ({res.describe()}: {res.stdout[:60]!r})"
        return BLOCKED, "scripts are written to a private folder outside the work folder; the link is ignored"
    return check


def _catalog_read_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    found = [s for s in ("MANIFEST-SECRET", "TRACE-SECRET") if s in res.stdout]
    if found:
        return ESCAPED, f"read {' and '.join(found)}"
    return BLOCKED, "the catalog is an empty read-only folder inside the sandbox, here and under data/"


def _catalog_write_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    config = ctx.catalog / "config.toml"
    if config.read_bytes() == PRECIOUS["config.toml"]:
        return BLOCKED, "hidden, read-only catalog: " + (_error(res) or res.stdout.strip()[:60])
    if res.catalog_modified:
        return DETECTED, f"catalog_modified lists {', '.join(res.catalog_modified[:2])}; the run is aborted"
    return ESCAPED, "the catalog's config changed and nobody noticed"


def _shm_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    match = re.search(r"wrote (\d+) MiB", res.stdout)
    wrote = int(match[1]) if match else -1
    limit = ATTEMPT_MEMORY_MB
    if wrote < 0 and res.killed_by == "memory" and ctx.sb.memory_cgroup:
        return BLOCKED, f"memory cgroup: files in /dev/shm count; killed at {limit} MiB for the whole tree"
    if 0 <= wrote <= limit:
        return BLOCKED, f"/dev/shm is a {limit} MiB tmpfs (the memory limit): wrote {wrote} MiB, then ENOSPC"
    return ESCAPED, f"wrote {wrote} MiB to /dev/shm with a {limit} MiB memory limit"


def _disk_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    from dsstar_lake.sandbox.workfolder import usage

    left = usage(ctx.work)
    budget = ctx.sb.cfg["disk_mb"], ctx.sb.cfg["max_files"]
    if res.killed_by == "disk" and left.mib <= budget[0] and left.files <= budget[1]:
        if ctx.sb.work_mb and "No space left" in res.stderr:
            return BLOCKED, f"the work folder is a {budget[0]} MiB tmpfs: ENOSPC, nothing kept"
        return BLOCKED, (f"stopped past {budget[0]} MiB / {budget[1]} entries (measured every 0.5 s, deleted "
                         f"files held open included); what it wrote removed ({left.files} entries left)")
    return ESCAPED, f"killed_by={res.killed_by}; {left.mib:.0f} MiB in {left.files} entries left"


def _userns_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "UNSHARE 0" in res.stdout:
        return ESCAPED, "created a user namespace (a fresh set of capabilities inside it)"
    return BLOCKED, f"bwrap --disable-userns ({res.stdout.strip()[:40]})"


def _host_file_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "TLS-KEY" in res.stdout or "PROJECT-ENV" in res.stdout:
        return ESCAPED, "read " + ("the root-only key" if "TLS-KEY" in res.stdout else "the project's .env")
    return BLOCKED, f"not bound: the path does not exist inside ({_error(res) or res.stdout.strip()[:60]})"


def _unix_socket_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "ANSWER" in res.stdout:
        return ESCAPED, "a root-only unix socket outside /run and /tmp accepted a command"
    return BLOCKED, f"not bound: the socket does not exist inside ({_error(res) or res.stdout.strip()[:60]})"


def _lake_hidden_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    leaked = [s for s in ("ENV-SECRET", "GIT-SECRET", "IGNORED-SECRET") if s in res.stdout]
    if leaked:
        return ESCAPED, f"read {', '.join(leaked)} through the lake's mounts"
    return BLOCKED, "blanked: an empty file or read-only tmpfs over each (data/ and the lake's own path)"


def _system_tmpfs_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    found = re.findall(r"(/\w+) ([\w-]+) wrote (\d+)", res.stdout)
    if not found or any(int(n) for _, _, n in found):
        return ESCAPED, "wrote to " + ", ".join(top for top, _, n in found if int(n)) if found else res.stderr[-80:]
    return BLOCKED, "not bound: " + ", ".join(f"{top} {state}" for top, state, _ in found)


def _tree_memory_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    held = [int(n) for n in re.findall(r"child (\d+) holds", res.stdout)]
    # Held together: the most children holding at once, by the order of their lines (a loaded machine can let one
    # child go before the last has touched its memory, and the limit is on what they hold at the same time).
    together = most = 0
    for event in re.findall(r"child \d+ (holds|lets go)", res.stdout):
        together += 1 if event == "holds" else -1
        most = max(most, together)
    total = most * CHILD_MB
    if total > ATTEMPT_MEMORY_MB:
        return ESCAPED, f"{most} children held {total} MiB together under memory_mb={ATTEMPT_MEMORY_MB}"
    return BLOCKED, (f"{ctx.sb.memory_limit.split(';')[0]}: {len(held)} of {CHILDREN} children got their "
                     f"{CHILD_MB} MiB, then killed_by={res.killed_by}")


def _cgroup_escape_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    alive = survivors(ctx.token)
    if alive:
        return ESCAPED, "left the script's cgroup, killed the supervisor and outlived the run"
    return BLOCKED, f"the cgroup files are not there inside ({res.stdout.strip()[:60]})"


PRECIOUS = {"victim.txt": b"precious host data\n", "config.toml": b'[catalog]\nchroma_url = ""\n'}
ATTEMPT_MEMORY_MB = 256
PRINT_14 = "print(14)\n"
PLANT = "import os\nos.symlink({target!r}, {name!r})\nraise SystemExit('planted')\n"
SHM_FILL = """
import os
wrote = 0
try:
    for i in range(2 * {limit} // 8):
        with open(f'/dev/shm/fill-{{i}}', 'wb') as fh:
            fh.write(b'x' * (8 << 20))
        wrote += 8
except OSError as exc:
    print(type(exc).__name__, exc.errno)
finally:
    print('wrote', wrote, 'MiB')
    for i in range(2 * {limit} // 8):
        try:
            os.remove(f'/dev/shm/fill-{{i}}')
        except OSError:
            pass
"""
SLEEPER = "[sys.executable, '-c', 'import time; time.sleep(300)', '{t}']"
ATTEMPTS = [
    Attempt("write a file into data/",
            lambda c: "open('data/sales.csv', 'a').write('evil,1\\n')\n"
                      "open('data/new.csv', 'w').write('x')\n",
            _lake_check),
    Attempt("delete the lake (prompt injection: rmtree data/)",
            lambda c: "import os, shutil\nfor n in os.listdir('data'):\n    p = os.path.realpath(os.path.join('data', n))\n"
                      "    shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)\n", _lake_check),
    Attempt("read ~/.ssh/id_rsa",
            lambda c: "import os\nprint(open(os.path.expanduser('~/.ssh/id_rsa')).read())\n",
            _printed_secret({"bwrap": "HOME is /tmp/home on a private tmpfs",
                             "subprocess": "HOME is an empty scratch folder"})),
    Attempt("read the user's real ~/.ssh by absolute path",
            lambda c: f"print(open({str(c.home / '.ssh' / 'id_rsa')!r}).read())\n",
            _printed_secret({"bwrap": "not bound: homes, /run and the host's /tmp do not exist inside", "subprocess": ""})),
    Attempt("read API keys from the environment",
            lambda c: "import os\nprint(dict(os.environ))\n",
            _printed_secret({b: "environment built from scratch; key-like names never copied"
                             for b in ("bwrap", "subprocess")})),
    Attempt("read dslake's environment via /proc/PID/environ",
            lambda c: f"d = open('/proc/{c.parent_pid}/environ', 'rb').read()\n"
                      "print('GOT', len(d), 'bytes') if d else print('empty')\n", _environ_check),
    Attempt("write outside the work folder",
            lambda c: f"open({str(c.outside / 'owned.txt')!r}, 'w').write('x')\n", _outside_check),
    Attempt("connect to a server on 127.0.0.1",
            lambda c: "import socket\ntry:\n"
                      f"    socket.create_connection(('127.0.0.1', {c.port}), timeout=3)\n"
                      "    print('CONNECTED')\n"
                      "except OSError as e:\n    print(type(e).__name__, e)\n", _socket_check),
    Attempt("fork bomb",
            lambda c: "import os\nwhile True:\n    try:\n        os.fork()\n"
                      "    except OSError:\n        pass\n",
            _fork_check, timeout_s=3),
    Attempt("memory bomb",
            lambda c: "x = []\nwhile True:\n    x.append(bytearray(64 * 1024 * 1024))\n", _memory_check),
    Attempt("infinite output",
            lambda c: "import sys\nwhile True:\n    sys.stdout.write('spam' * 4096)\n", _output_check),
    Attempt("sleep forever",
            lambda c: "import time\ntime.sleep(10**6)\n", _timeout_check, timeout_s=1.5),
    Attempt("busy loop with a busy child",
            lambda c: f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass', "
                      f"'{c.token}'])\nwhile True:\n    pass\n", _timeout_check, timeout_s=1.5),
    Attempt("double-fork daemon outliving the script",
            lambda c: "import os, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                      f"        os.execv(sys.executable, {SLEEPER.format(t=c.token)})\n    os._exit(0)\n"
                      "print('parent exits')\n",
            _no_survivors("the supervisor (a subreaper) killed it when the script ended")),
    Attempt("kill the supervisor, then daemonize",
            lambda c: "import os, sys, signal, time\nif os.fork() == 0:\n    os.setsid()\n"
                      "    if os.fork() == 0:\n"
                      f"        os.execv(sys.executable, {SLEEPER.format(t=c.token)})\n    os._exit(0)\n"
                      "time.sleep(0.3)\nos.kill(os.getppid(), signal.SIGKILL)\n",
            _supervisor_check),
]
ATTEMPTS += [
    Attempt("plant a link to a host file as the next script's name",
            lambda c: PLANT.format(target=str(c.outside / "victim.txt"), name="next_fix1.py"),
            _planted_check(lambda c: c.outside / "victim.txt"), then=lambda c: ("next_fix1.py", PRINT_14)),
    Attempt("plant a link to a lake file as the next script's name",
            lambda c: PLANT.format(target=str(c.lake / "sales.csv"), name="round_01.py"),
            _planted_check(lambda c: c.lake / "sales.csv"), then=lambda c: ("round_01.py", PRINT_14)),
    Attempt("plant a link to the catalog's config as the next script's name",
            lambda c: PLANT.format(target="../../../config.toml", name="solution.py"),
            _planted_check(lambda c: c.catalog / "config.toml"), then=lambda c: ("solution.py", PRINT_14)),
    Attempt("read the catalog's manifest and another run's prompts",
            lambda c: "import glob\nfor p in ['../../../manifest.sqlite', 'data/.dslake/manifest.sqlite', "
                      f"{str(c.catalog / 'manifest.sqlite')!r}, *glob.glob({str(c.catalog)!r} + '/runs/*/trace.jsonl'),"
                      " *glob.glob('../../*/trace.jsonl')]:\n"
                      "    try:\n        print(open(p).read())\n"
                      "    except OSError as e:\n        print(type(e).__name__, p)\n",
            _catalog_read_check),
    Attempt("rewrite the catalog's config (sandbox.backend, llm.base_url)",
            lambda c: f"open({str(c.catalog / 'config.toml')!r}, 'w').write("
                      "'[sandbox]\\nbackend = \"subprocess\"\\n[llm]\\nbase_url = \"http://elsewhere/v1\"\\n')\n",
            _catalog_write_check),
    Attempt("fill /dev/shm past the memory limit",
            lambda c: SHM_FILL.format(limit=ATTEMPT_MEMORY_MB), _shm_check,
            limits={"memory_mb": ATTEMPT_MEMORY_MB}),
    Attempt("fill the work folder's disk",
            lambda c: "import time\nfor i in range(40):\n    open(f'big{i}.bin', 'wb').write(b'x' * (1 << 20))\n"
                      "time.sleep(30)\n", _disk_check, limits={"disk_mb": 16, "max_files": 1000}),
    Attempt("create a hundred thousand files in the work folder",
            lambda c: "import os, time\nos.mkdir('many')\nfor i in range(100000):\n"
                      "    open(f'many/{i}', 'w').close()\ntime.sleep(30)\n",
            _disk_check, timeout_s=20, limits={"disk_mb": 64, "max_files": 500}),
    Attempt("write 64 MiB to a file it deleted but keeps open (budget 16 MiB)",
            lambda c: "import os, time\nfh = open('held.bin', 'wb')\nos.unlink('held.bin')\nfor i in range(64):\n"
                      "    fh.write(b'x' * (1 << 20))\n    fh.flush()\ntime.sleep(30)\n",
            _disk_check, timeout_s=20, limits={"disk_mb": 16, "max_files": 1000, "file_mb": 128}),
    Attempt("create a user namespace",
            lambda c: "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                      "print('UNSHARE', libc.unshare(0x10000000), ctypes.get_errno())\n", _userns_check),
]
CHILDREN, CHILD_MB = 6, 120
TREE_MEMORY = """
import os, sys, time
for i in range({children}):
    if os.fork() == 0:
        block = bytearray({mb} << 20)
        for j in range(0, len(block), 4096):
            block[j] = 1
        print('child', i, 'holds', flush=True)
        time.sleep(3)
        print('child', i, 'lets go', flush=True)
        os._exit(0)
for _ in range({children}):
    try:
        os.wait()
    except ChildProcessError:
        break
"""
LEAVE_CGROUP = """
import os, sys, signal, time
moved = []
for line in open('/proc/self/cgroup').read().splitlines():
    hid, ctl, rel = line.split(':', 2)
    for name in (ctl.split(',') if ctl else ['']):
        folder = os.path.join('/sys/fs/cgroup', name, os.path.dirname(rel).lstrip('/'))
        try:
            with open(os.path.join(folder, 'cgroup.procs'), 'w') as fh:
                fh.write(str(os.getpid()))
            moved.append(name or 'v2')
        except OSError as exc:
            pass
print('moved', moved, flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, {sleeper})
    os._exit(0)
time.sleep(0.3)
os.kill(os.getppid(), signal.SIGKILL)
"""
HOST_READ = """
for path in {paths!r}:
    try:
        print(open(path).read())
    except OSError as exc:
        print(type(exc).__name__, exc.errno)
"""
UNIX_CONNECT = """
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({path!r})
    s.sendall(b'rm -rf /\\n')
    print(s.recv(100).decode())
except OSError as exc:
    print(type(exc).__name__, exc.errno)
"""
SYSTEM_TMPFS = """
import os
for top in ('/run', '/root', '/home'):
    wrote = 0
    try:
        with open(os.path.join(top, 'fill.bin'), 'wb') as fh:
            for _ in range(4):
                fh.write(b'x' * (1 << 20))
                wrote += 1
        os.remove(os.path.join(top, 'fill.bin'))
        print(top, 'writable', 'wrote', wrote)
    except OSError as exc:
        print(top, 'absent' if not os.path.isdir(top) else 'read-only', 'wrote', wrote)
"""
ATTEMPTS += [
    Attempt("read a root-only 0600 file elsewhere on the host",
            lambda c: HOST_READ.format(paths=[str(c.host / "srv" / "tls.key")]), _host_file_check),
    Attempt("read a project's .env on PYTHONPATH and in dslake's own script folder",
            lambda c: HOST_READ.format(paths=[str(c.host / "proj" / ".env")]), _host_file_check),
    Attempt("send a command to a root-only unix socket outside /run, /tmp and homes",
            lambda c: UNIX_CONNECT.format(path=str(c.host / "srv" / "service.sock")), _unix_socket_check),
    Attempt("read the lake's .env, .git/config and a .dslakeignore'd file",
            lambda c: HOST_READ.format(paths=["data/.env", "data/.git/config", "data/sub/secret.txt",
                                              str(c.lake / ".env"), str(c.lake / "sub" / "secret.txt")]),
            _lake_hidden_check),
    Attempt("six children each under the memory limit, together over it",
            lambda c: TREE_MEMORY.format(children=CHILDREN, mb=CHILD_MB), _tree_memory_check,
            limits={"memory_mb": ATTEMPT_MEMORY_MB}),
    Attempt("leave the script's cgroup, kill the supervisor, then daemonize",
            lambda c: LEAVE_CGROUP.format(sleeper=SLEEPER.format(t=c.token)), _cgroup_escape_check),
    Attempt("fill /run, /root and /home", lambda c: SYSTEM_TMPFS, _system_tmpfs_check,
            backends=("bwrap",)),  # without bubblewrap those are the host's own folders: see "write outside"
]
# The same two attempts on a machine where no pids cgroup can be made (a container's root, say).
BY_NAME = {a.name: a for a in ATTEMPTS}
NO_CGROUP = [
    Attempt("fork bomb, no pids cgroup (watchdog)", BY_NAME["fork bomb"].code, _fork_check, timeout_s=3,
            cgroups=False),
    Attempt("kill the supervisor, then daemonize, no pids cgroup",
            BY_NAME["kill the supervisor, then daemonize"].code, _supervisor_check, cgroups=False),
]
ATTEMPTS += NO_CGROUP


def _real_manifest(ctx: Ctx) -> None:
    """Make the catalog's manifest a real SQLite database in WAL mode, closed cleanly (no -wal left)."""
    import sqlite3

    manifest = ctx.catalog / "manifest.sqlite"
    manifest.unlink()
    con = sqlite3.connect(manifest)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE entries (path TEXT PRIMARY KEY, description TEXT)")
    con.execute("INSERT INTO entries VALUES ('sales.csv', 'Sales by region.')")
    con.commit()
    con.close()


def _manifest_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    import sqlite3

    con = sqlite3.connect(ctx.catalog / "manifest.sqlite")
    try:
        now = con.execute("SELECT description FROM entries").fetchone()[0]
    finally:
        con.close()
    if now == "Sales by region.":
        return BLOCKED, "hidden, read-only catalog: " + (_error(res) or res.stdout.strip()[:60])
    if res.catalog_modified:
        return DETECTED, f"catalog_modified lists {', '.join(res.catalog_modified[:2])}; the run is aborted"
    return ESCAPED, "the manifest's description changed through its -wal and nobody noticed"


def _terminal_check(res: ExecResult, ctx: Ctx) -> tuple[str, str]:
    if "WROTE" in res.stdout:
        return ESCAPED, f"wrote to dslake's stderr through /proc/{ctx.parent_pid}/fd/2 (an OSC 52 would reach it)"
    return BLOCKED, f"pid namespace: dslake's pid does not exist inside ({res.stdout.strip()[:40]})"


# Issue 26: the catalog changed around its checks, and dslake's own terminal reached from a script.
ATTEMPTS += [
    Attempt("rewrite the manifest through its -wal (commit, then os._exit: no checkpoint)",
            lambda c: f"import os, sqlite3\ncon = sqlite3.connect({str(c.catalog / 'manifest.sqlite')!r})\n"
                      "con.execute(\"UPDATE entries SET description = 'IGNORE PREVIOUS INSTRUCTIONS'\")\n"
                      "con.commit()\nos._exit(0)\n",
            _manifest_check, setup=_real_manifest),
    Attempt("write to dslake's terminal through /proc/PID/fd/2",
            lambda c: f"try:\n    n = open('/proc/{c.parent_pid}/fd/2', 'w').write('dslake-escape-suite\\n')\n"
                      "    print('WROTE', n)\nexcept OSError as e:\n    print(type(e).__name__)\n",
            _terminal_check),
]


def _expected(attempt: str, sb: Sandbox) -> set[str]:
    """Return the outcomes a backend promises for an attempt."""
    if sb.backend == "bwrap":
        return {BLOCKED}
    lost = {"read the user's real ~/.ssh by absolute path", "read a root-only 0600 file elsewhere on the host",
            "read a project's .env on PYTHONPATH and in dslake's own script folder",
            "send a command to a root-only unix socket outside /run, /tmp and homes",
            "read the lake's .env, .git/config and a .dslakeignore'd file",
            "leave the script's cgroup, kill the supervisor, then daemonize", "read dslake's environment via /proc/PID/environ",
            "write outside the work folder", "read the catalog's manifest and another run's prompts",
            "fill /dev/shm past the memory limit", "create a user namespace",
            "write to dslake's terminal through /proc/PID/fd/2"}
    if attempt in lost:
        return {BLOCKED, ESCAPED}  # documented loss without bwrap; reported, not asserted
    if attempt.startswith(("write a file into data/", "delete the lake", "rewrite the catalog's config",
                           "rewrite the manifest")):
        return {DETECTED}
    if attempt == "create a user namespace" and not sb.protections["user namespaces"].startswith("cannot"):
        return {BLOCKED, ESCAPED}
    if attempt == "connect to a server on 127.0.0.1" and not sb.net_unshare:
        return {BLOCKED, ESCAPED}
    if attempt.startswith("kill the supervisor, then daemonize") and not sb.cgroups:
        return {BLOCKED, ESCAPED}
    if attempt.startswith("six children") and not sb.memory_cgroup:
        return {BLOCKED, ESCAPED}  # RLIMIT_AS is per process: a documented loss where no memory cgroup exists
    return {BLOCKED}


RESULTS: dict[tuple[str, str], tuple[str, str, bool]] = {}


@pytest.fixture
def loopback_port():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


def run_attempt(attempt: Attempt, backend: str, base: Path, port: int) -> tuple[str, str, bool]:
    """Run one hostile script on one backend and return (outcome, how, as promised)."""
    lake = make_lake(base / "lake")
    catalog = make_catalog(lake)
    work = catalog / "runs" / f"now-{uuid.uuid4().hex[:6]}" / "work"
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_bytes(PRECIOUS["victim.txt"])
    hide_in_lake(lake)
    with host_fixtures() as host:
        sb = sandbox(backend, lake, **(attempt.limits or {}))
        sb.cgroups = sb.cgroups and attempt.cgroups
        if attempt.setup is not None:
            attempt.setup(Ctx(lake, work, home, outside, "", port, os.getpid(), {}, sb, catalog, host))
        ctx = Ctx(lake, work, home, outside, "dslake-escape-" + uuid.uuid4().hex, port, os.getpid(),
                  lake_snapshot(lake, work), sb, catalog, host)
        res = sb.run(attempt.code(ctx), ctx.work, name=f"attempt_{ctx.token}.py", timeout_s=attempt.timeout_s)
        if attempt.then is not None:
            name, code = attempt.then(ctx)
            res = sb.run(code, ctx.work, name=name, timeout_s=attempt.timeout_s)
        try:
            outcome, how = attempt.check(res, ctx)
        finally:
            for pid in processes_with(ctx.token):  # an escaped daemon must not outlive the test either
                os.kill(pid, signal.SIGKILL)
    return outcome, how, outcome in _expected(attempt.name, sb)


def hide_in_lake(lake: Path) -> None:
    """Put what the index skips in the lake: a .env, a .git folder, a .dslakeignore'd file."""
    (lake / ".env").write_text("ENV-SECRET=1\n")
    (lake / ".git").mkdir()
    (lake / ".git" / "config").write_text("[remote] token = GIT-SECRET\n")
    (lake / ".dslakeignore").write_text("sub/secret.txt\n")
    (lake / "sub" / "secret.txt").write_text("IGNORED-SECRET\n")


@contextmanager
def host_fixtures() -> Iterator[Path]:
    """Make the host-side targets outside /tmp and homes: a root-only key, a root-only socket that obeys
    any command, and a project folder with a .env that is on PYTHONPATH and on dslake's own sys.path."""
    host = Path(tempfile.mkdtemp(prefix="dslake-escape-", dir="/var/tmp"))
    (host / "srv").mkdir()
    (host / "proj").mkdir()
    key = host / "srv" / "tls.key"
    key.write_text("TLS-KEY private\n")
    key.chmod(0o600)
    (host / "proj" / ".env").write_text("PROJECT-ENV=1\n")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(host / "srv" / "service.sock"))
    os.chmod(host / "srv" / "service.sock", 0o600)
    server.listen(1)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.recv(100)
                conn.sendall(b"ANSWER: done\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    old_path, old_env = list(sys.path), os.environ.get("PYTHONPATH")
    sys.path.insert(0, str(host / "proj"))
    os.environ["PYTHONPATH"] = str(host / "proj")
    try:
        yield host
    finally:
        sys.path[:] = old_path
        if old_env is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_env
        stop.set()
        thread.join()
        server.close()
        shutil.rmtree(host, ignore_errors=True)


@pytest.fixture
def hostile_env(monkeypatch, tmp_path):
    """Put secrets in the parent's environment and point HOME at a fake home with an SSH key."""
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attempt", ATTEMPTS, ids=lambda a: a.name.split(" (")[0].replace(" ", "-"))
def test_attempt_is_contained(attempt, backend, hostile_env, loopback_port):
    if backend not in attempt.backends:
        pytest.skip(f"{attempt.name}: does not apply to {backend}")
    outcome, how, promised = run_attempt(attempt, backend, hostile_env, loopback_port)
    RESULTS[(attempt.name, backend)] = (outcome, how, promised)
    assert promised, f"{attempt.name} on {backend}: {outcome} ({how})"


def _table() -> list[str]:
    rows = ["| attempt | backend | contained | how |", "|---|---|---|---|"]
    for attempt in ATTEMPTS:
        for backend in ("bwrap", "subprocess"):
            if (attempt.name, backend) in RESULTS:
                outcome, how, _ = RESULTS[(attempt.name, backend)]
                word = {"blocked": "yes", "detected": "detected", "ESCAPED": "NO"}[outcome]
                rows.append(f"| {attempt.name} | {backend} | {word} | {how.replace('|', '/')} |")
    return rows


def _doc_table() -> list[str]:
    """Return the table docs/safety.md shows: one row per attempt, one column per backend."""
    rows = ["| hostile script | bubblewrap | without bubblewrap |", "|---|---|---|"]
    for attempt in ATTEMPTS:
        cells = []
        for backend in ("bwrap", "subprocess"):
            if (attempt.name, backend) not in RESULTS:
                cells.append("(does not apply)")
                continue
            outcome, how, _ = RESULTS[(attempt.name, backend)]
            word = {"blocked": "yes", "detected": "detected", "ESCAPED": "**no**"}[outcome]
            cells.append(f"{word}: {how.replace('|', '/')}")
        rows.append(f"| {attempt.name} | {cells[0]} | {cells[1]} |")
    return rows


def _checked_elsewhere(session: pytest.Session) -> set[tuple[str, str]]:
    """Return the (attempt, backend) pairs another pytest-xdist worker checks in this session (its own test).

    Each worker has its own RESULTS: re-running here what another worker runs (about half of all attempts
    under `-n auto`) checked nothing more. A plain run, or one writing docs/safety.md's table, runs them all here.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("SANDBOX_TABLE_OUT"):
        return set()
    return {(item.callspec.params["attempt"].name, item.callspec.params["backend"]) for item in session.items
            if getattr(item, "originalname", None) == "test_attempt_is_contained"}


def test_summary_table(request, capsys, monkeypatch, tmp_path_factory, loopback_port):
    """Print attempt x backend and how each was contained, and what the subprocess backend keeps and loses."""
    backends = ["subprocess"] + (["bwrap"] if BWRAP_REASON is None else [])
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    elsewhere = _checked_elsewhere(request.session)
    for attempt in ATTEMPTS:  # fill in whatever this session did not run (e.g. the file run alone with -k)
        for backend in backends:
            if ((attempt.name, backend) not in RESULTS and backend in attempt.backends
                    and (attempt.name, backend) not in elsewhere):
                base = tmp_path_factory.mktemp("escape")
                monkeypatch.setenv("HOME", str(base / "home"))
                RESULTS[(attempt.name, backend)] = run_attempt(attempt, backend, base, loopback_port)
    lake = make_lake(tmp_path_factory.mktemp("lake") / "lake")
    protections = {b: sandbox(b, lake).protections for b in backends}
    lines = _table() + ["", "| protection | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
    lines += [f"| {name} | " + " | ".join(protections[b][name] for b in backends) + " |"
              for name in protections["subprocess"]]
    if BWRAP_REASON is not None:
        lines.append(f"\n(bwrap not tested here: {BWRAP_REASON})")
    with capsys.disabled():
        sys.stdout.write("\n\nSandbox escape suite\n" + "\n".join(lines) + "\n")
    if os.environ.get("SANDBOX_TABLE_OUT"):  # docs/safety.md's table first, then the full one
        Path(os.environ["SANDBOX_TABLE_OUT"]).write_text("\n".join(_doc_table() + ["", *lines]) + "\n")
    broken = [(a, b, o, h) for (a, b), (o, h, ok) in RESULTS.items() if not ok]
    assert not broken, broken
