"""`dslake doctor` through the command line: one line per check, --json, exit 8 on a failed check, no secret shown."""

from __future__ import annotations

import json
import shutil
import sys

from click.testing import CliRunner
from dslake_cli.cli import cli

from dsstar_lake.usecases.doctor import SCIENCE

KEY = "AIza-very-secret-key-0123456789"


def doctor(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["doctor", *args, "--json"], catch_exceptions=False)
    data = json.loads(result.stdout)
    assert data["schema"] == "dslake.doctor/1" and data["ok"] == (result.exit_code == 0)
    return result.exit_code, {check["name"]: check for check in data["checks"]}


def test_no_model_key_warns_and_a_key_is_named_never_shown(monkeypatch):
    code, checks = doctor()
    assert list(checks) == ["sandbox", "sandbox files", "sandbox limits", "model", "embedding", "science"]  # no lake: no catalog check
    # Index and search need no model: a machine without a key is not broken.
    assert checks["model"]["status"] == "warn" and "GEMINI_API_KEY" in checks["model"]["fix"]
    assert code == (8 if any(c["status"] == "fail" for c in checks.values()) else 0)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    result = CliRunner().invoke(cli, ["doctor"])
    assert KEY not in result.output
    assert "ok   model: provider gemini (" in result.output and "credentials: GEMINI_API_KEY" in result.output
    assert result.exit_code == (8 if "fail" in result.output else 0)


def test_sandbox_check_uses_the_sandboxes_probe(monkeypatch):
    from dsstar_lake.sandbox import bwrap

    bwrap.probe.cache_clear()
    reason = bwrap.probe(sys.executable, 64)
    _, checks = doctor()
    assert checks["sandbox"]["status"] == ("ok" if reason is None else "warn")
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "subprocess")
    _, checks = doctor()
    assert checks["sandbox"]["status"] == "warn" and "sandbox.backend = auto" in checks["sandbox"]["fix"]
    which = shutil.which
    monkeypatch.setattr("shutil.which", lambda name: None if name == "bwrap" else which(name))
    bwrap.probe.cache_clear()
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", "bwrap")  # required, and not there: a failure
    code, checks = doctor()
    bwrap.probe.cache_clear()
    assert code == 8 and checks["sandbox"]["status"] == "fail"
    assert "bwrap is not installed" in checks["sandbox"]["detail"] and "apt-get" in checks["sandbox"]["fix"]


def test_embedding_check_reads_the_onnx_cache(monkeypatch, tmp_path):
    from dslake_index.embed import model_dir, onnx_dir

    monkeypatch.setenv("DSLAKE_EMBED_CACHE_DIR", str(tmp_path / "models"))
    _, checks = doctor()
    assert checks["embedding"]["status"] == "warn" and "not made yet" in checks["embedding"]["detail"]
    target = onnx_dir(model_dir(), tmp_path / "models")
    target.mkdir(parents=True)
    (target / "failed.json").write_text(json.dumps({"reason": "onnx export broke"}))
    _, checks = doctor()
    assert checks["embedding"]["status"] == "warn" and "onnx export broke" in checks["embedding"]["detail"]
    assert str(target) in checks["embedding"]["fix"]
    (target / "failed.json").unlink()
    (target / "model.onnx").write_bytes(b"x")
    _, checks = doctor()
    assert checks["embedding"]["status"] == "ok" and str(target) in checks["embedding"]["detail"]


def test_science_check_lists_what_is_missing(monkeypatch):
    found = {name: "1.0" for name in SCIENCE if name != "astropy"}
    monkeypatch.setattr("dsstar_lake.sandbox.packages.importable", lambda python: found)
    _, checks = doctor()
    assert checks["science"]["status"] == "warn" and "cannot import astropy" in checks["science"]["detail"]
    assert "'.[science]'" in checks["science"]["fix"]


def test_catalog_check_follows_status(indexed, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    copy = tmp_path / "lake"
    shutil.copytree(indexed, copy)
    _, checks = doctor(str(copy))
    assert checks["catalog"]["status"] == "ok" and checks["catalog"]["detail"].startswith("8 files in ")
    (copy / "new.csv").write_text("a\n1\n")
    _, checks = doctor(str(copy))
    assert checks["catalog"]["status"] == "warn" and "1 changed since the last index" in checks["catalog"]["detail"]
    shutil.rmtree(copy / ".dslake" / "chroma")
    code, checks = doctor(str(copy))
    assert code == 8 and checks["catalog"]["status"] == "fail" and "dslake index" in checks["catalog"]["fix"]
    text = CliRunner().invoke(cli, ["doctor", str(copy)])
    assert text.exit_code == 8 and "fail catalog: the vector store folder is missing" in text.output
    assert "fix: run `dslake index LAKE`" in text.output


def test_a_lake_without_a_catalog_fails_its_check(tmp_path):
    (tmp_path / "lake").mkdir()
    code, checks = doctor(str(tmp_path / "lake"))
    assert code == 8 and checks["catalog"]["status"] == "fail"
    assert "no catalog at" in checks["catalog"]["detail"] and "dslake index" in checks["catalog"]["fix"]
    assert not (tmp_path / "lake" / ".dslake").exists()
    missing = CliRunner().invoke(cli, ["doctor", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "lake not found" in missing.stderr
