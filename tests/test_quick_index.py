"""A no-change `dslake index LAKE [--catalog DIR]` is answered before click and rich load (dsstar_lake/terminal/
quick_index.py, index/no_change.py): the same lines, exit code and catalog as the full CLI, and a hand-over with
nothing written whenever it is not sure (another option, a changed file, a lock held, other settings, other code)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from multiprocessing import forkserver
from pathlib import Path

from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from dslake_index.catalog import writer_lock
from dslake_index.profile_task import profile_json
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path

from dsstar_lake.terminal.quick_index import answer

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"
# Every module of dslake a no-change index may load (no third-party package, no click, rich, settings, facade or
# pipeline); dsstar_lake.base.untrusted only to print failed or skipped files.
MAY_LOAD = {"dslake_cli", "dslake_cli.cli", "dsstar_lake", "dsstar_lake.terminal", "dsstar_lake.terminal.quick_index",
            "dsstar_lake.base", "dsstar_lake.base.settings_inputs", "dsstar_lake.base.untrusted", "dslake_index",
            "dslake_index.catalog", "dslake_index.census", "dslake_index.lookup", "dslake_index.errors",
            "dslake_index.catalog_errors", "dslake_index.progress", "dslake_index.front_door", "dslake_index.scan",
            "dslake_index.plan", "dslake_index.no_change", "dslake_index.caught"}


def _lake(tmp_path: Path) -> Path:
    """The small table lake with a file no profiler reads and a link out of the lake (a failed and a skipped
    line), indexed once by the full CLI, which records the settled stamp."""
    root = write_table_lake(tmp_path / "lake")
    (root / "broken.parquet").write_bytes(b"PAR1 this is not a parquet file")
    (tmp_path / "outside.csv").write_text("a\n1\n")
    (root / "outside.csv").symlink_to(tmp_path / "outside.csv")
    assert CliRunner().invoke(cli, ["index", str(root)]).exit_code == 0
    return root


def _state(catalog: Path) -> dict[str, list[tuple]]:
    """Every table of the manifest, sorted, and the time of the last index on its own."""
    conn = sqlite3.connect(catalog / "manifest.sqlite")
    try:
        names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {name: sorted(map(tuple, conn.execute(f'SELECT * FROM "{name}"')), key=repr) for name in names}
    finally:
        conn.close()


def _without_time(state: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    return {**state, "meta": [row for row in state["meta"] if row[0] != "last_index_at"]}


def _last_index_at(state: dict[str, list[tuple]]) -> float:
    return float(next(row[1] for row in state["meta"] if row[0] == "last_index_at"))


def _lines(text: str) -> list[str]:
    return [re.sub(r"· \d+\.\d s$", "· N s", line) for line in text.splitlines()]


def test_the_console_script_answers_as_the_full_cli_without_loading_it(tmp_path):
    root = _lake(tmp_path)
    catalog = root / ".dslake"
    before = _state(catalog)
    dslake = Path(sys.executable).with_name("dslake")
    done = subprocess.run([str(dslake), "index", str(root)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    ours = {m for m in loaded if m.split(".")[0] in ("dslake_cli", "dsstar_lake", "dslake_index")}
    assert ours <= MAY_LOAD, sorted(ours - MAY_LOAD)
    assert not loaded & {"click", "rich", "dataclasses", "pathspec", "numpy", "chromadb", "pandas"}
    quick = _state(catalog)
    assert _without_time(quick) == _without_time(before) and _last_index_at(quick) > _last_index_at(before)

    full = CliRunner().invoke(cli, ["index", str(root)])  # the full CLI (no console script: no quick answer)
    assert full.exit_code == 0
    assert _lines(done.stdout) == _lines(full.stdout)
    assert "  failed broken.parquet: " in done.stdout and "  skipped outside.csv: " in done.stdout
    assert _without_time(_state(catalog)) == _without_time(quick)  # and the same catalog


def test_anything_it_is_not_sure_of_is_handed_over_with_nothing_written(tmp_path, monkeypatch, capsys):
    root = _lake(tmp_path)
    catalog = root / ".dslake"
    settled = _state(catalog)

    def handed_over(argv: list[str]) -> None:
        assert answer(argv) is False
        assert capsys.readouterr().out == "" and _state(catalog) == settled

    handed_over(["index", str(root), "--json", "--watch"])  # --json alone is answered (the test below)
    handed_over(["index", str(root), "sales.csv"])
    with writer_lock(catalog):  # another index is running: the full CLI says so
        handed_over(["index", str(root)])
    with monkeypatch.context() as patched:  # a terminal colours the failed and skipped words
        patched.setattr(sys.stdout, "isatty", lambda: True)
        handed_over(["index", str(root)])
    assert answer(["index", str(root), "--catalog", str(catalog)]) is True
    assert _lines(capsys.readouterr().out)[0].startswith("indexed: 0 added, 0 changed, 0 removed, 9 unchanged, 1 failed")
    settled = _state(catalog)

    (root / "sales.csv").write_text("region,product,units,price\nnorth,widget,11,2.5\n")
    handed_over(["index", str(root)])
    changed = CliRunner().invoke(cli, ["index", str(root)])
    assert "0 added, 1 changed" in changed.stdout  # the full CLI did the work, with the scan handed to it
    assert answer(["index", str(root)]) is True
    capsys.readouterr()
    settled = _state(catalog)

    config = Path(os.environ["XDG_CONFIG_HOME"]) / "dslake" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[retrieve]\nk = 7\n")  # any change of the settings' files: resolved again, by the full CLI
    handed_over(["index", str(root)])
    monkeypatch.setenv("DSLAKE_INDEX_FOLLOW_SYMLINKS", "true")
    handed_over(["index", str(root)])
    monkeypatch.delenv("DSLAKE_INDEX_FOLLOW_SYMLINKS")
    config.unlink()
    assert CliRunner().invoke(cli, ["index", str(root)]).exit_code == 0
    settled = _state(catalog)

    server = forkserver._forkserver._forkserver_pid
    (root / "ozone_by_county.csv").unlink()  # a plan with nothing to profile starts no profilers' server
    handed_over(["index", str(root)])
    assert forkserver._forkserver._forkserver_pid == server
    assert "0 changed, 1 removed" in CliRunner().invoke(cli, ["index", str(root)]).stdout


# Run in a process of its own: the profilers' server is one per process, and this one must start it.
_HAND_OVER = """
import json, sys
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index import confined_pool
from dslake_index.profile_task import profile_json
from dslake_index.profilers.base import Limits
from dslake_index.profilers.registry import profile_path
from dslake_index.worker_context import profiler_context
from pebble import ProcessPool
from dsstar_lake.terminal.quick_index import answer

root, samples = sys.argv[1], sys.argv[2:]
handed = answer(["index", root])
early = confined_pool._early  # the confined profile server (index/confined_pool.py), started by the hand-over
started, preload = early.process.pid, " ".join(early.process.args)  # its command line names what it preloads
done = CliRunner().invoke(cli, ["index", root])
# The index took it: it was closed as a used server is (exit 0), not stopped as one set aside is.
used = started if confined_pool._early is None and early.process.returncode == 0 else None
with ProcessPool(max_workers=1, context=profiler_context()) as pool:  # formats it did not preload for
    profiles = [profile_json(pool.schedule(profile_path, args=(p, Limits())).result()) for p in samples]
print(json.dumps({"handed": handed, "started": started, "used": used,
                  "preload": preload, "output": done.output, "profiles": profiles}))
"""


def test_a_hand_over_starts_the_profilers_server_for_the_changed_files(tmp_path):
    root = _lake(tmp_path)
    (root / "sales.csv").write_text("region,product,units,price\nnorth,widget,11,2.5\n")
    script = tmp_path / "hand_over.py"
    script.write_text(_HAND_OVER)
    samples = [str(SAMPLES / name) for name in ("stations.xlsx", "city/trips.parquet", "sales.csv")]
    done = subprocess.run([sys.executable, str(script), str(root), *samples], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["handed"] is False and "0 added, 1 changed" in seen["output"]
    # Started by the hand-over with what a CSV's profiler needs, and the one the index's pool then used.
    assert ",pandas," in seen["preload"] and "openpyxl" not in seen["preload"] and "pyarrow.parquet" not in seen["preload"]
    assert seen["used"] == seen["started"]
    assert not Path(f"/proc/{seen['started']}").exists()  # ended, and reaped, with its process
    # Workbooks and Parquet files profile the same from a server that did not preload their readers.
    assert seen["profiles"] == [profile_json(profile_path(Path(p), Limits())) for p in samples]


def test_json_is_answered_as_the_full_cli_answers_it(tmp_path):
    root = _lake(tmp_path)
    dslake = Path(sys.executable).with_name("dslake")
    done = subprocess.run([str(dslake), "index", str(root), "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not loaded & {"click", "rich", "dataclasses", "numpy", "chromadb", "dslake_index.indexer"}
    full = CliRunner().invoke(cli, ["index", str(root), "--json"])
    assert full.exit_code == 0
    quick, slow = json.loads(done.stdout), json.loads(full.stdout)
    assert list(quick) == list(slow)  # the same keys, in the same order
    assert set(quick["phases"]) == {"scan", "plan"} and set(quick["phases"]) <= set(slow["phases"])
    timed = ("seconds", "phases")
    assert {k: v for k, v in quick.items() if k not in timed} == {k: v for k, v in slow.items() if k not in timed}
    assert quick["failed"] == 1 and quick["skipped"] == 1
