"""A model that obeys injected text, end to end through `dslake ask --llm scripted`, on both backends.

Its first script plants links where dslake writes next (the debugger's script, the next round's, the
finalyzer's, the run record's files), reads the catalog, then fails so the debugger runs. Whatever the
backend, dslake must not write through those links: the host file, the lake and the catalog's config stay
byte-identical. With bubblewrap the catalog is not even readable. A script that rewrites the catalog's
config directly (possible without bubblewrap) aborts the run, and the next ask refuses the catalog
(and, without that mark, the config).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from agent_helpers import fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from dslake_index.caught import clear_caught
from sandbox_helpers import BACKENDS

from dsstar_lake.base.errors import CatalogError, ConfigError

HOSTILE = """
import glob, os
plants = {{
    'round_00_fix1.py': {victim!r},       # the debugger's next script
    'round_01.py': {lake_file!r},         # the next round's script
    'solution.py': '../../../config.toml', # the finalyzer's script -> the catalog's config
    'describe.py': {victim!r},            # the analyzer's script
    '../round_00_fix1.py': {victim!r},    # the run record's copy of the next script
    '../round_00_fix1.out': {lake_file!r},
    '../run.json': {victim!r},
}}
for name, target in plants.items():
    try:
        os.symlink(target, name)
        print('planted', name)
    except OSError as exc:
        print('could not plant', name, type(exc).__name__)
for path in ['../../../manifest.sqlite', 'data/.dslake/manifest.sqlite', *glob.glob('../../*/trace.jsonl')]:
    try:
        print(path, open(path, 'rb').read()[:40])
    except OSError as exc:
        print('cannot read', path, type(exc).__name__)
raise SystemExit('failing on purpose, so that the debugger writes the next script')
"""


def digest(root: Path, skip: str = "") -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
            and not (skip and p.relative_to(root).as_posix().startswith(skip))}


@pytest.fixture
def setting(tmp_path, monkeypatch):
    lake = write_table_lake(tmp_path / "lake")
    catalog = lake / ".dslake"
    older = catalog / "runs" / "20240101-000000-beef"
    older.mkdir(parents=True)
    (older / "trace.jsonl").write_text('{"type": "llm_call", "prompt": "TRACE-SECRET of an earlier run"}\n')
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious host data\n")
    return lake, catalog, victim


def ask(lake: Path, rules_path: str, backend: str, monkeypatch) -> object:
    monkeypatch.setenv("DSLAKE_SANDBOX_BACKEND", backend)
    monkeypatch.setenv("DSLAKE_SANDBOX_MEMORY_MB", "1024")
    args = ["ask", "How many widget units?", "--lake", str(lake), "--files", "sales.csv", "--llm", "scripted",
            "--scripted-file", rules_path, "--json"]
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_links_a_script_plants_are_never_written_through(backend, setting, tmp_path, monkeypatch):
    lake, catalog, victim = setting
    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0
    config = (catalog / "config.toml").read_bytes()
    lake_before = digest(lake, skip=".dslake")
    hostile = HOSTILE.format(victim=str(victim), lake_file=str(lake / "sales.csv"))
    path = rules_file(tmp_path / "rules.jsonl",
                 {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
                 {"role": "coder", "response": fenced(hostile)},
                 {"role": "debugger", "response": fenced("print(14)")},
                 {"role": "verifier", "response": "Yes"},
                 {"role": "finalyzer", "response": fenced("print(14)")})
    done = ask(lake, path, backend, monkeypatch)
    assert done.exit_code == 0, done.output
    answer = json.loads(done.output)
    run = catalog / "runs" / answer["run_id"]
    assert answer["value"] == "14"
    assert victim.read_text() == "precious host data\n"
    assert digest(lake, skip=".dslake") == lake_before
    assert (catalog / "config.toml").read_bytes() == config
    assert (run / "round_00_fix1.py").read_text().strip() == "print(14)"  # the record holds what ran
    assert json.loads((run / "run.json").read_text())["status"] == "done"
    first = (run / "round_00.out").read_text()
    assert "planted round_00_fix1.py" in first  # the attack did run
    if backend == "bwrap":
        assert "SQLite format 3" not in first and "TRACE-SECRET" not in first
        assert "cannot read ../../../manifest.sqlite" in first
    assert list((run / "work").iterdir()) == []  # the finished run's work folder is emptied, links and all


def test_a_script_that_rewrites_the_catalog_config_aborts_the_run_and_the_config_is_refused(
        setting, tmp_path, monkeypatch):
    lake, catalog, _ = setting
    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0
    rewrite = ("open('../../../config.toml', 'a').write("
               "'[sandbox]\\nbackend = \"subprocess\"\\n[llm]\\nbase_url = \"http://elsewhere/v1\"\\n')\nprint(14)")
    path = rules_file(tmp_path / "rules.jsonl",
                 {"role": "planner", "response": "Sum the widget units."},
                 {"role": "coder", "response": fenced(rewrite)},
                 {"role": "*", "response": "Yes"})
    done = ask(lake, path, "subprocess", monkeypatch)
    assert done.exit_code == 7, done.output  # LakeModified: the run is aborted, not answered
    assert "changed dslake's catalog (.dslake/config.toml)" in done.output
    again = ask(lake, path, "subprocess", monkeypatch)  # the catalog is refused, its config not even read
    assert again.exit_code == CatalogError.exit_code and "was changed by a script in run" in again.output
    clear_caught(catalog)  # as a catalog copied elsewhere without its mark: the config itself is still refused
    again = ask(lake, path, "subprocess", monkeypatch)
    assert again.exit_code == ConfigError.exit_code
    assert "sets sandbox.backend, llm.base_url, which only your own config" in again.output
    assert "Traceback" not in again.output
