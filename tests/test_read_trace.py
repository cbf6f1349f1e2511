"""files_used is what the scripts' Python reported reading; a run whose trace was closed or forged is marked.

The read trace is written from inside the script's interpreter, so a script can write lines of its own to the
trace descriptor or close it. dslake cannot stop that; it says what the trace is, and marks what shows: a trace
that did not end with the script's exit, and lines that are not paths. Checked on both backends, and end to
end through `dslake ask`, `dslake runs show` and the web run page.
"""

from __future__ import annotations

import json

import pytest
from agent_helpers import fenced, rules_file
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from sandbox_helpers import BACKENDS, make_lake, sandbox
from serve_helpers import Server, fetch

from dsstar_lake import Lake
from dsstar_lake.sandbox import openwatch
from dsstar_lake.sandbox.tracecheck import CLOSED

READ = "print(open('data/sales.csv').read().count('\\n'))\n"
CLOSE = "import os\nos.close(int(os.environ['DSLAKE_TRACE_FD']))\n" + READ
FORGE = ("import os\nfd = int(os.environ['DSLAKE_TRACE_FD'])\n"
         "os.write(fd, b'sub/notes.txt\\n' + os.path.abspath('data/sub/notes.txt').encode() + b'\\n')\n" + READ)
CHILDREN = ("import os, subprocess, sys\n"
            "subprocess.run([sys.executable, '-c', \"open('data/sub/notes.txt').read()\"], check=True, "
            "close_fds=False)\n"
            "pid = os.fork()\nif pid == 0:\n    sys.exit(0)\nos.waitpid(pid, 0)\n" + READ)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_honest_script_and_its_children_leave_a_clean_trace(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    res = sandbox(backend, lake).run(CHILDREN, tmp_path / "work")
    assert res.ok, res.stderr
    assert res.reads == ["sub/notes.txt", "sales.csv"]
    assert res.trace_problems == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_script_that_closes_the_trace_hides_its_reads_and_is_marked(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    res = sandbox(backend, lake).run(CLOSE, tmp_path / "work")
    assert res.ok and res.stdout.strip() == "3", res.stderr  # it did read sales.csv
    # ... and the trace does not say so; the lake's open watch (inotify, outside the script) does, where there is one
    assert res.reads == (["sales.csv"] if openwatch.available() else [])
    assert res.trace_problems == [CLOSED]


@pytest.mark.parametrize("backend", BACKENDS)
def test_forged_trace_lines(backend, tmp_path):
    lake = make_lake(tmp_path / "lake")
    res = sandbox(backend, lake).run(FORGE, tmp_path / "work")
    assert res.ok, res.stderr
    # A well-formed forged path cannot be told from a real read: it is in the record as what the script reported.
    assert res.reads == ["sub/notes.txt", "sales.csv"]
    # A line that is no absolute path can be told, and marks the script.
    assert res.trace_problems == ["the read trace carried 1 line that are not absolute paths (written by the "
                                  "script itself)"]


def test_a_run_whose_trace_was_closed_is_marked_in_its_record_runs_show_and_the_run_page(tmp_path, monkeypatch):
    monkeypatch.setenv("DSLAKE_SANDBOX_MEMORY_MB", "1024")
    lake = write_table_lake(tmp_path / "lake")
    assert CliRunner().invoke(cli, ["index", str(lake)]).exit_code == 0
    rules = rules_file(tmp_path / "rules.jsonl", {"role": "planner", "response": "Count the sales rows."},
                       {"role": "coder", "response": fenced(CLOSE)}, {"role": "*", "response": "Yes"},
                       {"role": "finalyzer", "response": fenced("print(4)")})
    done = CliRunner().invoke(cli, ["ask", "How many sales rows?", "--lake", str(lake), "--files", "sales.csv",
                                    "--llm", "scripted", "--scripted-file", rules, "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.output)
    assert answer["trace_problems"] == [f"round_00.py: {CLOSED}"]
    run = lake / ".dslake" / "runs" / answer["run_id"]
    assert json.loads((run / "answer.json").read_text())["trace_problems"] == answer["trace_problems"]
    shown = CliRunner().invoke(cli, ["runs", "show", answer["run_id"], "--lake", str(lake)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())  # the table may fold a cell over lines
    assert f"read trace: round_00.py: {CLOSED}" in text
    assert "round_00 ok (read trace doubtful)" in text
    assert "(as the read trace saw them)" in text
    with Server(Lake.open(lake)) as server:
        code, page, _ = fetch(server.url(f"/runs/{answer['run_id']}"))
    assert code == 200
    assert page.count('class="bad trace-problem"') == 2  # the answer's flag and round 1's script
    assert "the read trace did not end with the script" in page


def test_a_trace_past_its_size_limit_is_marked_cut_and_its_half_lines_are_not_counted_as_forged():
    from dsstar_lake.sandbox.result import CappedBuffer
    from dsstar_lake.sandbox.tracecheck import CUT, END, read_trace

    buffer = CappedBuffer(4096)
    for i in range(2000):
        buffer.write(f"/lake/folder/file_{i:05d}.csv\n".encode())
    buffer.write(f"{END}\n".encode())
    paths, problems = read_trace(buffer.text(), buffer.cut > 0, exited=True)
    assert problems == [CUT]
    assert paths[0] == "/lake/folder/file_00000.csv" and paths[-1] == "/lake/folder/file_01999.csv"


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_inotify_only_pythons_opens_are_counted_and_the_sandbox_says_so(backend, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    monkeypatch.setattr(openwatch, "_LIBC", None)  # a system without inotify (macOS)
    lake = make_lake(tmp_path / "lake")
    pq.write_table(pa.table({"units": [1, 2]}), lake / "units.parquet")
    sb = sandbox(backend, lake)
    res = sb.run("import pyarrow.parquet as pq\nprint(pq.read_table('data/units.parquet').num_rows)\n" + READ,
                 tmp_path / "work")
    assert res.ok and res.stdout.split() == ["2", "3"], res.stderr
    assert res.reads == ["sales.csv"]  # pyarrow's open in C is not seen by the audit hook
    assert sb.protections["read trace"] == ("Python's opens only (an audit hook in the script): no inotify here, so "
                                            "files read in C (pyarrow, DuckDB, lxml) are not counted")
