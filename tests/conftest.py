"""Shared fixtures: isolated user config, small generated lakes, and an indexed copy of data_samples."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "data_samples"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist's workers inherit COLUMNS=80 and LINES from the controller's terminal writer: a test of what the
    # CLI prints into a pipe (120 columns when COLUMNS does not say) must see what a plain run sees
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    # A suite started in the background by a shell without job control (`cmd &` in a script) inherits SIGINT
    # ignored, and so would every dslake the Ctrl-C tests start: they waited out their timeouts and failed. A
    # handler (not SIG_IGN) is reset to the default at exec, so xdist's workers and their children get Ctrl-C back.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path_factory, monkeypatch):
    """Keep the developer's ~/.config/dslake, ~/.local/state/dslake, DSLAKE_* variables and model keys out of every test; sandboxes started ahead
    import nothing while they wait (DSLAKE_SANDBOX_PRELOAD="")."""
    config_home = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))  # caught catalogs' marks
    monkeypatch.setattr("dsstar_lake.base.settings.USER_CONFIG_PATH", config_home / "dslake" / "config.toml")
    monkeypatch.setattr("dsstar_lake.lake.USER_CONFIG_PATH", config_home / "dslake" / "config.toml")
    for name in list(os.environ):
        if name.startswith("DSLAKE_"):
            monkeypatch.delenv(name)
    # Nor the developer's model keys: a key in the environment makes `eval retrieval` ask the selector, and tests are
    # offline (a test that wants a key sets its own).
    from llm_harness import LLM_ENV_VARS

    for name in LLM_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    # The suite's scripts read CSVs with the csv module: a sandbox started ahead that imported pandas (the default
    # guess, sandbox.preload) spent ~1 CPU-s per script that no test used, ~100 s of the suite on 2 cores. The
    # default is tested end to end where it matters (test_sandbox_warm.py); flags and overrides still win over this.
    monkeypatch.setenv("DSLAKE_SANDBOX_PRELOAD", "")


def write_table_lake(root: Path, n_daily: int = 5) -> Path:
    """Make a small lake: a few one-off tables, a note, and a family of daily files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "sales.csv").write_text(
        "region,product,units,price\nnorth,widget,10,2.5\nsouth,widget,4,2.5\nnorth,gadget,7,9.0\n")
    (root / "ozone_by_county.csv").write_text("county,year,unhealthy_days\nKings,2024,12\nQueens,2024,8\n")
    (root / "notes.md").write_text("# Field notes\n\nStation maintenance log for the river sensors.\n")
    daily = root / "sensors" / "daily"
    daily.mkdir(parents=True, exist_ok=True)
    for day in range(1, n_daily + 1):
        (daily / f"readings_2024-01-{day:02d}.csv").write_text(
            "timestamp,sensor_id,temperature_c\n" + "".join(
                f"2024-01-{day:02d}T{h:02d}:00,s{h % 3},{10 + h * 0.5 + day}\n" for h in range(6)))
    return root


@pytest.fixture
def table_lake(tmp_path) -> Path:
    """A fresh small lake in tmp_path."""
    return write_table_lake(tmp_path / "lake")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    """The small table lake, indexed once per test module (runs accumulate in its catalog)."""
    from dsstar_lake.lake import Lake

    root = write_table_lake(tmp_path_factory.mktemp("indexed") / "lake")
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root


@pytest.fixture
def lake(indexed: Path) -> Iterator[Any]:
    """The module's indexed table lake, opened for one test (modules may define their own `lake`)."""
    from dsstar_lake.lake import Lake

    handle = Lake.open(indexed)
    yield handle
    handle.close()


@pytest.fixture(scope="session")
def samples_lake(tmp_path_factory) -> Path:
    """A copy of data_samples/, indexed once per session (tests must not write into the repo)."""
    from dsstar_lake.lake import Lake

    root = tmp_path_factory.mktemp("samples") / "lake"
    shutil.copytree(SAMPLES, root, ignore=shutil.ignore_patterns(".dslake"))
    lake = Lake.open(root)
    lake.index()
    lake.close()
    return root
