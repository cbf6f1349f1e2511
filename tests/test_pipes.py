"""Every command into a pipe or a file prints plain text: no box drawing, no ANSI code, the facts its --json holds.
A reader that leaves early (`dslake search ... | head -1`) ends the command quietly, with exit code 0."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from agent_helpers import SUM_WIDGETS, TOP_REGION_ONLY, fenced
from click.testing import CliRunner
from dslake_cli.cli import cli
from rich.panel import Panel
from rich.table import Table

from dsstar_lake.terminal.console import CliConsole

BOX_DRAWING = re.compile("[\u2500-\u257f]")  # rich's frames: ─ │ ┃ ┏ ╭ ...
ANSI = "\x1b"
DSLAKE = Path(sys.executable).with_name("dslake")  # the console script, as a user runs it

# Commands whose standard output is not for a person reading a pipe, and why they are not run here.
NOT_PIPED = {
    ("serve",): "a web server: one 'serving' line on stderr, then pages until stopped",
    ("mcp",): "standard output is the MCP protocol's JSON-RPC, for another program",
}

ASK_RULES = [{"role": "planner", "response": "Sum the widget units in data/sales.csv."},
             {"role": "coder", "response": fenced(SUM_WIDGETS)}, {"role": "verifier", "response": "Yes"},
             {"role": "finalyzer", "response": fenced(SUM_WIDGETS)},
             {"role": "judge", "response": "Yes"}]
QUESTION = "How many widget units were sold across every region and every month of the whole year, in total?"


@dataclass
class Scene:
    """An indexed lake with a finished run, an interrupted one, and the files the eval and report commands read."""

    root: Path
    rules: Path
    run_id: str
    interrupted: str
    fixed: Path
    retrieval_tasks: Path
    bench_tasks: Path
    report_rules: Path


def invoke(*args: object, input: str | None = None) -> click.testing.Result:
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def as_json(*args: object) -> dict:
    done = invoke(*args, "--json")
    return json.loads(done.stdout)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def scene(tmp_path_factory) -> Scene:
    from conftest import write_table_lake
    from llm_harness import LLM_ENV_VARS
    from report_helpers import FIRST, WRITE, questions_json, solve_rules
    from report_helpers import WIDGETS as REPORT_WIDGETS

    base = tmp_path_factory.mktemp("pipes")
    with pytest.MonkeyPatch.context() as env:  # as the suite's own isolation does for each test
        for name in [*LLM_ENV_VARS, *(n for n in os.environ if n.startswith("DSLAKE_"))]:
            env.delenv(name, raising=False)
        env.setenv("DSLAKE_SANDBOX_PRELOAD", "")
        root = write_table_lake(base / "lake")
        assert invoke("index", root).exit_code == 0
        rules = write_jsonl(base / "rules.jsonl", ASK_RULES)
        asked = invoke("ask", QUESTION, root, "--files", "sales.csv", "--llm", "scripted", "--scripted-file", rules,
                       "--json")
        assert asked.exit_code == 0, asked.output
        broken = write_jsonl(base / "broken.jsonl", [
            {"role": "planner", "response": "Sum the units per region of data/sales.csv."},
            {"role": "coder", "response": fenced(TOP_REGION_ONLY)},
            {"role": "verifier", "response": "server went away", "error": "fatal"}])
        stopped = invoke("ask", "Which region sold the most units?", root, "--files", "sales.csv", "--llm",
                         "scripted", "--scripted-file", broken)
        assert stopped.exit_code == 5, stopped.output
        interrupted = next(r["id"] for r in as_json("runs", "list", root)["runs"] if r["status"] != "done")
    question = "Which county had the most unhealthy ozone days?"
    return Scene(
        root=root, rules=rules, run_id=json.loads(asked.stdout)["run_id"], interrupted=interrupted,
        fixed=write_jsonl(base / "fixed.jsonl", [{"role": "verifier", "response": "Yes"},
                                                {"role": "finalyzer", "response": fenced(TOP_REGION_ONLY)}]),
        retrieval_tasks=write_jsonl(base / "retrieval.jsonl", [
            {"id": "units-1", "query": "units sold per region", "files": ["sales.csv"]},
            {"id": "ozone-2", "query": question, "files": ["ozone_by_county.csv"]}]),
        bench_tasks=write_jsonl(base / "bench.jsonl", [
            {"id": "tiny-easy-1", "query": "How many widget units were sold in total?", "answer": 14,
             "answer_type": "numeric_exact", "data_sources": ["sales.csv"]}]),
        report_rules=write_jsonl(base / "report.jsonl", [
            {"role": "subquestion", "match": FIRST,
             "response": questions_json(("How many widget units were sold in total?", ""))},
            *solve_rules("How many widget units were sold in total?", "W", REPORT_WIDGETS),
            {"role": "writer", "match": WRITE, "response": "# Widgets\n\n14 widget units were sold [1].\n"}]),
    )


# Each command: its words, the exit code it ends with, and the facts its plain text must hold (most read from the
# same command's --json, so that "the same information" is checked against what the command knows).
Case = Callable[[Scene], tuple[list[object], int, list[str]]]


def _index(s: Scene):
    status = as_json("status", s.root)
    return ["index", s.root], 0, [f"{status['files']} unchanged", f"{status['entries']} entries"]


def _status(s: Scene):
    status = as_json("status", s.root)
    return ["status", s.root], 0, [f"lake:          {s.root}\n", f"files:         {status['files']} ("]


def _show(s: Scene):
    entry = as_json("show", "sales.csv", s.root)["entry"]
    return ["show", "sales.csv", s.root], 0, [f"description:\n{entry['description']}\n", f"card:\n{entry['card']}"]


def _search(s: Scene):
    hits = as_json("search", "units sold per region", s.root, "-k", "3")["hits"]
    facts = [h["path"] for h in hits] + [line for h in hits for line in h["summary"]]
    return ["search", "units sold per region", s.root, "-k", "3"], 0, facts


def _config(s: Scene):
    rows = as_json("config", s.root)["settings"]
    return ["config", s.root], 0, [f"{row['key']}  " for row in rows] + [f"{rows[0]['value']!r}"]


def _models(s: Scene):
    info = as_json("models", s.root, "--llm", "scripted")
    return (["models", s.root, "--llm", "scripted"], 0,
            [f"provider {info['provider']}"] + [f"{r['role']}  " for r in info["roles"]] + [info["roles"][0]["model"]])


def _eval_retrieval(s: Scene):
    return (["eval", "retrieval", "--tasks", s.retrieval_tasks, s.root, "-k", "1,5"], 0,
            ["domain", "R@1", "all@5", "overall"])


def _eval_kramabench(s: Scene):
    return (["eval", "kramabench", "--tasks", s.bench_tasks, s.root, "--llm", "scripted", "--scripted-file", s.rules,
             "--no-judge"], 0, ["KramaBench (retrieval)", "overall", "100.00"])


def _ask(s: Scene):
    return (["ask", "How many widget units?", s.root, "--files", "sales.csv", "--llm", "scripted", "--scripted-file",
             s.rules], 0, ["answer: 14\n", "files used: sales.csv"])


def _runs(s: Scene):
    return ["runs", s.root], 0, [s.run_id, QUESTION]


def _runs_list(s: Scene):
    return ["runs", "list", s.root], 0, [s.run_id, QUESTION]


def _runs_show(s: Scene):
    return (["runs", "show", s.run_id, s.root], 0,
            [f"question: {QUESTION}", "1. Sum the widget units in data/sales.csv.", "sufficient", "answer: 14\n",
             "planner  "])


def _runs_resume(s: Scene):
    return ["runs", "resume", s.interrupted, s.root, "--scripted-file", s.fixed], 0, ["answer: north\n"]


def _report(s: Scene):
    return (["report", "What sold?", s.root, "--rounds", "0", "--llm", "scripted", "--scripted-file", s.report_rules],
            0, ["How many widget units were sold in total?", "1 of 1 sub-questions answered", "Widgets"])


def _doctor(s: Scene):
    report = as_json("doctor", s.root)
    return ["doctor", s.root], 0 if report["ok"] else 8, [f"{c['name']}: " for c in report["checks"]]


def _keys(s: Scene):
    return ["keys"], 0, ["no keys stored"]


def _keys_list(s: Scene):
    return ["keys", "list"], 0, ["no keys stored"]


def _keys_path(s: Scene):
    return ["keys", "path"], 0, [str(Path(os.environ["XDG_CONFIG_HOME"]) / "dslake" / "keys.json")]


def _keys_remove(s: Scene):
    return ["keys", "remove", "gemini"], 0, ["no gemini key was stored"]


CASES: dict[tuple[str, ...], Case] = {
    ("index",): _index, ("status",): _status, ("show",): _show, ("search",): _search, ("config",): _config,
    ("models",): _models, ("eval", "retrieval"): _eval_retrieval, ("eval", "kramabench"): _eval_kramabench,
    ("ask",): _ask, ("runs",): _runs, ("runs", "list"): _runs_list, ("runs", "show"): _runs_show,
    ("runs", "resume"): _runs_resume, ("report",): _report, ("doctor",): _doctor, ("keys",): _keys,
    ("keys", "list"): _keys_list, ("keys", "path"): _keys_path, ("keys", "remove"): _keys_remove,
}


def leaf_commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Return the words of every command that does something (a group's subcommands, not the group)."""
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.extend(leaf_commands(command, (*prefix, name)))
        else:
            found.append((*prefix, name))
    return found


def test_every_command_is_run_into_a_pipe_or_says_why_not():
    missing = [words for words in leaf_commands() if words not in CASES and words not in NOT_PIPED
               and words != ("keys", "set")]  # keys set: its own test below (it reads the key from the pipe)
    assert not missing, f"add these commands to CASES (or NOT_PIPED, with the reason): {missing}"


@pytest.fixture
def plain_env(monkeypatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):  # what would make rich draw
        monkeypatch.delenv(name, raising=False)


def assert_plain(text: str) -> None:
    assert not BOX_DRAWING.search(text), f"box drawing in piped output:\n{text}"
    assert ANSI not in text, f"an ANSI code in piped output:\n{text!r}"


@pytest.mark.parametrize("words", list(CASES), ids=" ".join)
def test_every_command_prints_plain_text_into_a_pipe(words, scene, plain_env):
    args, code, facts = CASES[words](scene)
    done = invoke(*args)  # CliRunner's streams are not terminals: what a pipe or a file gets
    assert done.exit_code == code, done.output
    assert_plain(done.stdout)
    assert_plain(done.stderr)
    for fact in facts:
        assert fact in done.stdout, f"{fact!r} is missing from `dslake {' '.join(words)}` piped:\n{done.stdout}"


def test_keys_set_reads_the_key_from_the_pipe_and_says_where_it_went(plain_env):
    done = invoke("keys", "set", "gemini", input="not-a-real-key\n")
    assert done.exit_code == 0 and "stored the gemini key in" in done.stdout
    assert_plain(done.stdout)
    assert "not-a-real-key" not in done.output and "gemini" in invoke("keys", "list").stdout


def test_a_real_pipe_gets_the_plain_table(scene, plain_env):
    """What a shell pipe gets from the console script (no test runner between): aligned columns, no frame."""
    done = subprocess.run([str(DSLAKE), "runs", str(scene.root)], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert_plain(done.stdout)
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["run", "kind", "when", "status", "question", "/", "request", "answer", "/", "title",
                              "rounds", "cost"]
    assert any(row.startswith(scene.run_id) and QUESTION in row for row in rows), done.stdout


def test_a_piped_search_imports_no_table_or_panel_and_prints_as_ever(scene, plain_env):
    """A piped search prints no frame, so it never imports rich.table or rich.panel (terminal/console.py): ~0.03 s of
    a cold search. What it prints is what the in-process CLI, which has both imported, prints."""
    done = subprocess.run([str(DSLAKE), "search", "widget units", str(scene.root)], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "rich.table" not in loaded and "rich.panel" not in loaded and "rich.console" in loaded
    assert done.stdout == invoke("search", "widget units", scene.root).stdout and "sales.csv" in done.stdout


def test_a_console_made_before_rich_tables_are_imported_still_prints_them_plain():
    code = ("import io, sys\n"
            "from dsstar_lake.terminal.console import CliConsole\n"
            "assert 'rich.table' not in sys.modules and 'rich.panel' not in sys.modules\n"
            "out = io.StringIO(); console = CliConsole(file=out)\n"
            "console.print('plain [bold]words[/bold]')\n"
            "from rich.panel import Panel\n"
            "from rich.table import Table\n"
            "table = Table('a', 'b'); table.add_row('1', '2')\n"
            "console.print(Panel('42', title='answer')); console.print(table)\n"
            "print(out.getvalue(), end='')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["plain words", "answer: 42", "a  b", "1  2"]


# The rule itself, on a console that writes to a file: tables and panels as plain lines; a terminal keeps rich's look.

def test_a_table_into_a_file_is_aligned_columns_with_every_character():
    table = Table("name", "rows", "note", title="files", caption="rows as read")
    table.columns[1].justify = "right"
    table.add_row("[bold]sales.csv[/bold]", "3", "one line")
    table.add_row("sensors/daily/readings.csv", "120", "first line\nsecond line")
    table.add_row("a\\[1].csv", "7", "x" * 90)  # an escaped bracket prints as a bracket
    written = io.StringIO()
    CliConsole(file=written).print(table)
    assert written.getvalue().splitlines() == [
        "files",
        "name                        rows  note",
        "sales.csv                      3  one line",
        "sensors/daily/readings.csv   120  first line",
        "                                  second line",
        "a[1].csv                       7  " + "x" * 90,
        "rows as read",
    ]


def test_a_panel_into_a_file_is_title_and_text():
    written = io.StringIO()
    console = CliConsole(file=written)
    console.print(Panel("14", title="answer", title_align="left"))
    console.print(Panel("line one\nline two", title="description"))
    assert written.getvalue() == "answer: 14\ndescription:\nline one\nline two\n\n"


def test_a_long_cell_does_not_push_every_row_of_its_column():
    table = Table("setting", "value", "from")
    for key in ("a", "b", "c"):
        table.add_row(key, "1", "default")
    table.add_row("d", "y" * 100, "default")
    written = io.StringIO()
    CliConsole(file=written).print(table)
    assert written.getvalue().splitlines()[1:] == ["a        1      default", "b        1      default",
                                                   "c        1      default", "d        " + "y" * 100 + "  default"]


def test_a_terminal_still_gets_frames_and_colour():
    written = io.StringIO()
    console = CliConsole(file=written, force_terminal=True, color_system="standard", width=60)
    table = Table("name")
    table.add_row("[bold]sales.csv[/bold]")
    console.print(table)
    assert BOX_DRAWING.search(written.getvalue()) and ANSI in written.getvalue()


# A reader that leaves: the command ends with 0 and says nothing (Python would print a traceback, or click exit 1).

def run_into_closed_pipe(*args: object) -> tuple[int, str]:
    """Run the console script with its stdout's reader gone before the first line is written; return code, stderr."""
    proc = subprocess.Popen([str(DSLAKE), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    proc.stdout.close()  # the only reader: every write of the command now meets a closed pipe
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.wait(timeout=300), err


@pytest.mark.parametrize("words", [("search", "units sold per region"), ("search", "units sold per region", "--json"),
                                   ("runs",), ("index",), ("--help",)], ids=" ".join)
def test_a_closed_pipe_ends_the_command_quietly_with_0(words, scene):
    args = [*words, scene.root] if words != ("--help",) else list(words)  # index: the quick no-change answer
    code, err = run_into_closed_pipe(*args)
    assert (code, err) == (0, "")


def test_search_into_head_gives_its_first_line_and_0(scene):
    done = subprocess.run(["bash", "-c", 'set -o pipefail; "$0" search "units sold per region" "$1" | head -1',
                           str(DSLAKE), str(scene.root)], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split() == ["#", "entry", "format", "score", "dense", "text"]


def test_a_broken_pipe_that_is_not_stdouts_is_raised_as_ever():
    """A child process that died under a write is a failure to report, not a reader that left."""
    from dsstar_lake.terminal.closed_pipe import reader_may_leave

    with pytest.raises(BrokenPipeError), reader_may_leave():
        read, write = os.pipe()
        os.close(read)
        try:
            os.write(write, b"to a child that is gone")
        finally:
            os.close(write)
