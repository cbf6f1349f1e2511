"""ask --clarify (issue 28, section 4): a person at a terminal picks between readings that give different answers,
in one keypress and with no model call; without a terminal the run chooses by itself."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from agent_helpers import SUM_WIDGETS, fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from llm_harness import LLM_ENV_VARS

QUESTION = "How many widget units were sold in total?"
ROLES = [
    {"role": "planner", "response": "Sum the widget units in data/sales.csv."},
    {"role": "coder", "response": fenced(SUM_WIDGETS + "print('Alternative: north region only = 10')\n")},
    {"role": "verifier", "response": "Yes\nAssumption: both regions are counted"},
    {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
]


@pytest.fixture
def lake(tmp_path, monkeypatch):
    return write_table_lake(tmp_path / "lake")


def answers(lake: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((lake / ".dslake" / "runs").glob("*/answer.json"))]


def read_until(fd: int, marker: bytes, proc: subprocess.Popen, limit_s: float = 60) -> bytes:
    """Read a pseudo-terminal until marker shows (or the program ends); the limit only guards a hung test."""
    seen = b""
    deadline = time.monotonic() + limit_s
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the terminal closed: the program ended
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    return seen


def test_a_person_at_a_terminal_picks_the_reading_in_one_keypress(lake, tmp_path):
    rules = rules_file(tmp_path / "rules.jsonl", *ROLES)  # no rule answers a chooser: the person chooses
    dslake = Path(sys.executable).with_name("dslake")
    main, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in LLM_ENV_VARS} | {"COLUMNS": "160", "TERM": "xterm"}
    proc = subprocess.Popen([str(dslake), "ask", QUESTION, "--lake", str(lake), "--files", "sales.csv", "--llm",
                             "scripted", "--scripted-file", rules, "--clarify"],
                            stdin=child, stdout=child, stderr=child, env=env, close_fds=True)
    os.close(child)
    try:
        shown = read_until(main, b"press 1-2", proc)
        assert b"1. both regions are counted: 14" in shown and b"2. north region only: 10" in shown, shown
        # A key typed before the program reads keys is flushed (raw mode is set with TCSAFLUSH), as it would be
        # for a person: wait until the terminal leaves line mode, then press 2.
        while termios.tcgetattr(main)[3] & termios.ICANON and proc.poll() is None:
            select.select([main], [], [], 0.05)
        os.write(main, b"2")
        # The run's summary line is the last thing ask prints (answer.json is written before it).
        rest = read_until(main, b" calls \xc2\xb7 ", proc)
        rest += read_until(main, b"\n", proc)
    finally:
        # dslake under a pseudo-terminal can take long to exit after its last line (seen without --clarify too):
        # the test ends it once everything is written.
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        os.close(main)
    assert b"chosen reading: north region only because the user picked it at the terminal" in rest
    answer = answers(lake)[0]
    assert answer["value"] == "10" and answer["chosen"]["because"] == "the user picked it at the terminal"
    assert answer["alternatives"][0]["value"] == "14"
    assert answer["llm_calls"] == 4  # the pick cost no model call


def test_without_a_terminal_clarify_leaves_the_choice_to_the_run(lake, tmp_path):
    rules = rules_file(tmp_path / "rules.jsonl", *ROLES,
                       {"role": "chooser", "response": "Chosen: 1 because the question's words ask for the total"})
    done = CliRunner().invoke(cli, ["ask", QUESTION, "--lake", str(lake), "--files", "sales.csv", "--llm",
                                    "scripted", "--scripted-file", rules, "--clarify", "--json"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["value"] == "14" and answer["chosen"]["because"] == "the question's words ask for the total"
    assert answer["llm_calls"] == 5


def test_in_a_notebook_the_person_picks_at_an_input_box(lake):
    """lake.ask(..., clarify=True) asks with input(): here a callable plays the person, as Jupyter's box would."""
    from agent_helpers import FAST, scripted

    from dsstar_lake.lake import Lake
    from dsstar_lake.views.notebook import prompt_pick

    said, asked = [], []
    handle = Lake.open(lake)
    handle.index()
    answer = handle.ask(QUESTION, files=["sales.csv"], overrides=FAST,
                        provider=scripted(*((r["role"], r["response"]) for r in ROLES)),
                        clarify=prompt_pick(ask=lambda prompt: asked.append(prompt) or "2", say=said.append))
    handle.close()
    assert said[1:] == ["  1. both regions are counted: 14", "  2. north region only: 10"]
    assert asked == ["pick 1-2 (Enter lets the model choose): "]
    assert answer.text == "10" and answer.chosen["because"] == "the user picked it in the notebook"
    assert answers(lake)[0]["chosen"]["reading"] == "north region only" and answer.llm_calls == 4
