"""One command line (issue 32 §3) through the real CLI: the lake as LAKE or --lake on every command, the model
flags under their own heading, --model-for, skipped files named, and the manual provider's hints and Ctrl-C (a
pseudo-terminal and a signal to a real `dslake ask` process)."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_table_lake
from dslake_cli.cli import cli
from llm_harness import LLM_ENV_VARS
from serve_helpers import Server, fetch

MODEL_COMMANDS = [["ask"], ["report"], ["serve"], ["mcp"], ["models"], ["index"], ["runs", "resume"],
                  ["eval", "kramabench"], ["eval", "retrieval"]]
PLAIN_COMMANDS = [["search"], ["show"], ["status"], ["config"], ["doctor"], ["runs", "list"], ["runs", "show"]]


@pytest.fixture(scope="module")
def linked(tmp_path_factory) -> tuple[Path, str]:
    """A small lake with a link to /etc/passwd, indexed once through the CLI: (its root, the index's output)."""
    root = write_table_lake(tmp_path_factory.mktemp("linked") / "lake")
    (root / "passwd.csv").symlink_to("/etc/passwd")
    result = CliRunner().invoke(cli, ["index", str(root)])
    assert result.exit_code == 0, result.output
    return root, result.stdout


def invoke(*args: object, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


def sections(help_text: str) -> dict[str, str]:
    """Split a command's help into its headed sections (heading -> the lines under it)."""
    parts = re.split(r"^(\w[\w ]*):$", help_text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_a_skipped_link_is_named_on_the_text_line_and_in_json(linked):
    root, text = linked
    assert "skipped passwd.csv: symlink leaves the lake (use --follow-symlinks)" in text
    # --catalog alone: the catalog remembers its lake, no LAKE needed to index it again
    again = invoke("index", "--catalog", root / ".dslake", "--json")
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["unchanged"] == 8 and summary["added"] == 0
    assert summary["skipped_files"] == [["passwd.csv", "symlink leaves the lake (use --follow-symlinks)"]]
    # --lake: then every argument is a PATH of it
    scoped = json.loads(invoke("index", "--lake", root, "sales.csv", "--json").stdout)
    assert scoped["unchanged"] == 1


def test_the_lake_is_an_argument_or_an_option_on_every_command(linked, tmp_path, monkeypatch):
    root, _ = linked
    monkeypatch.chdir(tmp_path)  # not the lake: a command that ignored its lake would fail here
    for command in (["status"], ["show", "sales.csv"], ["search", "units sold"], ["runs", "list"], ["config"]):
        by_argument = invoke(*command, root, "--json")
        by_option = invoke(*command, "--lake", root, "--json")
        assert by_argument.exit_code == 0, (command, by_argument.output)
        first, second = json.loads(by_argument.stdout), json.loads(by_option.stdout)
        first.pop("timing_ms", None), second.pop("timing_ms", None)  # a search's times vary
        # and the catalog's size on disk moves whenever SQLite checkpoints its write-ahead log (seen under load)
        first.pop("catalog_bytes", None), second.pop("catalog_bytes", None)
        assert first == second, command
    assert json.loads(invoke("search", "units sold", root, "--json").stdout)["hits"][0]["path"] == "sales.csv"
    # a group passes its lake to its subcommands, given as --lake or first
    for before in (["--lake", root], [root]):
        missing = invoke("runs", *before, "show", "nope")
        assert missing.exit_code == 2 and f"no run 'nope' in {root / '.dslake' / 'runs'}" in missing.stderr
    assert json.loads(invoke("runs", root, "--json").stdout)["runs"] == []
    assert invoke("status", tmp_path / "nowhere").stderr.strip() == f"error: lake not found: {tmp_path / 'nowhere'}"
    two = invoke("status", root, "--lake", tmp_path)
    assert two.exit_code == 2 and "two lakes given" in two.stderr and "Traceback" not in two.output
    # an unquoted question: its last word is read as LAKE, and the hint says so
    unquoted = invoke("search", "units", "sold")
    assert unquoted.exit_code == 2 and "lake not found: sold" in unquoted.stderr and "quotes" in unquoted.stderr
    nothing = invoke("index")
    assert nothing.exit_code == 2 and "Missing argument LAKE" in nothing.output


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=" ".join)
def test_model_flags_have_their_own_heading_and_one_flag_for_roles(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    parts = sections(result.stdout)
    model = parts["Model options"]
    for flag in ("--llm", "--model TEXT", "--model-for ROLE=MODEL", "--base-url", "--manual-dir", "--cache",
                 "--max-llm-calls", "--max-cost"):
        assert flag in model and flag not in parts["Options"], flag
    assert "summarizer" in model  # the roles --model-for takes are listed
    assert not re.search(r"--model-(?!for)[a-z]", result.stdout)  # the per-role spellings stay unlisted
    assert "--scripted-file" not in result.stdout and "scripted" not in model


@pytest.mark.parametrize("command", PLAIN_COMMANDS, ids=" ".join)
def test_commands_that_call_no_model_show_no_model_options(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Model options" not in result.stdout and "--llm" not in result.stdout


def test_model_for_sets_one_role_and_the_older_spelling_still_works():
    result = invoke("models", "--llm", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m-all",
                    "--model-for", "coder=m-coder", "--model-for", "Planner = m-plan", "--model-writer", "m-writer",
                    "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    roles = {row["role"]: row["model"] for row in info["roles"]}
    assert (roles["coder"], roles["planner"], roles["writer"], roles["verifier"]) == ("m-coder", "m-plan",
                                                                                        "m-writer", "m-all")
    assert info["key_variables"] == ["OPENAI_API_KEY"] and info["needs_key"] is False
    for bad, says in (("coder", "expected ROLE=MODEL"), ("judge=m", "unknown role 'judge'")):
        refused = invoke("models", "--model-for", bad)
        assert refused.exit_code == 2 and says in refused.stderr and "Traceback" not in refused.output


def test_manual_off_a_terminal_names_manual_dir_as_the_fix(tmp_path):
    lake = write_table_lake(tmp_path / "lake")
    result = invoke("ask", "How many widget units?", lake, "--files", "sales.csv", "--llm", "manual")
    assert result.exit_code == 2
    assert "stdin is not a terminal" in result.stderr and "--manual-dir DIR" in result.stderr
    assert "GEMINI_API_KEY" not in result.stderr  # one fix, not the list of other providers


def test_the_page_names_every_provider_when_no_model_is_set(linked):
    from dsstar_lake.lake import Lake

    lake = Lake.open(linked[0])
    try:
        with Server(lake) as server:
            code, page, _ = fetch(server.url("/"))
    finally:
        lake.close()
    assert code == 200
    line = re.search(r'<p class="muted" id="not-ready">(.*?)</p>', page, re.S)[1]
    for way in ("GEMINI_API_KEY", "--llm openai --base-url", "--llm manual", "--manual-dir DIR"):
        assert way in line, way


def dslake_process(args: list[object], tmp_path: Path, **popen: object) -> subprocess.Popen:
    """Start `dslake ARGS` as a user would, with a config home of its own and no model keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSLAKE_") and k not in LLM_ENV_VARS}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config-home")
    return subprocess.Popen([sys.executable, "-c", "from dslake_cli.cli import main; main()", *map(str, args)],
                            env=env, cwd=tmp_path, **popen)


def run_status(lake: Path) -> str:
    [record] = (lake / ".dslake" / "runs").glob("*/run.json")
    return json.loads(record.read_text())["status"]


def test_ctrl_c_at_a_manual_prompt_on_a_terminal_exits_130_and_leaves_the_run_resumable(tmp_path):
    import fcntl
    import pty
    import termios

    lake = write_table_lake(tmp_path / "lake")
    master, slave = pty.openpty()

    def take_the_terminal() -> None:  # in the child, after setsid: the pty is its controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = dslake_process(["ask", "How many widget units?", lake, "--files", "sales.csv", "--llm", "manual"],
                          tmp_path, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                          preexec_fn=take_the_terminal)
    os.close(slave)
    seen = b""
    try:
        while b"paste the answer" not in seen:
            ready, _, _ = select.select([master], [], [], 120)
            assert ready and proc.poll() is None, seen.decode(errors="replace")
            seen += os.read(master, 65536)
        os.write(master, b"\x03")  # Ctrl-C as the terminal sends it: SIGINT to the foreground group
        assert proc.wait(120) == 130
        while select.select([master], [], [], 0.5)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = seen.decode(errors="replace")
    assert "interrupted" in text and "model call failed" not in text and "Traceback" not in text
    assert run_status(lake) == "interrupted"


def test_sigint_while_a_manual_answer_file_is_awaited_exits_130(tmp_path):
    lake, prompts = write_table_lake(tmp_path / "lake"), tmp_path / "prompts"
    proc = dslake_process(["ask", "How many widget units?", lake, "--files", "sales.csv", "--llm", "manual",
                           "--manual-dir", prompts], tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not list(prompts.glob("*.prompt.md")):
            assert proc.poll() is None and time.monotonic() < deadline, "no prompt file was written"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = stderr.decode()
    assert proc.returncode == 130, text
    assert "the prompt stays in" in text and "0001-planner.prompt.md" in text and "Traceback" not in text
    assert run_status(lake) == "interrupted"
