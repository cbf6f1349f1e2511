"""The sandbox's pure parts: capped output, lake fingerprints, secret names, exit causes, bwrap argv."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from dsstar_lake.sandbox.bwrap import bwrap_argv, interpreter_paths
from dsstar_lake.sandbox.env import is_secret, script_env
from dsstar_lake.sandbox.fingerprint import changed, fingerprint
from dsstar_lake.sandbox.result import CappedBuffer, classify


def test_capped_buffer_keeps_head_and_tail_for_any_chunking():
    data = bytes(random.Random(0).randrange(97, 123) for _ in range(50_000))
    for seed in range(20):
        rng = random.Random(seed)
        buf = CappedBuffer(1000)
        at = 0
        while at < len(data):
            step = rng.choice([1, 7, 499, 500, 501, 4096, 20_000])
            buf.write(data[at : at + step])
            at += step
        text = buf.text()
        assert buf.total == len(data) and buf.cut == len(data) - 1000
        assert text.startswith(data[:500].decode()) and text.endswith(data[-500:].decode())
        assert f"[... {len(data) - 1000} bytes cut ({len(data)} in all)" in text


def test_capped_buffer_under_the_cap_is_verbatim():
    buf = CappedBuffer(100)
    for part in (b"caf\xc3", b"\xa9 ", b"ok\n"):
        buf.write(part)
    assert buf.text() == "café ok\n" and buf.cut == 0


def test_fingerprint_sees_changes_but_not_a_shifted_bounded_walk(tmp_path):
    lake = tmp_path / "lake"
    for rel in ("a/a1", "b/b1", "b/b2"):
        (lake / rel).parent.mkdir(parents=True, exist_ok=True)
        (lake / rel).write_text("x")
    # Breadth-first and sorted: ".", a, b, a/a1, b/b1 | b/b2 is beyond a bound of 5.
    before = fingerprint(lake, 5)
    assert list(before) == [".", "a", "b", "a/a1", "b/b1"]
    assert changed(before, fingerprint(lake, 5)) == []
    (lake / "a" / "a0").write_text("new")
    # b/b1 drops out of the bounded walk, but folder b did not change: not reported.
    assert changed(before, fingerprint(lake, 5)) == ["a", "a/a0"]
    # Deep edit with mtime put back: ctime still moves.
    before = fingerprint(lake, 100)
    deep = lake / "b" / "b2"
    st = deep.stat()
    deep.write_text("y")
    os.utime(deep, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert changed(before, fingerprint(lake, 100)) == ["b/b2"]


def test_fingerprint_skips_work_folder_and_watches_context_files(tmp_path):
    lake = tmp_path / "lake"
    work = lake / ".dslake" / "runs" / "r1"
    work.mkdir(parents=True)
    (lake / "z" / "far").mkdir(parents=True)
    (lake / "z" / "far" / "ctx.csv").write_text("1")
    before = fingerprint(lake, 2, skip=[lake / ".dslake"], watch=["z/far/ctx.csv"])
    (work / "out.txt").write_text("fine")
    (lake / "z" / "far" / "ctx.csv").write_text("22")
    after = fingerprint(lake, 2, skip=[lake / ".dslake"], watch=["z/far/ctx.csv"])
    assert changed(before, after) == ["z/far/ctx.csv"]
    assert fingerprint(tmp_path / "gone", 10) == {}


def test_secret_names():
    for name in ("GEMINI_API_KEY", "OPENAI_BASE_URL", "aws_access_key_id", "GITHUB_TOKEN", "DB_PASSWORD",
                 "HTTPS_PROXY", "GOOGLE_APPLICATION_CREDENTIALS", "DSLAKE_LLM_PROVIDER", "SSH_AUTH_SOCK"):
        assert is_secret(name), name
    for name in ("TZ", "LANG", "PATH", "OMP_NUM_THREADS", "MPLBACKEND"):
        assert not is_secret(name), name


def test_script_env_has_no_secret_names_even_when_asked(tmp_path):
    parent = {"TZ": "UTC", "OPENAI_API_KEY": "sk", "HOME": "/root", "PATH": "/evil"}
    env = script_env(tmp_path / "h", tmp_path / "t", sys.executable, ["TZ", "OPENAI_API_KEY", "PATH"], parent)
    assert not [k for k in env if is_secret(k)]
    assert env["TZ"] == "UTC" and env["HOME"] == str(tmp_path / "h") and "/evil" not in env["PATH"]


def test_classify():
    assert classify(-24, 24, "") == "cpu"
    assert classify(1, None, "Traceback...\nMemoryError\n") == "memory"
    assert classify(1, None, "OSError: [Errno 27] File too large\n") == "file size"
    assert classify(-9, 9, "") == "signal 9"
    assert classify(0, None, "caught MemoryError and went on") is None
    assert classify(1, None, "ValueError: bad\n") is None


def test_bwrap_argv_binds_an_allow_list_in_an_order_that_keeps_each_bind(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "project"))
    lake, work = home / "lake", home / "lake" / ".dslake" / "runs" / "r"
    work.mkdir(parents=True)
    argv = bwrap_argv("bwrap", sys.executable, work, lake, 64)
    pairs = [(argv[i], argv[i + 1]) for i in range(len(argv) - 1)]
    tmpfs_at = max(i for i, p in enumerate(pairs) if p == ("--tmpfs", "/tmp"))
    lake_at = pairs.index(("--ro-bind", str(lake.resolve())))
    work_at = pairs.index(("--bind", str(work.resolve())))
    data_at = max(i for i, p in enumerate(pairs) if p[0] == "--ro-bind" and p[1] == str(lake.resolve()))
    assert tmpfs_at < lake_at < work_at < data_at
    assert argv[data_at + 2] == str(work.resolve() / "data")
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL" and argv[-1] == "--"
    assert ("--ro-bind", "/") not in pairs and ("--remount-ro", "/") in pairs  # nothing of / unless listed
    bound = {b for a, b in pairs if a in ("--ro-bind", "--bind")}
    assert not any(p.startswith((str(home), "/run", "/var", "/srv", str(tmp_path / "project")))
                   for p in bound - {str(lake.resolve()), str(work.resolve())})
    assert str(Path(sys.prefix).resolve()) in bound  # the venv, whole
    assert all(not Path(__file__).resolve().is_relative_to(p) for p in interpreter_paths(sys.executable))
