"""A cold `dslake search` embeds its question in a child process (dsstar_lake/terminal/question_ahead.py).

The console script is run as a user runs it, on the module's indexed table lake; the in-process CLI (no console
script, so no child) gives the sequential path's answer to compare with. PYTHONPROFILEIMPORTTIME tells which
modules the searching process itself imported: the child's output goes nowhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from dslake_cli.cli import cli
from dslake_index.embed import DIM, Embedder

from dsstar_lake.terminal.question_ahead import question_of

QUESTION = "river temperature readings per sensor"


def _console_search(lake: Path, *extra: str,
                    env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    dslake = Path(sys.executable).with_name("dslake")
    done = subprocess.run([str(dslake), "search", QUESTION, str(lake), "--json", *extra], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1", **(env or {})})
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done, loaded


def _hits(output: str) -> list[dict[str, object]]:
    return json.loads(output)["hits"]


@pytest.mark.parametrize(("argv", "question"), [
    (["search", "ozone by county"], "ozone by county"),
    (["search", "--catalog", "cat", "-k", "3", "-v", "ozone", "lake"], "ozone"),
    (["search", "--catalog=cat", "--json", "--", "-5 degrees"], "-5 degrees"),
    (["search", "--help"], None),
    (["search", "--unknown", "x"], None),
    (["index", "lake"], None),
    (["search"], None),
])
def test_the_question_is_read_from_a_search_command_line(argv: list[str], question: str | None) -> None:
    assert question_of(argv) == question


def test_the_console_script_takes_the_childs_vector_and_answers_as_the_sequential_path(indexed: Path) -> None:
    done, loaded = _console_search(indexed)
    assert done.returncode == 0, done.stderr
    assert "onnxruntime" not in loaded and "tokenizers" not in loaded  # embedded in the child
    sequential = CliRunner().invoke(cli, ["search", QUESTION, str(indexed), "--json"])
    assert sequential.exit_code == 0, sequential.output
    assert _hits(done.stdout) == _hits(sequential.stdout) and _hits(done.stdout)


def test_other_embed_settings_embed_in_the_searching_process(indexed: Path) -> None:
    # The child embeds with the packaged defaults: a search configured otherwise loads the model itself.
    done, loaded = _console_search(indexed, env={"DSLAKE_EMBED_BATCH_SIZE": "8"})
    assert done.returncode == 0, done.stderr
    assert "onnxruntime" in loaded
    assert _hits(done.stdout) == _hits(CliRunner().invoke(cli, ["search", QUESTION, str(indexed), "--json"]).stdout)


def test_a_search_whose_embedding_setup_fails_says_one_line(indexed: Path) -> None:
    done, _ = _console_search(indexed, env={"DSLAKE_EMBED_BACKEND": "bogus"})
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert done.returncode != 0
    assert json.loads(done.stdout)["error"].startswith("embed.backend must be one of")  # --json's error object
    assert len(lines) == 1 and lines[0].startswith("error: embed.backend must be one of"), done.stderr


def test_an_expected_vector_is_taken_when_made_with_the_embedders_settings() -> None:
    embedder = Embedder(cache_dir="/nonexistent/cache")  # never loaded below
    vector = np.arange(DIM, dtype=np.float32).reshape(1, DIM) / DIM
    embedder.expect("q", ("auto", 64, 1, "/elsewhere"), lambda: pytest.fail("another embedder's settings"))
    embedder.expect("q", embedder.settings_key(), lambda: vector.astype("<f4").tobytes())
    taken = embedder.encode(["q"])
    assert taken.dtype == np.float32 and np.array_equal(taken, vector) and embedder.active_backend is None
