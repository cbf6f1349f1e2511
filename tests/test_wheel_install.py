"""A wheel, installed not editable, indexes and searches a lake from another folder (what a user's pip gives).

Offline: the wheel is built with the venv's own setuptools (no build isolation, no index), installed with
--no-deps into a temporary folder (the dependencies are the venv's), and run with that folder first on
PYTHONPATH from a working directory outside the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES

# What the wheel is built from: everything pyproject.toml packages, and nothing a test or a catalog wrote.
SOURCES = ("pyproject.toml", "README.md", "cli.py", "configs", "dsstar_lake", "index")
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.egg-info", ".dslake", "build", "dist")


def _pip(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    subprocess.run([sys.executable, "-m", "pip", *args], cwd=cwd, env=env, check=True,
                   capture_output=True, text=True, timeout=300)


def build_and_install(work: Path) -> Path:
    """Build the wheel from a copy of the sources (the repository stays untouched) and install it into work/site."""
    src = work / "src"
    src.mkdir()
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, src / name, ignore=LEFT_OUT)
        else:
            shutil.copy2(source, src / name)
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(work / "dist"), str(src), cwd=work)
    (wheel,) = (work / "dist").glob("dsstar_lake-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "dsstar_lake/default.toml" in names, "the wheel must carry the default settings"
    assert "dsstar_lake/web/templates/base.html" in names, "the wheel must carry the pages' templates"
    assert "dsstar_lake/web/static/live.js" in names, "the wheel must carry the run page's script"
    # Installed names that cannot overwrite another distribution's `index` or `cli`, and every package folder.
    tops = {name.split("/")[0] for name in names if not name.startswith("dsstar_lake-")}
    assert tops == {"dsstar_lake", "dslake_index", "dslake_cli"}, tops
    folders = {str(p.parent.relative_to(REPO)) for p in (REPO / "dsstar_lake").rglob("*.py")} | {
        str(p.parent.relative_to(REPO)).replace("index", "dslake_index", 1) for p in (REPO / "index").rglob("*.py")}
    assert folders <= {name.rpartition("/")[0] for name in names}, "a package folder is missing from pyproject.toml"
    _pip("install", "--no-deps", "--no-index", "--target", str(work / "site"), str(wheel), cwd=work)
    return work / "site"


@pytest.mark.slow
def test_a_wheel_install_indexes_and_searches_from_another_folder(tmp_path):
    started = time.perf_counter()
    site = build_and_install(tmp_path)
    built = time.perf_counter() - started
    elsewhere = tmp_path / "elsewhere"
    lake = elsewhere / "lake"
    shutil.copytree(SAMPLES, lake, ignore=LEFT_OUT)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DSLAKE_", "PYTHON"))}
    env.update(PYTHONPATH=str(site), XDG_CONFIG_HOME=str(tmp_path / "config-home"), NO_COLOR="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", COLUMNS="200")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=300)

    where = run("-c", "import dslake_cli.cli as c, dsstar_lake as d, dslake_index as i; "
                      "print(c.__file__, d.__file__, i.__file__)")
    assert where.returncode == 0, where.stderr
    assert all(Path(p).is_relative_to(site) for p in where.stdout.split()), where.stdout  # not the repository's

    script = site / "bin" / "dslake"  # the console script the wheel declares
    indexed = run(str(script), "index", str(lake))
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    assert "indexed:" in indexed.stdout and (lake / ".dslake" / "manifest.sqlite").is_file()
    found = run(str(script), "search", "units sold per region", "--lake", str(lake))
    assert found.returncode == 0, found.stdout + found.stderr
    assert "sales.csv" in found.stdout
    print(f"\nwheel build + install {built:.1f} s, whole test {time.perf_counter() - started:.1f} s")
